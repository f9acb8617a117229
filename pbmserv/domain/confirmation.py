"""Confirmation of addresses and challenges, and password reset codes, by mail.

An address given by mail (signup, change address) gets one confirmation mail carrying a
code and nothing else from us until the code comes back (a reply to that mail, or the
command ``confirm CODE``).  A challenge asked for by mail waits, mailing only the
challenger's confirmed address, until the challenger confirms it the same way.  A password
reset mails a code to the account's confirmed addresses.  The codes are
:mod:`pbmserv.domain.tokens`: hashed at rest, expiring, one use.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.domain import limits, tokens
from pbmserv.domain.notify import queue_mail
from pbmserv.render.templates import fill, render
from pbmserv.store.models import (
    Address,
    Comment,
    Seat,
    Token,
    TokenKind,
    TournamentPlayer,
    User,
)


@dataclass
class Confirmation:
    """A confirmation mail to send: its recipient, subject and body."""

    address: str
    subject: str
    body: str


def _text(lines: list[str]) -> str:
    return render("mail/text.txt.j2", lines=[fill(line) for line in lines])


def address_mail(
    session: Session,
    settings: Settings,
    user: User,
    address: str,
    now: datetime,
    replace: list[str] | None = None,
) -> Confirmation | None:
    """A new code for ``address`` of ``user``, as a mail; None when a code sent to that address
    is still waiting (an address gets one confirmation mail per code lifetime)."""
    waiting = session.scalar(
        select(Token.id).where(
            Token.kind == TokenKind.address,
            Token.address == address,
            Token.used_at.is_(None),
            Token.expires > now,
        )
    )
    if waiting is not None:
        return None
    code = tokens.issue(
        session,
        TokenKind.address,
        user_id=user.id,
        address=address,
        payload={"replace": replace} if replace else None,
        now=now,
        hours=settings.token_hours,
    )
    lines = [
        f"Somebody (you, we hope) asked {settings.server_name} to send game mail for the player",
        f"'{user.userid}' to {address}.",
        "",
        "To confirm, reply to this mail (keep the subject), or send the line",
        f"  confirm {code}",
        f"to {settings.server_address} within {settings.token_hours} hours.",
        "",
        "If it was not you, ignore this mail: you will get nothing more from us.",
    ]
    return Confirmation(address, f"confirm {code}", _text(lines))


def mail_confirmations(
    session: Session,
    settings: Settings,
    user: User,
    addresses: list[str],
    now: datetime,
    *,
    sender: str | None,
    replace: list[str] | None = None,
) -> tuple[Confirmation | None, list[str]]:
    """Queue a confirmation mail for each address except the sender's, whose mail is returned
    (it becomes the answer).  Also returns the addresses that got no new mail.  ``replace``:
    the account's addresses once one of these is confirmed (the others are then dropped)."""
    own: Confirmation | None = None
    skipped: list[str] = []
    for address in addresses:
        mail = address_mail(session, settings, user, address, now, replace)
        if mail is None:
            skipped.append(address)
        elif sender and address == sender.lower():
            own = mail
        elif limits.recipient_allowed(session, settings, address, now):
            queue_mail(session, address, mail.subject, mail.body, now)
        else:
            skipped.append(address)
    return own, skipped


def confirm_address(session: Session, token: Token) -> Address | None:
    """Mark the token's address confirmed; after a change of addresses, drop the old ones."""
    row = session.scalar(
        select(Address).where(Address.user_id == token.user_id, Address.address == token.address)
    )
    if row is None:
        return None
    row.confirmed = True
    replace = (token.payload or {}).get("replace")
    if replace:
        for other in session.scalars(select(Address).where(Address.user_id == token.user_id)):
            if other.address not in replace:
                session.delete(other)
    return row


def challenge_mail(
    session: Session,
    settings: Settings,
    challenger: User,
    game: str,
    players: list[str],
    options: list[str],
    now: datetime,
) -> Confirmation:
    """A code that creates the challenge ``game challenge PLAYERS OPTIONS`` once confirmed."""
    code = tokens.issue(
        session,
        TokenKind.challenge,
        user_id=challenger.id,
        payload={"game": game, "players": players, "options": options},
        now=now,
        hours=settings.token_hours,
    )
    line = " ".join([game, "challenge", *players, *options])
    lines = [
        "Your challenge waits for your confirmation:",
        f"  {line}",
        "",
        "Nobody else has been told. To start the game, reply to this mail (keep the",
        f"subject), or send the line 'confirm {code}' within {settings.token_hours} hours.",
        "Without a confirmation nothing happens.",
    ]
    return Confirmation("", f"confirm {code}", _text(lines))


def reset_mails(session: Session, settings: Settings, user: User, now: datetime) -> list[str]:
    """Queue a password reset code to each confirmed address of ``user``; return them."""
    targets = [a.address for a in user.addresses if a.confirmed]
    if not targets or tokens.pending(session, TokenKind.reset, now, user_id=user.id):
        return []
    code = tokens.issue(
        session, TokenKind.reset, user_id=user.id, now=now, hours=settings.token_hours
    )
    lines = [
        f"Somebody asked for a new password for the player '{user.userid}'.",
        "",
        "To set one, send the line",
        f"  password new {user.userid} {code} NEWPASSWORD",
        f"to {settings.server_address} within {settings.token_hours} hours (the code works once).",
        "If it was not you, ignore this mail: your password stays as it is.",
    ]
    sent = []
    for address in targets:
        if limits.recipient_allowed(session, settings, address, now):
            queue_mail(
                session, address, f"{settings.server_name} password reset", _text(lines), now
            )
            sent.append(address)
    return sent


def expire_unconfirmed(session: Session, settings: Settings, now: datetime) -> list[str]:
    """Remove the accounts that never confirmed an address in time (and have no games)."""
    cutoff = now - timedelta(days=settings.unconfirmed_account_days)
    confirmed = exists().where(Address.user_id == User.id, Address.confirmed)
    unconfirmed = exists().where(Address.user_id == User.id, Address.confirmed.is_(False))
    used = [
        exists().where(Seat.user_id == User.id),
        exists().where(Comment.user_id == User.id),
        exists().where(TournamentPlayer.user_id == User.id),
    ]
    users = session.scalars(
        select(User).where(User.created < cutoff, ~confirmed, unconfirmed, *[~u for u in used])
    ).all()
    for user in users:
        session.delete(user)
    return [u.userid for u in users]

"""Confirmation of addresses and challenges, and password reset codes, by mail.

An address given by mail (signup, change address) gets one confirmation mail carrying a
code, per account that gives it, and nothing else from us until the code comes back (a reply
to that mail, or the command ``confirm CODE``).  A challenge asked for by mail waits, mailing
only the challenger's confirmed address, until the challenger confirms it the same way.  A
password reset mails a code to the account's confirmed addresses.  The codes are
:mod:`pbmserv.domain.tokens`: hashed at rest, expiring, one use.

A reply is a yes only when it says nothing of its own (the commands check that): whoever got a
code he did not ask for may answer it, and "I never signed up, STOP" must not confirm.  He
may also send ``refuse CODE``: the code is used up, and for an address the account that gave
it never mails it again (:func:`refuse`).  Only the code's holder can refuse: the code went
to the address it is for (a challenge's, to the challenger's), never to whoever asked.

A code exists only once its mail is queued: a mail over the recipient's daily caps
(:mod:`pbmserv.domain.limits`) creates no code, and the worker withdraws the codes of an
answer it does not send after all.  So a waiting code is one that was mailed, and only a
waiting code of the same account, for the same purpose, holds a new one back: a code that
another account (a forger's) got for the same address blocks nothing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.domain import limits, tokens
from pbmserv.domain.addresses import shown
from pbmserv.domain.notify import queue_mail
from pbmserv.render import subjects
from pbmserv.render.templates import fill, render
from pbmserv.store.models import (
    Address,
    Comment,
    Refusal,
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


@dataclass
class Confirmations:
    """What :func:`mail_confirmations` did: the sender's own mail (it becomes the answer), the
    addresses for which this account's earlier code still works (nothing new was sent), those
    that got no mail because their daily cap is reached (no code was made), and those whose
    owner refused this account's mail (nothing is sent there, ever)."""

    own: Confirmation | None = None
    waiting: list[str] = field(default_factory=list)
    capped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


SUBJECT = subjects.CONFIRM.text.removesuffix("{code}")
"""A code mail's subject is ``confirm CODE``, so that a reply to it (the subject kept) confirms."""


def code_in_subject(subject: str) -> str | None:
    """The code a code mail's subject carries; None for any other subject.

    >>> code_in_subject("confirm ABCD"), code_in_subject("Polis Board 101 bob")
    ('ABCD', None)
    """
    code = subject.removeprefix(SUBJECT).strip()
    return code if subject.startswith(SUBJECT) and code else None


def subject_at_rest(subject: str) -> str:
    """The subject kept of a sent mail: its code masked (the text is dropped whole).

    >>> subject_at_rest("confirm ABCD"), subject_at_rest("pbmserv help")
    ('confirm ********', 'pbmserv help')
    """
    return SUBJECT + "********" if code_in_subject(subject) else subject


def _text(lines: list[str]) -> str:
    return render("mail/text.txt.j2", lines=[fill(line) for line in lines])


def address_mail(
    session: Session,
    settings: Settings,
    user: User,
    address: str,
    now: datetime,
    replace: list[str] | None = None,
    *,
    by_reply: bool = True,
) -> Confirmation:
    """A new code for ``address`` of ``user``, as a mail (the caller queues it, or answers
    with it).  ``by_reply``: the mail's subject carries this code (see :func:`_send_back`)."""
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
        f"'{user.userid}' to {shown(address)}.",
        "",
        *_send_back(
            "To confirm,", code, f"to {settings.server_address} within", settings, by_reply
        ),
        "",
        *_refuse_lines(code),
    ]
    return Confirmation(address, subjects.CONFIRM(code=code), _text(lines))


def _send_back(
    start: str, code: str, within: str, settings: Settings, by_reply: bool, after: str = ""
) -> list[str]:
    """How to confirm ``code``: by a reply to its mail, which keeps the subject, or by its
    line.  An answer to a mail of several command lines may carry several codes, but its
    subject only the first: the others are confirmed by their lines alone (told to reply, a
    player who challenged two robots in one mail saw one game start)."""
    hours = f"{within} {settings.token_hours} hours"
    if by_reply:
        how = " reply to this mail (keep the subject and write nothing of your own), or"
        return [f"{start}{how} send the line", f"  confirm {code}", f"{hours}.{after}"]
    note = " (a reply to this mail confirms only the code in its subject)"
    return [f"{start} send the line", f"  confirm {code}", f"{hours}{note}.{after}"]


def _refuse_lines(code: str) -> list[str]:
    """How to say no, in every code mail.  The command stands inside a sentence, so that a
    copy of the mail pasted back is never read as one: a refusal is for good."""
    return [
        "If you did not ask for this, ignore this mail or send",
        f"'refuse {code}'; nothing more is sent.",
    ]


def is_refused(session: Session, user_id: int, address: str) -> bool:
    """Whether the owner of ``address`` refused the mail of this account."""
    return (
        session.scalar(
            select(Refusal.id).where(Refusal.user_id == user_id, Refusal.address == address.lower())
        )
        is not None
    )


def refuse(session: Session, token: Token, now: datetime) -> None:
    """The holder of a code (already used up) refused it: for an address, the account that
    gave it never mails it again; the address stays unconfirmed (it gets nothing), so an
    account that never confirmed one is still removed in time (:func:`expire_unconfirmed`)."""
    address = token.address if token.kind is TokenKind.address else None
    if address and not is_refused(session, token.user_id, address):
        session.add(Refusal(user_id=token.user_id, address=address.lower(), created=now))


def mail_confirmations(
    session: Session,
    settings: Settings,
    user: User,
    addresses: list[str],
    now: datetime,
    *,
    sender: str | None,
    replace: list[str] | None = None,
    by_reply: bool = True,
) -> Confirmations:
    """Queue a confirmation mail for each address but the sender's, whose mail is returned (it
    becomes the answer, within the worker's caps).  An address for which this account has a
    code waiting gets nothing new; one whose daily cap is reached gets no mail and no code.
    ``replace``: the account's addresses once one of these is confirmed (the others are then
    dropped).  An address whose owner refused this account gets nothing.  ``by_reply``: the
    answer's subject is free for the sender's code (no code of the mail's earlier lines is
    in it), see :func:`_send_back`."""
    done = Confirmations()
    own = sender.lower() if sender else None
    for address in addresses:
        if is_refused(session, user.id, address):
            done.refused.append(address)
        elif tokens.pending(session, TokenKind.address, now, user_id=user.id, address=address):
            done.waiting.append(address)
        elif address == own:  # the answer carries it: made only if the answer will go out
            if limits.code_allowed(session, settings, address, now):
                done.own = address_mail(
                    session, settings, user, address, now, replace, by_reply=by_reply
                )
            else:
                done.capped.append(address)
        elif limits.recipient_allowed(session, settings, address, now):
            mail = address_mail(session, settings, user, address, now, replace)
            queue_mail(session, address, mail.subject, mail.body, now)
        else:
            done.capped.append(address)
    return done


def restate(session: Session, user: User, addresses: list[str], now: datetime) -> None:
    """After a change of addresses, every code of ``user`` still waiting applies this latest
    request: confirmed, it leaves the account ``addresses``.  A code kept the list of its
    own, older request, and confirming it dropped an address asked for since."""
    waiting = select(Token).where(
        Token.kind == TokenKind.address,
        Token.user_id == user.id,
        Token.used_at.is_(None),
        Token.expires > now,
    )
    for token in session.scalars(waiting):
        token.payload = {"replace": list(addresses)}


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
    comment: str = "",
    *,
    by_reply: bool = True,
) -> Confirmation:
    """A code that creates the challenge ``game challenge PLAYERS OPTIONS`` once confirmed;
    ``comment`` (the mail's, passwords masked) waits with it for the players' board mail.
    ``by_reply``: the mail's subject carries this code (see :func:`_send_back`)."""
    said = comment.strip()
    code = tokens.issue(
        session,
        TokenKind.challenge,
        user_id=challenger.id,
        payload={"game": game, "players": players, "options": options, "comment": said},
        now=now,
        hours=settings.token_hours,
    )
    line = " ".join([game, "challenge", *players, *options])
    lines = [
        "Your challenge waits for your confirmation:",
        f"  {line}",
        *(_comment_lines(said) if said else []),
        "",
        *_send_back(
            "Nobody else has been told. To start the game,",
            code,
            "within",
            settings,
            by_reply,
            " Without a confirmation nothing happens.",
        ),
        "",
        *_refuse_lines(code),
    ]
    return Confirmation("", subjects.CONFIRM(code=code), _text(lines))


COMMENT_LINES_SHOWN = 20


def _comment_lines(comment: str) -> list[str]:
    """The comment that waits with a challenge, shown to whoever confirms it: a forger of his
    address could have written it, and it goes out under his name."""
    lines = comment.split("\n")
    shown = [f"  | {line}".rstrip() for line in lines[:COMMENT_LINES_SHOWN]]
    if len(lines) > COMMENT_LINES_SHOWN:
        shown.append(f"  [{len(lines) - COMMENT_LINES_SHOWN} more lines]")
    return ["This comment waits with it and goes to the players with the board:", *shown]


class Reset(enum.Enum):
    """What a password reset did."""

    mailed = "mailed"  # a new code went to one confirmed address or more
    waiting = "waiting"  # a code mailed earlier still works: nothing new was sent
    capped = "capped"  # every confirmed address has had its mails for today: no code
    nowhere = "nowhere"  # no confirmed address


def reset_mails(session: Session, settings: Settings, user: User, now: datetime) -> Reset:
    """Queue a password reset code to each confirmed address of ``user`` that may get one more
    mail today.  The cap is checked first: a code that no mail carries would stand for a
    waiting one and hold back the next request."""
    targets = [a.address for a in user.addresses if a.confirmed]
    if not targets:
        return Reset.nowhere
    if tokens.pending(session, TokenKind.reset, now, user_id=user.id):
        return Reset.waiting
    allowed = [a for a in targets if limits.recipient_allowed(session, settings, a, now)]
    if not allowed:
        return Reset.capped
    code = tokens.issue(
        session, TokenKind.reset, user_id=user.id, now=now, hours=settings.token_hours
    )
    lines = [
        f"Somebody asked for a new password for the player '{user.userid}'.",
        "",
        "To set one, send the line",
        f"  password new {user.userid} {code} NEWPASSWORD",
        f"to {settings.server_address} within {settings.token_hours} hours (the code works once).",
        "If it was not you, ignore this mail or send",
        f"'refuse {code}': your password stays as it is.",
    ]
    for address in allowed:
        queue_mail(
            session,
            address,
            subjects.PASSWORD_RESET(server=settings.server_name),
            _text(lines),
            now,
        )
    return Reset.mailed


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

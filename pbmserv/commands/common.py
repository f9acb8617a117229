"""Helpers shared by the command modules: credentials, board numbers, outbox notifications."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import click
from sqlalchemy.orm import Session

from pbmserv.accounts import AuthError, authenticate
from pbmserv.dispatch import Refused, Request
from pbmserv.store.models import Outbox, OutboxStatus, User
from pbmserv.views import Mail

RAW = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": ["--help"]}


def raw_args(metavar: str) -> click.Argument:
    return click.Argument(["args"], nargs=-1, type=click.UNPROCESSED, metavar=metavar)


def need(words: Sequence[str], count: int, usage: str) -> None:
    if len(words) < count:
        raise click.UsageError(f"not enough arguments; usage: {usage}")


def take_password(req: Request, words: list[str], index: int, userid: str) -> str:
    """Remove and return the password at ``words[index]`` (or take it from the shell).

    From a shell, ``PBMSERV_PASSWORD`` replaces the password word entirely; a missing password
    is asked for at a terminal prompt.
    """
    if req.env_password is not None:
        return req.env_password
    if len(words) > index:
        return words.pop(index)
    if req.prompt is not None:
        return req.prompt(f"Password for {userid}")
    raise click.UsageError(f"the password of {userid} is missing")


def login(req: Request, userid: str, password: str) -> int:
    """Check a password in a transaction of its own (so failures are counted even when the
    command is refused); returns the user's id."""
    error: AuthError | None = None
    user_id = 0
    with req.sessions() as session, session.begin():
        try:
            user = authenticate(
                session, req.settings, userid, password, sender=req.sender, now=req.now
            )
            user_id = user.id
        except AuthError as exc:
            error = exc  # leave the block normally so that the failure count is kept
    if error is not None:
        raise Refused(str(error))
    return user_id


def parse_board_number(text: str) -> tuple[int, int | None]:
    """``101`` or ``101#5`` (the board at move 5)."""
    number, _, at = text.partition("#")
    try:
        return int(number), (int(at) if at else None)
    except ValueError:
        raise click.UsageError(f"'{text}' is not a board number") from None


def queue_mail(
    session: Session, mails: Iterable[Mail], now_source: Request, inbox_id: int | None = None
) -> None:
    for mail in mails:
        session.add(
            Outbox(
                recipient=mail.to,
                subject=mail.subject,
                body=mail.body,
                created=now_source.now,
                status=OutboxStatus.pending,
                next_attempt=now_source.now,
                inbox_id=inbox_id,
            )
        )


def addresses_of(users: Iterable[User]) -> list[str]:
    seen: list[str] = []
    for user in users:
        for a in user.addresses:
            if a.address not in seen:
                seen.append(a.address)
    return seen


def notify_users(
    session: Session,
    req: Request,
    users: Iterable[User],
    subject: str,
    body: str,
    *,
    skip: User | None = None,
) -> None:
    """Mail ``body`` to every address of ``users`` except the acting user's and the sender's
    (robots never get mail)."""
    from sqlalchemy import select

    from pbmserv.store.models import Robot

    targets = [u for u in users if skip is None or u.id != skip.id]
    robots = set(
        session.scalars(select(Robot.user_id).where(Robot.user_id.in_([u.id for u in targets])))
    )
    targets = [u for u in targets if u.id not in robots]
    mails = [
        Mail(address, subject, body)
        for address in addresses_of(targets)
        if not (req.sender and address.lower() == req.sender.lower())
    ]
    queue_mail(session, mails, req)

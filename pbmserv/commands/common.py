"""Helpers shared by the command modules: credentials, board numbers, outbox notifications."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import click
from sqlalchemy import select
from sqlalchemy.orm import Session

from pbmserv.accounts import AuthError, authenticate
from pbmserv.dispatch import Refused, Request
from pbmserv.games.base import Position
from pbmserv.outbox import mail_users
from pbmserv.store.models import Board, User

RAW = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": ["--help"]}


def raw_args(metavar: str) -> click.Argument:
    return click.Argument(["args"], nargs=-1, type=click.UNPROCESSED, metavar=metavar)


def raw_command(
    name: str, callback: Callable[..., None], metavar: str, help_text: str
) -> click.Command:
    """A command whose words are taken raw (pbmserv syntax, parsed by the callback)."""
    return click.Command(
        name, callback=callback, params=[raw_args(metavar)], context_settings=RAW, help=help_text
    )


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


def notify_users(
    session: Session,
    req: Request,
    users: Iterable[User],
    subject: str,
    body: str,
    *,
    skip: User | None = None,
    tail: Callable[[User], str] | None = None,
    board: Board | None = None,
) -> None:
    """Mail ``body`` to every address of ``users`` except the acting user's and the sender's
    (robots never get mail); ``tail(user)`` is appended for each user; a mail about ``board``
    respects each player's notification mode."""
    mail_users(
        session,
        users,
        subject,
        body,
        req.now,
        skip=skip,
        skip_address=req.sender,
        tail=tail,
        board=board,
    )


def reader_tail(
    session: Session, req: Request, board: Board, position: Position, actor: User | None = None
) -> str:
    """The reply line for the answer to the sender: on the shell (the operator plays every
    seat) for the player to move; by mail when the actor, or a user of the sender's address,
    is that player."""
    from pbmserv.boards import user_to_move
    from pbmserv.store.models import Address
    from pbmserv.views import reply_line

    mover = user_to_move(board, position)
    if mover is None:
        return ""
    if req.trusted:
        return reply_line(board, position, mover)
    readers = {actor.id} if actor is not None else set()
    if req.sender:
        query = select(Address.user_id).where(Address.address == req.sender.lower())
        readers.update(session.scalars(query))
    return reply_line(board, position, mover if mover.id in readers else None)

"""``notifications``: how a player gets board mails, for all boards or for one (see notify)."""

from __future__ import annotations

import click

from pbmserv.commands.common import login, need, parse_board_number, raw_command, take_password
from pbmserv.dispatch import Refused, Request, answer, request
from pbmserv.games.base import Game
from pbmserv.notify import MODES
from pbmserv.store.models import Board, User

CHOICES = " | ".join(MODES)


def _mode(word: str, usage: str, *, default: bool = False) -> str | None:
    word = word.lower()
    if default and word == "default":
        return None
    if word not in MODES:
        raise click.UsageError(f"'{word}' is not one of {', '.join(MODES)}; usage: {usage}")
    return word


def _describe(mode: str) -> str:
    return f"{mode} ({MODES[mode]})"


def user_notifications(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """notifications USERID PASSWORD [MODE]: show or set the mode of all one's boards."""
    usage = f"notifications USERID PASSWORD [{CHOICES}]"
    words = list(args)
    need(words, 1, usage)
    userid = words.pop(0)
    password = take_password(req, words, 0, userid)
    user_id = login(req, userid, password)
    with req.sessions() as session, session.begin():
        user = session.get(User, user_id)
        assert user is not None
        if words:
            user.notify = _mode(words[0], usage) or "every"
        text = f"{user.userid} gets {_describe(user.notify)}, on every board without its own mode."
    answer(ctx, "pbmserv notifications", text + "\n")


def board_notifications(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    """GAME notifications BOARD USERID PASSWORD [MODE|default]: the mode of one board."""
    usage = f"{game.name} notifications BOARD USERID PASSWORD [{CHOICES} | default]"
    need(words, 2, usage)
    number, _ = parse_board_number(words.pop(0))
    userid = words.pop(0)
    password = take_password(req, words, 0, userid)
    user_id = login(req, userid, password)
    from pbmserv import boards

    with req.sessions() as session, session.begin():
        try:
            board: Board = boards.find_board(session, game, number)
        except boards.BoardError as exc:
            raise Refused(str(exc)) from None
        seats = [s for s in board.seats if s.user_id == user_id]
        if not seats:
            raise Refused(f"{userid} does not play on {game.display_name} board {number}")
        if words:
            mode = _mode(words[0], usage, default=True)
            for seat in seats:
                seat.notify = mode
        own = seats[0].notify
        user = seats[0].user
        mode = own or user.notify
        source = "its own mode" if own else "your mode for all boards"
        text = f"On {game.display_name} board {number} {user.userid} gets {_describe(mode)} ({source})."
    answer(ctx, f"{game.display_name} Board {number} notifications", text + "\n")


def register_notification_commands(group: click.Group) -> None:
    @click.pass_context
    def callback(ctx: click.Context, args: tuple[str, ...]) -> None:
        user_notifications(request(ctx), ctx, args)

    group.add_command(
        raw_command(
            "notifications",
            callback,
            f"USERID PASSWORD [{CHOICES}]",
            "How you get board mails: every move, a daily digest, or once until you move.",
        )
    )


def add_notification_commands(game: Game, group: click.Group) -> None:
    from pbmserv.commands.games import _make

    group.add_command(
        _make(
            game,
            "notifications",
            board_notifications,
            f"BOARD USERID PASSWORD [{CHOICES} | default]",
            "How you get the mails of one board (default: your mode for all boards).",
        )
    )

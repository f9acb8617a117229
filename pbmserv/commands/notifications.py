"""``notifications``: how a player gets board mails, for all boards or for one (see
domain/mailmodes)."""

from __future__ import annotations

import click

from pbmserv.commands.common import board_arg, call_login, load_board
from pbmserv.commands.dispatch import Refused, answer
from pbmserv.commands.spec import Arg, Call, Command, Kind
from pbmserv.domain.mailmodes import MODES, set_board_mode, set_user_mode
from pbmserv.render import subjects
from pbmserv.render.templates import fill
from pbmserv.store.models import User

CHOICES = " | ".join(MODES)


def _mode(word: str, usage: str, *, default: bool = False) -> str | None:
    word = word.lower()
    if default and word == "default":
        return None
    if word not in MODES:
        raise click.UsageError(f"'{word}' is not one of {', '.join(MODES)}; usage: {usage}")
    return word


def _describe(mode: str) -> str:
    """``one mail a day with every board that changed (mode 'digest')``: what he gets, then
    the word that sets it."""
    return f"{MODES[mode]} (mode '{mode}')"


def user_notifications(call: Call) -> None:
    """notifications USERID PASSWORD [MODE]: show or set the mode of all one's boards."""
    user_id = call_login(call)
    with call.req.sessions() as session, session.begin():
        user = session.get(User, user_id)
        assert user is not None
        if call.args.get("mode"):
            set_user_mode(session, user, _mode(call.args["mode"], call.usage) or "every")
        text = f"{user.userid} gets {_describe(user.notify)}, on every board without its own mode."
    answer(call.ctx, subjects.server("notifications"), fill(text) + "\n")


def board_notifications(call: Call) -> None:
    """GAME notifications BOARD USERID PASSWORD [MODE|default]: the mode of one board."""
    game, number = call.game, board_arg(call)
    user_id = call_login(call)
    with call.req.sessions() as session, session.begin():
        board = load_board(session, game, number)
        seats = [s for s in board.seats if s.user_id == user_id]
        if not seats:
            raise Refused(
                f"{call.args['userid']} does not play on {game.display_name} board {number}"
            )
        if call.args.get("mode"):
            set_board_mode(session, seats, _mode(call.args["mode"], call.usage, default=True))
        own, user = seats[0].notify, seats[0].user
        source = "its own mode" if own else "his mode for all boards"
        text = (
            f"On {game.display_name} board {number} {user.userid} gets "
            f"{_describe(own or user.notify)}: {source}."
        )
    answer(call.ctx, subjects.board(game.display_name, number, "notifications"), fill(text) + "\n")


TOP_COMMANDS: tuple[Command, ...] = (
    Command(
        "notifications",
        user_notifications,
        "How you get board mails: every move, a daily digest, or once until you move.",
        (
            Arg("userid", Kind.USERID),
            Arg("password", Kind.PASSWORD),
            Arg("mode", Kind.TEXT, optional=True, metavar=f"[{CHOICES}]"),
        ),
    ),
)
GAME_COMMANDS: tuple[Command, ...] = (
    Command(
        "notifications",
        board_notifications,
        "How you get the mails of one board (default: your mode for all boards).",
        (
            Arg("board", Kind.BOARD),
            Arg("userid", Kind.USERID),
            Arg("password", Kind.PASSWORD),
            Arg("mode", Kind.TEXT, optional=True, metavar=f"[{CHOICES} | default]"),
        ),
    ),
)

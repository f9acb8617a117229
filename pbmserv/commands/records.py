"""``GAME export BOARD [text|json]``: the record of a board (see domain/record)."""

from __future__ import annotations

import click

from pbmserv.commands.common import load_board, parse_board_number
from pbmserv.commands.dispatch import answer
from pbmserv.commands.spec import Arg, Call, Command, Kind
from pbmserv.domain import boards, record
from pbmserv.render import subjects


def export(call: Call) -> None:
    """The record of a board: text, JSON (documented in docs/record-format.md), or both."""
    game = call.game
    number, _ = parse_board_number(call.args["board"])
    kind = (call.args.get("kind") or "both").lower()
    if kind not in ("text", "json", "both"):
        raise click.UsageError(f"'{kind}' is not text or json; usage: {call.usage}")
    with call.req.sessions() as session:
        board = load_board(session, game, number)
        position = boards.position_of(board)
        text = record.to_text(board, position)
        data = record.dumps(record.to_json(board, position))
    parts = []
    if kind in ("text", "both"):
        parts.append(text)
    if kind in ("json", "both"):
        parts.append(
            f"JSON record ({record.FORMAT}, version {record.VERSION}; the format is\n"
            "described in docs/record-format.md):\n\n" + data
        )
    answer(call.ctx, subjects.board(game.display_name, number, "record"), "\n".join(parts))


COMMANDS: tuple[Command, ...] = (
    Command(
        "export",
        export,
        "The record of a board: text and JSON (replayable; see docs/record-format.md).",
        (Arg("board", Kind.BOARD), Arg("kind", Kind.TEXT, optional=True, metavar="[text|json]")),
    ),
)

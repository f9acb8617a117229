"""Game commands about a board's record: ``export``."""

from __future__ import annotations

from collections.abc import Callable

import click

from pbmserv import boards, record
from pbmserv.commands.common import need, parse_board_number
from pbmserv.dispatch import Refused, Request, answer
from pbmserv.games.base import Game


def export(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    """The record of a board: text, JSON (documented in docs/record-format.md), or both."""
    usage = f"{game.name} export BOARD [text|json]"
    need(words, 1, usage)
    number, _ = parse_board_number(words[0])
    kind = words[1].lower() if len(words) > 1 else "both"
    if kind not in ("text", "json", "both"):
        raise click.UsageError(f"'{words[1]}' is not text or json; usage: {usage}")
    with req.sessions() as session:
        try:
            board = boards.find_board(session, game, number)
        except boards.BoardError as exc:
            raise Refused(str(exc)) from None
        position = boards.position_of(board)
        text = record.to_text(board, position)
        data = record.dumps(record.to_json(board, position))
    parts = []
    if kind in ("text", "both"):
        parts.append(text)
    if kind in ("json", "both"):
        parts.append(
            f"JSON record ({record.FORMAT}, version {record.VERSION}; the format is described "
            "in docs/record-format.md):\n\n" + data
        )
    answer(ctx, f"{game.display_name} Board {number} record", "\n".join(parts))


RECORD_COMMANDS: list[tuple[str, Callable[..., None], str, str]] = [
    (
        "export",
        export,
        "BOARD [text|json]",
        "The record of a board: text and JSON (replayable; see docs/record-format.md).",
    ),
]


def add_record_commands(game: Game, group: click.Group) -> None:
    from pbmserv.commands.games import _make

    for name, fn, metavar, help_text in RECORD_COMMANDS:
        group.add_command(_make(game, name, fn, metavar, help_text))

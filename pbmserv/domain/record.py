"""The record of a game, for players and programs: a text record and a versioned JSON record.

The JSON record (format ``pbmserv-record``, documented in docs/record-format.md) holds what is
needed to replay the game with the engine, move by move, plus who played and how it ended.
:func:`replay` rebuilds the final position from it; a record of a newer version is refused.
The last board mail of a game carries the JSON record as an ``application/json`` attachment.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbmserv.domain.boards import FORFEIT, position_of
from pbmserv.games import get_game
from pbmserv.games.base import FORFEIT as FORFEIT_MOVE
from pbmserv.games.base import Position
from pbmserv.render.results import draw_sides, named_result, names
from pbmserv.store.models import Board, BoardStatus

FORMAT = "pbmserv-record"
VERSION = 2  # 2: ``drawn``; an empty ``winners`` no longer means a tie of every player


class RecordError(ValueError):
    """A JSON record that is not one this server can read."""


def _userids(board: Board, seats: list[int]) -> list[str]:
    return [board.seats[s].user.userid for s in seats]


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def to_json(board: Board, position: Position) -> dict[str, Any]:
    """The JSON record of ``board`` (``position`` is its current position)."""
    game = get_game(board.game)
    infos = position.seats()
    names = {s.user_id: s.user.userid for s in board.seats}
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": game.name,
        "board": board.number,
        "params": dict(board.params),
        "options": dict(board.options),
        "players": [
            {"seat": s.index, "userid": s.user.userid, "label": infos[s.index].label}
            for s in board.seats
        ],
        "status": board.status.value,
        "result": board.result,
        "winners": _userids(board, board.winners or []),
        "drawn": _userids(board, board.drawn_seats()),
        "started": _iso(board.created),
        "finished": _iso(board.finished_at),
        "moves": [
            {
                "ply": m.ply,
                "seat": m.seat,
                "userid": names.get(m.user_id) if m.user_id else None,
                "move": m.text,
                "auto": m.auto,
                "at": _iso(m.at),
            }
            for m in board.moves
        ],
        "position": position.serialize(),
    }


def dumps(record: dict[str, Any]) -> str:
    """JSON text, one key a line and one player or move a line (readable in a mail)."""
    items = list(record.items())
    lines = ["{"]
    for i, (key, value) in enumerate(items):
        if isinstance(value, list) and value and isinstance(value[0], dict):
            inner = ",\n".join("  " + json.dumps(x, separators=(", ", ": ")) for x in value)
            text = f"[\n{inner}\n ]"
        else:
            text = json.dumps(value, separators=(", ", ": "))
        lines.append(f" {json.dumps(key)}: {text}" + ("," if i < len(items) - 1 else ""))
    return "\n".join(lines) + "\n}\n"


def replay(record: dict[str, Any]) -> Position:
    """The final position of a JSON record, replayed move by move with the engine."""
    if record.get("format") != FORMAT:
        raise RecordError(f"not a {FORMAT} record")
    if not isinstance(record.get("version"), int) or record["version"] > VERSION:
        raise RecordError(
            f"record version {record.get('version')!r}; this server reads 1..{VERSION}"
        )
    game = get_game(str(record["game"]))
    position = game.new(len(record["players"]), record["params"])
    for entry in record["moves"]:
        text = str(entry["move"])
        position.play(FORFEIT_MOVE if text == FORFEIT else position.parse_move(text))
    return position


def _when(moment: datetime | None) -> str:
    """A time as the board mails write it (the JSON record keeps the exact ISO 8601 one)."""
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment is not None else "-"


def to_text(board: Board, position: Position) -> str:
    """The text record: a header of ``Key: value`` lines, then one numbered line per move."""
    data = to_json(board, position)
    game = get_game(board.game)
    params = " ".join(game.format_params(board.params)) or "-"
    players = ", ".join(f"{p['userid']} ({p['label']})" for p in data["players"])
    lines = [
        f"Game: {game.display_name}",
        f"Board: {board.number}",
        f"Parameters: {params}",
        f"Players: {players}",
        f"Started: {_when(board.created)}",
        f"Status: {data['status']}",
    ]
    if board.status is BoardStatus.finished:
        sides = draw_sides(board)  # a draw among the players still in: who drew, who was out
        won = " and ".join(data["winners"]) or ("none (a tie)" if sides is None else "none")
        lines += [f"Finished: {_when(board.finished_at)}", f"Winners: {won}"]
        if sides is not None:
            drawn, out = sides
            lines.append(f"Drawn: {names(drawn)} ({names(out)} lost)")
        if board.result:
            lines.append(f"Result: {named_result(board, position)}")
    lines.append("")
    for m in data["moves"]:
        auto = " (auto)" if m["auto"] else ""
        lines.append(f"{m['ply']:>4}. {m['userid'] or '-':<12} {m['move']}{auto}")
    return "\n".join(lines) + "\n"


def filename(board: Board) -> str:
    return f"{board.game}-{board.number}.json"


_FINISHED_SUBJECT = re.compile(r"^(?P<game>[A-Za-z]+) Board (?P<number>\d+)$")


def attachments_for(session: Session, subject: str) -> list[tuple[str, str, bytes]]:
    """(file name, MIME type, bytes) for an outgoing mail: the JSON record when the mail is
    the board mail of a finished game (its subject names no player to move)."""
    match = _FINISHED_SUBJECT.match(subject)
    if match is None:
        return []
    try:
        game = get_game(match["game"])
    except KeyError:
        return []
    board = session.scalar(
        select(Board).where(Board.game == game.name, Board.number == int(match["number"]))
    )
    if board is None or board.status is not BoardStatus.finished:
        return []
    data = dumps(to_json(board, position_of(board))).encode()
    return [(filename(board), "application/json", data)]

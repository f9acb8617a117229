"""Ploy's board drawing: the plain data that ``templates/boards/ploy.txt.j2`` lays out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pbmserv.games.ploy.tables import BRACKETS, COLOURS, FILES, KIND_LETTERS, KIND_NAMES

if TYPE_CHECKING:
    from pbmserv.games.ploy.position import PloyPosition


def board_context(position: PloyPosition) -> dict[str, Any]:
    """Plain data for ``templates/boards/ploy.txt.j2``: three text lines per rank, the seats."""
    rows = []
    for r in range(8, -1, -1):
        top, mid, bot = [], [], []
        for c in range(9):
            p = position.board[r * 9 + c]
            t, m, b = _cell(p)
            top.append(t)
            mid.append(m)
            bot.append(b)
        rows.append({"rank": r + 1, "lines": [" ".join(top), " ".join(mid), " ".join(bot)]})
    seats = []
    for s, info in enumerate(position.seats()):
        parts = [] if info.in_play or info.note else ["out"]  # a note says why it is out
        if info.note:
            parts.append(info.note)
        armies = [COLOURS[a] for a, c in enumerate(position.ctrl) if c == s and a != s]
        if armies:
            parts.append(f"also moves {', '.join(armies)}")
        seats.append(
            {
                "mark": info.symbol,
                "label": info.label,
                "team": None if info.team is None else ("green+yellow", "red+blue")[info.team],
                "text": "; ".join(parts),
                "to_move": position.to_move == s,
            }
        )
    to_move = position.to_move
    return {
        "files": list(FILES),
        "rows": rows,
        "seats": seats,
        "to_move": None if to_move is None else COLOURS[to_move],
        "played_by": (
            None
            if to_move is None or position.controller(to_move) == to_move
            else COLOURS[position.controller(to_move)]
        ),
        "partnership": position.partnership,
        "relaxed": bool(position.params.get("relaxed")),
        "kinds": [(KIND_LETTERS[k], KIND_NAMES[k]) for k in range(8)],
        "result": None if position.result is None else position.result[1],
        "warnings": position.draw_warnings(),
    }


def _cell(p: int) -> tuple[str, str, str]:
    """A point as three 5-character strings: flags around the bracketed kind letter."""
    if not p:
        return "     ", "  .  ", "     "
    m = p & 255
    army, kind = p >> 12, p >> 8 & 15

    def f(d: int, ch: str) -> str:
        return ch if m >> d & 1 else " "

    br = BRACKETS[army]
    top = f"{f(1, chr(92))} {f(0, '|')} {f(7, '/')}"
    mid = f"{f(2, '-')}{br[0]}{KIND_LETTERS[kind]}{br[1]}{f(6, '-')}"
    bot = f"{f(3, '/')} {f(4, '|')} {f(5, chr(92))}"
    return top, mid, bot

"""Pylon's board drawing: the plain data that ``templates/boards/pylon.txt.j2`` lays out, as
boxes on the doubled grid, or one small grid per level when the boxes would be too wide."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pbmserv.games.pylon.tables import EMPTY, SYMBOLS, pyramid

if TYPE_CHECKING:
    from pbmserv.games.pylon.position import PylonPosition

_CW, _CH, _MARGIN = 3, 2, 3  # columns and lines per doubled-grid cell; label width
MAX_WIDTH = 76


def board_context(pos: PylonPosition) -> dict[str, Any]:
    """Pre-built drawing lines for the template: boxes on the doubled grid, or per-level grids."""
    geo = pos.geo
    width = _MARGIN + 2 * _CW + (geo.grid - 1) * _CW + 1 + _MARGIN
    lines = _draw_boxes(pos) if width <= MAX_WIDTH else _draw_levels(pos)
    sc = pos.scores()
    seats = [
        {
            "symbol": SYMBOLS[i],
            "number": i + 1,
            "score": sc[i],
            "note": f" ({pos.left([i])})" if i in pos.resigned else "",
            "to_move": pos.turn == i,
        }
        for i in range(pos.num_seats)
    ]
    return {
        "lines": lines,
        "compact": width > MAX_WIDTH,
        "size": geo.n,
        "last_column": chr(96 + geo.grid),
        "rows": geo.grid,
        "seats": seats,
        "score": " ".join(str(s) for s in sc),
        "on_board": sum(sc),
        "maximum": pyramid(geo.n),
    }


def _draw_boxes(pos: PylonPosition) -> list[str]:
    geo, board = pos.geo, pos.board
    g = geo.grid
    left = _MARGIN + _CW  # x of column a's centre
    top = 2  # y of the top row's centre
    w = left + (g - 1) * _CW + _CW + 1
    h = top + (g - 1) * _CH + 3
    canvas = [[" "] * w for _ in range(h)]

    def xy(p: int) -> tuple[int, int]:
        c, r = geo.cell[p]
        return left + c * _CW, top + (g - 1 - r) * _CH

    for p in range(geo.size):  # points are ordered by level, so upper marbles overdraw
        owner = board[p]
        x, y = xy(p)
        if owner == EMPTY:
            if geo.level[p] == 0:
                canvas[y][x] = "."
            continue
        s = SYMBOLS[owner]
        tag = str(geo.level[p]) if geo.level[p] else s  # level number, or the owner on level 0
        for dy in (-2, -1, 0, 1, 2):
            row = canvas[y + dy]
            for dx in (-3, -2, -1, 0, 1, 2, 3):
                if abs(dx) == 3 and abs(dy) == 2:
                    continue  # transparent corner: the marble below shows in the gap
                if abs(dy) == 2:
                    ch = "-"
                elif abs(dx) == 3:
                    ch = "|"
                elif abs(dx) == 2 and abs(dy) == 1:
                    ch = s
                elif dy == 0 and tag and dx in (0, 1):
                    ch = tag[dx] if dx < len(tag) else " "
                else:
                    ch = " "
                row[x + dx] = ch
    letters = [" "] * w
    for c in range(g):
        letters[left + c * _CW] = chr(97 + c)
    head = "".join(letters).rstrip()
    body_lines = []
    for y in range(h):
        body = "".join(canvas[y]).rstrip()
        if (y - top) % _CH == 0 and top <= y <= top + (g - 1) * _CH:
            r = g - 1 - (y - top) // _CH
            body = f"{r + 1:>2} " + body[_MARGIN:].ljust(w - _MARGIN) + f" {r + 1}"
        body_lines.append(body.rstrip())
    while body_lines and not body_lines[0].strip():
        body_lines.pop(0)
    while body_lines and not body_lines[-1].strip():
        body_lines.pop()
    out = [head, *body_lines]
    out.append(head)
    return out


def _draw_levels(pos: PylonPosition) -> list[str]:
    """Compact view for large boards: one small grid per level ('.' a playable empty point)."""
    geo, board = pos.geo, pos.board
    out: list[str] = []
    for lv in range(geo.n):
        pts = [p for p in range(geo.size) if geo.level[p] == lv]
        if lv and all(board[p] == EMPTY and p not in pos.valid for p in pts):
            break
        k = geo.n - lv
        cols = [chr(97 + 2 * i + lv) for i in range(k)]
        head = "    " + " ".join(cols)
        out += [f"level {lv}:", head]
        for j in range(k - 1, -1, -1):
            row = 2 * j + lv + 1
            cells = []
            for i in range(k):
                p = pts[j * k + i]
                o = board[p]
                cells.append(SYMBOLS[o] if o != EMPTY else ("." if p in pos.valid else " "))
            out.append(f"{row:>3} " + " ".join(cells) + f" {row}")
        out += [head, ""]
    return out

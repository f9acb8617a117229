"""Ploy: the 9x9 points, each piece a disc in its army's colour with its kind letter and a
stroke for every flag (the directions it may move), north up, as in the mail's drawing."""

from __future__ import annotations

from typing import Any

from pbmserv.games.ploy.tables import COLOURS, DELTAS, DIR_NAMES, FILES, KIND_LETTERS, KIND_NAMES
from pbmserv.web.draw import Drawing, Shape, circle, group, line, rect, text

S = 56  # one point
M = 30  # margin for the coordinates


def centre(col: int, row: int) -> tuple[float, float]:
    return M + col * S + S / 2, M + (8 - row) * S + S / 2


def draw(position: Any, *, over: bool = False) -> Drawing:
    shapes: list[Shape] = [rect(M, M, 9 * S, 9 * S, "board")]
    for i in range(9):
        x, y = centre(i, i)
        shapes.append(line(M + S / 2, y, M + 9 * S - S / 2, y, "grid"))
        shapes.append(line(x, M + S / 2, x, M + 9 * S - S / 2, "grid"))
        shapes += [text(x, M - 10, FILES[i], "coord"), text(x, M + 9 * S + 20, FILES[i], "coord")]
        shapes += [
            text(M / 2, y + 5, str(i + 1), "coord"),
            text(M + 9 * S + M / 2, y + 5, str(i + 1), "coord"),
        ]
    pieces = 0
    for square, piece in enumerate(position.board):
        if not piece:
            continue
        pieces += 1
        col, row = square % 9, square // 9
        shapes.append(_piece(piece, col, row))
    return Drawing(
        width=9 * S + 2 * M,
        height=9 * S + 2 * M,
        label=f"Ploy board after move {position.ply}: {pieces} pieces",
        shapes=shapes,
    )


def _piece(piece: int, col: int, row: int) -> Shape:
    mask, army, kind = piece & 255, piece >> 12, piece >> 8 & 15
    x, y = centre(col, row)
    radius = S * 0.3
    children = []
    flags = []
    for d, (dx, dy) in enumerate(DELTAS):
        if mask >> d & 1:
            flags.append(DIR_NAMES[d])
            length = (dx * dx + dy * dy) ** 0.5
            ux, uy = dx / length, -dy / length
            children.append(
                line(x + ux * radius, y + uy * radius, x + ux * S * 0.47, y + uy * S * 0.47, "flag")
            )
    children.append(circle(x, y, radius, "disc"))
    children.append(text(x, y + 6, KIND_LETTERS[kind], "kind"))
    where = f"{FILES[col]}{row + 1}"
    title = f"{COLOURS[army]} {KIND_NAMES[kind]} on {where}, flags {' '.join(flags)}"
    return group(f"piece army-{COLOURS[army]}", children, title, square=where)

"""Pylon: the doubled grid seen from above.  Board points are dots, a marble is a disc in its
owner's colour marked with its symbol (level 0) or its level number (upper levels), drawn from
level 0 up so a marble covers part of the four it rests on, as the mail's boxes do."""

from __future__ import annotations

from typing import Any

from pbmserv.games.pylon import EMPTY, SYMBOLS
from pbmserv.web.draw import Drawing, Shape, circle, group, rect, text

U = 26  # half the distance between two board points
M = 30


def draw(position: Any, *, over: bool = False) -> Drawing:
    geo, board = position.geo, position.board
    g = geo.grid

    def xy(col: int, row: int) -> tuple[float, float]:
        return M + U + col * U, M + U + (g - 1 - row) * U

    side = (g + 1) * U
    shapes: list[Shape] = [rect(M - 4, M - 4, side + 8, side + 8, "board")]
    for i in range(g):
        x, y = xy(i, i)
        letter, number = chr(97 + i), str(i + 1)
        shapes += [text(x, M - 10, letter, "coord"), text(x, M + side + 20, letter, "coord")]
        shapes += [
            text(M / 2, y + 5, number, "coord"),
            text(M + side + M / 2, y + 5, number, "coord"),
        ]
    marbles = 0
    for p in range(geo.size):  # ordered by level: upper marbles are drawn last
        col, row = geo.cell[p]
        x, y = xy(col, row)
        level, owner = geo.level[p], board[p]
        if owner == EMPTY:
            if level == 0:
                shapes.append(circle(x, y, 3, "point"))
            elif p in position.valid and not over:
                shapes.append(circle(x, y, 6, "open"))
            continue
        marbles += 1
        label = str(level) if level else SYMBOLS[owner]
        name = geo.names[p]
        shapes.append(
            group(
                f"marble seat-{owner} level-{level}",
                [circle(x, y, U * 0.96, "disc"), text(x, y + 6, label, "mark")],
                f"{SYMBOLS[owner]} marble on {name}, level {level}",
                point=name,
            )
        )
    return Drawing(
        width=side + 2 * M,
        height=side + 2 * M,
        label=f"Pylon board after move {position.ply}: {marbles} marbles",
        shapes=shapes,
    )

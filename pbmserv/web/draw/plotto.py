"""Plotto: flat-topped hexes laid out from the engine's cells (there is no board).  A piece is a
hex with its number; a cell where the next piece may go is a dashed hex with its letter; the
ruler numbers the hex columns as the mail's does."""

from __future__ import annotations

from math import cos, pi, sin, sqrt
from typing import Any

from pbmserv.games.plotto import label_of, xy_of
from pbmserv.web.draw import Drawing, Shape, group, polygon, text

R = 30  # hex circumradius
M = 34
DX, DY = 1.5 * R, sqrt(3) / 2 * R  # per column, per half-row


def _hex(cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    return [(cx + r * cos(k * pi / 3), cy + r * sin(k * pi / 3)) for k in range(6)]


def draw(position: Any, *, over: bool = False) -> Drawing:
    order = [] if over and position.board else position.order()  # an empty board keeps a shape
    cells = [xy_of(c) for c in position.board] + [xy_of(c) for c in order]
    lo_x = min(x for x, _ in cells)
    hi_x = max(x for x, _ in cells)
    lo_y = min(y for _, y in cells)
    hi_y = max(y for _, y in cells)
    width = (hi_x - lo_x) * DX + 2 * R + 2 * M
    height = (hi_y - lo_y) * DY + 2 * DY + 2 * M

    def centre(x: int, y: int) -> tuple[float, float]:
        return M + R + (x - lo_x) * DX, M + DY + (y - lo_y) * DY

    shapes: list[Shape] = []
    for x in range(lo_x, hi_x + 1):
        cx, _ = centre(x, lo_y)
        number = str((x - lo_x + 1) % 100)
        shapes += [text(cx, M - 12, number, "coord"), text(cx, height - M + 24, number, "coord")]
    players, tournament = position.num_seats, bool(position.params.get("tournament"))
    for cell, number in position.board.items():
        x, y = xy_of(cell)
        cx, cy = centre(x, y)
        neutral = not tournament and number > players
        shapes.append(
            group(
                f"piece num-{number}" + (" neutral" if neutral else ""),
                [polygon(_hex(cx, cy, R - 1), "hex"), text(cx, cy + 7, str(number), "number")],
                f"piece {number}" + (" (neutral)" if neutral else ""),
                column=str(x - lo_x + 1),
            )
        )
    for i, cell in enumerate(order):
        x, y = xy_of(cell)
        cx, cy = centre(x, y)
        label = label_of(i)
        shapes.append(
            group(
                "open",
                [polygon(_hex(cx, cy, R - 3), "hex"), text(cx, cy + 6, label, "label")],
                f"cell {label}: the next piece may go here",
                label=label,
            )
        )
    return Drawing(
        width=round(width, 1),
        height=round(height, 1),
        label=(
            f"Plotto after move {position.ply}: "
            f"{len(position.board)} pieces, {len(order)} open cells"
        ),
        shapes=shapes,
    )

"""Polis: the 8x8 board with blue on top (as in the mail), dogs as discs, chariots as squares,
a stunned chariot with a dashed ring, the last move's squares and captures marked."""

from __future__ import annotations

import re
from typing import Any

from pbmserv.games.polis import (
    CHARS,
    EMPTY,
    FILES,
    IS_CHARIOT,
    OWNER,
    PIECE_NAMES,
    square_name,
)
from pbmserv.web.draw import Drawing, Shape, circle, group, line, rect, text

S = 60
M = 30
COLOURS = ("blue", "red")


def corner(sq: int) -> tuple[int, int]:
    return M + (sq & 7) * S, M + (7 - (sq >> 3)) * S


def draw(position: Any, *, over: bool = False) -> Drawing:
    shapes: list[Shape] = []
    last = set(re.findall(r"[a-h][1-8]", position.last or ""))
    for sq in range(64):
        x, y = corner(sq)
        shade = "light" if (sq & 7) % 2 != (sq >> 3) % 2 else "dark"
        shapes.append(
            rect(x, y, S, S, f"square {shade}" + (" last" if square_name(sq) in last else ""))
        )
    for i in range(8):
        cx = M + i * S + S / 2
        cy = M + (7 - i) * S + S / 2
        shapes += [text(cx, M - 10, FILES[i], "coord"), text(cx, M + 8 * S + 20, FILES[i], "coord")]
        shapes += [
            text(M / 2, cy + 5, str(i + 1), "coord"),
            text(M + 8 * S + M / 2, cy + 5, str(i + 1), "coord"),
        ]
    pieces = 0
    for sq, piece in enumerate(position.board):
        if piece == EMPTY:
            continue
        pieces += 1
        shapes.append(_piece(position, sq, piece))
    for sq in position.last_captured:
        x, y = corner(sq)
        shapes.append(
            group(
                "captured",
                [
                    line(x + 12, y + 12, x + S - 12, y + S - 12, "cross"),
                    line(x + S - 12, y + 12, x + 12, y + S - 12, "cross"),
                ],
                f"captured on {square_name(sq)}",
            )
        )
    return Drawing(
        width=8 * S + 2 * M,
        height=8 * S + 2 * M,
        label=f"Polis board after move {position.ply}: {pieces} pieces",
        shapes=shapes,
    )


def _piece(position: Any, sq: int, piece: int) -> Shape:
    x, y = corner(sq)
    cx, cy = x + S / 2, y + S / 2
    owner = OWNER[piece]
    name = square_name(sq)
    title = f"{PIECE_NAMES[piece]} on {name}"
    if IS_CHARIOT[piece]:
        children = [rect(x + 11, y + 11, S - 22, S - 22, "body", rx=6)]
        if position.is_stunned(owner):
            children.append(circle(cx, cy, S * 0.47, "stun"))
            title += " (stunned)"
    else:
        children = [circle(cx, cy, S * 0.3, "body")]
    children.append(text(cx, cy + 7, CHARS[piece], "kind"))
    kind = "chariot" if IS_CHARIOT[piece] else "dog"
    return group(f"piece {kind} side-{COLOURS[owner]}", children, title, square=name)

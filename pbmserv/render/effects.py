"""What a move did that its text does not say, in words for the board mail: what it captured
(a Polis dog, a Ploy piece, the marbles of a Pylon placement and where the capturer's marbles
went), the players it knocked out (a Ploy commander captured, a partner absorbed).

The board service asks this while it plays the move, when the position before it is still at
hand; the note then travels with the board mail of that move like "bob has swapped sides.".
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from pbmserv.games.base import Capture, SeatInfo

WIDTH = 76


def move_notes(
    ply: int,
    text: str,
    seat: int,
    mover: str,
    users: Sequence[str],
    before: Sequence[SeatInfo],
    after: Sequence[SeatInfo],
    capture: Capture | None,
) -> list[str]:
    """Notes on move ``ply`` (``text``, made by ``mover`` for ``seat``; ``users``: the userid
    of each seat): what it captured (``capture``, asked of the position before it), and every
    seat in play ``before`` it and out ``after`` it."""
    move = f"Move {ply} ({text}, {mover})"
    notes = []
    if capture is not None and capture.taken:
        taken = " and ".join(
            f"{users[owner]}'s {before[owner].label} {_pieces(capture.pieces, points)} "
            f"at {', '.join(points)}"
            for owner, points in capture.taken.items()
        )
        if capture.added:
            taken += (
                f": {before[seat].label} {_pieces(capture.pieces, capture.added)} added at "
                + ", ".join(capture.added)
            )
        notes.append(f"{move} captures {taken}.")
    for other, (was, now) in enumerate(zip(before, after, strict=True)):
        if was.in_play and not now.in_play:
            why = f": {now.note}" if now.note else ""
            notes.append(f"{move} knocks out {now.label} ({users[other]}){why}.")
    return [textwrap.fill(note, WIDTH) for note in notes]


def _pieces(name: str, points: Sequence[str]) -> str:
    return name if len(points) == 1 else f"{name}s"

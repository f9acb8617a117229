"""What a move did that its text does not say, in words for the board mail: the marbles a Pylon
placement captured and where the capturer's marbles went, the players a move knocked out (a
Ploy commander captured, a partner absorbed).

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
    if capture is not None and capture.added:
        taken = " and ".join(
            f"{users[owner]}'s {before[owner].label} {_marbles(points)} at {', '.join(points)}"
            for owner, points in capture.taken.items()
        )
        added = (
            f"{before[seat].label} {_marbles(capture.added)} added at {', '.join(capture.added)}"
        )
        notes.append(f"{move} captures {taken}: {added}.")
    for other, (was, now) in enumerate(zip(before, after, strict=True)):
        if was.in_play and not now.in_play:
            why = f": {now.note}" if now.note else ""
            notes.append(f"{move} knocks out {now.label} ({users[other]}){why}.")
    return [textwrap.fill(note, WIDTH) for note in notes]


def _marbles(points: Sequence[str]) -> str:
    return "marble" if len(points) == 1 else "marbles"

"""Plotto for the robots: key, ordering and an evaluation by threats of a line.

A player wins with a line of four or more pieces whose two end pieces carry his number (with
``-tournament``: his pair of numbers).  Everything turns on *threats*: a playable cell where one
piece of the right number would complete such a line.

Evaluation (integers), from one seat's point of view:

* the side to move with a threat of its own wins next move (``NEAR_WIN``, a little below a
  proven win so that real wins are still preferred);
* an opponent with two threats or more usually cannot be stopped by one placement
  (``DOUBLE``);
* otherwise every threat counts ``THREAT`` for its owner.

The threat test is written here (not taken from the engine's internals): from the cell, walk
both ways along each of the three axes and see whether a run of four or more pieces would have
the seat's number(s) at both ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pbmserv.games.base import Move
from pbmserv.games.plotto import PlottoPosition, line_seats
from pbmserv.robots.search import WIN, Adapter

NEAR_WIN = WIN // 2
DOUBLE = 5_000
THREAT = 400
TEMPO = 20


def threats(pos: PlottoPosition) -> list[int]:
    """Per seat: the number of (cell, number) placements that would complete its line."""
    board = pos.board
    mask = pos.mask
    players = pos.num_seats
    tournament = bool(pos.params.get("tournament"))
    numbers = (1, 2, 3, 4) if tournament else tuple(range(1, players + 1))
    out = [0] * players
    for cell in pos.open:
        bits = mask.get(cell, 0)
        for n in numbers:
            if bits >> n & 1:
                continue
            for seat in line_seats(board, cell, n, players, tournament):
                out[seat] += 1
    return out


class PlottoAdapter(Adapter[PlottoPosition]):
    driver = "pvs"

    def key(self, pos: PlottoPosition) -> Any:
        return (frozenset(pos.board.items()), pos.turn)

    def moves(self, pos: PlottoPosition) -> Sequence[Move]:
        return pos.move_list()

    def team(self, pos: PlottoPosition, seat: int) -> Any:
        return seat

    def evaluate(self, pos: PlottoPosition, team: Any) -> int:
        count = threats(pos)
        live = [s for s in range(pos.num_seats) if s not in pos.resigned]
        mover = pos.turn
        if count[mover]:
            return NEAR_WIN if mover == team else -NEAR_WIN
        score = TEMPO if mover == team else -TEMPO
        for s in live:
            value = DOUBLE if count[s] >= 2 else THREAT * count[s]
            score += value if s == team else -value
        return score

    def hint(self, pos: PlottoPosition, move: Any) -> int:
        cell, number = divmod(move, 8)
        players = pos.num_seats
        tournament = bool(pos.params.get("tournament"))
        seats = line_seats(pos.board, cell, number, players, tournament)
        if pos.turn in seats:
            return 100
        if seats:
            return -10  # hands a line to someone else
        own = number - 1 == pos.turn if not tournament else (number - 1) % 2 == pos.turn
        return 2 if own else 0

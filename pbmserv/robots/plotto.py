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

The threat test is the engine's public :func:`~pbmserv.games.plotto.line_seats`: from the cell,
walk both ways along each of the three axes and see whether a run of four or more pieces would
have the seat's number(s) at both ends.

With three or four players the search is max-n (an opponent may complete another's line, which
a paranoid search would count as a coalition win), and each seat is scored on its own
(:meth:`PlottoAdapter.evaluate_seats`).  A seat's threats are blocked one cell per placement by
the seats that move before it, so they are all but a win (``DOUBLE``) when its threat cells
outnumber those seats, or when one of them cannot be blocked at all: every number allowed
there completes its line (a gap: ``1 2 _ 1``).
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


def threat_cells(pos: PlottoPosition) -> tuple[list[set[int]], list[set[int]]]:
    """Per seat: the playable cells where some number completes its line, and those where every
    number allowed there does (a piece placed there to block it would complete it)."""
    board, mask = pos.board, pos.mask
    players = pos.num_seats
    tournament = bool(pos.params.get("tournament"))
    some: list[set[int]] = [set() for _ in range(players)]
    every: list[set[int]] = [set() for _ in range(players)]
    for cell in pos.open:
        bits = mask.get(cell, 0)
        found = [
            line_seats(board, cell, n, players, tournament)
            for n in (1, 2, 3, 4)
            if not bits >> n & 1
        ]
        for seat in set().union(*found):
            some[seat].add(cell)
            if all(seat in seats for seats in found):
                every[seat].add(cell)
    return some, every


def live_seats(pos: PlottoPosition) -> list[int]:
    """The seats still playing, in turn order from the seat to move."""
    n = pos.num_seats
    order = [(pos.turn + k) % n for k in range(n)]
    return [s for s in order if s not in pos.resigned]


class PlottoAdapter(Adapter[PlottoPosition]):
    driver = "pvs"
    multiplayer = "maxn"

    def key(self, pos: PlottoPosition) -> Any:
        return (frozenset(pos.board.items()), pos.turn)

    def moves(self, pos: PlottoPosition) -> Sequence[Move]:
        return pos.move_list()

    def team(self, pos: PlottoPosition, seat: int) -> Any:
        return seat

    def evaluate(self, pos: PlottoPosition, team: Any) -> int:
        live = live_seats(pos)
        if len(live) > 2:
            return self.evaluate_seats(pos)[team]
        count = threats(pos)
        mover = pos.turn
        if count[mover]:
            return NEAR_WIN if mover == team else -NEAR_WIN
        score = TEMPO if mover == team else -TEMPO
        for s in live:
            value = DOUBLE if count[s] >= 2 else THREAT * count[s]
            score += value if s == team else -value
        return score

    def evaluate_seats(self, pos: PlottoPosition) -> list[int]:
        """Per seat: its threats' value minus everybody else's (three or four players)."""
        some, every = threat_cells(pos)
        mover = pos.turn
        if some[mover]:
            return [NEAR_WIN if s == mover else -NEAR_WIN for s in range(pos.num_seats)]
        value = [0] * pos.num_seats
        for before, seat in enumerate(live_seats(pos)):  # before: seats that can block first
            cells = len(some[seat])
            value[seat] = DOUBLE if every[seat] or cells > before else THREAT * cells
        value[mover] += TEMPO
        total = sum(value)
        return [2 * v - total for v in value]

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

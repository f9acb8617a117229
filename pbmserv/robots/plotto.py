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

With three or four players each seat is scored on its own
(:meth:`PlottoAdapter.evaluate_seats`): nobody is assumed to throw the game to somebody else,
as a paranoid search would (an opponent may complete another's line).  A seat's threats are
blocked one cell per placement by the seats that move before it, so they are all but a win
(``DOUBLE``) when its threat cells outnumber those seats, or when one of them cannot be blocked
at all: every number allowed there completes its line (a gap: ``1 2 _ 1``).  Lines still short
of a piece count too (:func:`prospects`): with two or three placements between a seat's turns,
a line whose last cell is not playable yet is opened by one seat and completed by its owner
before anyone can block it (``LATENT``), and a line short of two pieces is the start of one
(``OPEN``).

The search with three or four players is the probe
(:class:`pbmserv.robots.search.ProbeSearcher`), at every level: each of the robot's moves is
followed by the reply every other seat likes best by this evaluation, up to the robot's next
turn.  It costs about the robot's moves times the other seats' replies in nodes: ``easy`` probes
every move early in a game, ``normal`` on all but a crowded board, ``strong`` always, so the
levels play much alike.  A full-width search (max-n, to the depth a budget reaches) sees the
next seat's reply, and little of the seat after it opening a line for the one after that.
Issue 19, 400 games a cell, against the greedy player with three and with four players: max-n
won 75% and 40% at ``easy``, 71% and 51% at ``normal`` (and with these prospects only 57% and
30% in 60 games: the greedy player knows them too); the probe with these prospects 98% and
79-83% at every level.  Against the random player they all won alike (83-89% and 65-71%).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pbmserv.games.base import Move
from pbmserv.games.plotto import AXES, FULL, PlottoPosition, line_seats
from pbmserv.robots.search import WIN, Adapter

NEAR_WIN = WIN // 2
DOUBLE = 5_000
THREAT = 400
LATENT = 150  # a line one piece short whose cell is not playable yet (three or four players)
OPEN = 60  # a line two pieces short (three or four players)
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


def prospects(pos: PlottoPosition) -> tuple[list[int], list[int]]:
    """Per seat: the lines of four that need one more piece on a cell nobody can play yet
    (*latent*), and those that need two more (*open*), without the tournament's pairs of
    numbers (this serves three and four players).

    A latent line turns into a threat as soon as any seat plays next to its empty cell, so
    with three or four seats it is all but a threat: the seats in between open it, and its
    owner completes it (a threat, :func:`threat_cells`, is counted there instead).  A line is
    four cells in a row whose end pieces carry the seat's number (or are empty cells where that
    number may go) and whose middle pieces do not; an empty cell touching all four numbers can
    never be filled and spoils the line.
    """
    board, mask, playable = pos.board, pos.mask, pos.open
    players = pos.num_seats
    latent = [0] * players
    open_ = [0] * players
    starts = {(cell - k * axis, axis) for cell in board for axis in AXES for k in range(4)}
    for start, axis in starts:
        cells = (start, start + axis, start + 2 * axis, start + 3 * axis)
        numbers = [board.get(c) for c in cells]
        empty = [c for c, n in zip(cells, numbers, strict=True) if n is None]
        if not 0 < len(empty) < 3 or any(mask.get(c, 0) == FULL for c in empty):
            continue
        first, last = numbers[0], numbers[3]
        if first is not None and last is not None and first != last:
            continue
        end = first if first is not None else last
        for number in (end,) if end is not None else range(1, players + 1):
            if number > players or number in (numbers[1], numbers[2]):
                continue
            if any(numbers[i] is None and mask.get(cells[i], 0) >> number & 1 for i in (0, 3)):
                continue  # the number may not go on an empty end (it touches the same number)
            if len(empty) == 2:
                open_[number - 1] += 1
            elif empty[0] not in playable:
                latent[number - 1] += 1
    return latent, open_


def live_seats(pos: PlottoPosition) -> list[int]:
    """The seats still playing, in turn order from the seat to move."""
    n = pos.num_seats
    order = [(pos.turn + k) % n for k in range(n)]
    return [s for s in order if s not in pos.resigned]


class PlottoAdapter(Adapter[PlottoPosition]):
    draw_margin = 400  # a threat of an opponent's, not the tempo or a line in the making
    driver = "pvs"
    multiplayer = "probe"

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
        latent, open_ = prospects(pos)
        value = [0] * pos.num_seats
        for before, seat in enumerate(live_seats(pos)):  # before: seats that can block first
            cells = len(some[seat])
            value[seat] = DOUBLE if every[seat] or cells > before else THREAT * cells
            value[seat] += LATENT * latent[seat] + OPEN * open_[seat]
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

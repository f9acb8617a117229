"""Pylon for the robots: key, ordering and an evaluation by marbles on the board.

The game ends when nobody can place and the most marbles (buried ones included) wins, so the
count of marbles is the score itself.  Evaluation (100 = one marble), from one team's view:

* marbles: mine minus the strongest opponent's (with three or four players the paranoid
  search would otherwise fear the sum of all opponents);
* groups in danger: a group with a single freedom on one of its levels can be captured by one
  placement there (and the captor then fills the points resting on it), so its marbles count
  ``DANGER`` against its owner when an opponent is to move, and less (``DANGER_MOVER``, it can
  still defend) when the owner is to move;
* the side to move gets half a marble (it places the next one).

Captures are where marbles change hands in bulk (the captor fills every point resting on the
captured group), so the move ordering tries points in contact with enemy marbles and on higher
levels first; a capture shows up in the search as a jump in the count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pbmserv.games.base import PASS, Move
from pbmserv.games.pylon import EMPTY, PylonPosition
from pbmserv.robots.search import Adapter

MARBLE = 100
TEMPO = 50
DANGER = 60
DANGER_MOVER = 15


def marbles_in_danger(pos: PylonPosition) -> list[int]:
    """Per seat: marbles in groups with a single freedom on some level of the group."""
    board, geo, valid = pos.board, pos.geo, pos.valid
    level, nbrs = geo.level, geo.nbrs
    out = [0] * pos.num_seats
    seen: set[int] = set()
    for p, owner in enumerate(board):
        if owner == EMPTY or p in seen:
            continue
        group = pos.group(p)
        seen |= group
        freedoms: dict[int, set[int]] = {}
        for m in group:
            lv = level[m]
            free = freedoms.setdefault(lv, set())
            for q in nbrs[m]:
                if q in valid:
                    free.add(q)
        if any(len(free) == 1 for free in freedoms.values()):
            out[owner] += len(group)
    return out


class PylonAdapter(Adapter[PylonPosition]):
    driver = "pvs"

    def key(self, pos: PylonPosition) -> Any:
        return (tuple(pos.board), pos.turn)

    def moves(self, pos: PylonPosition) -> Sequence[Move]:
        return pos.move_list()

    def team(self, pos: PylonPosition, seat: int) -> Any:
        return seat

    def evaluate(self, pos: PylonPosition, team: Any) -> int:
        counts = [0] * pos.num_seats
        for c in pos.board:
            if c != EMPTY:
                counts[c] += 1
        danger = marbles_in_danger(pos)
        mover = pos.turn
        value = [
            counts[s] * MARBLE
            - danger[s] * (DANGER_MOVER if s == mover else DANGER)
            + (TEMPO if s == mover else 0)
            for s in range(pos.num_seats)
        ]
        live = [s for s in range(pos.num_seats) if s not in pos.resigned]
        others = max((value[s] for s in live if s != team), default=0)
        return value[team] - others

    def hint(self, pos: PylonPosition, move: Any) -> int:
        if move == PASS:
            return 0
        geo = pos.geo
        board = pos.board
        seat = pos.turn
        contact = sum(1 for q in geo.nbrs[move] if board[q] not in (EMPTY, seat))
        return 2 * geo.level[move] + contact

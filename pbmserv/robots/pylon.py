"""Pylon for the robots: key, ordering and an evaluation by marbles on the board.

The game ends when nobody can place and the most marbles (buried ones included) wins, so the
count of marbles is the score itself.  Evaluation (100 = one marble), from one team's view:

* marbles: mine minus the strongest opponent's (with three or four players the paranoid
  search would otherwise fear the sum of all opponents);
* the side to move gets half a marble (it places the next one).

Captures are where marbles change hands in bulk (the captor fills every point resting on the
captured group), so the move ordering tries points in contact with enemy marbles and on higher
levels first; a capture shows up in the search as a jump in the count.
"""

from __future__ import annotations

from typing import Any

from pbmserv.games.base import PASS, Move, Position
from pbmserv.games.pylon import EMPTY
from pbmserv.robots.search import Adapter

MARBLE = 100
TEMPO = 50


class PylonAdapter(Adapter):
    driver = "pvs"

    def key(self, pos: Position) -> Any:
        return (tuple(pos.board), pos.turn)  # type: ignore[attr-defined]

    def moves(self, pos: Position) -> list[Move]:
        return list(pos._generate())

    def team(self, pos: Position, seat: int) -> Any:
        return seat

    def evaluate(self, pos: Position, team: Any) -> int:
        counts = [0] * pos.num_seats
        for c in pos.board:  # type: ignore[attr-defined]
            if c != EMPTY:
                counts[c] += 1
        live = [s for s in range(pos.num_seats) if s not in pos.resigned]
        mine = counts[team] * MARBLE
        others = max((counts[s] for s in live if s != team), default=0) * MARBLE
        score = mine - others
        if pos.turn is not None:  # type: ignore[attr-defined]
            score += TEMPO if pos.turn == team else -TEMPO  # type: ignore[attr-defined]
        return score

    def hint(self, pos: Position, move: Move) -> int:
        if move == PASS:
            return 0
        geo = pos.geo  # type: ignore[attr-defined]
        board = pos.board  # type: ignore[attr-defined]
        seat = pos.turn  # type: ignore[attr-defined]
        contact = sum(1 for q in geo.nbrs[move] if board[q] not in (EMPTY, seat))
        return 2 * geo.level[move] + contact

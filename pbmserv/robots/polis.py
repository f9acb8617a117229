"""Polis for the robots: key, ordering and an evaluation built on the race of the chariots.

The game is won by the chariot that reaches its goal rank, and a side with no legal move
loses.  Evaluation (integers), from one side's point of view, mine minus the opponent's:

* the chariot's race: ranks still to go, valued progressively (``RACE[d]``: the last ranks are
  worth far more than the first, since a chariot two ranks from home is a real threat);
* dogs: each one is a blocker, a hopper and a capturer (``DOG``); dogs ahead of the enemy
  chariot (between it and its goal) count extra, as they can block or stun it;
* a stunned chariot cannot move (``STUNNED``);
* the side to move gets a tempo bonus, larger when its chariot is close to home.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pbmserv.games.base import Move
from pbmserv.games.polis import (
    BLUE_CHARIOT,
    BLUE_DOG,
    GOAL_RANK,
    RED_CHARIOT,
    RED_DOG,
    PolisPosition,
)
from pbmserv.robots.search import Adapter

RACE = (900, 420, 230, 130, 70, 35, 15, 0)  # by ranks still to go (0 is a win already)
DOG = 100
GUARD = 25  # a dog on the enemy chariot's way home
STUNNED = 120
TEMPO = 20


class PolisAdapter(Adapter[PolisPosition]):
    draw_margin = 100  # a dog down, not the tempo (20 and more near home)
    driver = "mtdf"

    def key(self, pos: PolisPosition) -> Any:
        return pos.identity()

    def moves(self, pos: PolisPosition) -> Sequence[Move]:
        return pos.move_list()

    def team(self, pos: PolisPosition, seat: int) -> Any:
        return seat

    def evaluate(self, pos: PolisPosition, team: Any) -> int:
        board = pos.board
        chariots = pos.chariots
        stunned = pos.stunned
        score = [0, 0]
        rank = [-1, -1]
        for seat in (0, 1):
            sq = chariots[seat]
            if sq >= 0:
                rank[seat] = sq >> 3
                to_go = abs(GOAL_RANK[seat] - (sq >> 3))
                score[seat] += RACE[to_go] - (STUNNED if stunned[seat] else 0)
        for sq, p in enumerate(board):
            if p == BLUE_DOG:
                score[0] += DOG + (GUARD if rank[1] >= 0 and sq >> 3 > rank[1] else 0)
            elif p == RED_DOG:
                score[1] += DOG + (GUARD if rank[0] >= 0 and sq >> 3 < rank[0] else 0)
        mover = pos.turn
        if rank[mover] >= 0:
            score[mover] += TEMPO + RACE[abs(GOAL_RANK[mover] - rank[mover])] // 4
        return score[team] - score[1 - team]

    def hint(self, pos: PolisPosition, move: Any) -> int:
        frm, to = move >> 6, move & 63
        piece = pos.board[frm]
        forward = (to >> 3) - (frm >> 3)
        if piece == BLUE_CHARIOT:
            return 4 if forward < 0 else 1
        if piece == RED_CHARIOT:
            return 4 if forward > 0 else 1
        return 2 if (forward < 0) == (piece == BLUE_DOG) and forward else 0

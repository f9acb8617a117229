"""Ploy for the robots: a cheap key, capture ordering, quiescence and a material evaluation.

Evaluation (integers, 100 = a light probe), from one team's point of view:

* material: every piece counts for the team of the seat that moves it (``ctrl``: a take-over in
  four-player Ploy hands an army to the captor).  Values follow the pieces' reach and flags:
  lances (3 points, 3 flags) are the strong pieces, probes (2 points, 2 flags) middling, the
  shield (1 point, 1 flag) the least; the commander is not counted, since losing it ends the
  game (the search sees that as a loss).  Under the strict rule a player with no piece but the
  commander is out, so the last few pieces are worth extra (``SCARCITY``);
* centralisation: a piece on the middle of the board reaches more points (a few units per step);
* flags: each flag beyond one is mobility (a few units per flag);
* the side to move gets a small tempo bonus.

With three or four seats (paranoid search) the opponents' material is taken as the strongest of
them, not their sum, so the robot does not believe it must beat three armies at once.
"""

from __future__ import annotations

from typing import Any

from pbmserv.games.base import PASS, Move, Position
from pbmserv.games.ploy import COMMANDER, SHIELD
from pbmserv.robots.search import Adapter

VALUES = (0, 520, 480, 440, 300, 280, 240, 160)  # by kind: C, HL, ML, LL, hp, mp, lp, S
CAPTURE_VALUES = (10_000, 520, 480, 440, 300, 280, 240, 160)
CENTRE = [8 - (abs(sq % 9 - 4) + abs(sq // 9 - 4)) for sq in range(81)]  # 0 (corner) .. 8
POPCOUNT = [bin(m).count("1") for m in range(256)]
SCARCITY = 150  # per piece under three, under the strict elimination rule
TEMPO = 15


class PloyAdapter(Adapter):
    driver = "mtdf"
    quiescence = 4

    def key(self, pos: Position) -> Any:
        return (tuple(pos.board), pos.turn, tuple(pos.ctrl), tuple(pos.status))  # type: ignore[attr-defined]

    def moves(self, pos: Position) -> list[Move]:
        return pos.move_list() or [PASS]  # type: ignore[attr-defined]

    def play(self, pos: Position, move: Move) -> Position:
        child = pos.copy()
        child.play(move)
        return child

    def team(self, pos: Position, seat: int) -> Any:
        return seat % 2 if pos.params.get("partnership") else seat

    def evaluate(self, pos: Position, team: Any) -> int:
        ctrl = pos.ctrl  # type: ignore[attr-defined]
        partnership = bool(pos.params.get("partnership"))
        per_team: dict[Any, int] = {}
        pieces: dict[Any, int] = {}
        for sq, p in enumerate(pos.board):  # type: ignore[attr-defined]
            if not p:
                continue
            seat = ctrl[p >> 12]
            t = seat % 2 if partnership else seat
            kind = p >> 8 & 15
            value = VALUES[kind] + 4 * CENTRE[sq] + 6 * POPCOUNT[p & 255]
            per_team[t] = per_team.get(t, 0) + value
            if kind != COMMANDER:
                pieces[t] = pieces.get(t, 0) + 1
        if not pos.params.get("relaxed"):
            for t, n in pieces.items():
                if n < 3:
                    per_team[t] -= SCARCITY * (3 - n)
        mine = per_team.pop(team, 0)
        others = max(per_team.values(), default=0)
        score = mine - others
        to_move = pos.to_move
        if to_move is not None:
            mover = self.team(pos, pos.controller(to_move))
            score += TEMPO if mover == team else -TEMPO
        return score

    def hint(self, pos: Position, move: Move) -> int:
        if move == PASS:
            return 0
        frm, to = move & 127, move >> 7 & 127
        board = pos.board  # type: ignore[attr-defined]
        q = board[to] if to != frm else 0
        if q:
            return CAPTURE_VALUES[q >> 8 & 15] * 4 - VALUES[board[frm] >> 8 & 15] // 8
        if to != frm:
            return 1 + (board[frm] >> 8 & 15 == SHIELD)
        return 0

    def noisy(self, pos: Position, move: Move) -> bool:
        if move == PASS:
            return False
        frm, to = move & 127, move >> 7 & 127
        return to != frm and bool(pos.board[to])  # type: ignore[attr-defined]

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

With four seats (paranoid search) the opponents' material is taken as the strongest of them
plus a quarter of the others (``RIVALS``), not their sum, so the robot does not believe it must
beat three armies at once, yet still sees weakening any of them as progress.  A paranoid search
within a small budget sees only the next seat's answer, so commanders are judged statically:
an enemy piece that could take a commander counts ``EXPOSED`` against its owner, and when that
enemy's seat acts before the owner's next turn the commander is all but lost (``EN_PRISE``, most
of an army, since the captor takes the army over).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pbmserv.games.base import PASS, Move
from pbmserv.games.ploy import OUT, ROT, SHIELD, PloyPosition
from pbmserv.games.ploy.tables import RANGES, RAYS
from pbmserv.robots.search import Adapter

VALUES = (0, 520, 480, 440, 300, 280, 240, 160)  # by kind: C, HL, ML, LL, hp, mp, lp, S
CAPTURE_VALUES = (10_000, 520, 480, 440, 300, 280, 240, 160)
CENTRE = [8 - (abs(sq % 9 - 4) + abs(sq // 9 - 4)) for sq in range(81)]  # 0 (corner) .. 8
POPCOUNT = [bin(m).count("1") for m in range(256)]
SCARCITY = 150  # per piece under three, under the strict elimination rule
TEMPO = 15
RIVALS = 4  # with more than two seats: the weaker opponents' sum counts 1/RIVALS
EXPOSED = 250  # per enemy piece that could take the mover's commander next (four players)
EN_PRISE = 3500  # a commander that an enemy seat acting before its owner's next turn could take


def _piece_value(sq: int, p: int) -> int:
    return VALUES[p >> 8 & 15] + 4 * CENTRE[sq] + 6 * POPCOUNT[p & 255]


VALUE = [[_piece_value(sq, p) if p & 255 else 0 for p in range(2048)] for sq in range(81)]
"""``VALUE[sq][p & 0x7FF]``: what a piece (kind and flags, any army) is worth on ``sq``."""


def _exposed(board: list[int], ctrl: list[int], team_of: list[Any]) -> dict[Any, list[int]]:
    """Per team: the seats of the enemy pieces that could capture one of its commanders by one
    motion (one entry per such piece).

    With four players the search sees only the next seat's answer within its horizon, so the
    danger from the seats after it is judged statically here.
    """
    out: dict[Any, list[int]] = {}
    for sq, p in enumerate(board):
        if not p or p & 0xF00:  # commanders only (kind 0)
            continue
        own = team_of[p >> 12]
        for d in range(8):
            back = 1 << ((d + 4) & 7)
            for dist, t in enumerate(RAYS[sq][d], 1):
                q = board[t]
                if q:
                    if team_of[q >> 12] != own and q & back and dist <= RANGES[q >> 8 & 15]:
                        out.setdefault(own, []).append(ctrl[q >> 12])
                    break
                if dist >= 3:
                    break
    return out


def _turns_before(pos: PloyPosition, team_of_seat: Callable[[int], Any]) -> dict[Any, set[int]]:
    """Per team: the seats that act from now until that team's next turn (the mover's team: none)."""
    n = pos.num_seats
    to_move = pos.to_move
    out: dict[Any, set[int]] = {}
    if to_move is None:
        return out
    acted: set[int] = set()
    for k in range(n):
        seat = (to_move + k) % n
        if pos.status[seat] == OUT:
            continue
        actor = pos.controller(seat)
        out.setdefault(team_of_seat(actor), set(acted))
        acted.add(actor)
    return out


def _army_sums(board: list[int]) -> tuple[list[int], list[int]]:
    """Per army: the sum of its pieces' values, and its pieces other than the commander."""
    values, ships = [0, 0, 0, 0], [0, 0, 0, 0]
    for sq, p in enumerate(board):
        if p:
            army = p >> 12
            values[army] += VALUE[sq][p & 0x7FF]
            if p & 0xF00:
                ships[army] += 1
    return values, ships


class PloyAdapter(Adapter[PloyPosition]):
    """The search's view of Ploy.  The evaluation is kept incrementally: each child position
    carries per-army sums (in its ``analysis`` slot) updated from its parent's by the move alone."""

    draw_margin = 160  # a shield: a piece down, not the tempo (15)

    driver = "mtdf"
    quiescence = 4

    def key(self, pos: PloyPosition) -> Any:
        return pos.identity()

    def moves(self, pos: PloyPosition) -> Sequence[Move]:
        return pos.move_list() or [PASS]

    def _sums(self, pos: PloyPosition) -> tuple[list[int], list[int]]:
        sums: tuple[list[int], list[int]] | None = pos.analysis
        if sums is None:
            sums = _army_sums(pos.board)
            pos.analysis = sums
        return sums

    def play(self, pos: PloyPosition, move: Any) -> PloyPosition:
        values, ships = self._sums(pos)
        board = pos.board
        q = 0
        if move is not PASS:
            frm, to, k = move & 127, move >> 7 & 127, move >> 14
            p = board[frm]
            new = p & ~255 | ROT[p & 255][k] if k else p
            values = values[:]
            values[p >> 12] += VALUE[to][new & 0x7FF] - VALUE[frm][p & 0x7FF]
            q = board[to] if to != frm else 0
            if q:
                ships = ships[:]
                values[q >> 12] -= VALUE[to][q & 0x7FF]
                if q & 0xF00:
                    ships[q >> 12] -= 1
        child = pos.copy()
        child.play(move)
        # -classic may take a bare commander off the board too: then count again
        removed = q and child.board.count(0) != board.count(0) + 1
        child.analysis = None if removed else (values, ships)
        return child

    def team(self, pos: PloyPosition, seat: int) -> Any:
        return seat % 2 if pos.params.get("partnership") else seat

    def evaluate(self, pos: PloyPosition, team: Any) -> int:
        values, ships = self._sums(pos)
        strict = not pos.params.get("relaxed")
        to_move = pos.to_move
        tempo = 0 if to_move is None else (TEMPO if pos.controller(to_move) == team else -TEMPO)
        if pos.num_seats == 2:  # the fast path: army = seat = team
            score = values[team] - values[1 - team] + tempo
            if strict:
                score -= SCARCITY * (max(0, 3 - ships[team]) - max(0, 3 - ships[1 - team]))
            return score
        ctrl = pos.ctrl
        partnership = bool(pos.params.get("partnership"))
        per_team: dict[Any, int] = {}
        pieces: dict[Any, int] = {}
        for army, seat in enumerate(ctrl):
            t = seat % 2 if partnership else seat
            per_team[t] = per_team.get(t, 0) + values[army]
            pieces[t] = pieces.get(t, 0) + ships[army]
        if strict:
            for t, n in pieces.items():
                if n < 3:
                    per_team[t] -= SCARCITY * (3 - n)
        team_of = [seat % 2 if partnership else seat for seat in ctrl]
        mover = None if to_move is None else self.team(pos, pos.controller(to_move))
        before = _turns_before(pos, lambda seat: self.team(pos, seat))
        for t, attackers in _exposed(pos.board, ctrl, team_of).items():
            # an attacker whose seat acts before the owner's next turn all but takes the commander
            early = before.get(t, set())
            lost = any(a in early for a in attackers)
            loss = EXPOSED * (len(attackers) - lost) + (EN_PRISE if lost else 0)
            per_team[t] = per_team.get(t, 0) - loss
        mine = per_team.pop(team, 0)
        rest = per_team.values()
        # the strongest opponent, and a little of the others: weakening any of them is progress
        strongest = max(rest, default=0)
        others = strongest + (sum(rest) - strongest) // RIVALS
        if mover is not None:
            tempo = TEMPO if mover == team else -TEMPO
        return mine - others + tempo

    def hint(self, pos: PloyPosition, move: Any) -> int:
        if move is PASS:
            return 0
        frm, to = move & 127, move >> 7 & 127
        board = pos.board
        q = board[to] if to != frm else 0
        if q:
            return CAPTURE_VALUES[q >> 8 & 15] * 4 - VALUES[board[frm] >> 8 & 15] // 8
        if to != frm:
            return 1 + (board[frm] >> 8 & 15 == SHIELD)
        return 0

    def noisy(self, pos: PloyPosition, move: Any) -> bool:
        if move is PASS:
            return False
        frm, to = move & 127, move >> 7 & 127
        return to != frm and bool(pos.board[to])

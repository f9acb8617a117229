"""Polis: dogs and chariots on an 8x8 board; pieces hop over the piece that moved.

Geometry.  A square is one int ``rank_index * 8 + file_index`` (a1 = 0, h1 = 7, a8 = 56, h8 = 63).
Blue (seat 0) starts on ranks 7-8 with its chariot on a8, moves first and aims for rank 1; red
(seat 1) starts on ranks 1-2 with its chariot on h1 and aims for rank 8.  A move is the int
``from_square << 6 | to_square``.  The board is a list of 64 small ints (see ``CHARS``).

One move, in order (DECISIONS.md, Polis):

1. The piece steps to an empty neighbouring square (8 directions).  A stunned chariot cannot move.
2. Hops, all at once: the neighbour at ``landing + d`` jumps over the moved piece to
   ``landing - d`` if that square is on the board and was empty before any hop (the square just
   left counts as empty), the neighbour is not a stunned chariot (stun as at the end of the
   previous move), and, for an enemy of the mover, ``landing + 2d`` does not hold a piece of the
   neighbour's own colour (it is "defended").
3. Stun is recomputed.  A chariot is stunned when on some axis both neighbours are enemy pieces,
   neither a stunned chariot.
4. Captures, all at once: a dog of either colour with enemy pieces (not stunned chariots) on both
   sides along one axis is removed.  Chariots are never captured.
5. Stun is recomputed again.
6. The move was illegal if the moved dog was captured or the moved chariot ends stunned.
7. A chariot on its goal rank wins for its owner (also one hopped there).

Rulings (also in templates/help/polis.txt):

* Two chariots stunning each other.  Only the enemy chariot can be a chariot flanker, so each
  chariot's stun depends only on whether the other one is stunned.  The stun set is a fixed
  point of the rule; the only case with two fixed points is when each chariot is stunned only
  thanks to the other (and neither by dogs alone).  Then the chariot of the player who did NOT
  just move is stunned and the mover's chariot is free ("the mover strikes first").
* Both chariots on their goal ranks after one move: the mover wins.
* A player with no legal move loses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Self

from pbmserv.games.base import (
    Capture,
    Game,
    IllegalMove,
    Move,
    Outcome,
    Position,
    SeatInfo,
    UnreadableMove,
)
from pbmserv.games.endless import DrawWatch

FILES = "abcdefgh"
EMPTY, BLUE_DOG, BLUE_CHARIOT, RED_DOG, RED_CHARIOT = range(5)
CHARS = ".bBrR"  # the character of each piece code, used in diagrams and the saved state
OWNER = (-1, 0, 0, 1, 1)
IS_CHARIOT = (False, False, True, False, True)
IS_DOG = (False, True, False, True, False)
LABELS = ("blue", "red")
GOAL_RANK = (0, 7)  # rank index each seat's chariot must reach (rank 1 for blue, rank 8 for red)
PIECE_NAMES = ("empty", "blue dog", "blue chariot", "red dog", "red chariot")

_DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))


def square_name(sq: int) -> str:
    """``0`` -> ``"a1"``."""
    return FILES[sq & 7] + str((sq >> 3) + 1)


def square_of(name: str) -> int:
    """``"a1"`` -> ``0``."""
    return (int(name[1:]) - 1) * 8 + FILES.index(name[0])


def _at(f: int, r: int) -> int:
    return r * 8 + f if 0 <= f < 8 and 0 <= r < 8 else -1


def _tables() -> tuple[
    tuple[tuple[int, ...], ...],
    tuple[tuple[tuple[int, int, int], ...], ...],
    tuple[tuple[tuple[int, int], ...], ...],
]:
    steps, hops, axes = [], [], []
    for sq in range(64):
        f, r = sq & 7, sq >> 3
        steps.append(tuple(s for df, dr in _DIRECTIONS if (s := _at(f + df, r + dr)) >= 0))
        hop = []
        for df, dr in _DIRECTIONS:
            n, t = _at(f + df, r + dr), _at(f - df, r - dr)
            if n >= 0 and t >= 0:
                hop.append((n, t, _at(f + 2 * df, r + 2 * dr)))
        hops.append(tuple(hop))
        axis = []
        for df, dr in _DIRECTIONS[::2]:
            a, b = _at(f + df, r + dr), _at(f - df, r - dr)
            if a >= 0 and b >= 0:
                axis.append((a, b))
        axes.append(tuple(axis))
    return tuple(steps), tuple(hops), tuple(axes)


STEPS, HOPS, AXES = _tables()
"""Per square: its neighbours; (neighbour, mirror square, square beyond the neighbour or -1) for
every direction whose mirror square is on the board; the (a, b) neighbour pairs of each axis."""

_MOVE_RE = re.compile(r"([a-z])([0-9]+)-?([a-z])([0-9]+)")

INITIAL = (
    "Bbbbbbbb",
    "bbbbbbbb",
    "........",
    "........",
    "........",
    "........",
    "rrrrrrrr",
    "rrrrrrrR",
)


# --------------------------------------------------------------------------- rules kernels


def _hop(
    board: list[int], to: int, mover: int, stunned: Sequence[bool], chariots: list[int]
) -> None:
    """Resolve the hops around ``to`` in place: all are decided on the board before any hop
    (a hop's target may be the source of the opposite hop), then carried out."""
    hops = []
    for n, t, beyond in HOPS[to]:
        p = board[n]
        if not p or board[t]:
            continue
        owner = OWNER[p]
        if IS_CHARIOT[p] and stunned[owner]:
            continue
        if owner != mover and beyond >= 0 and OWNER[board[beyond]] == owner:
            continue
        hops.append((n, t, p))
    for n, _t, _p in hops:
        board[n] = EMPTY
    for _n, t, p in hops:
        board[t] = p
        if IS_CHARIOT[p]:
            chariots[OWNER[p]] = t


def _stun(board: Sequence[int], chariots: Sequence[int], mover: int) -> tuple[bool, bool]:
    """The stun of both chariots (see the module docstring for the mutual-stun ruling)."""
    alone = [False, False]  # stunned by flankers that are dogs
    withc = [False, False]  # stunned if the enemy chariot counts as a flanker
    for seat in (0, 1):
        sq = chariots[seat]
        if sq < 0:
            continue
        enemy = 1 - seat
        for a, b in AXES[sq]:
            pa, pb = board[a], board[b]
            if OWNER[pa] == enemy and OWNER[pb] == enemy:
                if IS_CHARIOT[pa] or IS_CHARIOT[pb]:
                    withc[seat] = True
                else:
                    alone[seat] = True
                    break
    s = [alone[0], alone[1]]
    if not s[0] and not s[1]:
        if withc[0] and withc[1]:
            s[1 - mover] = True  # mutual stun: the chariot of the player who did not move
        else:
            s[0], s[1] = withc[0], withc[1]
    # a chariot stunned by dogs alone stays stunned; the other is stunned only by dogs then
    return s[0], s[1]


def _flanked(board: Sequence[int], sq: int, stunned: Sequence[bool]) -> bool:
    """Whether the dog on ``sq`` has enemy pieces (not stunned chariots) on both sides of an axis."""
    enemy = 1 - OWNER[board[sq]]
    for a, b in AXES[sq]:
        pa, pb = board[a], board[b]
        if (
            OWNER[pa] == enemy
            and OWNER[pb] == enemy
            and not (IS_CHARIOT[pa] and stunned[enemy])
            and not (IS_CHARIOT[pb] and stunned[enemy])
        ):
            return True
    return False


def _captures(board: Sequence[int], stunned: Sequence[bool]) -> list[int]:
    """Squares of every dog that is captured in this position (captures are simultaneous)."""
    return [sq for sq in range(64) if IS_DOG[board[sq]] and _flanked(board, sq, stunned)]


def _chariots(board: Sequence[int]) -> list[int]:
    out = [-1, -1]
    for sq, p in enumerate(board):
        if IS_CHARIOT[p]:
            out[OWNER[p]] = sq
    return out


# --------------------------------------------------------------------------- position


class PolisPosition(Position):
    """A Polis position: the board, whose turn, the chariots' stun, and the result if over."""

    def __init__(self, players: int, params: Mapping[str, bool | int]) -> None:
        super().__init__(players, params)
        self._setup(INITIAL, 0)

    def _setup(self, rows: Sequence[str], turn: int) -> None:
        board: list[int] = []
        for row in reversed(rows):
            board.extend(CHARS.index(c) for c in row)
        self.board = board
        self.chariots: list[int] = _chariots(board)
        self.turn = turn
        self.stunned: tuple[bool, bool] = _stun(board, self.chariots, 1 - turn)
        self.result: tuple[tuple[int, ...], str] | None = None
        self.last = ""
        self.last_captured: list[int] = []
        self._stuck: bool | None = None
        self._check_goal(1 - turn)
        self.draws = DrawWatch(self.position_key())

    @classmethod
    def from_diagram(
        cls,
        rows: Sequence[str] | str,
        to_move: int = 0,
        params: Mapping[str, bool | int] | None = None,
    ) -> PolisPosition:
        """A position from 8 rows, rank 8 first, 8 characters each, files a..h.

        Characters: ``.`` empty, ``b``/``B`` blue dog/chariot, ``r``/``R`` red dog/chariot
        (blanks are ignored; a multi-line string is split into rows).  The public way to set up
        arbitrary positions for tests and analysis.  At most one chariot per side (none is
        allowed, for small rule examples).  Stun is computed from the position as if the player
        not to move had just moved; a chariot already on its goal rank ends the game.
        """
        if isinstance(rows, str):
            rows = [line for line in rows.splitlines() if line.strip()]
        cleaned = ["".join(row.split()) for row in rows]
        if len(cleaned) != 8 or any(len(r) != 8 for r in cleaned):
            raise ValueError("a Polis diagram has 8 rows of 8 squares")
        if any(c not in CHARS for r in cleaned for c in r):
            raise ValueError(f"diagram characters are {CHARS}")
        text = "".join(cleaned)
        if text.count("B") > 1 or text.count("R") > 1:
            raise ValueError("at most one chariot per side")
        game = cls.game
        full = game.defaults()
        full.update(params or {})
        position = cls(2, full)
        position._setup(cleaned, to_move)
        return position

    # ----- contract hooks

    @property
    def to_move(self) -> int | None:
        return None if self.outcome() is not None else self.turn

    def seats(self) -> tuple[SeatInfo, ...]:
        out = []
        for seat in (0, 1):
            dogs = self.board.count(BLUE_DOG if seat == 0 else RED_DOG)
            goal = GOAL_RANK[seat] + 1
            note = (
                self.left([seat])
                if seat in self.resigned
                else f"{dogs} dog{'' if dogs == 1 else 's'}, chariot aims at rank {goal}"
            )
            out.append(
                SeatInfo(
                    LABELS[seat],
                    "b" if seat == 0 else "r",
                    in_play=seat not in self.resigned,
                    note=note,
                )
            )
        return tuple(out)

    def _moves(self) -> Iterator[int]:
        """Every legal move of ``self.turn``, ignoring whether the game is over."""
        seat = self.turn
        board = self.board
        chariot_stunned = self.stunned[seat]
        for frm in range(64):
            p = board[frm]
            if OWNER[p] != seat or (IS_CHARIOT[p] and chariot_stunned):
                continue
            for to in STEPS[frm]:
                if not board[to] and self._legal(frm, to):
                    yield frm << 6 | to

    def _legal(self, frm: int, to: int) -> bool:
        """Whether the step ``frm``-``to`` (onto an empty square) keeps the moved piece safe.

        Fast path for dogs: only the squares around ``to`` matter, so the hops are worked out
        in a small dict of changed squares; an enemy chariot among the flankers (whose stun
        would matter) falls back to the full resolution.
        """
        board = self.board
        p = board[frm]
        if not IS_DOG[p]:
            return self._legal_full(frm, to)
        mover = self.turn
        stunned = self.stunned
        hopped = []
        for n, t, beyond in HOPS[to]:
            if n == frm:
                continue
            q = board[n]
            if not q or (t != frm and board[t]):
                continue
            owner = OWNER[q]
            if IS_CHARIOT[q] and stunned[owner]:
                continue
            if owner != mover and beyond >= 0 and beyond != frm and OWNER[board[beyond]] == owner:
                continue
            hopped.append((n, t, q))
        changed = {frm: EMPTY}
        for n, _t, _q in hopped:
            changed[n] = EMPTY
        for _n, t, q in hopped:
            changed[t] = q
        enemy = 1 - mover
        for a, b in AXES[to]:
            pa = changed.get(a, board[a])
            pb = changed.get(b, board[b])
            if OWNER[pa] == enemy and OWNER[pb] == enemy:
                if IS_CHARIOT[pa] or IS_CHARIOT[pb]:
                    return self._legal_full(frm, to)
                return False
        return True

    def _legal_full(self, frm: int, to: int) -> bool:
        """The full resolution of the step (hops, stun, captures, stun) on a copy of the board."""
        board = self.board[:]
        chariots = self.chariots[:]
        mover = self.turn
        p = board[frm]
        board[frm] = EMPTY
        board[to] = p
        if IS_CHARIOT[p]:
            chariots[mover] = to
        _hop(board, to, mover, self.stunned, chariots)
        stunned = _stun(board, chariots, mover)
        if IS_DOG[p]:
            return not _flanked(board, to, stunned)
        captured = _captures(board, stunned)
        if captured:
            for sq in captured:
                board[sq] = EMPTY
            stunned = _stun(board, chariots, mover)
        return not stunned[mover]

    def move_list(self) -> list[int]:
        """Every legal move of the seat to move, as the engine's values (no swap; the robots'
        fast path around :meth:`legal_moves`, which checks first that the game goes on)."""
        return list(self._generate())

    def _generate(self) -> Iterator[int]:
        return self._moves()

    def _parse(self, text: str) -> int:
        m = _MOVE_RE.fullmatch(text)
        if m is None:
            raise UnreadableMove(
                f"'{text}' is not a Polis move: give the square of your piece and the square it "
                "steps to, e.g. c2-c3"
            )
        squares = []
        for f, r in ((m[1], m[2]), (m[3], m[4])):
            if f not in FILES or r not in "12345678" or len(r) != 1:
                raise UnreadableMove(f"{f}{r} is not a square: files are a..h, ranks 1..8")
            squares.append(square_of(f + r))
        frm, to = squares
        seat = self.turn
        name = f"{square_name(frm)}-{square_name(to)}"
        piece = self.board[frm]
        if OWNER[piece] != seat:
            there = f" (the {PIECE_NAMES[piece]} there is not yours)" if piece else ""
            raise IllegalMove(f"no piece of yours on {square_name(frm)}{there}")
        if frm == to:
            raise IllegalMove(f"{name}: a piece must move to another square")
        if to not in STEPS[frm]:
            raise IllegalMove(f"{name}: pieces move one step (to a neighbouring square)")
        if self.board[to]:
            raise IllegalMove(
                f"{square_name(to)} is occupied (by the {PIECE_NAMES[self.board[to]]})"
            )
        if IS_CHARIOT[piece] and self.stunned[seat]:
            raise IllegalMove(f"your chariot on {square_name(frm)} is stunned and cannot move")
        if not self._legal(frm, to):
            if IS_CHARIOT[piece]:
                raise IllegalMove(f"{name} is illegal: the moved chariot would end stunned")
            raise IllegalMove(f"{name} is illegal: the moved dog would be captured")
        return frm << 6 | to

    def _format(self, move: Any) -> str:
        return f"{square_name(move >> 6)}-{square_name(move & 63)}"

    def _apply(self, move: Any) -> None:
        frm, to = move >> 6, move & 63
        mover = self.turn
        board = self.board
        p = board[frm]
        self.last = self._format(move)
        board[frm] = EMPTY
        board[to] = p
        if IS_CHARIOT[p]:
            self.chariots[mover] = to
        _hop(board, to, mover, self.stunned, self.chariots)
        stunned = _stun(board, self.chariots, mover)
        captured = _captures(board, stunned)
        if captured:
            for sq in captured:
                board[sq] = EMPTY
            stunned = _stun(board, self.chariots, mover)
        self.stunned = stunned
        self.last_captured = captured
        self.turn = 1 - mover
        self._stuck = None
        self._check_goal(mover)
        if self.result is None:
            why = self.draws.record(self.position_key(), bool(captured), self.ply + 1)
            if why is not None:
                self.result = ((), why)

    def capture(self, move: Move) -> Capture | None:
        """The dogs the legal ``move`` captures, by owner (the mover's own among them when a hop
        leaves one flanked): resolved as :meth:`_apply` does, on a copy of the board."""
        if not isinstance(move, int):
            return None
        frm, to = move >> 6, move & 63
        board, chariots, mover = self.board[:], self.chariots[:], self.turn
        board[frm], board[to] = EMPTY, board[frm]
        if IS_CHARIOT[board[to]]:
            chariots[mover] = to
        _hop(board, to, mover, self.stunned, chariots)
        taken: dict[int, list[str]] = {}
        for sq in _captures(board, _stun(board, chariots, mover)):
            taken.setdefault(OWNER[board[sq]], []).append(square_name(sq))
        if not taken:
            return None
        return Capture({o: tuple(taken[o]) for o in sorted(taken)}, pieces="dog")

    def repetitions(self) -> int:
        return self.draws.current_repeats()

    def identity(self) -> tuple[tuple[int, ...], int, tuple[bool, bool]]:
        """The position as a tuple: equal for equal positions with the same player to move."""
        return (tuple(self.board), self.turn, self.stunned)

    def position_key(self) -> int:
        """An integer equal for equal positions with the same player to move (repetitions)."""
        return hash(self.identity())

    def draw_warnings(self) -> list[str]:
        return [] if self.outcome() is not None else self.draws.warnings()

    def _check_goal(self, mover: int) -> None:
        """Set the result if a chariot stands on its goal rank (the mover's first)."""
        for seat in (mover, 1 - mover):
            sq = self.chariots[seat]
            if sq >= 0 and sq >> 3 == GOAL_RANK[seat]:
                self.result = (
                    (seat,),
                    f"the {LABELS[seat]} chariot reached rank {GOAL_RANK[seat] + 1}",
                )
                return

    def _resign(self, seat: int) -> None:
        self.result = ((1 - seat,), f"{LABELS[seat]} {self.left([seat])}")

    def outcome(self) -> Outcome | None:
        if self.result is not None:
            return Outcome(*self.result)
        if self._stuck is None:
            self._stuck = next(self._moves(), None) is None
        if self._stuck:
            return Outcome((1 - self.turn,), f"{LABELS[self.turn]} has no legal move")
        return None

    def _state(self) -> Any:
        return {
            "b": "".join(CHARS[p] for p in self.board),
            "t": self.turn,
            "st": [int(self.stunned[0]), int(self.stunned[1])],
            "r": None if self.result is None else [list(self.result[0]), self.result[1]],
            "l": self.last,
            "c": self.last_captured,
            "dw": self.draws.state(),
        }

    def _load_state(self, state: Any) -> None:
        self.board = [CHARS.index(c) for c in state["b"]]
        self.chariots = _chariots(self.board)
        self.turn = state["t"]
        self.stunned = (bool(state["st"][0]), bool(state["st"][1]))
        r = state["r"]
        self.result = None if r is None else (tuple(r[0]), r[1])
        self.last = state["l"]
        self.last_captured = list(state["c"])
        self._stuck = None
        self.draws = DrawWatch.load(state.get("dw"), self.position_key(), self.ply)

    def copy(self) -> Self:
        """A fast copy: lists are copied, nothing is recomputed."""
        other = type(self).__new__(type(self))
        Position.__init__(other, self.num_seats, self.params)
        other.ply, other.swapped, other.resigned = self.ply, self.swapped, self.resigned
        other.forfeited = self.forfeited
        other.board, other.chariots = self.board[:], self.chariots[:]
        other.turn, other.stunned, other.result = self.turn, self.stunned, self.result
        other.last, other.last_captured = self.last, self.last_captured[:]
        other._stuck = self._stuck
        other.draws = self.draws.copy()
        return other

    # ----- queries (tests, analysis, the board drawing)

    def piece_at(self, name: str) -> str:
        """The diagram character on square ``name`` (``.`` when empty)."""
        return CHARS[self.board[square_of(name)]]

    def diagram(self) -> list[str]:
        """The board as 8 rows of ``from_diagram`` characters, rank 8 first."""
        return ["".join(CHARS[p] for p in self.board[r * 8 : r * 8 + 8]) for r in range(7, -1, -1)]

    def is_stunned(self, seat: int) -> bool:
        """Whether ``seat``'s chariot is stunned (as at the end of the last move)."""
        return self.stunned[seat]

    def capturable(self) -> list[str]:
        """Squares of the dogs that captures would remove if they were resolved now (with the
        current stun): used to check the rules' static capture diagrams."""
        return [square_name(sq) for sq in _captures(self.board, self.stunned)]

    def board_context(self) -> dict[str, Any]:
        """Pre-built board rows (cells 3 wide), seat lines and the result for the template."""
        rows = []
        for r in range(7, -1, -1):
            cells = []
            for sq in range(r * 8, r * 8 + 8):
                p = self.board[sq]
                c = CHARS[p]
                cells.append(f"({c})" if IS_CHARIOT[p] and self.stunned[OWNER[p]] else f" {c} ")
            rows.append({"rank": r + 1, "cells": "".join(cells)})
        outcome = self.outcome()
        to_move = self.to_move
        return {
            "files": "".join(f" {f} " for f in FILES),
            "rows": rows,
            "seats": [
                {"label": s.label, "note": s.note, "turn": i == to_move}
                for i, s in enumerate(self.seats())
            ],
            "last": self.last,
            "captured": [square_name(sq) for sq in self.last_captured],
            "result": None if outcome is None else outcome.reason,
            "warnings": self.draw_warnings(),
        }


GAME = Game(
    "polis",
    "Polis",
    PolisPosition,
    players=(2,),
    summary="dogs and chariots on 8x8; pieces hop over the piece that moved; get the chariot home",
)

"""Pylon (Cameron Browne, 2006): Go with marbles that stack into a pyramid.

Points live on a doubled grid of (2n-1) x (2n-1) cells (DECISIONS.md): level-L point (i, j),
0 <= i, j < n-L, sits on cell (2i+L, 2j+L) (0-based), named by column letter and row number
(``a1`` is the bottom-left board point, ``b2`` the level-1 point resting on the board points a1,
c1, a3 and c3).  A cell holds the levels of its parity up to its distance from
the grid edge, and only its lowest empty one can be played, so the cell name alone is a move.

Readings chosen (all written down in templates/help/pylon.txt):

* Buried: a marble is buried when a marble stands two levels up on the same grid cell; only
  then is it hidden.  Marbles merely resting on it leave it visible and connected.
  (Example 'f' needs this: its X group "visits the board level" through marbles a level-1 X rests
  on; the over/under example 'e' cuts board-level X marbles that level-1 O marbles rest on.)
* Connection: same owner, both visible, and squarely adjacent on one level (not cut), or one
  resting on the other.  A level-L link is cut when the two level-(L+1) points across its middle
  hold marbles of one other owner (an enemy link passing over it).  Edge links have no such pair.
* Freedom: an orthogonal neighbour on the same level that is an empty, valid point (a board point
  or one resting on four marbles).  Freedoms count only on the level of the marble just played.
* Capture: after placing at level L, every enemy group with a visible marble orthogonally adjacent
  to the new marble and no level-L freedom is captured.  The mover then fills, repeatedly until
  nothing changes, every valid empty point resting on at least one captured marble.
* Suicide: illegal when the new marble's group has no level-L freedom after the captures.
* End: nobody can place.  Most marbles (buried included) among seats not resigned wins; if all
  of them tie it is a draw, if some tie for the top they are joint winners.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Self

from pbmserv.games.base import (
    PASS,
    Capture,
    Game,
    IllegalMove,
    Move,
    MoveError,
    Outcome,
    Param,
    Position,
    SeatInfo,
    UnreadableMove,
)
from pbmserv.games.pylon.tables import EMPTY, SYMBOLS, geometry

_POINT = re.compile(r"^(?:(\d{1,2}))?([a-z])(\d{1,3})$")


class PylonPosition(Position):
    """A Pylon position: ``board[p]`` is the seat owning point p or EMPTY."""

    def __init__(self, players: int, params: Mapping[str, bool | int]) -> None:
        super().__init__(players, params)
        self._init_board()
        self.turn: int | None = 0
        self._refresh_turn(0)

    # ----- construction helpers

    def _init_board(self) -> None:
        self.geo = geometry(int(self.params.get("size", 6)))
        self.board = [EMPTY] * self.geo.size
        self.sup = [0] * self.geo.size
        self.valid = {p for p in range(self.geo.size) if not self.geo.below[p]}
        self._cache: dict[int, tuple[int, ...]] | None = None
        self._cache_seat = -1

    @classmethod
    def set_up(
        cls,
        pieces: Iterable[tuple[str, int]],
        *,
        size: int = 6,
        players: int = 2,
        to_move: int = 0,
    ) -> PylonPosition:
        """A position for tests and analysis: ``pieces`` are (point text, seat) pairs placed in
        order without captures, each on its cell's next free level (``2c3`` checks the level).

        >>> PylonPosition.set_up([("a1", 0), ("c1", 1)], size=3).board_context()["score"]
        '1 1'
        """
        pos = cls(players, {**GAME.defaults(), "size": size})
        for text, seat in pieces:
            p = pos._locate("".join(text.split()).lower())
            if p in pos.valid:
                pos._put(p, seat)
            else:
                raise ValueError(f"{text}: not a free valid point")
        pos.turn = to_move
        pos._refresh_turn(to_move)
        return pos

    def _put(self, p: int, seat: int) -> None:
        self.board[p] = seat
        self.valid.discard(p)
        sup = self.sup
        for a in self.geo.above[p]:
            sup[a] += 1
            if sup[a] == 4:
                self.valid.add(a)

    # ----- rules core

    def visible(self, p: int, board: list[int] | None = None) -> bool:
        """A marble is hidden (buried) only by a marble on the same cell two levels up."""
        b = self.board if board is None else board
        o = self.geo.over2[p]
        return o < 0 or b[o] == EMPTY

    def group(self, p: int, board: list[int] | None = None) -> set[int]:
        """The visibly connected marbles of p's owner that contain p (just {p} if p is buried)."""
        found = self.dead_group(p, -1, self.board if board is None else board)
        assert found is not None  # (no level to look for freedoms on: the whole group)
        return found

    def dead_group(self, p: int, level: int, b: list[int]) -> set[int] | None:
        """p's group on board ``b`` when none of its marbles on ``level`` touches a free point
        (a placement on ``level`` captures it, or is suicide), else None: found without
        filling the whole group when a freedom comes up early.  With level -1, the whole group
        (:meth:`group`).  The robots call this millions of times a game, so it is written for
        speed."""
        geo = self.geo
        over2, links, vertical = geo.over2, geo.links, geo.vertical
        lv, nbrs, below = geo.level, geo.nbrs, geo.below
        c = b[p]
        seen = {p}
        o = over2[p]
        buried = o >= 0 and b[o] != EMPTY  # its group is itself alone
        stack = [p]
        push, pop, add = stack.append, stack.pop, seen.add
        while stack:
            x = pop()
            if lv[x] == level:
                for q in nbrs[x]:
                    if b[q] != EMPTY:
                        continue
                    for s in below[q]:
                        if b[s] == EMPTY:
                            break
                    else:
                        return None
            if buried:
                break
            for q, u, v in links[x]:
                if b[q] != c or q in seen:
                    continue
                if u >= 0:
                    bu = b[u]
                    if bu != EMPTY and bu != c and bu == b[v]:
                        continue  # an enemy link passes over this one
                o = over2[q]
                if o >= 0 and b[o] != EMPTY:
                    continue
                add(q)
                push(q)
            for q in vertical[x]:
                if b[q] != c or q in seen:
                    continue
                o = over2[q]
                if o >= 0 and b[o] != EMPTY:
                    continue
                add(q)
                push(q)
        return seen

    def _free(self, q: int, b: list[int]) -> bool:
        if b[q] != EMPTY:
            return False
        return all(b[s] != EMPTY for s in self.geo.below[q])

    def _simulate(self, p: int, seat: int) -> tuple[int, ...] | None:
        """Play ``seat`` at p on a scratch board: the stacked points, or None for suicide."""
        placed = self.place_on_copy(p, seat)
        return None if placed is None else placed[1]

    def place_on_copy(self, p: int, seat: int) -> tuple[list[int], tuple[int, ...]] | None:
        """``seat`` placing at p as the rules do, on a copy of the board: (the board after, the
        points its captures filled), or None when it is suicide.  Move generation and the
        robots' evaluation both ask this."""
        geo = self.geo
        b = self.board[:]
        b[p] = seat
        level = geo.level[p]
        captured = self._captured(p, seat, b)
        stacked: list[int] = []
        if captured:
            cand = sorted({a for m in captured for a in geo.above[m]})
            changed = True
            while changed:
                changed = False
                for q in cand:
                    if self._free(q, b):
                        b[q] = seat
                        stacked.append(q)
                        changed = True
        if self.dead_group(p, level, b) is not None:
            return None
        return b, tuple(stacked)

    def _captured(self, p: int, seat: int, b: list[int]) -> set[int]:
        """The enemy marbles that ``seat``'s marble at p (already on board ``b``) captures:
        every group next to it without a freedom on its level."""
        level = self.geo.level[p]
        captured: set[int] = set()
        for e in self.geo.nbrs[p]:
            if b[e] == EMPTY or b[e] == seat or e in captured:
                continue
            dead = self.dead_group(e, level, b)
            if dead is not None:
                captured |= dead
        return captured

    def capture(self, move: Move) -> Capture | None:
        """A placement's in-place capture: the marbles of each seat it captures and the points
        its marbles then fill (None when it fills none: the board is then as the move text
        says)."""
        seat = self.turn
        if seat is None or not isinstance(move, int):  # (a pass)
            return None
        filled = self.placement(move)
        if not filled:
            return None
        b = self.board[:]
        b[move] = seat
        taken: dict[int, list[int]] = {}
        for q in sorted(self._captured(move, seat, b)):
            taken.setdefault(b[q], []).append(q)
        names = self.geo.names
        return Capture(
            {owner: tuple(names[q] for q in points) for owner, points in sorted(taken.items())},
            tuple(names[q] for q in filled),
        )

    def _scan(
        self, seat: int, points: Iterable[int], *, play_out: bool = True
    ) -> Iterator[tuple[int, tuple[int, ...]]]:
        """The legal placements of ``seat`` among the valid ``points``, in their order, each
        with the points its captures fill.  Most are settled without playing them out: the
        point has a free neighbour and so has every enemy marble next to it (nothing is
        captured, nothing is suicide); with ``play_out`` False only those are given."""
        valid, b, nbrs = self.valid, self.board, self.geo.nbrs
        for p in points:
            quiet = False
            for q in nbrs[p]:
                if q in valid:
                    quiet = True
                    break
            if quiet:
                for e in nbrs[p]:
                    c = b[e]
                    if c in (EMPTY, seat):
                        continue
                    for q in nbrs[e]:
                        if q != p and q in valid:
                            break
                    else:
                        quiet = False
                        break
            if quiet:
                yield p, ()
            elif play_out:
                filled = self._simulate(p, seat)
                if filled is not None:
                    yield p, filled

    def _legal_for(self, seat: int) -> dict[int, tuple[int, ...]]:
        """Every legal placement of ``seat`` with the points its captures fill."""
        return dict(self._scan(seat, sorted(self.valid)))

    def _can_place(self, seat: int) -> bool:
        """Whether ``seat`` has a legal placement: what the turn order needs to know after
        every move.  A quiet placement settles it without working out the others (a search
        never asks for the moves of most positions it evaluates); failing that, every
        placement is worked out, and kept when ``seat`` is the one to move."""
        if next(self._scan(seat, self.valid, play_out=False), None) is not None:
            return True
        legal = self._legal_for(seat)
        if seat == self.turn:
            self._cache, self._cache_seat = legal, seat
        return bool(legal)

    def _moves(self) -> dict[int, tuple[int, ...]]:
        seat = self.turn
        if seat is None:
            return {}
        if self._cache is None or self._cache_seat != seat:
            self._cache = self._legal_for(seat)
            self._cache_seat = seat
        return self._cache

    def _refresh_turn(self, start: int) -> None:
        """Give the turn to the first seat from ``start`` still playing; end the game when only
        one seat is left or nobody can place (a seat that cannot place must pass)."""
        self._cache = None
        live = [s for s in range(self.num_seats) if s not in self.resigned]
        if len(live) <= 1:
            self.turn = None
            return
        order = [(start + k) % self.num_seats for k in range(self.num_seats)]
        order = [s for s in order if s not in self.resigned]
        self.turn = order[0]
        if self._can_place(order[0]):
            return
        for s in order[1:]:
            if self._can_place(s):
                return  # order[0] must pass
        self.turn = None

    # ----- contract hooks

    @property
    def to_move(self) -> int | None:
        return self.turn

    def scores(self) -> list[int]:
        """Marbles on the board per seat, buried ones included."""
        out = [0] * self.num_seats
        for c in self.board:
            if c != EMPTY:
                out[c] += 1
        return out

    def seats(self) -> tuple[SeatInfo, ...]:
        sc = self.scores()
        return tuple(
            SeatInfo(
                SYMBOLS[i],
                SYMBOLS[i],
                in_play=i not in self.resigned,
                note=self.left([i])
                if i in self.resigned
                else f"{sc[i]} marble{'' if sc[i] == 1 else 's'}",
            )
            for i in range(self.num_seats)
        )

    def move_list(self) -> list[Move]:
        """Every legal move of the seat to move (no swap): the robots' fast path."""
        return list(self._generate())

    def placements(self) -> Mapping[int, tuple[int, ...]]:
        """Every legal placement of the seat to move, with the points its captures would fill
        (computed once per position, and shared with move generation)."""
        return self._moves()

    def placement(self, p: int) -> tuple[int, ...] | None:
        """One entry of :meth:`placements`: what a placement at ``p`` by the seat to move
        would fill, or None when it is not legal.  The robots' evaluation asks this of a few
        points in positions whose moves the search never generates, so the others are not
        worked out."""
        seat = self.turn
        if seat is None:
            return None
        if self._cache is not None and self._cache_seat == seat:
            return self._cache.get(p)
        if p not in self.valid:
            return None
        for _, filled in self._scan(seat, (p,)):
            return filled
        return None

    def _generate(self) -> Iterator[Move]:
        moves = self._moves()
        if moves:
            yield from moves
        elif self.turn is not None:
            yield PASS

    def _locate(self, text: str) -> int:
        """The point a text names (its cell's next free level), or a MoveError."""
        m = _POINT.match(text)
        if not m:
            raise UnreadableMove(
                f"'{text}' is not a point: write a column letter and a row number,"
                " e.g. c3, optionally with the level first (2c3)"
            )
        geo = self.geo
        col, row = ord(m.group(2)) - 97, int(m.group(3)) - 1
        last = chr(96 + geo.grid)
        if col >= geo.grid or not 0 <= row < geo.grid:
            raise IllegalMove(f"{text}: off the board (columns a-{last}, rows 1-{geo.grid})")
        name = f"{m.group(2)}{row + 1}"
        pts = geo.at.get((col, row))
        if pts is None:
            raise IllegalMove(
                f"{name} is not a point: column and row are both odd (a1, c3: board level"
                " and levels 2, 4, ...) or both even (b2: levels 1, 3, ...)"
            )
        free = [p for p in pts if self.board[p] == EMPTY]
        levels = [geo.level[p] for p in pts]
        if m.group(1) is not None:
            want = int(m.group(1))
            if want not in levels:
                raise IllegalMove(
                    f"{text}: {name} has no level {want} (its levels are "
                    + ", ".join(map(str, levels))
                    + ")"
                )
            if free and geo.level[free[0]] != want:
                raise IllegalMove(
                    f"{text}: the next free level at {name} is {geo.level[free[0]]}, not {want}"
                )
        if not free:
            raise IllegalMove(f"{name} is full: its top level {levels[-1]} holds a marble")
        return free[0]

    def queue_text(self, text: str) -> str:
        """A point without its level gets the level it takes now (``b2`` -> ``1b2``): the
        cell's next free level may rise before the player's turn, and the queued move must
        not climb with it (the level is checked when it is played)."""
        norm = "".join(text.split()).lower()
        m = _POINT.match(norm)
        if m is None or m.group(1) is not None:
            return text
        try:
            point = self._locate(norm)
        except MoveError:
            return text  # (refused as it stands when it is played)
        return f"{self.geo.level[point]}{norm}"

    def _parse(self, text: str) -> Move:
        p = self._locate(text)
        geo = self.geo
        level = geo.level[p]
        if p not in self.valid:
            missing = ", ".join(geo.names[s] for s in geo.below[p] if self.board[s] == EMPTY)
            m = _POINT.match(text)
            if m is not None and m.group(1) is None and level > geo.level[geo.at[geo.cell[p]][0]]:
                raise IllegalMove(  # the point the player meant is simply taken
                    f"{text} is taken: a marble is there already, and level {level} above it"
                    f" needs four marbles on level {level - 1} first (empty at {missing})"
                )
            raise IllegalMove(
                f"{text}: a marble there (level {level}) does not rest on four marbles yet"
                f" (level {level - 1} is empty at {missing})"
            )
        moves = self._moves()
        if not moves:
            raise IllegalMove("you have no legal placement and must pass")
        if p not in moves:
            raise IllegalMove(
                f"{text}: suicide: the marble would leave its group without a freedom on"
                f" level {level}, even after its captures"
            )
        return p

    def _format(self, move: Move) -> str:
        assert isinstance(move, int)
        return self.geo.names[move]

    def _apply(self, move: Move) -> None:
        seat = self.turn
        assert seat is not None
        if move != PASS:
            assert isinstance(move, int)
            p = move
            moves = self._moves()
            stacked = moves[p] if p in moves else self._simulate(p, seat)
            self._put(p, seat)
            for q in stacked or ():
                self._put(q, seat)
        self._refresh_turn((seat + 1) % self.num_seats)

    def _resign(self, seat: int) -> None:
        self._refresh_turn((seat + 1) % self.num_seats)

    def outcome(self) -> Outcome | None:
        if self.turn is not None:
            return None
        live = [s for s in range(self.num_seats) if s not in self.resigned]
        if len(live) == 1:
            return Outcome((live[0],), self.gone(range(self.num_seats)))
        sc = self.scores()
        best = max(sc[s] for s in live)
        top = tuple(s for s in live if sc[s] == best)
        score = "-".join(str(sc[s]) for s in range(self.num_seats))
        end = "nobody can place" + (": every empty point would be suicide" if self.valid else "")
        if len(top) == 1:
            return Outcome(top, f"{end}; most marbles, {score}")
        if len(top) == len(live):
            return Outcome((), f"{end}; equal marbles, {score}: a tie")
        names = " and ".join(SYMBOLS[s] for s in top)
        return Outcome(top, f"{end}; {names} share the most marbles, {score}")

    def _state(self) -> Any:
        return {
            "b": "".join("." if c == EMPTY else str(c) for c in self.board),
            "t": self.turn,
        }

    def _load_state(self, state: Any) -> None:
        self._init_board()
        for p, ch in enumerate(state["b"]):
            if ch != ".":
                self._put(p, int(ch))
        self.turn = state["t"]

    def copy(self) -> Self:
        new = type(self).__new__(type(self))
        Position.__init__(new, self.num_seats, self.params)
        new.ply, new.swapped, new.resigned = self.ply, self.swapped, self.resigned
        new.forfeited = self.forfeited
        new.geo = self.geo
        new.board = self.board[:]
        new.sup = self.sup[:]
        new.valid = set(self.valid)
        new.turn = self.turn
        new._cache, new._cache_seat = self._cache, self._cache_seat
        return new

    def board_context(self) -> dict[str, Any]:
        from pbmserv.games.pylon.drawing import board_context  # lazy: drawing imports position

        return board_context(self)


GAME = Game(
    "pylon",
    "Pylon",
    PylonPosition,
    players=(2, 3, 4),
    params=(Param("size", "points along a side of the board", 6, 3, 13),),
    swap="always",
    summary="Go with stacking marbles and in-place capture",
)

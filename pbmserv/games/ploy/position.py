"""Ploy (Frank Thibault, 3M 1970): pieces with direction flags on a 9x9 board, 2 or 4 players.

Rules and notation follow Thomas Tensi's Ploy program manual; ``-classic`` selects the German box
rules and ``-relaxed`` the chess-like elimination rule (see /work/shared/rules/DECISIONS.md and
templates/help/ploy.txt for every reading chosen).

Representation (the hot path is plain integer work):

* a point is an int ``row * 9 + col`` (a1 = 0, i9 = 80);
* directions are numbered counter-clockwise from north: 0 N, 1 NW, 2 W, 3 SW, 4 S, 5 SE, 6 E,
  7 NE, so that a flag set is an 8-bit mask and a turn by ``+k`` (counter-clockwise) is a left
  bit rotation by ``k``;
* a piece is ``army << 12 | kind << 8 | mask`` (0 is an empty point; a mask is never 0);
* a move is ``from | to << 7 | k << 14``: ``to == from`` for a direction move, ``k`` the canonical
  turn (0 none, 1..4 counter-clockwise, 5..7 meaning -3..-1).

Set up arbitrary positions with :meth:`PloyPosition.setup` (documented there).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Self

from pbmserv.games.base import (
    PASS,
    Capture,
    IllegalMove,
    Move,
    Outcome,
    PlayersError,
    Position,
    SeatInfo,
    UnreadableMove,
)
from pbmserv.games.endless import DrawWatch
from pbmserv.games.ploy.tables import (
    BRACKETS,
    CANON,
    COLOURS,
    COMMANDER,
    DELTAS,
    DIR_WORDS,
    FLAG_COUNTS,
    KIND_BY_NAME,
    KIND_NAMES,
    NAMES,
    RANGES,
    RAYS,
    RAYS_FLAT,
    ROT,
    SHIELD,
    SQUARE,
    STEPS,
    STEPS_CLASSIC,
    TURNS_FLAT,
    TURNS_FLAT_CLASSIC,
    dirs_of,
    initial_board,
    mask_of,
)

# --------------------------------------------------------------------------- position

IN, ABSORBED, OUT = 0, 1, 2
"""Seat status: in play; out but keeping turns that the partner plays (partnership); out."""

_MOVE_RE = re.compile(r"([a-z])(\d+)(?:([-x])([a-z])(\d+))?(?:([+-])(\d+))?(#?)")


class PloyPosition(Position):
    """A Ploy position: the board, who controls which army, seat status and the turn."""

    analysis: Any = None
    """A free slot for analysis tools (the robots keep their incremental evaluation here):
    copied with the position, never serialised or compared."""

    def __init__(self, players: int, params: Mapping[str, bool | int]) -> None:
        super().__init__(players, params)
        self.board: list[int] = initial_board(players, bool(params.get("partnership")))
        self.ctrl: list[int] = list(range(players))  # army -> seat that moves its pieces
        self.status: list[int] = [IN] * players
        self.cmd_lost: list[bool] = [False] * players
        self.notes: list[str] = [""] * players
        self.turn = 0
        self.result: tuple[tuple[int, ...], str] | None = None
        self._compute_masks()
        self.draws = DrawWatch(self.position_key())

    # ----- setup for tests and analysis

    @classmethod
    def setup(
        cls,
        players: int = 2,
        params: Mapping[str, bool | int] | None = None,
        pieces: Mapping[str, tuple[str, str, str]] | None = None,
        turn: int = 0,
    ) -> PloyPosition:
        """A position with exactly ``pieces`` on the board and ``turn`` to move.

        ``pieces`` maps a point to (colour, kind, flags), e.g.
        ``{"e4": ("green", "light lance", "NW NE S"), "f5": ("red", "shield", "S")}``.
        Colours are those of the variant's seats (green, red[, yellow, blue]); kinds are
        :data:`KIND_NAMES`; flags are compass directions.  Every army starts under its own seat.
        """
        position = cls.game.new(players, dict(params or {}))
        assert isinstance(position, cls)
        position.board = [0] * 81
        for name, (colour, kind, dirs) in (pieces or {}).items():
            position.place(name, colour, kind, dirs)
        position.turn = turn
        position.draws = DrawWatch(position.position_key())
        return position

    def place(self, square: str, colour: str, kind: str, dirs: str) -> None:
        """Put a piece on ``square`` (replacing what was there); for setting up positions."""
        army = COLOURS.index(colour)
        if army >= self.num_seats:
            raise ValueError(f"no {colour} army with {self.num_seats} players")
        k = KIND_BY_NAME[kind]
        mask = mask_of(dirs)
        if bin(mask).count("1") != FLAG_COUNTS[k]:
            raise ValueError(f"a {kind} has {FLAG_COUNTS[k]} flags, not {dirs!r}")
        self.board[SQUARE[square]] = army << 12 | k << 8 | mask

    def piece_at(self, square: str) -> tuple[str, str, list[str]] | None:
        """(colour, kind, flag directions) of the piece on ``square``, or None."""
        p = self.board[SQUARE[square]]
        if not p:
            return None
        return COLOURS[p >> 12], KIND_NAMES[p >> 8 & 15], dirs_of(p & 255)

    # ----- contract hooks

    @classmethod
    def check_players(cls, count: int, params: Mapping[str, bool | int]) -> None:
        if params.get("partnership") and count != 4:
            raise PlayersError("-partnership needs four players")

    @property
    def to_move(self) -> int | None:
        return None if self.result is not None else self.turn

    @property
    def partnership(self) -> bool:
        return bool(self.params.get("partnership"))

    def controller(self, seat: int) -> int:
        if self.status[seat] == ABSORBED:
            return (seat + 2) % 4
        return seat

    def _team(self, seat: int) -> int:
        return seat % 2 if self.partnership else seat

    def seats(self) -> tuple[SeatInfo, ...]:
        part = self.partnership
        return tuple(
            SeatInfo(
                COLOURS[s],
                BRACKETS[s][0] + "X" + BRACKETS[s][1],  # as the drawing brackets its pieces
                team=s % 2 if part else None,
                in_play=self.status[s] == IN,
                note=self.notes[s],
            )
            for s in range(self.num_seats)
        )

    def _actor(self) -> int:
        return self.controller(self.turn)

    def _compute_masks(self) -> None:
        """Per seat: which armies it moves and which are friendly (recomputed on take-overs)."""
        out = []
        for actor in range(self.num_seats):
            team = self._team(actor)
            mine = tuple(seat == actor for seat in self.ctrl) + (False,) * (4 - self.num_seats)
            friends = tuple(self._team(seat) == team for seat in self.ctrl)
            out.append((mine, friends + (False,) * (4 - self.num_seats)))
        self._mf = out

    def _masks(self) -> tuple[tuple[bool, ...], tuple[bool, ...]]:
        """Which armies the acting seat moves, and which armies are friendly to it (by army)."""
        return self._mf[self.controller(self.turn)]

    def move_list(self) -> list[int]:
        """Every legal ordinary move of the seat to move, as ints (empty when it must pass)."""
        mine, friends = self._mf[self.controller(self.turn)]
        board = self.board
        if self.params.get("classic"):
            steps, turns = STEPS_CLASSIC, TURNS_FLAT_CLASSIC
        else:
            steps, turns = STEPS, TURNS_FLAT
        rays_flat = RAYS_FLAT
        out: list[int] = []
        append = out.append
        extend = out.extend
        for sq, p in enumerate(board):
            if not p or not mine[p >> 12]:
                continue
            key = sq << 8 | p & 255
            if p & 0xF00 == 0x700:  # shield: one point, optionally turning afterwards
                for t, mvs in steps[key]:
                    q = board[t]
                    if not q or not friends[q >> 12]:
                        extend(mvs)
            elif p & 0xF00 == 0:  # commander: one point
                for t, mv in steps[key]:
                    q = board[t]
                    if not q or not friends[q >> 12]:
                        append(mv)
            else:
                for ray in rays_flat[key]:
                    for t, mv in ray:
                        q = board[t]
                        if q:
                            if not friends[q >> 12]:
                                append(mv)
                            break
                        append(mv)
            extend(turns[key])
        return out

    def _generate(self) -> Iterator[Any]:
        moves = self.move_list()
        return iter(moves) if moves else iter((PASS,))

    def _format(self, move: Any) -> str:
        if move == PASS:
            return "pass"
        frm, to, k = move & 127, move >> 7 & 127, move >> 14
        text = NAMES[frm]
        capture = False
        if to != frm:
            capture = bool(self.board[to])
            text += ("x" if capture else "-") + NAMES[to]
        if k:
            text += f"+{k}" if k <= 4 else f"-{8 - k}"
        if capture and self._ends(move):
            text += "#"
        return text

    def capture(self, move: Move) -> Capture | None:
        """The piece the legal ``move`` captures (its text says only ``x``), by its army."""
        if not isinstance(move, int):
            return None
        frm, to = move & 127, move >> 7 & 127
        q = self.board[to] if to != frm else 0
        if not q:
            return None
        return Capture({q >> 12: (NAMES[to],)}, pieces=KIND_NAMES[q >> 8 & 15])

    def _ends(self, move: int) -> bool:
        """Whether playing ``move`` ends the game (for the ``#`` suffix)."""
        trial = self.copy()
        trial._apply(move)
        return trial.result is not None

    def _parse(self, text: str) -> Any:
        match = _MOVE_RE.fullmatch(text)
        if not match:
            raise UnreadableMove(
                f"'{text}' is not a Ploy move: write e4-d5 (motion), e4xf5 (capture), f3+3 or "
                "f3-2 (turn by 45 degree steps), e7-d6+2 (shield: motion and turn)"
            )
        c1, r1, sep, c2, r2, sign, steps, hash_ = match.groups()
        frm = self._square(c1 + r1)
        to = frm if sep is None else self._square(c2 + r2)
        if sep is None and sign is None:
            raise UnreadableMove(
                f"'{text}': say where the piece goes ({NAMES[frm]}-...) or how it turns "
                f"({NAMES[frm]}+1, {NAMES[frm]}-1, ...)"
            )
        if to == frm and sep is not None and (sign is None or sep == "x"):
            raise IllegalMove(
                f"{text}: a piece must leave its point, or turn in place "
                f"({NAMES[frm]}+1, {NAMES[frm]}-1, ...)"
            )
        p = self.board[frm]
        if not p:
            raise IllegalMove(f"{text}: there is no piece on {NAMES[frm]}")
        mine, friends = self._masks()
        army, kind, mask = p >> 12, p >> 8 & 15, p & 255
        what = f"the {KIND_NAMES[kind]} on {NAMES[frm]}"
        if not mine[army]:
            owner = COLOURS[self.ctrl[army]]
            raise IllegalMove(f"{text}: {what} is not yours (it is {owner}'s)")
        k = 0
        if sign is not None:
            k = int(steps) % 8 * (1 if sign == "+" else -1) % 8
            if to != frm and kind != SHIELD:
                raise IllegalMove(f"{text}: only a shield may turn after its motion move")
            new = ROT[mask][k]
            if new == mask:
                raise IllegalMove(
                    f"{text}: turning {what} by {sign}{steps} leaves its flags pointing the "
                    "same way, which is not a move"
                )
            k = CANON[mask][new]
            if self.params.get("classic") and k not in (1, 7):
                raise IllegalMove(
                    f"{text}: with -classic a piece turns by one step of 45 degrees only (+1 or -1)"
                )
        capture = False
        if to != frm:
            dc, dr = to % 9 - frm % 9, to // 9 - frm // 9
            if dc and dr and abs(dc) != abs(dr):
                raise IllegalMove(
                    f"{text}: {NAMES[to]} is not on a line from {NAMES[frm]} "
                    "(pieces move straight or diagonally)"
                )
            dist = max(abs(dc), abs(dr))
            d = DELTAS.index(((dc > 0) - (dc < 0), (dr > 0) - (dr < 0)))
            if not mask >> d & 1:
                flags = ", ".join(dirs_of(mask))
                raise IllegalMove(
                    f"{text}: {what} has no flag pointing {DIR_WORDS[d]} (its flags: {flags})"
                )
            reach = RANGES[kind]
            if dist > reach:
                points = "point" if reach == 1 else "points"
                raise IllegalMove(f"{text}: a {KIND_NAMES[kind]} moves at most {reach} {points}")
            for t in RAYS[frm][d][: dist - 1]:
                if self.board[t]:
                    raise IllegalMove(f"{text}: the way is blocked at {NAMES[t]}")
            q = self.board[to]
            if q:
                if friends[q >> 12]:
                    raise IllegalMove(
                        f"{text}: {NAMES[to]} holds a piece of your own side, "
                        "which you cannot capture"
                    )
                capture = True
            elif sep == "x":
                raise IllegalMove(f"{text}: there is nothing to capture on {NAMES[to]}")
        move = frm | to << 7 | k << 14
        if hash_ and not (capture and self._ends(move)):
            raise IllegalMove(f"{text}: this move does not end the game; leave out the '#'")
        return move

    @staticmethod
    def _square(name: str) -> int:
        sq = SQUARE.get(name)
        if sq is None:
            raise UnreadableMove(f"'{name}' is not a point of the board (a1 to i9)")
        return sq

    def _apply(self, move: Any) -> None:
        captured = False
        if move != PASS:
            frm, to, k = move & 127, move >> 7 & 127, move >> 14
            board = self.board
            p = board[frm]
            if k:
                p = p & ~255 | ROT[p & 255][k]
            if to != frm:
                q = board[to]
                board[frm] = 0
                board[to] = p
                if q:
                    captured = True
                    self._captured(q)
            else:
                board[frm] = p
        if self.result is None:
            self._advance()
            why = self.draws.record(self.position_key(), captured, self.ply + 1)
            if why is not None:
                self._draw(why)

    def repetitions(self) -> int:
        return self.draws.current_repeats()

    def identity(self) -> tuple[tuple[int, ...], int, tuple[int, ...], tuple[int, ...]]:
        """The position as a tuple: equal for equal positions with the same player to move."""
        return (tuple(self.board), self.turn, tuple(self.ctrl), tuple(self.status))

    def position_key(self) -> int:
        """An integer equal for equal positions with the same player to move (repetitions)."""
        return hash(self.identity())

    def draw_warnings(self) -> list[str]:
        return [] if self.result is not None else self.draws.warnings()

    def _draw(self, why: str) -> None:
        """End the game drawn among the players still in it (DECISIONS.md, "Endless games"):
        a draw has no winners, and :meth:`still_in` names who shares it (those already
        eliminated keep their loss)."""
        self._finish((), why)

    def _advance(self) -> None:
        n = self.num_seats
        t = self.turn
        for _ in range(n):
            t = (t + 1) % n
            if self.status[t] != OUT:
                break
        self.turn = t

    # ----- elimination

    def _count(self, seat: int) -> tuple[int, int]:
        """(non-commander pieces, commanders) that ``seat`` moves."""
        ships = cmds = 0
        ctrl = self.ctrl
        for p in self.board:
            if p and ctrl[p >> 12] == seat:
                if p >> 8 & 15 == COMMANDER:
                    cmds += 1
                else:
                    ships += 1
        return ships, cmds

    def _remove_commanders(self, seat: int) -> None:
        ctrl = self.ctrl
        for sq, p in enumerate(self.board):
            if p and ctrl[p >> 12] == seat and p >> 8 & 15 == COMMANDER:
                self.board[sq] = 0

    def _hand_over(self, seat: int, to: int) -> None:
        self.ctrl = [to if s == seat else s for s in self.ctrl]
        self._compute_masks()

    def _captured(self, q: int) -> None:
        """Consequences of capturing piece ``q`` by the seat acting now."""
        actor = self._actor()
        army, kind = q >> 12, q >> 8 & 15
        victim = self.ctrl[army]
        if kind == COMMANDER and victim == army:
            self.cmd_lost[army] = True
        strict = not self.params.get("relaxed")
        ships, _ = self._count(victim)
        own_commander = kind == COMMANDER and victim == army
        if self.partnership and self.params.get("classic"):
            self._classic_team(victim, actor, strict)
            return
        if not (own_commander or (strict and ships == 0)):
            return
        why = "commander captured" if own_commander else "lost all pieces but the commander"
        lost = (  # (no brackets: the note is shown in brackets after the player's name)
            f"commander captured by {COLOURS[actor]}"
            if own_commander
            else f"all pieces but the commander lost to {COLOURS[actor]}"
        )
        if self.num_seats == 2:
            self._finish((actor,), f"{COLOURS[victim]}: {why}")
            self.status[victim] = OUT
            self.notes[victim] = f"eliminated, {lost}"
            return
        if self.partnership:
            partner = (victim + 2) % 4
            if self.status[partner] == IN:
                self.status[victim] = ABSORBED
                self._hand_over(victim, partner)
                self.notes[victim] = f"{why}; absorbed by {COLOURS[partner]}"
            else:
                self.notes[victim] = f"eliminated, {lost}"
                self._team_loses(victim, f"{COLOURS[victim]}: {why}; the team is beaten")
            return
        if self.params.get("classic") and ships == 0:
            self._remove_commanders(victim)  # the German rule: a bare commander leaves the board
        self.status[victim] = OUT
        self._hand_over(victim, actor)
        self.notes[victim] = f"eliminated, {lost}"
        live = [s for s in range(4) if self.status[s] == IN]
        if len(live) == 1:
            self._finish(tuple(live), "all opponents eliminated")

    def _classic_team(self, victim: int, actor: int, strict: bool) -> None:
        """-classic partnership: play on to the last piece, then the partner takes the turns."""
        ships, cmds = self._count(victim)
        if strict and ships == 0 and cmds:
            self._remove_commanders(victim)
            cmds = 0
        partner = (victim + 2) % 4
        if ships == 0 and cmds == 0:
            self.status[victim] = ABSORBED if self.status[partner] == IN else OUT
            self.notes[victim] = f"lost all pieces to {COLOURS[actor]}"
        elif self.cmd_lost[victim]:
            self.notes[victim] = f"commander captured by {COLOURS[actor]}; plays on"
        if self._beaten(victim) and self._beaten(partner):
            self._team_loses(victim, "both players of the team are beaten")

    def _beaten(self, seat: int) -> bool:
        if self.status[seat] != IN or self.cmd_lost[seat]:
            return True
        return not self.params.get("relaxed") and self._count(seat)[0] == 0

    def _team_loses(self, seat: int, reason: str) -> None:
        losers = (seat, (seat + 2) % 4)
        for s in losers:
            self.status[s] = OUT
        winners = tuple(s for s in range(4) if s not in losers and s not in self.resigned)
        self._finish(winners, reason)

    def _finish(self, winners: tuple[int, ...], reason: str) -> None:
        self.result = (tuple(sorted(winners)), reason)

    def _resign(self, seat: int) -> None:
        name, left = COLOURS[seat], self.left([seat])  # "resigned" or "forfeited on time"
        if self.num_seats == 2:
            self.status[seat] = OUT
            self.notes[seat] = left
            self._finish((1 - seat,), f"{name} {left}")
            return
        if self.partnership:
            actor = self.controller(seat)
            partner = (seat + 2) % 4
            if actor != seat or self.status[partner] != IN:
                self.notes[actor] = left
                self._team_loses(seat, f"{COLOURS[actor]} {left} for the team")
                return
            self.status[seat] = ABSORBED
            self._hand_over(seat, partner)
            self.notes[seat] = f"{left}; absorbed by {COLOURS[partner]}"
            if self.params.get("classic") and self._beaten(partner):
                self._team_loses(seat, f"{name} {left} and {COLOURS[partner]} is beaten")
                return
            self._advance()
            return
        ctrl = self.ctrl
        board = self.board
        for sq, p in enumerate(board):
            if p and ctrl[p >> 12] == seat:
                board[sq] = 0
        self.status[seat] = OUT
        self.notes[seat] = left
        live = [s for s in range(4) if self.status[s] == IN]
        if len(live) == 1:
            gone = self.left(range(4)).replace(" or ", ", ")
            self._finish(tuple(live), f"the others {gone} or were eliminated")
            return
        self._advance()
        self.draws = DrawWatch.at(self.position_key(), self.ply + 1)

    def outcome(self) -> Outcome | None:
        if self.result is None:
            return None
        return Outcome(*self.result)

    # ----- state

    def _state(self) -> Any:
        return {
            "b": self.board,
            "c": self.ctrl,
            "st": self.status,
            "cl": self.cmd_lost,
            "nt": self.notes,
            "t": self.turn,
            "r": None if self.result is None else [list(self.result[0]), self.result[1]],
            "dw": self.draws.state(),
        }

    def _load_state(self, state: Any) -> None:
        self.board = list(state["b"])
        self.ctrl = list(state["c"])
        self.status = list(state["st"])
        self.cmd_lost = list(state["cl"])
        self.notes = list(state["nt"])
        self.turn = state["t"]
        r = state["r"]
        self.result = None if r is None else (tuple(r[0]), r[1])
        self._compute_masks()
        self.draws = DrawWatch.load(state.get("dw"), self.position_key(), self.ply)

    def copy(self) -> Self:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.params = dict(self.params)
        new.board = self.board[:]
        new.ctrl = self.ctrl[:]
        new.status = self.status[:]
        new.cmd_lost = self.cmd_lost[:]
        new.notes = self.notes[:]
        new.draws = self.draws.copy()
        return new

    # ----- drawing

    def board_context(self) -> dict[str, Any]:
        from pbmserv.games.ploy.drawing import board_context  # lazy: drawing imports position

        return board_context(self)

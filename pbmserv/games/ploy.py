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
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pbmserv.games.base import (
    PASS,
    Game,
    IllegalMove,
    Outcome,
    Param,
    PlayersError,
    Position,
    SeatInfo,
    UnreadableMove,
)

# --------------------------------------------------------------------------- tables

FILES = "abcdefghi"
NAMES = [f"{FILES[sq % 9]}{sq // 9 + 1}" for sq in range(81)]
SQUARE = {name: sq for sq, name in enumerate(NAMES)}

DIR_NAMES = ("N", "NW", "W", "SW", "S", "SE", "E", "NE")
DIR_WORDS = (
    "north",
    "north-west",
    "west",
    "south-west",
    "south",
    "south-east",
    "east",
    "north-east",
)
DIR_INDEX = {name: d for d, name in enumerate(DIR_NAMES)}
DELTAS = ((0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1), (1, 0), (1, 1))

COMMANDER, HEAVY_LANCE, MEDIUM_LANCE, LIGHT_LANCE = 0, 1, 2, 3
HEAVY_PROBE, MEDIUM_PROBE, LIGHT_PROBE, SHIELD = 4, 5, 6, 7
KIND_NAMES = (
    "commander",
    "heavy lance",
    "medium lance",
    "light lance",
    "heavy probe",
    "medium probe",
    "light probe",
    "shield",
)
KIND_BY_NAME = {name: kind for kind, name in enumerate(KIND_NAMES)}
KIND_LETTERS = "CHMLhmlS"  # board letters: lances upper case, probes lower case
RANGES = (1, 3, 3, 3, 2, 2, 2, 1)
FLAG_COUNTS = (4, 3, 3, 3, 2, 2, 2, 1)

COLOURS = ("green", "red", "yellow", "blue")
BRACKETS = ("()", "[]", "{}", "<>")  # how each army is drawn around the kind letter


def _rot(mask: int, k: int) -> int:
    return ((mask << k) | (mask >> (8 - k))) & 255 if k % 8 else mask


ROT = [[_rot(m, k) for k in range(8)] for m in range(256)]
"""``ROT[mask][k]``: the flag mask after a turn by ``k`` steps counter-clockwise."""

DIRS_OF = [tuple(d for d in range(8) if m >> d & 1) for m in range(256)]


def _signed(k: int) -> int:
    return k if k <= 4 else k - 8


def _canon(mask: int) -> dict[int, int]:
    """new mask -> canonical turn reaching it (shortest, ``+`` on a tie); no-op turns left out."""
    best: dict[int, int] = {}
    for k in range(1, 8):
        new = ROT[mask][k]
        if new == mask:
            continue
        key = (abs(_signed(k)), _signed(k) < 0)
        old = best.get(new)
        if old is None or key < (abs(_signed(old)), _signed(old) < 0):
            best[new] = k
    return best


CANON = [_canon(m) for m in range(256)]
TURNS = [tuple(sorted(CANON[m].values())) for m in range(256)]
TURNS_CLASSIC = [tuple(k for k in TURNS[m] if k in (1, 7)) for m in range(256)]


def _ray(sq: int, d: int) -> list[int]:
    col, row = sq % 9, sq // 9
    dc, dr = DELTAS[d]
    out = []
    col, row = col + dc, row + dr
    while 0 <= col < 9 and 0 <= row < 9:
        out.append(row * 9 + col)
        col, row = col + dc, row + dr
    return out


RAYS = [[_ray(sq, d) for d in range(8)] for sq in range(81)]


def _range_of(mask: int) -> int:
    n = bin(mask).count("1")
    return 1 if n == 4 else n  # the commander (the only 4-flag piece) moves one point


def _motion_table() -> list[list[tuple[tuple[tuple[int, int], ...], ...]]]:
    """``[sq][mask]``: per flag, the (target, move) pairs within the piece's range, in order.

    Built from the few distinct rays per (point, direction, range) so that importing the
    module stays cheap (it is imported by every shell command that touches Ploy).
    """
    ranges = [_range_of(m) if m else 0 for m in range(256)]
    table = []
    for sq in range(81):
        pieces = [
            [tuple((t, sq | t << 7) for t in RAYS[sq][d][:r]) for r in range(9)] for d in range(8)
        ]
        present = [bool(RAYS[sq][d]) for d in range(8)]
        table.append(
            [tuple(pieces[d][ranges[m]] for d in DIRS_OF[m] if present[d]) for m in range(256)]
        )
    return table


MOTIONS = _motion_table()
TURN_MOVES = [
    [tuple(sq | sq << 7 | k << 14 for k in TURNS[m]) for m in range(256)] for sq in range(81)
]
TURN_MOVES_CLASSIC = [
    [tuple(sq | sq << 7 | k << 14 for k in TURNS_CLASSIC[m]) for m in range(256)]
    for sq in range(81)
]


def _step_table(classic: bool) -> list[tuple[tuple[int, Any], ...]]:
    """``[sq << 8 | mask]`` for one-point pieces (commander, shield): (target, move or moves).

    A shield's entry holds the plain motion and every motion-plus-turn to that target.
    """
    turns = TURNS_CLASSIC if classic else TURNS
    one_point = [m for m in range(1, 256) if _range_of(m) == 1]
    single = {m for m in one_point if bin(m).count("1") == 1}
    table: list[tuple[tuple[int, Any], ...]] = [()] * (81 * 256)
    for sq in range(81):
        for m in one_point:
            pairs: list[tuple[int, Any]] = []
            for ray in MOTIONS[sq][m]:
                for t, mv in ray:
                    if m in single:
                        pairs.append((t, (mv, *(mv | k << 14 for k in turns[m]))))
                    else:
                        pairs.append((t, mv))
            table[sq << 8 | m] = tuple(pairs)
    return table


STEPS = _step_table(False)
STEPS_CLASSIC = _step_table(True)
RAYS_FLAT = [MOTIONS[sq][m] for sq in range(81) for m in range(256)]
TURNS_FLAT = [TURN_MOVES[sq][m] for sq in range(81) for m in range(256)]
TURNS_FLAT_CLASSIC = [TURN_MOVES_CLASSIC[sq][m] for sq in range(81) for m in range(256)]


def mask_of(dirs: str | Sequence[str]) -> int:
    """The flag mask of direction names (``"NW NE S"`` or ``["NW", "NE", "S"]``)."""
    if isinstance(dirs, str):
        dirs = dirs.replace(",", " ").split()
    mask = 0
    for name in dirs:
        mask |= 1 << DIR_INDEX[name.upper()]
    return mask


def dirs_of(mask: int) -> list[str]:
    """Direction names of a flag mask, clockwise from north (``["N", "NE", ...]``)."""
    order = (0, 7, 6, 5, 4, 3, 2, 1)
    return [DIR_NAMES[d] for d in order if mask >> d & 1]


# --------------------------------------------------------------------------- setups

_C, _HL, _ML, _LL = COMMANDER, HEAVY_LANCE, MEDIUM_LANCE, LIGHT_LANCE
_HP, _MP, _LP, _SH = HEAVY_PROBE, MEDIUM_PROBE, LIGHT_PROBE, SHIELD

SETUP_2P_GREEN = (
    ("e1", _C, "NE NW SE SW"),
    ("d1", _HL, "NW N NE"),
    ("f1", _HL, "NW N NE"),
    ("c1", _LL, "NW NE S"),
    ("g1", _LL, "NW NE S"),
    ("b1", _ML, "W N E"),
    ("h1", _ML, "W N E"),
    ("e2", _LP, "N S"),
    ("d2", _MP, "NW NE"),
    ("f2", _MP, "NW NE"),
    ("c2", _HP, "N NE"),
    ("g2", _HP, "N NW"),
    ("d3", _SH, "N"),
    ("e3", _SH, "N"),
    ("f3", _SH, "N"),
)

SETUP_4P_GREEN = (
    ("a1", _C, "N E S W"),
    ("a2", _HL, "N NE E"),
    ("b1", _ML, "NE NW SE"),
    ("b2", _MP, "N E"),
    ("a3", _HP, "E SE"),
    ("c1", _HP, "N NW"),
    ("c2", _SH, "NE"),
    ("b3", _SH, "NE"),
    ("c3", _SH, "NE"),
)

SETUP_PARTNERSHIP_RED = (  # red's block; blue's is the same four columns to the right,
    # except that the lances change sides (medium lance on h1, heavy lance on f1)
    ("c1", _C, "NE NW SE SW"),
    ("b1", _ML, "W N E"),
    ("d1", _HL, "NW N NE"),
    ("b2", _HP, "N NE"),
    ("c2", _MP, "NW NE"),
    ("d2", _HP, "N NW"),
    ("b3", _SH, "N"),
    ("c3", _SH, "N"),
    ("d3", _SH, "N"),
)


def _turn_square(sq: int, quarter_turns_cw: int) -> int:
    """The point ``sq`` turned about e5 by 90 degrees clockwise ``quarter_turns_cw`` times."""
    x, y = sq % 9 - 4, sq // 9 - 4
    for _ in range(quarter_turns_cw % 4):
        x, y = y, -x
    return (y + 4) * 9 + x + 4


def _mirror_ns(sq: int) -> int:
    return (8 - sq // 9) * 9 + sq % 9


def _mirror_ns_mask(mask: int) -> int:
    flip = (4, 3, 2, 1, 0, 7, 6, 5)  # N<->S, NW<->SW, NE<->SE
    return sum(1 << flip[d] for d in DIRS_OF[mask])


def initial_board(players: int, partnership: bool) -> list[int]:
    """The starting array of 81 points for a variant (DECISIONS.md, Ploy)."""
    board = [0] * 81
    if players == 2:
        for army, quarter in ((0, 0), (1, 2)):
            for name, kind, dirs in SETUP_2P_GREEN:
                sq = _turn_square(SQUARE[name], quarter)
                board[sq] = army << 12 | kind << 8 | ROT[mask_of(dirs)][quarter * 2 % 8]
    elif not partnership:
        for army in range(4):  # green a1, red a9 (90 cw), yellow i9 (180), blue i1 (90 ccw)
            for name, kind, dirs in SETUP_4P_GREEN:
                sq = _turn_square(SQUARE[name], army)
                board[sq] = army << 12 | kind << 8 | ROT[mask_of(dirs)][(8 - 2 * army) % 8]
    else:
        for army in range(4):  # green c9, red c1, yellow g9, blue g1
            shift = 4 if army in (2, 3) else 0
            top = army in (0, 2)
            for name, kind, dirs in SETUP_PARTNERSHIP_RED:
                sq = SQUARE[name] + shift
                if shift and kind in (_ML, _HL):  # the lances swap sides: h1 medium, f1 heavy
                    sq = SQUARE[name] // 9 * 9 + 8 - SQUARE[name] % 9
                mask = mask_of(dirs)
                if top:
                    sq, mask = _mirror_ns(sq), _mirror_ns_mask(mask)
                board[sq] = army << 12 | kind << 8 | mask
    return board


# --------------------------------------------------------------------------- position

IN, ABSORBED, OUT = 0, 1, 2
"""Seat status: in play; out but keeping turns that the partner plays (partnership); out."""

_MOVE_RE = re.compile(r"([a-z])(\d+)(?:([-x])([a-z])(\d+))?(?:([+-])(\d+))?(#?)")


class PloyPosition(Position):
    """A Ploy position: the board, who controls which army, seat status and the turn."""

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
        position = GAME.new(players, dict(params or {}))
        assert isinstance(position, cls)
        position.board = [0] * 81
        for name, (colour, kind, dirs) in (pieces or {}).items():
            position.place(name, colour, kind, dirs)
        position.turn = turn
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
                COLOURS[s][0].upper(),
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
                    self._captured(q)
            else:
                board[frm] = p
        if self.result is None:
            self._advance()

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
        if self.num_seats == 2:
            self._finish((actor,), f"{COLOURS[victim]}: {why}")
            self.status[victim] = OUT
            self.notes[victim] = f"eliminated by {COLOURS[actor]} ({why})"
            return
        if self.partnership:
            partner = (victim + 2) % 4
            if self.status[partner] == IN:
                self.status[victim] = ABSORBED
                self._hand_over(victim, partner)
                self.notes[victim] = f"{why}; absorbed by {COLOURS[partner]}"
            else:
                self.notes[victim] = f"eliminated by {COLOURS[actor]} ({why})"
                self._team_loses(victim, f"{COLOURS[victim]}: {why}; the team is beaten")
            return
        if self.params.get("classic") and ships == 0:
            self._remove_commanders(victim)  # the German rule: a bare commander leaves the board
        self.status[victim] = OUT
        self._hand_over(victim, actor)
        self.notes[victim] = f"eliminated by {COLOURS[actor]} ({why})"
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
        name = COLOURS[seat]
        if self.num_seats == 2:
            self.status[seat] = OUT
            self.notes[seat] = "resigned"
            self._finish((1 - seat,), f"{name} resigned")
            return
        if self.partnership:
            actor = self.controller(seat)
            partner = (seat + 2) % 4
            if actor != seat or self.status[partner] != IN:
                self.notes[actor] = "resigned"
                self._team_loses(seat, f"{COLOURS[actor]} resigned for the team")
                return
            self.status[seat] = ABSORBED
            self._hand_over(seat, partner)
            self.notes[seat] = f"resigned; absorbed by {COLOURS[partner]}"
            if self.params.get("classic") and self._beaten(partner):
                self._team_loses(seat, f"{name} resigned and {COLOURS[partner]} is beaten")
                return
            self._advance()
            return
        ctrl = self.ctrl
        board = self.board
        for sq, p in enumerate(board):
            if p and ctrl[p >> 12] == seat:
                board[sq] = 0
        self.status[seat] = OUT
        self.notes[seat] = "resigned"
        live = [s for s in range(4) if self.status[s] == IN]
        if len(live) == 1:
            self._finish(tuple(live), "the others resigned or were eliminated")
            return
        self._advance()

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

    def copy(self) -> PloyPosition:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.params = dict(self.params)
        new.board = self.board[:]
        new.ctrl = self.ctrl[:]
        new.status = self.status[:]
        new.cmd_lost = self.cmd_lost[:]
        new.notes = self.notes[:]
        return new

    # ----- drawing

    def board_context(self) -> dict[str, Any]:
        rows = []
        for r in range(8, -1, -1):
            top, mid, bot = [], [], []
            for c in range(9):
                p = self.board[r * 9 + c]
                t, m, b = _cell(p)
                top.append(t)
                mid.append(m)
                bot.append(b)
            rows.append({"rank": r + 1, "lines": [" ".join(top), " ".join(mid), " ".join(bot)]})
        seats = []
        for s, info in enumerate(self.seats()):
            parts = [] if info.in_play else ["out"]
            if info.note:
                parts.append(info.note)
            armies = [COLOURS[a] for a, c in enumerate(self.ctrl) if c == s and a != s]
            if armies:
                parts.append(f"also moves {', '.join(armies)}")
            seats.append(
                {
                    "mark": BRACKETS[s][0] + "X" + BRACKETS[s][1],
                    "label": info.label,
                    "team": None if info.team is None else ("green+yellow", "red+blue")[info.team],
                    "text": "; ".join(parts),
                    "to_move": self.to_move == s,
                }
            )
        to_move = self.to_move
        return {
            "files": list(FILES),
            "rows": rows,
            "seats": seats,
            "to_move": None if to_move is None else COLOURS[to_move],
            "played_by": (
                None
                if to_move is None or self.controller(to_move) == to_move
                else COLOURS[self.controller(to_move)]
            ),
            "partnership": self.partnership,
            "kinds": [(KIND_LETTERS[k], KIND_NAMES[k]) for k in range(8)],
            "result": None if self.result is None else self.result[1],
        }


def _cell(p: int) -> tuple[str, str, str]:
    """A point as three 5-character strings: flags around the bracketed kind letter."""
    if not p:
        return "     ", "  .  ", "     "
    m = p & 255
    army, kind = p >> 12, p >> 8 & 15

    def f(d: int, ch: str) -> str:
        return ch if m >> d & 1 else " "

    br = BRACKETS[army]
    top = f"{f(1, chr(92))} {f(0, '|')} {f(7, '/')}"
    mid = f"{f(2, '-')}{br[0]}{KIND_LETTERS[kind]}{br[1]}{f(6, '-')}"
    bot = f"{f(3, '/')} {f(4, '|')} {f(5, chr(92))}"
    return top, mid, bot


GAME = Game(
    "ploy",
    "Ploy",
    PloyPosition,
    players=(2, 4),
    params=(
        Param(
            "partnership",
            "four players in two teams, green+yellow against red+blue",
        ),
        Param(
            "classic",
            "the German box rules: turns of one 45 degree step, a bare commander is removed, "
            "partners play on to their last piece",
        ),
        Param("relaxed", "only the capture of his commander eliminates a player"),
    ),
    summary="capture the commander with pieces that move and turn along their flags",
)

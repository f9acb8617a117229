"""Ploy's tables: board geometry, direction flags, move tables and the starting setups.

Computed once at import; the engine's hot path is plain integer work on them (see
:mod:`pbmserv.games.ploy.position` for the representation of points, pieces and moves).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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

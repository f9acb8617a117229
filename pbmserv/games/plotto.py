"""Plotto: numbered hex pieces placed without a board; a line of four with your number at both ends.

Geometry.  Flat-topped hexes stand in columns, as the help text draws them (``__``, ``/n \\``,
``\\__/``); neighbouring columns are offset by half a cell.  A cell is ``(x, y)`` in *doubled*
coordinates: ``x`` is the column (left to right), ``y`` the half-row (top to bottom, so a cell and
the one below it differ by 2), and ``x + y`` is always even.  The six neighbours of ``(x, y)`` are
``(x, y +- 2)`` and ``(x +- 1, y +- 1)``; these are also the three straight axes.  The first piece
goes on ``(0, 0)``.  Internally a cell is one int, ``(x + OFF) * STRIDE + (y + OFF)``, so sorting
cells sorts them column by column from the left and top to bottom in a column: exactly the order
in which the labels a, b, c ... are handed out.

Rulings (also in templates/help/plotto.txt):

* A cell is labelled (playable) when it touches enough pieces (the centre for the first piece, one
  piece for the second, two for every later one) and at least one number 1..4 is missing among its
  neighbours.  A cell touching all four numbers gets no label (the help's example has none; its
  list of valid moves is exactly the labelled cells times their allowed numbers).
* A line is any run of four or more consecutive pieces on one axis, with no gap, whose two END
  pieces carry the number; pieces beyond either end do not matter.  Only lines through the newly
  placed piece are new, so only those are looked for; lines made earlier for other players (when
  play continued) stay on the board and never count later.
* Lines for one player: he wins, whoever moved.  Lines for several: the mover wins if he is among
  them, otherwise play continues.  Lines for a resigned player are ignored.
* Two players: numbers 3 and 4 are neutral.  ``-tournament`` (two players only): seat 0 wins with
  a line whose ends are 1 and 3 (one of each, either order), seat 1 with ends 2 and 4.
* No playable cell left: a tie.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Self

from pbmserv.games.base import (
    Game,
    IllegalMove,
    Outcome,
    Param,
    PlayersError,
    Position,
    SeatInfo,
    UnreadableMove,
)

OFF = 2048  # coordinate offset: cells stay far inside +-OFF in any game
STRIDE = 4096
CENTRE = OFF * STRIDE + OFF
AXES = (2, STRIDE + 1, STRIDE - 1)  # down, down-right, up-right
NEIGHBOURS = (2, -2, STRIDE + 1, -STRIDE - 1, STRIDE - 1, -STRIDE + 1)
FULL = 0b11110  # bits 1..4 of a number mask
BOARD_WIDTH = 76
PANEL_COLUMNS = 22  # hex columns per panel when the drawing must be split

_MOVE_RE = re.compile(r"([a-z]+)(\d+)|(\d+)([a-z]+)", re.ASCII)


def cell_of(x: int, y: int) -> int:
    """The internal int of cell ``(x, y)`` (doubled coordinates, ``x + y`` even)."""
    return (x + OFF) * STRIDE + (y + OFF)


def xy_of(cell: int) -> tuple[int, int]:
    """The ``(x, y)`` doubled coordinates of an internal cell int."""
    return cell // STRIDE - OFF, cell % STRIDE - OFF


def label_of(index: int) -> str:
    """The label of the ``index``-th playable cell: a..z, then aa, ab, ..., zz, then aaa ..."""
    width, count = 1, 26
    while index >= count:
        index -= count
        width += 1
        count *= 26
    chars = []
    for _ in range(width):
        index, r = divmod(index, 26)
        chars.append(chr(97 + r))
    return "".join(reversed(chars))


def index_of(label: str) -> int:
    """Inverse of :func:`label_of`."""
    base = sum(26**w for w in range(1, len(label)))
    value = 0
    for ch in label:
        value = value * 26 + ord(ch) - 97
    return base + value


def read_diagram(text: str) -> dict[tuple[int, int], str]:
    """The numbers and letters drawn inside hexes of a help-style diagram, by doubled coordinates.

    Tokens (a digit, or a run of letters) are read where a hex's number stands (``/n \\``: the
    character after the ``/``).  Columns are 3 characters apart; the leftmost token column is
    ``x = 0`` and lines are half-rows, shifted by one if needed so that ``x + y`` is even.
    Used by tests to rebuild the help's example; see :meth:`PlottoPosition.from_pieces`.
    """
    found: list[tuple[int, int, str]] = []
    for line_no, line in enumerate(text.splitlines()):
        for m in re.finditer(r"[1-4]|[a-z]+", line):
            found.append((line_no, m.start(), m.group()))
    if not found:
        return {}
    left = min(col for _, col, _ in found)
    if any((col - left) % 3 for _, col, _ in found):
        raise ValueError("diagram tokens are not on a 3-character column grid")
    line0, col0, _ = found[0]
    shift = ((col0 - left) // 3 + line0) % 2
    return {((col - left) // 3, line + shift): tok for line, col, tok in found}


def line_owner(a: int, b: int, players: int, tournament: bool) -> int | None:
    """The seat a line with end numbers ``a`` and ``b`` wins for, if any."""
    if tournament:
        return (a - 1) % 2 if a != b and a % 2 == b % 2 else None  # {1, 3} or {2, 4}
    return a - 1 if a == b and a <= players else None


def line_seats(
    board: dict[int, int], cell: int, number: int, players: int, tournament: bool
) -> set[int]:
    """Seats for which ``number`` on the empty ``cell`` completes a line of 4+ through it.

    Any 4 or more consecutive pieces with the seat's number(s) at both ends count, whatever
    lies beyond them (public: the robots use it to count threats).
    """
    seats: set[int] = set()
    for d in AXES:
        back = [number]
        c = cell - d
        while c in board:
            back.append(board[c])
            c -= d
        fwd = [number]
        c = cell + d
        while c in board:
            fwd.append(board[c])
            c += d
        if len(back) + len(fwd) < 5:  # the run (cell counted twice) is shorter than 4
            continue
        for i, a in enumerate(back):
            for j in range(max(0, 3 - i), len(fwd)):
                seat = line_owner(a, fwd[j], players, tournament)
                if seat is not None:
                    seats.add(seat)
    return seats


class PlottoPosition(Position):
    """A Plotto position: pieces on an unbounded hex grid, incremental playable-cell bookkeeping."""

    def __init__(self, players: int, params: Mapping[str, bool | int]) -> None:
        super().__init__(players, params)
        self._reset()

    def _reset(self) -> None:
        self.turn = 0
        self.winner: int | None = None
        self.tied = False
        self.board: dict[int, int] = {}  # cell -> number 1..4, in placement order
        self.count: dict[int, int] = {}  # empty cell -> neighbouring pieces
        self.mask: dict[int, int] = {}  # empty cell -> bits of neighbouring numbers
        self.open: set[int] = {CENTRE}  # labelled (playable) cells
        self._order: list[int] | None = None
        self._index: dict[int, int] | None = None

    # ----- set-up

    @classmethod
    def from_pieces(
        cls,
        pieces: Mapping[tuple[int, int], int],
        players: int = 2,
        params: Mapping[str, bool | int] | None = None,
        turn: int = 0,
    ) -> PlottoPosition:
        """A position with ``pieces`` ({(x, y): number}, doubled coordinates) and ``turn`` to move.

        The public way to set up arbitrary positions (tests, analysis): no placement rule is
        checked and no line is looked for; ``ply`` stays 0.
        """
        game = cls.game
        full = game.defaults()
        full.update(params or {})
        game.check_players(players, full)
        position = cls(players, full)
        for (x, y), number in pieces.items():
            if (x + y) % 2:
                raise ValueError(f"({x}, {y}) is not a cell: x + y must be even")
            position._place(cell_of(x, y), number)
        position.turn = turn
        return position

    # ----- contract hooks

    @classmethod
    def check_players(cls, count: int, params: Mapping[str, bool | int]) -> None:
        """-tournament pairs numbers 1/3 and 2/4, which needs exactly two players."""
        if params.get("tournament") and count != 2:
            raise PlayersError("-tournament is for two-player games only")

    @property
    def to_move(self) -> int | None:
        return None if self.outcome() is not None else self.turn

    def seats(self) -> tuple[SeatInfo, ...]:
        out = []
        for seat in range(self.num_seats):
            note = self.left([seat]) if seat in self.resigned else f"wins with {self._ends(seat)}"
            out.append(
                SeatInfo(str(seat + 1), str(seat + 1), in_play=seat not in self.resigned, note=note)
            )
        return tuple(out)

    def _ends(self, seat: int) -> str:
        if self.params.get("tournament"):
            return "1..3 or 3..1" if seat == 0 else "2..4 or 4..2"
        return f"{seat + 1}..{seat + 1}"

    def move_list(self) -> list[int]:
        """Every legal move of the seat to move, as the engine's values (no swap; the robots'
        fast path around :meth:`legal_moves`, which checks first that the game goes on)."""
        return list(self._generate())

    def _generate(self) -> Iterator[int]:
        mask = self.mask
        for cell in self.order():
            bits = mask.get(cell, 0)
            base = cell * 8
            for n in (1, 2, 3, 4):
                if not bits >> n & 1:
                    yield base + n

    def _parse(self, text: str) -> int:
        m = _MOVE_RE.fullmatch(text)
        if m is None:
            raise UnreadableMove(
                f"'{text}' is not a Plotto move: give a cell's letter and a number 1 to 4, e.g. e1"
            )
        label, digits = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        number = int(digits) if len(digits) < 6 else 99999
        order = self.order()
        idx = index_of(label) if len(label) < 6 else len(order)
        labels = f"a to {label_of(len(order) - 1)}" if len(order) > 1 else "only a"
        if not 1 <= number <= 4:
            raise IllegalMove(f"{text}: pieces are numbered 1 to 4, not {digits}")
        if idx >= len(order):
            raise IllegalMove(
                f"{text}: no cell is labelled '{label}' now (the labels are {labels})"
            )
        cell = order[idx]
        if self.mask.get(cell, 0) >> number & 1:
            allowed = ", ".join(str(n) for n in range(1, 5) if not self.mask[cell] >> n & 1)
            raise IllegalMove(
                f"{text}: cell {label} touches a {number} (a piece may not touch its own number);"
                f" {label} takes {allowed}"
            )
        return cell * 8 + number

    def queue_text(self, text: str) -> str:
        """Refused: the letters are handed out again after every move (no cell keeps its
        name), so a queued letter would name another cell by the player's turn."""
        raise IllegalMove(
            "Plotto moves cannot be queued: the letters are handed out again after every"
            " move, so by your turn this letter would name another cell; send your move"
            " when it is your turn"
        )

    def _format(self, move: Any) -> str:
        cell, number = divmod(move, 8)
        return f"{label_of(self.index()[cell])}{number}"

    def _apply(self, move: Any) -> None:
        cell, number = divmod(move, 8)
        mover = self.turn
        self._place(cell, number)
        seats = self._line_seats(cell, number) - self.resigned
        if seats:
            if mover in seats:
                self.winner = mover
                return
            if len(seats) == 1:
                self.winner = next(iter(seats))
                return
        if not self.open:
            self.tied = True
            return
        self._advance()

    def _resign(self, seat: int) -> None:
        if self.turn == seat:
            self._advance()

    def outcome(self) -> Outcome | None:
        if self.winner is not None:
            return Outcome((self.winner,), f"line of four for player {self.winner + 1}")
        if self.tied:
            return Outcome((), "no legal placement remains")
        if self.resigned:
            live = [s for s in range(self.num_seats) if s not in self.resigned]
            if len(live) <= 1:
                return Outcome(tuple(live), self.gone(range(self.num_seats)))
        return None

    def _state(self) -> Any:
        pieces = []
        for cell, number in self.board.items():
            x, y = xy_of(cell)
            pieces.append([x, y, number])
        return {"b": pieces, "t": self.turn, "w": self.winner, "tie": self.tied}

    def _load_state(self, state: Any) -> None:
        self._reset()
        for x, y, number in state["b"]:
            self._place(cell_of(x, y), number)
        self.turn = state["t"]
        self.winner = state["w"]
        self.tied = state["tie"]

    def copy(self) -> Self:
        """A fast copy: the dicts are copied, nothing is recomputed."""
        other = type(self).__new__(type(self))
        Position.__init__(other, self.num_seats, self.params)
        other.ply, other.swapped, other.resigned = self.ply, self.swapped, self.resigned
        other.forfeited = self.forfeited
        other.turn, other.winner, other.tied = self.turn, self.winner, self.tied
        other.board, other.count, other.mask = dict(self.board), dict(self.count), dict(self.mask)
        other.open = set(self.open)
        other._order, other._index = self._order, self._index
        return other

    # ----- engine internals

    def order(self) -> list[int]:
        """The playable cells in label order (column by column from the left, top to bottom)."""
        if self._order is None:
            self._order = sorted(self.open)
        return self._order

    def index(self) -> dict[int, int]:
        """Playable cell -> its label index."""
        if self._index is None:
            self._index = {cell: i for i, cell in enumerate(self.order())}
        return self._index

    def labels(self) -> dict[str, tuple[int, int]]:
        """Label -> (x, y) of every playable cell, in label order."""
        return {label_of(i): xy_of(cell) for i, cell in enumerate(self.order())}

    def _place(self, cell: int, number: int) -> None:
        """Put a piece down and update neighbour counts, masks and the playable set."""
        board, count, mask, open_ = self.board, self.count, self.mask, self.open
        board[cell] = number
        count.pop(cell, None)
        mask.pop(cell, None)
        open_.discard(cell)
        bit = 1 << number
        for d in NEIGHBOURS:
            nb = cell + d
            if nb in board:
                continue
            count[nb] = count.get(nb, 0) + 1
            mask[nb] = mask.get(nb, 0) | bit
        pieces = len(board)
        if pieces <= 2:  # the threshold changes: recompute the whole (tiny) set
            need = 1 if pieces == 1 else 2
            open_.clear()
            open_.update(c for c, k in count.items() if k >= need and mask[c] != FULL)
        else:
            for d in NEIGHBOURS:
                nb = cell + d
                if nb in board:
                    continue
                if count[nb] >= 2 and mask[nb] != FULL:
                    open_.add(nb)
                else:
                    open_.discard(nb)
        self._order = None
        self._index = None

    def _line_seats(self, cell: int, number: int) -> set[int]:
        """Seats for which a new line (4+ pieces, through ``cell``) has their number(s) at the ends."""
        return line_seats(
            self.board, cell, number, self.num_seats, bool(self.params.get("tournament"))
        )

    def _advance(self) -> None:
        for _ in range(self.num_seats):
            self.turn = (self.turn + 1) % self.num_seats
            if self.turn not in self.resigned:
                return

    # ----- drawing

    def board_context(self) -> dict[str, Any]:
        """Pre-built drawing panels, the valid-move lines and the seat notes for the template."""
        order = self.order()
        outcome = self.outcome()
        moves = [self._format(m) for m in self._generate()] if outcome is None else []
        to_move = self.to_move
        return {
            "panels": draw_panels(self.board, order if outcome is None else []),
            # a board ended off the board (a draw agreed, a withdrawal): no cell to play
            "bare_panels": BarePanels(dict(self.board)),
            "moves": textwrap.wrap(", ".join(moves), BOARD_WIDTH - 4) if moves else [],
            "seats": [
                {"label": s.label, "note": s.note, "turn": i == to_move}
                for i, s in enumerate(self.seats())
            ],
            "pieces": len(self.board),
            "example": moves[-1] if moves else "e1",
            "result": None if outcome is None else outcome.reason,
            "to_move": None if to_move is None else to_move + 1,
            "tournament": bool(self.params.get("tournament")),
            "players": self.num_seats,
        }


def draw_lines(board: Mapping[int, int], order: list[int], columns: Iterable[int]) -> list[str]:
    """The hex drawing (help-text style) of the pieces and labels in the given columns ``x``."""
    cols = sorted(columns)
    if not cols:
        return []
    first = cols[0]
    wanted = set(cols)
    chars: dict[tuple[int, int], str] = {}

    def put(y: int, col: int, text: str) -> None:
        for k, ch in enumerate(text):
            chars[(y, col + k)] = ch

    for cell, number in board.items():
        x, y = xy_of(cell)
        if x not in wanted:
            continue
        c = 3 * (x - first)
        put(y - 1, c + 1, "__")
        put(y, c, f"/{number} \\")
        put(y + 1, c, "\\__/")
    for i, cell in enumerate(order):
        x, y = xy_of(cell)
        if x in wanted:
            put(y, 3 * (x - first) + 1, label_of(i))
    if not chars:
        return []
    top = min(y for y, _ in chars)
    bottom = max(y for y, _ in chars)
    width = max(col for _, col in chars) + 1
    rows = [[" "] * width for _ in range(bottom - top + 1)]
    for (y, col), ch in chars.items():
        rows[y - top][col] = ch
    return ["".join(r).rstrip() for r in rows]


@dataclass
class BarePanels:
    """The drawing without cells to play (for a game ended off the board), drawn only when a
    template calls it; compared as data, like the rest of a board's context."""

    board: dict[int, int]

    def __call__(self) -> list[dict[str, Any]]:
        return draw_panels(self.board, [])


def draw_panels(board: Mapping[int, int], order: list[int]) -> list[dict[str, Any]]:
    """The drawing split into panels of at most PANEL_COLUMNS hex columns, each with a ruler.

    A small board is one panel.  A wide one is cut into vertical strips of nearly equal width,
    left to right (a 25-column board gives 13 + 12); the
    ruler above and below each strip numbers the hex columns of the whole drawing, so strips
    can be matched up.  Every strip's lines fit in 76 columns with its frame.
    """
    xs = {xy_of(c)[0] for c in board} | {xy_of(c)[0] for c in order}
    if not xs:
        return []
    lo, hi = min(xs), max(xs)
    strips = -(-(hi - lo + 1) // PANEL_COLUMNS)
    size = -(-(hi - lo + 1) // strips)  # strips of (nearly) equal width
    panels = []
    for start in range(lo, hi + 1, size):
        stop = min(hi, start + size - 1)
        lines = draw_lines(board, order, range(start, stop + 1))
        width = 3 * (stop - start) + 4
        ruler = [" "] * width
        for x in range(start, stop + 1):
            num = str((x - lo + 1) % 100)
            c = 3 * (x - start) + 1
            ruler[c : c + len(num)] = list(num)
        panels.append(
            {
                "lines": [line.ljust(width) for line in lines],
                "ruler": "".join(ruler),
                "rule": "-" * (width + 2),
                "first": start - lo + 1,
                "last": stop - lo + 1,
            }
        )
    return panels


GAME = Game(
    "plotto",
    "Plotto",
    PlottoPosition,
    players=(2, 3, 4),
    params=(
        Param(
            "tournament",
            "two players: player 1 wins with a 1..3 line, player 2 with a 2..4 line",
        ),
    ),
    summary="numbered hex pieces without a board; a line of four with your number at both ends",
)

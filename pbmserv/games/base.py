"""The game-engine contract: the only view of a game the server ever has.

A :class:`Game` is the metadata and factory of one game type (name, player counts, parameters).
A :class:`Position` is one state of a game: whose turn it is, the legal moves, parsing and
formatting move text, playing a move, the outcome, and a compact serialisation.

Engines subclass :class:`Position` and fill in a handful of hooks (``_generate``, ``_parse``,
``_format``, ``_apply``, ...).  The base class owns what every game shares: the pie-rule swap,
resignation, the ply counter and the serialisation envelope.  Engines are pure: no I/O, no
database, deterministic.

Turn order belongs to the engine.  ``to_move`` is the seat whose player must act next, or
``None`` once the game is over.  In partnership games an absorbed seat may still have turns that
its partner plays for it: ``controller(seat)`` names the seat whose player acts for it.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self, TypeAlias

Move: TypeAlias = Hashable
"""A move is any immutable, hashable value of the engine's choosing (or a :class:`SpecialMove`)."""


# --------------------------------------------------------------------------- errors


class MoveError(ValueError):
    """Base of the three ways a move text can be wrong; the message is meant for the player."""


class UnreadableMove(MoveError):
    """The text is not a move in this game's notation at all."""


class IllegalMove(MoveError):
    """The text names a move, but the rules do not allow it here."""


class AmbiguousMove(MoveError):
    """The text could mean more than one legal move."""


class ParamError(ValueError):
    """A game parameter (``-name[=value]``) is unknown, malformed or out of range."""


class _Unnamed(ParamError):
    """A token that names no parameter, or more than one: :meth:`Game.parse_params` says
    them all in one sentence, with the valid parameters once."""

    def __init__(self, what: str, token: str) -> None:
        super().__init__(f"{what} parameter '{token}'")
        self.what, self.token = what, token


MAX_NAMED = 5  # problems (and tokens of one kind) a parameter error names before "N more"


def name_some(noun: str, words: Sequence[str]) -> str:
    """``noun`` and the first :data:`MAX_NAMED` of ``words``, quoted: a line of thousands of
    unknown parameters or options gets one short sentence.

    >>> name_some("option", ["--x"]), name_some("parameter", [f"-p{i}" for i in range(7)])
    ("option '--x'", "parameters '-p0', '-p1', '-p2', '-p3', '-p4' and 2 more")
    """
    shown = ", ".join(f"'{w}'" for w in words[:MAX_NAMED])
    more = f" and {len(words) - MAX_NAMED} more" if len(words) > MAX_NAMED else ""
    return f"{noun}{'' if len(words) == 1 else 's'} {shown}{more}"


class PlayersError(ValueError):
    """The number (or arrangement) of players does not suit this game and its parameters."""


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class SpecialMove:
    """A move every game understands the same way: ``pass``, ``swap`` or ``resign``."""

    word: str

    def __str__(self) -> str:
        return self.word


PASS = SpecialMove("pass")
SWAP = SpecialMove("swap")
RESIGN = SpecialMove("resign")
FORFEIT = SpecialMove("Forfeit")
"""The server's entry for a player out of time: a resignation in all but its wording (no player
can write it: it is not among the :data:`SPECIAL_WORDS`)."""
SPECIAL_WORDS: dict[str, SpecialMove] = {m.word: m for m in (PASS, SWAP, RESIGN)}


@dataclass(frozen=True)
class SeatInfo:
    """What the server shows about one seat: its colour or symbol, team, and whether it plays on."""

    label: str  # "green", "red", "o", "x", "1" ...
    symbol: str  # how the board drawing marks the seat's pieces: "b", "o", "1", Ploy's "[X]"
    team: int | None = None  # seats with equal team numbers play together
    in_play: bool = True
    note: str = ""  # e.g. "eliminated by red", "absorbed by yellow"

    def named(self) -> str:
        """The seat as the players' lists show it, by the mark the board uses: ``o``,
        ``b (blue)``, ``[X] red`` (a bracketed mark needs no more brackets)."""
        if self.label == self.symbol:
            return self.symbol
        if len(self.symbol) > 1:
            return f"{self.symbol} {self.label}"
        return f"{self.symbol} ({self.label})"


@dataclass(frozen=True)
class Capture:
    """What a move captures, for the board mail (a drawing shows only the last move, and a
    mail may report several: a reply and the queued or robot moves after it): the points of
    each seat's captured pieces (``pieces`` names them), and the points the capture fills with
    pieces of the mover (Pylon's in-place capture)."""

    taken: Mapping[int, tuple[str, ...]]
    added: tuple[str, ...] = ()
    pieces: str = "marble"  # the captured pieces' name: "marble", "dog", "heavy lance"


@dataclass(frozen=True)
class Outcome:
    """The end of a game: the winning seats and why it ended.  No winners is a draw, among
    the seats still in the game only (:meth:`Position.still_in`): the others keep their loss."""

    winners: tuple[int, ...]
    reason: str

    @property
    def draw(self) -> bool:
        return not self.winners


@dataclass(frozen=True)
class Param:
    """One pbmserv game parameter, written ``-name`` (flags) or ``-name=value`` (integers)."""

    name: str
    help: str
    default: bool | int = False
    minimum: int | None = None
    maximum: int | None = None

    @property
    def is_flag(self) -> bool:
        return isinstance(self.default, bool)

    @property
    def word(self) -> str:
        """As a player writes it: ``-swap``, ``-size=N``."""
        return f"-{self.name}" if self.is_flag else f"-{self.name}=N"

    def describe(self) -> str:
        if self.is_flag:
            return f"-{self.name}: {self.help}"
        return (
            f"-{self.name}=N: {self.help} ({self.minimum}..{self.maximum}, default {self.default})"
        )


SWAP_PARAM = Param(
    "swap", "the second player may swap seats instead of moving (pie rule; two players)"
)


# --------------------------------------------------------------------------- game metadata


class Game:
    """Metadata and factory of one game type; one instance per game, held in the registry."""

    def __init__(
        self,
        name: str,
        display_name: str,
        position_class: type[Position],
        *,
        players: Sequence[int],
        params: Sequence[Param] = (),
        aliases: Sequence[str] = (),
        swap: str = "param",
        summary: str = "",
    ) -> None:
        if swap not in ("param", "always", "never"):
            raise ValueError(f"swap must be param, always or never, not {swap!r}")
        self.name = name
        self.display_name = display_name
        self.position_class = position_class
        self.players = tuple(sorted(players))
        self.aliases = tuple(aliases)
        self.swap = swap
        self.summary = summary
        all_params = list(params)
        if swap == "param" and 2 in self.players:
            all_params.append(SWAP_PARAM)
        self.params: tuple[Param, ...] = tuple(all_params)
        position_class.game = self

    @property
    def min_players(self) -> int:
        return self.players[0]

    @property
    def max_players(self) -> int:
        return self.players[-1]

    def defaults(self) -> dict[str, bool | int]:
        return {p.name: p.default for p in self.params}

    def parse_params(self, tokens: Sequence[str]) -> dict[str, bool | int]:
        """Turn ``-name[=value]`` tokens into a full parameter dict (defaults filled in).

        A unique prefix names a parameter (``-tourn``).  Every problem is reported at once.
        """
        values = self.defaults()
        problems: dict[str, None] = {}  # each said once, in order ("-size=99" typed 5 times)
        unnamed: dict[str, list[str]] = {}  # "unknown"/"ambiguous": the tokens, said once
        given: set[str] = set()
        for token in tokens:
            try:
                name, value = self._parse_param(token)
            except _Unnamed as exc:
                unnamed.setdefault(exc.what, []).append(exc.token)
                continue
            except ParamError as exc:
                problems[str(exc)] = None
                continue
            if name in given:  # (-size=5 -size=6 took the last)
                problems[f"-{name} is given twice: give it once"] = None
            given.add(name)
            values[name] = value
        valid = ", ".join(p.word for p in self.params) or "none"  # (the help says more)
        for what, named in unnamed.items():
            problems[f"{what} {self.display_name} {name_some('parameter', named)}"] = None
        if unnamed:
            problems[f"valid parameters: {valid}"] = None
        said = list(problems)
        if len(said) > MAX_NAMED:  # (a line of thousands of bad values: a short answer)
            over = len(said) - MAX_NAMED
            said = [*said[:MAX_NAMED], f"{over} more problems with parameters"]
        if said:
            raise ParamError("; ".join(said))
        return values

    def _parse_param(self, token: str) -> tuple[str, bool | int]:
        body = token.lstrip("-")
        key, sep, raw = body.partition("=")
        key = key.lower()
        matches = [p for p in self.params if p.name == key] or [
            p for p in self.params if key and p.name.startswith(key)
        ]
        if not matches and key == "swap" and self.swap == "always":
            raise ParamError(
                f"{self.display_name} offers the swap (pie rule) in every two-player game: "
                "-swap is not needed"
            )
        if len(matches) != 1:
            raise _Unnamed("ambiguous" if matches else "unknown", token)
        param = matches[0]
        if param.is_flag:
            if sep and raw.lower() not in ("1", "yes", "true", "on", "0", "no", "false", "off"):
                raise ParamError(f"-{param.name} is a flag and takes no value")
            return param.name, (not sep) or raw.lower() in ("1", "yes", "true", "on")
        if not sep:
            raise ParamError(f"-{param.name} needs a value: {param.describe()}")
        try:
            value = int(raw)
        except ValueError:
            raise ParamError(f"-{param.name}={raw}: not a whole number") from None
        if (param.minimum is not None and value < param.minimum) or (
            param.maximum is not None and value > param.maximum
        ):
            raise ParamError(f"-{param.name}={value} is out of range: {param.describe()}")
        return param.name, value

    def format_params(self, values: Mapping[str, bool | int]) -> list[str]:
        """The tokens that recreate ``values`` (only those that differ from the defaults)."""
        out = []
        for p in self.params:
            v = values.get(p.name, p.default)
            if v == p.default:
                continue
            out.append(f"-{p.name}" if p.is_flag else f"-{p.name}={v}")
        return out

    @property
    def player_counts(self) -> str:
        """The numbers of players the game is for, in words: ``2, 3 or 4``."""
        counts = [str(n) for n in self.players]
        return " or ".join([", ".join(counts[:-1]), counts[-1]] if len(counts) > 1 else counts)

    def check_players(self, count: int, params: Mapping[str, bool | int]) -> None:
        """Raise :class:`PlayersError` if ``count`` players cannot play with these parameters."""
        if count not in self.players:
            raise PlayersError(
                f"{self.display_name} is played by {self.player_counts} players, not {count}"
            )
        if params.get("swap") and count != 2:
            raise PlayersError("-swap is for two-player games only")
        self.position_class.check_players(count, params)

    def new(self, players: int, params: Mapping[str, bool | int] | None = None) -> Position:
        """The initial position for ``players`` seats; ``params`` as from :meth:`parse_params`."""
        full = self.defaults()
        full.update(params or {})
        self.check_players(players, full)
        return self.position_class(players, full)

    def replay(
        self, players: int, params: Mapping[str, bool | int] | None, moves: Sequence[str]
    ) -> Position:
        """The position after playing the move texts ``moves`` from the start (each checked)."""
        position = self.new(players, params)
        for text in moves:
            position.push_text(text)
        return position

    def swap_enabled(self, players: int, params: Mapping[str, bool | int]) -> bool:
        if players != 2:
            return False
        return self.swap == "always" or (self.swap == "param" and bool(params.get("swap")))

    def __repr__(self) -> str:
        return f"Game({self.name!r})"


# --------------------------------------------------------------------------- positions


class Position(ABC):
    """One state of a game.  Subclasses implement the ``_hooks``; the public API is shared.

    The base class keeps: ``ply`` (moves played, swaps and resignations included),
    ``swapped`` (the pie rule was used), ``resigned`` (seats that resigned) and ``forfeited``
    (those of them that ran out of time: :data:`FORFEIT`, worded apart by :meth:`left`).
    """

    game: ClassVar[Game]

    def __init__(self, players: int, params: Mapping[str, bool | int]) -> None:
        self.num_seats = players
        self.params: dict[str, bool | int] = dict(params)
        self.ply = 0
        self.swapped = False
        self.resigned: frozenset[int] = frozenset()
        self.forfeited: frozenset[int] = frozenset()

    # ----- hooks for engines

    @classmethod
    def check_players(cls, count: int, params: Mapping[str, bool | int]) -> None:
        """Game-specific player checks (e.g. ``-tournament`` needs two); raise PlayersError."""

    @property
    @abstractmethod
    def to_move(self) -> int | None:
        """The seat whose player acts next, or None when the game is over."""

    @abstractmethod
    def seats(self) -> tuple[SeatInfo, ...]:
        """One :class:`SeatInfo` per seat, in seat order."""

    @abstractmethod
    def _generate(self) -> Iterator[Move]:
        """Every legal move of the seat to move (``PASS`` where the rules force a pass)."""

    @abstractmethod
    def _parse(self, text: str) -> Move:
        """A legal move from normalised text (lower case, no blanks); raise a MoveError."""

    @abstractmethod
    def _format(self, move: Move) -> str:
        """Canonical text of a legal move in this position (before it is played)."""

    @abstractmethod
    def _apply(self, move: Move) -> None:
        """Play a legal ordinary move (or ``PASS``) and advance the turn."""

    @abstractmethod
    def _resign(self, seat: int) -> None:
        """Take ``seat`` out of the game (``self.resigned`` already includes it)."""

    @abstractmethod
    def outcome(self) -> Outcome | None:
        """The result once the game is over, else None."""

    @abstractmethod
    def _state(self) -> Any:
        """The engine's part of the position as JSON-able data."""

    @abstractmethod
    def _load_state(self, state: Any) -> None:
        """Restore what :meth:`_state` returned."""

    @abstractmethod
    def board_context(self) -> dict[str, Any]:
        """Plain data for ``templates/boards/<game>.txt.j2``."""

    def copy(self) -> Self:
        """An independent copy (engines may override with something faster)."""
        return type(self).deserialize(self.serialize())

    def controller(self, seat: int) -> int:
        """The seat whose player acts for ``seat`` (differs only in partnership take-overs)."""
        return seat

    def draw_warnings(self) -> list[str]:
        """Warnings that the endless-game rulings will soon draw the game (see :class:`DrawWatch`)."""
        return []

    def repetitions(self) -> int:
        """How often this position has occurred with this player to move (1 in games that do
        not keep a record: every move there is irreversible)."""
        return 1

    def capture(self, move: Move) -> Capture | None:
        """What the legal ``move`` of the seat to move would capture (the board mail tells the
        players); None when it captures nothing, and in games without captures."""
        return None

    def queue_text(self, text: str) -> str:
        """``text`` written so that it names the same move after the other players' moves
        (it is queued, to be played on its player's turn), or a MoveError saying why this
        game's notation cannot: a queued move must mean what its player saw."""
        return text

    # ----- public API

    def is_over(self) -> bool:
        return self.outcome() is not None

    def swap_available(self) -> bool:
        return (
            self.ply == 1
            and not self.swapped
            and self.game.swap_enabled(self.num_seats, self.params)
            and self.outcome() is None
        )

    def legal_moves(self) -> Iterator[Move]:
        """Lazy view of every legal move (``SWAP`` first while the pie rule applies)."""
        if self.outcome() is not None:
            return
        if self.swap_available():
            yield SWAP
        yield from self._generate()

    def is_legal(self, move: Move) -> bool:
        return any(m == move for m in self.legal_moves())

    def parse_move(self, text: str) -> Move:
        """The legal move ``text`` names, or a :class:`MoveError` that says what is wrong."""
        if self.outcome() is not None:
            raise IllegalMove("the game is over")
        norm = "".join(text.split()).lower()
        if not norm:
            raise UnreadableMove("no move given")
        special = SPECIAL_WORDS.get(norm)
        if special is SWAP:
            if not self.swap_available():
                raise IllegalMove(self._why_no_swap())
            return SWAP
        if special is RESIGN:
            return RESIGN
        if special is PASS:
            if any(m == PASS for m in self._generate()):
                return PASS
            raise IllegalMove("you may not pass: you have a legal move")
        return self._parse(norm)

    def _why_no_swap(self) -> str:
        if not self.game.swap_enabled(self.num_seats, self.params):
            if self.num_seats != 2:
                return "swap is for two-player games only"
            return "this game was not started with -swap, so the pie rule does not apply"
        return "swap is allowed only as the second move of the game"

    def format_move(self, move: Move) -> str:
        if isinstance(move, SpecialMove):
            return move.word
        return self._format(move)

    def play(self, move: Move) -> None:
        """Play a move known to be legal (from :meth:`legal_moves` or :meth:`parse_move`)."""
        if move == SWAP:
            self.swapped = True  # seats are exchanged by the server; the board is unchanged
        elif move in (RESIGN, FORFEIT):
            seat = self.to_move
            if seat is None:
                raise IllegalMove("the game is over")
            if move == FORFEIT:
                self.forfeited = self.forfeited | {seat}
            self.resigned = self.resigned | {seat}
            self._resign(seat)
        else:
            self._apply(move)
        self.ply += 1

    def push_text(self, text: str) -> Move:
        """Parse, play and return the move ``text`` names."""
        move = self.parse_move(text)
        self.play(move)
        return move

    def serialize(self) -> str:
        """A compact JSON text of the whole position (parameters included)."""
        data = {
            "g": self.game.name,
            "n": self.num_seats,
            "p": self.params,
            "ply": self.ply,
            "sw": self.swapped,
            "rs": sorted(self.resigned),
            "s": self._state(),
        }
        if self.forfeited:  # (absent in positions saved before forfeits were told apart)
            data["ff"] = sorted(self.forfeited)
        return json.dumps(data, separators=(",", ":"), sort_keys=True)

    @classmethod
    def deserialize(cls, text: str) -> Self:
        data = json.loads(text)
        position = cls.__new__(cls)
        Position.__init__(position, data["n"], data["p"])
        position.ply = data["ply"]
        position.swapped = data["sw"]
        position.resigned = frozenset(data["rs"])
        position.forfeited = frozenset(data.get("ff", ()))
        position._load_state(data["s"])
        return position

    # ----- helpers for engines

    def left(self, seats: Iterable[int]) -> str:
        """How ``seats`` left the game, in words: "resigned", "forfeited on time" (out of
        time: :data:`FORFEIT`) or "resigned or forfeited on time" (some of each)."""
        gone = self.resigned.intersection(seats)
        words = []
        if gone - self.forfeited:
            words.append("resigned")
        if gone & self.forfeited:
            words.append("forfeited on time")
        return " or ".join(words) or "resigned"

    def gone(self, seats: Iterable[int]) -> str:
        """Why the last player left won: "the opponent resigned" with two players, "the others
        forfeited on time" with more (:meth:`left` says how)."""
        who = "the opponent" if self.num_seats == 2 else "the others"
        return f"{who} {self.left(seats)}"

    def live_seats(self) -> list[int]:
        """Seats still in play according to :meth:`seats`."""
        return [i for i, s in enumerate(self.seats()) if s.in_play]

    def still_in(self) -> tuple[int, ...]:
        """The seats a draw is drawn among: the others keep their loss (DECISIONS.md, "Endless
        games").  A seat in play is in, and so is one absorbed into a team with a seat still in
        play (it shares the team's draw as it would share its win); one that resigned or ran out
        of time never is."""
        infos = self.seats()
        teams = {s.team for s in infos if s.in_play and s.team is not None}
        return tuple(
            i
            for i, s in enumerate(infos)
            if i not in self.resigned and (s.in_play or (s.team is not None and s.team in teams))
        )

    def last_team_standing(self) -> Outcome | None:
        """An Outcome when all seats still in play belong to one team (or there is one seat)."""
        infos = self.seats()
        live = [i for i, s in enumerate(infos) if s.in_play]
        if not live:
            return Outcome((), "no player is left")
        teams = {infos[i].team if infos[i].team is not None else ("seat", i) for i in live}
        if len(teams) > 1:
            return None
        resigned = any(i in self.resigned for i in range(self.num_seats))
        others = [i for i in range(self.num_seats) if i not in live]
        why = self.gone(others) if resigned else "all opponents eliminated"
        return Outcome(tuple(live), why)

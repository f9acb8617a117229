"""The robots' search: iterative-deepening alpha-beta with a transposition table, for any game.

One search serves every game and every number of players.  It is written in *minimax* form
(not negamax) around one fixed point of view, the team of the seat that is to move at the root
(the "robot team"): nodes where a seat of the robot team moves are max nodes, all others are min
nodes.  With two players this is plain alpha-beta; with three or four it is the *paranoid*
search (every opponent is assumed to play against the robot team), which keeps alpha-beta
pruning sound when turn order is irregular (passes, eliminations, partners taking over turns).

Paranoia fails in a game where one opponent can hand the game to another (a Plotto line is won
by the seat whose number ends it, whoever placed the last piece): there the coalition wins from
almost every position, and the robot sees every move as lost.  An adapter whose ``multiplayer``
is ``"probe"`` is searched, when more than two teams are in play, with a *probe* instead: each
move of the robot is followed by one line in which every other seat plays the move its own
static evaluation likes best (a vector of scores, one per seat, so nobody is assumed to throw
the game to somebody else), up to the robot's next turn (:class:`ProbeSearcher`).  An adapter's
``probe_rounds`` lets the line go on for more rounds, the robot's team playing its own
statically best move between them (Pylon: a capture that the robot's next move walks into shows
only in the second round).  Pylon asks for the probe too, though nobody hands its game to
another: there the probe simply beat the paranoid search (:mod:`pbmserv.robots.pylon`).

The pieces, as in the Ploy program's engine (its manual: MTD(f), a transposition table,
node budgets):

* iterative deepening from depth 1; each iteration is driven by MTD(f) (a series of zero-window
  alpha-beta searches converging on the minimax value, guessed from the previous iteration), or
  by PVS (the first move with a full window, the others with a null window and a re-search);
* a transposition table keyed by the adapter's cheap position key, storing a bound (exact, lower,
  upper), the depth it holds for and the best move, which is tried first on the next visit;
* move ordering: the table move, then two killer moves per ply, then the adapter's static hint
  (captures, wins, central squares), then the history heuristic;
* a quiescence search over the adapter's "noisy" moves (captures) at the horizon, bounded in depth;
* a budget in nodes (reproducible: the search is deterministic) or in seconds; the move of the
  last finished iteration is played.

Scores are integers from the robot team's point of view; a win is worth ``WIN - plies`` so the
search prefers the fastest win and the slowest loss.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pbmserv.games.base import SWAP, Move, Position

WIN = 1_000_000
INF = 10 * WIN
EXACT, LOWER, UPPER = 0, 1, 2
MAX_PLY = 64
CONTEMPT = 30  # a repeated position scores this much below a draw for the robot team


class _OutOfBudget(Exception):
    """Raised inside the search when the node or time budget is spent."""


class Stopped(Exception):
    """The search was asked to stop (the server is stopping): no move is chosen.

    Why: a robot may think for a minute, and a server that waits for it outlives systemd's
    ``TimeoutStopSec`` and is killed; the turn is played again after the restart."""


@dataclass(frozen=True)
class Budget:
    """How much a robot may think per move: nodes (reproducible), seconds, and a depth cap."""

    nodes: int | None = None
    seconds: float | None = None
    depth: int = 40


@dataclass
class SearchResult:
    move: Move | None
    score: int
    depth: int  # the deepest finished iteration
    nodes: int
    seconds: float
    pv: list[Move] = field(default_factory=list)


Hashable = Any
P = TypeVar("P", bound=Position)


class Adapter(Generic[P]):
    """What the search needs to know about one game.  The defaults use only the engine contract
    (``copy``, ``play``, ``legal_moves``, ``outcome``), so they work for every game; per-game
    adapters (:mod:`pbmserv.robots.ploy`, ...) make them faster and smarter.  An adapter is
    typed with its engine's position class and reads only that class's public API."""

    driver = "pvs"  # or "mtdf"
    quiescence = 0  # plies of capture search at the horizon (not in the probe)
    multiplayer = "paranoid"  # or "probe": the search with more than two teams in play
    probe_rounds = 1  # rounds of replies in a probe's line (the robot's own best moves between)
    draw_margin = 0  # how far below even a robot stands before it accepts a draw (above the
    # tempo and the noise of a shallow search, so that an even position is no reason)

    def key(self, pos: P) -> Hashable:
        return pos.serialize()

    def moves(self, pos: P) -> Sequence[Move]:
        return [m for m in pos.legal_moves() if m != SWAP]

    def play(self, pos: P, move: Move) -> P:
        child = pos.copy()
        child.play(move)
        return child

    def team(self, pos: P, seat: int) -> Any:
        """The team of ``seat``; seats of one team are on one side of the search."""
        info = pos.seats()[seat]
        return ("team", info.team) if info.team is not None else ("seat", seat)

    def evaluate(self, pos: P, team: Any) -> int:
        """A static score of a position that is not over, from ``team``'s point of view."""
        return 0

    def evaluate_seats(self, pos: P) -> list[int]:
        """Per seat, :meth:`evaluate` from its team's point of view (the probe's score vector)."""
        return [self.evaluate(pos, self.team(pos, s)) for s in range(pos.num_seats)]

    def hint(self, pos: P, move: Move) -> int:
        """A static ordering score of ``move`` in ``pos``; higher is tried first."""
        return 0

    def noisy(self, pos: P, move: Move) -> bool:
        """Whether ``move`` is worth searching past the horizon (a capture)."""
        return False

    def mover_team(self, pos: P) -> Any:
        """The team of the seat whose player acts now (the game is not over)."""
        seat = pos.to_move
        if seat is None:
            raise ValueError("the game is over")
        return self.team(pos, pos.controller(seat))


def terminal_score(pos: Position, adapter: Adapter[Any], team: Any, ply: int) -> int | None:
    """The score of a finished game (None while it goes on): a win for the team, a loss, or 0."""
    if pos.to_move is not None:
        return None
    outcome = pos.outcome()
    if outcome is None:
        return 0
    if outcome.draw:  # among the seats still in: one already out keeps its loss
        return 0 if any(adapter.team(pos, s) == team for s in pos.still_in()) else -WIN + ply
    ours = [s for s in outcome.winners if adapter.team(pos, s) == team]
    if len(ours) == len(outcome.winners):
        return WIN - ply
    if ours:  # shared with an opponent (Pylon's joint winners)
        return 0
    return -WIN + ply


class Searcher:
    """One search from one root position (a fresh table each time: reproducible)."""

    def __init__(
        self,
        adapter: Adapter[Any],
        budget: Budget,
        clock: Callable[[], float] = time.monotonic,
        stop: Callable[[], bool] | None = None,
    ):
        self.adapter = adapter
        self.budget = budget
        self.clock = clock
        self.stop = stop  # asked with the clock, every 128 nodes: true raises Stopped
        self.table: dict[Hashable, tuple[int, int, int, Move | None]] = {}
        self.killers: list[list[Move]] = [[] for _ in range(MAX_PLY + 8)]
        self.history: dict[Move, int] = {}
        self.nodes = 0
        self.deadline = 0.0
        self.team: Any = None
        self.hard = True  # the node budget applies (off while depth 1 is searched)
        self.root_best: Move | None = None  # the best root move of the iteration under way

    # ----- budget

    def _tick(self) -> None:
        """Count a node; stop at the node budget (from depth 2) or the time budget (always),
        and give up when asked to (:class:`Stopped`)."""
        self.nodes += 1
        nodes = self.budget.nodes
        if self.hard and nodes is not None and self.nodes >= nodes:
            raise _OutOfBudget
        if self.nodes & 127:
            return
        if self.stop is not None and self.stop():
            raise Stopped
        if self.budget.seconds is not None and self.clock() >= self.deadline:
            raise _OutOfBudget

    # ----- the driver

    def run(self, root: Position) -> SearchResult:
        """The move to play at ``root``: none when the game is over, the only one at once."""
        start = self.clock()
        self.deadline = start + (self.budget.seconds or 0.0)
        seat = root.to_move
        if seat is None:
            return SearchResult(None, 0, 0, 0, 0.0)
        self.team = self.adapter.team(root, root.controller(seat))
        moves = self.adapter.moves(root)
        if len(moves) == 1:
            return SearchResult(moves[0], 0, 0, 1, self.clock() - start, [moves[0]])
        return self._search(root, moves, start)

    def _search(self, root: Position, moves: Sequence[Move], start: float) -> SearchResult:
        """Iterative deepening over ``moves`` (two or more, or none) until the budget ends."""
        best: Move | None = moves[0] if moves else None
        score, done = 0, 0
        guess = self.adapter.evaluate(root, self.team)
        for depth in range(1, self.budget.depth + 1):
            self.hard = depth > 1
            try:  # the root's value searched to ``depth`` (the move goes into the table)
                if self.adapter.driver == "mtdf":
                    value = self._mtdf(root, depth, guess)
                else:
                    value = self._alphabeta(root, depth, -INF, INF, 0)
            except _OutOfBudget:
                if done == 0 and self.root_best is not None:  # out of time within depth 1
                    best = self.root_best
                break
            stored = self._stored_move(root)
            if stored is not None:
                best = stored
            score, done, guess = value, depth, value
            if abs(value) >= WIN - MAX_PLY:  # a proven result: deeper search changes nothing
                break
        return SearchResult(best, score, done, self.nodes, self.clock() - start, self._pv(root))

    def _stored_move(self, pos: Position) -> Move | None:
        """The best move the table holds for ``pos``, if any."""
        entry = self.table.get(self.adapter.key(pos))
        return None if entry is None else entry[3]

    def _mtdf(self, root: Position, depth: int, guess: int) -> int:
        g, lower, upper = guess, -INF, INF
        while lower < upper:
            beta = g + 1 if g == lower else g
            g = self._alphabeta(root, depth, beta - 1, beta, 0)
            if g < beta:
                upper = g
            else:
                lower = g
        return g

    def _pv(self, root: Position) -> list[Move]:
        line: list[Move] = []
        pos = root
        seen = set()
        while len(line) < 12:
            key = self.adapter.key(pos)
            move = self._stored_move(pos)
            if move is None or key in seen or pos.to_move is None:
                break
            seen.add(key)
            if move not in self.adapter.moves(pos):
                break
            line.append(move)
            pos = self.adapter.play(pos, move)
        return line

    # ----- alpha-beta (minimax form, fail-soft)

    def _ordered(
        self, pos: Position, moves: Sequence[Move], first: Move | None, ply: int
    ) -> list[Move]:
        adapter, history = self.adapter, self.history
        killers = self.killers[ply] if ply < len(self.killers) else []

        def rank(m: Move) -> int:
            if m == first:
                return 1 << 40
            score = adapter.hint(pos, m) << 20
            if m in killers:
                score += 1 << 19
            return score + history.get(m, 0)

        return sorted(moves, key=rank, reverse=True)

    def _alphabeta(self, pos: Position, depth: int, alpha: int, beta: int, ply: int) -> int:
        self._tick()
        adapter = self.adapter
        done = terminal_score(pos, adapter, self.team, ply)
        if done is not None:
            return done
        if ply and pos.repetitions() > 1:
            # a position seen before (in the game or on this line): a draw in the making, which
            # the robot avoids unless it stands worse (DECISIONS.md, "Endless games")
            return -CONTEMPT
        if depth <= 0:
            return self._quiesce(pos, alpha, beta, ply, adapter.quiescence)
        key = adapter.key(pos)
        entry = self.table.get(key)
        first = None
        if entry is not None:
            e_depth, e_flag, e_value, first = entry
            if e_depth >= depth and ply > 0:
                if e_flag == EXACT:
                    return e_value
                if e_flag == LOWER and e_value >= beta:
                    return e_value
                if e_flag == UPPER and e_value <= alpha:
                    return e_value
        moves = adapter.moves(pos)
        maximise = adapter.mover_team(pos) == self.team
        a0, b0 = alpha, beta
        best_move = None
        best = -INF if maximise else INF
        pvs = adapter.driver == "pvs"
        for i, move in enumerate(self._ordered(pos, moves, first, ply)):
            child = adapter.play(pos, move)
            if pvs and i > 0 and beta - alpha > 1:
                if maximise:
                    value = self._alphabeta(child, depth - 1, alpha, alpha + 1, ply + 1)
                    if alpha < value < beta:
                        value = self._alphabeta(child, depth - 1, value, beta, ply + 1)
                else:
                    value = self._alphabeta(child, depth - 1, beta - 1, beta, ply + 1)
                    if alpha < value < beta:
                        value = self._alphabeta(child, depth - 1, alpha, value, ply + 1)
            else:
                value = self._alphabeta(child, depth - 1, alpha, beta, ply + 1)
            if maximise:
                if value > best:
                    best, best_move = value, move
                    alpha = max(alpha, value)
                    if ply == 0:
                        self.root_best = move
            else:
                if value < best:
                    best, best_move = value, move
                    beta = min(beta, value)
            if alpha >= beta:
                self._cutoff(move, depth, ply)
                break
        if best <= a0:
            flag = UPPER
            best_move = first if first is not None else best_move  # a fail-low move is no guide
        elif best >= b0:
            flag = LOWER
        else:
            flag = EXACT
        self.table[key] = (depth, flag, best, best_move)
        return best

    def _cutoff(self, move: Move, depth: int, ply: int) -> None:
        if ply < len(self.killers):
            killers = self.killers[ply]
            if move not in killers:
                killers.insert(0, move)
                del killers[2:]
        self.history[move] = self.history.get(move, 0) + depth * depth

    def _quiesce(self, pos: Position, alpha: int, beta: int, ply: int, left: int) -> int:
        adapter = self.adapter
        stand = adapter.evaluate(pos, self.team)
        if left <= 0:
            return stand
        maximise = adapter.mover_team(pos) == self.team
        if maximise:
            if stand >= beta:
                return stand
            alpha = max(alpha, stand)
        else:
            if stand <= alpha:
                return stand
            beta = min(beta, stand)
        best = stand
        noisy = [m for m in adapter.moves(pos) if adapter.noisy(pos, m)]
        noisy.sort(key=lambda m: adapter.hint(pos, m), reverse=True)
        for move in noisy:
            self._tick()
            child = adapter.play(pos, move)
            done = terminal_score(child, adapter, self.team, ply + 1)
            value = (
                done if done is not None else self._quiesce(child, alpha, beta, ply + 1, left - 1)
            )
            if maximise:
                if value > best:
                    best = value
                    alpha = max(alpha, value)
            elif value < best:
                best = value
                beta = min(beta, value)
            if alpha >= beta:
                break
        return best


def _leaf_vector(pos: Position, adapter: Adapter[Any], ply: int) -> tuple[int, ...]:
    """Every seat's score where a vector search stops: a finished game's result, else the
    adapter's static values."""
    if pos.to_move is None:  # (terminal_score is never None here: the game is over)
        seats = range(pos.num_seats)
        return tuple(terminal_score(pos, adapter, adapter.team(pos, s), ply) or 0 for s in seats)
    return tuple(adapter.evaluate_seats(pos))


def _prefers(value: Sequence[int], best: Sequence[int], mover: int, robot: int) -> bool:
    """Whether ``mover`` takes ``value`` over ``best`` (none yet when empty): the higher for
    itself, and among equals the one worst for the robot (the paranoid choice where the mover
    does not care)."""
    if not best or value[mover] > best[mover]:
        return True
    return value[mover] == best[mover] and value[robot] < best[robot]


class ProbeSearcher(Searcher):
    """One line of replies: each move of the robot is followed by the reply every later seat
    likes best by its own static evaluation, up to the robot's next turn (for the adapter's
    ``probe_rounds`` rounds, the robot's team playing its own statically best move between
    them), and the robot plays the move whose line is worth most to it.

    With three or four seats a full-width search to depth 2 sees one reply of the next seat and
    nothing of the others; a probe sees one line through all of them, at the cost of one node
    per reply weighed (a round costs every seat's moves, so more rounds probe fewer moves of
    the robot within one budget).  A line of several rounds is worth the least of the robot's
    values at the ends of its rounds: the predicted replies are a guess, and a line that pays
    only if every seat keeps to them for rounds on end lost to the random player (Pylon).

    The robot's moves are ranked by their static values (one node each, always spent, like a
    first iteration), then probed best first until the node or time budget runs out: the best
    static move is played unless a finished line of another move is worth more than its own.
    Ties among replies go to the one worst for the robot.
    """

    def _search(self, root: Position, moves: Sequence[Move], start: float) -> SearchResult:
        adapter = self.adapter
        assert root.to_move is not None  # (run returns before a finished game)
        robot = root.controller(root.to_move)
        self.hard = False
        ranked: list[tuple[int, int, Move, Position]] = []
        try:
            for i, move in enumerate(moves):
                self._tick()
                child = adapter.play(root, move)
                ranked.append((_leaf_vector(child, adapter, 1)[robot], -i, move, child))
        except _OutOfBudget:
            if not ranked:
                return SearchResult(moves[0], 0, 0, self.nodes, self.clock() - start, [moves[0]])
        ranked.sort(key=lambda r: (r[0], r[1]), reverse=True)
        best, score, depth = ranked[0][2], ranked[0][0], 1
        self.hard = True
        probed = 0
        with contextlib.suppress(_OutOfBudget):
            for _, _, move, child in ranked:
                value, plies = self._line(child, robot)
                probed += 1
                if probed == 1 or value > score:
                    best, score, depth = move, value, plies
        return SearchResult(best, score, depth, self.nodes, self.clock() - start, [best])

    def _line(self, pos: Position, robot: int) -> tuple[int, int]:
        """The robot's value of the line from ``pos`` (the robot just moved), and its plies.

        Every other seat plays its statically best move; after each round but the last the
        robot's team plays its own statically best move, for the adapter's ``probe_rounds``
        rounds.  The value is the least of the robot's values at the ends of the rounds: the
        later rounds are a guess, so they can lower a line's worth but never raise it above
        what the robot holds after the first."""
        adapter = self.adapter
        ply, rounds = 1, adapter.probe_rounds
        value = INF
        while pos.to_move is not None and ply < MAX_PLY:
            mover = pos.controller(pos.to_move)
            if adapter.team(pos, mover) == self.team:
                value = min(value, _leaf_vector(pos, adapter, ply)[robot])
                rounds -= 1
                if rounds <= 0:
                    return value, ply
            best: tuple[int, ...] = ()
            reply: Position | None = None
            for move in adapter.moves(pos):
                self._tick()
                child = adapter.play(pos, move)
                vector = _leaf_vector(child, adapter, ply + 1)
                if _prefers(vector, best, mover, robot):
                    best, reply = vector, child
            if reply is None:
                break
            pos = reply
            ply += 1
        return min(value, _leaf_vector(pos, adapter, ply)[robot]), ply


def search(
    pos: Position,
    adapter: Adapter[Any],
    budget: Budget,
    clock: Callable[[], float] = time.monotonic,
    stop: Callable[[], bool] | None = None,
) -> SearchResult:
    """Search ``pos`` (not over) within ``budget``; the result's move is the one to play.
    :class:`Stopped` when ``stop()`` says so (asked every 128 nodes).

    The probe serves the adapters that ask for it when more than two teams are in play; every
    other search is the alpha-beta above (paranoid with more than two teams).
    """
    teams = {adapter.team(pos, s) for s, info in enumerate(pos.seats()) if info.in_play}
    if adapter.multiplayer == "probe" and len(teams) > 2:
        return ProbeSearcher(adapter, budget, clock, stop).run(pos)
    return Searcher(adapter, budget, clock, stop).run(pos)

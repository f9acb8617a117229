"""Robot strength, shown with 95% Wilson lower bounds, for every game and player count.

    nice -n 19 .venv/bin/python bench/robots.py                   # every game, every player count
    nice -n 19 .venv/bin/python bench/robots.py ploy:4 polis:2    # some of them
    .venv/bin/python bench/robots.py --nps 3 --only-nps     # only the search speeds (Ploy, Pylon)

The goals (issue 19): every level wins at least 95% of its games against the random player and
75% against the greedy player, and ``strong`` scores more than 50% against ``normal``, each as
the lower bound of the 95% Wilson interval of the score (a win 1, a draw 1/2).

* ``--levels`` may also name ``greedy`` (or ``random``): that player takes the robot's seat, to
  show what a level's search adds to its evaluation (``--levels easy,greedy --opponents
  random``: same seats, their own seeds).
* With more than two players the robot takes one seat and the opponent all the others (the
  seat rotates from game to game); against ``normal``, ``strong`` takes half the seats (with
  three players one seat and two seats in turn), so that an even match scores 50%.
* The random player picks uniformly among the legal moves; the greedy player takes a win in one
  if it has one and otherwise the move whose position the robot's own evaluation likes best
  (ties at random): the robot's knowledge without its search.
* Robots are deterministic, so two levels would play the same game again and again from the
  starting position: level against level, each game starts from an opening of a few random
  plies (``OPENING``), and each opening is played once in every seat arrangement (two with two
  players, six with three or four), so no seat's advantage leans on the score.
* A cell plays games in rounds of ``--batch`` until its lower bound reaches the goal (shown), its
  upper bound falls below it (not shown), or ``--max-games`` is reached.  The bound is checked
  after every round (optional stopping), so a cell that only just passes deserves a rerun with
  ``--fixed``: exactly ``--max-games`` games, judged once at the end (a plain rerun replays
  the same games).
* ``cpu/g`` is the CPU seconds of one game (both sides), to tell what a longer run would cost;
  the table so far goes to standard error after every round.
* Games run in ``--jobs`` processes; seeds are fixed and the levels are node budgets, so a rerun
  with the same arguments plays the same games (unless a level's time cap is reached).
  ``--first-game N`` numbers the games (and seeds them) from N: a sample of games that no
  earlier run played, to check a cell again without replaying the games that judged it.

Every game ends: Ploy and Polis by the endless-game rulings, Pylon and Plotto by themselves.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import multiprocessing
import random
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbmserv.games import get_game  # noqa: E402
from pbmserv.games.base import SWAP, Move, Outcome, Position  # noqa: E402
from pbmserv.robots import LEVELS, adapter_for, budget_of, choose_move  # noqa: E402
from pbmserv.robots.search import Budget, search  # noqa: E402

SETUPS = ["ploy:2", "ploy:4", "polis:2", "pylon:2", "pylon:3", "pylon:4", "plotto:2", "plotto:3"]
SETUPS += ["plotto:4"]
BENCH_LEVELS = ["easy", "normal", "strong"]  # expert is a 20 s time budget: above strong
GOALS = {"random": 0.95, "greedy": 0.75, "normal": 0.50}
REFERENCES = ("random", "greedy")  # players without a search, also allowed in --levels
MAX_PLIES = 2000  # a safety net only: every game ends by its rules
OPENING = {"plotto": 2}  # random plies before level meets level (Plotto games last ~12 plies)
OPENING_PLIES = 4


def wilson(score: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion ``score / n``."""
    if n == 0:
        return 0.0, 1.0
    p = score / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denom = 1 + z * z / n
    return (centre - spread) / denom, (centre + spread) / denom


# ----------------------------------------------------------------------------- players


def legal(pos: Position) -> list[Move]:
    return [m for m in pos.legal_moves() if m != SWAP]


def random_player(pos: Position, rng: random.Random) -> Move:
    return rng.choice(legal(pos))


def greedy_player(pos: Position, rng: random.Random) -> Move:
    adapter = adapter_for(pos.game.name)
    seat = pos.to_move
    assert seat is not None
    team = adapter.team(pos, pos.controller(seat))
    best: int | None = None
    best_moves: list[Move] = []
    for move in legal(pos):
        child = pos.copy()
        child.play(move)
        outcome = child.outcome()
        if outcome is not None:
            if outcome.winners and all(adapter.team(child, s) == team for s in outcome.winners):
                return move
            value = 0 if outcome.draw else -(10**9)
        else:
            value = adapter.evaluate(child, team)
        if best is None or value > best:
            best, best_moves = value, [move]
        elif value == best:
            best_moves.append(move)
    return rng.choice(best_moves)


def robot_player(budget: Budget) -> Callable[[Position, random.Random], Move]:
    def play(pos: Position, rng: random.Random) -> Move:
        move = choose_move(pos, budget).move
        assert move is not None
        return move

    return play


def player(name: str) -> Callable[[Position, random.Random], Move]:
    if name == "random":
        return random_player
    if name == "greedy":
        return greedy_player
    return robot_player(budget_of(name))


# ----------------------------------------------------------------------------- one game


@dataclass(frozen=True)
class Task:
    game: str
    players: int
    level: str
    opponent: str
    index: int


PAIRS = [(0, 1), (2, 3), (1, 2), (0, 3), (0, 2), (1, 3)]
"""Four players, level against level: every pair of seats, each next to the other half."""


def level_vs_level(task: Task) -> bool:
    return task.opponent not in ("random", "greedy")


def arrangements(players: int) -> int:
    """How many seat arrangements :func:`robot_seats` goes through before repeating."""
    return {2: 2, 3: 6, 4: len(PAIRS)}[players]


def robot_seats(task: Task) -> set[int]:
    """The seats the level under test plays in game ``task.index``."""
    n, i = task.players, task.index
    if level_vs_level(task):
        if n == 2:
            return {i % 2}
        if n == 4:
            return set(PAIRS[i % len(PAIRS)])
        half = 1 + (i // n) % 2  # three players: one seat and two seats in turn
        return {(i + k) % n for k in range(half)}
    return {i % n}


def new_game(task: Task) -> tuple[Position, set[int], random.Random]:
    """Game ``task.index`` of its cell: the starting position, the seats of the level under
    test and the game's random numbers (``bench/plotto_losses.py`` and
    ``bench/pylon_ceiling.py`` replay the same games)."""
    rng = random.Random(f"{task.game}:{task.players}:{task.level}:{task.opponent}:{task.index}")
    return get_game(task.game).new(task.players, {}), robot_seats(task), rng


def score_of(outcome: Outcome | None, mine: set[int]) -> float:
    """A game's score for the seats ``mine``: 1 won, 1/2 shared, drawn or unfinished, 0 lost."""
    if outcome is None:
        return 0.5
    winners = set(outcome.winners)
    if not winners:
        return 0.5
    if winners <= mine:
        return 1.0
    return 0.5 if winners & mine else 0.0  # shared with an opponent, or lost


def play_game(task: Task) -> tuple[Task, float, int, str, float]:
    """(task, score of the level under test, plies, how it ended, CPU seconds)."""
    start = time.process_time()
    pos, mine, rng = new_game(task)
    ours, theirs = player(task.level), player(task.opponent)
    plies = 0
    if level_vs_level(task):  # the same opening in every seat arrangement
        opening = random.Random(
            f"{task.game}:{task.players}:{task.index // arrangements(task.players)}"
        )
        for _ in range(OPENING.get(task.game, OPENING_PLIES)):
            if pos.to_move is None:
                break
            pos.play(random_player(pos, opening))
            plies += 1
    while pos.to_move is not None and plies < MAX_PLIES:
        seat = pos.controller(pos.to_move)
        move = (ours if seat in mine else theirs)(pos, rng)
        if move == SWAP:
            mine = {1 - s for s in mine}  # two players: the seats are exchanged
        pos.play(move)
        plies += 1
    outcome = pos.outcome()
    seconds = time.process_time() - start
    reason = "unfinished" if outcome is None else outcome.reason
    return task, score_of(outcome, mine), plies, reason, seconds


# ----------------------------------------------------------------------------- the table


@dataclass
class Cell:
    game: str
    players: int
    level: str
    opponent: str
    scores: list[float] = field(default_factory=list)
    plies: int = 0
    draws: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def goal(self) -> float:
        return GOALS[self.opponent]

    def bounds(self) -> tuple[float, float]:
        return wilson(sum(self.scores), len(self.scores))

    def passed(self) -> bool:
        """At least 95% / 75% against random / greedy; more than 50% against normal."""
        low = self.bounds()[0]
        return low > self.goal if self.opponent == "normal" else low >= self.goal

    def settled(self, max_games: int, fixed: bool = False) -> bool:
        if fixed or len(self.scores) >= max_games:
            return len(self.scores) >= max_games
        return self.passed() or self.bounds()[1] < self.goal

    def row(self) -> str:
        n = len(self.scores)
        low, high = self.bounds()
        verdict = "shown" if self.passed() else "NOT shown"
        wins = sum(s == 1.0 for s in self.scores)
        draws = sum(s == 0.5 for s in self.scores)
        return (
            f"{self.game}:{self.players:<2} {self.level:<7} {'vs ' + self.opponent:<10} "
            f"{n:>4} {wins:>4} {draws:>4} {sum(self.scores) / max(n, 1):7.1%} "
            f"{low:7.1%} {high:7.1%}  {'>' if self.opponent == 'normal' else '>='}"
            f"{self.goal:.0%} {verdict:<9} "
            f"{self.plies / max(n, 1):5.0f} {self.seconds / max(n, 1):6.1f}"
        )


HEADER = (
    f"{'setup':<9} {'level':<7} {'opponent':<10} {'games':>4} {'won':>4} {'drawn':>4} "
    f"{'score':>7} {'low95':>7} {'high95':>7}  goal  verdict   plies  cpu/g"
)


def cells_for(setups: list[str], levels: list[str], opponents: list[str]) -> list[Cell]:
    cells = []
    for setup in setups:
        game, _, count = setup.partition(":")
        players = int(count or 2)
        get_game(game).check_players(players, get_game(game).defaults())
        for opponent in opponents:
            if opponent == "normal":
                if "strong" in levels:
                    cells.append(Cell(game, players, "strong", "normal"))
                continue
            cells += [Cell(game, players, level, opponent) for level in levels]
    return cells


def run(
    cells: list[Cell], jobs: int, batch: int, max_games: int, fixed: bool, first: int = 0
) -> None:
    """Play the cells' games, numbered from ``first`` (their seeds), in rounds of ``batch``."""
    start = time.monotonic()
    with multiprocessing.Pool(jobs) as pool:
        while True:
            open_cells = [c for c in cells if not c.settled(max_games, fixed)]
            if not open_cells:
                break
            tasks = [
                Task(c.game, c.players, c.level, c.opponent, first + len(c.scores) + k)
                for c in open_cells
                for k in range(min(batch, max_games - len(c.scores)))
            ]
            by_key = {(c.game, c.players, c.level, c.opponent): c for c in open_cells}
            for task, score, plies, reason, seconds in pool.imap_unordered(play_game, tasks):
                cell = by_key[(task.game, task.players, task.level, task.opponent)]
                cell.scores.append(score)
                cell.plies += plies
                cell.seconds += seconds
                if score == 0.5:
                    cell.draws[reason] = cell.draws.get(reason, 0) + 1
            print(
                f"  ... {sum(len(c.scores) for c in cells)} games, "
                f"{len([c for c in cells if not c.settled(max_games, fixed)])} cells open, "
                f"{time.monotonic() - start:.0f}s",
                file=sys.stderr,
                flush=True,
            )
            # the table so far, so that a run stopped early still tells what it found
            print("\n".join([HEADER, *(c.row() for c in cells if c.scores)]), file=sys.stderr)


def nodes_per_second(seconds: float) -> str:
    pos = get_game("ploy").new(2, {})
    result = search(pos, adapter_for("ploy"), Budget(seconds=seconds))
    rate = result.nodes / max(result.seconds, 1e-9)
    return (
        f"Ploy search speed, two-player start, {seconds:g}s: {result.nodes} nodes, "
        f"depth {result.depth}, {rate:,.0f} nodes/s"
    )


def pylon_nodes_per_second(nodes: int = 5_000) -> str:
    """Pylon's search (its evaluation is most of it) on twelve fixed positions of 2, 3 and 4
    players, ``nodes`` each: the speed, and a digest of the moves chosen, so that two commits
    are compared on the same work (a faster commit that plays other moves shows another digest).
    """
    game = get_game("pylon")
    chosen = []
    cpu = 0.0
    for players in (2, 3, 4):
        for seed in range(4):
            rng = random.Random(seed * 7 + players)
            pos = game.new(players, {})
            for _ in range(10 + 8 * seed):
                pos.play(rng.choice(list(pos.legal_moves())))
            start = time.process_time()
            result = choose_move(pos, Budget(nodes=nodes))
            cpu += time.process_time() - start
            chosen.append(f"{result.move}:{result.score}")
    digest = hashlib.blake2b(" ".join(chosen).encode(), digest_size=4).hexdigest()
    return (
        f"Pylon search speed, 12 positions of 2-4 players, {nodes} nodes each: "
        f"{12 * nodes / cpu:,.0f} nodes per CPU second; moves digest {digest}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("setups", nargs="*", default=SETUPS, help="GAME:PLAYERS, e.g. ploy:4")
    parser.add_argument("--levels", default=",".join(BENCH_LEVELS))
    parser.add_argument("--opponents", default="random,greedy,normal")
    parser.add_argument("--jobs", type=int, default=2, help="processes playing games")
    parser.add_argument("--batch", type=int, default=20, help="games per cell and round")
    parser.add_argument("--max-games", type=int, default=200)
    parser.add_argument("--fixed", action="store_true", help="play --max-games, stop no earlier")
    parser.add_argument(
        "--first-game", type=int, default=0, help="number of the first game (its seed)"
    )
    parser.add_argument("--nps", type=float, default=0.0, help="seconds of the speed test")
    parser.add_argument("--only-nps", action="store_true")
    args = parser.parse_args(argv)
    if args.nps:
        print(nodes_per_second(args.nps), flush=True)
        print(pylon_nodes_per_second(), flush=True)
    if args.only_nps:
        return 0
    levels = [name.strip() for name in args.levels.split(",")]
    for name in levels:
        if name not in REFERENCES:
            budget_of(name)
    cells = cells_for(args.setups, levels, args.opponents.split(","))
    start = time.monotonic()
    run(cells, args.jobs, args.batch, args.max_games, args.fixed, args.first_game)
    budgets = ", ".join(f"{name} {LEVELS[name]}" for name in levels if name in LEVELS)
    print(f"Levels: {budgets}")
    print(HEADER)
    for cell in cells:
        print(cell.row())
    drawn: dict[str, int] = {}
    for cell in cells:
        for reason, count in cell.draws.items():
            drawn[reason] = drawn.get(reason, 0) + count
    if drawn:
        print(
            "Draws and shared results by reason: "
            + "; ".join(f"{r}: {n}" for r, n in drawn.items())
        )
    failed = [c for c in cells if not c.passed()]
    print(
        f"{len(cells) - len(failed)} of {len(cells)} goals shown; {time.monotonic() - start:.0f}s"
    )
    command = ["nice", "-n", "19", ".venv/bin/python", "bench/robots.py", *(argv or sys.argv[1:])]
    print("Reproduce: " + shlex.join(command))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""How far any player can score against random players in Pylon with three or four seats (issue 19).

The goal of 95% against the random player is not shown for Pylon with three and four players
(``bench/robots.py``: ``easy`` 87% and 75% over 200 games, ``normal`` 84% with three players
over 300).  Is the goal out of reach for any player, as it is in Plotto
(``bench/plotto_losses.py --oracle``), or is it the robots' weakness?  This script plays the
games of ``bench/robots.py``'s ``pylon:3`` and ``pylon:4`` cells against random players (same
seats, the same game seeds, no opening: the cell ``easy vs random``) with an *oracle* in the
robot's seat, a player that knows its opponents play uniformly at random:

* flat Monte Carlo over its legal moves: each move is scored by playouts to the end of the game,
  the opponents playing uniformly at random (exactly the random player of ``robots.py``), the
  oracle itself taking the biggest capture it has (the move that fills the most points; ties and
  no capture: at random).  Why that policy for its own moves: the legal moves come with what
  each capture fills, so it costs nothing over a random move, and captures are where marbles
  (the score) change hands; the greedy player of ``robots.py`` costs some 20 times more per
  move (2.5 ms against 0.1 ms), which would leave a tenth of the playouts;
* the playouts are spent by sequential halving, not evenly: ``--playouts N`` is the average per
  legal move, so a decision costs N times its legal moves in playouts, as flat Monte Carlo with
  N each would; they are split evenly over ceil(log2(moves)) rounds, each round spreads its share
  evenly over the moves still in the race and keeps the better half (by the mean of all their
  playouts so far; ties in a random order).  The last two moves get several times N playouts
  each; a move that finishes the game is scored once, exactly;
* a playout is scored as ``robots.py`` scores a game: 1 when the oracle wins alone, 1/2 when it
  shares the most marbles or all seats tie, 0 otherwise; the move with the best mean is played.

Each game is played twice from its seed, by the oracle and by ``robots.py``'s ``easy`` robot
(``robots.play_game``, so exactly the game of the ``easy vs random`` cell), and the table shows
both scores with the lower bound of the 95% Wilson interval (``robots.wilson``).  The game's
random numbers are shared by the robot and its opponents, so the two players' games part after
the first move that differs; the seats and the seeds are the same.  ``cpu/g`` is CPU seconds per
game (all seats).  Everything is seeded: a rerun with the same arguments plays the same games.

    nice -n 19 .venv/bin/python bench/pylon_ceiling.py [--players 3,4] [--games 100]
        [--playouts 10] [--first-game 0] [--symmetric] [--opponent random|greedy]

``--symmetric``: the playouts assume nothing of the opponents, every seat takes its biggest
capture: a Monte Carlo player a robot could be (issue 19, measured in stop 41 with 30 playouts
per legal move, three players: 36 of 40 against random, 16.5 of 20 against greedy, at about 20
CPU seconds per game, some ten times ``easy``'s).  ``--opponent greedy`` plays the cells
against the greedy player instead.
"""

from __future__ import annotations

import argparse
import math
import random
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import robots as bench  # noqa: E402  (bench/robots.py: the players, the seats and the seeds)

from pbmserv.games.base import SWAP, Move, Position  # noqa: E402
from pbmserv.games.pylon import PylonPosition  # noqa: E402

LEVEL = "easy"  # the robot level whose games (seats and seeds) are replayed


def biggest_capture(pos: PylonPosition, rng: random.Random) -> Move:
    """The move that fills the most points by its captures (none: any move, at random)."""
    moves = pos.placements()  # every legal placement with the points its captures fill
    if not moves:
        return pos.move_list()[0]  # the forced pass
    most = max(len(filled) for filled in moves.values())
    return rng.choice([p for p, filled in moves.items() if len(filled) == most])


def playout(pos: Position, mine: set[int], rng: random.Random, symmetric: bool = False) -> float:
    """Play ``pos`` (a copy) to its end, opponents at random, ``mine`` taking its biggest
    capture (``symmetric``: every seat takes its biggest capture); the score of ``mine``."""
    game = cast(PylonPosition, pos.copy())
    while game.to_move is not None:
        if symmetric or game.to_move in mine:
            game.play(biggest_capture(game, rng))
        else:
            game.play(rng.choice(game.move_list()))
    return bench.score_of(game.outcome(), mine)


def oracle_player(
    playouts: int, mine: set[int], symmetric: bool = False
) -> Callable[[Position, random.Random], Move]:
    """Monte Carlo against random opponents, ``playouts`` per legal move on average, spent by
    sequential halving; the move with the best mean score.  ``symmetric``: the playouts assume
    nothing of the opponents (every seat takes its biggest capture): a robot could play so."""

    def choose(pos: Position, rng: random.Random) -> Move:
        moves = bench.legal(pos)
        if len(moves) == 1:
            return moves[0]
        sims = random.Random(rng.random())  # one draw from the game's numbers per decision
        children: dict[Move, Position] = {}
        total: dict[Move, float] = {}
        runs: dict[Move, int] = {}
        exact: dict[Move, float] = {}
        for move in moves:
            child = pos.copy()
            child.play(move)
            if child.to_move is None:
                exact[move] = bench.score_of(child.outcome(), mine)
            else:
                children[move], total[move], runs[move] = child, 0.0, 0
        alive = list(children)
        sims.shuffle(alive)  # ties (few playouts score alike) go to no point in particular
        budget = playouts * len(alive)
        rounds = max(1, math.ceil(math.log2(len(alive)))) if alive else 0
        for _ in range(rounds):
            each = max(1, budget // (rounds * len(alive)))
            for move in alive:
                for _ in range(each):
                    total[move] += playout(children[move], mine, sims, symmetric)
                runs[move] += each
            alive.sort(key=lambda m: total[m] / runs[m], reverse=True)
            alive = alive[: max(1, (len(alive) + 1) // 2)]
        means = {**exact, **{m: total[m] / runs[m] for m in alive}}
        return max(means, key=lambda m: means[m])

    return choose


def oracle_game(
    players: int, index: int, playouts: int, symmetric: bool = False, opponent: str = "random"
) -> tuple[float, float]:
    """(the oracle's score, CPU seconds) in game ``index``, played as ``robots.play_game``."""
    begin = time.process_time()
    pos, mine, rng = bench.new_game(bench.Task("pylon", players, LEVEL, opponent, index))
    ours, theirs = oracle_player(playouts, mine, symmetric), bench.player(opponent)
    plies = 0
    while pos.to_move is not None and plies < bench.MAX_PLIES:
        move = (ours if pos.controller(pos.to_move) in mine else theirs)(pos, rng)
        assert move != SWAP  # only two players may swap
        pos.play(move)
        plies += 1
    return bench.score_of(pos.outcome(), mine), time.process_time() - begin


def row(name: str, scores: list[float], seconds: float) -> str:
    n = len(scores)
    low, high = bench.wilson(sum(scores), n)
    wins, shared = sum(s == 1.0 for s in scores), sum(s == 0.5 for s in scores)
    return (
        f"{name:<22} {n:>5} {wins:>5} {shared:>6} {sum(scores) / max(n, 1):7.1%} "
        f"{low:7.1%} {high:7.1%} {seconds / max(n, 1):7.2f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--players", default="3,4")
    parser.add_argument("--games", type=int, default=100, help="games per player count")
    parser.add_argument("--playouts", type=int, default=10, help="per legal move, on average")
    parser.add_argument(
        "--first-game", type=int, default=0, help="number of the first game (its seed)"
    )
    parser.add_argument(
        "--symmetric",
        action="store_true",
        help="playouts in which every seat takes its biggest capture (no opponent model)",
    )
    parser.add_argument("--opponent", choices=("random", "greedy"), default="random")
    args = parser.parse_args(argv)
    header = (
        f"{'setup and player':<22} {'games':>5} {'won':>5} {'shared':>6} {'score':>7} "
        f"{'low95':>7} {'high95':>7} {'cpu/g':>7}"
    )
    lines = [header]
    for players in (int(p) for p in args.players.split(",")):
        oracle: list[float] = []
        robot: list[float] = []
        oracle_cpu = robot_cpu = 0.0
        for index in range(args.first_game, args.first_game + args.games):
            value, seconds = oracle_game(
                players, index, args.playouts, args.symmetric, args.opponent
            )
            oracle.append(value)
            oracle_cpu += seconds
            _, value, _, _, seconds = bench.play_game(
                bench.Task("pylon", players, LEVEL, args.opponent, index)
            )
            robot.append(value)
            robot_cpu += seconds
            if len(oracle) % 10 == 0:  # progress, so that a run stopped early still tells
                print(
                    f"  pylon:{players} {len(oracle)} games: "
                    f"oracle {sum(oracle) / len(oracle):.1%}, {LEVEL} {sum(robot) / len(robot):.1%}"
                    f", {oracle_cpu + robot_cpu:.0f}s",
                    file=sys.stderr,
                    flush=True,
                )
        lines.append(row(f"pylon:{players} oracle {args.playouts}", oracle, oracle_cpu))
        lines.append(row(f"pylon:{players} {LEVEL}", robot, robot_cpu))
    print(
        f"Pylon against {args.opponent} players: games {args.first_game}-"
        f"{args.first_game + args.games - 1} of robots.py's '{LEVEL} vs {args.opponent}' "
        f"cells; oracle: {args.playouts} playouts per legal move on average (sequential "
        f"halving){', symmetric playouts' if args.symmetric else ''}"
    )
    print("\n".join(lines))
    command = ["nice", "-n", "19", ".venv/bin/python", "bench/pylon_ceiling.py"]
    print("Reproduce: " + shlex.join(command + (sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    main()

"""Why a Plotto robot loses to random players with three or four seats (issue 19, point 3).

Plays the games of ``bench/robots.py`` (same seeds, same players) and sorts every lost game by
the position the robot left with its last move:

* ``none left``: no opponent could complete a line in one placement, yet the opponents set one
  up and completed it before the robot moved again (with three or four seats, two or three
  random moves fall between two robot moves; no single placement can stop that);
* ``unavoidable``: every move the robot had left some opponent a line in one placement;
* ``avoidable``: some move would have left none, and the robot chose another.

Only the last kind is a mistake of the robot's last move; no choice there could have saved the
first two.  ``ceiling`` is the score had every avoidable loss been won: evidence (not a proof,
since earlier moves shape the last position) of how far the goal of 95% is out of reach.

``--oracle N`` also plays the same games with a player that *knows* its opponents are random
(flat Monte Carlo: each of its moves is scored by N games played out to the end, the opponents
at random and itself taking a line in one when it has one and otherwise a placement that
completes no other seat's line); its share of wins is further evidence of the ceiling, from
a player no robot could be (it relies on its opponents playing at random).

    .venv/bin/python bench/plotto_losses.py [--players 3,4] [--level easy] [--games 300]
        [--oracle 100]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import robots as bench  # noqa: E402  (bench/robots.py: the players and the seeds)

from pbmserv.games.base import Move, Position  # noqa: E402
from pbmserv.games.plotto import line_seats  # noqa: E402
from pbmserv.robots.plotto import threat_cells  # noqa: E402

KINDS = ("won", "none left", "unavoidable", "avoidable")


def opponent_threats(pos: Position, mine: set[int]) -> int:
    """Cells where an opponent of ``mine`` completes a line with one placement."""
    if pos.to_move is None:
        return 0
    some, _ = threat_cells(pos)  # type: ignore[arg-type]
    return sum(len(cells) for seat, cells in enumerate(some) if seat not in mine)


def fewest_threats(pos: Position, mine: set[int]) -> int:
    """The fewest opponent threats any move of the seat to move leaves (-1: a move wins)."""
    fewest = None
    for move in bench.legal(pos):
        child = pos.copy()
        child.play(move)
        outcome = child.outcome()
        if outcome is not None:
            left = -1 if set(outcome.winners) & mine else 1
        else:
            left = opponent_threats(child, mine)
        fewest = left if fewest is None else min(fewest, left)
    return fewest or 0


def start(players: int, level: str, index: int) -> tuple[Position, set[int], random.Random]:
    """Game ``index`` of ``bench/robots.py``'s cell against random players: the starting
    position, the robot's seats and the game's random numbers."""
    return bench.new_game(bench.Task("plotto", players, level, "random", index))


def classify(players: int, level: str, index: int) -> str:
    pos, mine, rng = start(players, level, index)
    ours, theirs = bench.player(level), bench.player("random")
    last: tuple[int, int] | None = None  # (threats left, fewest possible) at the robot's move
    while pos.to_move is not None:
        robot = pos.controller(pos.to_move) in mine
        before = pos.copy() if robot else None
        pos.play((ours if robot else theirs)(pos, rng))
        if before is not None:
            last = (opponent_threats(pos, mine), fewest_threats(before, mine))
    outcome = pos.outcome()
    assert outcome is not None
    if set(outcome.winners) & mine:
        return "won"
    if last is None or last[0] == 0:
        return "none left"
    return "unavoidable" if last[1] > 0 else "avoidable"


def safe_move(pos: Position, rng: random.Random, seat: int) -> Move:
    """A line for ``seat`` in one if there is one, else a placement completing nobody's line."""
    harmless = []
    for move in bench.legal(pos):
        cell, number = divmod(cast(int, move), 8)
        seats = line_seats(pos.board, cell, number, pos.num_seats, False)  # type: ignore[attr-defined]
        if seat in seats:
            return move
        if not seats:
            harmless.append(move)
    return rng.choice(harmless or bench.legal(pos))


def oracle_player(rollouts: int) -> Callable[[Position, random.Random], Move]:
    """Flat Monte Carlo against random opponents: the move whose playouts it wins most often."""

    def choose(pos: Position, rng: random.Random) -> Move:
        seat = pos.to_move
        assert seat is not None
        playouts = random.Random(rng.random())
        best, best_share = None, -1.0
        for move in bench.legal(pos):
            child = pos.copy()
            child.play(move)
            runs = rollouts if child.to_move is not None else 1  # a finished game: once
            wins = 0
            for _ in range(runs):
                game = child.copy()
                while game.to_move is not None:
                    if game.to_move == seat:
                        game.play(safe_move(game, playouts, seat))
                    else:
                        game.play(playouts.choice(bench.legal(game)))
                outcome = game.outcome()
                wins += outcome is not None and tuple(outcome.winners) == (seat,)
            share = wins / runs
            if share > best_share:
                best, best_share = move, share
        assert best is not None
        return best

    return choose


def oracle_share(players: int, level: str, games: int, rollouts: int) -> float:
    """The oracle's share of wins in the seats and seeds of the games ``classify`` replays."""
    won = 0
    ours, theirs = oracle_player(rollouts), bench.player("random")
    for index in range(games):
        pos, mine, rng = start(players, level, index)
        while pos.to_move is not None:
            pos.play((ours if pos.controller(pos.to_move) in mine else theirs)(pos, rng))
        outcome = pos.outcome()
        won += outcome is not None and bool(set(outcome.winners) & mine)
    return won / games


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--players", default="3,4")
    parser.add_argument("--level", default="easy")
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--oracle", type=int, default=0, help="playouts per move (0: none)")
    args = parser.parse_args()
    print(f"plotto, {args.level} against random players, {args.games} games per row")
    oracle = f"   oracle ({args.oracle} playouts)" if args.oracle else ""
    print(f"{'setup':9s} " + " ".join(f"{k:>12s}" for k in KINDS) + "   ceiling" + oracle)
    for players in (int(p) for p in args.players.split(",")):
        counts = Counter(classify(players, args.level, i) for i in range(args.games))
        ceiling = 1 - (counts["none left"] + counts["unavoidable"]) / args.games
        cells = " ".join(f"{counts[k]:12d}" for k in KINDS)
        share = oracle_share(players, args.level, args.games, args.oracle) if args.oracle else None
        interval = ""
        if share is not None:  # the oracle's 95% Wilson interval, to compare playout counts
            low, high = bench.wilson(share * args.games, args.games)
            interval = f"   {share:6.1%} ({low:.1%}-{high:.1%})"
        print(f"plotto:{players:<2d} {cells}   {ceiling:6.1%}" + interval)
    print(
        "ceiling: the score had every avoidable loss been won; "
        f"reproduce: .venv/bin/python bench/plotto_losses.py --players {args.players} "
        f"--level {args.level} --games {args.games}"
        + (f" --oracle {args.oracle}" if args.oracle else "")
    )


if __name__ == "__main__":
    main()

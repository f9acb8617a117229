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

    .venv/bin/python bench/plotto_losses.py [--players 3,4] [--level easy] [--games 300]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import robots as bench  # noqa: E402  (bench/robots.py: the players and the seeds)

from pbmserv.games import get_game  # noqa: E402
from pbmserv.games.base import Position  # noqa: E402
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


def classify(players: int, level: str, index: int) -> str:
    task = bench.Task("plotto", players, level, "random", index)
    rng = random.Random(f"plotto:{players}:{level}:random:{index}")
    pos = get_game("plotto").new(players, {})
    mine = bench.robot_seats(task)
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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--players", default="3,4")
    parser.add_argument("--level", default="easy")
    parser.add_argument("--games", type=int, default=300)
    args = parser.parse_args()
    print(f"plotto, {args.level} against random players, {args.games} games per row")
    print(f"{'setup':9s} " + " ".join(f"{k:>12s}" for k in KINDS) + "   ceiling")
    for players in (int(p) for p in args.players.split(",")):
        counts = Counter(classify(players, args.level, i) for i in range(args.games))
        ceiling = 1 - (counts["none left"] + counts["unavoidable"]) / args.games
        cells = " ".join(f"{counts[k]:12d}" for k in KINDS)
        print(f"plotto:{players:<2d} {cells}   {ceiling:6.1%}")
    print(
        "ceiling: the score had every avoidable loss been won; "
        f"reproduce: .venv/bin/python bench/plotto_losses.py --players {args.players} "
        f"--level {args.level} --games {args.games}"
    )


if __name__ == "__main__":
    main()

"""Robot strength and speed: matches against a random and a one-ply greedy player, and Ploy
nodes per second.

    .venv/bin/python bench/robots.py [--seconds S | --nodes N] [--games G] [game ...]
    .venv/bin/python bench/robots.py --nps 5        # only the Ploy search speed

Each match alternates who moves first; a game longer than ``--max-plies`` counts as a draw.
The random player picks uniformly among the legal moves; the greedy player takes a win in one
if it has one and otherwise the move whose resulting position the robot's own evaluation likes
best (ties broken at random), i.e. the robot's knowledge without its search.  Win rates are
printed with 95% Wilson intervals.  Seeds are fixed; with ``--nodes`` the robot's play is
reproducible too.  The issue's targets: at least 95% against random, 75% against greedy, at
1 second per move.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbmserv.games import get_game  # noqa: E402
from pbmserv.games.base import SWAP, Position  # noqa: E402
from pbmserv.robots import adapter_for, choose_move  # noqa: E402
from pbmserv.robots.search import Budget, search  # noqa: E402

MATCHES = {  # game -> (players, params)
    "ploy": (2, {}),
    "polis": (2, {}),
    "pylon": (2, {}),
    "plotto": (2, {}),
}


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion ``wins / n``."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denom = 1 + z * z / n
    return (centre - spread) / denom, (centre + spread) / denom


def legal(pos: Position) -> list:
    return [m for m in pos.legal_moves() if m != SWAP]


def random_player(pos: Position, rng: random.Random):
    return rng.choice(legal(pos))


def greedy_player(pos: Position, rng: random.Random):
    adapter = adapter_for(pos.game.name)
    seat = pos.to_move
    team = adapter.team(pos, pos.controller(seat))
    best, best_moves = None, []
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


def play_game(game: str, robot_seat: int, opponent, budget: Budget, rng, max_plies: int):
    """1.0 if the robot wins, 0.5 for a draw, 0.0 for a loss; and the plies played."""
    players, params = MATCHES[game]
    pos = get_game(game).new(players, params)
    robot_at = robot_seat
    plies = 0
    while pos.to_move is not None and plies < max_plies:
        if pos.controller(pos.to_move) == robot_at:
            move = choose_move(pos, budget).move
            if move == SWAP:
                robot_at = 1 - robot_at  # the seats are exchanged: the robot takes the other side
        else:
            move = opponent(pos, rng)
        pos.play(move)
        plies += 1
    outcome = pos.outcome()
    if outcome is None or outcome.draw:
        return 0.5, plies
    return (1.0 if robot_at in outcome.winners else 0.0), plies


def match(game: str, name: str, opponent, budget: Budget, games: int, max_plies: int) -> None:
    rng = random.Random(f"{game}-{name}")
    score, wins, draws, plies = 0.0, 0, 0, 0
    start = time.monotonic()
    for i in range(games):
        result, n = play_game(game, i % 2, opponent, budget, rng, max_plies)
        score += result
        wins += result == 1.0
        draws += result == 0.5
        plies += n
    low, high = wilson(wins, games)
    print(
        f"{game:<7} vs {name:<7} won {wins}/{games} = {wins / games:6.1%} "
        f"(95% Wilson {low:5.1%}..{high:5.1%}), draws {draws}, "
        f"{plies / games:.0f} plies a game, {time.monotonic() - start:.0f}s",
        flush=True,
    )


def nodes_per_second(seconds: float) -> None:
    pos = get_game("ploy").new(2, {})
    result = search(pos, adapter_for("ploy"), Budget(seconds=seconds))
    rate = result.nodes / result.seconds
    print(
        f"Ploy, two-player start, {seconds:g}s: {result.nodes} nodes, depth {result.depth}, "
        f"{rate:,.0f} nodes/s (the Ploy program's manual: about 40,000 nodes/s)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*", default=list(MATCHES), help="games to play")
    parser.add_argument("--seconds", type=float, default=1.0, help="robot seconds per move")
    parser.add_argument("--nodes", type=int, default=None, help="robot nodes per move instead")
    parser.add_argument("--count", type=int, default=20, help="games per match")
    parser.add_argument("--opponents", default="random,greedy", help="random, greedy or both")
    parser.add_argument("--max-plies", type=int, default=300)
    parser.add_argument("--nps", type=float, default=3.0, help="seconds of the Ploy speed test")
    parser.add_argument("--nps-only", action="store_true")
    args = parser.parse_args()
    budget = Budget(nodes=args.nodes) if args.nodes else Budget(seconds=args.seconds)
    print(
        f"robot budget per move: {budget.nodes or budget.seconds} {'nodes' if budget.nodes else 's'}"
    )
    if args.nps:
        nodes_per_second(args.nps)
    if args.nps_only:
        return
    opponents = {"random": random_player, "greedy": greedy_player}
    for game in args.games:
        for name in args.opponents.split(","):
            match(game, name, opponents[name], budget, args.count, args.max_plies)


if __name__ == "__main__":
    main()

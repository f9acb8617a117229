"""Engine speed: random playouts per second and legal-move generations per second, per game.

Run with ``make bench`` (or ``.venv/bin/python bench/engines.py [--seconds S] [game ...]``).
Seeds are fixed, so two runs of the same code play the same games; the machine is shared, so
compare figures from one run (each game is measured in several rounds and the median shown).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbmserv.games import all_games, get_game  # noqa: E402
from pbmserv.games.base import Game, Position  # noqa: E402

MAX_PLIES = 1000


def playout(game: Game, players: int, params: dict, rng: random.Random) -> int:
    position = game.new(players, params)
    plies = 0
    while position.to_move is not None and plies < MAX_PLIES:
        moves = list(position.legal_moves())
        position.play(rng.choice(moves))
        plies += 1
    return plies


def sample_positions(game: Game, players: int, params: dict, count: int) -> list[Position]:
    """Positions from random games on a fixed seed, for timing move generation."""
    rng = random.Random(12345)
    out: list[Position] = [game.new(players, params)]
    while len(out) < count:
        position = game.new(players, params)
        depth = rng.randrange(0, 60)
        for _ in range(depth):
            if position.to_move is None:
                break
            position.play(rng.choice(list(position.legal_moves())))
        if position.to_move is not None:
            out.append(position)
    return out


def rate(fn, seconds: float, rounds: int = 5) -> float:
    """Median over ``rounds`` of units per second, each round running ``fn`` for seconds/rounds."""
    results = []
    for _ in range(rounds):
        units, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds / rounds:
            units += fn()
        results.append(units / (time.perf_counter() - start))
    return statistics.median(results)


def bench_game(game: Game, players: int, params: dict, seconds: float) -> str:
    rng = random.Random(2024)
    plies: list[int] = []

    def one_playout() -> int:
        plies.append(playout(game, players, params, rng))
        return 1

    playouts = rate(one_playout, seconds)
    start = game.new(players, params)
    start_gen = rate(lambda: (len(list(start.legal_moves())), 1)[1], seconds / 2)
    positions = sample_positions(game, players, params, 50)
    index = [0]

    def gen_mixed() -> int:
        p = positions[index[0] % len(positions)]
        index[0] += 1
        list(p.legal_moves())
        return 1

    mixed_gen = rate(gen_mixed, seconds / 2)
    label = f"{game.name} {players}p {' '.join(game.format_params(params))}".strip()
    return (
        f"{label:<28} playouts/s {playouts:9.1f}   mean plies {statistics.mean(plies):6.1f}   "
        f"movegen/s start {start_gen:10.0f} ({len(list(start.legal_moves()))} moves)   "
        f"movegen/s mid-game {mixed_gen:10.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("games", nargs="*", help="game names (default: all)")
    parser.add_argument("--seconds", type=float, default=4.0, help="time per measurement")
    args = parser.parse_args()
    games = [get_game(n) for n in args.games] if args.games else all_games()
    print(f"python {sys.version.split()[0]}; median of 5 rounds; {args.seconds}s per figure")
    for game in games:
        for players in game.players:
            print(bench_game(game, players, {}, args.seconds), flush=True)


if __name__ == "__main__":
    main()

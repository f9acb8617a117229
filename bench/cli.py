"""Shell command latency: ``show``, ``move`` and ``games`` against a store with 1,000 boards,
next to a bare ``python3 -c pass`` measured in the same run (the machine is shared: read the
ratios).  Usage: ``.venv/bin/python bench/cli.py [--game polis] [--boards 1000] [--runs 15]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BIN = Path(sys.executable).parent


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {result.stderr}")
    return elapsed


def populate(data: Path, game_name: str, count: int) -> list[str]:
    """Sign up players and start ``count`` boards in-process; return the first move of each."""
    from pbmserv.commands import Request, commands, run
    from pbmserv.config import load_settings
    from pbmserv.games import get_game
    from pbmserv.store.db import session_factory

    settings = load_settings(data_dir=data)
    sessions = session_factory(settings.url)
    game = get_game(game_name)
    users = [f"player{i}" for i in range(20)]
    for user in users:
        run(
            commands,
            ["signup", user, f"pw-{user}", f"{user}@example.org"],
            Request(settings, sessions),
        )
    rng = random.Random(1)
    for i in range(count):
        a, b = rng.sample(users, 2)
        run(commands, [game.name, "challenge", a, b], Request(settings, sessions))
        if i % 100 == 0:
            print(f"  {i} boards", file=sys.stderr)
    first = game.new(2)
    return sorted(first.format_move(m) for m in first.legal_moves())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", default="polis")
    parser.add_argument("--boards", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        env = {**os.environ, "PBMSERV_DATA_DIR": str(data)}
        env.pop("PBMSERV_DATABASE_URL", None)
        print(f"populating {args.boards} {args.game} boards ...", file=sys.stderr)
        first_moves = populate(data, args.game, args.boards)
        from pbmserv.config import load_settings
        from pbmserv.store.db import session_factory
        from pbmserv.store.models import Board

        sessions = session_factory(load_settings(data_dir=data).url)
        with sessions() as s:
            seats = {b.number: b.seats[0].user.userid for b in s.query(Board).all()}
        numbers = sorted(seats)
        exe = str(BIN / "pbmserv")
        figures: dict[str, list[float]] = {
            "python3 -c pass": [],
            "show": [],
            "games": [],
            "move": [],
        }
        for i in range(args.runs):
            figures["python3 -c pass"].append(timed([sys.executable, "-c", "pass"], env))
            number = numbers[(i * 37) % len(numbers)]
            figures["show"].append(timed([exe, args.game, "show", str(number)], env))
            figures["games"].append(timed([exe, args.game, "games", "player3"], env))
            mover = seats[numbers[i]]
            move = first_moves[i % len(first_moves)]
            figures["move"].append(
                timed([exe, args.game, "move", str(numbers[i]), mover, f"pw-{mover}", move], env)
            )
        base = statistics.median(figures["python3 -c pass"])
        print(f"{args.boards} {args.game} boards, {args.runs} runs each, medians:")
        for name, values in figures.items():
            median = statistics.median(values)
            print(f"  {name:<18} {median * 1000:8.1f} ms   {median / base:6.1f} x bare python")


if __name__ == "__main__":
    main()

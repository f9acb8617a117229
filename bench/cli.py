"""Shell start-up and per-board cost, against the import floor measured in the same run.

One run measures, interleaved, the CPU time (user + system, ``getrusage`` of the children) of:

- the floor: ``python -c 'import click, sqlalchemy.orm'`` with the venv's interpreter;
- ``polis show`` and ``polis move`` on a store of 10,000 boards without robots;
- the same ``polis move`` on the same store where every one of those boards has a robot seat
  (each command after a game command used to look at every board with a robot seat);
- then ``pbmserv tick`` on the store without robots (10,000 active boards, 1% of them due).

The 10,000 boards are copies of one board made by the domain, inserted with SQL (whatever the
schema: the columns are read from the SQLite store), so a store is ready in seconds.  The
commands run as installed: their bytecode is written by a first, unmeasured run (the floor's
modules have theirs from pip), whatever ``PYTHONDONTWRITEBYTECODE`` says.  It ends with
``cli: show/floor = X; move/floor = Y; robot boards = Z`` (ratios of medians).

Usage: ``nice -n 19 .venv/bin/python bench/cli.py [--boards 10000] [--runs 11] [--ticks 3]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BIN = Path(sys.executable).parent
FLOOR = [sys.executable, "-c", "import click, sqlalchemy.orm"]
PASSWORD = "pw-bench-1"


def cpu(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run ``cmd``; return (CPU seconds of the child, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({result.returncode}): {result.stderr}")
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used, wall


def make_store(data: Path, boards: int, spare: int, robots: bool) -> list[int]:
    """A store of ``boards`` copies of alice against a robot (or against carol), and ``spare``
    boards alice against bob to move on; return the spare boards' numbers."""
    from sqlalchemy import select, text

    from pbmserv.commands import Request, commands, run
    from pbmserv.config import load_settings
    from pbmserv.robots.service import add_robot
    from pbmserv.store.db import session_factory
    from pbmserv.store.models import Board

    settings = load_settings(data_dir=data)
    sessions = session_factory(settings.url)

    def ok(*words: str) -> None:
        answers = run(commands, list(words), Request(settings, sessions))
        if any(a.status for a in answers):
            raise SystemExit(f"{words}: {[a.body for a in answers]}")

    for user in ("alice", "bob", "carol"):
        ok("signup", user, PASSWORD, f"{user}@example.org")
    opponent = "carol"
    if robots:
        with sessions() as session, session.begin():
            add_robot(session, "rob", "polis", "easy", settings.clock())
        opponent = "rob"
    ok("polis", "challenge", "alice", opponent)
    for _ in range(spare):
        ok("polis", "challenge", "alice", "bob")
    with sessions() as session:
        numbers = list(session.scalars(select(Board.number).order_by(Board.number)))
    template, spares = numbers[0], numbers[1:]
    first = spares[-1] + 1
    with sessions() as session, session.begin():
        conn = session.connection()
        board_cols = [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(boards)")]
        seat_cols = [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(seats)")]
        copied = [f'"{c}"' for c in board_cols if c not in ("id", "number")]
        tid = conn.execute(text(f"SELECT id FROM boards WHERE number = {template}")).scalar_one()
        conn.execute(
            text(
                f"INSERT INTO boards ({', '.join(copied)}, number) "
                f"SELECT {', '.join(copied)}, :n FROM boards WHERE id = {tid}"
            ),
            [{"n": first + i} for i in range(boards)],
        )
        seat_copied = [f'"{c}"' for c in seat_cols if c not in ("id", "board_id")]
        conn.execute(
            text(
                f"INSERT INTO seats ({', '.join(seat_copied)}, board_id) "
                f"SELECT {', '.join('s.' + c for c in seat_copied)}, b.id FROM seats s "
                f"JOIN boards b ON b.number >= {first} AND b.game = 'polis' "
                f"WHERE s.board_id = {tid}"
            )
        )
        # 1% of the copies: the last move 8 days ago, so that the clock has nags to send
        old = settings.clock() - timedelta(days=8)
        for board in session.scalars(
            select(Board).where(Board.number >= first, Board.number % 100 == 0)
        ):
            board.last_move_at = old
    return spares


def first_moves() -> list[str]:
    from pbmserv.games import get_game

    position = get_game("polis").new(2)
    return sorted(position.format_move(m) for m in position.legal_moves())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--boards", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--ticks", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain, robot = Path(tmp) / "plain", Path(tmp) / "robot"
        start = time.perf_counter()
        spares = make_store(plain, args.boards, args.runs, robots=False)
        robot_spares = make_store(robot, args.boards, args.runs, robots=True)
        print(
            f"two stores of {args.boards} boards made in {time.perf_counter() - start:.1f} s",
            file=sys.stderr,
        )
        # as installed: the product's modules compiled once (the floor's are, by pip)
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("PBMSERV_") and k != "PYTHONDONTWRITEBYTECODE"
        }
        env = {**base, "PBMSERV_DATA_DIR": str(plain)}
        robot_env = {**base, "PBMSERV_DATA_DIR": str(robot)}
        polis = str(BIN / "polis")
        moves = first_moves()
        figures: dict[str, list[float]] = {
            "floor": [],
            "show": [],
            "move": [],
            "move, robot store": [],
        }
        cpu([polis, "show", str(spares[0])], env)  # warm-up: bytecode written, store migrated
        cpu([polis, "show", str(robot_spares[0])], robot_env)
        for i in range(args.runs):
            move = moves[i % len(moves)]
            figures["floor"].append(cpu(FLOOR, env)[0])
            figures["show"].append(cpu([polis, "show", str(spares[0])], env)[0])
            cmd = [polis, "move", str(spares[i]), "alice", PASSWORD, move]
            figures["move"].append(cpu(cmd, env)[0])
            cmd = [polis, "move", str(robot_spares[i]), "alice", PASSWORD, move]
            figures["move, robot store"].append(cpu(cmd, robot_env)[0])
        ticks = [cpu([str(BIN / "pbmserv"), "tick"], env) for _ in range(args.ticks)]
    medians = {name: statistics.median(values) for name, values in figures.items()}
    floor = medians["floor"]
    print(f"{args.boards} boards per store, {args.runs} runs each, CPU medians:")
    for name, median in medians.items():
        print(f"  {name:<18} {median * 1000:8.1f} ms   {median / floor:5.2f} x floor")
    tick_cpu = statistics.median(t[0] for t in ticks)
    tick_wall = statistics.median(t[1] for t in ticks)
    print(
        f"pbmserv tick, {args.boards + args.runs} active boards: median of {args.ticks}: "
        f"{tick_cpu:.2f} s CPU, {tick_wall:.2f} s wall (first: {ticks[0][1]:.2f} s wall)"
    )
    print(
        f"cli: show/floor = {medians['show'] / floor:.2f}; "
        f"move/floor = {medians['move'] / floor:.2f}; "
        f"robot boards = {medians['move, robot store'] / medians['move']:.2f}"
    )


if __name__ == "__main__":
    main()

"""Mail throughput: concurrent SMTP clients send move mails for many boards to a running
``pbmserv serve`` (SQLite store, Maildir outbox), and, in the same run, the same load to a bare
aiosmtpd server that accepts and discards.  Prints accepted mails per second for both and their
ratio, processed moves per second, and end-to-end latency (mail stored -> answer in the outbox)
at the median and the 99th percentile.

Usage: ``.venv/bin/python bench/mail.py [--clients 8] [--boards 40] [--moves 10] [--game pylon]``
"""

from __future__ import annotations

import argparse
import os
import random
import smtplib
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BIN = Path(sys.executable).parent
RCPT = "pbmserv@localhost"
BARE = """
import sys, time
from aiosmtpd.controller import Controller
class Discard:
    async def handle_DATA(self, server, session, envelope):
        return "250 Message accepted"
c = Controller(Discard(), hostname="127.0.0.1", port=int(sys.argv[1]))
c.start()
print("ready", flush=True)
sys.stdin.read()
c.stop()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on {port}")


def mail(sender: str, subject: str) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, RCPT, subject
    msg["Message-ID"] = make_msgid(domain="bench.example")
    msg.set_content("Good move, I think.\n")
    return msg.as_bytes()


def prepare(data: Path, game_name: str, boards: int, moves: int) -> list[list[tuple[str, bytes]]]:
    """Players, boards, and per board its move mails in order (sender, bytes)."""
    from pbmserv.commands import Request, commands, run
    from pbmserv.config import load_settings
    from pbmserv.games import get_game
    from pbmserv.store.db import session_factory

    settings = load_settings(data_dir=data)
    sessions = session_factory(settings.url)
    game = get_game(game_name)
    rng = random.Random(3)
    plans = []
    for b in range(boards):
        players = [f"p{2 * b}", f"p{2 * b + 1}"]
        for p in players:
            run(commands, ["signup", p, f"pw-{p}", f"{p}@example.org"], Request(settings, sessions))
        run(commands, [game.name, "challenge", *players], Request(settings, sessions))
        position = game.new(2)
        plan = []
        for ply in range(moves):
            if position.to_move is None:
                break
            choices = [m for m in position.legal_moves() if str(m) not in ("swap", "resign")]
            move = rng.choice(choices)
            user = players[position.to_move]
            line = f"{game.name} move {101 + b} {user} pw-{user} {position.format_move(move)}#{ply + 1}"
            plan.append((f"{user}@example.org", mail(f"{user}@example.org", line)))
            position.play(move)
        plans.append(plan)
    return plans


def blast(port: int, plans: list[list[tuple[str, bytes]]], clients: int) -> float:
    """Send every mail (boards split among the clients, each board in order); return seconds."""
    shares = [plans[i::clients] for i in range(clients)]
    errors: list[BaseException] = []

    def client(share: list[list[tuple[str, bytes]]]) -> None:
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=60) as smtp:
                for ply in range(max((len(p) for p in share), default=0)):
                    for plan in share:
                        if ply < len(plan):
                            sender, raw = plan[ply]
                            smtp.sendmail(sender, [RCPT], raw)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(s,)) for s in shares]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"client error: {errors[0]!r}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--boards", type=int, default=40)
    parser.add_argument("--moves", type=int, default=10)
    parser.add_argument("--game", default="pylon")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        print(f"preparing {args.boards} {args.game} boards ...", file=sys.stderr)
        plans = prepare(data, args.game, args.boards, args.moves)
        total = sum(len(p) for p in plans)

        port = free_port()
        bare = subprocess.Popen(
            [sys.executable, "-c", BARE, str(port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        bare.stdout.readline()  # type: ignore[union-attr]
        bare_seconds = blast(port, plans, args.clients)
        bare.communicate("")

        port = free_port()
        env = {**os.environ, "PBMSERV_DATA_DIR": str(data), "PBMSERV_LISTEN_PORT": str(port)}
        env.pop("PBMSERV_DATABASE_URL", None)
        config = data / "bench.toml"
        config.write_text('[pbmserv]\naccept_recipients = ["pbmserv@localhost"]\n')
        env["PBMSERV_CONFIG"] = str(config)
        server = subprocess.Popen(
            [str(BIN / "pbmserv"), "serve"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_port(port)
            ours_seconds = blast(port, plans, args.clients)
            from sqlalchemy import func, select

            from pbmserv.config import load_settings
            from pbmserv.store.db import session_factory
            from pbmserv.store.models import Inbox, InboxStatus, Outbox

            sessions = session_factory(load_settings(data_dir=data).url)
            start = time.perf_counter()
            while True:
                with sessions() as s:
                    waiting = s.scalar(
                        select(func.count())
                        .select_from(Inbox)
                        .where(Inbox.status.in_([InboxStatus.new, InboxStatus.processing]))
                    )
                if not waiting:
                    break
                time.sleep(0.1)
            drain = time.perf_counter() - start
            with sessions() as s:
                rows = s.execute(
                    select(Inbox.received, func.min(Outbox.created))
                    .join(Outbox, Outbox.inbox_id == Inbox.id)
                    .group_by(Inbox.id, Inbox.received)
                ).all()
                first = s.scalar(select(func.min(Inbox.received)))
                last = s.scalar(
                    select(func.max(Outbox.created)).where(Outbox.inbox_id.is_not(None))
                )
        finally:
            server.terminate()
            server.wait(30)
        latencies = sorted((answered - received).total_seconds() for received, answered in rows)
        p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
        processing = (last - first).total_seconds()
        print(f"{total} move mails, {args.clients} clients, {args.boards} {args.game} boards")
        print(f"  bare aiosmtpd (accept, discard): {total / bare_seconds:8.1f} mails/s accepted")
        print(
            f"  pbmserv serve (store durably):   {total / ours_seconds:8.1f} mails/s accepted"
            f"   ratio {bare_seconds / ours_seconds:5.2f} of bare"
        )
        print(
            f"  processed moves:                 {len(rows) / processing:8.1f} moves/s"
            f"   (queue drained {drain:.1f}s after the last 250)"
        )
        print(
            f"  end-to-end latency (stored -> answer queued): median {statistics.median(latencies) * 1000:.0f} ms,"
            f" p99 {p99 * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()

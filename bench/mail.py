"""Mail throughput and latency of one ``pbmserv serve``, next to a bare aiosmtpd sink measured
in the same run (the machine is shared: read the ratios).

1. Throughput: 8 SMTP clients send move mails for many boards as fast as they can, first to a
   bare aiosmtpd server that accepts and discards, then to ``pbmserv serve`` (store durably,
   process, answer).  ``processed/sink`` is the server's processed moves per second (first mail
   accepted to last answer written) over the sink's accepted mails per second.
2. Latency: move mails for other boards at a steady ``--rate`` (100/s) for ``--seconds``;
   the time from the listener accepting a mail to its answer being written, that is committed
   with the worker's batch (server clock, both ends), median and 99th percentile.
   The latency is also split at the moment the worker claimed the mail: waiting for the
   worker, then its password check and processing (with its batch) until the answer was
   written; and the CPU per mail
   of the server process and its worker meanwhile says how busy the worker was (the latency
   grows steeply as that nears a whole core).
3. With ``--database-url`` of a PostgreSQL database (its tables are dropped first!) the same runs
   go there, and ``--scaling`` also measures the drain rate of a full inbox by one
   ``pbmserv serve`` with 1 and with 2 worker processes (``workers``): ``--scaling-boards``
   (300) new boards each time, one move mail each, and how busy the machine was; and the most
   that two workers could gain on this machine's cores, from how busy one worker kept it.

Every player of the bench logs in for the first time since the server started (its first move
mail), and the server checks that password with argon2 at the product's cost (17 ms of CPU
each on the 2-core machine of 2026-11-24, where 100 first logins a second filled both cores).
The steady run sends every board's first two moves first, so its first logins all come in its
first two seconds; the run says how many cores argon2 alone needed then.
The throughput run also says how much CPU a move mail cost the server process (listener and
sender), its worker, and the whole machine.

``--cheap-passwords`` is an experiment, not the product: it makes the players' argon2 hashes
cheap (time cost 1, 1 MiB) to show what is left of the latency without that cost; the run
then says so before its last line.  ``--returning`` keeps the product's cost and measures a
server that has seen its players before (as one that runs for days has): before the steady
run, each of its players mails once for his board (``move BOARD USERID PASSWORD``, which mails
the board back), unmeasured.

Ends with ``mail: processed/sink = X; p99 at 100/s = Y ms``.

    .venv/bin/python bench/mail.py [--clients 8] [--boards 40] [--moves 10] [--game pylon]
        [--rate 100] [--seconds 10] [--database-url URL --scaling [--scaling-boards 300]]
        [--cheap-passwords] [--returning]
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
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
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
Plan = list[tuple[str, bytes]]  # one board's move mails in order: (sender, bytes)


def players_of(board: int) -> list[str]:
    """The two players of the bench's board ``board`` (counted from 0; its number is 101 + it)."""
    return [f"p{2 * board}", f"p{2 * board + 1}"]


def prepare(
    data: Path, game_name: str, first: int, boards: int, moves: int, url: str
) -> list[Plan]:
    """Players and ``boards`` boards (player numbers from ``2 * first``), and each board's move
    mails in order."""
    from pbmserv.commands import Request, commands, run
    from pbmserv.config import load_settings
    from pbmserv.games import get_game
    from pbmserv.store.db import session_factory

    settings = load_settings(data_dir=data, database_url=url)
    sessions = session_factory(settings.url)
    game = get_game(game_name)
    rng = random.Random(3 + first)
    plans = []
    for b in range(first, first + boards):
        players = players_of(b)
        for p in players:
            run(commands, ["signup", p, f"pw-{p}", f"{p}@example.org"], Request(settings, sessions))
        run(commands, [game.name, "challenge", *players], Request(settings, sessions))
        number = 101 + b  # boards are numbered in the order they are made
        position = game.new(2)
        plan = []
        for ply in range(moves):
            if position.to_move is None:
                break
            choices = [m for m in position.legal_moves() if str(m) not in ("swap", "resign")]
            move = rng.choice(choices)
            user = players[position.to_move]
            text = position.format_move(move)
            line = f"{game.name} move {number} {user} pw-{user} {text}#{ply + 1}"
            plan.append((f"{user}@example.org", mail(f"{user}@example.org", line)))
            position.play(move)
        plans.append(plan)
    return plans


def greetings(game_name: str, first: int, boards: int) -> list[Plan]:
    """One mail per player of boards ``first`` ... that logs in and changes nothing: ``move
    BOARD USERID PASSWORD`` alone mails the board back."""
    return [
        [
            (f"{p}@example.org", mail(f"{p}@example.org", f"{game_name} move {101 + b} {p} pw-{p}"))
            for p in players_of(b)
        ]
        for b in range(first, first + boards)
    ]


def blast(port: int, plans: list[Plan], clients: int) -> float:
    """Send every mail as fast as the server takes them (boards split among the clients, each
    board in order); return the seconds it took."""
    shares = [plans[i::clients] for i in range(clients)]
    errors: list[BaseException] = []

    def client(share: list[Plan]) -> None:
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=60) as smtp:
                for ply in range(max((len(p) for p in share), default=0)):
                    for plan in share:
                        if ply < len(plan):
                            sender, raw = plan[ply]
                            smtp.sendmail(sender, [RCPT], raw)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    start = time.perf_counter()
    _run_threads([threading.Thread(target=client, args=(s,)) for s in shares])
    if errors:
        raise SystemExit(f"client error: {errors[0]!r}")
    return time.perf_counter() - start


def paced_order(plans: list[Plan]) -> list[tuple[str, bytes]]:
    """The order :func:`paced` sends the mails in: round by round, every board's next move."""
    return [
        plan[ply] for ply in range(max(len(p) for p in plans)) for plan in plans if ply < len(plan)
    ]


def argon2_ms() -> float:
    """CPU milliseconds of one argon2 check at the cost the server uses (as configured)."""
    from pbmserv.config import load_settings
    from pbmserv.domain.accounts import hasher

    checker = hasher(load_settings())
    hashed = checker.hash("bench")
    checker.verify(hashed, "bench")  # (the first check pays for setting up)
    start = time.process_time()
    for _ in range(5):
        checker.verify(hashed, "bench")
    return (time.process_time() - start) / 5 * 1000


def first_logins(plans: list[Plan], rate: float) -> tuple[int, float]:
    """How many mails of a paced run are their player's first, and over how many seconds of
    the run (from its start to the last of them) they come."""
    seen: set[str] = set()
    last = -1
    for slot, (sender, _) in enumerate(paced_order(plans)):
        if sender not in seen:
            seen.add(sender)
            last = slot
    return len(seen), (last + 1) / rate


def paced(port: int, plans: list[Plan], clients: int, rate: float) -> float:
    """Send the mails at a steady ``rate`` per second (round by round, so each board's mails
    stay in order); return the seconds it took.  Says so when the server could not keep up."""
    order = paced_order(plans)
    slots = list(enumerate(order))
    lock = threading.Lock()
    errors: list[BaseException] = []
    late = [0]
    start = time.perf_counter() + 0.2

    def client() -> None:
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=60) as smtp:
                while True:
                    with lock:
                        if not slots:
                            return
                        i, (sender, raw) = slots.pop(0)
                    delay = start + i / rate - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)
                    elif delay < -0.05:
                        late[0] += 1
                    smtp.sendmail(sender, [RCPT], raw)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    _run_threads([threading.Thread(target=client) for _ in range(clients)])
    if errors:
        raise SystemExit(f"client error: {errors[0]!r}")
    if late[0]:
        print(
            f"  ({late[0]} of {len(order)} mails left more than 50 ms late: the server was slow to accept)"
        )
    return time.perf_counter() - start


def _run_threads(threads: list[threading.Thread]) -> None:
    for t in threads:
        t.start()
    for t in threads:
        t.join()


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
    msg["Date"] = formatdate()  # (a mail without one runs nothing)
    msg.set_content("Good move, I think.\n")
    return msg.as_bytes()


def bare_rate(plans: list[Plan], clients: int) -> float:
    """Mails per second a bare aiosmtpd server accepts (and discards) under the same load."""
    port = free_port()
    bare = subprocess.Popen(
        [sys.executable, "-c", BARE, str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert bare.stdout is not None
    bare.stdout.readline()
    seconds = blast(port, plans, clients)
    bare.communicate("")
    return sum(len(p) for p in plans) / seconds


def server_env(data: Path, url: str, port: int) -> dict[str, str]:
    env = {**os.environ, "PBMSERV_DATA_DIR": str(data), "PBMSERV_LISTEN_PORT": str(port)}
    env["PBMSERV_DATABASE_URL"] = url
    env["PBMSERV_WEB_ENABLED"] = "false"
    config = data / "bench.toml"
    config.write_text('[pbmserv]\naccept_recipients = ["pbmserv@localhost"]\n')
    env["PBMSERV_CONFIG"] = str(config)
    return env


@contextmanager
def serving(
    env: dict[str, str], *extra: str, count: int = 1
) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs = [
        subprocess.Popen(
            [str(BIN / "pbmserv"), "serve", *extra],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(60)


def until(
    sessions, query, done, failure: str, timeout: float = 600, interval: float = 0.05
) -> None:  # type: ignore[no-untyped-def]
    """Poll the scalar ``query`` until ``done(value)``; stop the bench saying ``failure`` after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with sessions() as s:
            if done(s.scalar(query)):
                return
        time.sleep(interval)
    raise SystemExit(failure)


def drained(sessions) -> None:  # type: ignore[no-untyped-def]
    """Wait until the server has processed every stored mail."""
    from sqlalchemy import func, select

    from pbmserv.store.models import Inbox, InboxStatus

    waiting = [InboxStatus.new, InboxStatus.processing]
    query = select(func.count()).select_from(Inbox).where(Inbox.status.in_(waiting))
    until(sessions, query, lambda n: not n, "the server did not process every mail in time")


def sent(sessions) -> None:  # type: ignore[no-untyped-def]
    """Wait until the server has handed every answer on (none pending or being sent)."""
    from sqlalchemy import func, select

    from pbmserv.store.models import Outbox, OutboxStatus

    busy = [OutboxStatus.pending, OutboxStatus.sending]
    query = select(func.count()).select_from(Outbox).where(Outbox.status.in_(busy))
    until(sessions, query, lambda n: not n, "the server did not send every answer in time")


def started(sessions, after: int) -> None:  # type: ignore[no-untyped-def]
    """Wait for the first mail after inbox id ``after`` to be processed."""
    from sqlalchemy import select

    from pbmserv.store.models import Inbox

    query = select(Inbox.id).where(Inbox.id > after, Inbox.processed_at.is_not(None)).limit(1)
    until(
        sessions, query, lambda i: i is not None, "the server processed no mail in time", 60, 0.01
    )


def process_cpu(pid: int) -> float:
    """CPU seconds process ``pid`` has used (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_cpu(server: subprocess.Popen[bytes]) -> tuple[float, float]:
    """CPU seconds of a ``pbmserv serve``: (its own process: listener and sender, its worker
    processes)."""
    children = [
        int(pid)
        for task in Path(f"/proc/{server.pid}/task").iterdir()
        for pid in (task / "children").read_text().split()
    ]
    return process_cpu(server.pid), sum(process_cpu(pid) for pid in children)


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (not idle, not waiting for I/O) since boot:
    what every process took, the database server's too."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


Times = list[tuple[datetime, datetime, datetime]]


def answered(rows: Times) -> tuple[list[float], float]:
    """Per mail, sorted: seconds from accepted to its answer written; and the seconds from the
    first accepted to the last answer written."""
    latencies = sorted((done - received).total_seconds() for received, _, done in rows)
    span = (max(d for _, _, d in rows) - min(r for r, _, _ in rows)).total_seconds()
    return latencies, span


def split(rows: Times) -> tuple[list[float], list[float]]:
    """Per mail, sorted: seconds waiting for the worker (accepted to claimed), and seconds
    from claimed to its answer written."""
    waiting = sorted((claimed - received).total_seconds() for received, claimed, _ in rows)
    processing = sorted((done - claimed).total_seconds() for _, claimed, done in rows)
    return waiting, processing


def times(sessions, after_id: int) -> Times:  # type: ignore[no-untyped-def]
    """(accepted, claimed by the worker, answer written) of the answered mails after
    ``after_id``; written is when the worker committed the answer (its batch's commit)."""
    from sqlalchemy import exists, select

    from pbmserv.store.models import Inbox, Outbox

    with sessions() as s:
        rows = s.execute(
            select(Inbox.received, Inbox.claimed_at, Inbox.processed_at).where(
                Inbox.id > after_id, exists().where(Outbox.inbox_id == Inbox.id)
            )
        ).all()
    return [(r, c, d) for r, c, d in rows]


def last_inbox_id(sessions) -> int:  # type: ignore[no-untyped-def]
    from sqlalchemy import func, select

    from pbmserv.store.models import Inbox

    with sessions() as s:
        return s.scalar(select(func.max(Inbox.id))) or 0


def percentile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def scaling(data: Path, url: str, game: str, first_board: int, boards: int) -> None:
    """Drain rate of a full inbox by one ``pbmserv serve`` with one worker process, then with
    two (``workers = 2``; PostgreSQL), each time ``boards`` new boards with one move mail each
    (the first move; so every mail is its player's first login).  A board's next move is not
    queued behind it: players answer board mails, so a board has one move in flight, and two
    moves of one board in the queue would only wait for each other's row lock (or, taken by two
    workers in the wrong order, be refused).  The rate runs from the first batch committed to
    the last (the start-up of the processes is not counted)."""
    from sqlalchemy import func, select

    from pbmserv.config import load_settings
    from pbmserv.mail import inbox
    from pbmserv.store.db import session_factory
    from pbmserv.store.models import Inbox, MoveRecord

    sessions = session_factory(load_settings(data_dir=data, database_url=url).url)
    rates, busy = [], []
    for phase, workers in enumerate((1, 2)):
        print(f"preparing {boards} {game} boards ...", file=sys.stderr)
        plans = prepare(data, game, first_board + phase * boards, boards, 1, url)
        now = datetime.now().astimezone()
        first = last_inbox_id(sessions)
        with sessions() as s:
            recorded = s.scalar(select(func.count()).select_from(MoveRecord)) or 0
        for plan in plans:
            inbox.store(sessions, plan[0][1], plan[0][0], [RCPT], now)
        env = server_env(data, url, free_port())
        env["PBMSERV_WORKERS"] = str(workers)
        with serving(env):
            started(sessions, first)
            before = busy_seconds(), time.monotonic()
            drained(sessions)
            cores = (busy_seconds() - before[0]) / (time.monotonic() - before[1])
            busy.append(cores)
        with sessions() as s:
            start, end = s.execute(
                select(func.min(Inbox.processed_at), func.max(Inbox.processed_at)).where(
                    Inbox.id > first
                )
            ).one()
            assert start is not None and end is not None
            in_first = (
                s.scalar(select(func.count()).where(Inbox.id > first, Inbox.processed_at == start))
                or 0
            )
            moves = (s.scalar(select(func.count()).select_from(MoveRecord)) or 0) - recorded
        rates.append((len(plans) - in_first) / max((end - start).total_seconds(), 1e-3))
        print(
            f"  {workers} worker process{'es' if workers > 1 else ''}: {rates[-1]:7.1f} mails/s drained "
            f"({len(plans)} mails, {moves} moves recorded; the machine busy {cores:.2f} of "
            f"{os.cpu_count()} cores meanwhile)"
        )
    print(f"  PostgreSQL 2 workers / 1 worker = {rates[1] / rates[0]:.2f}")
    ceiling = (os.cpu_count() or 1) / busy[0]  # (the work per mail is the same with two)
    print(
        f"  (this machine's cores allow at most {ceiling:.2f}: one worker kept {busy[0]:.2f} "
        f"of {os.cpu_count()} busy, with PostgreSQL, the listener and the sender)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--boards", type=int, default=40)
    parser.add_argument("--moves", type=int, default=10)
    parser.add_argument("--game", default="pylon")
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--scaling", action="store_true")
    parser.add_argument("--scaling-boards", type=int, default=300)
    parser.add_argument("--cheap-passwords", action="store_true")
    parser.add_argument("--returning", action="store_true")
    args = parser.parse_args()
    if args.cheap_passwords:  # an experiment: the players' hashes and the server's checks
        os.environ["PBMSERV_ARGON2_TIME_COST"] = "1"
        os.environ["PBMSERV_ARGON2_MEMORY_KIB"] = "1024"
    steady_boards = max(1, int(args.rate * args.seconds / args.moves))
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        url = args.database_url or f"sqlite:///{data / 'pbmserv.sqlite3'}"
        if args.database_url:
            _drop_tables(url)
        print(f"preparing {args.boards + steady_boards} {args.game} boards ...", file=sys.stderr)
        plans = prepare(data, args.game, 0, args.boards, args.moves, url)
        steady = prepare(data, args.game, args.boards, steady_boards, args.moves, url)
        total = sum(len(p) for p in plans)
        sink = bare_rate(plans, args.clients)

        from pbmserv.config import load_settings
        from pbmserv.store.db import session_factory

        sessions = session_factory(load_settings(data_dir=data, database_url=url).url)
        port = free_port()
        with serving(server_env(data, url, port)) as (server,):
            wait_port(port)
            cpu_before, busy_before = server_cpu(server), busy_seconds()
            accept_seconds = blast(port, plans, args.clients)
            drained(sessions)
            sent(sessions)
            cpu_after, busy_after = server_cpu(server), busy_seconds()
            latencies, span = answered(times(sessions, 0))
            processed = len(latencies) / span
            if args.returning:
                blast(port, greetings(args.game, args.boards, steady_boards), args.clients)
                drained(sessions)
                sent(sessions)
            before = last_inbox_id(sessions)
            steady_before = server_cpu(server)
            paced(port, steady, args.clients, args.rate)
            drained(sessions)
            steady_after = server_cpu(server)
            paced_times = times(sessions, before)
            steady_latencies, _ = answered(paced_times)
            waiting, processing = split(paced_times)
        p99 = percentile(steady_latencies, 0.99) * 1000
        print(
            f"{total} move mails, {args.clients} clients, {args.boards} {args.game} boards, {url.split(':')[0]}"
        )
        print(f"  bare aiosmtpd (accept, discard): {sink:8.1f} mails/s accepted")
        print(f"  pbmserv serve (store durably):   {total / accept_seconds:8.1f} mails/s accepted")
        print(
            f"  pbmserv serve (processed):       {processed:8.1f} moves/s, first accepted to last answer"
        )
        per_move = [
            (after - before) * 1000 / total
            for after, before in zip(cpu_after, cpu_before, strict=True)
        ]
        print(
            f"    CPU per move mail: {per_move[0]:.1f} ms the server process (listener, sender), "
            f"{per_move[1]:.1f} ms its worker; {(busy_after - busy_before) * 1000 / total:.1f} ms "
            "the whole machine (the database and these clients too)"
        )
        print(
            f"  at {args.rate:.0f} mails/s for {args.seconds:.0f} s ({len(steady_latencies)} mails): accepted -> "
            f"answer written median {statistics.median(steady_latencies) * 1000:.0f} ms, p99 {p99:.0f} ms"
        )
        steady_cpu = [
            (after - before) * 1000 / len(steady_latencies)
            for after, before in zip(steady_after, steady_before, strict=True)
        ]
        print(
            f"    CPU per mail meanwhile: {steady_cpu[0]:.1f} ms the server process, "
            f"{steady_cpu[1]:.1f} ms its worker (busy {steady_cpu[1] * args.rate / 10:.0f}% "
            "of a core at that rate)"
        )
        print(
            f"    waiting for the worker median {statistics.median(waiting) * 1000:.0f} ms, "
            f"p99 {percentile(waiting, 0.99) * 1000:.0f} ms; claimed -> answer written median "
            f"{statistics.median(processing) * 1000:.0f} ms, p99 {percentile(processing, 0.99) * 1000:.0f} ms"
        )
        players, first_seconds = first_logins(steady, args.rate)
        if args.returning:
            print(
                "    0 of those mails were their player's first login; --returning: the "
                f"{players} players had each mailed once before"
            )
        else:
            cost = argon2_ms()
            needed = players / first_seconds * cost / 1000
            print(
                f"    {players} of those mails were their player's first login (an argon2 check "
                f"each, {cost:.0f} ms of CPU here), all sent in the first {first_seconds:.1f} s: "
                f"argon2 alone needed {needed:.1f} of this machine's {os.cpu_count()} cores then"
            )
        if args.scaling:
            if not args.database_url.startswith("postgresql"):
                raise SystemExit("--scaling needs --database-url of a PostgreSQL database")
            scaling(data, url, args.game, args.boards + steady_boards, args.scaling_boards)
        if args.cheap_passwords:
            print("  (--cheap-passwords: argon2 at time cost 1 and 1 MiB, not the product's cost)")
        print(
            f"mail: processed/sink = {processed / sink:.3f}; p99 at {args.rate:.0f}/s = {p99:.0f} ms"
        )


def _drop_tables(url: str) -> None:
    from sqlalchemy import MetaData, create_engine

    engine = create_engine(url)
    meta = MetaData()
    meta.reflect(engine)
    meta.drop_all(engine)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE IF EXISTS alembic_version")
    engine.dispose()


if __name__ == "__main__":
    main()

"""The sender's cost per mail next to its floor, measured in the same run (read the ratios).

The floor builds each message as the sender does (``prepare_message``) and hands it to the
same sink with no store at all; the sender also claims the rows, reads them and records the
results.  Both run for the Maildir and for an SMTP relay (a bare aiosmtpd on 127.0.0.1, in this
process).  Then the composing alone: the sender's fast path against the ``email`` package
building and flattening the same message (``build_message``, written as the Maildir writes
it).  Also the sender woken for ``--due`` mails at a time, as after each small batch of a
worker under a steady load: its Python calls and write transactions per mail sent (exact: they
compare commits whatever the machine's load).  Ends with ``sender: maildir/floor = X;
smtp/floor = Y; compose fast/package = Z`` (CPU seconds per mail).

    .venv/bin/python bench/sender.py [--mails 1000] [--rounds 3] [--due 8]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import shutil
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from email.generator import BytesGenerator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiosmtpd.controller import Controller  # noqa: E402
from sqlalchemy import event, select, update  # noqa: E402
from sqlalchemy.orm import Session, sessionmaker  # noqa: E402

from pbmserv.config import Settings, load_settings  # noqa: E402
from pbmserv.mail.compose import OutgoingMail, build_message, prepare_message  # noqa: E402
from pbmserv.mail.sender import deliver_pending, make_sink  # noqa: E402
from pbmserv.store.db import session_factory  # noqa: E402
from pbmserv.store.models import Outbox, OutboxStatus  # noqa: E402

NOW = datetime(2026, 11, 1, tzinfo=UTC)
BODY = "A board of about thirty lines, as a move's answer has.\n" * 30


class Discard:
    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        return "250 OK"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_per_mail(run: Callable[[], int]) -> float:
    start = time.process_time()
    mails = run()
    return (time.process_time() - start) / mails


def queue_answers(sessions: sessionmaker[Session], mails: int, due: datetime) -> None:
    """``mails`` pending board mails in the outbox, each due at ``due``."""
    with sessions() as session, session.begin():
        for i in range(mails):
            session.add(
                Outbox(
                    recipient=f"p{i}@example.org",
                    subject=f"Pylon Board {101 + i} - your move",
                    body=BODY,
                    created=NOW,
                    status=OutboxStatus.pending,
                    next_attempt=due,
                )
            )


def sender_run(settings: Settings, mails: int) -> Callable[[], int]:
    sessions = session_factory(settings.url)
    queue_answers(sessions, mails, NOW)
    return lambda: deliver_pending(sessions, settings, make_sink(settings), NOW)


def floor_run(settings: Settings, mails: int) -> Callable[[], int]:
    def run() -> int:
        sink = make_sink(settings)
        with sink:
            for i in range(mails):
                outgoing = OutgoingMail(
                    f"p{i}@example.org", f"Pylon Board {101 + i} - your move", BODY, None, []
                )
                sink.send(
                    prepare_message(
                        outgoing,
                        from_addr=settings.server_address,
                        server_id=settings.server_name,
                        domain=settings.mail_domain,
                        now=NOW,
                        fold=sink.folds_headers,
                    )
                )
        return mails

    return run


def in_rounds(settings: Settings, mails: int, due: int) -> tuple[float, float]:
    """The sender woken for ``due`` mails at a time, as after each small batch of a worker
    answering a steady load: (Python calls, write transactions) per mail sent, both exact
    (the same on every run of a commit, however busy the machine is)."""
    sessions = session_factory(settings.url)
    queue_answers(sessions, mails, datetime(2100, 1, 1, tzinfo=UTC))  # due round by round below
    with sessions() as session:
        ids = list(session.scalars(select(Outbox.id).order_by(Outbox.id)))
    commits = [0]

    def count(*_args: object) -> None:
        commits[0] += 1

    profile, sink, sent = cProfile.Profile(), make_sink(settings), 0
    for start in range(0, len(ids), due):
        with sessions() as session, session.begin():
            now_due = Outbox.id.in_(ids[start : start + due])
            session.execute(update(Outbox).where(now_due).values(next_attempt=NOW))
        event.listen(sessions.kw["bind"], "commit", count)
        profile.enable()
        sent += deliver_pending(sessions, settings, sink, NOW)
        profile.disable()
        event.remove(sessions.kw["bind"], "commit", count)
    calls = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    return calls / sent, commits[0] / sent


def compose_run(fast: bool, mails: int) -> Callable[[], int]:
    """Compose ``mails`` answers to the bytes a Maildir gets: the fast path or the package."""
    how = {"from_addr": "pbmserv@localhost", "server_id": "pbmserv", "domain": "localhost"}
    outgoing = [
        OutgoingMail(f"p{i}@example.org", f"Pylon Board {101 + i} - your move", BODY, f"<{i}@x>")
        for i in range(mails)
    ]

    def run() -> int:
        for mail in outgoing:
            if fast:
                prepare_message(mail, **how, now=NOW, fold=False)
            else:
                out = io.BytesIO()
                BytesGenerator(out, mangle_from_=False, maxheaderlen=0).flatten(
                    build_message(mail, **how, now=NOW)
                )
        return mails

    return run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mails", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--due", type=int, default=8, help="mails due per round of the sender (the exact part)"
    )
    args = parser.parse_args()
    port = free_port()
    relay = Controller(Discard(), hostname="127.0.0.1", port=port)
    relay.start()
    ratios = {}
    scratch = Path(tempfile.mkdtemp(prefix="pbmserv-bench-"))
    try:
        for outbox in ("maildir", "smtp"):
            sender: list[float] = []
            floor: list[float] = []
            for _ in range(args.rounds):  # interleaved, so that the machine's noise hits both
                for kind, times in (("floor", floor), ("sender", sender)):
                    data = Path(tempfile.mkdtemp(dir=scratch))
                    settings = load_settings(
                        data_dir=data, database_url=f"sqlite:///{data}/bench.db"
                    )
                    settings.outbox, settings.relay_host, settings.relay_port = (
                        outbox,
                        "127.0.0.1",
                        port,
                    )
                    make = floor_run if kind == "floor" else sender_run
                    times.append(cpu_per_mail(make(settings, args.mails)))
            ratios[outbox] = statistics.median(sender) / statistics.median(floor)
            print(
                f"  {outbox:8} sender {1000 * statistics.median(sender):.2f} ms/mail CPU, "
                f"floor {1000 * statistics.median(floor):.2f} ms/mail (medians of {args.rounds})"
            )
    finally:
        relay.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    data = Path(tempfile.mkdtemp(prefix="pbmserv-bench-"))
    try:
        settings = load_settings(data_dir=data, database_url=f"sqlite:///{data}/bench.db")
        calls, writes = in_rounds(settings, min(args.mails, 400), args.due)
    finally:
        shutil.rmtree(data, ignore_errors=True)
    print(
        f"  maildir  {args.due} due at a time (woken after each small batch of the worker): "
        f"{calls:.0f} Python calls and {writes:.3f} write transactions per mail sent"
    )
    fast, package = [], []
    for _ in range(args.rounds):
        fast.append(cpu_per_mail(compose_run(True, args.mails)))
        package.append(cpu_per_mail(compose_run(False, args.mails)))
    composing = statistics.median(fast) / statistics.median(package)
    print(
        f"  compose  fast path {1000 * statistics.median(fast):.3f} ms/mail CPU, email package "
        f"{1000 * statistics.median(package):.3f} ms/mail (medians of {args.rounds})"
    )
    print(
        f"sender: maildir/floor = {ratios['maildir']:.2f}; smtp/floor = {ratios['smtp']:.2f}; "
        f"compose fast/package = {composing:.2f}"
    )


if __name__ == "__main__":
    main()

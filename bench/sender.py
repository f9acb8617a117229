"""The sender's cost per mail next to its floor, measured in the same run (read the ratios).

The floor builds each message and hands it to the same sink with no store at all; the sender
also claims the rows, reads them and records the results.  Both run for the Maildir and for an
SMTP relay (a bare aiosmtpd on 127.0.0.1, in this process).  Ends with
``sender: maildir/floor = X; smtp/floor = Y`` (CPU seconds per mail).

    .venv/bin/python bench/sender.py [--mails 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiosmtpd.controller import Controller  # noqa: E402

from pbmserv.config import Settings, load_settings  # noqa: E402
from pbmserv.mail.compose import OutgoingMail, build_message  # noqa: E402
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


def sender_run(settings: Settings, mails: int) -> Callable[[], int]:
    sessions = session_factory(settings.url)
    with sessions() as session, session.begin():
        for i in range(mails):
            session.add(
                Outbox(
                    recipient=f"p{i}@example.org",
                    subject=f"Pylon Board {101 + i} - your move",
                    body=BODY,
                    created=NOW,
                    status=OutboxStatus.pending,
                    next_attempt=NOW,
                )
            )
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
                    build_message(
                        outgoing,
                        from_addr=settings.server_address,
                        server_id=settings.server_name,
                        domain=settings.mail_domain,
                        now=NOW,
                    )
                )
        return mails

    return run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mails", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
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
    print(f"sender: maildir/floor = {ratios['maildir']:.2f}; smtp/floor = {ratios['smtp']:.2f}")


if __name__ == "__main__":
    main()

"""The mail worker alone: CPU and SQL statements per move mail, next to a fixed floor.

Fills an inbox (SQLite) with move mails for many boards, checks their passwords once (as the
server's password cache would have), then processes the whole inbox in batches as the worker
does: no listener, no sender, no argon2.  The floor is the standard library reading the same
mails (``email.message_from_bytes`` with ``policy.default``, every header read), measured in
the same run: it does not change with our code, so the ratio compares commits on a noisy
machine.

    .venv/bin/python bench/worker.py [--boards 40] [--moves 10] [--game pylon] [--rounds 3]
                                     [--from-ply 0]  (e.g. 30: the cost late in a game)
                                     [--batch 32]  (e.g. 4: batches as small as a server
                                                    answering a steady 100 mails/s makes)

Ends with ``worker: CPU per mail / floor = X; statements per mail = Y; Python calls per mail =
Z``.  Z comes from one more round run under ``cProfile`` (not timed): it counts the Python
function calls the worker makes per mail, which is the same on every run of a commit, however
busy the machine is, so two commits compare exactly on it even where their times are within
the noise.
"""

from __future__ import annotations

import argparse
import cProfile
import email
import pstats
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from email import policy
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mail import RCPT, prepare  # noqa: E402  (bench/mail.py: the same players and mails)
from sqlalchemy import event, func, select  # noqa: E402
from sqlalchemy.orm import Session, sessionmaker  # noqa: E402

from pbmserv.commands import grammar  # noqa: E402
from pbmserv.config import load_settings  # noqa: E402
from pbmserv.domain import accounts  # noqa: E402
from pbmserv.mail import inbox, worker  # noqa: E402
from pbmserv.mail.parse import parse_message  # noqa: E402
from pbmserv.store.db import session_factory  # noqa: E402
from pbmserv.store.models import MoveRecord  # noqa: E402


def one_round(
    game: str,
    boards: int,
    moves: int,
    first: int,
    profile: cProfile.Profile | None = None,
    batch: int = worker.BATCH,
) -> tuple[float, float, float, int]:
    """(CPU seconds per mail processed, of the floor per mail, statements per mail, mails);
    with ``profile``, the processing runs under it (for its call count, not its time)."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        url = f"sqlite:///{data / 'pbmserv.sqlite3'}"
        plans = prepare(data, game, 0, boards, first + moves, url)
        settings = load_settings(data_dir=data, database_url=url)
        sessions = session_factory(settings.url)
        now = datetime.now(UTC)
        played = [plan[ply] for ply in range(first) for plan in plans if ply < len(plan)]
        for sender, raw in played:  # the boards' earlier moves, not measured
            inbox.store(sessions, raw, sender, [RCPT], now)
        while worker.process_batch(sessions, settings, lambda: datetime.now(UTC)):
            pass
        span = range(first, first + moves)
        mails = [plan[ply] for ply in span for plan in plans if ply < len(plan)]
        for sender, raw in mails:
            inbox.store(sessions, raw, sender, [RCPT], now)
        words = grammar.command_words()
        credentials = [
            pair
            for sender, raw in mails
            for line in parse_message(raw, sender, command_words=words).commands
            for pair in grammar.command_credentials(line, words)
        ]
        accounts.preverify(sessions, settings, credentials, now)
        assert mails, "every game ended before --from-ply"

        start = time.process_time()
        for _, raw in mails:
            [str(value) for value in email.message_from_bytes(raw, policy=policy.default).values()]
        floor = (time.process_time() - start) / len(mails)

        statements = [0]

        def count(*_args: object) -> None:
            statements[0] += 1

        event.listen(sessions.kw["bind"], "before_cursor_execute", count)
        done = 0
        start = time.process_time()
        if profile is not None:
            profile.enable()
        while claimed := worker.process_batch(sessions, settings, lambda: datetime.now(UTC), batch):
            done += len(claimed)
        if profile is not None:
            profile.disable()
        processing = (time.process_time() - start) / done
        _check_played(sessions, len(played) + len(mails))
        return processing, floor, statements[0] / done, done


def _check_played(sessions: sessionmaker[Session], expected: int) -> None:
    """Stop when a mail was not played: a change that breaks moves must not look faster."""
    with sessions() as session:
        recorded = session.scalar(select(func.count()).select_from(MoveRecord))
    if (recorded or 0) < expected:  # (forced passes may add entries of their own)
        raise SystemExit(f"only {recorded} of {expected} moves were played: the worker is broken")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--boards", type=int, default=40)
    parser.add_argument("--moves", type=int, default=10)
    parser.add_argument("--game", default="pylon")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--batch",
        type=int,
        default=worker.BATCH,
        help="mails per batch (e.g. 4: a server answering a steady 100 mails/s)",
    )
    parser.add_argument(
        "--from-ply", type=int, default=0, help="play this many moves first, unmeasured"
    )
    args = parser.parse_args()
    rounds = [
        one_round(args.game, args.boards, args.moves, args.from_ply, batch=args.batch)
        for _ in range(args.rounds)
    ]
    profile = cProfile.Profile()
    *_, profiled = one_round(
        args.game, args.boards, args.moves, args.from_ply, profile, batch=args.batch
    )
    calls = pstats.Stats(profile).total_calls / profiled  # type: ignore[attr-defined]
    processing = statistics.median(r[0] for r in rounds)
    floor = statistics.median(r[1] for r in rounds)
    statements = statistics.median(r[2] for r in rounds)
    print(
        f"{args.boards * args.moves} {args.game} move mails per round (at most; plies "
        f"{args.from_ply + 1}-{args.from_ply + args.moves}), {args.batch} per batch, median of "
        f"{args.rounds}: "
        f"processing {processing * 1000:.2f} ms CPU per mail, floor {floor * 1000:.3f} ms"
    )
    print(
        f"worker: CPU per mail / floor = {processing / floor:.1f}; "
        f"statements per mail = {statements:.1f}; Python calls per mail = {calls:.0f}"
    )


if __name__ == "__main__":
    main()

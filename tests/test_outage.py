"""A database that goes away: every loop of the server warns once, backs off, says once when it
works again, and then does its work (a PostgreSQL behind a killed proxy logged some 2,200 lines
a second, a traceback each, until it came back)."""

from __future__ import annotations

import logging
import threading

import pytest
from sqlalchemy.exc import OperationalError, ProgrammingError
from waiting import wait_until

from pbmserv.store import outage
from pbmserv.store.outage import Outage, unavailable

FAILING_ROUNDS = 6


def gone() -> OperationalError:
    """What psycopg says when the proxy in front of PostgreSQL is killed."""
    return OperationalError(
        "SELECT 1", {}, Exception("connection failed: connection refused\n\tIs the server running?")
    )


class Flaky:
    """``real`` that fails like a database that went away for its first ``FAILING_ROUNDS``
    calls, then works: the rounds are counted, not timed."""

    def __init__(self, real):  # type: ignore[no-untyped-def]
        self.real, self.calls = real, 0

    def __call__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls <= FAILING_ROUNDS:
            raise gone()
        return self.real(*args, **kwargs)


@pytest.fixture
def quick(monkeypatch):
    """Back-offs of milliseconds: the test counts rounds and lines, it waits for nothing."""
    monkeypatch.setattr(outage, "BACKOFF_FIRST", 0.001)
    monkeypatch.setattr(outage, "BACKOFF_MOST", 0.004)


def test_the_back_off_doubles_up_to_its_bound_and_lines_are_one_per_streak(caplog):
    log = logging.getLogger("pbmserv.test")
    streak = Outage("sender", log)
    with caplog.at_level("INFO", logger="pbmserv.test"):
        pauses = [streak.failed(gone()) for _ in range(10)]
        streak.worked()
        streak.worked()
        assert streak.failed(gone()) == outage.BACKOFF_FIRST  # a new streak starts afresh
    assert pauses[:3] == [0.1, 0.2, 0.4] and max(pauses) == pauses[-1] == outage.BACKOFF_MOST
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert lines[0][0] == "WARNING" and lines[0][1].startswith(
        "sender: the database cannot be used (OperationalError: Exception: connection failed: "
        "connection refused); retrying with back-off"
    )
    assert lines[1:] == [("WARNING", "sender works again (after 10 failed tries)"), lines[0]]
    assert not any(r.exc_info for r in caplog.records)


def test_what_no_mail_is_to_blame_for():
    assert unavailable(gone())
    locked = OperationalError("UPDATE", {}, Exception("database is locked"))
    assert unavailable(locked)
    full = OperationalError("INSERT", {}, Exception("database or disk is full"))
    assert unavailable(full)  # the operator's to mend, not a mail's
    readonly = OperationalError("INSERT", {}, Exception("attempt to write a readonly database"))
    assert not unavailable(readonly)  # a page that tried to write (PRAGMA query_only): a bug
    assert not unavailable(OperationalError("SELECT", {}, Exception("too many SQL variables")))
    assert not unavailable(ProgrammingError("SELECT", {}, Exception("syntax error")))
    assert not unavailable(ValueError("substring not found"))


def test_a_bug_keeps_its_traceback_once_per_streak(caplog):
    streak = Outage("clocks", logging.getLogger("pbmserv.test"))
    with caplog.at_level("INFO", logger="pbmserv.test"):
        for _ in range(5):
            try:
                raise KeyError("nag")
            except KeyError as exc:
                streak.failed(exc)
    (record,) = caplog.records
    assert record.levelname == "ERROR" and record.exc_info
    assert record.getMessage().startswith("clocks failed (KeyError: 'nag')")


def test_every_loop_of_the_server_warns_once_and_works_again(
    settings, shell, clock, monkeypatch, caplog, quick
):
    """The worker, the sender, the clocks and the robots: a warning and a line when it works
    again each, whatever the number of failed rounds, and the mail waiting is answered."""
    from pbmserv.cli import server
    from pbmserv.mail import inbox, inbox_queue

    flaky = {
        "worker": Flaky(inbox_queue.waiting),
        "sender": Flaky(server.deliver_pending),
        "clocks": Flaky(server.tick),
        "robots": Flaky(server.run_pending),
    }
    monkeypatch.setattr(inbox_queue, "waiting", flaky["worker"])
    monkeypatch.setattr(server, "deliver_pending", flaky["sender"])
    monkeypatch.setattr(server, "tick", flaky["clocks"])
    monkeypatch.setattr(server, "run_pending", flaky["robots"])
    raw = (
        b"From: alice@example.org\r\nTo: pbmserv@example.org\r\nMessage-ID: <o1@example.org>"
        b"\r\nDate: Sun, 01 Nov 2026 12:00:00 +0000\r\nSubject: signup alice secret1 alice@example.org\r\n\r\n"
    )
    running = server.Server(settings, listen=False, clock=lambda: clock.now)
    inbox.GroupStore(running.sessions).store(
        inbox.Delivery(raw, "alice@example.org", ["pbmserv@example.org"], clock.now)
    )
    with caplog.at_level("INFO"):
        running.start()
        try:
            wait_until(
                lambda: (
                    all(f.calls > FAILING_ROUNDS for f in flaky.values())
                    and any(
                        m.recipient == "alice@example.org" and m.sent_at for m in shell.outbox()
                    )
                ),
                "every loop to fail, work again, and the signup to be answered and sent",
                seen=lambda: {name: f.calls for name, f in flaky.items()},
            )
        finally:
            running.stop()
    said = [r for r in caplog.records if r.name in ("pbmserv.server", "pbmserv.mail.worker")]
    assert not any(r.exc_info or r.levelname == "ERROR" for r in said), said
    for name in flaky:
        lines = [r.getMessage() for r in said if r.getMessage().startswith(name)]
        assert len(lines) == 2, (name, lines)
        assert "the database cannot be used (OperationalError" in lines[0]
        assert lines[1] == f"{name} works again (after {FAILING_ROUNDS} failed tries)"


def test_a_failing_worker_round_waits_its_back_off(settings, sessions, clock, monkeypatch, quick):
    """Between two failed rounds the worker waits its back-off (counted, not timed): it
    retried at once (every 0.1 s at most), a traceback each time."""
    from pbmserv.mail import inbox_queue, worker

    monkeypatch.setattr(inbox_queue, "waiting", Flaky(inbox_queue.waiting))
    pauses: list[float] = []

    class Stopping(threading.Event):
        """Records the worker's waits on it; set after the failing rounds."""

        def wait(self, timeout: float | None = None) -> bool:
            pauses.append(timeout or 0.0)
            if len(pauses) >= FAILING_ROUNDS:
                self.set()
            return self.is_set()

    stopping = Stopping()

    class Work(threading.Event):
        """A poll between rounds (the worker idles): enough of them end the test too."""

        def wait(self, timeout: float | None = None) -> bool:
            pauses.append(-1.0)
            if len(pauses) >= 50:
                stopping.set()
            return False

    worker.run_worker(
        sessions, settings, lambda: clock.now, stopping=stopping, work=Work(), on_done=lambda: None
    )
    assert pauses == [0.001, 0.002, 0.004, 0.004, 0.004, 0.004]


def test_mails_claimed_when_the_database_went_away_are_done_once_it_answers(
    shell, sessions, clock, monkeypatch, quick
):
    """A round broke (the database away) with a mail claimed, and giving it back failed too:
    the worker forgot it, its row stayed claimed until its lease ran out, with its attempt
    counted (three outages set it aside, unanswered).  Now it is given back once the
    database answers, and done."""
    from sqlalchemy import select

    from pbmserv.mail import inbox, inbox_queue, worker
    from pbmserv.store.models import Inbox, InboxStatus

    shell.signup("alice")
    raw = b"From: alice@example.org\nMessage-ID: <o1@x>\nDate: Sun, 01 Nov 2026 12:00:00 +0000\nSubject: help\n\n"
    inbox.store(sessions, raw, "alice@example.org", [], clock.now)
    monkeypatch.setattr(worker, "process_claimed", Flaky(worker.process_claimed))
    monkeypatch.setattr(inbox_queue, "release_claims", Flaky(inbox_queue.release_claims))

    def row() -> Inbox:
        with sessions() as s:
            return s.scalars(select(Inbox)).one()

    stopping = threading.Event()

    class Work(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            if row().status is InboxStatus.done or self.polls > 50:
                stopping.set()
            self.polls += 1
            return False

        polls = 0

    worker.run_worker(
        sessions,
        shell.settings,
        lambda: clock.now,
        stopping=stopping,
        work=Work(),
        on_done=lambda: None,
    )
    done = row()
    assert done.status is InboxStatus.done and done.attempts == 1


def test_an_outage_marks_no_robot_board_damaged_and_logs_no_clock_board(
    shell, sessions, settings, clock, monkeypatch, caplog
):
    """The robots' and the clock's loops skip a board that fails (damaged, or a race), and
    caught an outage that way too: every robot board was marked damaged until its row
    changed, and the clock logged a traceback per board.  The outage reaches the loop."""
    from test_robots import operator_ok

    from pbmserv.domain import clocks
    from pbmserv.robots import service

    operator_ok(shell, "robot add r1 --game polis --level easy")
    operator_ok(shell, "robot add r2 --game polis --level easy")
    shell.ok("polis challenge r1 r2")
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")  # the clock looks at humans' turns only
    monkeypatch.setattr(service, "_turn", Flaky(service._turn))
    unreadable = service.Unreadable()
    with sessions() as session, pytest.raises(OperationalError):
        service.pending(session, unreadable=unreadable)
    with sessions() as session:
        assert not any(unreadable.skips(board) for board in _boards(session))
    monkeypatch.setattr(clocks, "check_board", Flaky(clocks.check_board))
    clock.advance(days=30)
    with caplog.at_level(logging.ERROR), pytest.raises(OperationalError):
        clocks.tick(sessions, settings, clock.now)
    assert not [r for r in caplog.records if r.name.startswith("pbmserv.domain.clocks")]


def _boards(session):  # type: ignore[no-untyped-def]
    from sqlalchemy import select

    from pbmserv.store.models import Board

    return session.scalars(select(Board)).all()

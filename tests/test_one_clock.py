"""One process per store runs the clocks and the robots: a second ``pbmserv serve`` on the same
store (other ports, same data directory or database) ran them too, so two processes nagged,
forfeited and searched every robot move.  The second now runs without them, says so once, and
takes them over when the first stops."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool
from waiting import wait_until

from pbmserv.cli import server as server_module
from pbmserv.store.lock import ClocksLock


def loops(server: server_module.Server) -> set[str]:
    return {t.name.removeprefix("pbmserv-") for t in server.threads if t.is_alive()}


@pytest.fixture
def quick(monkeypatch):
    monkeypatch.setattr(server_module, "STANDBY_SECONDS", 0.05)
    monkeypatch.setattr(server_module, "CLOCK_SECONDS", 3600.0)


def test_a_second_server_on_a_store_runs_no_clocks_or_robots_until_the_first_stops(
    settings, clock, caplog, quick
):
    first = server_module.Server(settings, listen=False, clock=lambda: clock.now)
    second = server_module.Server(settings, listen=False, clock=lambda: clock.now)
    first.start()
    try:
        with caplog.at_level("INFO", logger="pbmserv.server"):
            second.start()
            assert {"clocks", "robots"} <= loops(first)
            assert not {"clocks", "robots"} & loops(second) and second.standby
            assert "sender" in loops(second) and "worker" in loops(second)
            first.stop()
            wait_until(lambda: {"clocks", "robots"} <= loops(second), "the second takes over")
            assert not second.standby
    finally:
        first.stop()
        second.stop()
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(said) == 2, said
    assert said[0].startswith("another pbmserv process runs the clocks and the robots")
    assert said[0].endswith("this one runs without them, and takes them over once that one stops")
    assert said[1] == "this process runs the clocks and the robots of the store now"


def test_the_lock_is_the_stores(settings, tmp_path):
    """Held by one holder at a time, free again once released; another store's is apart."""
    one, two = ClocksLock(settings.url), ClocksLock(settings.url)
    other = ClocksLock(f"sqlite:///{tmp_path / 'other' / 'pbmserv.sqlite3'}")
    try:
        assert one.acquire() and not two.acquire() and other.acquire()
        one.release()
        assert two.acquire() and not one.acquire()
    finally:
        for lock in (one, two, other):
            lock.release()


def _lose(lock: ClocksLock) -> None:
    """What a database restart does to the holder: its lock is gone without a word (on
    SQLite, where it cannot happen so, the lock is let go under the server's feet)."""
    if lock._connection is None:
        lock.release()
        return
    engine = create_engine(lock.url, poolclass=NullPool)  # (the server's threads use the
    with engine.connect() as other:  # lock's connection: the test does not touch it)
        holders = other.scalars(
            text(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND database"
                " = (SELECT oid FROM pg_database WHERE datname = current_database())"
            )
        ).all()
        assert len(holders) == 1, holders
        other.scalar(text("SELECT pg_terminate_backend(:pid)"), {"pid": holders[0]})
    engine.dispose()


def test_a_server_that_lost_its_lock_gives_way_then_takes_it_again(
    settings, clock, caplog, quick, monkeypatch
):
    """A PostgreSQL restart ends the connection that holds the advisory lock: the holder ran
    on, and a standby took the lock too, so both ran the clocks and the robots.  The holder
    asks its lock at every round now, and waits as a standby once it is gone."""
    monkeypatch.setattr(server_module, "CLOCK_SECONDS", 0.05)  # (every loop wakes quickly)
    monkeypatch.setattr(server_module, "ROBOT_POLL_SECONDS", 0.05)
    server = server_module.Server(settings, listen=False, clock=lambda: clock.now)
    server.start()
    try:
        with caplog.at_level("INFO", logger="pbmserv.server"):
            assert {"clocks", "robots"} <= loops(server)
            _lose(server.clocks_lock)
            wait_until(lambda: "of the store now" in caplog.text, "taken again")

            def alive(name: str) -> int:
                return [t.name for t in server.threads if t.is_alive()].count(f"pbmserv-{name}")

            wait_until(lambda: alive("clocks") == 1 and alive("robots") == 1, "one of each")
            assert not server.standby
    finally:
        server.stop()
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert said[0].startswith("this process lost the lock of the store's clocks and robots")
    assert said[1] == "this process runs the clocks and the robots of the store now"


def test_a_store_of_this_process_alone_is_always_its_own():
    """SQLite in memory has no file to lock and no other process: the lock is this one's, and
    stays so (checking it sent such a server to standby at once)."""
    lock = ClocksLock("sqlite://")
    assert lock.acquire() and lock.check()

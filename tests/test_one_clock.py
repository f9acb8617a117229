"""One process per store runs the clocks and the robots: a second ``pbmserv serve`` on the same
store (other ports, same data directory or database) ran them too, so two processes nagged,
forfeited and searched every robot move.  The second now runs without them, says so once, and
takes them over when the first stops."""

from __future__ import annotations

import pytest
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

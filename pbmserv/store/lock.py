"""The clocks and the robots of a store run in one process: the one that holds its lock.

Why: a second ``pbmserv serve`` on the same store (other ports, same data directory or
database) ran the clocks and the robots too, so two processes nagged, forfeited and searched
every robot move.  On SQLite the lock is an ``flock`` on a file beside the store; on
PostgreSQL a session-level advisory lock on a connection held open.  Either is freed when its
process ends, however it ends, so a server that takes over never waits for a stale lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from pbmserv.files import private_file

ADVISORY_KEY = 0x70626D73_636C6B73  # "pbmsclks": pbmserv's clocks and robots
TRY_SECONDS = 1.0  # how long a process tries for the lock before it leaves it to its holder


HOLDERS = ("serve", "tick", "robot run")  # the commands that hold the lock, as named in it


class ClocksLock:
    """``acquire()`` without waiting; held until ``release()`` or the process's end.

    The holder names itself (``holder``, one of ``HOLDERS``): in the lock file beside a SQLite
    store, as its connection's ``application_name`` on PostgreSQL, so that :func:`holder`
    can tell a running server from a cron ``tick`` or ``robot run``."""

    def __init__(self, url: str, holder: str = "serve") -> None:
        parsed = make_url(url)
        self.url = url
        self.holder = holder
        self.path: Path | None = None
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            store = Path(str(parsed.database))
            self.path = store.with_name(store.name + "-serve.lock")
        self._file: int | None = None
        self._alone = False
        self._connection: Any = None

    @property
    def held(self) -> bool:
        return self._file is not None or self._connection is not None

    def acquire(self) -> bool:
        """Take the lock if no other process holds it; whether this one holds it now."""
        if self.held:
            return True
        if self.path is not None:
            return self._acquire_file(self.path)
        if make_url(self.url).get_backend_name() == "postgresql":
            return self._acquire_advisory()
        self._alone = True  # a database of this process alone: nobody else to lock out
        return True

    def acquire_within(self, seconds: float = TRY_SECONDS) -> bool:
        """``acquire()``, trying again for ``seconds``: a shell command that looks whether a
        server runs (:func:`holder`) holds the lock, shared, for an instant, and a process that
        tried only once then took the server for running."""
        deadline = time.monotonic() + seconds
        while not self.acquire():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def _acquire_file(self, path: Path) -> bool:
        fd = os.open(private_file(path), os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {self.holder}\n".encode())  # who holds it, and as what
        self._file = fd
        return True

    def _acquire_advisory(self) -> bool:
        engine = create_engine(
            self.url,
            poolclass=NullPool,
            connect_args={"application_name": f"pbmserv {self.holder}"},
        )
        connection = engine.connect()
        try:
            got = connection.scalar(text("SELECT pg_try_advisory_lock(:k)"), {"k": ADVISORY_KEY})
            connection.commit()  # the lock is the session's: no transaction stays open
        except BaseException:
            connection.close()
            engine.dispose()
            raise
        if not got:
            connection.close()
            engine.dispose()
            return False
        self._connection = connection
        return True

    def check(self) -> bool:
        """Whether this process still holds the lock.  A PostgreSQL lock lives as long as its
        connection: a database restart or a dropped connection frees it without a word, and a
        standby then takes it, so the holder asks at every round and gives way if it is gone."""
        if self._connection is None:
            return self._file is not None or self._alone
        try:
            self._connection.scalar(text("SELECT 1"))
            self._connection.commit()
        except Exception:  # noqa: BLE001 - any failure: the session, and its lock, are gone
            self.release()
            return False
        return True

    def release(self) -> None:
        if self._file is not None:
            os.close(self._file)  # (closing the only descriptor frees the flock)
            self._file = None
        if self._connection is not None:
            connection, self._connection = self._connection, None
            engine = connection.engine
            with contextlib.suppress(Exception):  # (a connection already broken)
                connection.close()  # the session ends, and its advisory lock with it
            engine.dispose()


@contextlib.contextmanager
def holding(url: str, holder: str) -> Iterator[bool]:
    """The lock of the store ``url`` held for a ``with`` block, if no other process holds it:
    yields whether this one does.  Why: ``tick`` and ``robot run`` from cron ran the clocks
    and the robots beside a running server (or another cron run) on the same store; a server
    that starts meanwhile waits as a standby, as it does for another server."""
    lock = ClocksLock(url, holder)
    try:
        yield lock.acquire_within()
    finally:
        lock.release()


def holder(url: str) -> str | None:
    """Which command holds the lock of the store ``url`` now (one of ``HOLDERS``), or None:
    a shell command tells its user who sends the mails it queued, a running server or the
    next cron ``tick``.  It only looks: it never makes the lock file (owned by whoever ran the
    command, the server could not open it) and takes a shared lock on SQLite, which a
    starting server's try can outlast."""
    lock = ClocksLock(url)
    if lock.path is not None:
        try:
            fd = os.open(lock.path, os.O_RDONLY)
        except OSError:  # no file: no server has run on this store
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _named(os.pread(fd, 100, 0).decode(errors="replace").partition(" ")[2])
        finally:
            os.close(fd)  # (frees the shared lock)
        return None
    if make_url(url).get_backend_name() != "postgresql":
        return None  # a database of this process alone
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            names = connection.scalars(text(_ADVISORY_HOLDER), _ADVISORY_PARTS).all()
    finally:
        engine.dispose()
    return _named(names[0] or "") if names else None


# A bigint advisory lock shows in pg_locks as its high and low 32 bits (objsubid 1).
_ADVISORY_PARTS = {"high": ADVISORY_KEY >> 32, "low": ADVISORY_KEY & 0xFFFFFFFF}
_ADVISORY_HOLDER = """
    SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.classid::bigint = :high AND l.objid::bigint = :low
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


def _named(said: str) -> str:
    """The holder a lock names (``pbmserv tick`` or ``tick``); a server if it names none
    (a lock taken by an older pbmserv, or a name another user may not see)."""
    name = said.strip().removeprefix("pbmserv ").strip()
    return name if name in HOLDERS else "serve"

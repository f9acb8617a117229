"""A server loop's failing streak: one warning when the database goes away, a back-off between
tries, and one line when it works again.

Why: every loop of ``pbmserv serve`` (the worker, the sender, the clocks, the robots) retries
its round at once, and logged each failure with its traceback: a PostgreSQL that went away for
a minute wrote thousands of lines a second, the one line that mattered lost among them.  The
sender's relay warnings (:mod:`pbmserv.mail.sender`) already work this way.
"""

from __future__ import annotations

import logging

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from pbmserv.errors import reason

BACKOFF_FIRST = 0.1  # seconds before the first retry (a SQLite lock is over by then)
BACKOFF_MOST = 5.0  # ... doubling up to this: an outage's end is noticed within seconds


# (SQLite's words; a full disk is no mail's fault either, and ends with the operator's help as
# an outage does: PostgreSQL's says so by its SQLSTATE, 53100.  Not "readonly database": the
# pages read with PRAGMA query_only, where it means a page tried to write, a bug.)
_GONE = (
    "connect",
    "server closed",
    "terminating",
    "locked",
    "busy",
    "unable to open",
    "database or disk is full",
)


def unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` says the database cannot be used now (gone, refused, busy), rather than
    that a statement or the data is wrong: what no mail is to blame for.

    Not every ``OperationalError``: on SQLite it also means "no such column" or "too many SQL
    variables", which one mail may cause again and again (it must fail, not block the queue).
    """
    if isinstance(exc, InterfaceError | PoolTimeout):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    if not isinstance(exc, OperationalError):
        return False
    state = getattr(exc.orig, "sqlstate", None)
    if state:  # PostgreSQL: connection exceptions, shutdown, insufficient resources
        return str(state).startswith(("08", "57P", "53"))
    return any(word in str(exc.orig).lower() for word in _GONE)


_LOCK_CONFLICTS = {"40P01", "40001", "55P03"}  # deadlock, serialization, lock not available


def lock_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` is the database giving up on a lock (PostgreSQL), not a bad mail."""
    orig = getattr(exc, "orig", None)
    return getattr(orig, "sqlstate", None) in _LOCK_CONFLICTS


def missing_database(exc: BaseException) -> bool:
    """Whether ``exc`` says the database that database_url names does not exist: a mistake of
    the configuration, not an outage to wait out (PostgreSQL says it at the login, before any
    SQLSTATE reaches the driver: in its words)."""
    if not isinstance(exc, OperationalError):
        return False
    if getattr(exc.orig, "sqlstate", None) == "3D000":  # invalid_catalog_name
        return True
    text = str(exc.orig).lower()
    return "database" in text and "does not exist" in text


class Outage:
    """One loop's streak of failed rounds (``name`` says which loop in the log;
    ``meanwhile`` what it does until the database works again, when that is not retrying
    with back-off: the listener answers 451, the web pages 503)."""

    def __init__(self, name: str, log: logging.Logger, meanwhile: str = "") -> None:
        self.name, self.log, self.meanwhile = name, log, meanwhile
        self.failures = 0
        self.said: set[str] = set()  # what the streak logged: the same failure is not logged again

    def failed(self, exc: BaseException) -> float:
        """Log ``exc`` if the streak has not said it yet; the seconds to wait before retrying."""
        down = unavailable(exc)
        key = "database" if down else reason(exc)
        if key not in self.said:
            if down:
                self.log.warning(
                    "%s: the database cannot be used (%s); %s (no more warnings until it "
                    "works again)",
                    self.name,
                    reason(exc),
                    self.meanwhile or f"retrying with back-off, up to every {BACKOFF_MOST:g} s",
                )
            else:  # a bug, most likely: its traceback, once per streak
                self.log.error(
                    "%s failed (%s); %s (this error is not logged again until a round works)",
                    self.name,
                    reason(exc),
                    self.meanwhile or "retrying with back-off",
                    exc_info=exc,
                )
            self.said.add(key)
        self.failures += 1
        return float(min(BACKOFF_MOST, BACKOFF_FIRST * 2 ** min(self.failures - 1, 30)))

    def worked(self) -> None:
        """A round worked: say so once if the rounds before it failed."""
        if self.failures:
            self.log.warning("%s works again (after %d failed tries)", self.name, self.failures)
        self.failures = 0
        self.said.clear()

"""The one place pbmserv reads the time of day.

Everything that needs "now" takes a :data:`Clock` (a callable returning an aware UTC datetime)
from the settings or its caller, never from :func:`datetime.now` directly, so that tests can
set the time, and so can every process a test starts:

Test hook: the environment variable ``PBMSERV_NOW`` (the setting ``now``) holds an ISO-8601
instant, e.g. ``2026-11-01T12:00:00+00:00``.  A process started with it runs its clock from that
instant onwards at real speed (elapsed monotonic time is added), so a server started by a test
lives on the test's calendar whatever the system date is.

>>> clock = clock_starting_at("2026-11-01T12:00:00+00:00")
>>> clock().isoformat()[:16]
'2026-11-01T12:00'
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    """The real time, in UTC: the clock of a server in production."""
    return datetime.now(UTC)


def parse_instant(text: str) -> datetime:
    """An ISO-8601 instant; one without a zone is taken as UTC.

    >>> parse_instant("2026-11-01 12:00").isoformat()
    '2026-11-01T12:00:00+00:00'
    """
    try:
        instant = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise ValueError(f"not an ISO-8601 instant: {text!r} (e.g. 2026-11-01T12:00:00Z)") from exc
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return instant.astimezone(UTC)


def clock_starting_at(start: str | datetime) -> Clock:
    """A clock that reads ``start`` now and runs on at real speed from there."""
    origin = parse_instant(start) if isinstance(start, str) else start.astimezone(UTC)
    began = time.monotonic()

    def now() -> datetime:
        return origin + timedelta(seconds=time.monotonic() - began)

    return now


def make_clock(start: str = "") -> Clock:
    """The clock the settings ask for: the system clock, or the test hook's (see above)."""
    return clock_starting_at(start) if start else system_clock

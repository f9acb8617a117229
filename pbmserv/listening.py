"""What a listening socket's event loop logs of the connections it refuses or cannot accept: a
few lines however many clients come, and none lost.

The SMTP listener (:mod:`pbmserv.mail.listener`) and the web pages (:mod:`pbmserv.web.serve`)
each run an asyncio loop in a thread of ``pbmserv serve``, and share the process's file
descriptors.  Past their caps they refuse connections, and a line each would flood the log;
once descriptors run out, asyncio logged a traceback for every failed ``accept()`` (up to a
hundred a round, more each second: 107,198 lines in 6 seconds).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import time
from typing import Any

CAP_LOG_SECONDS = 60.0  # connections refused at a cap are logged at most this often
# what accept() fails with when the process or the system has no descriptor or memory left
OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
STREAK_OVER_SECONDS = 0.5  # a connection this long after a failed accept: asyncio's retry worked


class Refusals:
    """Connections refused at a cap, logged at most once per ``CAP_LOG_SECONDS``: the first
    at once, the others when the period is up, so that a burst that ends is reported too (they
    were logged only with a refusal after the period, maybe never), and at :meth:`flush` when
    the server stops.  :meth:`refused` runs on the server's loop."""

    def __init__(self, log: logging.Logger) -> None:
        self.log = log
        self.count = 0  # refused since the last log line
        self.said: tuple[Any, ...] = ()  # the log line of the last refusal: format, arguments
        self.logged_at: float | None = None
        self._flush: asyncio.TimerHandle | None = None

    def refused(self, message: str, *args: Any) -> None:
        """Count a refusal; ``message`` (its first ``%d``: how many) logs it with ``args``."""
        self.count += 1
        self.said = (message, *args)
        if self._flush is not None:  # (logged when the period is up)
            return
        since = time.monotonic() - self.logged_at if self.logged_at is not None else None
        if since is None or since >= CAP_LOG_SECONDS:
            self.flush()
        else:
            loop = asyncio.get_running_loop()
            self._flush = loop.call_later(CAP_LOG_SECONDS - since, self.flush)

    def flush(self) -> None:
        """Log the refusals not logged yet, if any."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if self.count:
            message, *args = self.said
            self.log.warning(message, self.count, *args)
            self.count, self.logged_at = 0, time.monotonic()


class AcceptFailures:
    """A listening socket's streak of ``accept()`` calls failed for want of descriptors (or
    memory): one warning when it starts, one line when a connection is accepted again.  asyncio
    retries the accept a second later by itself; :meth:`loop_exception` is the loop's exception
    handler, and passes anything else to asyncio's own."""

    def __init__(self, log: logging.Logger, name: str) -> None:
        self.log, self.name = log, name  # name: who cannot accept ("the listener")
        self.failed_at: float | None = None  # the last failed accept() of a streak

    def accepted(self) -> None:
        """A connection was accepted: the streak is over, unless it came with the failing round
        (the connections accepted before the failure reach their protocols a moment later)."""
        if self.failed_at is not None and time.monotonic() - self.failed_at > STREAK_OVER_SECONDS:
            self.log.warning("%s accepts connections again", self.name)
            self.failed_at = None

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in OUT_OF_RESOURCES and "socket" in context:
            if self.failed_at is None:
                self.log.warning(
                    "%s cannot accept connections (%s): retrying every second (no more "
                    "warnings until it accepts one)",
                    self.name,
                    exc.strerror or exc,
                )
            self.failed_at = time.monotonic()
            return
        if isinstance(exc, ValueError) and "_start_serving" in str(context.get("message")):
            return  # a retry asyncio set (one per failed accept) come after the socket closed
        loop.default_exception_handler(context)

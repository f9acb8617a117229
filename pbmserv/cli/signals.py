"""Stop signals (SIGTERM, SIGINT) that no second signal can turn into a deadlock.

A Python signal handler runs in the main thread between two bytecodes, even inside another
handler.  The server's handlers used to set a ``threading.Event``: a signal that came while an
earlier handler held the event's lock ran the handler again, and it waited for that lock for
ever (Ctrl-C under ``make run`` reaches the server from the terminal and again from make;
``timeout`` and impatient operators send more).  Here the handlers do nothing, and the signal
is noticed through :func:`signal.set_wakeup_fd`: the interpreter writes the signal's number
into a pipe, at C level and without a lock, and :meth:`StopSignals.wait` reads it.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Collection
from types import FrameType


def _noticed(signum: int, frame: FrameType | None) -> None:
    """The Python-level handler: nothing to do, the wakeup pipe has the signal."""


class StopSignals:
    """Catch ``signals`` from now on (call it in the main thread); :meth:`wait` for one."""

    def __init__(self, signals: Collection[int] = (signal.SIGTERM, signal.SIGINT)) -> None:
        self.signals = frozenset(signals)
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)  # (set_wakeup_fd wants it; a full pipe drops bytes)
        for signum in self.signals:
            signal.signal(signum, _noticed)
        signal.set_wakeup_fd(self._write)

    def wait(self) -> int:
        """Block until one of the signals came (at once when one came already); its number.
        Any thread may wait."""
        while True:
            got = os.read(self._read, 1)
            if got and got[0] in self.signals:
                return got[0]

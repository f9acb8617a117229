"""Only under ``faketime -f '+120d' make test``: the Makefile puts this folder on PYTHONPATH
when libfaketime is preloaded, so every Python process of the run (pytest, its xdist workers,
the servers the tests start) imports it.

The run sets FAKETIME_DONT_FAKE_MONOTONIC=1, because libfaketime 0.9.10 otherwise shifts the
monotonic clock too and every timed lock wait (threading.Event.wait(timeout), Thread.join)
hangs.  With monotonic time left real, the same libfaketime turns the absolute monotonic
deadline of time.sleep (clock_nanosleep with TIMER_ABSTIME) into an invalid one (EINVAL), so
sleeps go through select() here instead.  Only the calendar moves, as the test intends.
"""

import select
import time


def _sleep(seconds: float) -> None:
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    select.select([], [], [], seconds)


time.sleep = _sleep

"""Waiting for a running server: poll a condition with a short deadline, and when it does not
come, fail saying what was awaited and what was seen instead."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T],
    what: str,
    timeout: float = 20.0,
    *,
    seen: Callable[[], object] | None = None,
    interval: float = 0.05,
) -> T:
    """Return the first truthy value of ``condition()``; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            state = f"; seen: {seen()}" if seen is not None else ""
            raise AssertionError(f"waited {timeout:g} s for {what}{state}")
        time.sleep(interval)


def wait_for_progress(
    count: Callable[[], int], target: int, what: str, stall: float = 60.0, interval: float = 0.05
) -> None:
    """Wait until ``count()`` reaches ``target``; fail when it has not grown for ``stall``
    seconds (a slow machine is no failure, a stuck worker is), saying how far it got."""
    last, since = -1, time.monotonic()
    while (now := count()) < target:
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since > stall:
            raise AssertionError(
                f"waited {stall:g} s without progress for {what}: {now} of {target}"
            )
        time.sleep(interval)

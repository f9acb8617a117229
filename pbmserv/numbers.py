"""Numbers as players and URLs write them: one rule for every board, move and round number,
and one for the days of a board's clock options."""

from __future__ import annotations

import math
from typing import Any

MAX_NUMBER = 10**9
"""The largest board, move or round number taken: far beyond any real one, and within every
database's integers (a bigger one overflowed in the store)."""


MAX_ROW_ID = 2**31 - 1
"""The largest id a stored row can have (PostgreSQL's ``integer``): an operator's bigger id
names no row, and overflowed the database's parameter."""


def whole_number(text: str) -> int | None:
    """``text`` as a number of ASCII digits up to :data:`MAX_NUMBER`, or None (``int()``
    also takes '²', '١٠١', '1_000' and ' +5 ', and ``'²'.isdigit()`` is True)."""
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(MAX_NUMBER)):
        return None
    number = int(text)
    return number if number <= MAX_NUMBER else None


MIN_CLOCK_DAYS = 1.0
"""The shortest period a board's clock option (``--nagtime``, ``--forfeittime``,
``--totaltime``) may set: a correspondence player must have a day to answer.  Shorter ones let
a challenger make the opponent forfeit at the next clock check (``--totaltime=0.00001``: 0.86
seconds, and a rated result), or be nagged at every check."""
MAX_CLOCK_DAYS = 365.0
"""The longest: a year is beyond any real game, and dates far beyond it overflow
(``--nagtime=1e300`` stopped every clock of the server)."""


def clock_days(value: Any) -> float | None:
    """A board's clock option as a number of days, or None when it is not one that the
    clocks can use (not a number, not finite, not from MIN_CLOCK_DAYS to MAX_CLOCK_DAYS): a
    board stored with such a value runs on the defaults.

    >>> clock_days("1.5"), clock_days(7), clock_days("0.00001"), clock_days("inf")
    (1.5, 7.0, None, None)
    """
    try:
        days = float(value)
    except (TypeError, ValueError):
        return None
    return days if math.isfinite(days) and MIN_CLOCK_DAYS <= days <= MAX_CLOCK_DAYS else None

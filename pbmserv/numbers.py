"""Numbers as players and URLs write them: one rule for every board, move and round number."""

from __future__ import annotations

MAX_NUMBER = 10**9
"""The largest board, move or round number taken: far beyond any real one, and within every
database's integers (a bigger one overflowed in the store)."""


def whole_number(text: str) -> int | None:
    """``text`` as a number of ASCII digits up to :data:`MAX_NUMBER`, or None (``int()``
    also takes '²', '١٠١', '1_000' and ' +5 ', and ``'²'.isdigit()`` is True)."""
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(MAX_NUMBER)):
        return None
    number = int(text)
    return number if number <= MAX_NUMBER else None

"""What a misspelt word may mean: the closest of the words a player could have meant.

Every line that looks like a command asks, several times over (the mail parser, the grammar's
masks of the answer and of the kept copy), so the answers are remembered, by a digest of the
word, never as text: the word may be a password (``plois mvoe Sekrit77``).
"""

from __future__ import annotations

import difflib
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable

CUTOFF = 0.75  # how close a misspelt command word must be to a command's name


def suggest(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to a misspelt ``word``, if one is close enough."""
    if len(word) < 3:
        return None
    return closest(word, choices)


def meant(word: str, choices: Iterable[str]) -> str | None:
    """The command a mistyped ``word`` may mean, for a hint: the closest choice, else the one
    choice it begins (``hist``: ``history``).  (Only hints read prefixes: a line of prose that
    starts with ``not`` is no ``notifications``.)"""
    options = sorted(set(choices))
    close = suggest(word, options)
    if close is not None or len(word) < 3:
        return close
    starts = [c for c in options if c.startswith(word.lower())]
    return starts[0] if len(starts) == 1 else None


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``word`` (lower-cased) with difflib's ratio at least ``CUTOFF``,
    else None.  Every line that looks like a command asks, several times over (the mail
    parser, the masks of the answer and of the kept copy), and a look-up costs 20-60 us: a
    mail of 70,000 such lines took a minute.  So the answers are remembered (:class:`_Closest`);
    a word too long to be close to any choice is neither compared nor remembered."""
    options = frozenset(choices)
    word = word.lower()
    # difflib's ratio is 2M/T (M matching characters, T both lengths): a word that much
    # longer than the longest choice stays under the cutoff against every choice
    if not options or len(word) * CUTOFF > max(map(len, options)) * (2 - CUTOFF):
        return None
    return _CLOSEST.get(word, options)


class _Closest:
    """The answers of :func:`closest` for the words asked lately, kept by a digest of each
    word, never as text: the word may be a password (``plois mvoe Sekrit77``)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._found: OrderedDict[tuple[bytes, frozenset[str]], str | None] = OrderedDict()
        self._lock = threading.Lock()  # one memo for every thread of the process

    def get(self, word: str, choices: frozenset[str]) -> str | None:
        digest = hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        key = (digest, choices)
        with self._lock:
            if key in self._found:
                self._found.move_to_end(key)
                return self._found[key]
        matches = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=CUTOFF)
        found = matches[0] if matches else None
        with self._lock:
            self._found[key] = found
            if len(self._found) > self._size:
                self._found.popitem(last=False)
        return found

    def __len__(self) -> int:
        return len(self._found)


_CLOSEST = _Closest(4096)

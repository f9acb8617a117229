"""The ``email`` policy for every mail we read and write: the standard library's
``policy.default``, with the same parsing done less often.

* The standard ``HeaderRegistry`` creates a new class (``type(...)``) for every header it
  parses or stores: about a third of the time spent building an outgoing mail.  Those classes
  hold no state (a registry class mixed with ``BaseHeader``), so one per header name serves.
* Reading a header parses its value again at every ``msg.get``, and reading one mail asks for
  its Content-Type eight times (type, main type, charset, parameters...).  Parsed headers are
  immutable (a ``str`` with its defects and parse tree), so the recent ones are kept.
"""

from __future__ import annotations

from email import policy
from email.headerregistry import BaseHeader, HeaderRegistry
from functools import lru_cache
from typing import Any


class CachedHeaderRegistry(HeaderRegistry):
    """``HeaderRegistry`` whose header classes are made once per header name."""

    def __init__(self) -> None:
        super().__init__()
        self._classes: dict[str, type[BaseHeader]] = {}

    def map_to_type(self, name: str, cls: type) -> None:
        super().map_to_type(name, cls)
        self._classes.pop(name.lower(), None)

    def __getitem__(self, name: str) -> type[BaseHeader]:
        key = name.lower()
        made = self._classes.get(key)
        if made is None:
            made = self._classes[key] = super().__getitem__(name)
        return made


class ReadingPolicy(policy.EmailPolicy):
    """``EmailPolicy`` that keeps the headers it parsed for reading (see the module's text)."""

    def header_fetch_parse(self, name: str, value: str) -> Any:
        if hasattr(value, "name"):  # already a header object
            return value
        if len(value) > KEPT_VALUE_CHARS:  # a hostile mail must not fill the memory
            return super().header_fetch_parse(name, value[:PARSED_VALUE_CHARS])
        return _fetched(self, name, value)


KEPT_VALUE_CHARS = 998  # a header line's length limit (RFC 5322): longer values are not kept
# How much of a value is parsed at all: the standard library's parser takes memory and time
# growing with the square of the encoded words (or parameters) in it.  A Subject of 60,000
# encoded words (840 KB, within a mail's size limit) took more memory than the machine had:
# the server was killed, again at each attempt; 16,000 of them took 1.7 GB.  A header that
# folds over many lines (a long To, a Subject of encoded words) has far less than this.
PARSED_VALUE_CHARS = 8_000
KEPT_HEADERS = 512  # so at most 512 short values (and their parse trees) are kept


@lru_cache(maxsize=KEPT_HEADERS)
def _fetched(chosen: ReadingPolicy, name: str, value: str) -> Any:
    return policy.EmailPolicy.header_fetch_parse(chosen, name, value)


POLICY = ReadingPolicy(header_factory=CachedHeaderRegistry())

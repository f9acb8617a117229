"""The ``email`` policy for every mail we read and write: the standard library's
``policy.default`` with a header registry that builds each header class once.

The standard ``HeaderRegistry`` creates a new class (``type(...)``) for every header it parses
or stores, and that was about a third of the time spent building an outgoing mail and a tenth
of reading an incoming one.  The classes it creates hold no state (a registry class mixed with
``BaseHeader``), so one per header name serves every mail; the parsing itself is unchanged.
"""

from __future__ import annotations

from email import policy
from email.headerregistry import BaseHeader, HeaderRegistry


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


POLICY = policy.default.clone(header_factory=CachedHeaderRegistry())

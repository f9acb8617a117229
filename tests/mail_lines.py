"""The width of a mail's lines: 78 columns (RFC 5322's recommendation), which our texts keep
except where one token (an address, a code) is longer than a line can hold."""

from __future__ import annotations

MAIL_LINE = 78


def overlong(text: str) -> list[str]:
    """The lines of ``text`` longer than 78 columns that could have been broken: only a line
    whose one token cannot fit beside its indentation may be longer."""
    return [
        line
        for line in text.splitlines()
        if len(line) > MAIL_LINE
        and not any(len(line) - len(line.lstrip()) + len(w) > MAIL_LINE for w in line.split())
    ]

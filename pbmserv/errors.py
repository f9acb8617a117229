"""An error in one line, for the log and the operator: its class and the first line of its
message.

Why: the last line of a traceback is what a person reads first, and for a SQLAlchemy error
it is only the link "(Background on this error at: https://sqlalche.me/...)"; the message
that says what happened is the driver's, on the first line of ``str(exc.orig)``.
"""

from __future__ import annotations

import re
import traceback

TRACEBACK = "Traceback (most recent call last):"
_RAISED = re.compile(
    r"^(?:[A-Za-z_][\w]*\.)*(?P<name>[A-Za-z_]\w*(?:Error|Exception|Failure|Violation|Exit|"
    r"Interrupt|Warning))(?::\s*(?P<text>.*))?$"
)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def reason(exc: BaseException) -> str:
    """``IntegrityError: UniqueViolation: duplicate key value ... "pk_answer_counts"``.

    >>> reason(ValueError("substring not found"))
    'ValueError: substring not found'
    >>> reason(KeyError("x"))
    "KeyError: 'x'"
    """
    name = type(exc).__name__
    orig = getattr(exc, "orig", None)  # a SQLAlchemy error wraps the driver's
    if isinstance(orig, BaseException):
        inner = _first_line(str(orig))
        return f"{name}: {type(orig).__name__}" + (f": {inner}" if inner else "")
    text = _first_line(str(exc))
    return f"{name}: {text}" if text else name


def with_traceback(exc: BaseException) -> str:
    """What the store keeps of a failure: :func:`reason` on the first line (the one that lists
    show), then the traceback (``mail show``)."""
    return reason(exc) + "\n\n" + "".join(traceback.format_exception(exc)).rstrip("\n")


def stored_reason(text: str | None) -> str:
    """The one line to show for a stored error: its first line, or for a bare traceback (kept
    before errors began with their reason) the last line that names an exception.

    >>> stored_reason("ValueError: boom\\n\\nTraceback (most recent call last):\\n  x")
    'ValueError: boom'
    >>> stored_reason(TRACEBACK + "\\n  x\\nsqlalchemy.exc.IntegrityError: (psycopg.errors."
    ...     "UniqueViolation) duplicate key\\nDETAIL: k\\n(Background on this error at: x)")
    'IntegrityError: (psycopg.errors.UniqueViolation) duplicate key'
    """
    text = (text or "").strip()
    first = _first_line(text)
    if first != TRACEBACK:
        return first
    for line in reversed(text.splitlines()):
        found = _RAISED.match(line)
        if found:
            rest = found.group("text")
            return f"{found.group('name')}: {rest}" if rest else found.group("name")
    return first

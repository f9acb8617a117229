"""One log line for each mail the worker has processed, once its transaction is committed.

The operator's first question about a player's "I sent a move and heard nothing" is whether
the mail came at all and what became of it.  The server logged only failures, so the journal
of a day's play was empty: the answer was in ``pbmserv mail list --all`` at best (a processed
mail is deleted after ``inbox_retention_days``), and a Postfix queue id could not be followed
into pbmserv.  The line names the inbox row, the Message-ID (as Postfix logs it), the sender
and the outcome, never a word of the mail's text: its passwords stay out of the log.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

from pbmserv.mail.prepare import Prepared
from pbmserv.store.models import InboxStatus

log = logging.getLogger("pbmserv.mail.worker")

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
LONGEST = 200  # characters of a value from the mail (a Message-ID, an address) in the line


class Processed(Protocol):
    """What the worker knows of a mail once it is processed (its ``Outcome``)."""

    message_id: int
    status: InboxStatus
    answers: int
    requeued: bool
    note: str | None


T = TypeVar("T", bound=Processed)


def logged(prepared: Sequence[Prepared], outcomes: list[T]) -> list[T]:
    """Log one line for each processed (done or ignored) mail of ``outcomes``; return them.

    A failed attempt is logged where it fails (with its error), and a mail given back to the
    queue uncounted is logged when it runs.  Never raises: the mails are committed, and the
    worker must not take a fault of the log line for one of theirs (and run them again)."""
    by_id = {item.message_id: item for item in prepared}
    for outcome in outcomes:
        try:
            _log_one(outcome, by_id.get(outcome.message_id))
        except Exception:  # noqa: BLE001 - see above
            log.exception("mail %s: its log line failed", outcome.message_id)
    return outcomes


def _log_one(outcome: Processed, item: Prepared | None) -> None:
    if outcome.requeued or outcome.status not in (InboxStatus.done, InboxStatus.ignored):
        return
    parsed = item.parsed if item is not None else None
    sender = parsed.sender if parsed is not None else None
    header = parsed.message_id if parsed is not None else None
    if outcome.status is InboxStatus.ignored:
        result = f"ignored, {outcome.note or 'not answered'}"
    else:
        lines = len(parsed.commands) if parsed is not None else 0
        result = f"done, {_count(lines, 'command line')}, {_count(outcome.answers, 'answer')}"
        if outcome.note:
            result += f" ({outcome.note})"
    log.info(
        "mail %s %s from %s: %s",
        outcome.message_id,
        f"<{_clean(header)}>" if header else "(no Message-ID)",
        _clean(sender) if sender else "(no sender)",
        _clean(result, LONGEST * 2),
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _clean(text: str, longest: int = LONGEST) -> str:
    """``text`` from a mail as one line of the log: control characters (a forged line of its
    own) written as escapes, and clipped."""
    text = _UNPRINTABLE.sub(lambda match: f"\\x{ord(match.group()):02x}", text.strip("<> "))
    return text if len(text) <= longest else text[: longest - 3] + "..."

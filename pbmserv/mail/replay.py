"""Replays: a mail sent again after its key has gone is not run again.

The inbox knows a mail by its key (:func:`pbmserv.mail.inbox.dedup_key`) for as long as the mail
is kept (``inbox_retention_days``), and the key is kept after it (an ``InboxTombstone``, see
:mod:`pbmserv.domain.housekeeping`) for as long as a replay would still run.  Past that, a
replay is known by its Date: a mail dated more than ``stale_mail_days`` before it came is
*stale*, and is answered with why it was not run (a person sent it maybe, delayed somewhere)
instead of being run; so is a mail dated more than ``stale_mail_days`` *after* it came (its
sender's clock is wrong; its key is kept until its Date is ``stale_mail_days`` old, for a
Date up to :data:`pbmserv.domain.housekeeping.KEPT_AHEAD` ahead, so that none keeps one for
ever).

A mail without a Date (or with none that can be read) runs nothing: its replay could not be
told from it by its age, and keeping its key for ever let anyone grow the kept keys without
end by sending distinct dateless mails.  RFC 5322 (3.6) requires a Date, and every mail
program writes one (Postfix adds one to mail submitted on its host).
"""

from __future__ import annotations

import email.utils
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.parser import BytesHeaderParser
from email.policy import compat32

from pbmserv.commands import Answer
from pbmserv.commands.dispatch import REFUSED, error_subject
from pbmserv.domain.outgoing import age
from pbmserv.mail.decode import header_part
from pbmserv.render.templates import fill, render


def mail_date(value: str | None) -> datetime | None:
    """A Date header's instant in UTC, or None when there is none or it cannot be read (a zone
    of ``-0000`` is UTC).

    >>> mail_date("Sun, 01 Nov 2026 13:00:00 +0100").isoformat()
    '2026-11-01T12:00:00+00:00'
    >>> mail_date("yesterday") is None
    True
    """
    if not value or not value.strip():
        return None
    try:
        dated = email.utils.parsedate_to_datetime(value.strip())
        if dated.tzinfo is None:
            dated = dated.replace(tzinfo=UTC)
        return dated.astimezone(UTC)
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


def earliest_date(values: list[str]) -> datetime | None:
    """The earliest instant of a mail's Date headers that can be read (:func:`mail_date`), or
    None.  RFC 5322 allows one Date: a replay with a fresh one written above its own (which
    DKIM lets through: it signs the lowest) must not pass for a new mail.

    >>> earliest_date(["Sun, 29 Nov 2026 09:00:00 +0000", "Sun, 01 Nov 2026 12:00:00 +0000"])
    datetime.datetime(2026, 11, 1, 12, 0, tzinfo=datetime.timezone.utc)
    """
    return min(filter(None, map(mail_date, values)), default=None)


def dated_of(raw: bytes) -> datetime | None:
    """A mail's Date as the inbox reads it when it stores the mail (:func:`earliest_date` of
    its header as far as the parser reads it), for mails stored before it did (0016).

    >>> dated_of(b"Date: Sun, 01 Nov 2026 12:00:00 +0000\\r\\nFrom: a@x.example\\r\\n\\r\\nhi")
    datetime.datetime(2026, 11, 1, 12, 0, tzinfo=datetime.timezone.utc)
    """
    headers = BytesHeaderParser(policy=compat32).parsebytes(header_part(raw), headersonly=True)
    return earliest_date([str(value) for value in headers.get_all("Date") or []])


@dataclass(frozen=True)
class Stale:
    """A mail taken for a replay: dated more than ``days`` before it came (or, ``ahead``, more
    than ``days`` after it: a clock that wrong, or a Date written to outlive its key)."""

    dated: datetime
    received: datetime
    days: int

    @property
    def ahead(self) -> bool:
        return self.dated > self.received

    def note(self) -> str:
        """Why it was not run, for the operator (``pbmserv mail list --all``)."""
        if self.ahead:
            return (
                f"not run: dated {self.dated:%Y-%m-%d %H:%M} UTC, "
                f"{age(self.dated - self.received)} after it came (more than {self.days} days "
                "ahead: a wrong clock)"
            )
        return (
            f"not run: dated {self.dated:%Y-%m-%d %H:%M} UTC, {age(self.received - self.dated)} "
            f"before it came (more than {self.days} days: taken for a replay)"
        )

    def answer(self) -> Answer:
        """What its sender is told: what was refused and why, and what to do."""
        body = render(
            "mail/stale.txt.j2",
            dated=f"{self.dated:%Y-%m-%d %H:%M} UTC",
            received=f"{self.received:%Y-%m-%d %H:%M} UTC",
            days=self.days,
            ahead=self.ahead,
        )
        return Answer(error_subject("pbmserv"), fill(body), REFUSED)


@dataclass(frozen=True)
class Undated:
    """A mail with no Date line, or none that can be read: nothing tells its replay from it."""

    def note(self) -> str:
        """Why it was not run, for the operator (``pbmserv mail list --all``)."""
        return "not run: no Date line that can be read (a replay could not be told from it)"

    def answer(self) -> Answer:
        """What its sender is told: what was refused and why, and what to do."""
        return Answer(error_subject("pbmserv"), fill(render("mail/undated.txt.j2")), REFUSED)


Refusal = Stale | Undated
"""Why a mail runs nothing, told by its Date alone (:func:`refusal`)."""


def refusal(dated: datetime | None, received: datetime, days: int) -> Refusal | None:
    """Why the mail runs nothing when its Date tells (none, or more than ``days`` away from
    when it came), else None.  Its arrival, not the time it is processed: a mail set aside and
    retried by the operator later still runs."""
    if dated is None:
        return Undated()
    if abs(received - dated) <= timedelta(days=days):
        return None
    return Stale(dated, received, days)

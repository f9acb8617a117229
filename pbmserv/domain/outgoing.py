"""The outgoing mails, as the shell shows them (``pbmserv mail outbox list|show``).

From a shell with no server running, the board mails to the other players wait in the outbox;
these views let the player (the operator of a local store) see them.  A sent mail's text is
dropped once it is sent (it may carry a code or a password): what is left is its delivery
record.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pbmserv.store.models import Outbox, OutboxStatus

WAITING = (OutboxStatus.pending, OutboxStatus.sending, OutboxStatus.failed)
LISTED_ERROR = 80  # the characters of a last error the list shows ('outbox show' has it all)


def list_lines(session: Session, *, show_all: bool = False) -> list[str]:
    """One line per mail: id, status, tries, created, recipient, subject; under a mail that
    failed or is being retried, its last error, cut to fit (it was only in ``show``, mail by
    mail, so a relay refusing every mail looked like a slow queue)."""
    query = select(Outbox).order_by(Outbox.id)
    if not show_all:
        query = query.where(Outbox.status.in_(WAITING))
    rows = session.scalars(query).all()
    if not rows:
        return ["The outbox has no mails waiting to go out."]
    lines = [f"{'id':>6}  {'status':<8} {'tries':>5}  {'created':<16}  to / subject"]
    for row in rows:
        lines.append(
            f"{row.id:>6}  {row.status.value:<8} {row.attempts:>5}  "
            f"{row.created:%Y-%m-%d %H:%M}  {row.recipient}  {row.subject[:60]}"
        )
        if row.last_error and row.status is not OutboxStatus.sent:  # (sent: it worked since)
            lines.append(f"{'':>8}last error: {cut_listed_error(last_line(row.last_error))}")
    return lines


def last_line(error: str | None) -> str:
    """What a delivery error says, in one line: its last (a relay's answer comes last)."""
    lines = [line.strip() for line in (error or "").splitlines() if line.strip()]
    return lines[-1] if lines else "?"


def cut_listed_error(text: str, limit: int = LISTED_ERROR) -> str:
    """An error as the list of outgoing mail shows it: ``text`` cut to ``limit`` characters,
    with '...' where it was cut.

    >>> cut_listed_error("relay refused", 80), cut_listed_error("a" * 100, 10)
    ('relay refused', 'aaaaaaa...')
    """
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def show_lines(session: Session, mail_id: int) -> list[str] | None:
    """The headers and the body of outgoing mail ``mail_id`` (None: no such mail)."""
    row = session.get(Outbox, mail_id)
    if row is None:
        return None
    lines = [
        f"Outgoing mail {row.id}: {row.status.value}, {row.attempts} attempts",
        f"To: {row.recipient}",
        f"Subject: {row.subject}",
        f"Created: {row.created:%Y-%m-%d %H:%M:%S} UTC",
    ]
    if row.claimed_by and row.claimed_at:
        lines.append(f"Claimed by {row.claimed_by} at {row.claimed_at:%Y-%m-%d %H:%M:%S} UTC")
    if row.sent_at:
        lines.append(f"Sent: {row.sent_at:%Y-%m-%d %H:%M:%S} UTC")
    if row.last_error:  # kept once sent: the attempts before the one that worked failed
        earlier = " (of an earlier attempt)" if row.status is OutboxStatus.sent else ""
        lines.append(f"Last error{earlier}: {row.last_error.strip()}")
    if row.message_id:
        lines.append(f"Message-ID: {row.message_id}")
    if row.dropped_bytes is not None:
        return [
            *lines,
            "",
            f"(The text, {row.dropped_bytes} bytes, was dropped once the mail was sent: the",
            "store keeps no copy of the codes and passwords a mail may carry.)",
        ]
    return [*lines, "", row.body.rstrip("\n")]


def newest_mail(session: Session) -> int:
    """The id of the newest mail in the outbox (0: none): :func:`waiting_after` counts from it."""
    return session.scalar(select(func.max(Outbox.id))) or 0


def waiting_after(session: Session, newest: int) -> int:
    """How many mails queued after mail ``newest`` still wait to go out: those of one shell
    command (by their ids, not their times: under a clock pinned by ``PBMSERV_NOW`` every
    command has the same time, and a command that queued nothing was told of earlier mails)."""
    query = select(func.count()).where(Outbox.status == OutboxStatus.pending)
    return session.scalar(query.where(Outbox.id > newest)) or 0


def delivery_lines(session: Session, now: datetime) -> list[str]:
    """What ``pbmserv status`` says of delivery beyond the counts: how old the oldest mail
    waiting to go out is, and how many of them have failed attempts (with the last error of
    the oldest).  A relay that is down leaves every mail pending, so the counts alone look
    like a quiet queue."""
    waiting = (OutboxStatus.pending, OutboxStatus.sending)
    oldest = session.scalar(select(func.min(Outbox.created)).where(Outbox.status.in_(waiting)))
    lines = [
        f"  oldest unsent: {oldest:%Y-%m-%d %H:%M:%S} UTC ({age(now - oldest)} old)"
        if oldest
        else "  oldest unsent: none"  # (pending or sending: "pending 0" said otherwise)
    ]
    failing = (Outbox.status == OutboxStatus.pending) & Outbox.last_error.is_not(None)
    count = session.scalar(select(func.count()).where(failing)) or 0
    if count:
        first = session.scalars(
            select(Outbox).where(failing).order_by(Outbox.created, Outbox.id).limit(1)
        ).one()
        noun = "mail has" if count == 1 else "mails have"
        lines.append(f"  failing:   {count} pending {noun} failed attempts")
        lines.append(
            f"  last error of the oldest (mail {first.id}, {first.attempts} attempts): "
            f"{last_line(first.last_error)[:300]}"
        )
    gave_up = Outbox.status == OutboxStatus.failed
    count = session.scalar(select(func.count()).where(gave_up)) or 0
    if count:  # "failed 1" alone: the operator had to find the mail and show it for why
        newest = select(Outbox).where(gave_up).order_by(Outbox.id.desc()).limit(1)
        last = session.scalars(newest).one()
        lines.append(f"  last failed for good (mail {last.id}): {last_line(last.last_error)[:300]}")
        lines.append("  (once its cause is mended, 'pbmserv mail outbox retry ID' sends it again)")
    return lines


def age(delta: timedelta) -> str:
    """A duration as an operator reads it at a glance.

    >>> age(timedelta(seconds=42)), age(timedelta(minutes=75)), age(timedelta(hours=50))
    ('42 s', '1 h 15 min', '2 d 2 h')
    """
    seconds = max(0, int(delta.total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours = minutes // 60
    if hours < 48:
        return f"{hours} h {minutes % 60} min"
    return f"{hours // 24} d {hours % 24} h"

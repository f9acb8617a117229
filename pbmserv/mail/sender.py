"""The sender: delivers the outbox to the relay or the local Maildir, every mail at least once.

A mail is first marked ``sending`` in its own transaction (a lease: ``claimed_at`` and
``claimed_by``), then handed over, then marked ``sent`` (a few at a time: one transaction for
:data:`RECORD_EVERY` mails).  A mail left ``sending`` by a process that died is sent again once
the lease (``outbox_lease_minutes``) is over: a crash may send a mail twice, never lose it.
Temporary failures are retried with backoff; permanent ones are recorded.  The operator lists,
shows and retries outgoing mail with ``pbmserv mail outbox``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.domain.record import attachments_for
from pbmserv.mail.compose import OutgoingMail, message_id_of, prepare_message
from pbmserv.mail.deliver import (
    MaildirSink,
    PermanentFailure,
    SmtpRelay,
    TemporaryFailure,
    next_attempt,
)
from pbmserv.mail.inbox import worker_id
from pbmserv.store.db import readonly_sessions
from pbmserv.store.models import Outbox, OutboxStatus

log = logging.getLogger("pbmserv.mail.sender")
BATCH = 50


def make_sink(settings: Settings) -> MaildirSink | SmtpRelay:
    if settings.outbox == "smtp":
        return SmtpRelay(
            settings.relay_host,
            settings.relay_port,
            starttls=settings.relay_starttls,
            username=settings.relay_username or None,
            password=settings.relay_password or None,
        )
    if settings.outbox != "maildir":
        raise ValueError(f"outbox must be 'maildir' or 'smtp', not {settings.outbox!r}")
    return MaildirSink(settings.maildir_path)


def _claim(sessions: sessionmaker[Session], settings: Settings, now: datetime) -> list[int]:
    expired = now - timedelta(minutes=settings.outbox_lease_minutes)
    with sessions() as session, session.begin():
        query = (
            select(Outbox)
            .where(
                or_(
                    (Outbox.status == OutboxStatus.pending) & (Outbox.next_attempt <= now),
                    (Outbox.status == OutboxStatus.sending)
                    & or_(Outbox.claimed_at.is_(None), Outbox.claimed_at < expired),
                )
            )
            .order_by(Outbox.id)
            .limit(BATCH)
        )
        if session.bind is not None and session.bind.dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        rows = session.scalars(query).all()
        for row in rows:
            if row.status is OutboxStatus.sending:
                log.warning(
                    "mail %s was left sending by %s: sending it again", row.id, row.claimed_by
                )
            row.status = OutboxStatus.sending
            row.claimed_at = now
            row.claimed_by = worker_id()
            row.attempts += 1
        return [row.id for row in rows]


def deliver_pending(
    sessions: sessionmaker[Session],
    settings: Settings,
    sink: MaildirSink | SmtpRelay,
    now: datetime,
) -> int:
    """Deliver every mail that is due; return how many were sent."""
    sent = 0
    while True:
        ids = _claim(sessions, settings, now)
        if not ids:
            return sent
        for start in range(0, len(ids), RECORD_EVERY):
            sent += _deliver_group(sessions, settings, sink, ids[start : start + RECORD_EVERY], now)


RECORD_EVERY = 10
"""Results are recorded for this many mails at a time: one read and one write transaction (one
fsync, one turn of SQLite's write lock) per group instead of per mail, while a crash between
handing over and recording resends at most this many mails."""


@dataclass
class _Result:
    mail_id: int
    message_id: str
    error: str | None = None
    permanent: bool = False


def _deliver_group(
    sessions: sessionmaker[Session],
    settings: Settings,
    sink: MaildirSink | SmtpRelay,
    ids: list[int],
    now: datetime,
) -> int:
    """Hand over the claimed mails ``ids``, then record every result in one transaction.

    The mails are read in a read-only session: on SQLite it takes no write lock, so that the
    worker's next batch does not wait on the sender's reading."""
    with readonly_sessions(settings.url)() as session:
        rows = session.scalars(select(Outbox).where(Outbox.id.in_(ids)).order_by(Outbox.id))
        ready = [
            (
                row.id,
                row.message_id,
                OutgoingMail(
                    to=row.recipient,
                    subject=row.subject,
                    body=row.body,
                    in_reply_to=row.in_reply_to,
                    references=(row.references or "").split(),
                    attachments=attachments_for(session, row.subject),
                ),
            )
            for row in rows
        ]
    results: list[_Result] = []
    try:
        with sink:  # one relay connection for the group
            for item in ready:
                results.append(_hand_over(settings, sink, *item, now))
    finally:  # what went out is recorded, even when a later mail of the group broke the loop
        with sessions() as session, session.begin():
            query = select(Outbox).where(Outbox.id.in_(ids))
            stored = {row.id: row for row in session.scalars(query)}
            for result in results:
                _record(stored[result.mail_id], result, now)
    return sum(result.error is None for result in results)


def _hand_over(
    settings: Settings,
    sink: MaildirSink | SmtpRelay,
    mail_id: int,
    message_id: str | None,
    outgoing: OutgoingMail,
    now: datetime,
) -> _Result:
    message = prepare_message(
        outgoing,
        from_addr=settings.server_address,
        server_id=settings.server_name,
        domain=settings.mail_domain,
        now=now,
        message_id=message_id,
        fold=sink.folds_headers,
    )
    result = _Result(mail_id, message_id_of(message))
    try:
        sink.send(message)
    except TemporaryFailure as exc:
        result.error = str(exc)
    except PermanentFailure as exc:
        result.error, result.permanent = str(exc), True
    return result


def _record(row: Outbox, result: _Result, now: datetime) -> None:
    row.message_id = result.message_id
    row.claimed_at = row.claimed_by = None
    if result.error is None:
        row.status = OutboxStatus.sent
        row.sent_at = now
        return
    row.last_error = result.error[-2000:]
    retry_at = None if result.permanent else next_attempt(row.attempts, now)
    if retry_at is None:
        row.status = OutboxStatus.failed
        log.warning("mail %s to %s failed for good: %s", row.id, row.recipient, result.error)
    else:
        row.status = OutboxStatus.pending
        row.next_attempt = retry_at

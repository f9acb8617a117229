"""The sender: delivers the outbox to the relay or the local Maildir, each mail exactly once.

A mail is first marked ``sending`` in its own transaction, then handed over, then marked
``sent``: a crash in between leaves it ``sending`` (shown by ``pbmserv status``) rather than
sending it twice.  Temporary failures are retried with backoff; permanent ones are recorded.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.domain.record import attachments_for
from pbmserv.mail.compose import OutgoingMail, build_message
from pbmserv.mail.deliver import (
    MaildirSink,
    PermanentFailure,
    SmtpRelay,
    TemporaryFailure,
    next_attempt,
)
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


def _claim(sessions: sessionmaker[Session], now: datetime) -> list[int]:
    with sessions() as session, session.begin():
        query = (
            select(Outbox)
            .where(Outbox.status == OutboxStatus.pending, Outbox.next_attempt <= now)
            .order_by(Outbox.id)
            .limit(BATCH)
        )
        if session.bind is not None and session.bind.dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        rows = session.scalars(query).all()
        for row in rows:
            row.status = OutboxStatus.sending
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
        ids = _claim(sessions, now)
        if not ids:
            return sent
        for mail_id in ids:
            sent += _deliver_one(sessions, settings, sink, mail_id, now)


def _deliver_one(
    sessions: sessionmaker[Session],
    settings: Settings,
    sink: MaildirSink | SmtpRelay,
    mail_id: int,
    now: datetime,
) -> int:
    with sessions() as session:
        row = session.get(Outbox, mail_id)
        assert row is not None
        outgoing = OutgoingMail(
            to=row.recipient,
            subject=row.subject,
            body=row.body,
            in_reply_to=row.in_reply_to,
            references=(row.references or "").split(),
            attachments=attachments_for(session, row.subject),
        )
        message_id = row.message_id
    message = build_message(
        outgoing,
        from_addr=settings.server_address,
        server_id=settings.server_name,
        domain=settings.mail_domain,
        now=now,
    )
    if message_id:  # an operator's retry keeps the Message-ID, so receivers can tell
        del message["Message-ID"]
        message["Message-ID"] = message_id
    error: str | None = None
    permanent = False
    try:
        sink.send(message)
    except TemporaryFailure as exc:
        error = str(exc)
    except PermanentFailure as exc:
        error, permanent = str(exc), True
    with sessions() as session, session.begin():
        row = session.get(Outbox, mail_id)
        assert row is not None
        row.message_id = message["Message-ID"]
        if error is None:
            row.status = OutboxStatus.sent
            row.sent_at = now
            return 1
        row.last_error = error[-2000:]
        retry_at = None if permanent else next_attempt(row.attempts, now)
        if retry_at is None:
            row.status = OutboxStatus.failed
            log.warning("mail %s to %s failed for good: %s", mail_id, row.recipient, error)
        else:
            row.status = OutboxStatus.pending
            row.next_attempt = retry_at
        return 0

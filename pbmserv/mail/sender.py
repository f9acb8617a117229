"""The sender: delivers the outbox to the relay or the local Maildir, each mail exactly once.

A mail is first marked ``sending`` in its own transaction (a lease: ``claimed_at`` and
``claimed_by``), then handed over, then marked ``sent``.  A mail left ``sending`` by a process
that died is sent again once the lease (``outbox_lease_minutes``) is over: a crash may send a
mail twice, never lose it.  Temporary failures are retried with backoff; permanent ones are
recorded.  The operator lists, shows and retries outgoing mail with ``pbmserv mail outbox``.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import or_, select
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
from pbmserv.mail.inbox import worker_id
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
        row.claimed_at = row.claimed_by = None
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

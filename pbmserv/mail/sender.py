"""The sender: delivers the outbox to the relay or the local Maildir, every mail at least once.

A mail is first marked ``sending`` in its own transaction (a lease: ``claimed_at`` and
``claimed_by``), then handed over, then marked ``sent`` (a few at a time: one transaction for
:data:`RECORD_EVERY` mails).  A mail left ``sending`` by a process that died is sent again once
the lease (``outbox_lease_minutes``) is over: a crash may send a mail twice, never lose it.
Temporary failures are retried with backoff; permanent ones are recorded.  The operator lists,
shows and retries outgoing mail with ``pbmserv mail outbox``.

The statement that marks a mail sent also drops its text and masks the code in a code mail's
subject: a sent mail may carry a code or a password, and the store keeps no copy of either.
What the operator needs stays: recipient, status, times, size and Message-ID.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from weakref import WeakKeyDictionary

from sqlalchemy import Select, Update, bindparam, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.domain.confirmation import subject_at_rest
from pbmserv.domain.record import attachments_for
from pbmserv.mail.compose import OutgoingMail, message_id_of, prepare_message
from pbmserv.mail.deliver import (
    MaildirSink,
    PermanentFailure,
    SmtpRelay,
    TemporaryFailure,
    next_attempt,
)
from pbmserv.mail.inbox_queue import clip_error, worker_id
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


@lru_cache(maxsize=2)
def _due_query(skip_locked: bool) -> Select[int, OutboxStatus, str | None]:
    """Built once, as the claim's UPDATE: the sender runs them after every batch of the
    worker, and building a statement costs about as much as running it."""
    query = (
        select(Outbox.id, Outbox.status, Outbox.claimed_by)
        .where(
            or_(
                (Outbox.status == OutboxStatus.pending)
                & (Outbox.next_attempt <= bindparam("now", type_=Outbox.next_attempt.type)),
                (Outbox.status == OutboxStatus.sending)
                & or_(
                    Outbox.claimed_at.is_(None),
                    Outbox.claimed_at < bindparam("expired", type_=Outbox.claimed_at.type),
                ),
            )
        )
        .order_by(Outbox.id)
        .limit(bindparam("limit"))
    )
    return query.with_for_update(skip_locked=True) if skip_locked else query


@lru_cache(maxsize=1)
def _claim_update() -> Update:
    return (
        update(Outbox)
        .where(Outbox.id.in_(bindparam("ids", expanding=True)))
        .values(
            status=OutboxStatus.sending,
            claimed_at=bindparam("now", type_=Outbox.claimed_at.type),
            claimed_by=bindparam("me"),
            attempts=Outbox.attempts + 1,
        )
    )


def _claim(sessions: sessionmaker[Session], settings: Settings, now: datetime) -> list[int]:
    """Lease up to ``BATCH`` due mails (plain statements: nothing here needs the rows)."""
    expired = now - timedelta(minutes=settings.outbox_lease_minutes)
    with sessions() as session, session.begin():
        postgresql = session.bind is not None and session.bind.dialect.name == "postgresql"
        connection = session.connection()
        rows = connection.execute(
            _due_query(postgresql), {"now": now, "expired": expired, "limit": BATCH}
        ).all()
        for row in rows:
            if row.status is OutboxStatus.sending:
                log.warning(
                    "mail %s was left sending by %s: sending it again", row.id, row.claimed_by
                )
        ids = [row.id for row in rows]
        if ids:
            connection.execute(_claim_update(), {"ids": ids, "now": now, "me": worker_id()})
        return ids


def deliver_pending(
    sessions: sessionmaker[Session],
    settings: Settings,
    sink: MaildirSink | SmtpRelay,
    now: datetime,
) -> int:
    """Deliver every mail that is due; return how many were sent.

    A claim that found fewer than ``BATCH`` mails found them all: no further claim (a write
    transaction) looks for more; mail queued since then wakes the sender again."""
    sent = 0
    while True:
        ids = _claim(sessions, settings, now)
        for start in range(0, len(ids), RECORD_EVERY):
            sent += _deliver_group(sessions, settings, sink, ids[start : start + RECORD_EVERY], now)
        if len(ids) < BATCH:
            return sent


RECORD_EVERY = 10
"""Results are recorded for this many mails at a time: one read and one write transaction (one
fsync, one turn of SQLite's write lock) per group instead of per mail, while a crash between
handing over and recording resends at most this many mails."""


@dataclass
class _Result:
    mail_id: int
    message_id: str
    subject: str  # as kept once sent
    size: int  # bytes of the text, dropped once sent
    recipient: str = ""
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
        rows = session.connection().execute(_mails_query(), {"ids": ids}).all()
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
            _record_results(session, results, now)
        _log_streak(sink, results)
        for result in results:  # one line per mail sent, as the worker's per mail processed
            if result.error is None:
                log.info(
                    "outbox mail %s to %s sent: %s",
                    result.mail_id,
                    result.recipient,
                    result.message_id,
                )
    return sum(result.error is None for result in results)


@lru_cache(maxsize=1)
def _mails_query() -> Select[int, str | None, str, str, str, str | None, str | None]:
    """What a hand-over reads of the claimed mails (no ORM rows: nothing changes them here)."""
    return (
        select(
            Outbox.id,
            Outbox.message_id,
            Outbox.recipient,
            Outbox.subject,
            Outbox.body,
            Outbox.in_reply_to,
            Outbox.references,
        )
        .where(Outbox.id.in_(bindparam("ids", expanding=True)))
        .order_by(Outbox.id)
    )


@lru_cache(maxsize=1)
def _sent_update() -> Update:
    return (
        update(Outbox)
        .where(Outbox.id == bindparam("mail_id"))
        .values(
            message_id=bindparam("given_id"),
            claimed_at=None,
            claimed_by=None,
            status=OutboxStatus.sent,
            sent_at=bindparam("now", type_=Outbox.sent_at.type),
            subject=bindparam("kept_subject"),
            body="",
            dropped_bytes=bindparam("size"),
        )
    )


def _record_results(session: Session, results: list[_Result], now: datetime) -> None:
    """The mails handed over are sent, their texts dropped: one statement for them all.  The
    others (rare) are read back for their attempts, to retry them later or give up."""
    sent = [
        {
            "mail_id": result.mail_id,
            "given_id": result.message_id,
            "now": now,
            "kept_subject": result.subject,
            "size": result.size,
        }
        for result in results
        if result.error is None
    ]
    if sent:
        session.connection().execute(_sent_update(), sent)
    failed = {result.mail_id: result for result in results if result.error is not None}
    if failed:
        for row in session.scalars(select(Outbox).where(Outbox.id.in_(failed))):
            _record_failure(row, failed[row.id], now)


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
    result = _Result(
        mail_id,
        message_id_of(message),
        subject_at_rest(outgoing.subject),
        len(outgoing.body.encode("utf-8", "replace")),
        outgoing.to,
    )
    try:
        sink.send(message)
    except TemporaryFailure as exc:
        result.error = str(exc)
    except PermanentFailure as exc:
        result.error, result.permanent = str(exc), True
    return result


def _record_failure(row: Outbox, result: _Result, now: datetime) -> None:
    """A failed hand-over: retried with backoff, or failed for good."""
    assert result.error is not None
    row.message_id = result.message_id
    row.claimed_at = row.claimed_by = None
    row.last_error = clip_error(result.error, 2000)
    retry_at = None if result.permanent else next_attempt(row.attempts, now)
    if retry_at is None:
        row.status = OutboxStatus.failed
        log.warning("mail %s to %s failed for good: %s", row.id, row.recipient, result.error)
    else:
        row.status = OutboxStatus.pending
        row.next_attempt = retry_at


def _log_streak(sink: MaildirSink | SmtpRelay, results: list[_Result]) -> None:
    """Warn of the first temporary failure of a streak, and say when delivery works again.

    A relay that is down fails every mail at every retry: a warning for each would flood the
    log, and none at all left the outage to be found in ``pbmserv mail outbox show``.  The
    streak belongs to the sink, which the server's sender keeps for as long as it runs."""
    failing = _FAILING.get(sink, 0)
    for result in results:
        if result.error is None:
            if failing:
                log.warning("delivery works again (after %d failed attempts)", failing)
            failing = 0
        elif not result.permanent:  # (a permanent failure is logged with its mail)
            if not failing:
                log.warning(
                    "delivery of mail %s failed, retried with backoff: %s (`pbmserv status` "
                    "counts the failing mails; no more warnings until a mail goes out)",
                    result.mail_id,
                    result.error,
                )
            failing += 1
    _FAILING[sink] = failing


_FAILING: WeakKeyDictionary[object, int] = WeakKeyDictionary()
"""Failed hand-overs in a row, per sink (see :func:`_log_streak`)."""

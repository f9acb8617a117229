"""The inbox as the workers' queue: claims, leases, attempts, and the end of each stored mail.

Workers claim batches of messages (``FOR UPDATE SKIP LOCKED`` on PostgreSQL; on SQLite the
immediate write transaction serialises claims).  A claim is a lease: a message whose worker
died is claimed again once the lease is over, or at once when the dead worker was on this host.
A message that keeps failing is set aside ("shunted") for the operator after ``MAX_ATTEMPTS``
tries.  A processed one keeps a copy with its passwords masked (:func:`finish`).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from sqlalchemy import (
    ColumnElement,
    Select,
    Update,
    bindparam,
    case,
    func,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.store.models import Inbox, InboxStatus

MAX_ATTEMPTS = 3
LEASE = timedelta(minutes=5)


def worker_id() -> str:
    """Who holds a claim: this host and process (so a dead process of this host is known)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def clip_error(text: str, limit: int) -> str:
    """An error (a traceback) cut to about ``limit`` characters at line ends, for the store:
    its first line and as many of its last lines as fit, with a note of what is left out.
    (Its last ``limit`` characters began mid-word, and lost the traceback's head.)

    >>> clip_error("Traceback:\\n" + "  x\\n" * 20 + "ValueError: boom", 60)
    'Traceback:\\n[... 20 lines left out ...]\\nValueError: boom'
    """
    text = text.rstrip("\n")
    if len(text) <= limit:
        return text
    lines = text.splitlines()
    if len(lines) == 1:
        return text[: limit - 6] + " [...]"
    head = lines[0] if len(lines[0]) <= limit // 2 else lines[0][: limit // 2] + " [...]"
    tail: list[str] = []
    room = limit - len(head) - len("\n[... 99999 lines left out ...]\n")
    for line in reversed(lines[1:]):
        if len(line) + 1 > room:
            break
        tail.insert(0, line)
        room -= len(line) + 1
    if not tail:  # the last line alone is too long: its start
        tail = [lines[-1][: max(0, room - 6)] + " [...]"]
    left_out = len(lines) - 1 - len(tail)
    note = [f"[... {left_out} lines left out ...]"] if left_out else []
    return "\n".join([head, *note, *tail])


def _claimable() -> ColumnElement[bool]:
    """New, or claimed by a worker whose lease ran out before ``:stale_before``."""
    return or_(
        Inbox.status == InboxStatus.new,
        (Inbox.status == InboxStatus.processing)
        & (Inbox.claimed_at < bindparam("stale_before", type_=Inbox.claimed_at.type)),
    )


@lru_cache(maxsize=1)
def _waiting_query() -> Select[int]:
    """Built once, as the other statements here: they run for every batch, and building one
    costs about as much as running it."""
    return select(Inbox.id).where(_claimable()).limit(1)


def waiting(readers: sessionmaker[Session], now: datetime) -> bool:
    """Whether a mail waits to be claimed.  A read (``readers``: read-only sessions), so that
    idle workers can look often: on SQLite it takes no write lock."""
    with readers() as session:
        found = session.connection().execute(_waiting_query(), {"stale_before": now - LEASE})
        return found.first() is not None


@dataclass
class Claimed:
    """A mail claimed for processing: what the worker reads of its row."""

    id: int
    raw: bytes
    mail_from: str
    received: datetime | None = None  # (None: not known, as from a test)
    dated: datetime | None = None  # its Date, as read when it was stored


@lru_cache(maxsize=2)
def _claim_query(skip_locked: bool) -> Select[int, bytes, str, int, datetime, datetime | None]:
    query = (
        select(Inbox.id, Inbox.raw, Inbox.mail_from, Inbox.attempts, Inbox.received, Inbox.dated)
        .where(_claimable())
        .order_by(Inbox.id)
        .limit(bindparam("limit"))
    )
    return query.with_for_update(skip_locked=True) if skip_locked else query


@lru_cache(maxsize=1)
def _claim_update() -> Update:
    return (
        update(Inbox)
        .where(Inbox.id.in_(bindparam("ids", expanding=True)))
        .values(
            status=InboxStatus.processing,
            claimed_by=bindparam("me"),
            claimed_at=bindparam("now", type_=Inbox.claimed_at.type),
            attempts=Inbox.attempts + 1,
        )
    )


def claim_batch(
    session: Session, now: datetime, limit: int, me: str | None = None
) -> list[Claimed]:
    """Claim up to ``limit`` unprocessed messages, oldest first, inside the caller's transaction.

    A message already tried ``MAX_ATTEMPTS`` times is set aside instead of claimed.  Plain
    statements, not ORM rows: a claim runs for every batch, and nothing here needs the objects.
    """
    postgresql = session.bind is not None and session.bind.dialect.name == "postgresql"
    connection = session.connection()
    rows = connection.execute(
        _claim_query(postgresql), {"stale_before": now - LEASE, "limit": limit}
    ).all()
    for spent in (row for row in rows if row.attempts >= MAX_ATTEMPTS):
        connection.execute(
            update(Inbox)
            .where(Inbox.id == spent.id)
            .values(
                status=InboxStatus.shunted,
                last_error=func.coalesce(Inbox.last_error, "")
                + f"\nset aside after {spent.attempts} attempts",
            )
        )
    claimed = [
        Claimed(row.id, row.raw, row.mail_from, row.received, row.dated)
        for row in rows
        if row.attempts < MAX_ATTEMPTS
    ]
    if claimed:
        connection.execute(
            _claim_update(),
            {"ids": [mail.id for mail in claimed], "me": me or worker_id(), "now": now},
        )
    return claimed


def release_dead_claims(sessions: sessionmaker[Session]) -> int:
    """Return to the queue the messages claimed by processes of this host that are gone."""
    host = socket.gethostname()
    released = 0
    with sessions() as session, session.begin():
        rows = session.scalars(
            select(Inbox).where(
                Inbox.status == InboxStatus.processing, Inbox.claimed_by.like(f"{host}:%")
            )
        ).all()
        for row in rows:
            pid = int((row.claimed_by or "0:0").rsplit(":", 1)[1])
            if pid != os.getpid() and not _alive(pid):
                row.status = InboxStatus.new
                row.claimed_by = None
                released += 1
    return released


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def mark_failed(session: Session, message_id: int, error: str) -> InboxStatus:
    """A failed attempt of the mail: back to the queue, or set aside after ``MAX_ATTEMPTS``
    (the status it has now; ``new`` if the mail is gone, as the operator may purge it)."""
    status = (
        session.connection()
        .execute(
            update(Inbox)
            .where(Inbox.id == message_id)
            .values(
                last_error=clip_error(error, 4000),
                claimed_by=None,
                status=case(
                    (Inbox.attempts >= MAX_ATTEMPTS, _status(InboxStatus.shunted)),
                    else_=_status(InboxStatus.new),
                ),
            )
            .returning(Inbox.status)
        )
        .scalar_one_or_none()
    )
    return InboxStatus.new if status is None else status


def _status(status: InboxStatus) -> ColumnElement[InboxStatus]:
    return literal(status, Inbox.status.type)


@lru_cache(maxsize=2)
def _requeue_update(held: bool) -> Update:
    query = update(Inbox).where(Inbox.id.in_(bindparam("ids", expanding=True)))
    if held:
        query = query.where(
            Inbox.status == InboxStatus.processing, Inbox.claimed_by == bindparam("held_by")
        )
    return query.values(
        status=InboxStatus.new,
        claimed_by=None,
        attempts=case((Inbox.attempts > 0, Inbox.attempts - 1), else_=0),
    )


def requeue(session: Session, message_ids: list[int], *, claimed_by: str | None = None) -> None:
    """Back to the queue without counting the attempt (it lost a lock race, or waits behind a
    mail that failed); with ``claimed_by``, only the mails that worker still holds."""
    session.connection().execute(
        _requeue_update(claimed_by is not None), {"ids": message_ids, "held_by": claimed_by}
    )


def release_claims(sessions: sessionmaker[Session], message_ids: list[int]) -> None:
    """Put the mails this worker claimed and still holds back in the queue, their attempt
    not counted (a mail already done stays done): a round that broke, or a worker stopping."""
    if message_ids:
        with sessions() as session, session.begin():
            requeue(session, message_ids, claimed_by=worker_id())


@lru_cache(maxsize=2)
def _finish_update(noted: bool) -> Update:
    values: dict[str, object] = {
        "status": bindparam("status", type_=Inbox.status.type),
        "raw": bindparam("kept", type_=Inbox.raw.type),
        "claimed_by": None,
    }
    if noted:
        values["last_error"] = bindparam("note", type_=Inbox.last_error.type)
    return update(Inbox).where(Inbox.id == bindparam("message_id")).values(**values)


def finish(
    session: Session, message_id: int, status: InboxStatus, kept: bytes, note: str | None
) -> None:
    """A processed mail: its new status, the copy of it that is kept (``kept``: passwords
    masked) and, when given, why it was not answered."""
    session.connection().execute(
        _finish_update(note is not None),
        {"message_id": message_id, "status": status, "kept": kept, "note": note},
    )


def retry(sessions: sessionmaker[Session], message_id: int) -> InboxStatus | None:
    """Operator: put a set-aside mail back in the queue with fresh attempts.

    Only a mail set aside still has its raw bytes: a processed one keeps a copy with its
    passwords masked, and running that again would answer "wrong password" and count an
    authentication failure.  Returns the status the mail had (None: there is no such mail);
    any other status than ``shunted`` leaves it as it is."""
    with sessions() as session, session.begin():
        status = session.scalar(select(Inbox.status).where(Inbox.id == message_id))
        if status is InboxStatus.shunted:
            session.execute(
                update(Inbox)
                .where(Inbox.id == message_id, Inbox.status == InboxStatus.shunted)
                .values(status=InboxStatus.new, attempts=0, claimed_by=None)
            )
        return status

"""The durable inbox: every accepted mail is a row before the listener answers 250.

A repeated delivery (same Message-ID, or the same bytes when there is none) is acknowledged and
not stored twice.  Workers claim batches of messages (``FOR UPDATE SKIP LOCKED`` on
PostgreSQL; on SQLite the immediate write transaction serialises claims).  A claim is a lease:
a message whose worker died is claimed again once the lease is over, or at once when the dead
worker was on this host.  A message that keeps failing is set aside ("shunted") for the
operator after ``MAX_ATTEMPTS`` tries.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.parser import BytesHeaderParser
from email.policy import compat32

from sqlalchemy import ColumnElement, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.store.models import Inbox, InboxStatus

MAX_ATTEMPTS = 3
LEASE = timedelta(minutes=5)


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def dedup_key(raw: bytes) -> str:
    """The Message-ID when there is one, else a hash of the bytes."""
    try:
        headers = BytesHeaderParser(policy=compat32).parsebytes(raw[:65536], headersonly=True)
        message_id = (headers.get("Message-ID") or "").strip()
    except Exception:  # noqa: BLE001 - a header we cannot read is no Message-ID
        message_id = ""
    if message_id:
        return "mid:" + message_id[:900]
    return "sha256:" + hashlib.sha256(raw).hexdigest()


@dataclass
class Stored:
    id: int
    new: bool  # False when this was a repeated delivery


def store(
    sessions: sessionmaker[Session], raw: bytes, mail_from: str, rcpt_tos: list[str], now: datetime
) -> Stored:
    """Write the message durably; return its id and whether it was new."""
    key = dedup_key(raw)
    with sessions() as session:
        try:
            with session.begin():
                row = Inbox(**_new_values(key, Delivery(raw, mail_from, rcpt_tos, now)))
                session.add(row)
                session.flush()
                return Stored(row.id, True)
        except IntegrityError:
            pass
    with sessions() as session:
        existing = session.scalar(select(Inbox.id).where(Inbox.dedup_key == key))
        assert existing is not None
        return Stored(existing, False)


@dataclass
class Delivery:
    """One accepted mail on its way into the inbox."""

    raw: bytes
    mail_from: str
    rcpt_tos: list[str]
    received: datetime


def _new_values(key: str, delivery: Delivery) -> dict[str, object]:
    return {
        "dedup_key": key,
        "raw": delivery.raw,
        "mail_from": delivery.mail_from or "",
        "rcpt_to": "\n".join(delivery.rcpt_tos),
        "received": delivery.received,
        "status": InboxStatus.new,
        "attempts": 0,
    }


def store_many(sessions: sessionmaker[Session], deliveries: list[Delivery]) -> list[Stored]:
    """Write several mails durably in one transaction (one fsync); repeated ones are not stored
    twice, within the group or with what is stored already.  Raises when the group could not
    be written: then nothing of it was."""
    keys = [dedup_key(d.raw) for d in deliveries]
    with sessions() as session, session.begin():
        known = dict(
            session.execute(
                select(Inbox.dedup_key, Inbox.id).where(Inbox.dedup_key.in_(set(keys)))
            ).all()
        )
        new_rows: dict[str, dict[str, object]] = {}
        for key, delivery in zip(keys, deliveries, strict=True):
            if key not in known and key not in new_rows:
                new_rows[key] = _new_values(key, delivery)
        made: dict[str, int] = {}
        if new_rows:  # one bulk INSERT ... RETURNING: no unit of work for rows nobody reads
            inserted = session.execute(
                insert(Inbox).returning(Inbox.id, Inbox.dedup_key), list(new_rows.values())
            )
            made = {key: row_id for row_id, key in inserted}
    stored: list[Stored] = []
    firsts: set[str] = set()
    for key in keys:
        if key in known:
            stored.append(Stored(known[key], False))
        else:
            stored.append(Stored(made[key], key not in firsts))
            firsts.add(key)
    return stored


class GroupStore:
    """Group commit for the listener: the mails that arrive while one group is being written
    wait and are written together in the next transaction, so that many SMTP sessions share
    one fsync and take SQLite's write lock once.  Each caller returns only when its own mail is
    durable (then the listener may answer 250), or raises (then it answers 451)."""

    def __init__(self, sessions: sessionmaker[Session], max_group: int = 64) -> None:
        self._sessions = sessions
        self._max_group = max_group
        self._cond = threading.Condition()
        self._waiting: list[tuple[Delivery, _Slot]] = []
        self._writing = False

    def store(self, delivery: Delivery) -> Stored:
        slot = _Slot()
        with self._cond:
            self._waiting.append((delivery, slot))
        while True:
            with self._cond:
                while not slot.done and self._writing:
                    self._cond.wait()
                if slot.done:
                    return slot.result()
                self._writing = True  # this caller writes the next group (its own mail, soon)
                group = self._waiting[: self._max_group]
                del self._waiting[: self._max_group]
            try:
                self._write(group)
            finally:
                with self._cond:
                    self._writing = False
                    self._cond.notify_all()

    def _write(self, group: list[tuple[Delivery, _Slot]]) -> None:
        try:
            results = store_many(self._sessions, [d for d, _ in group])
        except Exception:  # noqa: BLE001 - a duplicate racing in from another process, or worse
            for delivery, slot in group:  # each on its own: one failure stays one 451
                try:
                    slot.stored = store(
                        self._sessions,
                        delivery.raw,
                        delivery.mail_from,
                        delivery.rcpt_tos,
                        delivery.received,
                    )
                except Exception as exc:  # noqa: BLE001 - handed to that mail's caller
                    slot.error = exc
                slot.done = True
            return
        for (_, slot), stored in zip(group, results, strict=True):
            slot.stored, slot.done = stored, True


class _Slot:
    """Where a waiting caller finds the outcome of its mail."""

    def __init__(self) -> None:
        self.done = False
        self.stored: Stored | None = None
        self.error: Exception | None = None

    def result(self) -> Stored:
        if self.error is not None:
            raise self.error
        assert self.stored is not None
        return self.stored


def _claimable(now: datetime) -> ColumnElement[bool]:
    return or_(
        Inbox.status == InboxStatus.new,
        (Inbox.status == InboxStatus.processing) & (Inbox.claimed_at < now - LEASE),
    )


def waiting(readers: sessionmaker[Session], now: datetime) -> bool:
    """Whether a mail waits to be claimed.  A read (``readers``: read-only sessions), so that
    idle workers can look often: on SQLite it takes no write lock."""
    with readers() as session:
        return session.scalar(select(Inbox.id).where(_claimable(now)).limit(1)) is not None


def claim_batch(session: Session, now: datetime, limit: int, me: str | None = None) -> list[Inbox]:
    """Claim up to ``limit`` unprocessed messages, oldest first, inside the caller's transaction.

    A message already tried ``MAX_ATTEMPTS`` times is set aside instead of claimed.
    """
    me = me or worker_id()
    query = select(Inbox).where(_claimable(now)).order_by(Inbox.id).limit(limit)
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    claimed = []
    for row in session.scalars(query).all():
        if row.attempts >= MAX_ATTEMPTS:
            row.status = InboxStatus.shunted
            row.last_error = (row.last_error or "") + f"\nset aside after {row.attempts} attempts"
            continue
        row.status = InboxStatus.processing
        row.claimed_by = me
        row.claimed_at = now
        row.attempts += 1
        claimed.append(row)
    session.flush()
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


def record_failure(sessions: sessionmaker[Session], message_id: int, error: str) -> None:
    """After a failed attempt (its transaction rolled back): back to the queue, or set aside."""
    with sessions() as session, session.begin():
        row = session.get(Inbox, message_id)
        if row is not None:
            mark_failed(row, error)


def mark_failed(row: Inbox, error: str) -> None:
    """A failed attempt of ``row``: back to the queue, or set aside after ``MAX_ATTEMPTS``."""
    row.last_error = error[-4000:]
    row.claimed_by = None
    row.status = InboxStatus.shunted if row.attempts >= MAX_ATTEMPTS else InboxStatus.new


def requeue(row: Inbox) -> None:
    """Back to the queue without counting the attempt (it lost a lock race, nothing more)."""
    row.status = InboxStatus.new
    row.claimed_by = None
    row.attempts = max(0, row.attempts - 1)


def retry(sessions: sessionmaker[Session], message_id: int) -> bool:
    """Operator: put a set-aside (or any) message back in the queue with fresh attempts."""
    with sessions() as session, session.begin():
        result = session.execute(
            update(Inbox)
            .where(Inbox.id == message_id)
            .values(status=InboxStatus.new, attempts=0, claimed_by=None)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


class SharedSession:
    """One session for everything a mail's commands do, so that the whole mail commits at once.

    Commands open ``with sessions() as s, s.begin():`` blocks; here those blocks become
    savepoints inside the worker's transaction, and closing does nothing.  Either all of a
    mail's effects, its answers and its "done" mark are committed, or none is.
    """

    def __init__(self, session: Session) -> None:
        self._session = session

    def __call__(self) -> SharedSession:
        return self

    def __getattr__(self, name: str) -> object:
        return getattr(self._session, name)

    def __enter__(self) -> SharedSession:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def begin(self) -> object:
        return self._session.begin_nested()

    def close(self) -> None:
        return None

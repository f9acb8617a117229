"""The durable inbox: every accepted mail is a row before the listener answers 250.

A repeated delivery (the same Message-ID from the same senders, or the same bytes when there is
no Message-ID: :func:`dedup_key`) is acknowledged and not stored twice; it is logged and counted
on the row it repeats (``Inbox.repeats``), or repeats the key of a mail deleted since (an
``InboxTombstone``: :mod:`pbmserv.mail.replay`).  Workers claim batches of messages (``FOR UPDATE
SKIP LOCKED`` on PostgreSQL; on SQLite the immediate write transaction serialises claims).  A
claim is a lease: a message whose worker died is claimed again once the lease is over, or at
once when the dead worker was on this host.  A message that keeps failing is set aside
("shunted") for the operator after ``MAX_ATTEMPTS`` tries.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.parser import BytesHeaderParser
from email.policy import compat32
from functools import lru_cache

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    CompoundSelect,
    Insert,
    Select,
    Update,
    bindparam,
    case,
    func,
    insert,
    literal,
    null,
    or_,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.mail import srs
from pbmserv.mail.decode import header_part
from pbmserv.mail.replay import earliest_date
from pbmserv.store.models import Inbox, InboxStatus, InboxTombstone

log = logging.getLogger("pbmserv.inbox")
MAX_ATTEMPTS = 3
LEASE = timedelta(minutes=5)


def worker_id() -> str:
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


def dedup_key(raw: bytes, mail_from: str) -> str:
    """The key that makes a later mail a repeated delivery of this one.  With a Message-ID,
    that Message-ID from the same envelope sender (``mail_from``; an SRS one as the address it
    stands for: :func:`srs.for_key`) and From header: a Message-ID alone was global, so anyone
    who sent a guessed or leaked one first had its owner's mail dropped.  A re-delivery (a lost
    250, a relay's duplicate, an SRS forwarder's resend) keeps both senders; a forger must
    forge both, which SPF and DMARC can check.  Without a Message-ID, a hash of the bytes
    (they hold the senders already).  Of several Message-IDs (RFC 5322 allows one), the
    lowest: a replay with a new one written above its own (DKIM signs the lowest) is a repeat.

    >>> mail = b"From: a@x.example\\nMessage-ID: <1@x.example>\\n\\nhi\\n"
    >>> dedup_key(mail, "a@x.example") == dedup_key(mail, "a@x.example")
    True
    >>> dedup_key(mail, "a@x.example") == dedup_key(mail, "mallory@evil.example")
    False
    """
    return _keys(raw, mail_from)[0]


def _keys(raw: bytes, mail_from: str) -> tuple[str, str | None, datetime | None]:
    """:func:`dedup_key`, the key the same mail had before migration 0010 (Message-ID alone;
    None without one), under which mails stored before it are found, and its Date."""
    message_id, senders, dated = "", "", None
    try:
        headers = BytesHeaderParser(policy=compat32).parsebytes(header_part(raw), headersonly=True)
        dated = earliest_date([str(value) for value in headers.get_all("Date") or []])
        ids = [str(value).strip() for value in headers.get_all("Message-ID") or []]
        message_id = next((i for i in reversed(ids) if i), "")  # (the lowest: see above)
        senders = " ".join(
            " ".join(str(value).split())
            for name, value in headers.raw_items()
            if name.lower() == "from"
        )
    except Exception:  # noqa: BLE001 - a header we cannot read is no Message-ID
        message_id = ""
    if not message_id:
        return "sha256:" + hashlib.sha256(raw).hexdigest(), None, dated
    who = f"{srs.for_key(mail_from or '')}\n{senders}".encode("utf-8", "surrogateescape")
    digest = hashlib.sha256(who).hexdigest()[:32]
    return f"from:{digest} mid:{message_id[:900]}", LEGACY_PREFIX + message_id[:900], dated


LEGACY_PREFIX = "mid:"
"""The keys stored before migration 0010: the Message-ID alone.  Such a row still stands for a
repeat of a later mail with its Message-ID, but only from the envelope sender the row has (its
From header was not kept in full, so it cannot be compared).  Rows go after
``inbox_retention_days``, their keys kept for any sender (the envelope is not kept with a key);
the downgrade of 0010 writes these keys back."""


@dataclass
class Stored:
    id: int | None  # None: a repeat of a mail processed and deleted since (its key is kept)
    new: bool  # False when this was a repeated delivery


def store(
    sessions: sessionmaker[Session], raw: bytes, mail_from: str, rcpt_tos: list[str], now: datetime
) -> Stored:
    """Write the message durably; return its id and whether it was new."""
    delivery = Delivery(raw, mail_from, rcpt_tos, now)
    try:
        return _store_group(sessions, [delivery])[0]
    except IntegrityError:  # the same mail, stored by another process since we looked
        return _store_group(sessions, [delivery])[0]


@dataclass
class Delivery:
    """One accepted mail on its way into the inbox."""

    raw: bytes
    mail_from: str
    rcpt_tos: list[str]
    received: datetime


# The envelope sender as kept: an address has at most 254 characters, and a longer envelope
# sender (SMTP's 512-character command line lets one through) is no address to answer; whole,
# it did not fit the column on PostgreSQL, and the mail got a 451 at every attempt.
ENVELOPE_CHARS = 320


def _new_values(key: str, delivery: Delivery, dated: datetime | None) -> dict[str, object]:
    return {
        "dedup_key": key,
        "raw": delivery.raw,
        "mail_from": (delivery.mail_from or "")[:ENVELOPE_CHARS],
        "rcpt_to": "\n".join(delivery.rcpt_tos),
        "received": delivery.received,
        "status": InboxStatus.new,
        "attempts": 0,
        "repeats": 0,
        "dated": dated,
    }


def store_many(sessions: sessionmaker[Session], deliveries: list[Delivery]) -> list[Stored]:
    """Write several mails durably in one transaction (one fsync); repeated ones are not stored
    twice, within the group or with what is stored already.  Raises when the group could not
    be written: then nothing of it was."""
    return _store_group(sessions, deliveries)


def _store_group(sessions: sessionmaker[Session], deliveries: list[Delivery]) -> list[Stored]:
    """The one write of :func:`store_many` and :func:`store` (the fallback of a group that
    failed: one mail at a time, so that one bad mail stays one 451)."""
    keys = [_keys(d.raw, d.mail_from) for d in deliveries]
    wanted = {k for key, legacy, _ in keys for k in (key, legacy) if k is not None}
    with sessions() as session, session.begin():
        connection = session.connection()
        known = {
            row.dedup_key: (row.id, row.mail_from)
            for row in connection.execute(_known_query(), {"keys": sorted(wanted)})
        }
        new_rows: dict[str, dict[str, object]] = {}
        repeats: dict[str, int | None] = {}  # key -> the id of the row it repeats (known ones)
        for (key, legacy, dated), delivery in zip(keys, deliveries, strict=True):
            if key in known:
                repeats[key] = known[key][0]
            elif legacy in known and _same_envelope(known[legacy][1], delivery.mail_from):
                repeats[key] = known[legacy][0]
            elif key not in new_rows:
                new_rows[key] = _new_values(key, delivery, dated)
        made: dict[str, int] = {}
        if new_rows:  # one bulk INSERT ... RETURNING: no unit of work for rows nobody reads
            inserted = connection.execute(_insert_mails(), list(new_rows.values()))
            made = {key: row_id for row_id, key in inserted}
        stored: list[Stored] = []
        firsts: set[str] = set()
        for (key, _legacy, _dated), delivery in zip(keys, deliveries, strict=True):
            if key in repeats or key in firsts:
                stored.append(Stored(repeats[key] if key in repeats else made[key], False))
                _log_repeat(stored[-1].id, delivery)
            else:
                stored.append(Stored(made[key], True))
                firsts.add(key)
        counted = Counter(s.id for s in stored if not s.new and s.id is not None)
        if counted:  # rare: what the operator sees of the repeats (`pbmserv status`)
            connection.execute(
                _count_repeats(), [{"row": i, "more": n} for i, n in counted.items()]
            )
    return stored


def _same_envelope(stored: str | None, mail_from: str) -> bool:
    """(A deleted mail's key, ``stored`` None, stands for a repeat from any envelope sender.)"""
    return stored is None or stored.strip() == (mail_from or "")[:ENVELOPE_CHARS].strip()


def _log_repeat(row_id: int | None, delivery: Delivery) -> None:
    log.warning(
        "repeated delivery of mail %s (envelope from %r) acknowledged and not stored again",
        row_id or "processed and deleted since",
        delivery.mail_from or "<>",
    )


@lru_cache(maxsize=1)
def _known_query() -> CompoundSelect[str, int | None, str | None]:
    """Built once, as the other statements of this module: the listener runs it for every
    group of mails, and building a statement costs about as much as running it.  One
    statement for the mails and the keys of deleted ones, so that it sees a mail before its
    deletion or its key after it, never neither."""
    keys: BindParameter[list[str]] = bindparam("keys", expanding=True)
    return (
        select(Inbox.dedup_key, Inbox.id, Inbox.mail_from)
        .where(Inbox.dedup_key.in_(keys))
        .union_all(
            select(InboxTombstone.dedup_key, null(), null()).where(
                InboxTombstone.dedup_key.in_(keys)
            )
        )
    )


@lru_cache(maxsize=1)
def _insert_mails() -> Insert:
    return insert(Inbox).returning(Inbox.id, Inbox.dedup_key)


@lru_cache(maxsize=1)
def _count_repeats() -> Update:
    return (
        update(Inbox)
        .where(Inbox.id == bindparam("row"))
        .values(repeats=Inbox.repeats + bindparam("more"))
    )


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

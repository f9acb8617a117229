"""The durable inbox: every accepted mail is a row before the listener answers 250.

A repeated delivery (the same Message-ID, From, Subject, Date and text whatever the envelope:
:func:`dedup_key`) is acknowledged and not stored twice; it is logged and counted
on the row it repeats (``Inbox.repeats``), or repeats the key of a mail deleted since (an
``InboxTombstone``: :mod:`pbmserv.mail.replay`).  The workers take the stored mails from the
queue (:mod:`pbmserv.mail.inbox_queue`).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from sqlalchemy import (
    BindParameter,
    CompoundSelect,
    Insert,
    Update,
    bindparam,
    insert,
    null,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.mail.keys import LEGACY_PREFIX as LEGACY_PREFIX  # (where the migrations name it)
from pbmserv.mail.keys import dedup_key as dedup_key
from pbmserv.mail.keys import keys_of
from pbmserv.store.models import Inbox, InboxStatus, InboxTombstone

log = logging.getLogger("pbmserv.inbox")


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
    keys = [keys_of(d.raw, d.mail_from) for d in deliveries]
    wanted = {k for ks in keys for k in (ks.key, ks.before, ks.legacy) if k is not None}
    with sessions() as session, session.begin():
        connection = session.connection()
        known = {
            row.dedup_key: (row.id, row.mail_from)
            for row in connection.execute(_known_query(), {"keys": sorted(wanted)})
        }
        new_rows: dict[str, dict[str, object]] = {}
        repeats: dict[str, int | None] = {}  # key -> the id of the row it repeats (known ones)
        for ks, delivery in zip(keys, deliveries, strict=True):
            key, legacy = ks.key, ks.legacy
            if key in known:
                repeats[key] = known[key][0]
            elif ks.before in known:  # stored before the key was the mail's own
                repeats[key] = known[ks.before][0]
            elif legacy in known and _same_envelope(known[legacy][1], delivery.mail_from):
                repeats[key] = known[legacy][0]
            elif key not in new_rows:
                new_rows[key] = _new_values(key, delivery, ks.dated)
        made: dict[str, int] = {}
        if new_rows:  # one bulk INSERT ... RETURNING: no unit of work for rows nobody reads
            inserted = connection.execute(_insert_mails(), list(new_rows.values()))
            made = {key: row_id for row_id, key in inserted}
        stored: list[Stored] = []
        firsts: set[str] = set()
        for ks, delivery in zip(keys, deliveries, strict=True):
            key = ks.key
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

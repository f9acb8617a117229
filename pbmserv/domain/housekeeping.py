"""Periodic clean-up run with the clock tick: unconfirmed accounts, old codes and counters,
processed mails and the records of sent mails past their retention (a deleted mail's key is
kept while a replay of it would still run: :mod:`pbmserv.mail.replay`), and (SQLite) the
write-ahead log, which still holds the raw bytes of mails that have since been replaced by
their masked copies, and the texts of sent mails that have since been dropped."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, delete, exists, insert, select, update
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.domain import limits, tokens
from pbmserv.domain.confirmation import expire_unconfirmed
from pbmserv.store.models import Inbox, InboxStatus, InboxTombstone, Outbox, OutboxStatus

log = logging.getLogger("pbmserv.domain.housekeeping")


def housekeeping(sessions: sessionmaker[Session], settings: Settings, now: datetime) -> list[str]:
    """Do the clean-up; return lines for the operator."""
    with sessions() as session, session.begin():
        expired = expire_unconfirmed(session, settings, now)
        used = tokens.purge(session, now)
        limits.purge(session, now)
        cutoff = now - timedelta(days=settings.inbox_retention_days)
        going = (
            Inbox.status.in_([InboxStatus.done, InboxStatus.ignored]),
            Inbox.processed_at < cutoff,
        )
        _keep_keys(session, going, now, timedelta(days=settings.stale_mail_days))
        result = session.execute(delete(Inbox).where(*going))
        purged = int(result.rowcount or 0)  # type: ignore[attr-defined]
        result = session.execute(
            delete(Outbox).where(Outbox.status == OutboxStatus.sent, Outbox.sent_at < cutoff)
        )
        sent = int(result.rowcount or 0)  # type: ignore[attr-defined]
    checkpoint(sessions)
    for userid in expired:
        log.info("unconfirmed account removed: %s", userid)
    lines = []
    if expired:
        lines.append("Unconfirmed accounts removed: " + ", ".join(expired))
    if used:
        lines.append(f"Used or expired codes deleted: {used}")
    if purged:
        lines.append(
            f"Processed mails deleted (older than {settings.inbox_retention_days} days): {purged}"
        )
    if sent:
        lines.append(
            f"Sent mails' records deleted (older than {settings.inbox_retention_days} days): {sent}"
        )
    return lines


KEPT_AHEAD = timedelta(days=400)
"""How far ahead of its deletion a mail may be dated and still have its key kept (see
:func:`_keep_keys`): a clock set a year ahead, with room."""


def _keep_keys(
    session: Session, going: tuple[ColumnElement[bool], ...], now: datetime, days: timedelta
) -> None:
    """Keep the keys of the mails ``going`` (to be deleted) that a replay could still run as
    (:func:`pbmserv.mail.replay.refusal`): dated within ``days`` of now, or ahead of it (kept
    until that Date is ``days`` old).  A mail dated far ahead was refused, but its replay
    near its Date would run: its key is kept too, up to :data:`KEPT_AHEAD` ahead (a clock a
    year wrong), not beyond, so that no Date keeps a key for ever.  None of a mail without a
    Date (a replay runs nothing either).  Drop the kept keys that no longer need to be;
    a key kept with no Date (before migration 0016: a dateless mail's, or a mail's stored before
    0014) is kept ``days`` from the first clean-up that finds it, as a mail dated then."""
    undated = InboxTombstone.dated.is_(None)
    session.execute(update(InboxTombstone).where(undated).values(dated=now))
    session.execute(delete(InboxTombstone).where(InboxTombstone.dated < now - days))
    known = exists().where(InboxTombstone.dedup_key == Inbox.dedup_key)
    needed = and_(Inbox.dated >= now - days, Inbox.dated <= now + max(days, KEPT_AHEAD))
    session.execute(
        insert(InboxTombstone).from_select(
            ["dedup_key", "dated"],
            select(Inbox.dedup_key, Inbox.dated).where(*going, needed, ~known),
        )
    )


def checkpoint(sessions: sessionmaker[Session]) -> None:
    """SQLite: copy the write-ahead log into the database file and empty it (a no-op for
    PostgreSQL).  With ``secure_delete`` the file itself keeps no old bytes."""
    engine = getattr(sessions, "kw", {}).get("bind")
    if engine is None or engine.dialect.name != "sqlite":
        return
    raw = engine.raw_connection()  # outside any transaction: a checkpoint cannot run in one
    try:
        cursor = raw.cursor()
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        cursor.close()
    finally:
        raw.close()

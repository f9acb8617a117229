"""Periodic clean-up run with the clock tick: unconfirmed accounts, old codes and counters,
processed mails and the records of sent mails past their retention, and (SQLite) the
write-ahead log, which still holds the raw bytes of mails that have since been replaced by
their masked copies, and the texts of sent mails that have since been dropped."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.domain import limits, tokens
from pbmserv.domain.confirmation import expire_unconfirmed
from pbmserv.store.models import Inbox, InboxStatus, Outbox, OutboxStatus

log = logging.getLogger("pbmserv.domain.housekeeping")


def housekeeping(sessions: sessionmaker[Session], settings: Settings, now: datetime) -> list[str]:
    """Do the clean-up; return lines for the operator."""
    with sessions() as session, session.begin():
        expired = expire_unconfirmed(session, settings, now)
        used = tokens.purge(session, now)
        limits.purge(session, now)
        cutoff = now - timedelta(days=settings.inbox_retention_days)
        result = session.execute(
            delete(Inbox).where(
                Inbox.status.in_([InboxStatus.done, InboxStatus.ignored]),
                Inbox.processed_at < cutoff,
            )
        )
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

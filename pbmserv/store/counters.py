"""Daily counters that several processes bump at once (the caps of pbmserv.domain.limits).

One statement per bump, ``INSERT ... ON CONFLICT DO UPDATE SET count = count + 1 RETURNING
count``: a read, an add in Python and a write lost counts when two workers bumped the same key
(PostgreSQL, several workers: 18-19 of 20 answers counted), and the first two INSERTs of a
key collided on its primary key, failing a mail's attempt.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from pbmserv.store.models import AnswerCount

_TABLE = AnswerCount.__table__


def count_up(session: Session, key: str, day: str) -> int:
    """Add one to ``key``'s counter of ``day``, in the session's transaction; the new count."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    statement = dialect.insert(_TABLE).values(sender=key, day=day, count=1)
    statement = statement.on_conflict_do_update(
        index_elements=[_TABLE.c.sender, _TABLE.c.day],
        set_={"count": _TABLE.c.count + 1},
    ).returning(_TABLE.c.count)
    return int(session.connection().execute(statement).scalar_one())


def count_of(session: Session, key: str, day: str) -> int:
    """``key``'s counter of ``day`` as stored (0 when none)."""
    query = select(_TABLE.c.count).where(_TABLE.c.sender == key, _TABLE.c.day == day)
    return int(session.connection().execute(query).scalar() or 0)

"""Read-only sessions for the pages (:func:`pbmserv.store.db.readonly_sessions`): the
database itself refuses any write.  The schema is the server's business: the pages open a
database that ``pbmserv serve`` already migrated.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session, sessionmaker

from pbmserv.store.db import readonly_sessions

__all__ = ["reading", "readonly_sessions"]


@contextmanager
def reading(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One read-only transaction, always rolled back (a page has nothing to commit)."""
    with factory() as session:
        session.begin()
        try:
            yield session
        finally:
            session.rollback()

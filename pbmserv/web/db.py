"""Read-only sessions for the pages: the database itself refuses any write.

SQLite connections run with ``PRAGMA query_only`` (and a plain deferred BEGIN, so a page never
takes the write lock the worker needs); PostgreSQL transactions are ``READ ONLY``.  The schema
is the server's business: the pages open a database that ``pbmserv serve`` already migrated.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.orm import Session, sessionmaker


def _sqlite_read_only(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy's BEGIN below, not pysqlite's
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA query_only=ON")
    cursor.close()


def readonly_sessions(url: str) -> sessionmaker[Session]:
    """A session factory on ``url`` whose transactions cannot write."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_read_only)
        event.listen(engine, "begin", lambda conn: conn.exec_driver_sql("BEGIN"))
    else:
        engine = create_engine(url, pool_pre_ping=True)
        event.listen(
            engine, "begin", lambda conn: conn.exec_driver_sql("SET TRANSACTION READ ONLY")
        )
    return sessionmaker(engine, expire_on_commit=False, autoflush=False)


@contextmanager
def reading(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One read-only transaction, always rolled back (a page has nothing to commit)."""
    with factory() as session:
        session.begin()
        try:
            yield session
        finally:
            session.rollback()

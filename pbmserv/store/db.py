"""Engines and sessions.  A new database is migrated to the newest schema on first use.

SQLite runs in WAL mode with a busy timeout so a listener and a worker can share one file;
PostgreSQL needs nothing special.  Sessions are passed in, never global.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.files import private_file

HEAD_TABLE = "alembic_version"
SCHEMA_HEAD = "0016"  # the newest migration; a test checks it against Alembic's own view


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=FULL")  # a 250 promises the mail is on disk
    cursor.execute("PRAGMA secure_delete=ON")  # a masked raw mail leaves no password behind
    cursor.close()


def make_engine(url: str) -> Engine:
    """An engine for ``url`` with the per-backend settings pbmserv relies on."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1].partition("?")[0]
        if path and path != ":memory:" and not path.startswith("file:"):
            private_file(Path(path))  # the data directory 0700, the store 0600 (pbmserv.files)
        engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        # let BEGIN take the write lock at once so two writers never deadlock on upgrade
        event.listen(engine, "begin", lambda conn: conn.exec_driver_sql("BEGIN IMMEDIATE"))

        @event.listens_for(engine, "connect")
        def _no_pysqlite_begin(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None

        return engine
    return create_engine(url, pool_pre_ping=True)


def is_current(engine: Engine) -> bool:
    """True when the database carries the newest migration."""
    if not inspect(engine).has_table(HEAD_TABLE):
        return False
    with engine.connect() as conn:
        rows = conn.exec_driver_sql(f"SELECT version_num FROM {HEAD_TABLE}").fetchall()
    return [r[0] for r in rows] == [SCHEMA_HEAD]


@lru_cache(maxsize=8)
def _session_factory(url: str, auto_migrate: bool) -> sessionmaker[Session]:
    engine = make_engine(url)
    if auto_migrate and not is_current(engine):
        from pbmserv.store.migrate import upgrade  # lazy: alembic, only when migrating

        upgrade(engine)
    return sessionmaker(engine, expire_on_commit=False)


def session_factory(url: str, *, auto_migrate: bool = True) -> sessionmaker[Session]:
    """The (cached) session factory for ``url``, migrating a new or old database first."""
    return _session_factory(url, auto_migrate)


def _sqlite_read_only(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy's BEGIN below, not pysqlite's
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA query_only=ON")
    cursor.close()


@lru_cache(maxsize=8)
def readonly_sessions(url: str) -> sessionmaker[Session]:
    """A (cached) session factory on ``url`` whose transactions cannot write.

    SQLite connections run with ``PRAGMA query_only`` and a plain deferred BEGIN, so a reader
    never takes the write lock (in WAL mode it neither waits for writers nor holds them up);
    PostgreSQL transactions are ``READ ONLY``.  The database must exist and be migrated.
    """
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
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A session whose work is committed on success and rolled back on any error."""
    with factory() as session, session.begin():
        yield session


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite store (None: another database, or SQLite in memory)."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # (a port that is no number: ValueError)
        return None  # (opening it says what is wrong with the URL)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database).resolve()

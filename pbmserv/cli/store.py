"""Opening the store from the shell: who may create a new one, and saying so when it is made.

A SQLite store is a file in the data directory, created on first use.  That suits a player's
first ``signup`` and a server's first start, but an operator's look at the queues run from
another working directory (a relative ``data_dir``) made a new empty store and reported
zeros.  So the commands that only look or act on what is there (``status``, ``mail list``,
``tick``, ...) open an existing store only (:class:`NoStore`); the others create it, and the
command that creates the data directory says where it is, then (not at its end: ``serve``
ends days later).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from sqlalchemy import Engine, create_engine, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

from pbmserv.config import Settings
from pbmserv.store.db import HEAD_TABLE, make_engine, session_factory, sqlite_file
from pbmserv.store.lock import holder

# what ``tick`` and ``robot run`` say when another process holds the store's clocks lock
PLAYED_ELSEWHERE = (
    "Another pbmserv process (a running server, or a tick or robot run) plays the clocks and "
    "the robots of this store: nothing done.\n"
)
HOLDERS_SAID = {  # the same, for the holder the lock names (pbmserv.store.lock.holder)
    "serve": "A running server (pbmserv serve)",
    "tick": "A 'pbmserv tick' still running",
    "robot run": "A 'pbmserv robot run' still running",
}


def played_elsewhere(url: str) -> str:
    """What ``tick`` and ``robot run`` say when another process holds the clocks lock of the
    store ``url``, naming it: the one line left the operator to guess whether a server ran or
    a cron ``robot run --until-idle`` had been playing for an hour (and every ``tick`` since
    did nothing).  The generic line where the lock is free again by now."""
    said = HOLDERS_SAID.get(holder(url) or "")
    if said is None:
        return PLAYED_ELSEWHERE
    return f"{said} plays the clocks and the robots of this store: nothing done.\n"


class NoStore(Exception):
    """A command that never creates the store found none: no SQLite file, or a database
    without pbmserv's tables (a PostgreSQL database, or a SQLite file that ``db downgrade
    base`` emptied).  ``path`` is the SQLite file (None: another database), ``database`` the
    store as shown when it exists without the tables."""

    def __init__(self, path: Path | None, database: str = "") -> None:
        if path is None:
            said = (
                f"no pbmserv tables in the database {database} (is database_url right? "
                "`pbmserv db upgrade` creates them)"
            )
        elif database:
            said = (
                f"no pbmserv tables in the store {path} (is the data directory right? "
                "`pbmserv db upgrade` creates them)"
            )
        else:
            said = f"no store at {path} (is the data directory right? `pbmserv db upgrade` creates one)"
        super().__init__(said)
        self.path = path


SECRET_PARAMETER = re.compile(r"pass|secret|token|key", re.I)  # (password=, sslpassword=, ...)


def shown_store(url: str) -> str:
    """The store as the operator may see it in a log or an error: a SQLite file, or the URL
    without its password, whether written ``user:password@`` or ``?password=`` (the journal
    and a pasted error keep it for anyone to read)."""
    path = sqlite_file(url)
    if path is not None:
        return str(path)
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # not a URL: nothing before its last '@' is shown
        return "***@" + url.rpartition("@")[2] if "@" in url else url
    query = {k: "***" if SECRET_PARAMETER.search(k) else v for k, v in parsed.query.items()}
    shown = parsed.set(query=query).render_as_string(hide_password=True)
    return shown.replace("%2A%2A%2A", "***")  # (the query is written URL-encoded)


def require_store(settings: Settings) -> None:
    """:class:`NoStore` unless the store exists: pbmserv's tables in the database or the
    SQLite file (opening it would migrate an empty one)."""
    _ready(settings, create=False, tables=True)


def _ready(settings: Settings, *, create: bool, tables: bool = False) -> bool:
    """Check that the store exists (NoStore) unless ``create``; True when opening it will
    create the data directory.  With ``tables``, the database must hold pbmserv's tables:
    opening it migrates it, and ``status`` on a database_url naming the wrong database
    (another application's, an empty one) filled it with pbmserv's tables, as it did a SQLite
    file that ``db downgrade base`` had just emptied."""
    path = sqlite_file(settings.url)
    if path is not None and not path.exists():
        if not create:
            raise NoStore(path)
        return path.parent == settings.data_dir.resolve() and not path.parent.exists()
    if tables and not create and not _has_tables(settings.url):
        # (an empty SQLite file too: after `db downgrade base`, `status` migrated it back)
        raise NoStore(path, shown_store(settings.url))
    return False


def _has_tables(url: str) -> bool:
    """Whether the database ``url`` holds pbmserv's tables: a revision in its migration
    record (``db downgrade base`` leaves the record's table, empty)."""
    engine = create_engine(url, poolclass=NullPool)
    try:
        if not inspect(engine).has_table(HEAD_TABLE):
            return False
        with engine.connect() as connection:
            return connection.exec_driver_sql(f"SELECT 1 FROM {HEAD_TABLE}").first() is not None
    finally:
        engine.dispose()


def _created(settings: Settings) -> None:
    print(
        f"pbmserv: created the data directory {settings.data_dir.resolve()} (the store and "
        "the mails); --data-dir DIR or PBMSERV_DATA_DIR puts it elsewhere.",
        file=sys.stderr,
        flush=True,
    )


def open_store(settings: Settings, *, create: bool) -> sessionmaker[Session]:
    """The store's sessions (migrated to the newest schema); a missing SQLite store is
    created only with ``create``, else :class:`NoStore`."""
    fresh = _ready(settings, create=create, tables=True)
    factory = session_factory(settings.url)
    if fresh:
        _created(settings)
    return factory


def store_engine(settings: Settings, *, create: bool) -> Engine:
    """An engine on the store, not migrated (for the ``db`` commands); as :func:`open_store`."""
    fresh = _ready(settings, create=create)
    engine = make_engine(settings.url)
    if fresh:
        _created(settings)
    return engine

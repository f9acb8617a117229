"""What the shell says when the configuration or the store cannot be used, and how it exits.

One line that names the problem and what to do, never a traceback, and never exit status 1
(that means "refused by the rules").  The statuses are those of ``sysexits.h``, which
Postfix's pipe reads (deploy/postfix.md): 75 makes it keep the mail and try again later, any
other failure makes it bounce the mail to its sender, who may well be forged.  So
``pbmserv mail inject`` turns every failure but a refusal of the mail itself into 75
(:func:`for_inject`).  A bug (any other exception) still prints its traceback, exit 70.
"""

from __future__ import annotations

import errno
import sys
import traceback

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, OperationalError

from pbmserv.cli.store import NoStore, shown_store
from pbmserv.commands.dispatch import DONE, REFUSED
from pbmserv.config import SettingsError
from pbmserv.store.outage import missing_database

DATAERR = 65  # the store is damaged: restore a backup
SOFTWARE = 70  # a bug in pbmserv: the traceback says where
TEMPFAIL = 75  # the store is unreachable or busy: run the command again later
CONFIG = 78  # the configuration or the installation is wrong: fix it


class Failure(Exception):
    """A failure a command has put in words itself, with its exit status (``serve``'s port)."""

    def __init__(self, status: int, line: str) -> None:
        super().__init__(line)
        self.status = status


# what makes ``serve`` fail for now (75: start it again later); any other OSError of its start
# is the configuration's (78): an address not on this host, a port it may not bind, a directory
# it may not write
TEMPORARY_OS_ERRORS = frozenset({errno.EADDRINUSE, errno.ENOSPC, errno.EMFILE, errno.ENFILE})


def cannot_serve(exc: OSError, where: str) -> Failure:
    """``pbmserv serve`` could not start: 75 for a taken port (the other server may stop, as
    an old one does on a restart) or a full disk, else 78.  It was 1, "refused", which is
    for the rules."""
    status = TEMPFAIL if exc.errno in TEMPORARY_OS_ERRORS else CONFIG
    line = f"cannot serve on {where}: {exc.strerror or exc}"
    if exc.errno == errno.EADDRINUSE:
        line += " (another server runs there?): stop it or choose other ports, then start again"
    return Failure(status, line)


def _backend(url: str) -> str:
    """The kind of database ``url`` names (``postgresql``, ``mysql``), or "" if none."""
    try:
        return make_url(url).get_backend_name() if url else ""
    except (ArgumentError, ValueError):
        return ""


def _parses(url: str) -> bool:
    """Whether ``url`` reads as a database URL (a port that is no number is a ValueError)."""
    try:
        make_url(url)
    except (ArgumentError, ValueError):
        return False
    return True


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return (text.splitlines() or [type(exc).__name__])[0].strip()


def describe(exc: BaseException, url: str) -> tuple[int, str] | None:
    """The exit status and the line to print for a failure of the configuration or of the
    store ``url``; None for anything else (a bug)."""
    where, first = shown_store(url), _first_line(exc)
    if url and url in first:  # (SQLAlchemy repeats a URL it cannot parse, password and all)
        first = first.replace(url, where)
    text = first.lower()
    if isinstance(exc, Failure):
        return exc.status, str(exc)
    if isinstance(exc, SettingsError | NoStore):
        return CONFIG, str(exc)
    if type(exc).__name__ == "UnknownRevision":  # (pbmserv.store.migrate: alembic, lazily)
        return CONFIG, (
            f"{exc}; install that pbmserv again, or restore the backup taken before it "
            "migrated the database"
        )
    if (isinstance(exc, ArgumentError) and ("url" in text or "can't load plugin" in text)) or (
        isinstance(exc, ValueError) and not _parses(url)
    ):
        return CONFIG, (
            f"database_url '{where}' is no database URL pbmserv can use ({first}); e.g. "
            "postgresql+psycopg://pbmserv@/pbmserv, or empty for SQLite in data_dir"
        )
    backend = _backend(url)
    if isinstance(exc, ModuleNotFoundError) and backend not in ("", "sqlite", "postgresql"):
        return CONFIG, (
            f"database_url {where!r} names a database pbmserv does not run on ({first}): use "
            "PostgreSQL (postgresql+psycopg://pbmserv@/pbmserv), or empty for SQLite in data_dir"
        )
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").startswith("psycopg"):
        return CONFIG, (
            f"the PostgreSQL driver is not installed ({first}): install 'pbmserv[postgres]'"
        )
    if isinstance(exc, OperationalError):
        if missing_database(exc):
            return CONFIG, (
                f"the database {where} does not exist ({first}): create it "
                "(deploy/README.md), then run `pbmserv db upgrade`"
            )
        if "authentication failed" in text or ("role" in text and "does not exist" in text):
            return CONFIG, f"the database server refused the login to {where} ({first})"
        if "unable to open database file" in text:
            return CONFIG, (
                f"cannot open the store {where} ({first}): is the data directory right, and "
                "may this user write to it?"
            )
        if "database or disk is full" in text or "no space left on device" in text:
            return TEMPFAIL, (
                f"the store {where} is full ({first}): free space on its disk, then run the "
                "command again"
            )
        if "readonly database" in text or "read-only file system" in text:
            return CONFIG, (
                f"the store {where} cannot be written ({first}): check the permissions of "
                "the file and its directory (the user that runs pbmserv must own them)"
            )
        if "locked" in text or "busy" in text:
            return TEMPFAIL, f"the store {where} is busy ({first}): run the command again"
        return TEMPFAIL, (
            f"the database {where} cannot be reached ({first}): is its server running? "
            "Run the command again once it is"
        )
    if isinstance(exc, DatabaseError) and ("not a database" in text or "malformed" in text):
        return DATAERR, (
            f"the store {where} is damaged or no database ({first}): restore it from a backup "
            "(deploy/README.md, 'Back up and restore')"
        )
    if isinstance(exc, PermissionError):
        return CONFIG, f"{exc}: run the command as the user that owns the data directory"
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return TEMPFAIL, f"{exc}: make room, then run the command again"
    return None


def report(exc: BaseException, url: str) -> int:
    """Print what went wrong (one line; a bug also its traceback); its exit status."""
    described = describe(exc, url)
    if described is None:
        traceback.print_exception(exc, file=sys.stderr)
        described = SOFTWARE, f"internal error (a bug in pbmserv): {_first_line(exc)}"
    status, line = described
    print(f"Error: {line}", file=sys.stderr, flush=True)
    return status


def for_inject(status: int) -> int:
    """``pbmserv mail inject``'s status for Postfix: stored (0) or refused (1, the mail
    itself: bounced), else 75 so that the mail waits in Postfix's queue instead of being
    bounced to a sender that may be forged."""
    return status if status in (DONE, REFUSED) else TEMPFAIL

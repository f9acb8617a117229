"""The operator's ``db`` commands: ``current``, ``upgrade`` and ``downgrade``.

Every other command migrates the database to the newest schema this code knows before it
uses it (:func:`pbmserv.store.db.session_factory`), and so does the server: a downgrade lasts
only while an older pbmserv is installed.  A database without pbmserv's tables (downgraded to
'base') is filled only by the commands that may create a store: the operator's looks
(``status``, ``mail list``, ...) refuse it (:mod:`pbmserv.cli.store`).  What a command says
it did is read back from the database, never echoed from its argument.
"""

from __future__ import annotations

import click
from sqlalchemy import Engine

from pbmserv.cli.store import store_engine
from pbmserv.commands.dispatch import Refused, answer
from pbmserv.config import Settings

AUTO_UPGRADE = (
    "Any other command of this pbmserv (the server too) upgrades it to {head} again: install "
    "the older pbmserv before you run one."
)
EMPTIED = (  # at 'base' the operator's looks refuse the database (pbmserv.cli.store)
    "`pbmserv db upgrade` creates the tables again (at {head}), and so do the server, "
    "'pbmserv mail inject' and the players' commands; 'pbmserv status' and the other "
    "operator commands refuse the database until then."
)


def _after(revision: str) -> str:
    """What happens to a database downgraded to ``revision`` when this pbmserv runs next."""
    from pbmserv.store.migrate import revisions  # lazy: as below

    return (EMPTIED if revision == "base" else AUTO_UPGRADE).format(head=revisions()[-1])


def _settings(ctx: click.Context) -> Settings:
    return ctx.find_root().obj.settings


def _engine(ctx: click.Context, *, create: bool) -> Engine:
    return store_engine(_settings(ctx), create=create)


def _known(revision: str, *also: str) -> str:
    """``revision`` if this code knows it (or it is one of ``also``); else a usage error."""
    from pbmserv.store.migrate import revisions  # lazy: alembic is needed by db commands only

    if revision in (*revisions(), *also):
        return revision
    names = ", ".join(f"'{name}'" for name in also)
    raise click.BadParameter(
        f"there is no revision {revision!r}: this pbmserv knows {revisions()[0]} to "
        f"{revisions()[-1]}" + (f", and {names}" if names else ""),
        param_hint="'REVISION'",
    )


def state(revision: str | None) -> str:
    """What the database's revision means for this code, in a sentence."""
    from pbmserv.store.migrate import head_revision  # lazy: as above

    head = head_revision()
    if revision is None:
        return "The database has no pbmserv tables yet (`pbmserv db upgrade` creates them)."
    if revision == head:
        return f"The database is at {revision}, the newest this pbmserv knows."
    return (
        f"The database is at {revision}; the newest this pbmserv knows is {head} "
        "(`pbmserv db upgrade`; any other command upgrades it too)."
    )


@click.group("db", help="Database administration: current, upgrade, downgrade.")
def db_group() -> None:
    pass


@db_group.command("current", help="The database's revision, and whether it is the newest.")
@click.pass_context
def db_current(ctx: click.Context) -> None:
    from pbmserv.store.migrate import known_revision  # lazy: as above

    answer(ctx, "pbmserv db", state(known_revision(_engine(ctx, create=False))) + "\n")


@db_group.command("upgrade", help="Migrate the database to the newest schema (or REVISION).")
@click.argument("revision", default="head")
@click.pass_context
def db_upgrade(ctx: click.Context, revision: str) -> None:
    from pbmserv.store.migrate import (  # lazy: as above
        current_revision,
        known_revision,
        revisions,
        upgrade,
    )

    goal = revisions()[-1] if _known(revision, "head") == "head" else revision
    engine = _engine(ctx, create=True)
    current = known_revision(engine)
    if current is not None and revisions().index(goal) < revisions().index(current):
        raise Refused(
            f"the database is at {current}, newer than {goal}: an upgrade never goes back "
            f"(`pbmserv db downgrade {goal} --yes` does)"
        )
    upgrade(engine, goal)
    answer(ctx, "pbmserv db", state(current_revision(engine)) + "\n")


@db_group.command(
    "downgrade", help="Migrate the database down to REVISION ('base': no tables); needs --yes."
)
@click.argument("revision")
@click.option("--yes", is_flag=True, help="Go ahead: it drops what the later migrations added.")
@click.pass_context
def db_downgrade(ctx: click.Context, revision: str, yes: bool) -> None:
    from pbmserv.store.migrate import (  # lazy: as above
        current_revision,
        downgrade,
        known_revision,
        revisions,
    )

    _known(revision, "base")
    engine = _engine(ctx, create=False)
    current = known_revision(engine)
    goal = revisions().index(revision) if revision != "base" else -1
    if current is None or goal >= revisions().index(current):
        raise Refused(
            f"the database is at {current or 'base (no pbmserv tables)'}, not newer than "
            f"{revision}: a downgrade only goes back (`pbmserv db upgrade` goes forward)"
        )
    undone = revisions()[goal + 1 : revisions().index(current) + 1]
    if not yes:
        raise Refused(
            f"a downgrade from {current} to {revision} undoes migration"
            f"{'s' if len(undone) > 1 else ''} {', '.join(undone)} and drops what "
            f"{'they' if len(undone) > 1 else 'it'} added"
            + (" (to 'base': every table, and all the data)" if revision == "base" else "")
            + ": take a backup, then give --yes. "
            + _after(revision)
        )
    downgrade(engine, revision)
    reached = current_revision(engine)
    shown = reached or "base (no pbmserv tables)"
    answer(ctx, "pbmserv db", f"The database is at {shown}. {_after(reached or 'base')}\n")

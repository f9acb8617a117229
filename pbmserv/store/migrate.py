"""Alembic, driven from Python: the migrations ship inside the package (``migrations/``).

A database that newer code migrated carries a revision this code does not know: Alembic can
then only say "Can't locate revision", so :func:`upgrade` and :func:`downgrade` check first
and raise :class:`UnknownRevision`, which names both revisions.
"""

from __future__ import annotations

from functools import lru_cache

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from pbmserv.resources import migrations_dir


class UnknownRevision(RuntimeError):
    """The database is at a revision this code does not know: newer code migrated it."""

    def __init__(self, revision: str) -> None:
        super().__init__(
            f"the database is at revision {revision}, which this pbmserv does not know (its "
            f"newest is {head_revision()}): a newer pbmserv migrated it"
        )
        self.revision = revision


def alembic_config(engine: Engine | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if engine is not None:
        config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
        config.attributes["engine"] = engine
    return config


@lru_cache(maxsize=1)
def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


@lru_cache(maxsize=1)
def revisions() -> tuple[str, ...]:
    """Every revision this code knows, oldest first."""
    script = ScriptDirectory.from_config(alembic_config())
    return tuple(reversed([item.revision for item in script.walk_revisions()]))


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at; None when it has no pbmserv tables yet."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def known_revision(engine: Engine) -> str | None:
    """The revision the database is at (None: no schema yet); UnknownRevision if newer code
    migrated it."""
    current = current_revision(engine)
    if current is not None and current not in revisions():
        raise UnknownRevision(current)
    return current


def upgrade(engine: Engine, revision: str = "head") -> None:
    known_revision(engine)
    command.upgrade(alembic_config(engine), revision)


def downgrade(engine: Engine, revision: str) -> None:
    known_revision(engine)
    command.downgrade(alembic_config(engine), revision)

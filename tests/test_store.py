"""The schema comes from the Alembic migrations only; every migration walks down and up."""

from __future__ import annotations

from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from pbmserv.store import db
from pbmserv.store.migrate import alembic_config, downgrade, head_revision, upgrade
from pbmserv.store.models import Base


def test_schema_head_constant_matches_alembic():
    assert head_revision() == db.SCHEMA_HEAD


def test_every_migration_walks_down_and_up(database_url):
    engine = db.make_engine(database_url)
    script = ScriptDirectory.from_config(alembic_config())
    revisions = [r.revision for r in script.walk_revisions()]  # newest first
    upgrade(engine)
    assert db.is_current(engine)
    for revision in revisions:
        downgrade(engine, "-1")
        upgrade(engine, revision)
        downgrade(engine, "-1")
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    upgrade(engine)
    assert db.is_current(engine)
    engine.dispose()


def test_migrated_schema_matches_the_models(database_url):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    engine = db.make_engine(database_url)
    upgrade(engine)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []
    engine.dispose()


def test_new_database_is_migrated_on_first_use(tmp_path):
    url = f"sqlite:///{tmp_path / 'fresh' / 'x.sqlite3'}"
    factory = db.session_factory(url)
    engine = factory.kw["bind"]
    assert db.is_current(engine)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"

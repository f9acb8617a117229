"""The schema comes from the Alembic migrations only; every migration walks down and up."""

from __future__ import annotations

from datetime import UTC, datetime

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


def test_closed_value_sets_are_constraints_in_the_database(database_url):
    """An enum column refuses a value outside its set even when written around the models."""
    import pytest
    from sqlalchemy import text
    from sqlalchemy.exc import IntegrityError

    engine = db.make_engine(database_url)
    upgrade(engine)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO tournaments (name, game, params, format, double, status,"
                " current_round, created, created_by) VALUES ('ok', 'polis', '{}', 'swiss',"
                " false, 'open', 0, '2026-11-01 12:00:00+00:00', 'operator')"
            )
        )
    for column, value in (("format", "ladder"), ("status", "paused")):
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(text(f"UPDATE tournaments SET {column} = '{value}'"))
    with pytest.raises(IntegrityError), engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO inbox (dedup_key, raw, mail_from, rcpt_to, received, status,"
                " attempts) VALUES ('k', :raw, '', '', :at, 'lost', 0)"
            ),
            {"raw": b"x", "at": datetime(2026, 11, 1, tzinfo=UTC)},
        )
    engine.dispose()

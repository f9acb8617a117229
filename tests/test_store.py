"""The schema comes from the Alembic migrations only; every migration walks down and up."""

from __future__ import annotations

import os
import stat
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


def test_a_new_sqlite_store_and_its_wal_are_the_owners_alone(tmp_path):
    """The store holds password hashes and addresses; `make run` has the user's umask."""
    old = os.umask(0o022)
    try:
        engine = db.make_engine(f"sqlite:///{tmp_path / 'data' / 'pbmserv.sqlite3'}")
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE t (a)")
            files = {  # while it is open: with its -wal and -shm
                f.name: stat.S_IMODE(f.stat().st_mode) for f in (tmp_path / "data").iterdir()
            }
    finally:
        os.umask(old)
        engine.dispose()
    names = ["pbmserv.sqlite3", "pbmserv.sqlite3-shm", "pbmserv.sqlite3-wal"]
    assert files == dict.fromkeys(names, 0o600)
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700


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


def test_a_mail_stored_before_0010_still_catches_its_repeats_from_its_sender(database_url):
    """Before 0010 a mail's key was its Message-ID alone.  Such a row stays a repeat of a later
    mail with its Message-ID from the same envelope sender (Postfix re-delivering a mail whose
    250 it lost over the upgrade), and of nobody else's; the downgrade writes the old keys
    back where no older row holds them."""
    from sqlalchemy import text
    from sqlalchemy.orm import sessionmaker

    from pbmserv.mail import inbox

    engine = db.make_engine(database_url)
    upgrade(engine, "0009")
    at = datetime(2026, 11, 1, tzinfo=UTC)
    mail = b"From: alice@example.org\r\nMessage-ID: <m1@alice.example>\r\nSubject: help\r\n\r\n"
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO inbox (dedup_key, raw, mail_from, rcpt_to, received, status,"
                " attempts) VALUES ('mid:<m1@alice.example>', :raw, 'alice@example.org', '',"
                " :at, 'done', 1)"
            ),
            {"raw": mail, "at": at},
        )
    upgrade(engine)
    sessions = sessionmaker(engine)
    again = inbox.store(sessions, mail, "alice@example.org", [], at)
    forged = inbox.store(sessions, mail, "mallory@evil.example", [], at)
    other = mail.replace(b"<m1@", b"<m2@")
    new = inbox.store(sessions, other, "alice@example.org", [], at)
    assert (again.id, again.new, forged.new, new.new) == (1, False, True, True)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, dedup_key, repeats FROM inbox ORDER BY id")).all()
    assert [(r.id, r.repeats) for r in rows] == [(1, 1), (forged.id, 0), (new.id, 0)]
    assert rows[1].dedup_key == inbox.dedup_key(mail, "mallory@evil.example")
    downgrade(engine, "0009")
    with engine.connect() as conn:
        keys = conn.execute(text("SELECT dedup_key FROM inbox ORDER BY id")).scalars().all()
    assert keys == ["mid:<m1@alice.example>", rows[1].dedup_key, "mid:<m2@alice.example>"]
    engine.dispose()


def test_every_migration_keeps_the_games_stored(database_url):
    """A store made by the first release keeps every user, board, seat, move and comment
    through all the migrations (SQLite's batch mode recreates tables: with foreign keys on,
    dropping the old ``boards`` used to delete every seat and move with it)."""
    from sqlalchemy import text

    engine = db.make_engine(database_url)
    upgrade(engine, "0001")
    at = "2026-01-01 12:00:00"
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO users (id, userid, password_hash, created, accepts_challenges) "
                "VALUES (1, 'alice', 'h', :at, true), (2, 'bob', 'h', :at, true)"
            ),
            {"at": at},
        )
        conn.execute(
            text(
                "INSERT INTO boards (id, game, number, params, options, status, created, "
                "last_move_at, cache_ply, version) VALUES "
                "(1, 'polis', 101, '{}', '{}', 'active', :at, :at, 0, 1)"
            ),
            {"at": at},
        )
        conn.execute(
            text(
                'INSERT INTO seats (id, board_id, "index", user_id, queued_resign) VALUES '
                "(1, 1, 0, 1, false), (2, 1, 1, 2, false)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO moves (board_id, ply, seat, text, auto, at, source) VALUES "
                "(1, 1, 0, 'a7-a6', false, :at, 'mail'), (1, 2, 1, 'a2-a3', false, :at, 'mail')"
            ),
            {"at": at},
        )
        conn.execute(
            text(
                "INSERT INTO comments (board_id, ply, user_id, text, at) VALUES "
                "(1, 2, 2, 'Your move.', :at)"
            ),
            {"at": at},
        )
    upgrade(engine)
    with engine.connect() as conn:
        counts = {
            table: conn.execute(text(f"SELECT count(*) FROM {table}")).scalar()
            for table in ("users", "boards", "seats", "moves", "comments")
        }
        to_move = conn.execute(text("SELECT to_move_id FROM boards")).scalar()
    assert counts == {"users": 2, "boards": 1, "seats": 2, "moves": 2, "comments": 1}
    assert to_move == 1  # 0008 replayed the two moves: alice (blue) is to move again
    engine.dispose()


def test_workers_bumping_one_counter_at_once_each_count(sessions):
    """The caps' daily counters are bumped by every worker process: read, add one and write
    back lost counts on PostgreSQL (18-19 of 20 answers counted with 3 workers), and two first
    INSERTs of a key collided on its primary key.  Four threads, each its own transactions."""
    import threading

    from pbmserv.domain import limits

    now = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def bump_many() -> None:
        start.wait()
        try:
            for _ in range(25):
                with sessions() as session, session.begin():
                    limits.bump(session, "answers:Alice@Example.org", now)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=bump_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with sessions() as session:
        assert limits.today(session, "answers:alice@example.org", now) == 100
        assert limits.today(session, "answers:bob@example.org", now) == 0


def test_a_mail_stored_before_0014_is_dated_by_0016_and_no_key_is_kept_for_ever(database_url):
    """0014 reads a mail's Date when it is stored; a mail stored before had none known, and its
    key was kept for ever once it was deleted.  Now that a mail without a Date runs nothing,
    0016 reads the Date of those mails from their bytes (one still waiting runs, one processed
    keeps its key as long as a replay would run), and a key kept with no Date is kept
    ``stale_mail_days`` from the first clean-up, then goes.  The downgrades keep the mails."""
    from datetime import timedelta

    from sqlalchemy import text
    from sqlalchemy.orm import sessionmaker

    from pbmserv.config import Settings
    from pbmserv.domain.housekeeping import housekeeping
    from pbmserv.mail import inbox

    engine = db.make_engine(database_url)
    upgrade(engine, "0013")
    at = datetime(2026, 11, 1, tzinfo=UTC)
    mail = (
        b"From: alice@example.org\r\nMessage-ID: <m1@alice.example>\r\n"
        b"Date: Sun, 01 Nov 2026 12:00:00 +0000\r\nSubject: help\r\n\r\n"
    )
    undated = mail.replace(b"<m1@", b"<m0@").replace(b"Date: ", b"X-Date: ")
    key = inbox.dedup_key(mail, "alice@example.org")
    with engine.begin() as conn:
        for stored_key, raw, status in (
            (key, mail, "done"),
            ("sha256:waiting", mail, "new"),
            ("sha256:undated", undated, "done"),
        ):
            conn.execute(
                text(
                    "INSERT INTO inbox (dedup_key, raw, mail_from, rcpt_to, received, status,"
                    " attempts, processed_at) VALUES (:key, :raw, 'alice@example.org', '', :at,"
                    " :status, 1, :at)"
                ),
                {"key": stored_key, "raw": raw, "at": at, "status": status},
            )
    upgrade(engine, "0015")
    with engine.begin() as conn:  # a key kept by 0014's code, with no Date
        conn.execute(text("INSERT INTO inbox_tombstones (dedup_key) VALUES ('sha256:old')"))
    upgrade(engine)
    with engine.connect() as conn:
        dates = conn.execute(text("SELECT dated FROM inbox ORDER BY id")).scalars().all()
        assert [str(d)[:19] if d else d for d in dates] == [
            "2026-11-01 12:00:00",
            "2026-11-01 12:00:00",
            None,
        ]
    sessions = sessionmaker(engine)
    settings = Settings(database_url=database_url)  # 30 days kept, 14 days' Date
    housekeeping(sessions, settings, at + timedelta(days=20))  # (nothing deleted yet)
    housekeeping(sessions, settings, at + timedelta(days=30, hours=13))
    with engine.connect() as conn:
        assert conn.execute(text("SELECT id FROM inbox")).scalars().all() == [2]
        kept = conn.execute(text("SELECT dedup_key FROM inbox_tombstones")).scalars().all()
        assert kept == ["sha256:old"]  # the mails' Date is older than 14 days: no key needed
    housekeeping(sessions, settings, at + timedelta(days=34, hours=1))
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM inbox_tombstones")).scalar() == 0
    downgrade(engine, "0013")
    tables = set(inspect(engine).get_table_names())
    assert "inbox_tombstones" not in tables
    assert "dated" not in {c["name"] for c in inspect(engine).get_columns("inbox")}
    with engine.connect() as conn:
        assert conn.execute(text("SELECT id FROM inbox ORDER BY id")).scalars().all() == [2]
    engine.dispose()


def test_hashes_stored_before_0015_are_not_marked_composed(database_url):
    """0015 marks the hashes made of the password composed (NFC), checked once; a hash stored
    before may be of the password as typed: it stays unmarked (checked both ways)."""
    from sqlalchemy import text

    engine = db.make_engine(database_url)
    upgrade(engine, "0014")
    at = datetime(2026, 11, 1, tzinfo=UTC)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO users (userid, password_hash, created, accepts_challenges, seeking,"
                " vacation_used) VALUES ('alice', '$argon2id$old', :at, true, 0, 0)"
            ),
            {"at": at},
        )
    upgrade(engine)
    with engine.begin() as conn:
        assert not conn.execute(text("SELECT password_composed FROM users")).scalar_one()
        conn.execute(text("UPDATE users SET password_composed = true"))
    downgrade(engine, "0014")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT password_hash FROM users")).scalar_one() == "$argon2id$old"
    engine.dispose()

"""Fixtures: a real store (SQLite file, or PostgreSQL when PBMSERV_TEST_DATABASE_URL is set),
cheap password hashing, a clock the tests move, and the dispatcher as a function."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jinja2
import pytest

sys.path.insert(0, str(Path(__file__).parent))

import nim  # noqa: E402

from pbmserv import games  # noqa: E402
from pbmserv.render.templates import environment  # noqa: E402

games._load()
if "nim" not in games._REGISTRY:
    games.register(nim.GAME)
_env = environment()
_env.loader = jinja2.ChoiceLoader(
    [_env.loader, jinja2.DictLoader({"boards/nim.txt.j2": nim.TEMPLATE, "help/nim.txt": "Nim.\n"})]
)

from pbmserv.commands import Request, run, split  # noqa: E402
from pbmserv.config import Settings  # noqa: E402

PG_URL = os.environ.get("PBMSERV_TEST_DATABASE_URL", "")


def _reset_postgres(url: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    if PG_URL:
        _reset_postgres(PG_URL)
        from pbmserv.store import db

        db._session_factory.cache_clear()
        return PG_URL
    return f"sqlite:///{tmp_path / 'store.sqlite3'}"


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    return Settings(
        data_dir=tmp_path,
        database_url=database_url,
        argon2_time_cost=1,
        argon2_memory_kib=8,
        server_address="pbmserv@example.org",
        accept_recipients=["pbmserv@example.org"],
        mail_domain="example.org",
    )


@pytest.fixture
def sessions(settings: Settings):
    from pbmserv.store.db import session_factory

    return session_factory(settings.url)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)

    def advance(self, **kwargs: float) -> datetime:
        self.now += timedelta(**kwargs)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


class Shell:
    """Runs command lines through the dispatcher as the shell (or mail) channel would."""

    def __init__(self, settings: Settings, sessions, clock: Clock) -> None:
        self.settings, self.sessions, self.clock = settings, sessions, clock

    def __call__(
        self, line: str, *, channel: str = "shell", sender: str | None = None, comment: str = ""
    ):
        from pbmserv.commands import build_commands

        req = Request(
            settings=self.settings,
            sessions=self.sessions,
            channel=channel,
            sender=sender,
            now=self.clock.now,
            comment=comment,
            source="test",
        )
        answers = run(build_commands(), split(line), req)
        return answers[0] if len(answers) == 1 else answers

    def ok(self, line: str, **kwargs):
        result = self(line, **kwargs)
        assert result.status == 0, result.body
        return result

    def outbox(self):
        from sqlalchemy import select

        from pbmserv.store.models import Outbox

        with self.sessions() as s:
            return list(s.scalars(select(Outbox).order_by(Outbox.id)))

    def signup(self, *userids: str) -> None:
        for u in userids:
            self.ok(f"signup {u} pw-{u} {u}@example.org")


@pytest.fixture
def shell(settings, sessions, clock) -> Shell:
    return Shell(settings, sessions, clock)


def pytest_collection_modifyitems(config, items):
    """Tests that touch the store are marked ``store``: `make test` runs them again on
    PostgreSQL when PBMSERV_TEST_DATABASE_URL is set."""
    for item in items:
        if "database_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.store)

"""Fixtures: a real store (SQLite file, or PostgreSQL when PBMSERV_TEST_DATABASE_URL is set),
cheap password hashing, a clock the tests move, the dispatcher as a function and the operator's
commands (`pbmserv ARGS`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jinja2
import pytest
from sqlalchemy.pool import NullPool

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

collect_ignore = ["faketime"]  # a start-up hook for faketime runs, not a test module (see it)

PG_URL = os.environ.get("PBMSERV_TEST_DATABASE_URL", "")
PG_PREFIX = "pbmserv_test_"  # databases a test run made for itself (.ci/run names them so)
BACKENDS = ["sqlite", "postgresql"] if PG_URL else ["sqlite"]


def _admin_engine(url: str):  # type: ignore[no-untyped-def]
    from sqlalchemy import create_engine

    return create_engine(url, isolation_level="AUTOCOMMIT", poolclass=NullPool)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The PostgreSQL database of this test process: the run's own database (created by
    .ci/run, named ``pbmserv_test_...``), or under pytest-xdist one more per worker, created
    here and dropped at the end.  Any other database is refused: the tests empty it."""
    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    base = make_url(PG_URL)
    if not (base.database or "").startswith(PG_PREFIX):
        pytest.exit(
            f"PBMSERV_TEST_DATABASE_URL names the database {base.database!r}: the tests empty "
            f"it, so they only use a database made for the run, named {PG_PREFIX}... "
            "(.ci/run creates one)",
            returncode=2,
        )
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        yield PG_URL
        return
    name = f"{base.database}_{worker}"
    url = base.set(database=name).render_as_string(hide_password=False)
    admin = _admin_engine(PG_URL)
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield url
    finally:
        from pbmserv.store import db

        db._session_factory.cache_clear()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _reset_postgres(url: str) -> None:
    """Empty this process's own test database before each test."""
    from sqlalchemy import text

    engine = _admin_engine(url)
    with engine.connect() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Every store test runs on a SQLite file, and on PostgreSQL too when the run has one."""
    if request.param == "postgresql":
        url = request.getfixturevalue("postgres_url")
        _reset_postgres(url)
        from pbmserv.store import db

        db._session_factory.cache_clear()
        return url
    return f"sqlite:///{tmp_path / 'store.sqlite3'}"


@pytest.fixture
def settings(tmp_path: Path, database_url: str, clock: Clock) -> Settings:
    """Test settings; ``now`` makes every server built from them (in this process or started
    as a subprocess with a config written from them) run on the test's calendar."""
    return Settings(
        data_dir=tmp_path,
        database_url=database_url,
        argon2_time_cost=1,
        argon2_memory_kib=8,
        server_address="pbmserv@example.org",
        accept_recipients=["pbmserv@example.org"],
        mail_domain="example.org",
        now=clock.now.isoformat(),
        web_port=0,  # any free port when a test starts the server
        web_base_url="https://games.example.org",
    )


@pytest.fixture
def sessions(settings: Settings):
    from pbmserv.render.links import attach
    from pbmserv.store.db import session_factory

    factory = session_factory(settings.url)
    attach(factory, settings)
    return factory


TEST_START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)  # the calendar every test starts on


class Clock:
    def __init__(self) -> None:
        self.now = TEST_START

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

    def mover(self, game: str, number: int = 101) -> str | None:
        """The userid of who must act now on a board (None once it is over)."""
        from sqlalchemy import select

        from pbmserv.domain import boards
        from pbmserv.store.models import Board

        with self.sessions() as s:
            board = s.scalar(select(Board).where(Board.game == game, Board.number == number))
            user = boards.user_to_move(board, boards.position_of(board))
            return None if user is None else user.userid

    def play(self, game: str, texts: list[str], number: int = 101):
        """Play the moves ``texts``, each by whoever must act: the answer to the last one."""
        last = None
        for text in texts:
            mover = self.mover(game, number)
            last = self.ok(f"{game} move {number} {mover} pw-{mover} {text}")
        return last


@pytest.fixture
def shell(settings, sessions, clock) -> Shell:
    return Shell(settings, sessions, clock)


@pytest.fixture
def operator(settings, monkeypatch, capsys):
    """``pbmserv ARGS`` run through the shell's entry point on the test's store and calendar;
    returns (exit status, stdout, stderr)."""
    from pbmserv.cli.main import main

    for name in ("database_url", "now", "server_address", "mail_domain"):
        monkeypatch.setenv(f"PBMSERV_{name.upper()}", str(getattr(settings, name)))
    monkeypatch.setenv("PBMSERV_ACCEPT_RECIPIENTS", ",".join(settings.accept_recipients))
    monkeypatch.setenv("PBMSERV_ARGON2_TIME_COST", "1")
    monkeypatch.setenv("PBMSERV_ARGON2_MEMORY_KIB", "8")

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        status = main(["--data-dir", str(settings.data_dir), *args])
        out = capsys.readouterr()
        return status, out.out, out.err

    return run


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to run where timed waits would hang instead of failing a test."""
    if "faketime" in os.environ.get("LD_PRELOAD", "") and not os.environ.get(
        "FAKETIME_DONT_FAKE_MONOTONIC"
    ):
        raise pytest.UsageError(
            "libfaketime shifts the monotonic clock too, and timed waits then hang: run the "
            "suite as `faketime -f '+120d' make test` (the Makefile moves only the calendar)"
        )


def pytest_collection_modifyitems(config, items):
    """Tests that touch the store are marked ``store`` (``-m store`` runs just those; they run
    on PostgreSQL as well when PBMSERV_TEST_DATABASE_URL is set).  The ``slow`` tests (real
    servers and whole robot games, up to a minute each) run first, so that under pytest-xdist
    they overlap with the many short ones instead of trailing at the end."""
    for item in items:
        if "database_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.store)
    longest = ("test_stress.py", "test_robot_turns.py", "test_crash.py")
    items.sort(
        key=lambda item: (item.get_closest_marker("slow") is None, item.path.name not in longest)
    )  # stable: otherwise in collection order

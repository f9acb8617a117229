"""A configuration or a store the shell cannot use: one line that names the problem and what
to do, never a traceback, and an exit status of its own (1 means "refused by the rules").
``pbmserv mail inject``, Postfix's pipe, exits 75 instead: Postfix keeps the mail and tries
again, where any other status bounced it to a sender that may be forged."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import PG_URL, TEST_START, _reset_postgres
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from pbmserv.cli.failures import CONFIG, DATAERR, SOFTWARE, TEMPFAIL

SIGNUP = (
    b"From: alice@example.org\r\nTo: pbmserv@localhost\r\nMessage-ID: <m1@example.org>\r\n"
    b"Date: Sun, 01 Nov 2026 12:00:00 +0000\r\nSubject: signup alice secret1\r\n\r\n"
)


@pytest.fixture
def shell(tmp_path, monkeypatch, capsys):
    """``pbmserv ARGS`` in this process with the data directory ``tmp_path/data``; returns
    (exit status, stderr)."""
    from pbmserv.cli.main import main

    monkeypatch.delenv("PBMSERV_DATABASE_URL", raising=False)
    monkeypatch.delenv("PBMSERV_CONFIG", raising=False)
    monkeypatch.setenv("PBMSERV_NOW", TEST_START.isoformat())
    monkeypatch.setenv("PBMSERV_DATA_DIR", str(tmp_path / "data"))

    def run(*args: str) -> tuple[int, str]:
        capsys.readouterr()
        status = main(list(args))
        return status, capsys.readouterr().err

    return run


def one_line(err: str) -> str:
    """The error, checked to be one line and no traceback."""
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    return lines[0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[pbmserv\nlisten_port = 1\n", "is not valid TOML: Expected ']'"),
        (b'[pbmserv]\nserver_name = "caf\xe9"\n', "is not UTF-8 text (line 2)"),
        (b"[pbmserv]\nlisten_port = 'x'\n", "listen_port ("),
        (None, "cannot read the config file"),
    ],
)
def test_a_config_file_that_cannot_be_used(shell, tmp_path, content, message):
    config = tmp_path / "pbmserv.toml"
    if content is not None:
        config.write_bytes(content)
    status, err = shell("--config", str(config), "status")
    assert status == CONFIG and message in one_line(err) and str(config) in err


def store(tmp_path: Path) -> Path:
    """A store with an account in it, its write-ahead log folded in."""
    data = tmp_path / "data"
    from pbmserv.cli.main import main

    assert main(["signup", "alice", "secret1", "alice@example.org"]) == 0
    path = data / "pbmserv.sqlite3"
    from pbmserv.store import db  # the next command opens it afresh, as a new process would

    db.session_factory(f"sqlite:///{path.resolve()}").kw["bind"].dispose()
    db._session_factory.cache_clear()
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def test_a_damaged_store(shell, tmp_path):
    path = store(tmp_path)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])  # truncated
    status, err = shell("status")
    assert status == DATAERR
    assert "damaged or no database (database disk image is malformed)" in one_line(err)
    assert "restore it from a backup" in err
    path.write_bytes(os.urandom(4096))
    status, err = shell("polis", "show", "101")
    assert status == DATAERR and "(file is not a database)" in one_line(err)


def test_a_store_newer_than_the_code(shell, tmp_path):
    path = store(tmp_path)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '0999'")
    for command in (["status"], ["polis", "show", "101"], ["db", "upgrade"], ["db", "current"]):
        status, err = shell(*command)
        assert status == CONFIG, command
        assert "the database is at revision 0999, which this pbmserv does not know" in (
            one_line(err)
        )
        assert "install that pbmserv again, or restore the backup" in err


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_database_url_that_cannot_be_used(shell, monkeypatch):
    monkeypatch.setenv("PBMSERV_DATABASE_URL", "nonsense")
    status, err = shell("status")
    assert status == CONFIG and "database_url 'nonsense' is no database URL" in one_line(err)
    url = f"postgresql+psycopg://pbmserv:secret@127.0.0.1:{closed_port()}/pbmserv"
    monkeypatch.setenv("PBMSERV_DATABASE_URL", url)
    status, err = shell("status")
    assert status == TEMPFAIL and "cannot be reached" in one_line(err)
    assert "is its server running?" in err and "secret" not in err
    monkeypatch.setenv("PBMSERV_DATABASE_URL", "mysql://pbmserv:secret@127.0.0.1/pbmserv")
    status, err = shell("status")  # a database pbmserv does not run on: a bug's 70 before
    assert status == CONFIG and "names a database pbmserv does not run on" in one_line(err)
    assert "No module named" in err and "secret" not in err
    url = f"postgresql+psycopg://pbmserv@127.0.0.1:{closed_port()}/pbmserv?password=secret"
    monkeypatch.setenv("PBMSERV_DATABASE_URL", url)  # the password as libpq's parameter
    status, err = shell("status")
    assert status == TEMPFAIL and "password=***" in err and "secret" not in err
    for mistyped in (
        "postgres ql://pbmserv:secret@host/pbmserv",
        "postgresql+psycopg//pbmserv:secret@host/pbmserv",  # (no '://')
        "pbmserv:secret@host",
        "postgresql+psycopg://pbmserv:secret@host:abc/pbmserv",  # a port that is no number
    ):
        monkeypatch.setenv("PBMSERV_DATABASE_URL", mistyped)
        status, err = shell("status")
        assert status == CONFIG and "is no database URL" in one_line(err), err
        assert "secret" not in err and "Traceback" not in err, err


@pytest.mark.skipif(
    not os.environ.get("PBMSERV_TEST_DATABASE_URL"), reason="no PostgreSQL server for the run"
)
def test_a_postgresql_database_that_does_not_exist(shell, monkeypatch):
    url = make_url(os.environ["PBMSERV_TEST_DATABASE_URL"])
    missing = url.set(database="pbmserv_test_ops_never_created")
    monkeypatch.setenv("PBMSERV_DATABASE_URL", missing.render_as_string(hide_password=False))
    status, err = shell("status")
    assert status == CONFIG
    assert 'database "pbmserv_test_ops_never_created" does not exist' in one_line(err)
    assert "create it (deploy/README.md), then run `pbmserv db upgrade`" in err


def test_inject_defers_whatever_is_not_the_mails_fault(shell, tmp_path, monkeypatch):
    """Postfix bounces a mail on any status but 75 (EX_TEMPFAIL), to a sender that may be
    forged; a store that is down, a broken config or a bug must keep the mail in its queue."""
    from pbmserv.mail import inbox

    mail = tmp_path / "mail.eml"
    mail.write_bytes(SIGNUP)
    url = f"postgresql+psycopg://pbmserv@127.0.0.1:{closed_port()}/pbmserv"
    monkeypatch.setenv("PBMSERV_DATABASE_URL", url)
    status, err = shell("mail", "inject", str(mail))
    assert status == TEMPFAIL and "cannot be reached" in one_line(err)
    monkeypatch.delenv("PBMSERV_DATABASE_URL")
    monkeypatch.setenv("PBMSERV_LISTEN_PORT", "many")
    assert shell("mail", "inject", str(mail))[0] == TEMPFAIL
    assert shell("status")[0] == CONFIG
    monkeypatch.delenv("PBMSERV_LISTEN_PORT")

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(inbox, "store", broken)
    status, err = shell("mail", "inject", str(mail))
    assert status == TEMPFAIL
    assert err.rstrip().endswith("Error: internal error (a bug in pbmserv): disk on fire")
    assert "Traceback" in err  # a bug says where it is
    too_big = tmp_path / "big.eml"
    too_big.write_bytes(SIGNUP + b"x" * 1_100_000)  # (over the headers Postfix adds too)
    assert shell("mail", "inject", str(too_big))[0] == 1  # the mail's own fault: bounced


def test_a_bug_elsewhere_exits_70_with_its_traceback(shell, monkeypatch):
    from pbmserv.cli import operator

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(operator.out, "list_lines", broken)
    assert shell("db", "upgrade")[0] == 0
    status, err = shell("mail", "outbox", "list")
    assert status == SOFTWARE and "Traceback" in err
    assert err.rstrip().endswith("Error: internal error (a bug in pbmserv): a bug")


def test_commands_that_only_look_never_create_a_store(shell, tmp_path):
    """Run from the wrong directory (a relative data_dir), ``status`` made a new empty store
    and reported zeros.  The commands that look at or act on what is there refuse."""
    data = tmp_path / "data"
    looks = [
        ["status"],
        ["tick"],
        ["mail", "list"],
        ["mail", "show", "1"],
        ["mail", "retry", "1"],
        ["mail", "outbox", "list"],
        ["mail", "outbox", "show", "1"],
        ["mail", "outbox", "retry", "1"],
        ["robot", "list"],
        ["robot", "run", "--until-idle"],
        ["db", "current"],
        ["db", "downgrade", "base", "--yes"],
    ]
    for command in looks:
        status, err = shell(*command)
        assert status == CONFIG, command
        assert one_line(err) == (
            f"Error: no store at {data.resolve()}/pbmserv.sqlite3 (is the data directory "
            "right? `pbmserv db upgrade` creates one)"
        )
    assert not data.exists()
    status, err = shell("db", "upgrade")
    assert status == 0 and f"created the data directory {data.resolve()}" in err
    assert shell("status") == (0, "")


def test_commands_that_only_look_never_fill_a_store_downgraded_to_base(shell, tmp_path, capsys):
    """After ``db downgrade base`` on SQLite, ``status`` migrated the emptied file back to the
    newest schema (and read zeros), where on PostgreSQL it refuses a database without
    pbmserv's tables.  It refuses the file alike, and the downgrade says which commands fill
    it again: a player's does."""
    from pbmserv.cli.main import main
    from pbmserv.store import db
    from pbmserv.store.migrate import revisions

    path = store(tmp_path)
    capsys.readouterr()
    assert main(["db", "downgrade", "base", "--yes"]) == 0
    assert capsys.readouterr().out == (
        "The database is at base (no pbmserv tables). `pbmserv db upgrade` creates the tables "
        f"again (at {revisions()[-1]}), and so do the server, 'pbmserv mail inject' and the "
        "players' commands; 'pbmserv status' and the other operator commands refuse the "
        "database until then.\n"
    )
    db._session_factory.cache_clear()  # (each command is a process of its own)
    looks = [["status"], ["tick"], ["mail", "list"], ["mail", "show", "1"],
             ["mail", "outbox", "list"], ["mail", "outbox", "retry", "1"], ["robot", "list"],
             ["robot", "run", "--until-idle"]]  # fmt: skip
    for command in looks:
        status, err = shell(*command)
        assert status == CONFIG, command
        assert one_line(err) == (
            f"Error: no pbmserv tables in the store {path} (is the data directory right? "
            "`pbmserv db upgrade` creates them)"
        )
    with sqlite3.connect(path) as connection:  # (alembic keeps its record's table, empty)
        names = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        assert names == [("alembic_version",)], names
        assert connection.execute("SELECT * FROM alembic_version").fetchall() == []
    status, err = shell("signup", "bob", "secret2", "bob@example.org")
    assert status == 0 and "created the data directory" not in err
    assert shell("status") == (0, "")


@pytest.mark.skipif(not PG_URL, reason="needs PBMSERV_TEST_DATABASE_URL (PostgreSQL)")
def test_commands_that_only_look_never_fill_an_empty_database(
    postgres_url, tmp_path, monkeypatch, capsys
):
    """On PostgreSQL, ``status`` (or ``tick``, ``mail list`` ...) on a database_url naming a
    database without pbmserv's tables (the wrong one, another application's) migrated it:
    pbmserv's tables appeared in it and the queues read zero.  They refuse, as on SQLite."""
    from sqlalchemy import create_engine, inspect

    from pbmserv.cli.main import main
    from pbmserv.store import db

    _reset_postgres(postgres_url)
    db._session_factory.cache_clear()
    monkeypatch.setenv("PBMSERV_DATABASE_URL", postgres_url)
    shown = make_url(postgres_url).render_as_string(hide_password=True)
    for command in (["status"], ["tick"], ["mail", "list"], ["mail", "outbox", "list"],
                    ["robot", "list"], ["robot", "run", "--until-idle"]):  # fmt: skip
        capsys.readouterr()
        assert main(["--data-dir", str(tmp_path), *command]) == CONFIG, command
        assert capsys.readouterr().err.strip() == (
            f"Error: no pbmserv tables in the database {shown} (is database_url right? "
            "`pbmserv db upgrade` creates them)"
        )
    engine = create_engine(postgres_url, poolclass=NullPool)
    assert inspect(engine).get_table_names() == []
    engine.dispose()
    assert main(["--data-dir", str(tmp_path), "db", "current"]) == 0
    assert "no pbmserv tables yet" in capsys.readouterr().out
    assert main(["--data-dir", str(tmp_path), "db", "upgrade"]) == 0
    assert main(["--data-dir", str(tmp_path), "status"]) == 0
    # downgraded to base, it holds alembic's empty table only: no pbmserv tables either
    assert main(["--data-dir", str(tmp_path), "db", "downgrade", "base", "--yes"]) == 0
    db._session_factory.cache_clear()
    capsys.readouterr()
    assert main(["--data-dir", str(tmp_path), "status"]) == CONFIG
    assert "Error: no pbmserv tables in the database" in capsys.readouterr().err


def sqlite_connections(monkeypatch, adjust) -> None:  # type: ignore[no-untyped-def]
    """Every SQLite connection the commands open from now on goes through ``adjust``: the
    errors they meet are SQLite's own, on the real code path."""
    from sqlite3 import dbapi2

    from pbmserv.store import db

    real = dbapi2.connect

    def connect(database, *args, **kwargs):  # type: ignore[no-untyped-def]
        return adjust(real, database, *args, **kwargs)

    monkeypatch.setattr(dbapi2, "connect", connect)
    db._session_factory.cache_clear()  # no engine of an earlier command is reused


def test_a_full_disk_is_no_unreachable_server(shell, monkeypatch):
    """SQLITE_FULL said "cannot be reached ... is its server running?"."""

    def full(real, database, *args, **kwargs):  # type: ignore[no-untyped-def]
        connection = real(database, *args, **kwargs)
        connection.execute("PRAGMA max_page_count = 3")  # the disk is full at 3 pages
        return connection

    sqlite_connections(monkeypatch, full)
    status, err = shell("db", "upgrade")
    created, rest = err.split("\n", 1)  # (the new store is said first)
    line = one_line(rest)
    assert created.startswith("pbmserv: created the data directory")
    assert status == TEMPFAIL and "is full (database or disk is full)" in line, line
    assert "free space on its disk, then run the command again" in line
    assert "server" not in line


def test_a_read_only_store_says_so(shell, monkeypatch, tmp_path):
    """A store this user may not write ("attempt to write a readonly database") is the
    installation's to fix (78), not a server to wait for (75).  The file is opened read-only
    here, since chmod does not stop root."""
    path = store(tmp_path)

    def read_only(real, database, *args, **kwargs):  # type: ignore[no-untyped-def]
        kwargs["uri"] = True
        return real(f"file:{database}?mode=ro", *args, **kwargs)

    sqlite_connections(monkeypatch, read_only)
    status, err = shell("signup", "bob", "secret2", "bob@example.org")
    line = one_line(err)
    assert status == CONFIG and "cannot be written (attempt to write a readonly database)" in line
    assert str(path) in line and "check the permissions of the file and its directory" in line


def test_a_taken_port_is_temporary_not_refused(tmp_path):
    """A second ``make run`` on the same ports exited 1, "refused by the rules": now 75, as
    the port may free (the server before it stopping), with one line that says what to do."""
    from test_crash import BIN

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PBMSERV_")}
        env |= {
            "PBMSERV_DATA_DIR": str(tmp_path / "data"),
            "PBMSERV_LISTEN_PORT": str(port),
            "PBMSERV_WEB_ENABLED": "false",
            "PBMSERV_WORKERS": "0",
            "PBMSERV_NOW": TEST_START.isoformat(),
        }
        served = subprocess.run(
            [str(BIN / "pbmserv"), "serve"], env=env, capture_output=True, timeout=60
        )
    err = served.stderr.decode()
    assert served.returncode == TEMPFAIL, err
    line = one_line("\n".join(x for x in err.splitlines() if x.startswith("Error")))
    assert f"cannot serve on 127.0.0.1:{port}:" in line and "address already in use" in line
    assert "stop it or choose other ports, then start again" in line
    assert "Traceback" not in err


def test_the_list_of_games_needs_no_database(shell, monkeypatch, capsys):
    """``list`` names each game's robots (from the store) since this session: with the
    database unreachable it failed, where the list of games needs no store at all."""
    url = f"postgresql+psycopg://pbmserv@127.0.0.1:{closed_port()}/pbmserv"
    monkeypatch.setenv("PBMSERV_DATABASE_URL", url)
    shell("status")  # (the fixture's environment; its run keeps only stderr)
    from pbmserv.cli.main import main

    status = main(["list"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "Games on this server:" in out and "polis" in out
    assert "(The robots are not listed: the store cannot be read now.)" in out


@pytest.mark.skipif(not PG_URL, reason="needs PBMSERV_TEST_DATABASE_URL (PostgreSQL)")
def test_the_list_of_games_says_the_database_does_not_exist(shell, monkeypatch, capsys):
    """With database_url naming a PostgreSQL database that does not exist, ``list`` said
    "the store cannot be read now", as if its server were down for a while: it says what is
    wrong and what to do (a server that is down still reads as above)."""
    missing = make_url(PG_URL).set(database="pbmserv_test_list_never_created")
    monkeypatch.setenv("PBMSERV_DATABASE_URL", missing.render_as_string(hide_password=False))
    shell("status")  # (the fixture's environment; its run keeps only stderr)
    from pbmserv.cli.main import main

    status = main(["list"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "Games on this server:" in out and "polis" in out
    said = " ".join(out.split("(The robots are not listed: ", 1)[1].split())
    assert said.startswith(
        "the database that database_url names does not exist; create it (deploy/README.md), "
        "then run `pbmserv db upgrade`.)"
    ), out
    assert "cannot be read now" not in out

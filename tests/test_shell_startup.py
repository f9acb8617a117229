"""A shell command imports only what it needs (issue 18): showing a board loads no password
hashing, no mail gateway, no server, no other engine, no migration tool; the modules of
``asyncio`` it has are only those that SQLAlchemy itself imports (the floor: ``import click,
sqlalchemy.orm``).  Checked on the modules a real ``polis`` process has loaded, not on time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pbmserv.games import get_game

# run the entry point as the console script does, then write the names of the loaded modules
RUN = """
import json, sys
out = sys.argv.pop(1)
from pbmserv.cli.main import main
status = main(sys.argv[1:], prog_name="polis")
json.dump({"status": status, "modules": sorted(sys.modules)}, open(out, "w"))
"""
FLOOR = """
import json, sys
import click, sqlalchemy.orm
json.dump({"status": 0, "modules": sorted(sys.modules)}, open(sys.argv[1], "w"))
"""
NEVER_IN_THE_SHELL = ("argon2", "aiosmtpd", "uvicorn", "starlette", "alembic", "pydantic")


def loaded(tmp_path: Path, code: str, *args: str) -> set[str]:
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBMSERV_")}
    env["PBMSERV_DATA_DIR"] = str(tmp_path / "data")
    result = subprocess.run(
        [sys.executable, "-c", code, str(out), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["status"] == 0, result.stderr
    return set(data["modules"])


def top(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store with board 101 (the migrations run here, not in the measured command)."""
    loaded(tmp_path, RUN, "signup", "alice", "pw-alice-1", "alice@example.org")
    loaded(tmp_path, RUN, "signup", "bob", "pw-bob-1", "bob@example.org")
    loaded(tmp_path, RUN, "polis", "challenge", "alice", "bob")
    return tmp_path


def test_show_imports_no_hashing_mail_server_or_other_engine(store: Path):
    floor = loaded(store, FLOOR)
    show = loaded(store, RUN, "polis", "show", "101")
    assert "pbmserv.games.polis" in show  # the command did run
    assert not top(show) & set(NEVER_IN_THE_SHELL), top(show) & set(NEVER_IN_THE_SHELL)
    assert {n for n in show if n.split(".")[0] == "asyncio"} <= floor
    ours = {n for n in show if n.startswith("pbmserv.")}
    for package in ("pbmserv.mail", "pbmserv.robots", "pbmserv.web", "pbmserv.games.ploy"):
        assert not {n for n in ours if n == package or n.startswith(package + ".")}, package
    assert "pbmserv.cli.server" not in ours and "pbmserv.store.migrate" not in ours


def test_a_move_hashes_but_loads_no_mail_gateway_or_server(store: Path):
    floor = loaded(store, FLOOR)
    position = get_game("polis").new(2)
    move = position.format_move(next(position.legal_moves()))
    moved = loaded(store, RUN, "polis", "move", "101", "alice", "pw-alice-1", move)
    assert "argon2" in top(moved)  # the password was checked
    assert not top(moved) & {"aiosmtpd", "uvicorn", "starlette", "alembic", "pydantic"}
    assert {n for n in moved if n.split(".")[0] == "asyncio"} <= floor
    assert not {n for n in moved if n.startswith(("pbmserv.mail", "pbmserv.web"))}


def test_the_scripts_import_with_the_collector_off_then_collect_as_usual():
    code = (
        "import gc, pbmserv.cli as cli; shell = cli._shell(); "
        "print(gc.isenabled(), gc.get_freeze_count() > 0, shell.__name__)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.split() == ["True", "True", "pbmserv.cli.main"], result.stderr

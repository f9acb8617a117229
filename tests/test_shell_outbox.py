"""From a shell with no server: the mails waiting to go out can be listed and read, and the
first command that creates the data directory says where it is (issue 17, point 9)."""

from __future__ import annotations

import pytest
from test_shell import pbmserv


def test_first_command_says_where_the_data_directory_is(tmp_path):
    data = tmp_path / "here" / "data"
    first = pbmserv("signup", "alice", "secret1", "alice@example.org", data=data)
    assert first.returncode == 0, first.stderr
    assert f"created the data directory {data.resolve()}" in first.stderr
    second = pbmserv("signup", "bob", "secret2", "bob@example.org", data=data)
    assert second.returncode == 0 and "created the data directory" not in second.stderr


@pytest.mark.slow
def test_outgoing_mails_are_listed_and_shown(tmp_path):
    data = tmp_path / "data"
    for user in ("alice", "bob"):
        assert (
            pbmserv("signup", user, f"pw-{user}", f"{user}@example.org", data=data).returncode == 0
        )
    new = pbmserv("polis", "challenge", "alice", "bob", data=data)
    assert "2 mails wait in the outbox" in new.stderr
    assert "'pbmserv mail outbox list'" in new.stderr
    moved = pbmserv("polis", "move", "101", "alice", "pw-alice", "d7-e6", data=data)
    assert "wait" in moved.stderr and "outbox" in moved.stderr
    listed = pbmserv("mail", "outbox", "list", data=data)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()[1:]]
    assert [(r[0], r[1], r[5]) for r in rows] == [
        ("1", "pending", "alice@example.org"),
        ("2", "pending", "bob@example.org"),
        ("3", "pending", "bob@example.org"),
    ]
    assert listed.stdout.splitlines()[3].endswith("Polis Board 101 bob")
    shown = pbmserv("mail", "outbox", "show", "3", data=data)
    assert shown.returncode == 0, shown.stderr
    assert "To: bob@example.org\nSubject: Polis Board 101 bob\n" in shown.stdout
    assert shown.stdout.rstrip().endswith("polis move 101 bob PASSWORD <move>#2")
    missing = pbmserv("mail", "outbox", "show", "99", data=data)
    assert missing.returncode == 1 and "no mail 99 in the outbox" in missing.stderr
    assert "outbox" not in listed.stderr  # operator commands add no note

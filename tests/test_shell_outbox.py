"""From a shell with no server: the mails waiting to go out can be listed and read, and the
first command that creates the data directory says where it is (issue 17, point 9)."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest
from conftest import TEST_START
from test_shell import BIN, free_port, pbmserv


def test_first_command_says_where_the_data_directory_is(tmp_path):
    data = tmp_path / "here" / "data"
    first = pbmserv("signup", "alice", "secret1", "alice@example.org", data=data)
    assert first.returncode == 0, first.stderr
    assert f"created the data directory {data.resolve()}" in first.stderr
    second = pbmserv("signup", "bob", "secret2", "bob@example.org", data=data)
    assert second.returncode == 0 and "created the data directory" not in second.stderr


def test_only_a_store_made_in_the_data_directory_is_announced(tmp_path, monkeypatch, capsys):
    """A server on PostgreSQL said, as it stopped, that it had created the data directory (its
    sender had made the Maildir there): only a store made there is announced."""
    from pbmserv.cli.main import main

    data = tmp_path / "data"
    monkeypatch.setenv("PBMSERV_DATABASE_URL", f"sqlite:///{tmp_path / 'db' / 'store.sqlite3'}")
    monkeypatch.setenv("PBMSERV_DATA_DIR", str(data))
    monkeypatch.setenv("PBMSERV_NOW", TEST_START.isoformat())
    mail = tmp_path / "signup.eml"
    mail.write_bytes(
        b"From: alice@example.org\r\nTo: pbmserv@localhost\r\nMessage-ID: <m1@example.org>\r\n"
        b"Date: Sun, 01 Nov 2026 12:00:00 +0000\r\nSubject: signup alice secret1\r\n\r\n"
    )
    assert main(["mail", "inject", str(mail)]) == 0
    assert len(list((data / "Maildir" / "new").iterdir())) == 1  # the answer made the directory
    assert "created the data directory" not in capsys.readouterr().err


def _serve(data, *, own_group: bool = False) -> subprocess.Popen[str]:
    """``pbmserv serve`` on a free loopback port with the store in ``data``, no web pages,
    on the test's calendar (the caller stops it)."""
    env = {**os.environ, "PBMSERV_DATA_DIR": str(data), "PBMSERV_NOW": TEST_START.isoformat()}
    env.pop("PBMSERV_DATABASE_URL", None)
    env["PBMSERV_WEB_ENABLED"] = "false"
    return subprocess.Popen(
        [str(BIN / "pbmserv"), "serve", "--port", str(free_port())],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=own_group,
    )


@pytest.mark.slow
def test_a_server_says_it_made_the_data_directory_when_it_starts(tmp_path):
    """(It said so after "pbmserv stopped.", days later.)"""
    data = tmp_path / "data"
    server = _serve(data)
    try:
        assert server.stderr is not None
        before = []
        for line in server.stderr:
            if line.startswith("pbmserv serving on"):
                break
            before.append(line)
        server.send_signal(signal.SIGTERM)
        stopped, after = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert any(f"created the data directory {data.resolve()}" in line for line in before), before
    assert "pbmserv stopped." in stopped and "created the data directory" not in after


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
    assert "1 mail waits in the outbox" in moved.stderr
    assert "'pbmserv mail outbox list' lists it, 'pbmserv serve' sends it." in moved.stderr
    # a command that queues nothing says nothing (the clock of these processes is pinned:
    # counted by time, the mails of the commands before were this one's too)
    shown = pbmserv("polis", "show", "101", data=data)
    assert shown.returncode == 0 and "outbox" not in shown.stderr, shown.stderr
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


@pytest.mark.slow
def test_a_stop_signal_to_the_whole_group_is_a_quiet_stop(tmp_path):
    """systemd's stop sends SIGTERM to every process of the service: the worker ended a moment
    before the server heard it, and every stop logged an ERROR 'starting another'."""
    server = _serve(tmp_path / "data", own_group=True)  # a group of its own, as a service's
    try:
        assert server.stderr is not None
        for line in server.stderr:
            if line.startswith("pbmserv serving on"):
                break
        os.killpg(server.pid, signal.SIGTERM)
        said, after = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert server.returncode == 0 and "pbmserv stopped." in said
    assert "starting another" not in after and " ERROR " not in after, after


def test_the_note_says_a_running_server_sends_the_mails(tmp_path):
    """With a server holding the store's lock, "'pbmserv serve' sends them" sent the user to
    start a second one."""
    from pbmserv.store.lock import ClocksLock

    data = tmp_path / "data"
    for user in ("alice", "bob"):
        assert pbmserv("signup", user, f"pw-{user}", f"{user}@x.org", data=data).returncode == 0
    lock = ClocksLock(f"sqlite:///{data / 'pbmserv.sqlite3'}")  # as the server holds it
    assert lock.acquire()
    try:
        new = pbmserv("polis", "challenge", "alice", "bob", data=data)
    finally:
        lock.release()
    assert "2 mails wait in the outbox" in new.stderr
    assert "the running server sends them" in new.stderr and "'pbmserv serve'" not in new.stderr
    moved = pbmserv("polis", "move", "101", "alice", "pw-alice", "d7-e6", data=data)
    assert "'pbmserv serve' sends it" in moved.stderr  # (no server now)
    cron = ClocksLock(f"sqlite:///{data / 'pbmserv.sqlite3'}", "tick")  # a cron tick runs
    assert cron.acquire()
    try:
        answered = pbmserv("polis", "move", "101", "bob", "pw-bob", "b2-b3", data=data)
    finally:
        cron.release()
    assert answered.returncode == 0, answered.stderr
    assert "the next 'pbmserv tick' sends it" in answered.stderr
    assert "running server" not in answered.stderr


def test_retry_refuses_a_mail_a_live_sender_is_sending(tmp_path):
    """``mail outbox retry`` of a mail a sender had just claimed queued it at once, and the
    next round sent it while that sender still did: twice.  Inside the lease it is refused,
    saying when the lease ends and how to force it; ``--force`` (a sender known dead) and a
    lease that ran out queue it."""
    import sqlite3
    from datetime import timedelta

    data = tmp_path / "data"
    assert pbmserv("signup", "alice", "secret1", "alice@example.org", data=data).returncode == 0
    assert pbmserv("signup", "bob", "secret2", "bob@example.org", data=data).returncode == 0
    assert pbmserv("polis", "challenge", "alice", "bob", data=data).returncode == 0
    claimed = TEST_START - timedelta(minutes=3)  # a live claim: the lease is 10 minutes
    with sqlite3.connect(data / "pbmserv.sqlite3") as db:
        db.execute(
            "UPDATE outbox SET status = 'sending', claimed_by = 'otherhost:4242', "
            "claimed_at = ?, attempts = 1",
            (claimed.strftime("%Y-%m-%d %H:%M:%S.%f"),),
        )
    refused = pbmserv("mail", "outbox", "retry", "1", data=data)
    assert refused.returncode == 1, refused.stderr
    said = " ".join(refused.stderr.split())
    assert said == (
        "Error: mail 1 is being sent now by otherhost:4242 (claimed at 2026-11-01 11:57:00 "
        "UTC); its lease ends at 2026-11-01 12:07:00 UTC, and if that sender died, the mail "
        "is sent again then by itself. If you know that sender is dead, 'pbmserv mail outbox "
        "retry --force 1' queues it now (it may then arrive twice)"
    )
    listed = pbmserv("mail", "outbox", "list", data=data).stdout
    assert listed.count("sending") == 2  # nothing changed
    forced = pbmserv("mail", "outbox", "retry", "--force", "1", data=data)
    assert (forced.returncode, forced.stdout) == (0, "Mail 1 is queued to be sent again.\n")
    later = {"PBMSERV_NOW": (TEST_START + timedelta(minutes=8)).isoformat()}
    expired = pbmserv("mail", "outbox", "retry", "2", data=data, env=later)
    assert expired.returncode == 0, expired.stderr  # its lease is over: a plain retry
    listed = pbmserv("mail", "outbox", "list", data=data).stdout
    assert "sending" not in listed and listed.count("pending") == 2

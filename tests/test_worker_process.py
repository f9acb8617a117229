"""``pbmserv serve`` runs its worker in a process of its own: mail is answered on the test's
calendar, a killed worker is replaced, and a killed server's worker finishes its batch and
goes; after every crash each mail is processed exactly once."""

from __future__ import annotations

import os
import random
import signal
import smtplib
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import TEST_START
from sqlalchemy import func, select
from test_crash import (
    BIN,
    assert_each_mail_done_once,
    done,
    move_mail,
    planned_games,
    write_config,
)
from waiting import wait_for_progress, wait_until

from pbmserv.cli.worker_process import settings_line
from pbmserv.mail import inbox
from pbmserv.store.models import Board, Inbox, InboxStatus, Outbox, OutboxStatus

WORKER_MODULE = "pbmserv.cli.worker_process"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_pids(server_pid: int) -> list[int]:
    """The worker processes whose parent is ``server_pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        if ppid == server_pid and WORKER_MODULE.encode() in cmdline:
            found.append(int(entry.name))
    return found


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def start_server(
    tmp_path: Path, settings, workers: int = 1, cwd: Path | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    config = write_config(tmp_path, settings)
    port = free_port()
    with config.open("a") as fh:
        fh.write(f"listen_port = {port}\nweb_enabled = false\nworkers = {workers}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBMSERV_")}
    # its log goes to a file: a pipe read only at the end fills up (64 KB, a line or two per
    # mail) and stops the server in its next log line
    with (tmp_path / "serve.err").open("wb") as err:
        server = subprocess.Popen(
            [str(BIN / "pbmserv"), "--config", str(config), "serve"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd=cwd,
        )
    server.log = tmp_path / "serve.err"  # type: ignore[attr-defined]
    wait_until(lambda: len(worker_pids(server.pid)) == workers, "the worker processes", 30)
    wait_until(lambda: listening(port), f"the listener on port {port}", 30)
    return server, port


def stop_server(server: subprocess.Popen[bytes]) -> str:
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)
    err = server.log.read_text()  # type: ignore[attr-defined]
    assert server.returncode == 0, err
    return err


def store_all(sessions, settings, plans, first_ply: int = 0) -> int:
    """Every planned move mail stored as the listener stores it, boards interleaved (the plans
    start at move ``first_ply + 1``)."""
    total = 0
    for ply in range(max(len(p) for p in plans.values())):
        for number, plan in plans.items():
            if ply < len(plan):
                user, text = plan[ply]
                line = f"plotto move {number} {user} pw-{user} {text}#{first_ply + ply + 1}"
                sender = f"{user}@example.org"
                now = settings.clock()
                inbox.store(sessions, move_mail(sender, line), sender, ["pbmserv@example.org"], now)
                total += 1
    return total


def test_serve_answers_from_its_worker_process_on_the_tests_calendar(
    shell, settings, sessions, tmp_path
):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    server, port = start_server(tmp_path, settings)
    try:
        (worker,) = worker_pids(server.pid)
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
            line = "polis move 101 alice pw-alice a7-a6"
            smtp.sendmail(
                "alice@example.org", ["pbmserv@example.org"], move_mail("alice@example.org", line)
            )
        wait_until(lambda: done(sessions) == 1, "the mail processed")
        with sessions() as s:
            answer = s.scalars(select(Outbox).where(Outbox.inbox_id.is_not(None))).one()
            board = s.scalar(select(Board).where(Board.number == 101))
            assert [m.text for m in board.moves] == ["a7-a6"]
        # the worker's clock goes on from the server's, on the test's calendar
        created = answer.created.replace(tzinfo=TEST_START.tzinfo)
        assert TEST_START <= created < TEST_START + timedelta(hours=1)
        # the server's sender delivers what the worker queued
        wait_until(
            lambda: list((settings.data_dir / "Maildir" / "new").glob("*")), "the answer sent"
        )
    finally:
        stop_server(server)
    assert not alive(worker), "the worker stopped with the server"


def test_a_ready_worker_leaves_the_collector_only_what_it_makes_later(settings, clock):
    """What a worker loads before its first mail lives as long as it does; frozen, a full
    collection never walks it again (unfrozen, each took 45-70 ms of the worker's time)."""
    code = (
        "import gc, sys; from pbmserv.cli import worker_process as worker; "
        "worker.ready(worker.settings_from_line(sys.stdin.buffer.readline())); "
        "from pbmserv.commands import grammar; "
        "print(gc.get_freeze_count(), len(gc.get_objects()), len(grammar.command_words()))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        input=settings_line(settings, lambda: clock.now),
        capture_output=True,
    )
    frozen, walked, words = map(int, result.stdout.split())
    assert frozen > 50 * walked, result.stderr  # (walked: the few made since, the printing's)
    assert words > 20  # every game's words were loaded before the collector was told


def test_the_worker_runs_its_servers_code_whatever_the_working_directory(
    shell, settings, sessions, tmp_path
):
    """Started where another pbmserv lies (an older checkout, say), the worker still imports
    the server's own code: ``python -m`` would have put the working directory first."""
    decoy = tmp_path / "checkout"
    marker = tmp_path / "decoy-ran"
    (decoy / "pbmserv" / "cli").mkdir(parents=True)
    (decoy / "pbmserv" / "__init__.py").write_text("")
    (decoy / "pbmserv" / "cli" / "__init__.py").write_text("")
    (decoy / "pbmserv" / "cli" / "worker_process.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nraise SystemExit(3)\n"
    )
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    server, port = start_server(tmp_path, settings, cwd=decoy)
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
            line = "polis move 101 alice pw-alice a7-a6"
            smtp.sendmail(
                "alice@example.org", ["pbmserv@example.org"], move_mail("alice@example.org", line)
            )
        wait_until(lambda: done(sessions) == 1, "the mail processed")
    finally:
        stop_server(server)
    assert not marker.exists()


@pytest.mark.slow
def test_a_killed_worker_is_replaced_and_no_mail_is_lost_or_doubled(
    shell, settings, sessions, tmp_path
):
    plans = planned_games(shell, "plotto", random.Random(8))
    total = store_all(sessions, settings, plans)  # all waiting first: a worker keeps up with us
    server, _ = start_server(tmp_path, settings)
    try:
        (first,) = worker_pids(server.pid)
        wait_until(lambda: done(sessions) >= total // 10, "some mail processed", 60)
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: [p for p in worker_pids(server.pid) if p != first], "a new worker", 30)
        wait_for_progress(lambda: done(sessions), total, "the new worker's mails done")
    finally:
        log = stop_server(server)
    assert f"worker process {first} ended" in log
    assert_each_mail_done_once(sessions, plans, total)


def test_a_stopped_server_sends_the_answers_of_its_workers_last_batch(
    shell, settings, sessions, tmp_path
):
    """Stopped while its worker works the queue off, the server stops the worker first (it
    finishes the batch in hand), then its sender sends every answer queued, whatever round it
    was in: none is left for the next start."""
    plans = planned_games(shell, "plotto", random.Random(11))
    store_all(sessions, settings, plans)  # (stopped, most likely, before it is done)
    server, _ = start_server(tmp_path, settings)
    try:
        wait_until(lambda: done(sessions) >= 3, "some mail processed", 60)
    finally:
        stop_server(server)
    assert done(sessions) >= 3
    with sessions() as s:  # the answers, the other players' board mails, the challenges
        queued = s.scalars(select(Outbox.status)).all()
    assert queued and set(queued) == {OutboxStatus.sent}


@pytest.mark.slow
def test_a_killed_servers_worker_finishes_its_batch_and_goes(shell, settings, sessions, tmp_path):
    plans = planned_games(shell, "plotto", random.Random(9))
    total = store_all(sessions, settings, plans)  # all waiting first: a worker keeps up with us
    server, _ = start_server(tmp_path, settings)
    try:
        (worker,) = worker_pids(server.pid)
        wait_until(lambda: done(sessions) >= total // 10, "some mail processed", 60)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(10)
    wait_until(lambda: not alive(worker), "the orphaned worker to exit", 30)
    with sessions() as s:
        claimed = s.scalar(
            select(func.count()).select_from(Inbox).where(Inbox.status == InboxStatus.processing)
        )
    assert claimed == 0, "the worker committed or released its batch before it went"
    assert done(sessions) < total, "the worker went without working the queue off"
    again, _ = start_server(tmp_path, settings)
    try:
        wait_for_progress(lambda: done(sessions), total, "the restarted server's mails done")
    finally:
        stop_server(again)
    assert_each_mail_done_once(sessions, plans, total)


@pytest.mark.slow
def test_two_worker_processes_share_the_queue_and_do_each_mail_once(
    shell, settings, sessions, tmp_path
):
    """Round by round, one move per board in the queue (a player answers the board mail of the
    move before), so both workers have mail at once and no board's moves can cross."""
    plans = planned_games(shell, "plotto", random.Random(10))
    server, _ = start_server(tmp_path, settings, workers=2)
    total = 0
    try:
        assert len(worker_pids(server.pid)) == 2
        for ply in range(max(len(p) for p in plans.values())):
            round_plans = {n: [p[ply]] for n, p in plans.items() if ply < len(p)}
            total += store_all(sessions, settings, round_plans, first_ply=ply)
            wait_for_progress(lambda: done(sessions), total, f"round {ply + 1} done")
    finally:
        stop_server(server)
    assert_each_mail_done_once(sessions, plans, total)
    with sessions() as s:
        workers = set(s.scalars(select(Inbox.claimed_by)))
    assert workers == {None}, "every claim was released"


def test_a_taken_port_stops_the_start_before_any_worker_or_clock(settings, monkeypatch):
    """The error was clear, but a worker process had started and the clocks had ticked
    (nags, forfeits) before the bind failed: the ports are bound first now."""
    from pbmserv.cli import server as server_module

    started: list[object] = []
    monkeypatch.setattr(server_module, "tick", lambda *args: started.append("tick"))
    monkeypatch.setattr(server_module.WorkerProcess, "start", lambda self: started.append(self))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        settings.listen_port = taken.getsockname()[1]
        server = server_module.Server(settings, worker_processes=1)
        try:
            with pytest.raises(OSError):
                server.start()
            assert started == [] and server.threads == []
        finally:
            server.stop()

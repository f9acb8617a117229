"""Robots never hold up a command (issue 19): a shell command plays at most the one robot reply
that a human's move asked for; robot games are played by ``pbmserv robot run --until-idle`` or by
the running server, to the end, each move within its level's time budget."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from test_robots import board, operator_ok
from test_shell import BIN

from pbmserv.games import get_game
from pbmserv.robots import LEVELS, budget_of, choose_move
from pbmserv.store.models import BoardStatus

FOUR = ["r1", "r2", "r3", "r4"]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def pbmserv(*args: str, data: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The installed ``pbmserv`` script in a subprocess, as a user or cron runs it."""
    env = {**os.environ, "PBMSERV_DATA_DIR": str(data)}
    env.pop("PBMSERV_PASSWORD", None)
    env.pop("PBMSERV_DATABASE_URL", None)
    return subprocess.run(
        [str(BIN / "pbmserv"), *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def _four_robots(shell, level: str = "easy") -> None:
    for name in FOUR:
        operator_ok(shell, f"robot add {name} --game ploy --level {level}")
    shell.ok(f"ploy challenge {' '.join(FOUR)}")


@pytest.mark.slow
def test_a_challenge_of_only_robots_returns_at_once_and_cron_plays_it_to_the_end(data):
    for name in FOUR:
        assert (
            pbmserv("robot", "add", name, "--game", "ploy", "--level", "easy", data=data).returncode
            == 0
        )
    start = time.monotonic()
    challenged = pbmserv("ploy", "challenge", *FOUR, data=data)
    assert challenged.returncode == 0, challenged.stderr
    assert time.monotonic() - start < 15, "the shell waited on robots"
    assert "Robot" not in challenged.stdout  # no robot moved inside the command
    shown = pbmserv("ploy", "show", "101", data=data)
    assert "To move: r1 (green)." in shown.stdout and "Robot" not in shown.stdout
    # cron: plays until no robot is to move, i.e. to the end of the game
    ran = pbmserv("robot", "run", "--until-idle", data=data, timeout=240)  # or it fails
    assert ran.returncode == 0, ran.stderr
    shown = pbmserv("ploy", "show", "101", data=data)
    assert "Game won by" in shown.stdout or "Game was a tie" in shown.stdout
    assert "No robot is to move." in pbmserv("robot", "run", data=data).stdout


@pytest.mark.slow
def test_a_shell_move_gets_one_robot_reply_and_no_more(data):
    pbmserv("signup", "alice", "secret1", data=data)
    for name in FOUR[:3]:
        pbmserv("robot", "add", name, "--game", "ploy", "--level", "easy", data=data)
    assert pbmserv("ploy", "challenge", "alice", *FOUR[:3], data=data).returncode == 0
    moved = pbmserv("ploy", "move", "101", "alice", "secret1", "a1+1", data=data)
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout.count("Robot ") == 1 and "Robot r1 played" in moved.stdout
    # and the shell says who acts next: here a robot, whose turn waits for a server or cron
    assert "; robot r2 is to move: 'pbmserv serve' or 'pbmserv robot run' plays its turn." in (
        moved.stdout
    )
    shown = pbmserv("ploy", "show", "101", data=data)
    assert "To move: r2 (yellow)." in shown.stdout  # r2 and r3 wait for the server or cron
    assert "Robot" not in shown.stdout  # a command that is no move plays no robot


@pytest.mark.slow
def test_robot_run_until_idle_plays_four_robots_to_the_end(shell):
    _four_robots(shell)
    deadline = time.monotonic() + 240
    result = operator_ok(shell, "robot run --until-idle")
    assert time.monotonic() < deadline, "robot run --until-idle took over 4 minutes"
    found = board(shell, 101, "ploy")
    assert found.status is BoardStatus.finished, "the game did not end"
    assert found.result and len(found.moves) == result.body.count(" played ")


@pytest.mark.slow
def test_the_running_server_plays_four_robots_to_the_end(shell, settings, clock):
    from pbmserv.cli.server import Server

    _four_robots(shell)
    server = Server(settings, listen=False, clock=lambda: clock.now)
    server.start()
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if board(shell, 101, "ploy").status is BoardStatus.finished:
                break
            time.sleep(0.5)
    finally:
        server.stop()
    found = board(shell, 101, "ploy")
    assert found.status is BoardStatus.finished, (
        f"the server did not finish the four-robot game in 4 minutes ({len(found.moves)} moves)"
    )
    assert all(m.source == "robot" for m in found.moves)


def test_every_level_has_a_time_budget_that_the_search_keeps():
    assert all(budget.seconds for budget in LEVELS.values())
    position = get_game("ploy").new(4)
    budget = budget_of("seconds=0.3")
    start = time.monotonic()
    result = choose_move(position, budget)
    assert result.move is not None and result.nodes > 0
    assert time.monotonic() - start < 0.3 + 0.5  # the clock is read every 128 nodes


def test_robots_avoid_a_repetition_when_not_worse():
    """From the start (an even position) the robot never steps back into a position played."""
    from pbmserv.games.ploy import PloyPosition

    position = get_game("ploy").new(2)
    assert isinstance(position, PloyPosition)
    for text in ["d3+1", "d7+1", "d3-1", "d7-1"]:
        position.push_text(text)
    for _ in range(6):
        result = choose_move(position, budget_of("normal"))
        child = position.copy()
        child.play(result.move)
        assert child.repetitions() == 1, position.format_move(result.move)
        position = child


def test_batches_of_mail_wake_the_robots_at_most_once_a_gap(settings, clock, monkeypatch):
    """Every processed batch wakes the robots; while batches keep coming they look for turns
    once per ``ROBOT_GAP_SECONDS``, not once per batch (each look is a query)."""
    from pbmserv.cli import server

    looks: list[float] = []
    monkeypatch.setattr(server, "run_pending", lambda *a, **k: looks.append(time.monotonic()) or [])
    running = server.Server(settings, listen=False, clock=lambda: clock.now)
    running.start()
    try:
        end = time.monotonic() + 1.6
        while time.monotonic() < end:
            running._mail_processed()  # what the worker calls after each batch
            time.sleep(0.01)
    finally:
        running.stop()
    gaps = [later - earlier for earlier, later in zip(looks, looks[1:], strict=False)]
    assert len(looks) >= 2, looks
    assert min(gaps) >= 0.9 * server.ROBOT_GAP_SECONDS, gaps


def test_a_stop_request_ends_a_long_search_at_once():
    """The search read only its own deadline: a server stopping during a minute's search
    waited for it (and systemd killed it after its TimeoutStopSec)."""
    from pbmserv.robots.search import Stopped

    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) >= 3

    with pytest.raises(Stopped):
        choose_move(get_game("ploy").new(4), budget_of("seconds=60"), stop)
    assert len(asked) == 3  # it stopped when asked, not at its deadline


def test_a_robot_turn_stopped_while_thinking_is_not_played_and_waits(shell, settings, clock):
    from pbmserv.robots.service import pending, run_pending

    operator_ok(shell, "robot add slow --game ploy --level seconds=60")
    operator_ok(shell, "robot add fast --game ploy --level easy")
    shell.ok("ploy challenge slow fast")
    asked: list[int] = []

    def stop() -> bool:  # the server's stopping flag, set while the robot thinks
        asked.append(1)
        return len(asked) > 2

    assert run_pending(shell.sessions, settings, lambda: clock.now, stop=stop) == []
    assert len(asked) == 3 and board(shell, 101, "ploy").moves == []
    with shell.sessions() as s:  # played after the restart
        assert [turn.userid for turn in pending(s)] == ["slow"]

"""Crash safety: a real worker process killed with SIGKILL in the middle of a batch; after a
restart every accepted mail is processed exactly once and no move is lost or doubled."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

import pytest
from conftest import TEST_START
from sqlalchemy import func, select
from waiting import wait_for_progress, wait_until

from pbmserv.games import get_game
from pbmserv.mail import inbox
from pbmserv.store.db import readonly_sessions
from pbmserv.store.models import Board, Inbox, InboxStatus, Outbox

BIN = Path(sys.executable).parent
BOARDS = 20
MOVES = 20


def write_config(tmp_path: Path, settings) -> Path:
    path = tmp_path / "pbmserv.toml"
    path.write_text(
        "[pbmserv]\n"
        f'data_dir = "{settings.data_dir}"\n'
        f'database_url = "{settings.url}"\n'
        "argon2_time_cost = 1\nargon2_memory_kib = 8\n"
        'accept_recipients = ["pbmserv@example.org"]\n'
        f'now = "{settings.now}"\n'
    )
    return path


def move_mail(sender: str, line: str) -> bytes:
    msg = EmailMessage()
    msg["Date"] = format_datetime(TEST_START)  # (the servers run on the test's calendar)
    msg["From"] = sender
    msg["To"] = "pbmserv@example.org"
    msg["Subject"] = line
    msg["Message-ID"] = make_msgid(domain="client.example")
    msg.set_content("\n")
    return msg.as_bytes()


def planned_games(shell, game_name: str, rng: random.Random) -> dict[int, list[tuple[str, str]]]:
    """Start the boards and plan each one's moves: (userid, move text) in order."""
    game = get_game(game_name)
    shell.signup(*[f"p{i}" for i in range(2 * BOARDS)])
    plans = {}
    for b in range(BOARDS):
        players = [f"p{2 * b}", f"p{2 * b + 1}"]
        shell.ok(f"{game_name} challenge {' '.join(players)}")
        position = game.new(2)
        plan = []
        while position.to_move is not None and len(plan) < MOVES:
            moves = [m for m in position.legal_moves() if str(m) not in ("swap", "resign")]
            move = rng.choice(moves)
            plan.append((players[position.to_move], position.format_move(move)))
            position.play(move)
        plans[101 + b] = plan
    return plans


def assert_each_mail_done_once(sessions, plans, total: int) -> None:
    """Every planned move recorded once and in order, every stored mail done with exactly one
    answer."""
    with sessions() as s:
        for number, plan in plans.items():
            board = s.scalar(select(Board).where(Board.game == "plotto", Board.number == number))
            assert [m.text for m in board.moves] == [text for _, text in plan]
            assert [m.ply for m in board.moves] == list(range(1, len(plan) + 1))
        answers = dict(
            s.execute(
                select(Outbox.inbox_id, func.count())
                .where(Outbox.inbox_id.is_not(None))
                .group_by(Outbox.inbox_id)
            ).all()
        )
        rows = s.scalars(select(Inbox)).all()
        assert len(rows) == total
        assert all(row.status is InboxStatus.done for row in rows)
        assert all(answers.get(row.id) == 1 for row in rows), "every mail has exactly one answer"


def done(sessions) -> int:
    """Mails done, read without the write lock: a poll must not queue up behind the worker's
    batches (SQLite's busy wait backs off to 100 ms sleeps, and would miss the gaps)."""
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    with readonly_sessions(url)() as s:
        return done_count(s)


def done_count(s) -> int:
    return s.scalar(select(func.count()).select_from(Inbox).where(Inbox.status == InboxStatus.done))


@pytest.mark.slow
def test_kill_9_in_the_middle_of_a_batch(shell, settings, sessions, tmp_path):
    config = write_config(tmp_path, settings)
    plans = planned_games(shell, "plotto", random.Random(5))
    now = settings.clock()
    total = 0
    for ply in range(MOVES):
        for number, plan in plans.items():
            if ply < len(plan):
                user, text = plan[ply]
                line = f"plotto move {number} {user} pw-{user} {text}#{ply + 1}"
                inbox.store(
                    sessions,
                    move_mail(f"{user}@example.org", line),
                    f"{user}@example.org",
                    ["pbmserv@example.org"],
                    now,
                )
                total += 1
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBMSERV_")}
    cmd = [str(BIN / "pbmserv"), "--config", str(config), "serve", "--no-listen"]
    log = tmp_path / "serve.err"  # (a pipe read only at the end fills up and stops it)
    with log.open("wb") as err:
        first = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_until(
            lambda: done(sessions) >= total // 10,
            f"the first worker to process {total // 10} of {total} mails",
            60,
            seen=lambda: f"{done(sessions)} processed",
        )
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    with sessions() as s:
        assert done_count(s) < total, "the worker finished before it could be killed"
    with log.open("wb") as err:
        second = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_for_progress(lambda: done(sessions), total, "the restarted worker's mails done")
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
    assert second.returncode == 0, log.read_text()
    assert_each_mail_done_once(sessions, plans, total)

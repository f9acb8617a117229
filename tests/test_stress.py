"""Several workers, one database: 4 worker processes, 2,000 move mails for 50 boards arriving in
random order across boards, some delivered twice (same Message-ID) and some re-sent (a new
Message-ID racing the original for the same turn).  Afterwards every board's record is exactly
the planned legal sequence with contiguous plies, and every stored mail has exactly one answer.

Runs on SQLite (one writer at a time, busy timeout) and, in the PostgreSQL pass of `make test`,
on PostgreSQL (``FOR UPDATE SKIP LOCKED`` claims, row locks on boards).
``PBMSERV_STRESS_MOVES`` scales it down for a quick local run.
"""

from __future__ import annotations

import mailbox
import os
import random
import signal
import subprocess
import time
from email import message_from_bytes, policy

import pytest
from sqlalchemy import func, select
from test_crash import BIN, move_mail, write_config
from waiting import wait_until

from pbmserv.games import get_game
from pbmserv.mail import inbox
from pbmserv.store.models import Board, Inbox, InboxStatus, MoveRecord, Outbox

BOARDS = 50
TOTAL_MOVES = int(os.environ.get("PBMSERV_STRESS_MOVES", "2000"))
WORKERS = 4
GAME = "ploy"
STALL_SECONDS = 60  # the test fails when the workers record no move for this long


class Progress:
    """Fails when a count stops growing for ``limit`` seconds, saying what was awaited."""

    def __init__(self, limit: float) -> None:
        self.limit, self.count, self.since = limit, -1, time.monotonic()

    def check(self, count: int, what: str) -> None:
        if count != self.count:
            self.count, self.since = count, time.monotonic()
        elif time.monotonic() - self.since > self.limit:
            raise AssertionError(f"waited {self.limit} s for the workers: {count} {what}")


def plan_boards(shell, rng: random.Random) -> dict[int, list[tuple[str, str]]]:
    game = get_game(GAME)
    shell.signup(*[f"p{i}" for i in range(2 * BOARDS)])
    per_board = TOTAL_MOVES // BOARDS
    plans = {}
    for b in range(BOARDS):
        players = [f"p{2 * b}", f"p{2 * b + 1}"]
        shell.ok(f"{GAME} challenge {' '.join(players)}")
        position = game.new(2)
        plan = []
        while len(plan) < per_board:
            assert position.to_move is not None, "a planned game ended early: pick another seed"
            # motion moves only (no captures of commanders in a few dozen random plies, in practice)
            moves = [m for m in position.legal_moves() if str(m) not in ("swap", "resign")]
            move = rng.choice(moves)
            plan.append((players[position.to_move], position.format_move(move)))
            position.play(move)
        plans[101 + b] = plan
    return plans


def texts_sent(settings) -> dict[str, str]:
    """The plain text of every mail the workers wrote into the Maildir, by Message-ID."""
    box = mailbox.Maildir(settings.maildir_path, create=True)
    texts = {}
    for key in box.iterkeys():
        msg = message_from_bytes(box.get_bytes(key), policy=policy.default)
        texts[msg["Message-ID"]] = msg.get_body(preferencelist=("plain",)).get_content()
    return texts


@pytest.mark.slow
def test_four_workers_lose_and_double_nothing(shell, settings, sessions, tmp_path):
    rng = random.Random(11)
    plans = plan_boards(shell, rng)
    config = write_config(tmp_path, settings)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBMSERV_")}
    cmd = [str(BIN / "pbmserv"), "--config", str(config), "serve", "--no-listen"]
    logs = [tmp_path / f"worker{n}.err" for n in range(WORKERS)]  # (a pipe read only at
    workers = []  # the end fills up, a line or two per mail, and stops its worker)
    for log in logs:
        with log.open("wb") as err:
            workers.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err))
    with sessions() as s:
        ids = {b.number: b.id for b in s.scalars(select(Board).where(Board.game == GAME))}
    submitted = dict.fromkeys(plans, 0)
    resent: list[int] = []  # inbox ids of re-sent copies
    stored = 0
    now = settings.clock()
    total = sum(len(plan) for plan in plans.values())
    progress = Progress(STALL_SECONDS)
    try:
        while any(submitted[n] < len(plans[n]) for n in plans):
            with sessions() as s:
                counts = dict(
                    s.execute(
                        select(MoveRecord.board_id, func.count()).group_by(MoveRecord.board_id)
                    ).all()
                )
            progress.check(sum(counts.values()), f"moves recorded (of {total})")
            ready = [
                n
                for n in plans
                if submitted[n] < len(plans[n]) and counts.get(ids[n], 0) == submitted[n]
            ]
            if not ready:
                time.sleep(0.02)
                continue
            rng.shuffle(ready)
            for number in ready:
                ply = submitted[number]
                user, text = plans[number][ply]
                line = f"{GAME} move {number} {user} pw-{user} {text}#{ply + 1}"
                sender = f"{user}@example.org"
                raw = move_mail(sender, line)
                copies = [raw]
                if rng.random() < 0.1:
                    copies.append(raw)  # the same delivery twice: stored once
                if rng.random() < 0.05:
                    copies.insert(rng.randrange(2), move_mail(sender, line))  # a re-sent mail
                for copy in copies:
                    result = inbox.store(sessions, copy, sender, ["pbmserv@example.org"], now)
                    if result.new:
                        stored += 1
                        if copy is not raw:
                            resent.append(result.id)
                submitted[number] += 1

        def waiting() -> int:
            with sessions() as s:
                return s.scalar(
                    select(func.count())
                    .select_from(Inbox)
                    .where(Inbox.status.in_([InboxStatus.new, InboxStatus.processing]))
                )

        wait_until(
            lambda: waiting() == 0,
            "the workers to process every stored mail",
            STALL_SECONDS,
            seen=lambda: f"{waiting()} mails still waiting",
        )
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            worker.wait(timeout=60)
        errors = [log.read_text() for log in logs]
    assert all(w.returncode == 0 for w in workers), errors
    with sessions() as s:
        for number, plan in plans.items():
            board = s.get(Board, ids[number])
            assert [m.text for m in board.moves] == [text for _, text in plan], number
            assert [m.ply for m in board.moves] == list(range(1, len(plan) + 1))
        rows = s.scalars(select(Inbox)).all()
        assert len(rows) == stored
        assert {r.status for r in rows} == {InboxStatus.done}
        answers = {}
        for row in s.scalars(select(Outbox).where(Outbox.inbox_id.is_not(None))):
            answers.setdefault(row.inbox_id, []).append(row)
        assert all(len(answers.get(r.id, [])) == 1 for r in rows), "exactly one answer per mail"
        refused = [answers[i][0] for i in resent]
        # a re-sent copy and its original race for one turn: one plays, the other is refused
        errors = [a[0] for a in answers.values() if a[0].subject.endswith(" Error")]
        assert len(errors) == len(resent)
        sent = texts_sent(settings)  # the outbox keeps no text once a mail is sent
        texts = [sent[a.message_id] if a.dropped_bytes is not None else a.body for a in errors]
        assert all("would be move" in text or "not your turn" in text for text in texts)
        del refused

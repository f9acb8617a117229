"""Group commit: the listener writes concurrent mails in one transaction, the worker processes a
batch of mails in one transaction with a savepoint each.  Neither may lose, double or mix up a
mail: a repeated delivery stays one row, a failing mail is rolled back alone, and a batch whose
commit fails is processed again one mail at a time.
"""

from __future__ import annotations

import threading
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

import pytest
from conftest import TEST_START
from sqlalchemy import func, select
from test_board_index import counted

from pbmserv.mail import inbox, inbox_queue, one_mail, worker
from pbmserv.store.models import AuthFailure, Comment, Inbox, InboxStatus, MoveRecord, Outbox


def mail(sender: str, subject: str, message_id: str | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, "pbmserv@example.org", subject
    msg["Message-ID"] = message_id or make_msgid(domain="client.example")
    msg["Date"] = format_datetime(TEST_START)
    msg.set_content("\n")
    return msg.as_bytes()


def delivery(raw: bytes, clock) -> inbox.Delivery:
    return inbox.Delivery(raw, "alice@example.org", ["pbmserv@example.org"], clock.now)


def test_store_many_keeps_one_row_per_mail_and_says_which_were_new(sessions, clock):
    first = mail("alice@example.org", "help", "<one@client.example>")
    again = mail("alice@example.org", "help", "<one@client.example>")
    other = mail("alice@example.org", "help", "<two@client.example>")
    stored = inbox.store_many(sessions, [delivery(first, clock), delivery(again, clock)])
    assert [s.new for s in stored] == [True, False]
    assert stored[0].id == stored[1].id
    later = inbox.store_many(sessions, [delivery(other, clock), delivery(first, clock)])
    assert [s.new for s in later] == [True, False]
    assert later[1].id == stored[0].id
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(Inbox)) == 2


def test_group_store_answers_each_caller_with_its_own_durable_mail(sessions, clock):
    intake = inbox.GroupStore(sessions, max_group=4)
    raws = [
        mail("alice@example.org", f"help {i % 30}", f"<m{i % 30}@client.example>")
        for i in range(40)
    ]
    results: dict[int, inbox.Stored] = {}

    def send(i: int) -> None:
        results[i] = intake.store(delivery(raws[i], clock))
        with sessions() as s:  # durable (committed) when store() returns
            assert s.get(Inbox, results[i].id) is not None

    threads = [threading.Thread(target=send, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with sessions() as s:
        rows = {r.id: r.dedup_key for r in s.scalars(select(Inbox))}
    assert len(rows) == 30  # ten mails came twice
    for i, stored in results.items():
        assert rows[stored.id] == inbox.dedup_key(raws[i], "alice@example.org")
    assert sum(s.new for s in results.values()) == 30


def test_group_store_falls_back_to_one_mail_at_a_time(sessions, clock, monkeypatch):
    def broken(*_args, **_kwargs):
        raise RuntimeError("the group could not be written")

    monkeypatch.setattr(inbox, "store_many", broken)
    stored = inbox.GroupStore(sessions).store(delivery(mail("a@example.org", "help"), clock))
    assert stored.new
    with sessions() as s:
        assert s.get(Inbox, stored.id) is not None


MOVES = [
    ("alice", "polis move 101 alice pw-alice a7-a6"),
    ("bob", "polis move 101 bob pw-bob a2-a3"),
    ("alice", "polis move 101 alice pw-alice b7-b6"),
]


def queue_moves(shell, clock, lines: list[tuple[str, str]] = MOVES) -> list[int]:
    """alice and bob on Polis board 101, and ``lines`` mailed by them stored in the inbox."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    ids = []
    for user, line in lines:
        raw = mail(f"{user}@example.org", line)
        ids.append(inbox.store(shell.sessions, raw, f"{user}@example.org", [], clock.now).id)
    return ids


def test_a_batch_commits_every_mail_with_its_answer(shell, sessions, settings, clock):
    ids = queue_moves(shell, clock)
    done = worker.process_batch(sessions, settings, lambda: clock.now)
    assert [d.message_id for d in done] == ids
    assert all(d.status is InboxStatus.done for d in done)
    with sessions() as s:
        moves = list(s.scalars(select(MoveRecord.text).order_by(MoveRecord.ply)))
        assert moves == ["a7-a6", "a2-a3", "b7-b6"]
        for message_id in ids:  # one answer each, and no password kept
            assert s.scalar(select(func.count()).where(Outbox.inbox_id == message_id)) == 1
            assert b"pw-" not in s.get(Inbox, message_id).raw


def test_a_refused_login_is_counted_in_the_batch_and_a_login_takes_no_savepoint_of_its_own(
    shell, sessions, settings, clock
):
    """Inside the worker's transaction a login needs no savepoint: nothing rolls it back alone.
    Its failure count is kept when the command is refused, as in the shell, and the move of a
    right password in the same batch is played.  Savepoints: the refused mail's own, and the
    other mail's own and its move's (five with a savepoint per login)."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    lines = [
        ("bob", "polis move 101 bob wrong-pw a2-a3"),
        ("alice", "polis move 101 alice pw-alice a7-a6"),
    ]
    for user, line in lines:
        inbox.store(
            sessions, mail(f"{user}@example.org", line), f"{user}@example.org", [], clock.now
        )
    with counted(sessions) as statements:
        done = worker.process_batch(sessions, settings, lambda: clock.now)
    assert [d.status for d in done] == [InboxStatus.done] * 2
    assert sum(s.lstrip().upper().startswith("SAVEPOINT") for s in statements) == 3
    with sessions() as s:
        assert s.get(AuthFailure, "owner:bob").count == 1
        assert list(s.scalars(select(MoveRecord.text))) == ["a7-a6"]
        to_bob = s.scalars(select(Outbox.body).where(Outbox.recipient == "bob@example.org"))
        assert any("wrong password for 'bob'" in body for body in to_bob)


def test_a_mail_tried_too_often_is_set_aside_and_the_queue_goes_on(
    shell, sessions, settings, clock
):
    """A mail whose workers died on it every time (``kill -9``, out of memory: nothing could
    count a failure) is claimed ``MAX_ATTEMPTS`` times, then set aside for the operator instead
    of killing the next worker; the mails behind it are processed."""
    ids = queue_moves(shell, clock)
    with sessions() as s, s.begin():  # as a dead worker's last claims leave them
        poison = s.get(Inbox, ids[0])
        poison.attempts = inbox_queue.MAX_ATTEMPTS
        expired = s.get(Inbox, ids[1])  # claimed, its worker gone, its lease run out
        expired.status, expired.attempts = InboxStatus.processing, inbox_queue.MAX_ATTEMPTS
        expired.claimed_by, expired.claimed_at = "elsewhere:1", clock.now - 2 * inbox_queue.LEASE
    done = worker.process_batch(sessions, settings, lambda: clock.now)
    assert [d.message_id for d in done] == ids[2:]
    assert worker.process_batch(sessions, settings, lambda: clock.now) == []
    with sessions() as s:
        for message_id in ids[:2]:
            row = s.get(Inbox, message_id)
            assert row.status is InboxStatus.shunted and row.attempts == inbox_queue.MAX_ATTEMPTS
            assert row.last_error.endswith(f"set aside after {inbox_queue.MAX_ATTEMPTS} attempts")
            assert s.scalar(select(func.count()).where(Outbox.inbox_id == message_id)) == 0
        assert s.get(Inbox, ids[2]).attempts == 1
    assert inbox_queue.retry(sessions, ids[0])  # the operator puts it back: it is processed
    assert [d.status for d in worker.process_batch(sessions, settings, lambda: clock.now)] == [
        InboxStatus.done
    ]


def test_a_failing_mail_is_rolled_back_alone_and_nothing_overtakes_it(
    shell, sessions, settings, clock, monkeypatch
):
    ids = queue_moves(shell, clock)
    process = one_mail.process

    def second_fails(session, settings, message_id, *rest):
        result = process(session, settings, message_id, *rest)
        if message_id == ids[1]:
            raise RuntimeError("boom after the move was played")
        return result

    monkeypatch.setattr(one_mail, "process", second_fails)
    done = worker.process_batch(sessions, settings, lambda: clock.now)
    assert [d.status for d in done] == [InboxStatus.done, InboxStatus.new, InboxStatus.new]
    with sessions() as s:
        # bob's move was rolled back with its answer; alice's next move waits behind it
        assert list(s.scalars(select(MoveRecord.text))) == ["a7-a6"]
        failed = s.get(Inbox, ids[1])
        assert failed.status is InboxStatus.new and failed.attempts == 1
        assert "boom after the move was played" in failed.last_error
        waiting = s.get(Inbox, ids[2])
        assert waiting.status is InboxStatus.new and waiting.attempts == 0
        assert s.scalar(select(func.count()).where(Outbox.inbox_id.in_(ids[1:]))) == 0
    monkeypatch.setattr(one_mail, "process", process)
    again = worker.process_batch(sessions, settings, lambda: clock.now)
    assert [d.message_id for d in again] == ids[1:]
    assert all(d.status is InboxStatus.done for d in again)
    with sessions() as s:
        assert list(s.scalars(select(MoveRecord.text).order_by(MoveRecord.ply))) == [
            "a7-a6",
            "a2-a3",
            "b7-b6",
        ]


@pytest.mark.parametrize("limit", [1, 2, 32])
def test_batches_of_any_size_process_each_mail_once(shell, sessions, settings, clock, limit):
    ids = queue_moves(shell, clock)
    seen: list[int] = []
    while done := worker.process_batch(sessions, settings, lambda: clock.now, limit=limit):
        assert len(done) <= limit
        seen += [d.message_id for d in done]
    assert seen == ids
    with sessions() as s:
        assert list(s.scalars(select(MoveRecord.text).order_by(MoveRecord.ply))) == [
            "a7-a6",
            "a2-a3",
            "b7-b6",
        ]


def test_a_batch_whose_commit_fails_is_processed_one_by_one(
    shell, sessions, settings, clock, monkeypatch
):
    ids = queue_moves(shell, clock)
    calls = {"n": 0}
    real = worker._process_in_savepoint

    def first_batch_breaks(session, settings, item, words, now):
        calls["n"] += 1
        outcome = real(session, settings, item, words, now)
        if calls["n"] == len(ids):  # the last mail of the first (whole) batch: its commit fails
            raise OSError("disk full")
        return outcome

    monkeypatch.setattr(worker, "_process_in_savepoint", first_batch_breaks)
    done = worker.process_batch(sessions, settings, lambda: clock.now)
    assert [d.message_id for d in done] == ids
    with sessions() as s:
        assert list(s.scalars(select(MoveRecord.text).order_by(MoveRecord.ply))) == [
            "a7-a6",
            "a2-a3",
            "b7-b6",
        ]
        assert (
            s.scalar(select(func.count()).select_from(Outbox).where(Outbox.inbox_id.in_(ids))) == 3
        )


def test_the_batch_size_keeps_the_write_lock_short():
    size = worker.BatchSize(most=32, seconds=0.1)
    assert size() == 32
    for _ in range(20):
        size.record(10, 0.5)  # 50 ms a mail
    assert size() == 2
    for _ in range(20):
        size.record(1, 2.0)  # a mail that takes seconds: still one at a time
    assert size() == 1
    for _ in range(40):
        size.record(32, 0.032)  # 1 ms a mail
    assert size() == 32
    size.record(0, 5.0)  # nothing was waiting: no news
    assert size() == 32


def test_each_move_of_a_batch_keeps_and_shows_its_own_comment(shell, sessions, settings, clock):
    """Moves on one board in one batch share the session's board: every comment is stored, and
    each answer shows the comment of its own move, however the board's comments were loaded."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    lines = [("alice", "a7-a6"), ("bob", "a2-a3"), ("alice", "b7-b6")]
    ids = []
    for n, (user, move) in enumerate(lines):
        msg = EmailMessage()
        msg["From"], msg["To"] = f"{user}@example.org", "pbmserv@example.org"
        msg["Subject"] = f"polis move 101 {user} pw-{user} {move}"
        msg["Message-ID"] = make_msgid(domain="client.example")
        msg["Date"] = format_datetime(clock.now)
        msg.set_content(f"Remark number {n} from {user}.\n")
        raw = msg.as_bytes()
        ids.append(inbox.store(sessions, raw, f"{user}@example.org", [], clock.now).id)
    done = worker.process_batch(sessions, settings, lambda: clock.now)
    assert [d.status for d in done] == [InboxStatus.done] * 3
    with sessions() as s:
        stored = list(s.scalars(select(Comment).order_by(Comment.ply)))
        assert [(c.ply, c.text) for c in stored] == [
            (1, "Remark number 0 from alice."),
            (2, "Remark number 1 from bob."),
            (3, "Remark number 2 from alice."),
        ]
        for n, message_id in enumerate(ids):
            (body,) = s.scalars(select(Outbox.body).where(Outbox.inbox_id == message_id))
            assert f"Remark number {n} from" in body
            assert all(f"Remark number {k} " not in body for k in range(3) if k != n)


def test_a_worker_round_that_breaks_returns_its_claims_to_the_queue(
    shell, sessions, settings, clock, monkeypatch
):
    """The database away for a moment: the batches the round had claimed go back to the queue
    at once (not after the lease), and the next rounds process every mail once, in order."""
    ids = queue_moves(shell, clock)
    real = worker.process_claimed
    broken: list[int] = []

    def breaks_once(*args, **kwargs):
        if not broken:
            broken.append(1)
            with sessions() as s:  # the claims are there while the round runs
                assert s.get(Inbox, ids[0]).status is InboxStatus.processing
            raise RuntimeError("database away")
        return real(*args, **kwargs)

    monkeypatch.setattr(worker, "process_claimed", breaks_once)
    monkeypatch.setattr(worker.BatchSize, "__call__", lambda self: 1)
    stopping, work = threading.Event(), threading.Event()
    rounds: list[int] = []

    def on_done() -> None:
        rounds.append(1)
        if len(rounds) == 3:
            stopping.set()

    worker.run_worker(
        sessions, settings, lambda: clock.now, stopping=stopping, work=work, on_done=on_done
    )
    assert broken == [1]
    with sessions() as s:
        rows = [s.get(Inbox, i) for i in ids]
        assert [r.status for r in rows] == [InboxStatus.done] * 3
        assert [r.attempts for r in rows] == [1, 1, 1]  # the broken round was not counted
        texts = list(s.scalars(select(MoveRecord.text).order_by(MoveRecord.ply)))
        assert texts == ["a7-a6", "a2-a3", "b7-b6"]


def test_a_batchs_mails_are_marked_processed_when_their_batch_commits(sessions, settings, clock):
    """``processed_at`` is when a mail's effects and answer became durable: for every mail of
    a batch, the moment its batch commits, after the last of them was processed."""
    from datetime import timedelta

    for i in range(3):
        inbox.store(
            sessions,
            mail("alice@example.org", f"help {i}"),
            "alice@example.org",
            ["pbmserv@example.org"],
            clock.now,
        )
    ticks = iter(range(100))

    def ticking():
        return clock.now + timedelta(seconds=next(ticks))

    outcomes = worker.process_batch(sessions, settings, ticking)
    assert [o.status for o in outcomes] == [InboxStatus.done] * 3
    with sessions() as s:
        rows = s.scalars(select(Inbox).order_by(Inbox.id)).all()
        answers = s.scalars(select(Outbox).order_by(Outbox.id)).all()
    assert len({r.processed_at for r in rows}) == 1
    assert rows[0].processed_at > max(a.created for a in answers)


@pytest.mark.parametrize("record_loaded", [False, True])
def test_a_move_adds_its_entry_and_comment_to_the_record_whether_it_was_read_or_not(
    shell, sessions, clock, record_loaded
):
    """A move's record entry and comment are plain INSERTs when the board's record and comments
    were not read in the session (a move's usual case), and go through those collections when
    they were: either way the session then reads them whole, in order, and so does the next."""
    from pbmserv.domain import boards
    from pbmserv.games import get_game

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice a7-a6")
    game = get_game("polis")
    with sessions() as s, s.begin():
        board = boards.find_board(s, game, 101)
        if record_loaded:
            assert [m.text for m in board.moves] == ["a7-a6"]
            assert board.comments == []
        bob = next(seat.user for seat in board.seats if seat.user.userid == "bob")
        position = boards.position_of(board)
        boards.play_move(s, board, position, bob, "a2-a3", now=clock.now, comment="Your turn.")
        assert [m.text for m in board.moves] == ["a7-a6", "a2-a3"]
        assert [(c.ply, c.user.userid, c.text) for c in board.comments] == [
            (2, "bob", "Your turn.")
        ]
    with sessions() as s:
        board = boards.find_board(s, game, 101)
        assert [(m.ply, m.seat, m.text) for m in board.moves] == [(1, 0, "a7-a6"), (2, 1, "a2-a3")]
        assert [c.text for c in board.comments] == ["Your turn."]
        assert board.cache_ply == 2 and boards.position_of(board).ply == 2


# ----------------------------------------------------------------------------- a failing line


def test_a_command_that_fails_on_our_fault_is_answered_and_the_mail_goes_on(
    shell, sessions, clock, monkeypatch
):
    """A line whose command raises (a fault of ours) is answered as such, rolls back alone,
    and the mail's other lines are carried out: the mail used to fail as a whole, be tried in
    vain and set aside unanswered.  The database's own trouble still fails the mail."""
    from sqlalchemy.exc import OperationalError

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    real_run = one_mail.run
    trouble: list[BaseException] = [ZeroDivisionError("a bug")]

    def run(group, words, req):
        if words[:2] == ["polis", "show"]:
            req.answers.append(one_mail.Answer("half done", "never sent"))
            raise trouble[0]
        return real_run(group, words, req)

    monkeypatch.setattr(one_mail, "run", run)
    body = "polis move 101 alice pw-alice a7-a6\npolis show 101\nhelp\n"
    raw = f"From: alice@example.org\nDate: {format_datetime(clock.now)}\nSubject: moves\n\n{body}".encode()
    inbox.store(sessions, raw, "alice@example.org", [], clock.now)
    [done] = worker.process_batch(sessions, shell.settings, lambda: clock.now)
    assert done.status is InboxStatus.done
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(MoveRecord)) == 1
        [answer] = s.scalars(select(Outbox).where(Outbox.inbox_id == done.message_id))
    assert one_mail.COMMAND_FAILED in answer.body and "never sent" not in answer.body
    assert "a7-a6" in answer.body

    trouble[0] = OperationalError("SELECT 1", {}, Exception("the database went away"))
    raw = f"From: alice@example.org\nDate: {format_datetime(clock.now)}\nSubject: help\n\npolis show 101\n".encode()
    inbox.store(sessions, raw, "alice@example.org", [], clock.now)
    [failed] = worker.process_batch(sessions, shell.settings, lambda: clock.now)
    assert failed.status is not InboxStatus.done  # tried again later, not answered as a bug


@pytest.mark.parametrize("batched", [False, True])
def test_a_mail_set_aside_after_its_last_attempt_tells_its_sender(
    shell, sessions, clock, monkeypatch, batched
):
    """A mail of one line that fails on a fault of ours every time is set aside for the operator
    after its last attempt, and only then its sender is told (once, quoting nothing of it: its
    passwords were never found out); automatic mail stays unanswered.  Both ways a failure is
    recorded: in a batch's savepoint, and in a transaction of its own."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")

    def process(*args):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(one_mail, "process", process)
    if not batched:  # the batch's commit fails: the mails are processed one by one
        real = worker._mark_processed

        def mark(session, outcomes, committing):
            if len(outcomes) > 1:
                raise RuntimeError("the batch's commit failed")
            real(session, outcomes, committing)

        monkeypatch.setattr(worker, "_mark_processed", mark)
    sent = [
        b"From: alice@example.org\nMessage-ID: <m1@x>\nSubject: polis move 101 alice pw-alice a7-a6\n\n",
        b"From: alice@example.org\nMessage-ID: <m2@x>\nAuto-Submitted: auto-replied\n"
        b"Subject: polis show 101\n\n",
        b"From: carol@example.org\nMessage-ID: <m3@x>\nSubject: help\n\n",
    ]
    for raw in sent:
        inbox.store(sessions, raw, "alice@example.org", [], clock.now)

    def notices():
        with sessions() as s:
            return s.scalars(select(Outbox).order_by(Outbox.id)).all()

    before = len(notices())
    for _ in range(3 * inbox_queue.MAX_ATTEMPTS):  # (in a batch, the mails behind a failure wait)
        worker.process_batch(sessions, shell.settings, lambda: clock.now)
        with sessions() as s:
            aside = set(s.scalars(select(Inbox.id).where(Inbox.status == InboxStatus.shunted)))
        assert {n.inbox_id for n in notices()[before:]} == aside - {2}  # 2 is automatic
    told = notices()[before:]
    assert [(n.recipient, n.in_reply_to) for n in told] == [
        ("alice@example.org", "<m1@x>"),
        ("carol@example.org", "<m3@x>"),
    ]
    assert "nothing your mail asked for was\ndone" in told[0].body
    assert all("pw-alice" not in n.body + n.subject for n in told)
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(MoveRecord)) == 0
        statuses = s.scalars(select(Inbox.status)).all()
    assert statuses == [InboxStatus.shunted] * 3


def test_numbers_too_big_for_the_store_are_refused_as_usage(shell):
    """'99999999999999999999' overflowed the database's integers (a traceback in the shell;
    by mail the whole mail was set aside), and int() takes digits such as '²' or '١٠١'."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    for line in (
        "polis show 99999999999999999999",
        "polis show ²",
        "polis show 101#99999999999999999999",
        "polis move 99999999999999999999 alice pw-alice a7-a6",
        "pbmserv limit alice pw-alice ²",
    ):
        result = shell(line)
        assert result.status == 2, (line, result.body)
    assert shell("polis show ١٠١").status == 2  # one board has one name
    shell.ok("polis move 101 alice pw-alice a7-a6#1")
    refused = shell("polis move 101 bob pw-bob a2-a3#²")  # not a move number: the move's text
    assert refused.status == 1

"""The worker's look at the waiting mails (:mod:`pbmserv.mail.prepare`): each mail is parsed
once, its passwords are checked (argon2) outside the worker's thread and outside any write
transaction, and the worker claims only the oldest mails whose checks are done, never one
behind a mail still being checked."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

import pytest
from sqlalchemy import select
from test_group_commit import MOVES, queue_moves

from pbmserv.domain import accounts, passwords
from pbmserv.mail import one_mail, prepare, worker
from pbmserv.mail.prepare import Claims
from pbmserv.store.models import Inbox, InboxStatus, MoveRecord, Outbox


class HeldChecks(Executor):
    """Runs each check at once, except those of the passwords in ``hold``: the test finishes
    them (:meth:`finish`).  Records every check asked for."""

    def __init__(self, hold: set[str]) -> None:
        self.hold = hold
        self.asked: list[str] = []  # the password of each check
        self.held: dict[str, tuple[Future[Any], Callable[[], Any]]] = {}

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        password = args[2]  # (settings, hash, password, composed)
        self.asked.append(password)
        future: Future[Any] = Future()
        if password in self.hold:
            self.held[password] = (future, lambda: fn(*args, **kwargs))
        else:
            future.set_result(fn(*args, **kwargs))
        return future

    def finish(self, password: str) -> None:
        future, run = self.held.pop(password)
        future.set_result(run())


def when_all_done(sessions, stopping: threading.Event) -> Callable[[], None]:
    """A worker's ``on_done`` that stops it once no mail waits or is held by it."""
    undone = [InboxStatus.new, InboxStatus.processing]

    def on_done() -> None:
        with sessions() as s:
            if s.scalar(select(Inbox.id).where(Inbox.status.in_(undone)).limit(1)) is None:
                stopping.set()

    return on_done


@pytest.fixture
def forgetful(monkeypatch) -> None:
    """No password remembered from an earlier check: every login is a first one."""
    monkeypatch.setattr(passwords, "_VERIFIED", OrderedDict())


def first_logins(shell, clock, lines: list[tuple[str, str]] = MOVES) -> list[int]:
    """:func:`queue_moves`, and no password of theirs remembered (the shell logged in)."""
    ids = queue_moves(shell, clock, lines)
    passwords._VERIFIED.clear()
    return ids


def statuses(sessions, ids: list[int]) -> list[tuple[InboxStatus, int]]:
    with sessions() as s:
        return [(s.get(Inbox, i).status, s.get(Inbox, i).attempts) for i in ids]


def test_a_mail_whose_check_runs_holds_back_the_mails_behind_it(
    shell, sessions, settings, clock, forgetful, monkeypatch
):
    ids = first_logins(shell, clock)
    parsed: list[bytes] = []
    parse = prepare.parse_message

    def counted_parse(raw, *args, **kwargs):
        parsed.append(raw)
        return parse(raw, *args, **kwargs)

    monkeypatch.setattr(prepare, "parse_message", counted_parse)
    checks = HeldChecks(hold={"pw-bob"})
    claims = Claims(sessions, sessions, settings, lambda: clock.now, checks)
    claims.claim(32)
    assert statuses(sessions, ids) == [(InboxStatus.processing, 1)] * 3  # leased to this worker
    assert sorted(checks.asked) == ["pw-alice", "pw-bob"]  # one check per password, not per mail
    # alice's first mail; bob's is being checked, and alice's next waits behind it
    assert [item.message_id for item in claims.ready()] == ids[:1]
    assert len(claims) == 2
    claims.claim(32)  # nothing more waits; the held ones are not claimed or checked again
    assert sorted(checks.asked) == ["pw-alice", "pw-bob"]
    assert len(parsed) == 3
    checks.finish("pw-bob")
    batch = claims.ready()
    assert [item.message_id for item in batch] == ids[1:]
    assert [item.parsed.commands for item in batch] == [  # type: ignore[union-attr]
        ["polis move 101 bob pw-bob a2-a3"],
        ["polis move 101 alice pw-alice b7-b6"],
    ]
    assert passwords.remembered(_hash_of(sessions, "bob"), "pw-bob")  # the transaction looks up
    assert len(claims) == 0


def test_released_mails_go_back_to_the_queue_uncounted(shell, sessions, settings, clock, forgetful):
    ids = first_logins(shell, clock)
    claims = Claims(sessions, sessions, settings, lambda: clock.now, HeldChecks({"pw-bob"}))
    claims.claim(32)
    claims.ready()
    claims.release()
    assert len(claims) == 0
    assert statuses(sessions, ids)[1:] == [(InboxStatus.new, 0)] * 2


def test_a_wrong_password_and_an_unknown_userid_start_no_check_ahead(
    shell, sessions, settings, clock, forgetful
):
    """A check ahead is only a shortcut for a login that can succeed; a wrong password is
    counted inside the transaction, as ever (its failure remembered: not checked again)."""
    first_logins(
        shell,
        clock,
        [
            ("alice", "polis move 101 nobody pw-nobody a7-a6"),
            ("alice", "polis move 101 alice wrong a7-a6"),
        ],
    )
    checks = HeldChecks(hold=set())
    claims = Claims(sessions, sessions, settings, lambda: clock.now, checks)
    claims.claim(32)
    assert len(claims.ready()) == 2
    assert checks.asked == ["wrong"]  # an unknown userid has no hash to check against
    assert not passwords.remembered(_hash_of(sessions, "alice"), "wrong")


def test_mails_held_behind_a_mail_that_fails_do_not_overtake_it(
    shell, sessions, settings, clock, monkeypatch
):
    """The worker holds alice's next move (its check still running, say) while bob's move
    fails: it puts the held mail back, so bob's move is played first when tried again."""
    ids = queue_moves(shell, clock)
    accounts.preverify(sessions, settings, [("alice", "pw-alice"), ("bob", "pw-bob")], clock.now)
    ready = Claims.ready

    def two_first(self: Claims) -> list[prepare.Prepared]:
        batch = ready(self)
        if ids[2] in [item.message_id for item in batch] and len(batch) == 3:
            self._held[:0] = [(batch[2], [])]  # as if its check were still running
            return batch[:2]
        return batch

    process = one_mail.process
    failures: list[int] = []

    def bob_fails_once(session, settings, message_id, *rest):
        result = process(session, settings, message_id, *rest)
        if message_id == ids[1] and not failures:
            failures.append(message_id)
            raise RuntimeError("boom")
        return result

    monkeypatch.setattr(Claims, "ready", two_first)
    sizes = iter([32])  # then one mail a batch: the held one alone would be the next batch
    monkeypatch.setattr(worker.BatchSize, "__call__", lambda self: next(sizes, 1))
    monkeypatch.setattr(one_mail, "process", bob_fails_once)
    stopping, work = threading.Event(), threading.Event()

    on_done = when_all_done(sessions, stopping)

    worker.run_worker(
        sessions, settings, lambda: clock.now, stopping=stopping, work=work, on_done=on_done
    )
    assert failures == [ids[1]]
    with sessions() as s:
        texts = list(s.scalars(select(MoveRecord.text).order_by(MoveRecord.ply)))
    assert texts == ["a7-a6", "a2-a3", "b7-b6"]
    assert statuses(sessions, ids) == [
        (InboxStatus.done, 1),
        (InboxStatus.done, 2),
        (InboxStatus.done, 1),
    ]


def test_the_worker_checks_first_logins_outside_its_thread_and_plays_every_move_once(
    shell, sessions, settings, clock, forgetful, monkeypatch
):
    ids = first_logins(shell, clock)
    real = passwords.hasher
    argon2_threads: list[str] = []

    class Recorded:
        def __init__(self, hasher: Any) -> None:
            self.hasher = hasher

        def verify(self, password_hash: str, password: str) -> bool:
            argon2_threads.append(threading.current_thread().name)
            return bool(self.hasher.verify(password_hash, password))

        def __getattr__(self, name: str) -> Any:
            return getattr(self.hasher, name)

    monkeypatch.setattr(passwords, "hasher", lambda settings: Recorded(real(settings)))
    stopping, work = threading.Event(), threading.Event()

    on_done = when_all_done(sessions, stopping)

    worker.run_worker(
        sessions, settings, lambda: clock.now, stopping=stopping, work=work, on_done=on_done
    )
    with sessions() as s:
        assert [s.get(Inbox, i).status for i in ids] == [InboxStatus.done] * 3
        texts = list(s.scalars(select(MoveRecord.text).order_by(MoveRecord.ply)))
        assert texts == ["a7-a6", "a2-a3", "b7-b6"]
    assert len(argon2_threads) == 2  # alice's and bob's first logins, once each
    assert all(name.startswith("pbmserv-pw") for name in argon2_threads), argon2_threads


def test_a_wrong_password_checked_ahead_is_not_checked_again(
    shell, sessions, settings, clock, forgetful, monkeypatch
):
    """A wrong password was checked ahead, then again inside the transaction (holding the
    write lock for argon2's time): two verifications per guess.  Its failure is remembered."""
    verified: list[str] = []
    real = passwords.hasher

    class Counted:
        def __init__(self, hasher: Any) -> None:
            self.hasher = hasher

        def verify(self, password_hash: str, password: str) -> bool:
            verified.append(password)
            return bool(self.hasher.verify(password_hash, password))

        def __getattr__(self, name: str) -> Any:
            return getattr(self.hasher, name)

    monkeypatch.setattr(passwords, "_REFUSED", OrderedDict(), raising=False)
    monkeypatch.setattr(passwords, "hasher", lambda settings: Counted(real(settings)))
    ids = first_logins(shell, clock, [("alice", "polis move 101 alice wrong-pw a7-a6")])
    worker.process_batch(sessions, settings, lambda: clock.now)
    assert verified == ["wrong-pw"]
    assert statuses(sessions, ids) == [(InboxStatus.done, 1)]
    with sessions() as s:
        answer = s.scalars(select(Outbox.body).order_by(Outbox.id.desc())).first()
    assert answer is not None and "wrong password for 'alice'" in answer
    # a new hash (the password changed) is checked again
    other = passwords.hasher(settings).hasher.hash("wrong-pw")
    assert passwords.check_password(settings, other, "wrong-pw", True)


def _hash_of(sessions, userid: str) -> str:
    from pbmserv.store.models import User

    with sessions() as s:
        return s.scalar(select(User.password_hash).where(User.userid == userid))


def test_a_failing_check_ahead_only_loses_the_shortcut(
    shell, sessions, settings, clock, forgetful, monkeypatch
):
    """The hashes cannot be read (the database away for a moment): the claimed mails are held
    all the same, without checks ahead; the transaction checks their passwords itself."""
    ids = first_logins(shell, clock)

    def away(*_args: Any) -> None:
        raise RuntimeError("database away")

    monkeypatch.setattr(accounts, "checks_needed", away)
    checks = HeldChecks(hold=set())
    claims = Claims(sessions, sessions, settings, lambda: clock.now, checks)
    claims.claim(32)
    batch = claims.ready()
    assert [item.message_id for item in batch] == ids
    assert checks.asked == []
    assert worker.process_claimed(sessions, settings, lambda: clock.now, batch)
    assert statuses(sessions, ids) == [(InboxStatus.done, 1)] * 3

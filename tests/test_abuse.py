"""The attacks of issue 16, played over SMTP against a running server (127.0.0.1), and what
must hold: forged senders cannot make us mail anyone else, limits never stop an authenticated
player, nobody can lock the owner out, no outgoing mail is lost, no password or code at rest,
one addr-spec per address, no backscatter."""

from __future__ import annotations

import base64
import logging
import mailbox
import smtplib
from datetime import timedelta
from email.utils import format_datetime, make_msgid
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from test_codes import mail
from test_gateway import SERVER, Gateway, body_of, free_port, reply_to_last
from waiting import wait_until

from pbmserv.cli.server import Server
from pbmserv.config import Settings
from pbmserv.domain import boards, passwords
from pbmserv.domain.housekeeping import housekeeping
from pbmserv.store.models import (
    AuthFailure,
    Board,
    Inbox,
    InboxStatus,
    MoveRecord,
    Outbox,
    OutboxStatus,
    Token,
    TokenKind,
    User,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def server(settings):
    settings.listen_port = free_port()
    running = Server(settings)
    running.start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def gateway(server, settings, sessions):
    return Gateway(settings, sessions)


def first_move(sessions, number: int = 101) -> tuple[str, str]:
    """The userid to move on board ``number`` and a legal move for them."""
    with sessions() as s:
        board = s.scalar(select(Board).where(Board.number == number))
        position = boards.position_of(board)
        mover = boards.user_to_move(board, position)
        return mover.userid, sorted(position.format_move(m) for m in position.legal_moves())[0]


def count(sessions, model, *where) -> int:
    with sessions() as s:
        return s.scalar(select(func.count()).select_from(model).where(*where)) or 0


def victims_mail(gateway: Gateway, victims: list[str]) -> dict[str, list[str]]:
    return {v: gateway.subjects(v) for v in victims if gateway.subjects(v)}


# ----------------------------------------------------------------------------- 1. silencing


def test_forged_mails_cannot_silence_an_authenticated_player(gateway, shell):
    gateway.settings.max_answers_per_day = 3
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mover, move = first_move(gateway.sessions)
    me = f"{mover}@example.org"
    for _ in range(8):  # From: the player, sent by mallory
        gateway.send(me, "help", envelope_from="mallory@evil.example")
    gateway.settle()
    subjects = gateway.subjects(me)
    assert subjects.count("pbmserv help") == 3
    assert subjects.count("pbmserv: answer limit reached") == 1
    gateway.send(me, f"polis move 101 {mover} pw-{mover} {move}")
    gateway.settle()
    assert count(gateway.sessions, MoveRecord) == 1  # executed...
    assert gateway.subjects(me)[-1].startswith("Polis Board 101")  # ...and answered


def test_a_players_own_address_has_its_answer_cap_and_its_notice(gateway, shell):
    """A player's confirmed address gets ``max_answers_per_day`` answers to mails without a
    password, then one notice: the cap on mails to one recipient (for addresses that never
    asked for our mail) silenced him before, without the notice."""
    gateway.settings.max_answers_per_day = 5
    gateway.settings.max_mails_per_recipient_per_day = 3
    try:
        shell.signup("alice")
        for _ in range(8):
            gateway.send("alice@example.org", "help")
        gateway.settle()
        subjects = gateway.subjects("alice@example.org")
        assert subjects.count("pbmserv help") == 5
        assert subjects.count("pbmserv: answer limit reached") == 1 and len(subjects) == 6
        for _ in range(5):  # a stranger's mailbox keeps the recipient cap
            gateway.send("zed@elsewhere.example", "help")
        gateway.settle()
        assert gateway.subjects("zed@elsewhere.example") == ["pbmserv help"] * 3
        with gateway.sessions() as s:  # what the operator reads: the setting to raise
            notes = list(
                s.scalars(
                    select(Inbox.last_error)
                    .where(Inbox.last_error.is_not(None))
                    .order_by(Inbox.id)  # PostgreSQL returns rows in any order without one
                )
            )
        assert notes == [
            *["not answered: daily answer limit reached (max_answers_per_day = 5)"] * 2,
            *[
                "not answered: daily limit of mails to this address reached"
                " (max_mails_per_recipient_per_day = 3)"
            ]
            * 2,
        ]
    finally:
        defaults = Settings()
        gateway.settings.max_answers_per_day = defaults.max_answers_per_day
        gateway.settings.max_mails_per_recipient_per_day = defaults.max_mails_per_recipient_per_day


# ----------------------------------------------------------------------------- 2. spam relay


def test_signup_mails_strangers_a_confirmation_per_account_and_nothing_else(gateway):
    victims = [f"v{i:02}@victims.example" for i in range(1, 41)]
    spammer = "spammer@evil.example"
    gateway.send(spammer, "hi", "signup sock1 Pw-sock1 " + " ".join(victims))
    gateway.settle()
    assert "at most 3 addresses" in body_of(gateway.mails(spammer)[-1])
    assert count(gateway.sessions, User) == 0 and victims_mail(gateway, victims) == {}
    gateway.settings.max_mails_per_recipient_per_day = 3
    gateway.send(spammer, "signup sock1 Pw-sock1 v01@victims.example v02@victims.example")
    for i in (2, 3, 4):  # v01 again: a code per account that names it, within its daily cap
        gateway.send(f"s{i}@evil.example", f"signup sock{i} Pw-sock{i} v01@victims.example")
    gateway.send(spammer, "signup spammer Pw-spam1")
    gateway.settle()
    refused = body_of(gateway.mails("s4@evil.example")[-1])
    assert "No mail could be sent to v01@victims.example today" in refused
    assert count(gateway.sessions, User, User.userid == "sock4") == 0  # not made
    gateway.settings.max_mails_per_recipient_per_day = Settings().max_mails_per_recipient_per_day
    reply_to_last(gateway, spammer)
    gateway.settle()
    gateway.send(spammer, "polis challenge spammer sock1", "BUY PILLS at pills.example")
    gateway.settle()  # sock1 confirmed no address: no board can seat it
    assert "sock1 has not confirmed an address yet" in body_of(gateway.mails(spammer)[-1])
    assert count(gateway.sessions, Board) == 0
    got = victims_mail(gateway, victims)
    assert set(got) == {"v01@victims.example", "v02@victims.example"}
    for victim, subjects in got.items():  # a code per account that named it, within its cap
        assert len(subjects) == (3 if victim.startswith("v01") else 1), (victim, subjects)
        assert all(subject.startswith("confirm ") for subject in subjects), (victim, subjects)
        assert all("PILLS" not in body_of(mail) for mail in gateway.mails(victim))


def test_challenge_lines_mail_nobody_but_the_challenger(gateway, shell):
    gateway.settings.max_challenges_per_day = 3
    shell.signup("spammer")
    for i in range(1, 11):  # (an account that confirmed no address cannot be challenged)
        shell.ok(f"signup s{i:02} Pw-s{i:02} v{i:02}@victims.example")
    victims = [f"v{i:02}@victims.example" for i in range(1, 11)]
    lines = "\n".join(f"polis challenge spammer s{i:02}" for i in range(1, 11))
    for _ in range(5):
        gateway.send("spammer@example.org", "hi", lines)
    gateway.settle()
    assert count(gateway.sessions, Token, Token.kind == TokenKind.challenge) == 3  # the cap
    assert count(gateway.sessions, Board) == 0
    assert len(gateway.subjects("spammer@example.org")) == 5  # one answer per mail
    assert len(gateway.mails()) == 5  # no player challenged got anything
    # once confirmed, the board goes to the one player challenged, nobody else
    first = gateway.mails("spammer@example.org")[0]
    gateway.send("spammer@example.org", f"Re: {first['Subject']}")
    gateway.settle()
    assert count(gateway.sessions, Board) == 1
    assert {v: len(s) for v, s in victims_mail(gateway, victims).items()} == {
        "v01@victims.example": 1
    }


def test_one_mail_of_many_commands_gets_one_answer(gateway):
    lines = "\n".join(["help", "list", "polis help"] * 3)
    gateway.send("victim@victims.example", "help", lines, envelope_from="mallory@evil.example")
    gateway.settle()
    assert len(gateway.mails("victim@victims.example")) == 1


def test_a_new_address_replaces_the_old_ones_only_once_confirmed(gateway, shell):
    shell.signup("alice", "bob")
    gateway.send("alice@example.org", "change address alice pw-alice new@example.net")
    gateway.settle()
    [confirmation] = gateway.mails("new@example.net")
    assert "new@example.net" in body_of(gateway.mails("alice@example.org")[-1])
    shell.ok("polis challenge bob alice")
    gateway.settle()
    assert gateway.subjects("alice@example.org")[-1] == "New Polis Board 101 bob"
    assert len(gateway.mails("new@example.net")) == 1  # nothing but the confirmation
    gateway.send("new@example.net", f"Re: {confirmation['Subject']}")
    gateway.settle()
    with gateway.sessions() as s:
        alice = s.scalar(select(User).where(User.userid == "alice"))
        assert [(a.address, a.confirmed) for a in alice.addresses] == [("new@example.net", True)]


# ----------------------------------------------------------------------------- 3. lock-out


def test_guesses_by_others_never_lock_the_owner_out(gateway, shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mover, move = first_move(gateway.sessions)
    owner = f"{mover}@example.org"
    for i in range(12):
        gateway.send("mallory@evil.example", f"polis move 101 {mover} guess{i} {move}")
    for i in range(6):  # guesses with the owner's address forged
        gateway.send(
            owner, f"polis move 101 {mover} forged{i} {move}", envelope_from="m@evil.example"
        )
    gateway.settle()
    with gateway.sessions() as s:
        slowed = gateway.settings.auth_slowdown_after
        assert s.get(AuthFailure, "sender:mallory@evil.example").count >= slowed
        assert s.get(AuthFailure, f"user:{mover}").count >= slowed
    answers = [body_of(m) for m in gateway.mails("mallory@evil.example")]
    assert "too many wrong passwords" in answers[-2] and "not answered" in answers[-1]
    assert count(gateway.sessions, MoveRecord) == 0
    # the right password from elsewhere is refused now (the account is throttled)...
    gateway.send("friend@elsewhere.example", f"polis move 101 {mover} pw-{mover} {move}")
    gateway.settle()
    assert count(gateway.sessions, MoveRecord) == 0
    assert "too many wrong passwords" in body_of(gateway.mails("friend@elsewhere.example")[-1])
    # ...but never from the owner's confirmed address
    gateway.send(owner, f"polis move 101 {mover} pw-{mover} {move}")
    gateway.settle()
    assert count(gateway.sessions, MoveRecord) == 1


def test_guesses_from_the_owners_forged_address_are_limited_too(gateway, shell, clock):
    """A From can be forged, so the owner's standing (his right password accepted whatever
    others guessed) lasts ``auth_owner_failures_per_day`` wrong passwords in 24 hours. Past
    them each wrong one holds his address off a while: a guess is refused before its password
    is checked, so a forger cannot guess for ever and tell the right guess by what it makes
    happen (here: a confirmation mail to his own address). The day over, the owner is back."""
    shell.signup("alice", "bob")
    gateway.settings.auth_owner_failures_per_day = 4
    owner, attacker = "bob@example.org", "mallory@evil.example"

    def guess(password: str) -> None:
        gateway.send(
            owner,
            f"change address bob {password} {attacker}",
            envelope_from="m@evil.example",
            headers={"Reply-To": owner},
        )
        gateway.settle()

    for i in range(4 + gateway.settings.auth_slowdown_after):  # the allowance, then the slow-down
        guess(f"guess{i}")
    answers = [body_of(m) for m in gateway.mails(owner)]
    assert all("wrong password" in a for a in answers[:4])
    with gateway.sessions() as s:
        assert s.get(AuthFailure, "owner:bob").count == 4  # the allowance; then held off
        assert s.get(AuthFailure, "user:bob") is None  # (others are not held off by them)
    guess("pw-bob")  # the right guess, now refused unchecked
    assert "too many wrong passwords" in body_of(gateway.mails(owner)[-1])
    assert gateway.mails(attacker) == []
    with gateway.sessions() as s:
        bob = s.scalar(select(User).where(User.userid == "bob"))
        assert [a.address for a in bob.addresses] == [owner]
    clock.advance(hours=24, minutes=1)  # the owner's day over: his right password goes through
    shell.ok("change password bob pw-bob secret-2", sender=owner, channel="mail")


def test_a_forgers_guesses_hold_the_owner_off_minutes_at_a_time(shell, clock):
    """23 mails forged from carol's address (and more from others) once shut her out for an
    hour at a time, again and again, until her game could be forfeited.  Now the wrong
    passwords from her address hold it off at most ``auth_owner_lockout_minutes`` after the
    last one, and nobody else's guesses hold it off at all (and she gets through at once with
    the unlock code the refusal mails her: the next test)."""
    shell.signup("alice", "carol")
    shell.ok("polis challenge alice carol")
    shell.ok("polis move 101 alice pw-alice a7-a6")
    owner, most = "carol@example.org", shell.settings.auth_owner_lockout_minutes
    line = "polis move 101 carol {} b2-b3"

    def guess(i, sender=owner):
        return shell(line.format(f"wrong{i}"), channel="mail", sender=sender).body

    for i in range(40):
        guess(i, "mallory@evil.example")
    for i in range(40):  # a forger guessing whenever he may, for hours
        said = guess(i)
        if "try again in" in said:
            wait = int(said.split("try again in ")[1].split()[0])
            assert wait <= most * 60, said
            clock.advance(seconds=wait)
    refused = shell(line.format("pw-carol"), channel="mail", sender=owner)
    assert refused.status == 1 and "try again in" in refused.body  # the forger guessed last
    clock.advance(minutes=most, seconds=1)
    shell.ok(line.format("pw-carol"), channel="mail", sender=owner)


def _last_answer(shell, to: str) -> str:
    return [row.body for row in shell.outbox() if row.recipient == to][-1]


def test_the_owner_held_off_by_a_forger_gets_through_with_the_unlock_code(shell, clock):
    """A forger mailing wrong passwords from carol's own address held her off nearly all
    day, one guess each time the hold ended.  The refusal, mailed to her address (which the
    forger cannot read), carries an unlock code; a mail with ``unlock CODE`` anywhere in it
    logs her in at once, its password still checked.  A forger's made-up or other account's
    code is no help, and the code is masked in the mail's kept copy."""
    from pbmserv.domain import tokens

    shell.signup("alice", "carol")
    shell.ok("polis challenge alice carol")
    shell.ok("polis move 101 alice pw-alice a7-a6")
    owner = "carol@example.org"
    line = "polis move 101 carol {} b2-b3"
    shell.settings.max_answers_per_day = 3  # the forger spends carol's answers too
    allowance = shell.settings.auth_owner_failures_per_day
    for i in range(allowance):
        mail(shell, owner, "moves", line.format(f"wrong{i}"))
    clock.advance(seconds=1)
    mail(shell, owner, "moves", line.format("pw-carol"))  # the owner, held off
    held = _last_answer(shell, owner)  # (past the day's answer cap: it carries a new code)
    assert "try again in" in held and "unlock " in held, held
    code = held.split("unlock ")[1].split()[0]
    mail(shell, owner, "moves", line.format("pw-carol"))  # held again: no second code this hold
    unlock_codes = select(func.count()).select_from(Token).where(Token.kind == TokenKind.unlock)
    with shell.sessions() as s:
        assert s.scalar(unlock_codes) == 1
    # a forger's made-up code, and bob's own code, hold him off as before
    shell.signup("bob")
    with shell.sessions() as s, s.begin():
        bob = s.scalar(select(User).where(User.userid == "bob"))
        bobs = tokens.issue(s, TokenKind.unlock, user_id=bob.id, now=clock.now, hours=24)
    for fake in ("ABCDEFGH23456789", bobs):
        mail(shell, owner, "moves", f"unlock {fake}\n" + line.format("wrong-x"))
        with shell.sessions() as s:
            assert s.get(AuthFailure, "owner:carol").count == allowance  # refused unchecked
    # a wrong password with the right code is checked, and counts
    mail(shell, owner, "moves", line.format("wrong-y") + f"\nunlock {code}")
    with shell.sessions() as s:
        assert s.get(AuthFailure, "owner:carol").count == allowance + 1
    mail(shell, owner, "moves", line.format("wrong-z"))  # the forger goes on guessing
    # the code after the move: read first, the move is played at once
    mail(shell, owner, "moves", line.format("pw-carol") + f"\nunlock {code}")
    assert "try again in" not in _last_answer(shell, owner)
    assert shell.mover("polis") == "alice"
    with shell.sessions() as s:
        kept = s.scalars(select(Inbox.raw).order_by(Inbox.id.desc())).first()
    assert code.encode() not in kept and b"unlock" in kept
    # the code is not used up: it works for the rest of its day
    shell.ok("unlock " + code, channel="mail", sender=owner)


def test_guesses_at_a_throttled_account_cost_no_argon2_check_ahead(shell, clock):
    """The worker checks passwords ahead of its transaction; for an account whose wrong
    passwords are throttled it must not, or forged guesses would each cost argon2's CPU."""
    from pbmserv.domain import accounts

    shell.signup("alice", "bob")
    slowed = shell.settings.auth_slowdown_after
    for i in range(slowed):  # wrong guesses from someone else
        line = f"change password alice guess{i} x1234"
        answer = shell(line, sender="mallory@evil.example", channel="mail")
        assert "wrong password" in answer.body
    with shell.sessions() as s:
        alice, bob = accounts.find_user(s, "alice"), accounts.find_user(s, "bob")
        assert s.get(AuthFailure, "user:alice").count == slowed
    pairs = [("alice", "pw-alice"), ("bob", "pw-bob")]
    accounts.preverify(shell.sessions, shell.settings, pairs, clock.now)
    assert not passwords.remembered(alice.password_hash, "pw-alice")  # not checked
    assert passwords.remembered(bob.password_hash, "pw-bob")
    # still throttled for others; the owner's own address is checked inside and gets in
    line = "change password alice pw-alice x1234"
    refused = shell(line, sender="friend@elsewhere.example", channel="mail")
    assert "too many wrong passwords" in refused.body
    line = "change password alice pw-alice secret-2"
    shell.ok(line, sender="alice@example.org", channel="mail")
    # once the slow-down has run out, a check ahead is made again
    clock.advance(minutes=shell.settings.auth_window_minutes + 1)
    accounts.preverify(shell.sessions, shell.settings, [("alice", "secret-2")], clock.now)
    with shell.sessions() as s:
        assert passwords.remembered(accounts.find_user(s, "alice").password_hash, "secret-2")


def test_a_right_password_clears_earlier_failures_but_never_a_lock_out(shell, sessions, clock):
    """The failures counted under a key go when the right password comes under it: in the
    same transaction (the worker's batch holds the row) or in a later one; a lock-out runs its
    time. (The owner's own address keeps its count: a day's allowance, see above.)"""
    from pbmserv.mail import inbox, worker

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mails = [  # one batch, one key; the first mail's two lines in one savepoint
        "polis move 101 alice wrong-1\npolis move 101 alice pw-alice\n",
        "polis move 101 alice wrong-2\n",
    ]
    for body in mails:
        raw = f"From: alice@elsewhere.example\nDate: {format_datetime(clock.now)}\nSubject: moves\n\n{body}".encode()
        inbox.store(sessions, raw, "alice@elsewhere.example", [], clock.now)
    done = worker.process_batch(sessions, shell.settings, lambda: clock.now)
    assert [d.status for d in done] == [InboxStatus.done] * 2
    with sessions() as s:  # counted, cleared, and counted again from one
        assert s.get(AuthFailure, "user:alice").count == 1
    for i in range(2):  # a later transaction of its own
        shell(f"change password bob guess{i} x1234", sender="bob@elsewhere.example", channel="mail")
    with sessions() as s:
        assert s.get(AuthFailure, "user:bob").count == 2
    shell.ok("change password bob pw-bob secret-2", sender="bob@elsewhere.example", channel="mail")
    with sessions() as s:
        assert s.get(AuthFailure, "user:bob") is None
        locked = AuthFailure(
            key="user:bob",
            count=shell.settings.auth_lockout_after,
            first_at=clock.now,
            last_at=clock.now - timedelta(minutes=shell.settings.auth_lockout_minutes + 1),
        )
        s.add(locked)
        s.commit()
    shell.ok("change password bob secret-2 secret-3", sender="bob@example.org", channel="mail")
    with sessions() as s:  # the owner got in; the run-out lock-out is left for the others
        assert s.get(AuthFailure, "user:bob").count == shell.settings.auth_lockout_after


def test_an_old_hash_is_replaced_at_the_next_right_password(shell):
    """A password hashed with older argon2 settings is hashed again with today's when its
    owner next logs in (argon2's check_needs_rehash)."""
    from argon2 import PasswordHasher

    from pbmserv.domain import accounts

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    old = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1).hash("pw-alice")
    with shell.sessions() as s, s.begin():
        accounts.find_user(s, "alice").password_hash = old
    shell.ok("polis move 101 alice pw-alice", sender="alice@example.org", channel="mail")
    with shell.sessions() as s:
        new = accounts.find_user(s, "alice").password_hash
    assert new != old and not accounts.hasher(shell.settings).check_needs_rehash(new)
    assert accounts.check_password(shell.settings, new, "pw-alice", True)


# ----------------------------------------------------------------------------- 4. challenges


def test_a_forged_challenge_creates_nothing_and_mails_only_the_challenger(gateway, shell):
    shell.signup("alice", "bob")
    gateway.send(
        "alice@example.org", "pylon challenge alice bob", envelope_from="mallory@evil.example"
    )
    gateway.send("mallory@evil.example", "pylon challenge alice bob")
    gateway.settle()
    assert count(gateway.sessions, Board) == 0
    assert gateway.subjects("bob@example.org") == []
    [pending] = gateway.mails("alice@example.org")
    assert pending["Subject"].startswith("confirm ") and "pylon challenge alice bob" in body_of(
        pending
    )
    assert "registered to one of the players" in body_of(gateway.mails("mallory@evil.example")[0])
    reply_to_last(gateway, "alice@example.org")  # alice wants it after all
    gateway.settle()
    assert gateway.subjects("bob@example.org") == ["New Pylon Board 101 alice"]


# ----------------------------------------------------------------------------- 5. outbox


def test_a_mail_left_sending_by_a_dead_sender_is_sent_again(
    settings, sessions, clock, shell, capsys, monkeypatch
):
    now = clock.now
    with sessions() as s, s.begin():
        for recipient, claimed in (
            ("dead@example.org", now - timedelta(hours=1)),
            ("live@example.org", now),
        ):
            s.add(
                Outbox(
                    recipient=recipient,
                    subject=f"to {recipient}",
                    body="x\n",
                    created=now,
                    status=OutboxStatus.sending,
                    attempts=1,
                    next_attempt=now,
                    claimed_at=claimed,
                    claimed_by="otherhost:4242",
                )
            )
    settings.listen_port = free_port()
    mailbox.Maildir(settings.maildir_path, create=True)
    server = Server(settings)
    server.start()
    try:
        gw = Gateway(settings, sessions)
        wait_until(lambda: gw.subjects("dead@example.org") == ["to dead@example.org"], "resent", 20)
        wait_until(  # the row is marked sent just after the Maildir has the mail
            lambda: count(sessions, Outbox, Outbox.status == OutboxStatus.sent) == 1,
            "the resent mail marked sent",
            20,
        )
        assert count(sessions, Outbox, Outbox.status == OutboxStatus.sending) == 1  # lease on
        from pbmserv.cli.main import main

        monkeypatch.setenv("PBMSERV_DATABASE_URL", settings.database_url)
        monkeypatch.setenv("PBMSERV_NOW", settings.now)
        assert main(["--data-dir", str(settings.data_dir), "mail", "outbox", "list"]) == 0
        listed = capsys.readouterr().out
        assert "sending" in listed and "live@example.org" in listed
        assert "dead@example.org" not in listed
        assert main(["--data-dir", str(settings.data_dir), "mail", "outbox", "show", "2"]) == 0
        assert "Claimed by otherhost:4242" in capsys.readouterr().out
        retry = ["--data-dir", str(settings.data_dir), "mail", "outbox", "retry"]
        assert main([*retry, "2"]) == 1  # its lease is live: refused without --force
        assert "--force 2" in capsys.readouterr().err
        assert main([*retry, "--force", "2"]) == 0  # (that sender is known dead)
        server.outgoing.set()
        wait_until(
            lambda: gw.subjects("live@example.org") == ["to live@example.org"], "retried", 20
        )
        assert main(["--data-dir", str(settings.data_dir), "mail", "outbox", "retry", "99"]) == 1
    finally:
        server.stop()


# ----------------------------------------------------------------------------- 6. at rest


def stored_bytes(gateway: Gateway) -> list[bytes]:
    """All the store holds, after the clock tick's clean-up has emptied SQLite's WAL: the
    database files byte for byte, or (PostgreSQL) every row of every table as text."""
    housekeeping(gateway.sessions, gateway.settings, gateway.settings.clock())
    if gateway.settings.url.startswith("sqlite"):
        data = Path(gateway.settings.url.removeprefix("sqlite:///"))
        return [p.read_bytes() for p in data.parent.glob(data.name + "*") if p.is_file()]
    with gateway.sessions() as s:
        tables = s.scalars(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))
        return [
            "\n".join(s.scalars(text(f'SELECT t::text FROM "{name}" t')).all()).encode()
            for name in tables.all()
        ]


def test_no_password_at_rest(gateway, shell, caplog):
    caplog.set_level(logging.INFO)  # as `pbmserv serve` logs, and all of pbmserv's own
    caplog.set_level(logging.DEBUG, logger="pbmserv")
    caplog.set_level(logging.WARNING, logger="mail.log")  # aiosmtpd's traffic, as in serve
    passwords = ["Zq8-alpha", "Zq8-bravo", "Zq8-wrong", "Zq8-delta", "Zq8-echo"]
    gateway.send("alice@example.org", "signup alice Zq8-alpha")
    gateway.send("bob@example.org", "hello", "signup bob Zq8-bravo\n")
    gateway.settle()
    for address in ("alice@example.org", "bob@example.org"):
        reply_to_last(gateway, address)
    gateway.settle()
    shell.ok("polis challenge alice bob")
    mover, move = first_move(gateway.sessions)
    pw = {"alice": "Zq8-alpha", "bob": "Zq8-bravo"}[mover]
    gateway.send(f"{mover}@example.org", f"polis move 101 {mover} Zq8-wrong {move}", "Oops?")
    encoded = base64.b64encode(f"polis move 101 {mover} {pw} {move}\r\n".encode()).decode()
    raw = (
        f"From: {mover}@example.org\r\nTo: {SERVER}\r\nSubject: my move\r\n"
        f"Date: {format_datetime(gateway.now())}\r\n"
        f"Message-ID: {make_msgid(domain='client.example')}\r\nMIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        f"{encoded}\r\n"
    ).encode()
    gateway.send(f"{mover}@example.org", "", raw=raw)
    gateway.send("alice@example.org", "change password alice Zq8-alpha Zq8-delta")
    gateway.send("bob@example.org", "password reset bob")
    gateway.settle()
    assert count(gateway.sessions, MoveRecord) == 1
    reset = next(m for m in gateway.mails("bob@example.org") if "reset" in str(m["Subject"]))
    code = body_of(reset).split("password new bob ")[1].split()[0]
    gateway.send("bob@example.org", f"password new bob {code} Zq8-echo")
    gateway.settle()
    assert shell.ok("change password bob Zq8-echo Zq8-echo2", channel="shell")
    with gateway.sessions() as s:
        assert all(b"X-Pbmserv-Masked" in r for r in s.scalars(select(Inbox.raw)))
    stored = stored_bytes(gateway)
    mails = [m for m in gateway.settings.maildir_path.rglob("*") if m.is_file()]
    logs = "\n".join(r.getMessage() for r in caplog.records)
    assert stored and len(mails) >= 8
    for secret in passwords:
        for content in stored + [m.read_bytes() for m in mails]:
            assert secret.encode() not in content, secret
            assert secret.encode().hex().encode() not in content, secret  # bytea as text
        assert secret not in logs


def test_no_code_at_rest_once_its_mail_is_sent(gateway, shell, capsys, monkeypatch):
    """A stranger asks for a code to someone else's account; the copy of it we mailed must
    not be readable in the store (``select body from outbox``) once the mail is sent."""
    shell.signup("bob")
    gateway.send("alice@example.org", "signup alice Zq8-alpha")  # the answer is the code mail
    gateway.send("mallory@evil.example", "signup carol Zq8-carol carol@example.org")
    gateway.send("mallory@evil.example", "password reset bob")
    gateway.settle()
    alice, carol = (gateway.mails(f"{u}@example.org")[-1] for u in ("alice", "carol"))
    reset = gateway.mails("bob@example.org")[-1]
    codes = [str(m["Subject"]).split()[1] for m in (alice, carol)]
    codes.append(body_of(reset).split("password new bob ")[1].split()[0])
    assert all(code in body_of(m) for code, m in zip(codes, (alice, carol, reset), strict=True))
    reply_to_last(gateway, "alice@example.org")  # one code used, two still good
    gateway.settle()
    assert count(gateway.sessions, Outbox, Outbox.status != OutboxStatus.sent) == 0
    with gateway.sessions() as s:
        kept = s.scalars(select(Outbox).order_by(Outbox.id)).all()
        assert {row.body for row in kept} == {""} and all(row.dropped_bytes for row in kept)
        assert all(row.message_id and row.sent_at and row.recipient for row in kept)
        assert [row.subject for row in kept if row.subject.startswith("confirm")] == [
            "confirm ********",
            "confirm ********",
        ]
        reset_id = next(row.id for row in kept if row.recipient == "bob@example.org")
    for content in stored_bytes(gateway):
        for secret in [*codes, "Zq8-alpha", "Zq8-carol"]:
            assert secret.encode() not in content, secret
            assert secret.encode().hex().encode() not in content, secret  # bytea as text
    from pbmserv.cli.main import main

    monkeypatch.setenv("PBMSERV_DATABASE_URL", gateway.settings.database_url)
    monkeypatch.setenv("PBMSERV_NOW", gateway.settings.now)
    data = ["--data-dir", str(gateway.settings.data_dir)]
    assert main([*data, "mail", "outbox", "show", str(reset_id)]) == 0
    shown = capsys.readouterr().out
    assert "To: bob@example.org" in shown and "Message-ID: <" in shown
    assert "dropped once the mail was sent" in shown
    assert main([*data, "mail", "outbox", "retry", str(reset_id)]) == 1  # nothing to resend
    assert "dropped" in capsys.readouterr().err


# ----------------------------------------------------------------------------- 7. addresses


def test_one_addr_spec_per_address_and_replies_to_the_parsed_address(gateway):
    gateway.send("eve@evil.example", "signup xavier Pw-xxxx inj@example.org,root")
    gateway.send("eve@evil.example", "signup yvonne Pw-yyyy root")
    gateway.settle()
    assert count(gateway.sessions, User) == 0
    bodies = [body_of(m) for m in gateway.mails("eve@evil.example")]
    assert len(bodies) == 2 and all("not a mail address" in b for b in bodies), bodies
    for sender in (
        "=?utf-8?q?Eve=0D=0ABcc=3A_victim=40victims=2Eexample?= <eve@evil.example>",
        "=?utf-8?q?victim=40victims=2Eexample?=",
    ):
        raw = (
            f"From: {sender}\r\nTo: {SERVER}\r\nSubject: help\r\n"
            f"Date: {format_datetime(gateway.now())}\r\n"
            f"Message-ID: {make_msgid(domain='client.example')}\r\n\r\nhi\r\n"
        ).encode()
        gateway.send("eve@evil.example", "", raw=raw)
    gateway.settle()
    assert gateway.mails("victim@victims.example") == []
    assert {m["To"] for m in gateway.mails()} == {"eve@evil.example"}


def test_a_message_id_holding_an_encoded_word_injects_no_header_into_the_answer(gateway):
    """``<=?utf-8?b?...?=@x>`` is a valid Message-ID; our answer's In-Reply-To and References
    carried it, the ``email`` package decoded the encoded word, and the line breaks and
    headers it held (a Bcc:, or a blank line and a body of the forger's) were written into
    the answer sent to the forged address."""
    hostile = base64.b64encode(b"x\r\nX-Injected: yes\r\n\r\nClick http://evil.example").decode()
    mid = f"<=?utf-8?b?{hostile}?=@client.example>"
    raw = (
        f"From: victim@victims.example\r\nTo: {SERVER}\r\nSubject: help\r\n"
        f"Date: {format_datetime(gateway.now())}\r\n"
        f"Message-ID: {mid}\r\nReferences: <a@client.example> {mid}\r\n\r\nhi\r\n"
    ).encode()
    gateway.send("victim@victims.example", "", raw=raw)
    gateway.settle()
    (answer,) = gateway.mails("victim@victims.example")
    assert "X-Injected" not in answer and "evil.example" not in answer.as_string()
    assert answer["In-Reply-To"] is None and answer["References"] == "<a@client.example>"
    assert body_of(answer).startswith("pbmserv -- play-by-email server")


# ----------------------------------------------------------------------------- 8. echoes


def test_misspelt_and_quoted_commands_never_echo_a_password(gateway, shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    for line in (
        "polsi move 101 alice Zq8-typo1 d2-d3",
        "polis mvoe 101 alice Zq8-typo2 d2-d3",
        "chnage password alice Zq8-typo3 Zq8-typo4",
        'polis move 101 alice "Zq8 typo5" d2-d3',
    ):
        gateway.send("alice@example.org", line)
    gateway.settle()
    text_all = "\n".join(body_of(m) + str(m["Subject"]) for m in gateway.mails("alice@example.org"))
    for secret in ("Zq8-typo1", "Zq8-typo2", "Zq8-typo3", "Zq8-typo4", "Zq8 typo5"):
        assert secret not in text_all, secret


# ----------------------------------------------------------------------------- 9. backscatter


def test_unknown_recipients_are_refused_at_rcpt_and_never_bounced(gateway):
    with smtplib.SMTP("127.0.0.1", gateway.port, timeout=10) as smtp:
        with pytest.raises(smtplib.SMTPRecipientsRefused) as info:
            smtp.sendmail(
                "forged@victims.example", ["nobody@example.org"], b"Subject: x\r\n\r\nx\r\n"
            )
        assert info.value.recipients["nobody@example.org"][0] == 550
    many = [SERVER] + [f"r{i}@example.org" for i in range(2000)]
    with smtplib.SMTP("127.0.0.1", gateway.port, timeout=30) as smtp:
        refused = smtp.sendmail("forged@victims.example", many, b"Subject: help\r\n\r\nhi\r\n")
    assert len(refused) == 2000 and {code for code, _ in refused.values()} <= {550, 452}
    gateway.settle()
    assert count(gateway.sessions, Inbox) == 1
    assert len(gateway.mails("forged@victims.example")) == 1  # the help answer, no bounce
    postfix = (ROOT / "deploy" / "postfix.md").read_text()
    for needed in (
        "relay_recipient_maps",
        "smtpd_recipient_restrictions",
        "reject_unlisted_recipient",
        "smtpd_client_message_rate_limit",
    ):
        assert needed in postfix


# ----------------------------------------------------------------------------- 10. repeats


def test_a_message_id_sent_first_by_someone_else_drops_no_mail(operator, gateway, shell, caplog):
    """A Message-ID was a mail's key for every sender: mallory sent alice's next (guessable,
    or leaked) Message-ID first, and alice's mail was taken for a repeat of his, unanswered
    and not even listed.  A repeat is now the same Message-ID from the same senders, and the
    operator sees each one (logged, counted on the row it repeats).  (``operator`` comes
    before ``gateway``: it sets environment variables, which must not change while the
    server's threads run; setenv is not thread-safe, and under faketime, which reads the
    environment at every clock call, the process crashed.)"""
    caplog.set_level(logging.WARNING, logger="pbmserv.inbox")
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mid = "<predictable-1@alice.example.org>"
    gateway.send("mallory@evil.example", "hello", message_id=mid)
    gateway.send("alice@example.org", "help", message_id=mid, envelope_from="mallory@evil.example")
    gateway.settle()
    gateway.send("alice@example.org", "polis show 101", message_id=mid)
    gateway.settle()
    answers = gateway.subjects("alice@example.org")
    assert answers[-1] == "Polis Board 101 alice"
    assert count(gateway.sessions, Inbox) == 3  # three senders: three mails
    assert not caplog.records
    gateway.send("alice@example.org", "polis show 101", message_id=mid)  # a real re-delivery
    gateway.settle()
    with gateway.sessions() as s:
        rows = s.scalars(select(Inbox).order_by(Inbox.id)).all()
    assert [row.repeats for row in rows] == [0, 0, 1]
    assert len(rows) == 3 and gateway.subjects("alice@example.org") == answers
    assert [r.getMessage() for r in caplog.records] == [
        f"repeated delivery of mail {rows[2].id} (envelope from 'alice@example.org') "
        "acknowledged and not stored again"
    ]
    assert "repeated deliveries dropped: 1" in operator("status")[1]
    listed = operator("mail", "list", "--all")[1].splitlines()
    assert [line.split()[0] for line in listed if "(+1 repeated)" in line] == [str(rows[2].id)]
    assert "Delivered again 1 times" in operator("mail", "show", str(rows[2].id))[1]


def test_caps_are_settings_listed_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    assert "## Security" in readme
    for name in (
        "max_answers_per_day",
        "max_stranger_answers_per_day",
        "max_mails_per_recipient_per_day",
        "max_challenges_per_day",
        "max_signup_addresses",
        "max_messages_per_pair_per_day",
        "max_messages_per_recipient_per_day",
        "token_hours",
        "unconfirmed_account_days",
        "outbox_lease_minutes",
        "inbox_retention_days",
        "stale_mail_days",
        "auth_owner_failures_per_day",
        "auth_owner_lockout_minutes",
    ):
        assert hasattr(Settings(), name) and name in readme, name


# ----------------------------------------------------------------------------- codes


def test_codes_are_hashed_expire_and_work_once(gateway, shell, clock):
    gateway.send("carol@example.org", "signup carol Pw-carol")
    gateway.settle()
    [confirmation] = gateway.mails("carol@example.org")
    code = str(confirmation["Subject"]).split()[1]
    with gateway.sessions() as s:
        hashes = list(s.scalars(select(Token.token_hash)))
        assert code not in hashes and len(hashes) == 1
    gateway.send("carol@example.org", f"confirm {code}")
    gateway.send("carol@example.org", f"confirm {code}")
    gateway.settle()
    assert "used already" in body_of(gateway.mails("carol@example.org")[-1])
    # a password reset code goes to the confirmed address only, whoever asks
    gateway.send("mallory@evil.example", "password reset carol")
    gateway.settle()
    assert gateway.mails("mallory@evil.example")[0]["Subject"] == "pbmserv password reset"
    reset = gateway.mails("carol@example.org")[-1]
    assert "password new carol" in body_of(reset)
    reset_code = body_of(reset).split("password new carol ")[1].split()[0]
    gateway.send("mallory@evil.example", "password new carol Wrong-code1 Pw-mallory")
    gateway.send("carol@example.org", f"password new carol {reset_code} Pw-carol2")
    gateway.send("carol@example.org", f"password new carol {reset_code} Pw-carol3")
    gateway.settle()
    assert "used already" in body_of(gateway.mails("carol@example.org")[-1])
    assert shell("change password carol Pw-carol2 Pw-carol4").status == 0
    # expiry: a new code is no good after token_hours
    shell.signup("dave")
    with gateway.sessions() as s, s.begin():
        from pbmserv.domain import tokens

        dave = s.scalar(select(User).where(User.userid == "dave"))
        late = tokens.issue(
            s, TokenKind.reset, user_id=dave.id, now=clock.now - timedelta(hours=49), hours=48
        )
    assert "expired" in shell(f"password new dave {late} Pw-dave2").body


def test_unconfirmed_accounts_expire(gateway, shell, clock):
    shell.signup("alice")  # confirmed: set in the shell
    gateway.send("ghost@example.org", "signup ghost Pw-ghost")
    gateway.settle()
    assert count(gateway.sessions, User) == 2
    housekeeping(gateway.sessions, gateway.settings, clock.now + timedelta(days=2))
    assert count(gateway.sessions, User) == 2
    lines = housekeeping(gateway.sessions, gateway.settings, clock.now + timedelta(days=4))
    assert "ghost" in "\n".join(lines)
    with gateway.sessions() as s:
        assert list(s.scalars(select(User.userid))) == ["alice"]

"""A mail sent again after the inbox let it go (``inbox_retention_days``) is never run again:
its key is kept while a replay of it would run, and a mail dated more than
``stale_mail_days`` before it came is taken for a replay.  Over SMTP on 127.0.0.1, to a
running server on the test's clock, which the tests move past the retention."""

from __future__ import annotations

from datetime import timedelta
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

import pytest
from sqlalchemy import select
from test_abuse import count, first_move
from test_gateway import SERVER, Gateway, body_of, free_port

from pbmserv.cli.server import Server
from pbmserv.domain.housekeeping import housekeeping
from pbmserv.store.models import Inbox, InboxStatus, InboxTombstone, MoveRecord


@pytest.fixture
def gateway(settings, sessions, clock):
    """A server whose listener and worker read the test's clock (no clock ticks: the tests run
    the clean-up themselves, and no game is forfeited while they move the time)."""
    settings.listen_port = free_port()
    server = Server(settings, clock=lambda: clock.now, robots_and_clocks=False)
    server.start()
    try:
        yield Gateway(settings, sessions, clock)
    finally:
        server.stop()


def mail_bytes(sender: str, subject: str, *, dated=None, headers=None) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, SERVER, subject
    msg["Message-ID"] = make_msgid(domain="client.example")
    if dated is not None:
        msg["Date"] = format_datetime(dated)
    for name, value in (headers or {}).items():
        msg[name] = value
    msg.set_content("Your move.\n")
    return msg.as_bytes(policy=policy.SMTP)


def later(gateway: Gateway, clock, days: float) -> None:
    """``days`` later, with the clock tick's clean-up run."""
    clock.advance(days=days)
    housekeeping(gateway.sessions, gateway.settings, clock.now)


def moves(gateway: Gateway) -> int:
    return count(gateway.sessions, MoveRecord)


def a_move(gateway: Gateway, shell, clock, *, dated: bool) -> bytes:
    """alice's first move on a new board, by mail, played: its bytes, to send again."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mover, move = first_move(gateway.sessions)
    line = f"polis move 101 {mover} pw-{mover} {move}"
    raw = mail_bytes(f"{mover}@example.org", line, dated=clock.now if dated else None)
    gateway.send(f"{mover}@example.org", "", raw=raw)
    gateway.settle()
    assert moves(gateway) == 1
    return raw


def test_a_dated_mail_sent_again_after_the_retention_is_refused_and_says_why(gateway, shell, clock):
    raw = a_move(gateway, shell, clock, dated=True)
    sender = "alice@example.org" if b"From: alice" in raw else "bob@example.org"
    answered = len(gateway.mails(sender))
    later(gateway, clock, gateway.settings.inbox_retention_days + 1)
    with gateway.sessions() as s:  # the mail is gone, and so is its key: its Date tells
        assert s.scalars(select(Inbox)).all() == []
        assert s.scalars(select(InboxTombstone)).all() == []
    gateway.send(sender, "", raw=raw)
    gateway.settle()
    assert moves(gateway) == 1  # not played again
    refusal = gateway.mails(sender)[answered:]
    assert [str(m["Subject"]) for m in refusal] == ["pbmserv Error"]
    said = " ".join(body_of(refusal[0]).split())
    assert said == (
        "Error: your mail was not run. The mail this answers is dated 2026-11-01 12:00 UTC, "
        "and it came on 2026-12-02 12:00 UTC. A mail older than 14 days is taken for a replay "
        "(the same mail sent again, by a broken relay or by someone who kept a copy of it), "
        "so none of its commands was carried out. If you sent it, send the commands again in "
        "a new mail. If you wrote it just now, the date of your computer or phone is wrong: "
        "set it right first, or your new mail is refused too."
    )
    with gateway.sessions() as s:
        [row] = s.scalars(select(Inbox)).all()
        assert row.status is InboxStatus.done
        assert row.last_error == (
            "not run: dated 2026-11-01 12:00 UTC, 31 d 0 h before it came (more than 14 days: "
            "taken for a replay)"
        )
        assert b"pw-" not in row.raw  # its password masked in the copy kept, as any mail's
    said = " ".join(shell.ok("help").body.split())
    assert "a mail dated more than 14 days before it reaches the server is taken" in said


def undated_move(gateway: Gateway, shell, *, date: str | None = None) -> bytes:
    """A move mailed with no Date line (or ``date`` as its Date): its bytes."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mover, move = first_move(gateway.sessions)
    line = f"polis move 101 {mover} pw-{mover} {move}"
    raw = mail_bytes(f"{mover}@example.org", line, headers={"Date": date} if date else None)
    gateway.send(f"{mover}@example.org", "", raw=raw)
    gateway.settle()
    return raw


def errors(gateway: Gateway, to: str) -> list:
    return [m for m in gateway.mails(to) if str(m["Subject"]) == "pbmserv Error"]


@pytest.mark.parametrize("date", [None, "yesterday, around noon", "Fri, 31 Feb 2026 25:61 +0000"])
def test_a_mail_without_a_date_runs_nothing_and_says_why(gateway, shell, clock, date):
    """A mail without a Date could not be told from its replay, so its key was kept for ever:
    anyone could grow the kept keys without end with distinct dateless mails.  It runs nothing
    now (as one whose Date cannot be read), its sender is told, and no key of it is kept."""
    raw = undated_move(gateway, shell, date=date)
    assert moves(gateway) == 0
    sender = "alice@example.org" if b"From: alice" in raw else "bob@example.org"
    [refusal] = errors(gateway, sender)
    assert str(refusal["Subject"]) == "pbmserv Error"
    said = " ".join(body_of(refusal).split())
    assert said == (
        "Error: your mail was not run. The mail this answers has no Date line (or one that "
        "cannot be read). This server tells a mail sent again (by a broken relay or by "
        "someone who kept a copy of it) from the first one by its date, so it runs no mail "
        "without one: none of its commands was carried out. Every mail program writes the "
        "Date line itself. Send the commands again in a new mail, written in a mail program "
        "(if a script of yours sends them, have it add a Date line, as RFC 5322 requires)."
    )
    assert "pw-" not in said
    with gateway.sessions() as s:
        [row] = s.scalars(select(Inbox)).all()
        assert row.last_error == (
            "not run: no Date line that can be read (a replay could not be told from it)"
        )
        assert b"pw-" not in row.raw
    later(gateway, clock, gateway.settings.inbox_retention_days + 1)
    assert (count(gateway.sessions, Inbox), count(gateway.sessions, InboxTombstone)) == (0, 0)
    gateway.send(sender, "", raw=raw)  # and its replay is refused again
    gateway.settle()
    assert moves(gateway) == 0
    assert len(errors(gateway, sender)) == 2


@pytest.mark.parametrize(
    ("age_days", "refusal"),
    [(None, "not run: no Date line"), (20, "not run: dated 2026-10-12 12:00 UTC")],
    ids=["undated", "stale"],
)
def test_a_refused_automatic_mail_gets_no_answer_and_refusals_are_capped(
    gateway, shell, clock, age_days, refusal
):
    """A mail without a Date, or dated more than stale_mail_days before it came: automatic
    mail gets silence, and a stranger's address (anyone can forge it) the caps."""
    dated = None if age_days is None else clock.now - timedelta(days=age_days)
    auto = mail_bytes(
        "alice@example.org", "help", dated=dated, headers={"Auto-Submitted": "auto-replied"}
    )
    gateway.send("alice@example.org", "", raw=auto)
    gateway.settings.max_stranger_answers_per_day = 2
    for _ in range(4):
        raw = mail_bytes("carol@example.org", "help", dated=dated)
        gateway.send("carol@example.org", "", raw=raw)
    gateway.settle()
    assert gateway.mails("alice@example.org") == []
    assert [str(m["Subject"]) for m in gateway.mails("carol@example.org")] == [
        "pbmserv Error",
        "pbmserv Error",
        "pbmserv: answer limit reached",  # then silence
    ]
    with gateway.sessions() as s:
        notes = [row.last_error for row in s.scalars(select(Inbox).order_by(Inbox.id))]
    assert notes[0] == "not answered: Auto-Submitted: auto-replied"
    assert notes[-1].startswith(refusal) and "; not answered: " in notes[-1]


def test_a_key_kept_with_no_date_before_goes_after_stale_mail_days(gateway, shell, clock):
    """A key kept by the code before (a dateless mail's, kept for ever) is kept
    ``stale_mail_days`` from the first clean-up that finds it, then goes."""
    with gateway.sessions() as s, s.begin():
        s.add(InboxTombstone(dedup_key="sha256:kept-for-ever", dated=None))
    later(gateway, clock, 1)
    later(gateway, clock, 14)
    assert count(gateway.sessions, InboxTombstone) == 1
    later(gateway, clock, 0.1)
    assert count(gateway.sessions, InboxTombstone) == 0


def test_a_dated_key_is_kept_while_a_replay_would_still_run(gateway, shell, clock):
    """With a retention shorter than ``stale_mail_days``, the key outlives the mail until its
    Date tells a replay by itself."""
    gateway.settings.inbox_retention_days = 2
    raw = a_move(gateway, shell, clock, dated=True)
    sent = len(gateway.mails())
    later(gateway, clock, 3)
    gateway.send("alice@example.org", "", raw=raw)
    gateway.settle()
    assert (moves(gateway), len(gateway.mails()), count(gateway.sessions, Inbox)) == (1, sent, 0)
    later(gateway, clock, 12)  # 15 days after its Date: the key goes, the Date refuses it
    assert count(gateway.sessions, InboxTombstone) == 0
    gateway.send("alice@example.org", "", raw=raw)
    gateway.settle()
    assert moves(gateway) == 1
    assert [str(m["Subject"]) for m in gateway.mails()[sent:]] == ["pbmserv Error"]


def test_a_sender_whose_clock_is_far_behind_is_told_to_set_it_right(gateway, shell, clock):
    """A phone whose clock is a year behind dates every mail a year ago: each is refused, so
    'send the commands again in a new mail' alone could never work; the answer says why."""
    shell.signup("alice")
    raw = mail_bytes("alice@example.org", "help", dated=clock.now - timedelta(days=365))
    gateway.send("alice@example.org", "", raw=raw)
    gateway.settle()
    [refusal] = gateway.mails("alice@example.org")
    said = " ".join(body_of(refusal).split())
    assert "dated 2025-11-01 12:00 UTC, and it came on 2026-11-01 12:00 UTC" in said
    assert said.endswith(
        "If you wrote it just now, the date of your computer or phone is wrong: set it right "
        "first, or your new mail is refused too."
    )


@pytest.mark.parametrize(
    "offset", [timedelta(days=-13), timedelta(hours=-30), timedelta(hours=5), timedelta(days=13)]
)
def test_honest_mail_delayed_or_from_a_clock_that_is_off_runs(gateway, shell, clock, offset):
    """Mail delayed in queues for days, or from a sender whose clock is off by hours (or days
    ahead: its key is then kept until its Date is old)."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mover, move = first_move(gateway.sessions)
    line = f"polis move 101 {mover} pw-{mover} {move}"
    raw = mail_bytes(f"{mover}@example.org", line, dated=clock.now + offset)
    gateway.send(f"{mover}@example.org", "", raw=raw)
    gateway.settle()
    assert moves(gateway) == 1
    later(gateway, clock, gateway.settings.inbox_retention_days + 1)
    gateway.send(f"{mover}@example.org", "", raw=raw)  # and its replay never runs
    gateway.settle()
    assert moves(gateway) == 1


def test_a_fresh_date_written_above_the_old_one_does_not_make_a_replay_run(gateway, shell, clock):
    """A replay with a new Date header added above its own (DKIM still verifies: it signs the
    lowest Date) was read by its first, so once its key had gone it ran again.  RFC 5322
    allows one Date: of several, the earliest tells a replay."""
    raw = a_move(gateway, shell, clock, dated=True)
    sender = "alice@example.org" if b"From: alice" in raw else "bob@example.org"
    answered = len(gateway.mails(sender))
    later(gateway, clock, gateway.settings.inbox_retention_days + 1)
    fresh = f"Date: {format_datetime(clock.now)}\r\n".encode()
    gateway.send(sender, "", raw=fresh + raw)
    gateway.settle()
    refusal = gateway.mails(sender)[answered:]
    assert [str(m["Subject"]) for m in refusal] == ["pbmserv Error"]
    assert "Error: your mail was not run." in body_of(refusal[0]), body_of(refusal[0])
    with gateway.sessions() as s:
        [row] = s.scalars(select(Inbox)).all()
        assert row.last_error.startswith("not run: dated 2026-11-01 12:00 UTC")


def test_a_replay_whose_date_is_pushed_far_down_its_header_is_still_dated(gateway, shell, clock):
    """The key and the Date were read from a mail's first 64 KB only: a replay with 70 KB of
    header lines added at its top (DKIM still verifies) had neither Message-ID nor Date, and
    ran again once its key had gone.  They are read as far as the parser reads a header."""
    raw = a_move(gateway, shell, clock, dated=True)
    sender = "alice@example.org" if b"From: alice" in raw else "bob@example.org"
    answered = len(gateway.mails(sender))
    later(gateway, clock, gateway.settings.inbox_retention_days + 1)
    padding = b"".join(b"X-Pad-%d: %s\r\n" % (n, b"x" * 980) for n in range(70))
    gateway.send(sender, "", raw=padding + raw)
    gateway.settle()
    refusal = gateway.mails(sender)[answered:]
    assert [str(m["Subject"]) for m in refusal] == ["pbmserv Error"]
    assert "Error: your mail was not run." in body_of(refusal[0]), body_of(refusal[0])


def test_a_new_message_id_written_above_the_old_one_does_not_make_a_replay_new(
    gateway, shell, clock
):
    """A replay with a new Message-ID header added above its own (DKIM still verifies: it
    signs the lowest) got a new key from its first Message-ID, and ran again.  RFC 5322 allows
    one Message-ID: the lowest, the one a signature holds, keys the mail."""
    gateway.settings.inbox_retention_days = 2
    raw = a_move(gateway, shell, clock, dated=True)
    sender = "alice@example.org" if b"From: alice" in raw else "bob@example.org"
    sent = len(gateway.mails())
    later(gateway, clock, 1)
    gateway.send(sender, "", raw=b"Message-ID: <other@forger.example>\r\n" + raw)
    gateway.settle()
    assert (len(gateway.mails()), count(gateway.sessions, Inbox)) == (sent, 1)  # a repeat
    later(gateway, clock, 2)  # the mail is gone, its key kept
    gateway.send(sender, "", raw=b"Message-ID: <another@forger.example>\r\n" + raw)
    gateway.settle()
    assert (len(gateway.mails()), count(gateway.sessions, Inbox)) == (sent, 0)


def test_the_key_is_read_from_a_bounded_header_whatever_its_line_breaks():
    """The key's header is read up to the parser's 1,000 lines, a lone CR a line break as the
    parser reads it: a mail of 200,000 CR-ended header lines is read in no more time."""
    import time

    from pbmserv.mail.inbox import dedup_key

    head = b"From: a@x.example\rMessage-ID: <1@x.example>\r"
    began = time.thread_time()
    key = dedup_key(head + b"X: y\r" * 200_000 + b"\rhi\r", "a@x.example")
    assert time.thread_time() - began < 0.1  # (read whole: 0.3 s, 2 ms now)
    assert key == dedup_key(head.replace(b"\r", b"\r\n") + b"\r\nhi\r\n", "a@x.example")


def test_a_mail_dated_far_ahead_runs_nothing_and_keeps_no_key_for_ever(gateway, shell, clock):
    """A mail dated next year ran, and its key was kept until its Date was 14 days old: a Date
    in the year 9999 kept one for ever.  A Date more than ``stale_mail_days`` ahead of the
    mail's arrival is a clock as wrong as one that far behind: the mail runs nothing and its
    sender is told; its key is kept until its Date is 14 days old (its replay then would run),
    but not for a Date more than 400 days ahead."""
    shell.signup("alice")
    for when in (clock.now + timedelta(days=365), clock.now.replace(year=9999)):
        raw = mail_bytes("alice@example.org", "help", dated=when)
        gateway.send("alice@example.org", "", raw=raw)
    gateway.settle()
    refusals = gateway.mails("alice@example.org")
    said = " ".join(body_of(refusals[0]).split())
    assert said == (
        "Error: your mail was not run. The mail this answers is dated 2027-11-01 12:00 UTC, "
        "but it came on 2026-11-01 12:00 UTC: its date lies more than 14 days ahead. This "
        "server tells a mail sent again (by a broken relay or by someone who kept a copy of "
        "it) from the first one by its date, and a date that far ahead could not tell it, so "
        "none of its commands was carried out. The date of your computer or phone is wrong: "
        "set it right, then send the commands again in a new mail."
    )
    assert [str(m["Subject"]) for m in refusals] == ["pbmserv Error"] * 2
    with gateway.sessions() as s:
        notes = [row.last_error for row in s.scalars(select(Inbox).order_by(Inbox.id))]
    assert notes == [
        "not run: dated 2027-11-01 12:00 UTC, 365 d 0 h after it came (more than 14 days "
        "ahead: a wrong clock)",
        "not run: dated 9999-11-01 12:00 UTC, 2912078 d 0 h after it came (more than 14 days "
        "ahead: a wrong clock)",
    ]
    later(gateway, clock, gateway.settings.inbox_retention_days + 1)  # the year 9999 keeps none
    assert (count(gateway.sessions, Inbox), count(gateway.sessions, InboxTombstone)) == (0, 1)
    later(gateway, clock, 365 - gateway.settings.inbox_retention_days - 1 + 15)
    assert count(gateway.sessions, InboxTombstone) == 0  # next year's, 15 days after its Date


def test_a_key_of_a_mail_dated_ahead_is_kept_until_its_replay_is_refused(gateway, shell, clock):
    """A mail dated 13 days ahead (it runs) and deleted after 2 days keeps its key until its
    Date is 14 days old: every replay until then is a repeat, and one after is refused."""
    gateway.settings.inbox_retention_days = 2
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mover, move = first_move(gateway.sessions)
    sender = f"{mover}@example.org"
    raw = mail_bytes(sender, f"polis move 101 {mover} pw-{mover} {move}", dated=clock.now)
    raw = raw.replace(
        format_datetime(clock.now).encode(),
        format_datetime(clock.now + timedelta(days=13)).encode(),
    )
    gateway.send(sender, "", raw=raw)
    gateway.settle()
    assert moves(gateway) == 1
    sent = len(gateway.mails())
    for days in (3, 23):  # 26 days after it came: its Date is 13 days old
        later(gateway, clock, days)
        assert count(gateway.sessions, InboxTombstone) == 1
        gateway.send(sender, "", raw=raw)
        gateway.settle()
        assert (moves(gateway), len(gateway.mails())) == (1, sent)  # a repeat: silence
    later(gateway, clock, 2)
    assert count(gateway.sessions, InboxTombstone) == 0
    gateway.send(sender, "", raw=raw)
    gateway.settle()
    assert moves(gateway) == 1
    assert [str(m["Subject"]) for m in gateway.mails()[sent:]] == ["pbmserv Error"]


def srs_move(gateway: Gateway, shell, clock) -> tuple[str, bytes]:
    """alice or bob's first move, dated now, as a forwarder passes it on: (sender, bytes)."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mover, move = first_move(gateway.sessions)
    line = f"polis move 101 {mover} pw-{mover} {move}"
    return mover, mail_bytes(f"{mover}@example.org", line, dated=clock.now)


def test_a_resend_under_another_srs_rewrite_is_not_run_twice(gateway, shell, clock):
    """A forwarder using SRS rewrites the envelope sender anew at each resend (a new hash, a
    new timestamp); the key held the envelope as written, so a resend within
    ``stale_mail_days`` had a new key and ran again.  It stands for the address it wraps."""
    gateway.settings.inbox_retention_days = 2
    mover, raw = srs_move(gateway, shell, clock)
    first = f"SRS0=a1b2=T1=example.org={mover}@fwd.example"
    gateway.send(f"{mover}@example.org", "", raw=raw, envelope_from=first)
    gateway.settle()
    assert moves(gateway) == 1
    sent = len(gateway.mails())
    gateway.send(
        f"{mover}@example.org",
        "",
        raw=raw,
        envelope_from=f"srs0+c3d4=T2=example.org={mover}@fwd.example",
    )
    gateway.settle()
    assert (moves(gateway), len(gateway.mails()), count(gateway.sessions, Inbox)) == (1, sent, 1)
    with gateway.sessions() as s:
        assert s.scalar(select(Inbox.repeats)) == 1
    later(gateway, clock, 3)  # the mail is gone, its key kept
    assert count(gateway.sessions, Inbox) == 0
    resent = f"SRS0=e5f6=T5=example.org={mover}@fwd.example"
    gateway.send(f"{mover}@example.org", "", raw=raw, envelope_from=resent)
    gateway.settle()
    assert (moves(gateway), len(gateway.mails()), count(gateway.sessions, Inbox)) == (1, sent, 0)


@pytest.mark.parametrize(
    "forged",
    [
        "SRS0=ffff=T1=example.org={mover}@evil.example",  # alice's address, in his own SRS
        "SRS1=ffff=fwd.example==a1b2=T1=example.org={mover}@evil.example",
        "mallory@evil.example",
    ],
)
def test_a_forger_s_mail_with_the_message_id_first_does_not_block_the_srs_one(
    gateway, shell, clock, forged
):
    """The key keeps the envelope so that whoever sends a mail's Message-ID first (guessed or
    leaked) cannot have the real mail dropped as a repeat; an SRS envelope keeps the domains it
    came through, which SPF checks, so a forger wrapping the victim's address in an SRS address
    of his own domain has a key of his own."""
    mover, raw = srs_move(gateway, shell, clock)
    message_id = next(
        line.split(b":", 1)[1].strip().decode()
        for line in raw.splitlines()
        if line.lower().startswith(b"message-id:")
    )
    fake = mail_bytes(f"{mover}@example.org", "help", dated=clock.now)
    fake = b"".join(
        f"Message-ID: {message_id}\r\n".encode()
        if line.lower().startswith(b"message-id:")
        else line
        for line in fake.splitlines(keepends=True)
    )
    gateway.send(f"{mover}@example.org", "", raw=fake, envelope_from=forged.format(mover=mover))
    gateway.settle()
    assert count(gateway.sessions, Inbox) == 1
    real = f"SRS0=a1b2=T1=example.org={mover}@fwd.example"
    gateway.send(f"{mover}@example.org", "", raw=raw, envelope_from=real)
    gateway.settle()
    assert moves(gateway) == 1
    assert count(gateway.sessions, Inbox) == 2


@pytest.mark.parametrize(
    "envelope",
    [
        "mallory@evil.example",  # his own address, which SPF passes
        "SRS0=ffff=T9=example.org={mover}@evil.example",  # an SRS wrapper of his own domain
        "",  # a bounce's empty envelope
    ],
)
def test_a_captured_mail_resent_under_another_envelope_is_not_run_again(
    gateway, shell, clock, envelope
):
    """The key held the envelope sender, so the same bytes (a move with its password, DKIM
    still verifying) resent by whoever kept a copy, under an envelope of his own domain, were a
    new mail and ran again within ``stale_mail_days``.  The key is the mail's own (Message-ID,
    From, Subject and text): a resend is a repeat whatever its envelope, and a forger who knows
    no more than the Message-ID still cannot make the real mail a repeat."""
    gateway.settings.inbox_retention_days = 2
    mover, raw = srs_move(gateway, shell, clock)
    sender = f"{mover}@example.org"
    gateway.send(sender, "", raw=raw)
    gateway.settle()
    assert moves(gateway) == 1
    sent = len(gateway.mails())
    resent = b"Received: from evil.example by mx.example.org\r\n" + raw
    gateway.send(sender, "", raw=resent, envelope_from=envelope.format(mover=mover))
    gateway.settle()
    assert (len(gateway.mails()), count(gateway.sessions, Inbox)) == (sent, 1)
    with gateway.sessions() as s:
        assert s.scalar(select(Inbox.repeats)) == 1
    later(gateway, clock, 3)  # the mail is gone, its key kept
    gateway.send(sender, "", raw=resent, envelope_from=envelope.format(mover=mover))
    gateway.settle()
    assert (len(gateway.mails()), count(gateway.sessions, Inbox)) == (sent, 0)


def test_a_mail_kept_under_the_envelope_key_still_catches_its_replays(sessions, clock):
    """A mail stored (or deleted, its key kept) before the key was the mail's own is known by
    its Message-ID, envelope sender and From: its resend from that envelope is still a repeat."""
    import hashlib

    from pbmserv.mail import inbox, srs

    raw = mail_bytes("alice@example.org", "help", dated=clock.now)
    mid = next(
        line.split(b":", 1)[1].strip().decode()
        for line in raw.splitlines()
        if line.lower().startswith(b"message-id:")
    )
    envelope = "SRS0=a1b2=T1=example.org=alice@fwd.example"
    who = f"{srs.for_key(envelope)}\nalice@example.org".encode()
    with sessions() as s, s.begin():
        s.add(InboxTombstone(dedup_key=f"from:{hashlib.sha256(who).hexdigest()[:32]} mid:{mid}"))
    resent = envelope.replace("a1b2=T1", "c3d4=T2")
    assert inbox.store(sessions, raw, resent, [], clock.now).new is False


def test_a_mail_without_a_message_id_resent_under_a_trace_line_is_a_repeat(sessions, clock):
    """Without a Message-ID the key was a hash of the bytes, trace lines and all: the same mail
    resent through a relay (which writes its Received line above) or by whoever kept a copy
    was new.  It is a hash of the mail's From, Subject, Date and text, as with one."""
    from pbmserv.mail import inbox

    raw = b"".join(
        line
        for line in mail_bytes("alice@example.org", "help", dated=clock.now).splitlines(True)
        if not line.lower().startswith(b"message-id:")
    )
    assert inbox.store(sessions, raw, "alice@example.org", [], clock.now).new
    resent = b"Received: from evil.example by mx.example.org\r\n" + raw
    assert not inbox.store(sessions, resent, "mallory@evil.example", [], clock.now).new
    blanks = raw.replace(b"Your move.", b"Your  move. \t")  # (DKIM "relaxed" still verifies)
    assert not inbox.store(sessions, blanks, "mallory@evil.example", [], clock.now).new
    assert inbox.store(sessions, raw.replace(b"Your move", b"My move"), "", [], clock.now).new


def test_a_mail_refused_for_a_date_far_ahead_does_not_run_when_resent_near_that_date(
    gateway, shell, clock
):
    """A mail dated 60 days ahead was refused ("not run: send it again"), and deleted with no
    key kept; resent (by a broken relay, or by whoever kept a copy) ten days before its Date,
    it ran, as its sender's, weeks after he was told it had not.  Its key is kept until its
    Date is ``stale_mail_days`` old (for a clock up to a year and more ahead)."""
    gateway.settings.inbox_retention_days = 2
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mover, move = first_move(gateway.sessions)
    sender = f"{mover}@example.org"
    line = f"polis move 101 {mover} pw-{mover} {move}"
    raw = mail_bytes(sender, line, dated=clock.now + timedelta(days=60))
    gateway.send(sender, "", raw=raw)
    gateway.settle()
    assert moves(gateway) == 0
    sent = len(gateway.mails())
    later(gateway, clock, 3)  # the mail is gone
    assert (count(gateway.sessions, Inbox), count(gateway.sessions, InboxTombstone)) == (0, 1)
    later(gateway, clock, 47)  # its Date 10 days ahead: within stale_mail_days
    gateway.send(sender, "", raw=raw)
    gateway.settle()
    assert (moves(gateway), len(gateway.mails())) == (0, sent)  # a repeat: silence
    later(gateway, clock, 25)  # its Date 15 days old: the key goes, the Date refuses it
    assert count(gateway.sessions, InboxTombstone) == 0

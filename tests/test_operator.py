"""The operator's commands in this process, on the test's store: what they refuse, what they
say of the queues, and how they report a store or a config they cannot use."""

from __future__ import annotations

import socket
from datetime import timedelta

from sqlalchemy import func, select
from test_outbound import relay  # noqa: F401 - a real relay on 127.0.0.1 (a fixture)

from pbmserv.mail.sender import deliver_pending, make_sink
from pbmserv.store.models import AuthFailure, Inbox, InboxStatus, Outbox, OutboxStatus

SIGNUP = (
    b"From: alice@example.org\r\nTo: pbmserv@example.org\r\nMessage-ID: <m1@example.org>\r\n"
    b"Date: Sun, 01 Nov 2026 12:00:00 +0000\r\nSubject: signup alice secret1\r\n\r\nhello\r\n"
)


def test_retry_queues_only_a_mail_set_aside(operator, sessions, tmp_path):
    """A processed mail keeps only a copy with its passwords masked: run again, it answered
    "wrong password" and counted an authentication failure.  Only a mail set aside goes back."""
    mail = tmp_path / "signup.eml"
    mail.write_bytes(SIGNUP)
    status, out, err = operator("mail", "inject", str(mail))
    assert status == 0 and "stored as 1" in out, err
    with sessions() as s:
        mails = s.scalar(select(func.count()).select_from(Outbox))
    status, out, err = operator("mail", "retry", "1")
    assert status == 1 and "mail 1 is done, not set aside" in err, out + err
    assert "queued again" not in out
    with sessions() as s:
        assert s.get(Inbox, 1).status is InboxStatus.done
        assert s.scalar(select(func.count()).select_from(Outbox)) == mails
        assert s.scalar(select(func.count()).select_from(AuthFailure)) == 0

    mail.write_bytes(SIGNUP.replace(b"<m1@", b"<m2@").replace(b"alice", b"bob"))
    assert operator("mail", "inject", "--no-process", str(mail))[0] == 0
    assert operator("mail", "retry", "2")[0] == 1  # waiting in the queue: nothing to do
    with sessions() as s, s.begin():
        row = s.get(Inbox, 2)
        row.status, row.attempts = InboxStatus.shunted, 3
    status, out, err = operator("mail", "retry", "2")
    assert status == 0 and "Mail 2 is queued again." in out, err
    with sessions() as s:
        row = s.get(Inbox, 2)
        assert (row.status, row.attempts) == (InboxStatus.new, 0)
    assert "there is no mail 99" in operator("mail", "retry", "99")[2]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


def test_status_shows_a_relay_that_is_down(operator, shell, settings, sessions, clock, monkeypatch):
    """With the relay down every mail stays pending: the counts alone looked like a quiet
    queue.  Status says how old the oldest waiting mail is and how many have failed."""
    settings.outbox, settings.relay_port = "smtp", closed_port()
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    sink = make_sink(settings)
    assert deliver_pending(sessions, settings, sink, clock.now) == 0
    assert deliver_pending(sessions, settings, sink, clock.advance(minutes=10)) == 0
    monkeypatch.setenv("PBMSERV_NOW", (clock.now + timedelta(minutes=60)).isoformat())
    status, out, err = operator("status")
    assert status == 0, err
    assert "oldest unsent: 2026-11-01 12:00:00 UTC (1 h 10 min old)" in out
    assert "failing:   2 pending mails have failed attempts" in out
    assert f"relay 127.0.0.1:{settings.relay_port}: ConnectionRefusedError" in out
    with sessions() as s, s.begin():  # the relay is back
        for row in s.scalars(select(Outbox)):
            row.status = row.status.sent
    status, out, err = operator("status")
    assert "oldest unsent: none" in out and "failing" not in out
    status, out, err = operator("mail", "outbox", "show", "1")  # the error is history now
    assert "Last error (of an earlier attempt): " in out and "\nLast error:" not in out
    with sessions() as s, s.begin():  # one being handed over: unsent, though "pending 0"
        s.get(Outbox, 1).status = OutboxStatus.sending
    status, out, err = operator("status")
    assert "pending    0" in out and "oldest unsent: 2026-11-01 12:00:00 UTC" in out


def test_mail_show_keeps_the_head_and_the_end_of_a_long_traceback(operator, sessions, tmp_path):
    """Only the last characters of an error were kept: "Last error:" began mid-word, without
    the traceback's first line.  Whole lines are kept: the head and the last lines."""
    from pbmserv.mail import inbox_queue

    mail = tmp_path / "signup.eml"
    mail.write_bytes(SIGNUP)
    assert operator("mail", "inject", "--no-process", str(mail))[0] == 0
    frames = "".join(f'  File "/opt/pbmserv/module{i}.py", line {i}, in f\n' for i in range(300))
    error = f"Traceback (most recent call last):\n{frames}ValueError: the last line\n"
    with sessions() as session, session.begin():
        inbox_queue.mark_failed(session, 1, error)
    status, out, err = operator("mail", "show", "1")
    assert status == 0, err
    shown = out.split("Last error:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert shown[0] == "Traceback (most recent call last):"
    assert shown[1].startswith("[... ") and shown[1].endswith(" lines left out ...]")
    assert shown[2].startswith('  File "/opt/pbmserv/module')
    assert shown[-1] == "ValueError: the last line"
    assert set(shown[2:-1]) <= set(frames.splitlines())


def test_db_commands_say_the_revision_the_database_is_at(operator, sessions):
    """``db upgrade 0003`` on a database at the newest revision said "The database is at
    0003." (it echoed its argument) and left it where it was.  What is said is read back."""
    from pbmserv.store.migrate import revisions

    head, before, old = revisions()[-1], revisions()[-2], revisions()[2]
    status, out, err = operator("db", "current")
    assert (status, out) == (0, f"The database is at {head}, the newest this pbmserv knows.\n")
    status, out, err = operator("db", "upgrade", old)
    assert status == 1 and f"the database is at {head}, newer than {old}" in err
    assert f"`pbmserv db downgrade {old} --yes`" in err and not out
    status, out, err = operator("db", "upgrade", "0999")
    assert status == 2 and "there is no revision '0999'" in err
    status, out, err = operator("db", "downgrade", before)
    assert status == 1 and "take a backup, then give --yes" in err
    assert f"upgrades it to {head} again" in err
    assert operator("db", "current")[1].startswith(f"The database is at {head},")
    status, out, err = operator("db", "downgrade", before, "--yes")
    assert status == 0 and out.startswith(f"The database is at {before}. Any other command"), err
    status, out, err = operator("db", "current")
    assert out.startswith(f"The database is at {before}; the newest this pbmserv knows is {head}")
    assert operator("db", "downgrade", head, "--yes")[0] == 1  # a downgrade never goes forward
    status, out, err = operator("db", "upgrade")
    assert (status, out) == (0, f"The database is at {head}, the newest this pbmserv knows.\n")


def test_tick_sends_the_mail_that_waits(operator, shell, settings):
    """With Postfix's pipe and no server, only ``mail inject`` sent mail: the robots' moves
    and the nags cron made waited for the next incoming mail.  The tick sends what is due."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    status, out, err = operator("tick")
    assert status == 0 and "Mails sent: 2" in out, err
    assert len(list((settings.data_dir / "Maildir" / "new").iterdir())) == 2
    assert "Mails sent" not in operator("tick")[1]


def test_the_lock_names_its_holder(settings, shell):
    """A shell command tells its user who sends the mails it queued: it took a cron ``tick``
    (or ``robot run``) that held the clocks lock for a running server."""
    from pbmserv.store.lock import ClocksLock, holder

    shell.signup("alice")  # (the store exists)
    assert holder(settings.url) is None
    for name in ("serve", "tick", "robot run"):
        lock = ClocksLock(settings.url, name)
        assert lock.acquire()
        try:
            assert holder(settings.url) == name
        finally:
            lock.release()
        assert holder(settings.url) is None


def test_tick_does_nothing_while_another_process_holds_the_clocks(
    operator, shell, settings, monkeypatch
):
    """``tick`` from cron checked the clocks and sent mail beside a running server (or another
    tick): two processes nagged and forfeited.  Where another holds the store's lock it says
    so in one line and does nothing; otherwise it holds the lock until it is done."""
    from pbmserv.cli.store import PLAYED_ELSEWHERE
    from pbmserv.domain import clocks
    from pbmserv.store.lock import ClocksLock

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    server = ClocksLock(settings.url)  # as a running server holds it
    assert server.acquire()
    try:
        status, out, err = operator("tick")
    finally:
        server.release()
    said = "A running server (pbmserv serve) plays the clocks and the robots of this store"
    assert (status, out) == (0, f"{said}: nothing done.\n"), err
    assert len(PLAYED_ELSEWHERE.splitlines()) == 1
    cron = ClocksLock(settings.url, "robot run")  # a robot run from cron, still playing
    assert cron.acquire()
    try:
        status, out, err = operator("tick")
    finally:
        cron.release()
    said = "A 'pbmserv robot run' still running plays the clocks and the robots of this store"
    assert (status, out) == (0, f"{said}: nothing done.\n"), err
    maildir = settings.data_dir / "Maildir" / "new"
    assert not maildir.exists() or not list(maildir.iterdir())  # nothing sent

    elsewhere: list[bool] = []  # whether another process could take the lock meanwhile
    check = clocks.tick

    def watched(*args, **kwargs):
        other = ClocksLock(settings.url)
        elsewhere.append(other.acquire())
        other.release()
        return check(*args, **kwargs)

    monkeypatch.setattr(clocks, "tick", watched)
    status, out, err = operator("tick")
    assert status == 0 and "Mails sent: 2" in out, err
    assert elsewhere == [False]
    other = ClocksLock(settings.url)
    try:
        assert other.acquire()  # and let go once done
    finally:
        other.release()


class UniqueViolation(Exception):
    """As psycopg names it (what SQLAlchemy wraps in an IntegrityError)."""


def test_a_failed_mail_is_logged_and_listed_with_its_class_and_first_line(
    operator, settings, sessions, clock, tmp_path, monkeypatch, caplog
):
    """The log and ``mail list`` showed the traceback's last line: for a database error only
    "(Background on this error at: https://sqlalche.me/e/21/gkpj)"."""
    from sqlalchemy.exc import IntegrityError

    from pbmserv.mail import one_mail, worker

    def clash(*args, **kwargs):
        raise IntegrityError(
            "INSERT INTO answer_counts ...",
            {},
            UniqueViolation(
                'duplicate key value violates unique constraint "pk_answer_counts"\n'
                "DETAIL:  Key (day, address)=(2026-11-01, alice@example.org) already exists."
            ),
        )

    mail = tmp_path / "signup.eml"
    mail.write_bytes(SIGNUP)
    original = one_mail.process
    monkeypatch.setattr(one_mail, "process", clash)
    assert operator("mail", "inject", "--no-process", str(mail))[0] == 0
    with caplog.at_level("ERROR", logger="pbmserv.mail.worker"):
        (failed,) = worker.process_batch(sessions, settings, lambda: clock.now)
    assert failed.status is InboxStatus.new  # a failed attempt: it waits for the next one
    reason = (
        "IntegrityError: UniqueViolation: duplicate key value violates unique constraint "
        '"pk_answer_counts"'
    )
    assert [r.getMessage() for r in caplog.records] == [f"mail 1 failed: {reason}"]
    status, out, err = operator("mail", "list")
    assert status == 0 and out.splitlines()[1].endswith(f"alice@example.org  {reason}"), out
    assert "Last error:\n" + reason + "\n" in operator("mail", "show", "1")[1]
    monkeypatch.setattr(one_mail, "process", original)  # the next attempt works
    (done,) = worker.process_batch(sessions, settings, lambda: clock.now)
    assert done.status is InboxStatus.done
    status, out, err = operator("mail", "list", "--all")
    assert out.splitlines()[1].endswith(f"alice@example.org  (an earlier attempt) {reason}"), out
    assert "Last error (of an earlier attempt):\n" + reason in operator("mail", "show", "1")[1]


def test_extra_workers_leave_the_robots_and_the_clocks_to_the_server(operator, monkeypatch):
    """Every ``serve --no-listen`` searched every robot move again (the losers threw theirs
    away) and ran the clocks: one process of a deployment runs them."""
    from pbmserv.cli import server

    asked: list[dict[str, object]] = []
    monkeypatch.setattr(server, "run_server", lambda settings, **kwargs: asked.append(kwargs))
    assert operator("serve")[0] == 0
    assert operator("serve", "--no-listen")[0] == 0
    assert operator("serve", "--no-listen", "--clocks-and-robots")[0] == 0
    assert [(a["listen"], a["robots_and_clocks"]) for a in asked] == [
        (True, True),
        (False, False),
        (False, True),
    ]


def test_a_server_without_robots_and_clocks_runs_only_its_worker_and_sender(settings, clock):
    from pbmserv.cli.server import Server

    running = Server(settings, listen=False, clock=lambda: clock.now, robots_and_clocks=False)
    running.start()
    try:
        names = sorted(thread.name for thread in running.threads)
    finally:
        running.stop()
    assert names == ["pbmserv-sender", "pbmserv-worker"]


def test_numbers_beyond_any_row_are_refused_not_a_crash(operator, shell):
    """A number too big for the store's integers (2**31 on PostgreSQL, 2**63 on SQLite) names
    no tournament, board or mail: it was an internal error (exit 70), and by mail a stranger's
    one-line mail failed three times and was set aside."""
    shell.signup("alice")
    shell.ok("tournament create cup --game nim --format swiss")
    huge = "99999999999999999999"
    for number in ("2147483648", huge):
        for line in (f"tournament standings t{number}", f"tournament pairings t{number}"):
            result = shell(line)
            assert result.status == 1 and "there is no tournament" in result.body, result.body
        shown = shell(f"nim show t{number}r1b1")
        assert shown.status in (1, 2) and "internal error" not in shown.body, shown.body
    assert shell("tournament join t1 alice pw-alice").status == 0  # a real number still works
    for args in (
        ("mail", "show", huge),
        ("mail", "retry", huge),
        ("mail", "outbox", "retry", huge),
    ):
        status, out, err = operator(*args)
        assert status == 2 and "1<=x<=2147483647" in err, (args, out, err)


def test_inject_takes_a_sender_of_bytes_that_are_no_utf8(operator, sessions, tmp_path):
    """Postfix's pipe gives ``--sender ${sender}``: an envelope sender of bytes that are no
    UTF-8 (a client without SMTPUTF8) reaches argv as surrogate escapes, which the database
    refuses: 'internal error', exit 75 at each of Postfix's attempts.  The mail is stored with
    the bytes written '\\xf6' (no usable address), and answered at its From."""
    mail = tmp_path / "signup.eml"
    mail.write_bytes(SIGNUP)
    status, out, err = operator("mail", "inject", "--sender", "j\udcf6rg@example.org", str(mail))
    assert (status, out) == (0, "Mail stored as 1.\n"), err
    with sessions() as s:
        row = s.get(Inbox, 1)
        assert (row.mail_from, row.status) == ("j\\xf6rg@example.org", InboxStatus.done)
        assert s.scalars(select(Outbox.recipient)).all() == ["alice@example.org"]


def test_status_says_why_the_last_mail_failed_for_good(operator, shell, sessions):
    """A mail the relay cannot take (an address that is not ASCII, a relay without SMTPUTF8)
    fails for good: status said only 'failed 1'.  It gives the newest such mail's error and
    the command that sends it again."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    error = "relay 127.0.0.1:25 does not offer SMTPUTF8, which mail to j\u00f6rg@x.org needs"
    with sessions() as s, s.begin():
        for row in s.scalars(select(Outbox)):
            row.status, row.attempts, row.last_error = OutboxStatus.failed, 1, f"{error}\n"
    status, out, err = operator("status")
    assert status == 0, err
    assert (
        f"  failed     2\n  oldest unsent: none\n  last failed for good (mail 2): {error}\n" in out
    )
    assert "'pbmserv mail outbox retry ID' sends it again" in out


def test_outbox_list_gives_the_last_error_of_a_failing_mail(
    operator,
    shell,
    settings,
    relay,  # noqa: F811 - the fixture imported above
    clock,
):
    """A failed mail's last error was only in 'mail outbox show', mail by mail: the list of a
    relay that refused every mail read like a slow queue.  Under each mail being retried or
    given up, its last error, cut to fit; none under a mail that never failed."""
    relay("451 4.3.0 mailbox busy, try later")
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    assert deliver_pending(shell.sessions, settings, make_sink(settings), clock.now) == 0
    shell.ok("nim challenge bob alice")  # (queued since: never tried)
    status, out, err = operator("mail", "outbox", "list")
    assert status == 0, err
    lines = out.splitlines()
    assert [line.split()[:3] for line in lines[1::2][:2]] == [["1", "pending", "1"]] + [
        ["2", "pending", "1"]
    ], out
    port = settings.relay_port
    tried = f"        last error: relay 127.0.0.1:{port} answered 451 4.3.0 mailbox busy, try later"
    assert lines[2] == lines[4] == tried, out
    assert lines[5].split()[:3] == ["3", "pending", "0"] and len(lines) == 7, out
    refusal = "550 5.1.1 <bob@example.org>: Recipient address rejected: User unknown in local table"
    relay(refusal)
    later = clock.advance(hours=1)
    deliver_pending(shell.sessions, settings, make_sink(settings), later + timedelta(minutes=1))
    status, out, err = operator("mail", "outbox", "list")
    lines = out.splitlines()
    assert lines[1].split()[:2] == ["1", "failed"], out
    error = lines[2].removeprefix("        last error: ")
    full = f"relay 127.0.0.1:{settings.relay_port} answered {refusal}"
    assert error.endswith("...") and full.startswith(error[:-3]) and len(error) == 80, out
    relay("250 OK")  # mail 1 goes out at last: its earlier error is no longer listed
    assert operator("mail", "outbox", "retry", "1")[0] == 0
    assert deliver_pending(shell.sessions, settings, make_sink(settings), later) == 1
    lines = operator("mail", "outbox", "list", "--all")[1].splitlines()
    assert lines[1].split()[:2] == ["1", "sent"] and lines[2].split()[:2] == ["2", "failed"]


def test_status_says_whether_a_server_runs(operator, settings):
    """Status said nothing of the processes: a server that had stopped looked like a quiet
    one.  It names the holder of the clocks lock, or says that no server runs."""
    from pbmserv.store.lock import ClocksLock

    assert operator("db", "upgrade")[0] == 0
    status, out, err = operator("status")
    assert status == 0, err
    assert out.endswith("\nClocks and robots: no server runs now ('pbmserv serve', or cron's "
                        "tick and robot run, play them)\n")  # fmt: skip
    for name, said in (("serve", "played by a running server (pbmserv serve)"),
                       ("robot run", "a 'pbmserv robot run' is running")):  # fmt: skip
        lock = ClocksLock(settings.url, name)
        assert lock.acquire()
        try:
            assert operator("status")[1].endswith(f"\nClocks and robots: {said}\n")
        finally:
            lock.release()

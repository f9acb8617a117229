"""The aiosmtpd handler against a real listener on 127.0.0.1, with smtplib as the client."""

from __future__ import annotations

import asyncio
import logging
import smtplib
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine
from sqlalchemy.exc import OperationalError
from waiting import wait_until

from pbmserv.mail.listener import EnvelopeInfo, InboundHandler, make_controller

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
RAW = (
    b"From: Alice <alice@example.org>\r\n"
    b"To: pbmserv@localhost\r\n"
    b"Subject: ploy move 101 alice pw e4-e5\r\n"
    b"\r\n"
    b"caf\xc3\xa9 line\r\n"
    b".a line starting with a dot\r\n"
    b"last line without newline"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recorder:
    def __init__(self, fail: bool = False, sync: bool = False) -> None:
        self.got: list[tuple[bytes, EnvelopeInfo]] = []
        self.fail = fail
        self.sync = sync

    async def store(self, raw: bytes, envelope: EnvelopeInfo) -> None:
        if self.fail:
            raise RuntimeError("database is away")
        self.got.append((raw, envelope))

    def store_sync(self, raw: bytes, envelope: EnvelopeInfo) -> None:
        if self.fail:
            raise RuntimeError("database is away")
        self.got.append((raw, envelope))


def accept(address: str) -> bool:
    return address.lower() in {"pbmserv@localhost", "ploy@localhost"}


def start(
    recorder: Recorder,
    *,
    lmtp: bool = False,
    limit: int = 100_000,
    max_rcpt: int = 5,
    timeout: float = 10,
    max_connections: int = 100,
    max_per_host: int | None = None,
):
    store = recorder.store_sync if recorder.sync else recorder.store
    handler = InboundHandler(store, accept, max_recipients=max_rcpt, clock=lambda: NOW)
    controller = make_controller(
        handler,
        "127.0.0.1",
        free_port(),
        lmtp=lmtp,
        data_size_limit=limit,
        timeout=timeout,
        max_connections=max_connections,
        max_per_host=max_per_host,
    )
    controller.start()
    return controller


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def server(recorder: Recorder) -> Iterator:
    controller = start(recorder)
    yield controller
    controller.stop()


def client(controller) -> smtplib.SMTP:
    return smtplib.SMTP(controller.hostname, controller.port, timeout=10)


def test_accepted_mail_is_stored_byte_exact(server, recorder: Recorder) -> None:
    with client(server) as smtp:
        refused = smtp.sendmail("alice@example.org", ["pbmserv@localhost"], RAW)
    assert refused == {}
    assert len(recorder.got) == 1
    raw, env = recorder.got[0]
    # smtplib ends the data with CRLF; dot-stuffing is undone by the server
    assert raw == RAW + b"\r\n"
    assert env.mail_from == "alice@example.org"
    assert env.rcpt_tos == ("pbmserv@localhost",)
    assert env.peer.startswith("127.0.0.1:")
    assert env.received_at == NOW


def test_data_answer_is_250_message_accepted(server) -> None:
    with client(server) as smtp:
        smtp.ehlo()
        smtp.mail("alice@example.org")
        assert smtp.rcpt("pbmserv@localhost")[0] == 250
        code, text = smtp.data(RAW)
    assert (code, text) == (250, b"Message accepted")


def test_null_sender_is_stored_as_empty(server, recorder: Recorder) -> None:
    with client(server) as smtp:
        smtp.sendmail("<>", ["pbmserv@localhost"], RAW)
    assert recorder.got[0][1].mail_from == ""


def test_unknown_recipient_is_refused_550(server, recorder: Recorder) -> None:
    with client(server) as smtp:
        smtp.ehlo()
        smtp.mail("alice@example.org")
        code, text = smtp.rcpt("nobody@localhost")
        assert code == 550 and text.startswith(b"5.1.1")
        smtp.rset()
        with pytest.raises(smtplib.SMTPRecipientsRefused):
            smtp.sendmail("alice@example.org", ["nobody@localhost"], RAW)
    assert recorder.got == []


def test_unknown_recipient_among_known_ones(server, recorder: Recorder) -> None:
    with client(server) as smtp:
        refused = smtp.sendmail("alice@example.org", ["nobody@localhost", "ploy@localhost"], RAW)
    assert list(refused) == ["nobody@localhost"] and refused["nobody@localhost"][0] == 550
    assert recorder.got[0][1].rcpt_tos == ("ploy@localhost",)


def test_recipient_cap() -> None:
    recorder = Recorder()
    controller = start(recorder, max_rcpt=1)
    try:
        with client(controller) as smtp:
            smtp.ehlo()
            smtp.mail("alice@example.org")
            assert smtp.rcpt("pbmserv@localhost")[0] == 250
            assert smtp.rcpt("ploy@localhost")[0] == 452
    finally:
        controller.stop()


def test_store_failure_answers_451() -> None:
    recorder = Recorder(fail=True)
    controller = start(recorder)
    try:
        with client(controller) as smtp, pytest.raises(smtplib.SMTPDataError) as info:
            smtp.sendmail("alice@example.org", ["pbmserv@localhost"], RAW)
        assert info.value.smtp_code == 451
        assert b"Traceback" not in info.value.smtp_error
        assert b"database" not in info.value.smtp_error
    finally:
        controller.stop()


def test_plain_function_store_runs_in_executor() -> None:
    recorder = Recorder(sync=True)
    controller = start(recorder)
    try:
        with client(controller) as smtp:
            smtp.sendmail("alice@example.org", ["pbmserv@localhost"], RAW)
        assert len(recorder.got) == 1
    finally:
        controller.stop()


def test_plain_function_store_failure_answers_451() -> None:
    recorder = Recorder(sync=True, fail=True)
    controller = start(recorder)
    try:
        with client(controller) as smtp, pytest.raises(smtplib.SMTPDataError) as info:
            smtp.sendmail("alice@example.org", ["pbmserv@localhost"], RAW)
        assert info.value.smtp_code == 451
    finally:
        controller.stop()


def test_oversize_mail_is_refused_552() -> None:
    recorder = Recorder()
    controller = start(recorder, limit=2000)
    try:
        big = RAW + b"\r\n" + b"x" * 70 + b"\r\n"
        big = big * 60
        with client(controller) as smtp:
            smtp.ehlo()
            smtp.mail("alice@example.org")
            smtp.rcpt("pbmserv@localhost")
            code, _ = smtp.data(big)
        assert code == 552
        assert recorder.got == []
    finally:
        controller.stop()


def test_size_declared_too_big_is_refused_at_mail_from() -> None:
    recorder = Recorder()
    controller = start(recorder, limit=2000)
    try:
        with client(controller) as smtp:
            smtp.ehlo()
            code, _ = smtp.mail("alice@example.org", ["SIZE=5000"])
        assert code == 552
    finally:
        controller.stop()


def test_lmtp_mode() -> None:
    recorder = Recorder()
    controller = start(recorder, lmtp=True)
    try:
        with smtplib.LMTP(controller.hostname, controller.port, timeout=10) as lmtp:
            refused = lmtp.sendmail("alice@example.org", ["pbmserv@localhost"], RAW)
        assert refused == {}
        assert recorder.got[0][0] == RAW + b"\r\n"
    finally:
        controller.stop()


def test_lmtp_answers_once_per_recipient() -> None:
    recorder = Recorder()
    controller = start(recorder, lmtp=True)
    try:
        with socket.create_connection((controller.hostname, controller.port), timeout=10) as s:
            f = s.makefile("rb")
            assert f.readline().startswith(b"220")
            s.sendall(b"LHLO client\r\n")
            while not f.readline().startswith(b"250 "):
                pass
            for line in (
                b"MAIL FROM:<alice@example.org>",
                b"RCPT TO:<pbmserv@localhost>",
                b"RCPT TO:<ploy@localhost>",
                b"DATA",
            ):
                s.sendall(line + b"\r\n")
                assert f.readline()[:1] in (b"2", b"3")
            s.sendall(RAW + b"\r\n.\r\n")
            assert f.readline() == b"250 Message accepted\r\n"
            assert f.readline() == b"250 Message accepted\r\n"
            s.sendall(b"QUIT\r\n")
            assert f.readline().startswith(b"221")
        assert len(recorder.got) == 1
    finally:
        controller.stop()


def test_lmtp_refuses_helo() -> None:
    recorder = Recorder()
    controller = start(recorder, lmtp=True)
    try:
        with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as smtp:
            assert smtp.helo()[0] == 500
    finally:
        controller.stop()


def test_handle_exception_answers_451() -> None:
    handler = InboundHandler(Recorder().store, accept)
    answer = asyncio.run(handler.handle_exception(ValueError("boom")))
    assert answer == "451 4.3.0 Temporary failure, please retry"


def greeted(controller) -> socket.socket:
    """A raw connection that has read the listener's first line."""
    conn = socket.create_connection((controller.hostname, controller.port), timeout=10)
    assert conn.recv(1024).startswith(b"220 ")
    return conn


def read_to_end(conn: socket.socket) -> bytes:
    got = b""
    while chunk := conn.recv(1024):
        got += chunk
    return got


@pytest.mark.parametrize("lmtp", [False, True])
def test_connections_past_the_cap_are_answered_421_and_closed(lmtp: bool, caplog) -> None:
    """1,100 idle connections took every descriptor of the process: past the cap a new one
    is answered 421 and closed, and a place set free serves again."""
    recorder = Recorder()
    controller = start(recorder, lmtp=lmtp, max_connections=2)
    held = [greeted(controller), greeted(controller)]
    try:
        with caplog.at_level("INFO", logger="pbmserv.listener"):
            for _ in range(3):
                with socket.create_connection(
                    (controller.hostname, controller.port), timeout=10
                ) as late:
                    assert (
                        read_to_end(late) == b"421 4.7.0 Too many connections, try again later\r\n"
                    )
        refusals = [r.getMessage() for r in caplog.records if "refused (421)" in r.getMessage()]
        assert refusals == [
            "1 SMTP connections refused (421): 2 are open, 2 from 127.0.0.1 "
            "(smtp_max_connections, smtp_max_connections_per_host)"
        ]
        held.pop().close()
        deadline = time.monotonic() + 10
        while True:  # the listener sees the close a moment later
            conn = socket.create_connection((controller.hostname, controller.port), timeout=10)
            first = conn.recv(1024)
            conn.close()
            if first.startswith(b"220 ") or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert first.startswith(b"220 ")
        if not lmtp:
            time.sleep(0.2)  # the probe above has left
            with client(controller) as smtp:
                smtp.sendmail("alice@example.org", ["pbmserv@localhost"], RAW)
            assert len(recorder.got) == 1
    finally:
        for conn in held:
            conn.close()
        controller.stop()


def test_refusals_of_a_burst_that_ends_are_logged_when_the_minute_is_up(
    caplog, monkeypatch
) -> None:
    """The refusals after the first of a minute were logged only with a refusal after that
    minute: a burst that ended was never reported.  They are logged when the minute is up,
    and those of the last minute when the listener stops."""
    from pbmserv import listening

    monkeypatch.setattr(listening, "CAP_LOG_SECONDS", 1.0)  # the minute, shortened
    controller = start(Recorder(), max_connections=1)
    held = greeted(controller)

    def refused(times: int) -> None:
        for _ in range(times):
            with socket.create_connection((controller.hostname, controller.port)) as late:
                assert read_to_end(late).startswith(b"421 ")

    def logged() -> list[str]:
        return [r.getMessage() for r in caplog.records if "refused (421)" in r.getMessage()]

    def counts() -> list[int]:
        return [int(line.split()[0]) for line in logged()]

    try:
        with caplog.at_level("INFO", logger="pbmserv.listener"):
            refused(3)  # the first at once, the other two when the second is up
            wait_until(lambda: sum(counts()) == 3, "the burst's refusals logged", seen=logged)
            assert logged()[0] == (
                "1 SMTP connections refused (421): 1 are open, 1 from 127.0.0.1 "
                "(smtp_max_connections, smtp_max_connections_per_host)"
            )
            monkeypatch.setattr(listening, "CAP_LOG_SECONDS", 60.0)
            before = len(logged())
            refused(2)  # within the minute of the last line: logged at the stop
            time.sleep(0.2)
            assert len(logged()) == before
    finally:
        held.close()
        controller.stop()
    assert counts()[before:] == [2]


def test_an_idle_session_is_closed_after_the_timeout() -> None:
    controller = start(Recorder(), timeout=1)
    try:
        conn = greeted(controller)
        started = time.monotonic()
        with conn:
            assert read_to_end(conn) == b""
        assert 0.5 < time.monotonic() - started < 5
    finally:
        controller.stop()


OUT_OF_DESCRIPTORS = textwrap.dedent(
    """
    import logging, resource, sys, time
    from pbmserv.mail.listener import InboundHandler, make_controller

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s %(message)s")

    async def store(raw, envelope):
        print("stored", flush=True)

    handler = InboundHandler(store, lambda address: True)
    controller = make_controller(handler, "127.0.0.1", 0, max_connections=1000)
    controller.port = int(sys.argv[1])
    controller.start()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
    print("ready", flush=True)
    sys.stdin.readline()
    controller.stop()
    """
)


def test_running_out_of_descriptors_is_one_warning_and_the_listener_lives_on() -> None:
    """asyncio logged a traceback for every failed accept(), 107,198 in 6 seconds: now one
    warning a streak, and the listener serves again once descriptors are free."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", OUT_OF_DESCRIPTORS, str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin and server.stdout and server.stderr
    held: list[socket.socket] = []
    try:
        assert server.stdout.readline() == b"ready\n"
        for _ in range(2):  # two streaks
            for _ in range(80):  # more than the 64 descriptors the listener has
                held.append(socket.create_connection(("127.0.0.1", port), timeout=10))
            time.sleep(2.5)  # asyncio retries the accept every second
            for conn in held:
                conn.close()
            held.clear()
            time.sleep(0.5)
            with smtplib.SMTP("127.0.0.1", port, timeout=10) as smtp:
                smtp.sendmail("alice@example.org", ["pbmserv@localhost"], RAW)
            assert server.stdout.readline() == b"stored\n"
    finally:
        for conn in held:
            conn.close()
        _, err = server.communicate(b"stop\n", timeout=30)
    text = err.decode()
    assert "Traceback" not in text, text[:3000]
    lines = [line for line in text.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert [line.split(" (")[0] for line in lines] == [
        "WARNING pbmserv.listener the listener cannot accept connections",
        "WARNING pbmserv.listener the listener accepts connections again",
    ] * 2, "\n".join(lines)


def disk_full(tmp_path) -> OperationalError:
    """SQLite's own error for a full disk (SQLITE_FULL), made by a database that may not grow."""
    engine = create_engine(f"sqlite:///{tmp_path / 'full.sqlite3'}")
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("CREATE TABLE t (x BLOB)")
        with engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA max_page_count = 2")
            connection.exec_driver_sql("INSERT INTO t VALUES (zeroblob(100000))")
    except OperationalError as exc:
        return exc
    finally:
        engine.dispose()
    raise AssertionError("the database grew")


def test_a_full_or_gone_database_is_one_warning_a_streak_not_a_traceback_a_mail(
    tmp_path, caplog
) -> None:
    """A full disk wrote 228 lines for 3 mails answered 451 (a traceback each): now one
    warning while it lasts, and one line when mail is stored again."""
    full = disk_full(tmp_path)
    assert "database or disk is full" in str(full)
    failures: list[Exception] = [full, full, full]

    async def store(raw: bytes, envelope: EnvelopeInfo) -> None:
        if failures:
            raise failures.pop()

    handler = InboundHandler(store, accept, clock=lambda: NOW)
    controller = make_controller(handler, "127.0.0.1", free_port(), timeout=10)
    controller.start()
    try:
        with caplog.at_level("INFO", logger="pbmserv.listener"):
            for _ in range(3):
                with client(controller) as smtp, pytest.raises(smtplib.SMTPDataError) as info:
                    smtp.sendmail("alice@example.org", ["pbmserv@localhost"], RAW)
                assert info.value.smtp_code == 451
            with client(controller) as smtp:
                smtp.sendmail("alice@example.org", ["pbmserv@localhost"], RAW)
    finally:
        controller.stop()
    said = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not any(r.exc_info for r in said)
    assert [r.getMessage() for r in said] == [
        "listener: the database cannot be used (OperationalError: OperationalError: database "
        "or disk is full); answering 451 meanwhile (no more warnings until it works again)",
        "listener works again (after 3 failed tries)",
    ]


def test_one_client_address_cannot_hold_every_session() -> None:
    """A client holding sessions open (a NOOP now and then restarts the idle timer) got every
    other sender a 421: one address has at most ``max_per_host`` of them."""
    controller = start(Recorder(), max_connections=10, max_per_host=2)
    held = [greeted(controller), greeted(controller)]
    try:
        with socket.create_connection((controller.hostname, controller.port), timeout=10) as late:
            assert read_to_end(late).startswith(b"421 ")
        other = socket.create_connection(
            (controller.hostname, controller.port), timeout=10, source_address=("127.0.0.2", 0)
        )
        with other:  # another address still has its session
            assert other.recv(1024).startswith(b"220 ")
    finally:
        for conn in held:
            conn.close()
        controller.stop()

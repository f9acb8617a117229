"""Outbound delivery: the Maildir sink, the SMTP relay against a real aiosmtpd, and backoff."""

from __future__ import annotations

import mailbox
import os
import random
import socket
import stat
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from unittest.mock import patch

import pytest
from aiosmtpd.controller import Controller

from pbmserv.mail import compose
from pbmserv.mail.compose import FlatMessage, OutgoingMail, build_message, prepare_message
from pbmserv.mail.deliver import (
    RETRY_MINUTES,
    MaildirSink,
    PermanentFailure,
    SmtpRelay,
    TemporaryFailure,
    next_attempt,
)

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def message(to: str = "alice@example.org"):
    mail = OutgoingMail(to, "Ploy Board 101 bob", "It is bob's turn.\nCafé ☕\n", "<in@x>", [])
    return build_message(mail, from_addr="pbmserv@localhost", server_id="test", domain="localhost")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sink:
    def __init__(self) -> None:
        self.got: list[tuple[str, list[str], bytes]] = []

    async def handle_DATA(self, server, session, envelope) -> str:
        self.got.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content))
        return "250 OK"


class Answers:
    def __init__(self, data: str | None = None, rcpt: str | None = None) -> None:
        self.data, self.rcpt = data, rcpt

    async def handle_RCPT(self, server, session, envelope, address, options) -> str:
        if self.rcpt:
            return self.rcpt
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope) -> str:
        return self.data or "250 OK"


def run(handler) -> Iterator[SmtpRelay]:
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield SmtpRelay("127.0.0.1", controller.port, starttls=False, timeout=10)
    finally:
        controller.stop()


@pytest.fixture
def sink() -> Sink:
    return Sink()


@pytest.fixture
def relay(sink: Sink) -> Iterator[SmtpRelay]:
    yield from run(sink)


# ----------------------------------------------------------------------------- Maildir


def test_maildir_delivery_creates_the_maildir(tmp_path) -> None:
    path = tmp_path / "deep" / "Maildir"
    key = MaildirSink(path).send(message())
    assert {p.name for p in path.iterdir()} == {"new", "cur", "tmp"}
    assert (path / "new" / key).exists()
    stored = mailbox.Maildir(path)[key]
    assert stored["To"] == "alice@example.org"
    assert stored["X-Pbmserv-Server"] == "test"
    parsed = message_from_bytes((path / "new" / key).read_bytes(), policy=policy.default)
    assert parsed.get_body(("plain",)).get_content() == "It is bob's turn.\nCafé ☕\n"


def test_maildir_and_its_mails_are_the_owners_alone(tmp_path) -> None:
    """Whatever the umask (`make run` has the user's, 0022): every answer is in there."""
    old = os.umask(0o022)
    try:
        path = tmp_path / "data" / "Maildir"
        key = MaildirSink(path).send(message())
    finally:
        os.umask(old)
    for directory in (tmp_path / "data", path, path / "new", path / "tmp", path / "cur"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    assert stat.S_IMODE((path / "new" / key).stat().st_mode) == 0o600


def test_maildir_two_mails_two_keys(tmp_path) -> None:
    sink = MaildirSink(tmp_path / "box")
    assert sink.send(message()) != sink.send(message())
    assert len(list((tmp_path / "box" / "new").iterdir())) == 2


def test_maildir_failure_is_temporary(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(TemporaryFailure):
        MaildirSink(blocker / "Maildir").send(message())


# ----------------------------------------------------------------------------- relay


def test_relay_delivers(relay: SmtpRelay, sink: Sink) -> None:
    msg = message()
    assert relay.send(msg) == msg["Message-ID"]
    mail_from, rcpts, raw = sink.got[0]
    assert mail_from == "pbmserv@localhost" and rcpts == ["alice@example.org"]
    got = message_from_bytes(raw.replace(b"\r\n", b"\n"), policy=policy.default)
    assert got["Message-ID"] == msg["Message-ID"]
    assert got.get_body(("plain",)).get_content() == "It is bob's turn.\nCafé ☕\n"


def test_relay_envelope_sender(sink: Sink) -> None:
    for relay in run(sink):
        relay.envelope_from = "bounces@localhost"
        relay.send(message())
    assert sink.got[0][0] == "bounces@localhost"


def test_relay_451_is_temporary() -> None:
    for relay in run(Answers(data="451 4.3.0 try later")):
        with pytest.raises(TemporaryFailure, match="451"):
            relay.send(message())


def test_relay_550_is_permanent() -> None:
    for relay in run(Answers(data="550 5.7.1 go away")):
        with pytest.raises(PermanentFailure, match="550"):
            relay.send(message())


def test_refused_recipient_is_permanent() -> None:
    for relay in run(Answers(rcpt="550 5.1.1 no such user")):
        with pytest.raises(PermanentFailure, match="alice@example.org"):
            relay.send(message())


def test_deferred_recipient_is_temporary() -> None:
    for relay in run(Answers(rcpt="450 4.2.0 mailbox busy")):
        with pytest.raises(TemporaryFailure):
            relay.send(message())


def test_connection_refused_is_temporary() -> None:
    with pytest.raises(TemporaryFailure):
        SmtpRelay("127.0.0.1", free_port(), timeout=5).send(message())


def test_starttls_unsupported_is_temporary() -> None:
    for relay in run(Sink()):
        relay.starttls = True
        with pytest.raises(TemporaryFailure):
            relay.send(message())


# ----------------------------------------------------------------------------- backoff


def test_backoff_schedule() -> None:
    waits = [next_attempt(n, NOW) for n in range(1, len(RETRY_MINUTES) + 1)]
    assert waits[:4] == [NOW + timedelta(minutes=m) for m in (1, 5, 15, 60)]
    assert all(w is not None and w > NOW for w in waits)
    total = sum(RETRY_MINUTES)
    assert timedelta(hours=36) <= timedelta(minutes=total) <= timedelta(hours=60)
    assert next_attempt(len(RETRY_MINUTES) + 1, NOW) is None
    assert next_attempt(100, NOW) is None
    assert next_attempt(0, NOW) == NOW


def test_backoff_never_shrinks() -> None:
    assert list(RETRY_MINUTES) == sorted(RETRY_MINUTES)


class Counting(Sink):
    """A relay that counts its connections (each one says EHLO once)."""

    def __init__(self) -> None:
        super().__init__()
        self.connections = 0

    async def handle_EHLO(self, server, session, envelope, hostname, responses):
        self.connections += 1
        session.host_name = hostname
        return responses


def test_a_group_of_mails_shares_one_connection() -> None:
    counting = Counting()
    for relay in run(counting):
        with relay:
            for to in ("a@example.org", "b@example.org", "c@example.org"):
                relay.send(message(to))
        relay.send(message("d@example.org"))  # outside a group: a connection of its own
    assert [rcpts for _, rcpts, _ in counting.got] == [
        ["a@example.org"],
        ["b@example.org"],
        ["c@example.org"],
        ["d@example.org"],
    ]
    assert counting.connections == 2


def test_a_kept_connection_the_relay_dropped_is_opened_again() -> None:
    counting = Counting()
    for relay in run(counting):
        with relay:
            relay.send(message("a@example.org"))
            assert relay._smtp is not None
            relay._smtp.sock.shutdown(socket.SHUT_RDWR)  # as if the relay had hung up
            relay.send(message("b@example.org"))
    assert [rcpts for _, rcpts, _ in counting.got] == [["a@example.org"], ["b@example.org"]]
    assert counting.connections == 2


def test_a_refused_mail_in_a_group_leaves_the_others_alone() -> None:
    class RefusesBob(Counting):
        async def handle_RCPT(self, server, session, envelope, address, options):
            if address.startswith("bob@"):
                return "550 5.1.1 no such user"
            envelope.rcpt_tos.append(address)
            return "250 OK"

    relay_handler = RefusesBob()
    for relay in run(relay_handler):
        with relay:
            relay.send(message("a@example.org"))
            with pytest.raises(PermanentFailure, match="bob@example.org"):
                relay.send(message("bob@example.org"))
            relay.send(message("c@example.org"))
    assert [rcpts for _, rcpts, _ in relay_handler.got] == [["a@example.org"], ["c@example.org"]]


# ----------------------------------------------------------------------------- the fast path


def test_a_flat_message_goes_out_as_the_email_package_would_send_it(tmp_path, sink) -> None:
    """The sender's bytes (compose.prepare_message) reach the relay and the Maildir exactly as
    the message the email package builds would: same envelope, same bytes."""
    mail = OutgoingMail("alice@example.org", "Ploy Board 101 bob", "Café ☕\n", "<in@x>", [])
    how = dict(from_addr="pbmserv@localhost", server_id="test", domain="localhost", now=NOW)

    def flat(fold: bool) -> FlatMessage:
        random.seed(3)  # the boundary is drawn here, and when the package writes its message
        made = prepare_message(mail, **how, fold=fold)
        assert isinstance(made, FlatMessage)
        return made

    def built() -> EmailMessage:
        random.seed(3)
        return build_message(mail, **how)

    with patch.object(compose, "make_msgid", lambda domain=None: "<1@localhost>"):
        for relay in run(sink):
            relay.send(built())
            assert relay.send(flat(fold=True)) == "<1@localhost>"
        assert len(sink.got) == 2 and sink.got[0] == sink.got[1]
        MaildirSink(tmp_path / "package").send(built())
        MaildirSink(tmp_path / "fast").send(flat(fold=False))
    package, fast = (
        [box.get_bytes(key) for key in box.iterkeys()]
        for box in (mailbox.Maildir(tmp_path / name) for name in ("package", "fast"))
    )
    assert len(package) == 1 and package == fast

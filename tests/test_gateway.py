"""The mail gateway end to end: a real listener on 127.0.0.1, smtplib as the client, the worker
and the sender running, answers read back from the Maildir."""

from __future__ import annotations

import mailbox
import smtplib
import socket
from contextlib import contextmanager
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

import pytest
from sqlalchemy import func, select
from waiting import wait_until

from pbmserv.cli.server import Server
from pbmserv.store.models import Board, Inbox, InboxStatus, Outbox, OutboxStatus

SERVER = "pbmserv@example.org"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Gateway:
    def __init__(self, settings, sessions, clock=None) -> None:
        """``clock``: the test's clock, when the server runs on it (else the server's own
        clock, which starts on the test's calendar), for the Date of the mails sent."""
        self.settings, self.sessions, self.clock = settings, sessions, clock
        self.port = settings.listen_port

    def now(self):
        return self.clock.now if self.clock is not None else self.settings.clock()

    def send(
        self,
        sender: str,
        subject: str,
        body: str = "",
        *,
        message_id: str | None = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
        envelope_from=None,
    ) -> str:
        if raw is None:
            msg = EmailMessage()
            msg["From"] = sender
            msg["To"] = SERVER
            msg["Subject"] = subject
            msg["Message-ID"] = message_id or make_msgid(domain="client.example")
            if "Date" not in (headers or {}):  # as every mail program writes it
                msg["Date"] = format_datetime(self.now())
            for key, value in (headers or {}).items():
                msg[key] = value
            msg.set_content(body or "\n")
            raw = msg.as_bytes(policy=policy.SMTP)  # CRLF: lines over 1000 bytes are refused
            message_id = msg["Message-ID"]
        with smtplib.SMTP("127.0.0.1", self.port, timeout=10) as smtp:
            smtp.sendmail(sender if envelope_from is None else envelope_from, [SERVER], raw)
        return message_id or ""

    def settle(self, timeout: float = 30.0) -> None:
        """Wait until every stored mail is processed and every answer delivered."""

        def queues() -> tuple[int, int]:
            with self.sessions() as s:
                inbox = s.scalar(
                    select(func.count())
                    .select_from(Inbox)
                    .where(Inbox.status.in_([InboxStatus.new, InboxStatus.processing]))
                )
                outbox = s.scalar(
                    select(func.count())
                    .select_from(Outbox)
                    .where(Outbox.status.in_([OutboxStatus.pending, OutboxStatus.sending]))
                )
            return inbox or 0, outbox or 0

        wait_until(
            lambda: queues() == (0, 0),
            "every stored mail processed and every answer delivered",
            timeout,
            seen=lambda: "{} mails waiting in the inbox, {} in the outbox".format(*queues()),
        )

    def mails(self, to: str | None = None) -> list[EmailMessage]:
        box = mailbox.Maildir(self.settings.maildir_path, create=True)
        found = []
        for key in box.iterkeys():
            msg = message_from_bytes(box.get_bytes(key), policy=policy.default)
            if to is None or msg["To"] == to:
                found.append(msg)
        with self.sessions() as s:
            order = dict(s.execute(select(Outbox.message_id, Outbox.id)).all())
        return sorted(found, key=lambda m: order.get(m["Message-ID"], 0))

    def subjects(self, to: str) -> list[str]:
        return [str(m["Subject"]) for m in self.mails(to)]


@contextmanager
def running_gateway(settings, sessions):  # type: ignore[no-untyped-def]
    """A server of ``settings`` on a free port of 127.0.0.1, and its Gateway, till the end."""
    settings.listen_port = free_port()
    server = Server(settings)
    server.start()
    try:
        yield Gateway(settings, sessions)
    finally:
        server.stop()


@pytest.fixture
def gateway(settings, sessions):
    settings.max_message_bytes = 200_000
    with running_gateway(settings, sessions) as running:
        yield running


def body_of(msg: EmailMessage) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content()


def reply_to_last(gateway: Gateway, address: str) -> str:
    """Reply (subject kept) to the last mail ``address`` got from us: confirms its code."""
    last = gateway.mails(address)[-1]
    assert str(last["Subject"]).startswith("confirm "), last["Subject"]
    return gateway.send(
        address, f"Re: {last['Subject']}", headers={"In-Reply-To": last["Message-ID"]}
    )


def test_a_whole_game_by_mail(gateway):
    gateway.send("alice@example.org", "signup alice secret1")
    gateway.send("bob@example.org", "Re: signup bob secret2")
    gateway.settle()
    assert gateway.subjects("alice@example.org")[0].startswith("confirm ")
    for address in ("alice@example.org", "bob@example.org"):
        reply_to_last(gateway, address)
    gateway.settle()
    assert gateway.subjects("alice@example.org")[-1] == "pbmserv confirm"
    gateway.send("alice@example.org", "plotto challenge alice bob")
    gateway.settle()
    assert gateway.subjects("bob@example.org")[-1] == "pbmserv confirm"  # nothing yet
    reply_to_last(gateway, "alice@example.org")
    gateway.settle()
    assert gateway.subjects("bob@example.org")[-1] == "New Plotto Board 101 alice"
    assert gateway.subjects("alice@example.org")[-1] == "New Plotto Board 101 alice"
    gateway.send(
        "alice@example.org", "plotto move 101 alice secret1 a1#1", "Hello Bob!\n\n-- \nAlice"
    )
    gateway.settle()
    to_bob = gateway.mails("bob@example.org")[-1]
    assert to_bob["Subject"] == "Plotto Board 101 bob"
    assert "alice writes:" in body_of(to_bob) and "Hello Bob!" in body_of(to_bob)
    assert "Alice" not in body_of(to_bob).split("alice writes:")[1]  # the signature is cut
    answer = gateway.mails("alice@example.org")[-1]
    assert answer["Auto-Submitted"] == "auto-replied"
    assert answer["X-Pbmserv-Server"]
    moves = 1
    for _ in range(60):
        with gateway.sessions() as s:
            from pbmserv.domain import boards

            board = s.scalar(select(Board).where(Board.game == "plotto"))
            position = boards.position_of(board)
            mover = boards.user_to_move(board, position)
            if mover is None:
                break
            text = sorted(position.format_move(m) for m in position.legal_moves())[0]
        password = {"alice": "secret1", "bob": "secret2"}[mover.userid]
        gateway.send(
            f"{mover.userid}@example.org",
            f"plotto move 101 {mover.userid} {password} {text}#{moves + 1}",
        )
        gateway.settle()
        moves += 1
    final = gateway.mails("bob@example.org")[-1]
    assert final["Subject"] == "Plotto Board 101"
    assert "Game won by" in body_of(final) or "Game was a tie" in body_of(final)


def test_a_shell_line_mailed_as_it_is_written_works(gateway):
    """The README's shell lines start with the program's name; mailed as they are, they do
    what they do without it (and the password is masked in the answer all the same)."""
    gateway.send("carol@example.org", "pbmserv signup carol secret3")
    gateway.send("dave@example.org", "subject", "PBMSERV help\n")
    gateway.send("erin@example.org", "pbmserv")
    gateway.settle()
    (answer,) = gateway.mails("carol@example.org")
    assert str(answer["Subject"]).startswith("confirm ")
    assert "secret3" not in body_of(answer)
    (help_answer,) = gateway.mails("dave@example.org")
    assert "No such command" not in body_of(help_answer)
    assert "signup" in body_of(help_answer)
    (alone,) = gateway.mails("erin@example.org")  # the program's name alone: the help
    assert "No such command" not in body_of(alone) and "signup" in body_of(alone)


def test_commands_in_the_body_and_answers_thread(gateway):
    mid = gateway.send(
        "alice@example.org", "hello", "signup alice secret1\n\nThis is my comment.\n"
    )
    gateway.settle()
    answer = gateway.mails("alice@example.org")[0]
    assert answer["Subject"].startswith("confirm ")
    assert answer["In-Reply-To"] == mid
    assert mid in answer["References"]


def test_a_replayed_mail_is_processed_once(gateway):
    mid = make_msgid(domain="client.example")
    gateway.send("alice@example.org", "signup alice secret1", message_id=mid)
    gateway.send("alice@example.org", "signup alice secret1", message_id=mid)
    gateway.settle()
    assert len(gateway.subjects("alice@example.org")) == 1
    with gateway.sessions() as s:
        assert len(s.scalars(select(Inbox)).all()) == 1


def test_same_bytes_without_message_id_are_one_mail(gateway):
    raw = b"From: alice@example.org\r\nTo: pbmserv@example.org\r\nSubject: help\r\nDate: Sun, 01 Nov 2026 12:00:00 +0000\r\n\r\nhi\r\n"
    gateway.send("alice@example.org", "", raw=raw)
    gateway.send("alice@example.org", "", raw=raw)
    gateway.settle()
    assert gateway.subjects("alice@example.org") == ["pbmserv help"]


def test_errors_quote_the_mail_with_passwords_masked(gateway):
    gateway.send("alice@example.org", "signup alice secret1")
    gateway.settle()
    reply_to_last(gateway, "alice@example.org")
    gateway.send(
        "alice@example.org", "plotto move 101 alice secret1 a1", "plotto move 101 alice secret1 a2"
    )
    gateway.settle()
    error = gateway.mails("alice@example.org")[-1]
    text = body_of(error)
    assert error["Subject"] == "Plotto Board 101 Error"
    assert "secret1" not in text and "********" in text
    assert "no Plotto board 101" in text


def test_robots_and_bounces_are_never_answered(gateway):
    gateway.send("alice@example.org", "help", headers={"Auto-Submitted": "auto-replied"})
    gateway.send("list@example.org", "help", headers={"Precedence": "bulk"})
    gateway.send("MAILER-DAEMON@example.org", "help", envelope_from="")
    gateway.settle()
    assert gateway.mails() == []
    with gateway.sessions() as s:
        assert {r.status for r in s.scalars(select(Inbox))} == {InboxStatus.ignored}


def test_unknown_recipient_and_oversize_are_refused(gateway):
    with smtplib.SMTP("127.0.0.1", gateway.port, timeout=10) as smtp:
        with pytest.raises(smtplib.SMTPRecipientsRefused) as info:
            smtp.sendmail("alice@example.org", ["nobody@example.org"], b"Subject: x\r\n\r\nx\r\n")
        assert info.value.recipients["nobody@example.org"][0] == 550
    big = b"Subject: help\r\n\r\n" + (b"x" * 76 + b"\r\n") * 3_950  # 300 KB
    with (
        smtplib.SMTP("127.0.0.1", gateway.port, timeout=10) as smtp,
        pytest.raises(smtplib.SMTPException) as info,
    ):
        smtp.sendmail("alice@example.org", [SERVER], big)
    assert "552" in str(info.value) or getattr(info.value, "smtp_code", 0) == 552
    gateway.settle()
    assert gateway.mails() == []


def test_html_only_and_quoted_printable_mail(gateway):
    raw = (
        b"From: alice@example.org\r\nTo: pbmserv@example.org\r\nSubject: =?utf-8?q?hi?=\r\n"
        b"Message-ID: <html1@client.example>\r\nMIME-Version: 1.0\r\nDate: Sun, 01 Nov 2026 12:00:00 +0000\r\n"
        b"Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
        b"<html><body><p>signup alice secret=\r\n1</p><p>Gr=C3=BC=C3=9Fe</p></body></html>\r\n"
    )
    gateway.send("alice@example.org", "", raw=raw)
    gateway.settle()
    [answer] = gateway.mails("alice@example.org")
    assert answer["Subject"].startswith("confirm ") and "'alice'" in body_of(answer)


@pytest.mark.parametrize(
    "hidden",
    [
        "<!-- note -- >\r\n{line}\r\n-->",  # '-- >' closes no comment in a browser
        "<!--<p>{line}</p>",  # a comment that never ends hides the rest
        "<iframe>\r\n{line}\r\n</iframe>",  # an iframe's text is never shown
    ],
)
def test_a_command_hidden_in_html_the_reader_does_not_see_does_not_run(gateway, shell, hidden):
    """An HTML mail's text is read as a browser shows it: a line its reader never sees, in a
    comment that '-- >' does not end, in one that never ends, or in an iframe, ran as a
    command (html.parser ends a comment at '-- >', and the rest was read as text)."""
    from test_abuse import first_move

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mover, _ = first_move(gateway.sessions)
    line = f"polis resign 101 {mover} pw-{mover}"
    raw = (
        f"From: {mover}@example.org\r\nTo: pbmserv@example.org\r\nSubject: hi\r\n"
        f"Message-ID: <hidden@client.example>\r\nMIME-Version: 1.0\r\nDate: Sun, 01 Nov 2026 12:00:00 +0000\r\n"
        f"Content-Type: text/html; charset=utf-8\r\n\r\n<p>Good game!</p>"
        + hidden.format(line=line)
    ).encode()
    gateway.settle()
    answered = len(gateway.mails(f"{mover}@example.org"))
    gateway.send(f"{mover}@example.org", "", raw=raw)
    gateway.settle()
    answers = gateway.mails(f"{mover}@example.org")[answered:]
    assert [str(m["Subject"]) for m in answers] == ["pbmserv Error"]
    assert "Error: no command found in your mail." in body_of(answers[0])
    with gateway.sessions() as s:
        assert s.scalar(select(Board.result)) is None  # still in play


def test_answers_per_sender_are_capped(gateway):
    gateway.settings.max_stranger_answers_per_day = 2
    for _i in range(4):
        gateway.send("alice@example.org", "help")
    gateway.settle()
    assert gateway.subjects("alice@example.org") == [
        "pbmserv help",
        "pbmserv help",
        "pbmserv: answer limit reached",
    ]


def test_malformed_mail_gets_an_answer_and_the_worker_goes_on(gateway):
    raw = b"From: alice@example.org\r\nDate: Sun, 01 Nov 2026 12:00:00 +0000\r\nSubject: \xff\xfe broken\r\nContent-Type: multipart/mixed\r\n\r\n\xff\x00garbage"
    gateway.send("alice@example.org", "", raw=raw)
    gateway.send("bob@example.org", "help")
    gateway.settle()
    assert gateway.subjects("alice@example.org") == ["pbmserv Error"]
    assert gateway.subjects("bob@example.org") == ["pbmserv help"]


def test_lmtp_mode(settings, sessions):
    settings.listen_port = free_port()
    settings.lmtp = True
    server = Server(settings)
    server.start()
    try:
        with smtplib.LMTP("127.0.0.1", settings.listen_port) as lmtp:
            lmtp.sendmail(
                "alice@example.org",
                [SERVER],
                b"From: alice@example.org\r\nDate: Sun, 01 Nov 2026 12:00:00 +0000\r\n"
                b"Subject: help\r\n\r\n",
            )
        Gateway(settings, sessions).settle()
        assert Gateway(settings, sessions).subjects("alice@example.org") == ["pbmserv help"]
    finally:
        server.stop()

"""More attacks over SMTP against a running server (127.0.0.1), found after issue 16's: mails
whose From names several addresses, and many signup lines in one mail mailing strangers."""

from __future__ import annotations

from email.utils import make_msgid

import pytest
from sqlalchemy import select
from test_abuse import count
from test_gateway import SERVER, Gateway, body_of, free_port

from pbmserv.cli.server import Server
from pbmserv.store.models import Inbox, InboxStatus, User


@pytest.fixture
def gateway(settings, sessions):
    settings.listen_port = free_port()
    server = Server(settings)
    server.start()
    try:
        yield Gateway(settings, sessions)
    finally:
        server.stop()


# ----------------------------------------------------------------------------- address lists


@pytest.mark.parametrize(
    "sender",
    [
        "a@x.test, m20@x.test",
        "Alice <a@x.test>, Mallory <m20@x.test>",
        "grp: a@x.test, b@x.test;",
        "grp: a@x.test;",
    ],
)
def test_a_mail_from_several_addresses_is_set_aside_unanswered(gateway, shell, sender):
    """README: an address is exactly one addr-spec, no lists.  We cannot tell whom to answer,
    so nobody is answered and no command runs (as for a mail with no usable sender)."""
    shell.signup("alice")
    raw = (
        f"From: {sender}\r\nTo: {SERVER}\r\nSubject: change password alice pw-alice Pw-new1\r\n"
        f"Message-ID: {make_msgid(domain='client.example')}\r\n\r\nhelp\r\n"
    ).encode()
    gateway.send("a@x.test", "", raw=raw)
    gateway.settle()
    assert gateway.mails() == []
    with gateway.sessions() as s:
        [mail] = s.scalars(select(Inbox)).all()
        assert mail.status is InboxStatus.ignored
        assert mail.last_error in (  # the note on why it got no answer
            "not answered: the From header names 2 addresses",
            "not answered: the From header is a group of addresses",
        )
    shell.ok("change password alice pw-alice Pw-other")  # the old password still held
    assert count(gateway.sessions, Inbox, Inbox.status == InboxStatus.done) == 0


# ----------------------------------------------------------------------------- signup addresses


def test_signup_addresses_are_capped_per_mail_not_per_line(gateway):
    spammer = "amp@evil.example"
    lines = "\n".join(
        f"signup amp{n} pw1234 v{n}a@victims.example v{n}b@victims.example v{n}c@victims.example"
        for n in range(10)
    )
    gateway.send(spammer, "hi", lines)
    gateway.settle()
    victims = {str(m["To"]) for m in gateway.mails() if str(m["To"]).endswith("@victims.example")}
    assert victims == {"v0a@victims.example", "v0b@victims.example", "v0c@victims.example"}
    with gateway.sessions() as s:
        assert list(s.scalars(select(User.userid))) == ["amp0"]
    [answer] = gateway.mails(spammer)
    assert "in all the signup and change address lines of one mail together" in " ".join(
        body_of(answer).split()
    )
    # the same across a signup and a change address line
    gateway.send(
        "carol@example.org",
        "hi",
        "signup carol pw1234 c1@example.net c2@example.net\n"
        "change address carol pw1234 c3@example.net c4@example.net\n",
    )
    gateway.settle()
    assert [str(m["To"]) for m in gateway.mails() if "@example.net" in str(m["To"])] == [
        "c1@example.net",
        "c2@example.net",
    ]

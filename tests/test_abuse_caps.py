"""More attacks over SMTP against a running server (127.0.0.1), found after issue 16's: mails
whose From names several addresses."""

from __future__ import annotations

from email.utils import make_msgid

import pytest
from sqlalchemy import select
from test_abuse import count
from test_gateway import SERVER, Gateway, free_port

from pbmserv.cli.server import Server
from pbmserv.store.models import Inbox, InboxStatus


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

"""The size limit of deploy/postfix.md: Postfix's ``message_size_limit`` set to
``max_message_bytes``, as the guide says, lets nothing through that pbmserv then refuses (a
mail Postfix took and pbmserv refused is bounced by Postfix, to a sender often forged)."""

from __future__ import annotations

import re
import smtplib
from pathlib import Path

import pytest
from sqlalchemy import func, select
from test_gateway import SERVER, running_gateway

from pbmserv.store.models import Inbox

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 200_000
RECEIVED = (  # what Postfix puts on top of the mail it took (pipe: Return-Path, Delivered-To)
    b"Return-Path: <alice@example.org>\n"
    b"Delivered-To: pbmserv@example.org\n"
    b"Received: from mx.example.org (mx.example.org [192.0.2.1])\n"
    b"\tby games.example.org (Postfix) with ESMTPS id 4ZxY1k2Lmnz9sQ\n"
    b"\tfor <pbmserv@example.org>; Sun, 1 Nov 2026 12:00:00 +0000 (UTC)\n"
)


def mail(lines: list[bytes], end: bytes = b"\n") -> bytes:
    """A mail of ``lines`` (a help command first), written with line ends ``end``."""
    head = [b"From: alice@example.org", b"To: pbmserv@example.org", b"Subject: help", b""]
    return end.join(head + lines) + end


def postfix_size(raw: bytes) -> int:
    """The size Postfix counts against message_size_limit: a line end is one byte."""
    return len(raw.replace(b"\r\n", b"\n"))


def test_the_guide_sets_postfix_to_the_limit_of_the_example_config():
    postfix = (ROOT / "deploy" / "postfix.md").read_text()
    example = (ROOT / "deploy" / "pbmserv.toml.example").read_text()
    (postfix_limit,) = re.findall(r"^message_size_limit = (\d+)", postfix, re.M)
    (pbmserv_limit,) = re.findall(r"^max_message_bytes = (\d+)", example, re.M)
    assert postfix_limit == pbmserv_limit


@pytest.fixture
def gateway(settings, sessions):
    settings.max_message_bytes, settings.lmtp = LIMIT, True  # (Postfix's LMTP transport)
    with running_gateway(settings, sessions) as running:
        yield running


def stored(sessions) -> int:
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(Inbox)) or 0


def test_a_mail_under_postfixs_limit_is_taken_over_lmtp_however_short_its_lines(
    gateway, settings, sessions
):
    """A mail of short lines (or of lines that start with a dot, sent doubled) is up to twice
    as large on the wire as Postfix counts it: the listener, counting the wire, refused with
    552 a mail Postfix had taken, and Postfix bounced it."""
    dots = mail([b"."] * 45_000, end=b"\r\n")  # 90 KB to Postfix, 180 KB as sent doubled
    short = mail([b"x"] * 95_000, end=b"\r\n")  # 190 KB to Postfix, 285 KB on the wire
    for raw in (dots, short):
        assert postfix_size(RECEIVED + raw) < LIMIT
        with smtplib.LMTP("127.0.0.1", gateway.port, timeout=30) as lmtp:
            assert lmtp.sendmail("alice@example.org", [SERVER], RECEIVED + raw) == {}
    assert stored(sessions) == 2
    too_big = mail([b"x" * 70] * 3_500, end=b"\r\n")  # 248 KB: over the limit all the same
    with (
        smtplib.LMTP("127.0.0.1", gateway.port, timeout=30) as lmtp,
        pytest.raises(smtplib.SMTPDataError) as info,
    ):
        lmtp.sendmail("alice@example.org", [SERVER], too_big)
    assert info.value.smtp_code == 552
    assert stored(sessions) == 2


def test_inject_takes_a_mail_at_the_limit_with_the_headers_postfix_added(
    operator, settings, sessions, tmp_path, monkeypatch
):
    """Postfix's pipe hands ``mail inject`` the mail it took under message_size_limit with
    Return-Path and Delivered-To on top: counted against the limit, a mail at the limit was
    refused (exit 1), and Postfix bounced it."""
    monkeypatch.setenv("PBMSERV_MAX_MESSAGE_BYTES", str(LIMIT))
    raw = mail([b"x" * 70] * 2_780)
    raw += b"y" * (LIMIT - len(raw) - 1) + b"\n"
    assert len(raw) == LIMIT
    path = tmp_path / "at-the-limit.eml"
    path.write_bytes(RECEIVED + raw)
    status, out, err = operator("mail", "inject", "--no-process", str(path))
    assert status == 0, err
    path.write_bytes(mail([b"x" * 70] * 3_500))  # 248 KB: over the limit all the same
    status, out, err = operator("mail", "inject", "--no-process", str(path))
    assert status == 1 and f"the mail is larger than {LIMIT} bytes" in err, (out, err)
    assert stored(sessions) == 1

"""Outgoing mails: headers, threading, encoding, and the quoted original for error mails."""

from __future__ import annotations

import io
import random
import sys
from datetime import UTC, datetime, timedelta, timezone
from email import message_from_bytes, policy
from email.generator import BytesGenerator
from email.message import EmailMessage
from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbmserv.mail import compose
from pbmserv.mail.compose import (
    FlatMessage,
    OutgoingMail,
    build_message,
    prepare_message,
)
from pbmserv.mail.parse import parse_message

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def build(mail: OutgoingMail):
    return build_message(
        mail, from_addr="PBM Server <pbmserv@example.org>", server_id="pbm1", domain="example.org",
        now=NOW,
    )  # fmt: skip


def roundtrip(msg):
    return message_from_bytes(msg.as_bytes(), policy=policy.default)


def test_headers() -> None:
    msg = build(OutgoingMail("bob@example.org", "Ploy Board 101 bob", "It is bob's turn.\n"))
    assert msg["From"] == "PBM Server <pbmserv@example.org>"
    assert msg["To"] == "bob@example.org"
    assert msg["Subject"] == "Ploy Board 101 bob"
    assert msg["Date"] == "Sat, 21 Nov 2026 12:00:00 +0000"
    assert msg["Message-ID"].startswith("<") and msg["Message-ID"].endswith("@example.org>")
    assert msg["Auto-Submitted"] == "auto-replied"
    assert msg["X-Pbmserv-Server"] == "pbm1"
    assert "Precedence" not in msg
    assert "In-Reply-To" not in msg and "References" not in msg


def test_message_ids_are_unique() -> None:
    mail = OutgoingMail("bob@example.org", "s", "b")
    assert build(mail)["Message-ID"] != build(mail)["Message-ID"]


def test_ascii_body_is_7bit_utf8() -> None:
    msg = build(OutgoingMail("bob@example.org", "s", "plain ascii\nboard"))
    assert msg.get_content_type() == "multipart/alternative"
    text = plain(msg)
    assert text.get_content_charset() == "utf-8"
    assert text["Content-Transfer-Encoding"] == "7bit"
    assert text.get_content() == "plain ascii\nboard\n"
    assert b"plain ascii\nboard\n" in msg.as_bytes()


def test_non_ascii_body_is_quoted_printable() -> None:
    body = "Zoë writes:\nGut gespielt, Jürgen! ♟\n"
    msg = build(OutgoingMail("bob@example.org", "Grüße", body))
    assert plain(msg)["Content-Transfer-Encoding"] == "quoted-printable"
    raw = msg.as_bytes()
    assert raw.isascii()
    again = roundtrip(msg)
    assert plain(again).get_content() == body
    assert again["Subject"] == "Grüße"


def test_long_lines_are_quoted_printable() -> None:
    body = "x" * 1200 + "\n"
    msg = build(OutgoingMail("bob@example.org", "s", body))
    assert plain(msg)["Content-Transfer-Encoding"] == "quoted-printable"
    assert all(len(line) <= 78 for line in msg.as_bytes().split(b"\n"))
    assert plain(roundtrip(msg)).get_content() == body


def test_html_alternative_keeps_the_board_in_a_pre_block() -> None:
    body = "Summary of Ploy Board 101\n  a  b  <- to move & <b>bold</b>\n"
    msg = roundtrip(build(OutgoingMail("bob@example.org", "s", body)))
    parts = [p.get_content_type() for p in msg.iter_parts()]
    assert parts == ["text/plain", "text/html"]  # plain first: the preferred part is last
    assert plain(msg).get_content() == body
    html = msg.get_body(preferencelist=("html",)).get_content()
    assert "<pre " in html and "monospace" in html
    assert "  a  b  &lt;- to move &amp; &lt;b&gt;bold&lt;/b&gt;</pre>" in html
    assert "<b>" not in html


def plain(msg):
    return msg.get_body(preferencelist=("plain",))


def test_threading_headers() -> None:
    msg = build(OutgoingMail("bob@example.org", "s", "b", "<c@x>", ["<a@x>", "<b@x>"]))
    assert msg["In-Reply-To"] == "<c@x>"
    assert msg["References"] == "<a@x> <b@x> <c@x>"


def test_references_deduplicated_and_capped() -> None:
    refs = [f"<{n}@x>" for n in range(30)] + ["<5@x>"]
    msg = build(OutgoingMail("bob@example.org", "s", "b", "<29@x>", refs))
    got = str(msg["References"]).split()
    assert len(got) == 20 and got[-1] == "<29@x>" and len(set(got)) == 20


def test_header_injection_is_flattened() -> None:
    msg = build(OutgoingMail("bob@example.org", "Board\r\nBcc: eve@example.org", "b"))
    assert msg["Subject"] == "Board Bcc: eve@example.org"
    assert "Bcc" not in msg


def test_an_encoded_word_never_decodes_to_a_header() -> None:
    """The package decodes an encoded word in a value it is given: one that encodes CR LF
    wrote the headers it held (``Bcc:``) into the mail."""
    word = "=?utf-8?q?x=0D=0ABcc=3A_eve=40example=2Eorg?="
    msg = build(OutgoingMail("bob@example.org", f"Board {word}", "b", f"<{word}@x>", [f"<{word}>"]))
    head = msg.as_bytes().split(b"\n\n")[0].decode()
    assert "\nBcc" not in head and "\r" not in head and "Bcc" not in msg
    assert msg["Subject"] == "Board = ?utf-8?q?x=0D=0ABcc=3A_eve=40example=2Eorg?="
    assert msg["In-Reply-To"] is None and msg["References"] is None


def test_own_mail_is_recognised_as_automatic() -> None:
    msg = build(OutgoingMail("bob@example.org", "Ploy Board 101 bob", "b"))
    parsed = parse_message(msg.as_bytes(), "pbmserv@example.org")
    assert parsed.is_automatic


# The sender's fast path (prepare_message) against the email package (build_message), byte for
# byte, as mailbox writes a message (headers never folded) and as smtplib does (folded).

_text = st.text(  # anything: blanks, line breaks, encoded-word starts, non-ASCII
    alphabet=st.one_of(
        st.sampled_from(" \n\r\t=?-.<>@&\"'()[];:,\\"),
        st.characters(min_codepoint=32, max_codepoint=126),
        st.characters(min_codepoint=160, max_codepoint=0x2660),
    ),
    max_size=120,
)


def _mostly(good, odd):
    """``good`` three times in four (a bare ``one_of`` would not weigh repeated branches)."""
    return st.sampled_from([good, good, good, odd]).flatmap(lambda chosen: chosen)


_ascii = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=70
)
_atext = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,8}"  # RFC 5322 atext: the fast path's local parts
_token = st.from_regex(rf"{_atext}(\.{_atext})?", fullmatch=True)
_addr_spec = st.builds(
    "{}@{}".format, _token, st.sampled_from(["example.org", "x", "mail.example.org"])
)
_odd_address = st.sampled_from(  # valid, but beyond the fast path
    ['"a b"@example.org', "PBM <pbm@example.org>", "a..b@x", "a@[127.0.0.1]", "zoë@example.org",
     "a@exämple.org", "a@x.", ".a@x", "a@-x"]
)  # fmt: skip
_address = _mostly(_addr_spec, _odd_address)  # mostly what we send
_good_id = st.builds("<{}@{}>".format, _token, st.sampled_from(["x", "h.example"]))
_msg_id = _mostly(_good_id, _text)
_mails = st.builds(
    OutgoingMail,
    to=_address,
    subject=_mostly(_ascii, _text),
    body=st.one_of(_text, st.builds(str.__mul__, _text, st.integers(1, 30))),
    in_reply_to=_mostly(_msg_id, st.none()),
    references=st.lists(_msg_id, max_size=4),
)


def _library_bytes(mail: OutgoingMail, fold: bool, **how) -> bytes:
    msg = build_message(mail, **how)
    out = io.BytesIO()
    if fold:  # as smtplib.send_message (its CRLF aside)
        BytesGenerator(out, policy=msg.policy).flatten(msg)
    else:  # as mailbox.Maildir.add
        BytesGenerator(out, mangle_from_=False, maxheaderlen=0).flatten(msg)
    return out.getvalue()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mail=_mails,
    fold=st.booleans(),
    sender=_address,
    server=st.one_of(_ascii, _text),
    seed=st.integers(0, 2**32),
    domain=st.sampled_from(["example.org", "h", "example.org>", ""]),
    zone=st.sampled_from([UTC, timezone(timedelta(hours=-5, minutes=-30))]),
)
def test_the_fast_path_writes_what_the_email_package_writes(
    mail, fold, sender, server, seed, domain, zone
) -> None:
    how = dict(from_addr=sender, server_id=server, domain=domain, now=NOW.astimezone(zone))
    with patch.object(compose, "make_msgid", lambda domain=None: f"<1.2.3@{domain}>"):
        random.seed(seed)  # both draw the multipart boundary from the random module
        expected = _library_bytes(mail, fold, **how)
        random.seed(seed)
        prepared = prepare_message(mail, **how, fold=fold)
    if isinstance(prepared, FlatMessage):
        assert prepared.data == expected
        assert prepared.to == mail.to and prepared.sender == sender
        assert f"\nMessage-ID: {prepared.message_id}\n".encode() in expected


def test_a_usual_answer_takes_the_fast_path() -> None:
    mail = OutgoingMail(
        "bob@example.org", "Ploy Board 101 - your move", "board\n", "<a@x>", ["<b@x>"]
    )
    for fold in (False, True):
        prepared = prepare_message(
            mail, from_addr="pbmserv@example.org", server_id="pbm1", domain="example.org",
            now=NOW, fold=fold,
        )  # fmt: skip
        assert isinstance(prepared, FlatMessage)
        again = message_from_bytes(prepared.data, policy=policy.default)
        assert again["Message-ID"] == prepared.message_id
        assert plain(again).get_content() == "board\n"


def test_what_the_fast_path_cannot_write_is_built_by_the_email_package() -> None:
    how = dict(from_addr="PBM <pbmserv@example.org>", server_id="pbm1", domain="example.org")
    assert isinstance(
        prepare_message(OutgoingMail("bob@example.org", "s", "b"), **how, now=NOW, fold=True),
        EmailMessage,
    )  # a display name
    how["from_addr"] = "pbmserv@example.org"
    for mail in [
        OutgoingMail("bob@example.org", "Grüße", "b"),  # an encoded word
        OutgoingMail(
            "bob@example.org", "s", "b", attachments=[("r.json", "application/json", b"{}")]
        ),
    ]:
        assert isinstance(prepare_message(mail, **how, now=NOW, fold=False), EmailMessage)
    retried = prepare_message(
        OutgoingMail("bob@example.org", "s", "b"), **how, now=NOW, fold=True, message_id="<old@x>"
    )
    assert isinstance(retried, EmailMessage) and retried["Message-ID"] == "<old@x>"


def test_a_body_holding_the_boundary_gets_another_one() -> None:
    random.seed(7)
    drawn = "=" * 15 + f"{random.randrange(sys.maxsize):019d}" + "=="
    mail = OutgoingMail("bob@example.org", "s", f"--{drawn}\nnot the end\n--{drawn}--\n")
    how = dict(from_addr="pbmserv@example.org", server_id="pbm1", domain="example.org", now=NOW)
    with patch.object(compose, "make_msgid", lambda domain=None: "<1@x>"):
        random.seed(7)
        expected = _library_bytes(mail, False, **how)
        random.seed(7)
        prepared = prepare_message(mail, **how, fold=False)
    assert isinstance(prepared, FlatMessage) and prepared.data == expected
    assert f'boundary="{drawn}.0"'.encode() in expected

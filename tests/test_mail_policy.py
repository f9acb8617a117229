"""The mail policy: the standard library's ``policy.default``, each header class built once and
the headers read kept."""

from __future__ import annotations

import email
from email import policy
from email.headerregistry import UnstructuredHeader

from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.mail.policy import KEPT_VALUE_CHARS, POLICY, CachedHeaderRegistry

NAMES = ["From", "To", "Subject", "Date", "Message-ID", "Content-Type", "References", "X-Any"]


def test_a_header_class_is_made_once_per_name():
    factory = POLICY.header_factory
    assert factory["Subject"] is factory["subject"]
    assert factory["From"] is not factory["Subject"]
    assert POLICY.header_factory("Subject", "hello").__class__ is factory["SUBJECT"]


def test_mapping_a_header_anew_takes_effect():
    registry = CachedHeaderRegistry()
    before = registry["X-Board"]
    registry.map_to_type("X-Board", UnstructuredHeader)
    assert registry["X-Board"] is not before
    assert issubclass(registry["X-Board"], UnstructuredHeader)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(NAMES),
    value=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=80),
)
def test_headers_read_as_with_the_default_policy(name, value):
    assert _read(POLICY, name, value) == _read(policy.default, name, value)
    read = _read(policy.default, name, value, fetch=True)
    assert _read(POLICY, name, value, fetch=True) == read
    assert _read(POLICY, name, value, fetch=True) == read  # kept, and unchanged by use


def test_a_header_read_twice_is_parsed_once():
    first = POLICY.header_fetch_parse("Content-Type", 'text/plain; charset="utf-8"')
    again = POLICY.header_fetch_parse("Content-Type", 'text/plain; charset="utf-8"')
    assert again is first and again.params["charset"] == "utf-8"
    other = POLICY.header_fetch_parse("Content-Type", "text/html")
    assert other is not first and other.content_type == "text/html"


def test_a_long_header_is_read_but_not_kept():
    value = "x" * (KEPT_VALUE_CHARS + 1)
    first = POLICY.header_fetch_parse("Subject", value)
    assert str(first) == value
    assert POLICY.header_fetch_parse("Subject", value) is not first


def _read(chosen: policy.EmailPolicy, name: str, value: str, *, fetch: bool = False) -> object:
    """What a header becomes under ``chosen``, made or read back from the stored value
    (``fetch``): its text, defects and folding, or the error (the standard library itself
    fails on some odd values)."""
    try:
        make = chosen.header_fetch_parse if fetch else chosen.header_factory
        header = make(name, value)
        return str(header), [type(d) for d in header.defects], header.fold(policy=chosen)
    except Exception as exc:  # noqa: BLE001 - compared, not hidden
        return type(exc)


def test_a_mail_parses_as_with_the_default_policy():
    raw = (
        b"From: =?utf-8?q?=C3=85lice?= <alice@example.org>\r\n"
        b"To: pbmserv@example.org\r\nSubject: =?utf-8?b?cGxveSBtb3ZlIDEwMQ==?=\r\n"
        b'Content-Type: text/plain; charset="utf-8"\r\n\r\nhello\r\n'
    )
    for _ in range(2):  # the second time from the kept headers
        ours = email.message_from_bytes(raw, policy=POLICY)
        theirs = email.message_from_bytes(raw, policy=policy.default)
        assert [(k, str(v)) for k, v in ours.items()] == [(k, str(v)) for k, v in theirs.items()]
        assert ours.get_content() == theirs.get_content()
        assert ours.get_content_charset() == "utf-8"

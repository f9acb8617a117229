"""Internationalised addresses (RFC 6531/6532): a player whose address is not ASCII
(``jörg@bücher.example``, ``用户@例子.中国``) is read, signed up, counted and answered like any
other, over real SMTP on 127.0.0.1 both ways."""

from __future__ import annotations

import logging
import smtplib
import unicodedata
from email.utils import format_datetime, make_msgid

import pytest
from aiosmtpd.controller import Controller
from conftest import TEST_START
from sqlalchemy import select

from pbmserv.mail import inbox, worker
from pbmserv.mail.deliver import MaildirSink, PermanentFailure, SmtpRelay
from pbmserv.mail.parse import parse_message
from pbmserv.mail.sender import deliver_pending
from pbmserv.store.models import Address, OutboxStatus, User
from tests.test_mail_deliver import Sink, free_port, message
from tests.test_mail_listener import Recorder, start

JORG = "jörg@xn--bcher-kva.example"  # the one form: NFC, lower case, the domain in A-labels
NFD = unicodedata.normalize("NFD", "Jörg@Bücher.example")


def raw_mail(sender: str, subject: str, body: str = "", reply_to: str | None = None) -> bytes:
    head = f"From: {sender}\r\n" + (f"Reply-To: {reply_to}\r\n" if reply_to else "")
    head += f"To: pbmserv@localhost\r\nSubject: {subject}\r\n"
    head += f"Message-ID: {make_msgid(domain='client.example')}\r\n"
    head += f"Date: {format_datetime(TEST_START)}\r\n"
    return (head + f"\r\n{body}\r\n").encode()


def mail(shell, sender: str, subject: str, body: str = "") -> None:
    raw = raw_mail(sender, subject, body)
    inbox.store(shell.sessions, raw, sender, [shell.settings.server_address], shell.clock.now)
    worker.process_batch(shell.sessions, shell.settings, lambda: shell.clock.now)


@pytest.mark.parametrize(
    ("header", "sender"),
    [
        ("jörg@bücher.example", JORG),
        (f"Jörg <{NFD}>", JORG),  # decomposed, upper case
        ("=?utf-8?q?J=C3=B6rg?= <JÖRG@xn--bcher-kva.example>", JORG),
        ("用户@例子.中国", "用户@xn--fsqu00a.xn--fiqs8s"),
        ("alice\u200b@example.org", None),  # a zero-width space passing for alice's address
        ("jörg\u202e@example.org", None),  # a direction mark
        ("alice\u034f@example.org", None),  # a combining grapheme joiner (a mark: unseen)
        ("alice\ufe0f@example.org", None),  # a variation selector (as above)
        ("alice\u3164@example.org", None),  # a Hangul filler (a letter that shows as nothing)
        ("j\ufffdrg@example.org", None),  # bytes some program could not read
        ("jörg@例子", None),  # no host name
    ],
)
def test_an_address_that_is_not_ascii_is_read_in_its_one_form(header: str, sender) -> None:
    parsed = parse_message(raw_mail(header, "help"))
    assert parsed.sender == sender
    if sender:
        assert not parsed.is_automatic


def test_reply_to_that_is_not_ascii_is_answered_and_bytes_that_are_no_utf8_are_not() -> None:
    parsed = parse_message(
        raw_mail("alice@example.org", "help", reply_to="Jörg <jörg@bücher.example>")
    )
    assert parsed.sender == JORG
    latin1 = b"From: j\xf6rg@example.org\r\nSubject: help\r\n\r\nhi\r\n"  # no UTF-8: no guess
    assert parse_message(latin1).sender is None


def test_the_listener_offers_smtputf8_and_stores_the_mail_as_sent() -> None:
    recorder = Recorder()
    controller = start(recorder)
    try:
        raw = raw_mail("Jörg <jörg@bücher.example>", "help")
        with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as smtp:
            smtp.ehlo()
            assert smtp.has_extn("smtputf8")
            refused = smtp.sendmail(
                "jörg@bücher.example", ["pbmserv@localhost"], raw, ["SMTPUTF8", "BODY=8BITMIME"]
            )
        assert refused == {}
    finally:
        controller.stop()
    [(stored, envelope)] = recorder.got
    assert stored == raw and envelope.mail_from == "jörg@bücher.example"
    assert parse_message(stored, envelope.mail_from).sender == JORG


def test_signup_confirm_and_answers_with_an_address_that_is_not_ascii(shell) -> None:
    """Jörg signs up from his address in one spelling, confirms from another, changes to a
    Chinese address: one account, one address, answered at the one form."""
    mail(shell, NFD, "signup jorg pw1234")
    [code] = [row for row in shell.outbox() if row.recipient == JORG]
    assert code.subject.startswith("confirm ")
    mail(shell, "JÖRG@xn--bcher-kva.example", f"Re: {code.subject}")
    with shell.sessions() as s:
        assert s.execute(select(Address.address, Address.confirmed)).all() == [(JORG, True)]
    mail(shell, "jörg@bücher.example", "change address jorg pw1234 用户@例子.中国")
    new = "用户@xn--fsqu00a.xn--fiqs8s"
    [change] = [row for row in shell.outbox() if row.recipient == new]
    mail(shell, "用户@例子.中国", f"Re: {change.subject}")
    with shell.sessions() as s:
        user = s.scalars(select(User)).one()
        assert [(a.address, a.confirmed) for a in user.addresses] == [(new, True)]


def test_answers_write_an_internationalised_domain_in_unicode(shell) -> None:
    """The answers wrote the domain as kept, in A-labels: 'Mail goes to
    jörg@xn--bcher-kva.example', an address its player never wrote.  A person reads it in
    Unicode; the headers keep the one form (any relay takes it); a label that mixes scripts
    (a homograph: 'аpple' with a Cyrillic 'а') stays in A-labels, where its oddness shows."""
    signup = shell.ok("signup jorg pw1234 Jörg@Bücher.example")
    assert "Mail goes to jörg@bücher.example." in signup.body and "xn--" not in signup.body
    mail(shell, NFD, "change address jorg pw1234 jörg@bücher.example 用户@例子.中国")
    [code] = [row for row in shell.outbox() if row.recipient == "用户@xn--fsqu00a.xn--fiqs8s"]
    assert "'jorg' to 用户@例子.中国." in code.body
    [answer] = [row for row in shell.outbox() if row.recipient == JORG]
    assert "will be: jörg@bücher.example, 用户@例子.中国" in answer.body
    assert "xn--" not in answer.body + code.body
    confirmed = shell.ok(f"confirm {code.subject.split()[-1]}")
    assert confirmed.body.startswith("用户@例子.中国 is confirmed")
    homograph = shell.ok("change address jorg pw1234 alice@аpple.example jörg@bücher.example")
    assert "  alice@xn--pple-43d.example\n  jörg@bücher.example" in homograph.body


@pytest.mark.parametrize(
    ("domain", "seen"),
    [
        ("bücher.example", "bücher.example"),
        ("日本語のドメイン.jp", "日本語のドメイン.jp"),  # Han, Hiragana, Katakana: one writing
        ("한국어.kr", "한국어.kr"),
        ("аpple.example", "xn--pple-43d.example"),  # Cyrillic 'а' among Latin letters
        ("paypal-ρ.example", "xn--paypal--vpf.example"),  # Latin and Greek
    ],
)
def test_a_domain_is_shown_in_unicode_unless_a_label_mixes_scripts(domain: str, seen: str):
    from pbmserv.domain.addresses import canonical, shown

    kept = canonical(f"bob@{domain}")
    assert kept is not None and kept.isascii()
    assert shown(kept) == f"bob@{seen}"


@pytest.mark.parametrize(
    ("domain", "seen"),
    [
        ("аррӏе.example", "xn--80ak6aa92e.example"),  # all Cyrillic, and reads 'apple'
        ("ѕсоре.example", "xn--e1argc3h.example"),  # 'scope'
        ("москва.example", "москва.example"),  # Cyrillic that reads as Cyrillic
        ("пример.рф", "пример.рф"),
        ("сосо.рф", "сосо.рф"),  # under a Cyrillic top-level domain, Cyrillic is expected
    ],
)
def test_a_label_wholly_of_cyrillic_letters_that_look_latin_is_shown_in_a_labels(
    shell, domain: str, seen: str
) -> None:
    """A label of one script passed for safe: 'аррӏе' (all Cyrillic) was shown as 'аррӏе',
    which a reader takes for 'apple'.  Written wholly in Cyrillic letters that look Latin
    (UTS 39's whole-script confusables), it is shown as its A-label, in mail as elsewhere."""
    from pbmserv.domain.addresses import canonical, shown

    kept = canonical(f"bob@{domain}")
    assert kept is not None and shown(kept) == f"bob@{seen}"
    answer = shell.ok(f"signup bob pw-bob bob@{domain}")
    assert f"Mail goes to bob@{seen}." in answer.body


def test_the_caps_count_one_mailbox_once_however_it_is_written(shell) -> None:
    shell.settings.max_stranger_answers_per_day = 2
    for spelling in (
        "jörg@bücher.example",
        NFD,
        "JÖRG@xn--bcher-kva.example",
        "jörg+x@bücher.example",
    ):
        mail(shell, spelling, "help")
    answered = [row for row in shell.outbox() if row.recipient.startswith("jörg")]
    assert [row.recipient for row in shell.outbox()] == [JORG] * 3  # (jörg+x: silence)
    assert [row.subject for row in answered][1:] == [
        "pbmserv help",
        "pbmserv: answer limit reached",
    ]


def test_a_relay_with_smtputf8_gets_the_mail_with_the_option() -> None:
    class Options(Sink):
        async def handle_MAIL(self, server, session, envelope, address, options):
            self.options = options
            envelope.mail_from = address
            return "250 OK"

    sink = Options()
    controller = Controller(sink, hostname="127.0.0.1", port=free_port(), enable_SMTPUTF8=True)
    controller.start()
    try:
        SmtpRelay("127.0.0.1", controller.port, timeout=10).send(message(JORG))
    finally:
        controller.stop()
    [(mail_from, rcpts, raw)] = sink.got
    assert "SMTPUTF8" in sink.options and rcpts == [JORG]
    assert b"\r\nTo: j\xc3\xb6rg@xn--bcher-kva.example\r\n" in raw  # RFC 6532: UTF-8, no =?


def test_a_relay_without_smtputf8_fails_the_mail_for_good_with_a_clear_log(shell, caplog) -> None:
    """The mail to Jörg fails (no retries for two days, no crash); the next mail goes out."""
    sink = Sink()
    controller = Controller(sink, hostname="127.0.0.1", port=free_port(), enable_SMTPUTF8=False)
    controller.start()
    try:
        relay = SmtpRelay("127.0.0.1", controller.port, timeout=10)
        with pytest.raises(PermanentFailure, match="does not offer SMTPUTF8"):
            relay.send(message(JORG))
        mail(shell, "jörg@bücher.example", "help")
        mail(shell, "alice@example.org", "help")
        with caplog.at_level(logging.WARNING, logger="pbmserv.mail.sender"):
            sent = deliver_pending(shell.sessions, shell.settings, relay, shell.clock.now)
    finally:
        controller.stop()
    assert sent == 1 and [rcpts for _, rcpts, _ in sink.got] == [["alice@example.org"]]
    status = {row.recipient: row.status for row in shell.outbox()}
    assert status == {JORG: OutboxStatus.failed, "alice@example.org": OutboxStatus.sent}
    assert "failed for good" in caplog.text and "does not offer SMTPUTF8" in caplog.text


def test_the_maildir_writes_the_address_in_utf8(tmp_path) -> None:
    box = tmp_path / "Maildir"
    key = MaildirSink(box).send(message(JORG))
    raw = (box / "new" / key).read_bytes()
    assert b"\nTo: j\xc3\xb6rg@xn--bcher-kva.example\n" in raw
    assert b"=?" not in raw.partition(b"\n\n")[0]


def test_a_password_with_an_accent_is_one_password_however_the_accent_is_typed(shell) -> None:
    """'café-alice' set with an accented letter, typed with 'e' and a combining accent (macOS,
    some phones), or the other way round: the same password (hashed composed, NFC)."""
    from pbmserv.domain import accounts

    shell.ok("signup alice café-alice alice@example.org")
    shell.ok("signup bob cafe\u0301-bob bob@example.org")
    shell.ok("polis challenge alice bob")
    mail(shell, "alice@example.org", "polis move 101 alice cafe\u0301-alice a7-a6")
    answers = " ".join(row.body for row in shell.outbox() if row.recipient == "alice@example.org")
    assert "wrong password" not in answers and "Polis Board 101" in answers
    with shell.sessions() as s:
        hashes = {u: h for u, h in s.execute(select(User.userid, User.password_hash))}
    assert accounts.check_password(shell.settings, hashes["bob"], "café-bob", True)
    old = accounts.hasher(shell.settings).hash("cafe\u0301-old")  # made as typed, before
    assert accounts.check_password(shell.settings, old, "cafe\u0301-old", False)
    assert not accounts.check_password(shell.settings, old, "cafe-old", False)


def test_a_password_is_as_long_as_its_composed_letters(shell) -> None:
    """'e\u0301e\u0301' (four code points, two letters: 'éé' as it is hashed) passed for a
    password of four characters."""
    refused = shell("signup alice e\u0301e\u0301 alice@example.org")
    assert refused.status == 1 and "at least 4 characters" in refused.body
    shell.ok("signup bob e\u0301e\u0301e\u0301e\u0301 bob@example.org")


def test_a_hash_made_of_a_password_as_typed_is_made_again_composed_at_login(shell) -> None:
    """A hash made before passwords were composed, of 'cafe\u0301-alice' as typed, still let
    its player in, but stayed as it was: typed with the accented letter, on another phone, his
    password was refused ('wrong password'). His first login stores it composed."""
    from pbmserv.domain import accounts

    shell.ok("signup alice café-alice alice@example.org")
    shell.ok("signup bob secret-bob bob@example.org")
    shell.ok("polis challenge alice bob")
    old = _hash_made_as_typed(shell, "alice", "cafe\u0301-alice")
    mail(shell, "alice@example.org", "polis move 101 alice cafe\u0301-alice a7-a6")
    with shell.sessions() as s:
        now = s.scalars(select(User.password_hash).where(User.userid == "alice")).one()
    assert now != old
    assert accounts.check_password(shell.settings, now, "café-alice", True)


def test_a_wrong_password_typed_decomposed_costs_one_argon2_check(shell, monkeypatch) -> None:
    """A wrong password that is not NFC was checked composed, then as typed: two argon2
    verifications per guess.  A hash made composed is marked so, and checked once; a hash
    made before (unmarked) is checked both ways until its owner's login marks it."""
    from argon2 import PasswordHasher

    from pbmserv.domain import accounts

    checks: list[str] = []
    verify = PasswordHasher.verify

    def counted(self: PasswordHasher, hash_: str, password: str | bytes) -> bool:
        checks.append(str(password))
        return verify(self, hash_, password)

    def login(userid: str, password: str) -> bool:
        checks.clear()
        with shell.sessions() as s, s.begin():
            try:
                accounts.authenticate(
                    s, shell.settings, userid, password, sender=None, now=shell.clock.now
                )
            except accounts.AuthError:
                return False
        return True

    shell.ok("signup alice café-alice alice@example.org")
    shell.ok("signup bob secret-bob bob@example.org")
    old = _hash_made_as_typed(shell, "bob", "cafe\u0301-bob")
    monkeypatch.setattr(PasswordHasher, "verify", counted)
    assert not login("alice", "cafe\u0301-wrong") and checks == ["café-wrong"]
    assert login("alice", "cafe\u0301-alice") and checks == ["café-alice"]
    assert not login("bob", "cafe\u0301-wrong") and len(checks) == 2  # (its form unknown)
    assert not login("bob", "café-bob")  # (made as typed: the other form is refused)
    assert login("bob", "cafe\u0301-bob") and len(checks) == 2
    with shell.sessions() as s:
        bob = s.scalars(select(User).where(User.userid == "bob")).one()
        assert bob.password_composed and bob.password_hash != old  # (stored composed)
    assert not login("bob", "cafe\u0301-wrong") and checks == ["café-wrong"]
    assert login("bob", "café-bob") and checks == ["café-bob"]
    # an unmarked hash that verifies composed is marked, not made again
    with shell.sessions() as s, s.begin():
        alice = s.scalars(select(User).where(User.userid == "alice")).one()
        alice.password_composed, kept = False, alice.password_hash
    assert login("alice", "café-alice") and checks == ["café-alice"]
    with shell.sessions() as s:
        alice = s.scalars(select(User).where(User.userid == "alice")).one()
        assert alice.password_composed and alice.password_hash == kept


def test_our_address_is_accepted_with_its_domain_in_unicode_or_in_a_labels(settings) -> None:
    """A client with SMTPUTF8 may write our internationalised domain in Unicode: 'RCPT
    TO:<Pbm@Bücher.example>' for the configured 'pbm@xn--bcher-kva.example' was refused 550."""
    from pbmserv.cli.server import Server

    settings.accept_recipients = ["pbm@xn--bcher-kva.example", "Spiele@Straße.example"]
    server = Server(settings, listen=False)
    for address in ("<Pbm@Bücher.example>", "pbm@XN--BCHER-KVA.example", "spiele@strasse.example"):
        assert server.accept_recipient(address) == (address != "spiele@strasse.example")
    assert server.accept_recipient("spiele@xn--strae-oqa.example")
    assert not server.accept_recipient("pbm@example.org")
    assert not server.accept_recipient("\udcff@xn--bcher-kva.example")  # (no crash: a 550)


def test_an_address_of_bytes_that_are_no_utf8_is_no_address_never_a_crash(shell) -> None:
    """'pbmserv signup alice PW $'\\xff@example.org'' (the shell's argv keeps such bytes as
    surrogate escapes) crashed in the address check: 'internal error', exit 70."""
    from pbmserv.domain.addresses import canonical

    assert canonical("\udcff@example.org") is None and canonical("j\udcc3rg@x.org") is None
    refused = shell("signup alice pw-alice \udcff@example.org")
    assert refused.status == 1 and "is not a mail address" in refused.body


def test_an_address_longer_than_smtp_allows_is_no_address(shell) -> None:
    """An ASCII domain had no length limit (an internationalised one had IDNA's 253): a From
    of 389 characters was read as the sender, stored, and the answer to it queued in columns
    of 320, which PostgreSQL refuses (the mail failed at each attempt).  As an envelope sender
    it is kept cut to the column (it had failed the mail's storing, a 451 at every try)."""
    from pbmserv.domain.addresses import canonical

    long = "a@" + ("b" * 63 + ".") * 6 + "org"
    assert canonical(long) is None
    mail(shell, long, "help")
    assert shell.outbox() == []  # (no usable sender: not answered)
    longest = "a" * 64 + "@" + ("b" * 62 + ".") * 2 + "c" * 59 + ".org"  # 254 octets
    assert len(longest) == 254 and canonical(longest) == longest


def test_envelope_bytes_that_are_no_utf8_are_refused_or_stored_never_a_451(shell, caplog) -> None:
    """'MAIL FROM:<\\xff@...>' got the mail answered 451 at each attempt (the database takes no
    surrogate escapes: logged as the store failing), 'RCPT TO:<\\xff@...>' a 451 and a logged
    error: the refusal holds the address with the byte written '\\xff', and the mail is
    stored and answered at its From."""
    import socket

    recorder = Recorder()
    controller = start(recorder)
    try:
        with socket.create_connection((controller.hostname, controller.port), timeout=10) as s:
            got = s.makefile("rb")
            got.readline()
            replies = []
            for line in (b"EHLO x", b"MAIL FROM:<\xff\xfe@example.org>", b"RCPT TO:<\xff@x.org>"):
                s.sendall(line + b"\r\n")
                replies.append(got.readline())
                while replies[-1][3:4] == b"-":
                    replies.append(got.readline())
            s.sendall(b"RCPT TO:<pbmserv@localhost>\r\nDATA\r\n")
            replies += [got.readline(), got.readline()]
            s.sendall(raw_mail("alice@example.org", "help") + b".\r\n")
            replies.append(got.readline())
    finally:
        controller.stop()
    assert replies[-4] == b"550 5.1.1 <\\xff@x.org>: no such recipient here\r\n"
    assert replies[-1] == b"250 Message accepted\r\n"
    assert "SMTP session error" not in caplog.text
    [(raw, envelope)] = recorder.got
    assert envelope.mail_from == "\\xff\\xfe@example.org"
    mail_from = envelope.mail_from
    inbox.store(shell.sessions, raw, mail_from, [shell.settings.server_address], shell.clock.now)
    worker.process_batch(shell.sessions, shell.settings, lambda: shell.clock.now)
    assert [row.recipient for row in shell.outbox()] == ["alice@example.org"]


def test_a_hash_of_the_password_as_typed_is_not_marked_composed_once_forgotten(
    shell, monkeypatch
) -> None:
    """Whether a login verified as typed is read from the memory of recent successes; when
    other logins had filled it since, the hash of the password as typed was taken for
    composed and marked so: checked composed alone from then on, its player's password was
    refused for good.  A success forgotten is now hashed again, composed."""
    from pbmserv.domain import accounts, passwords

    monkeypatch.setattr(passwords, "_VERIFIED_MAX", 0)  # (each success forgotten at once)
    shell.ok("signup bob secret-bob bob@example.org")
    old = _hash_made_as_typed(shell, "bob", "cafe\u0301-bob")
    for typed in ("cafe\u0301-bob", "café-bob", "cafe\u0301-bob"):
        with shell.sessions() as s, s.begin():
            accounts.authenticate(s, shell.settings, "bob", typed, sender=None, now=shell.clock.now)
    with shell.sessions() as s:
        bob = s.scalars(select(User).where(User.userid == "bob")).one()
        assert bob.password_composed and bob.password_hash != old


def _hash_made_as_typed(shell, userid: str, password: str) -> str:
    """Give ``userid`` a hash of ``password`` as typed, unmarked, as made before passwords
    were composed (migration 0015); return it."""
    from pbmserv.domain import accounts

    old = accounts.hasher(shell.settings).hash(password)
    with shell.sessions() as s, s.begin():
        user = s.scalars(select(User).where(User.userid == userid)).one()
        user.password_hash, user.password_composed = old, False
    return old

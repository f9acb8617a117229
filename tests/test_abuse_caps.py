"""More attacks over SMTP against a running server (127.0.0.1), found after issue 16's: mails
whose From names several addresses, many signup lines in one mail mailing strangers, an
authenticated player mailing his own text to others without end, a forwarded mail read as
the sender's own, a complaint to a code mail taken for its confirmation, and one mail
that held up every other for a minute or had us mail 14 MB to a forged address."""

from __future__ import annotations

import difflib
from email.utils import format_datetime, make_msgid
from unittest.mock import patch

import pytest
from sqlalchemy import select
from test_abuse import count, first_move
from test_gateway import SERVER, Gateway, body_of, running_gateway

from pbmserv.commands import spelling
from pbmserv.mail import reply
from pbmserv.mail.lines import LEFT_OUT
from pbmserv.mail.parse import MAX_TEXT_CHARS, MAX_TEXT_LINES
from pbmserv.store.models import Address, Comment, Inbox, InboxStatus, Subscription, User


@pytest.fixture
def gateway(settings, sessions):
    with running_gateway(settings, sessions) as running:
        yield running


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
    mail = _password_change_set_aside(gateway, f"From: {sender}\r\n", "a@x.test")
    assert mail.last_error in (  # the note on why it got no answer
        "not answered: the From header names 2 addresses",
        "not answered: the From header is a group of addresses",
    )
    shell.ok("change password alice pw-alice Pw-other")  # the old password still held
    assert count(gateway.sessions, Inbox, Inbox.status == InboxStatus.done) == 0


def _password_change_set_aside(gateway, headers: str, envelope: str) -> Inbox:
    """Send alice's password change under ``headers`` (its senders); it must run nothing,
    answer nobody and be set aside as ignored: the stored mail, for its note."""
    raw = (
        f"{headers}To: {SERVER}\r\nSubject: change password alice pw-alice Pw-new1\r\n"
        f"Message-ID: {make_msgid(domain='client.example')}\r\n\r\nhelp\r\n"
    ).encode()
    gateway.send(envelope, "", raw=raw)
    gateway.settle()
    assert gateway.mails() == []
    with gateway.sessions() as s:
        [mail] = s.scalars(select(Inbox)).all()
        assert mail.status is InboxStatus.ignored
        return mail


@pytest.mark.parametrize(
    ("headers", "note"),
    [
        ("From: alice@example.org\r\nFrom: mallory@evil.example\r\n", "2 From headers"),
        ("From: mallory@evil.example\r\nFrom: alice@example.org\r\n", "2 From headers"),
        (
            "From: alice@example.org\r\nReply-To: alice@example.org\r\n"
            "Reply-To: mallory@evil.example\r\n",
            "2 Reply-To headers",
        ),
    ],
)
def test_a_mail_with_two_from_headers_runs_nothing_and_is_answered_nowhere(
    gateway, shell, headers, note
):
    """RFC 5322 allows one From (and one Reply-To).  The first was answered and the mail run:
    a forger wrote the victim's From first, under his own, and got the victim's commands run
    and answered.  None of them can be told to be the writer: nothing runs, nobody is
    answered, and the operator sees why."""
    shell.signup("alice")
    mail = _password_change_set_aside(gateway, headers, "mallory@evil.example")
    assert mail.last_error == f"not answered: the mail has {note}"
    shell.ok("change password alice pw-alice Pw-other")  # the old password still held


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


# ----------------------------------------------------------------------------- a player's text


def messages_to(gateway: Gateway, address: str, author: str) -> list[str]:
    """The bodies of the mails carrying ``author``'s own text that ``address`` got."""
    return [
        body_of(m)
        for m in gateway.mails(address)
        if str(m["Subject"]) in (f"pbmserv message from {author}", "Polis Board 101 Chat")
    ]


def test_a_players_own_text_reaches_another_address_only_so_often_a_day(gateway, shell):
    """mallory plays bob, so he may message him, but 5 mails of 10 message lines each (all
    with his password from his confirmed address) once gave bob 50 mails of spam."""
    cap = gateway.settings.max_messages_per_pair_per_day
    shell.signup("mallory", "bob")
    shell.ok("polis challenge mallory bob")
    lines = "\n".join(["message mallory pw-mallory bob"] * 10)
    for _ in range(5):
        gateway.send("mallory@example.org", "hi", f"{lines}\n\nBUY PILLS at pills.example\n")
    gateway.settle()
    assert len(messages_to(gateway, "bob@example.org", "mallory")) == cap == 10
    answers = [body_of(m) for m in gateway.mails("mallory@example.org")][1:]  # (the new board)
    assert len(answers) == 5  # the sender is always answered, and told why
    assert "Your message went to bob" in answers[0]
    refused = (
        "your message was not sent to bob: bob has had 10 messages from mallory today. A "
        "player's text goes to one address only so often a day; try again tomorrow (UTC)."
    )
    assert refused in " ".join(answers[-1].split())
    # a chat line is his text too: the same cap
    gateway.send("mallory@example.org", "polis chat 101 mallory pw-mallory", "BUY PILLS")
    gateway.settle()
    assert len(messages_to(gateway, "bob@example.org", "mallory")) == cap
    assert "your chat line was not sent to bob" in " ".join(
        body_of(gateway.mails("mallory@example.org")[-1]).split()
    )


# ----------------------------------------------------------------------------- forwarded mail


def test_a_forwarded_mail_is_neither_run_nor_shown(gateway, shell):
    """alice attaches a mail carol sent her to her move: its command line once ran too ("2
    command lines") and its private text went to bob as alice's comment and onto the web
    page.  Now her own line alone runs, and the answer says the attached mail was ignored."""
    shell.signup("alice", "bob", "carol")
    shell.ok("polis challenge alice bob")
    mover, move = first_move(gateway.sessions)
    other = {"alice": "bob", "bob": "alice"}[mover]
    body = (
        "--X\r\nContent-Type: text/plain\r\n\r\nmy move\r\n"
        "--X\r\nContent-Type: message/rfc822\r\n"
        'Content-Disposition: attachment; filename="fwd.eml"\r\n\r\n'
        "From: carol@example.org\r\nSubject: private\r\n\r\n"
        "SECRET: my bank pin is 1234, don't tell bob\r\npolis subscribe 101 carol\r\n--X--\r\n"
    )
    raw = (
        f"From: {mover}@example.org\r\nTo: {SERVER}\r\n"
        f"Date: {format_datetime(gateway.now())}\r\n"
        f"Subject: polis move 101 {mover} pw-{mover} {move}#1\r\n"
        f"Message-ID: {make_msgid(domain='client.example')}\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/mixed; boundary="X"\r\n\r\n' + body
    ).encode()
    gateway.send(f"{mover}@example.org", "", raw=raw)
    gateway.settle()
    answer = " ".join(body_of(gateway.mails(f"{mover}@example.org")[-1]).split())
    assert "command lines" not in answer and "attached message (message/rfc822) ignored" in answer
    assert count(gateway.sessions, Subscription) == 0
    board_mail = body_of(gateway.mails(f"{other}@example.org")[-1])
    assert "my move" in board_mail and "SECRET" not in board_mail
    with gateway.sessions() as s:
        assert [c.text for c in s.scalars(select(Comment))] == ["my move"]


# ----------------------------------------------------------------------------- complaints


def test_a_complaint_to_a_code_mail_confirms_nothing_and_refuse_ends_it(gateway):
    """mallory signs up with victim2's address; victim2 answers the code mail "I never signed
    up, STOP" and was answered "victim2@... is confirmed: mail for mallory2 goes there now".
    Now nothing is confirmed, the answer gives 'refuse CODE', and after it mallory2 never
    mails victim2 again."""
    victim = "victim2@elsewhere.example"
    gateway.send("mallory@evil.example", "signup mallory2 pw-mallory-12 " + victim)
    gateway.settle()
    [code_mail] = gateway.mails(victim)
    code = str(code_mail["Subject"]).removeprefix("confirm ")
    assert f"or send 'refuse {code}'; nothing more is sent." in " ".join(body_of(code_mail).split())
    gateway.send(
        victim,
        f"Re: {code_mail['Subject']}",
        "I never signed up, STOP\n\n> Somebody (you, we hope) asked ...\n",
        headers={"In-Reply-To": code_mail["Message-ID"]},
    )
    gateway.settle()
    answer = gateway.mails(victim)[-1]
    assert answer["Subject"] == "pbmserv: nothing confirmed"
    assert f"\n  refuse {code}\n" in body_of(answer) and "is confirmed" not in body_of(answer)
    with gateway.sessions() as s:
        assert s.scalars(select(Address.confirmed)).all() == [False]
    gateway.send(victim, f"refuse {code}")
    gateway.send("mallory@evil.example", f"change address mallory2 pw-mallory-12 {victim}")
    gateway.settle()
    assert [str(m["Subject"]) for m in gateway.mails(victim)][2:] == ["pbmserv refuse"]
    assert "refused the mail of mallory2" in body_of(gateway.mails("mallory@evil.example")[-1])


# ----------------------------------------------------------------------------- work and size


def sizes(gateway: Gateway, address: str) -> list[int]:
    """The sizes of the plain texts the mails to ``address`` carry (UTF-8 bytes)."""
    return [len(body_of(m).encode()) for m in gateway.mails(address)]


def test_lines_not_understood_cost_a_bounded_work_and_answer(gateway):
    """A stranger's mail of 70,000 lines ``plois shwo 1`` took a minute of the worker (every
    line looked up the command words it was close to, uncached, five times over) and was
    answered with 2 MB listing them all.  Now ten are listed, the rest counted in one note,
    each word is looked up once, and the mail's text is read and kept only up to a limit."""
    spam = "spam@evil.example"
    memo = spelling._Closest(4096)
    with (
        patch.object(spelling, "_CLOSEST", memo),
        patch.object(difflib, "get_close_matches", wraps=difflib.get_close_matches) as spy,
    ):
        gateway.send(spam, "hi", "plois shwo 1\n" * 5000)
        gateway.settle()
        assert spy.call_count <= 10  # a few words, each against a few sets of command words
        calls = spy.call_count
        # each line's first word another one: still a bounded number of look-ups (those of
        # the lines read), not one per line sent
        gateway.send(spam, "hi", "".join(f"pl{i}s shwo 1\n" for i in range(20_000)))
        gateway.settle()
        assert spy.call_count - calls <= 3 * MAX_TEXT_LINES
    first, second = (body_of(m) for m in gateway.mails(spam))
    assert first.count("plois shwo 1") == 10
    read = "the text after line 1000 (4,000 more lines) was left out"  # (not even sorted)
    assert read in " ".join(first.split())
    assert "990 more lines not understood left out: an answer lists at most 10" in first
    assert len(first.encode()) < 10_000 and len(second.encode()) < 10_000
    assert "the text after line 1000 (19,000 more lines) was left out" in " ".join(second.split())
    with gateway.sessions() as s:  # the kept copies: the part of the text read, nothing more
        kept = [bytes(raw) for raw in s.scalars(select(Inbox.raw).order_by(Inbox.id))]
    assert kept[0].count(b"plois shwo 1") == 10 and kept[0].count(LEFT_OUT.encode()) == 990
    assert all(len(raw) < MAX_TEXT_CHARS + 2_000 for raw in kept)


def test_a_show_of_many_boards_is_refused_and_an_answer_is_bounded(gateway, shell, monkeypatch):
    """``polis show`` with 2,000 boards from a forged address took 5 s of the worker and
    mailed 14 MB to that address.  A command names at most 10 boards (or players), and
    however many such commands a mail holds, its answer carries at most
    ``MAX_ANSWER_BYTES``, with a note that the rest was left out."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    victim = "victim@example.net"
    gateway.send(victim, "hi", "polis show " + " ".join(["101"] * 2000))  # 8 KB
    gateway.settle()
    [refused] = gateway.mails(victim)
    assert "a command takes at most 10 boards, this one names 2000" in body_of(refused)
    assert sizes(gateway, victim) < [3_000]  # (the line is quoted back shortened, not twice)
    monkeypatch.setattr(reply, "MAX_ANSWER_BYTES", 20_000)  # (ten boards of a new game fit 128 KB)
    line = "polis show " + " ".join(["101"] * 10)
    gateway.send(victim, "hi", "\n".join([line] * 10))
    gateway.settle()
    last = body_of(gateway.mails(victim)[-1])
    assert len(last.encode()) <= 20_000
    assert "Your mail held 10 command lines" in last
    assert last.rstrip().endswith("an answer carries at most 19 KB. Ask for less in one mail.]")

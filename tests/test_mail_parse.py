"""parse_message on one fixture per case, mask_passwords on a table of cases, and fuzzing.

The tests of what hostile input costs time the CPU of the test's own thread
(``time.thread_time``), not the wall clock: on a loaded machine a linear parse took longer
than its bound in wall time, while a quadratic one stays far above it in CPU time."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.commands.grammar import command_passwords, command_words, mask_passwords
from pbmserv.mail.decode import html_to_text
from pbmserv.mail.lines import LEFT_OUT, read_body
from pbmserv.mail.parse import (
    MAX_TEXT_CHARS,
    MAX_TEXT_LINES,
    ParsedMail,
    parse_message,
    subject_command,
)
from pbmserv.mail.reply import MAX_ANSWER_BYTES, QUOTED_LINES, bounded, quote_mail

FIXTURES = Path(__file__).parent / "mail_fixtures"
SERVER = "pbmserv@example.net"
MOVE = "ploy move 101 alice s3cret e4-e5"


def parse(name: str, envelope_from: str | None = "alice@example.org", **kw) -> ParsedMail:
    raw = (FIXTURES / f"{name}.eml").read_bytes()
    return parse_message(raw, envelope_from, server_addresses=[SERVER], **kw)


# name: (commands, comment, ignored)
CASES: dict[str, tuple[list[str], str, list[str]]] = {
    "subject_move": ([MOVE], "Your turn, Bob!", []),
    "body_commands": (
        [MOVE, "PYLON move 7 alice s3cret a1"],
        "Two games at once.\nGood luck to you both.",
        [],
    ),
    "subject_and_text": ([MOVE, "ploy move 102 alice s3cret e4-e5"], "Nice opening.", []),
    "over_limit": (
        [f"ploy show {100 + i}" for i in range(10)],
        "that is all",
        ["3 command lines over the limit of 10 ignored"],
    ),
    "quoted_printable": (
        [MOVE],
        "Café crème, a rather long comment line that the mailer had to break with a soft line"
        " break because it is long",
        [],
    ),
    "base64": (["pylon move 7 alice s3cret a1"], "Zoë says hi ☺", []),
    "latin1": ([MOVE], "Schöne Grüße!", []),
    "undeclared_8bit": ([MOVE], "naïve café", []),
    "undeclared_latin1": ([MOVE], "naïve café", []),
    "html_only": ([MOVE], "Fish & chips <3\nsecond line", ["HTML part converted to text"]),
    "alternative": ([MOVE], "plain wins", []),
    "reply_quoted": ([MOVE], "Ha, I saw that coming.", []),
    "crlf_gmail": ([MOVE], "Thanks for the game.", []),
    "attachment": ([MOVE], "See my drawing.", ["attachment foo.png ignored"]),
    "auto_reply": ([], "I am out of the office.", []),
    "vacation": ([MOVE], "I am on vacation until Monday.", []),
    "dsn": (
        [],
        "I'm sorry to have to inform you that your message could not be delivered.",
        [
            "attached message (message/delivery-status) ignored",
            "attachment text/rfc822-headers ignored",
        ],
    ),
    "mailing_list": ([MOVE], "A list post.", []),
    "no_message_id": (["pylon show 7"], "", []),
    "garbage": (["ploy show 101"], "ÿþ café", []),
    "bad_utf8_declared": (["ploy show 101"], "café", []),
    "malformed": (
        ["ploy show 101"],
        "this mail has no headers at all",
        ["the mail has no proper header; it is read as text"],
    ),
    "truncated": (
        ["ploy show 101"],
        "hello the",
        ["a damaged base64 part was read as far as possible"],
    ),
    "own_mail": ([], "Summary of Ploy Board 101", []),
    "forwarded": (
        ["polis move 101 alice s3cret a7-a6#1"],
        "my move",
        ["attached message (message/rfc822) ignored"] * 2,  # attached, then inline
    ),
    "mixed_html": (
        [MOVE],
        "plain is read",
        ["an HTML part ignored (the mail has a plain text part)"],
    ),
    "mixed_html_blank_plain": ([MOVE], "html is read", ["HTML part converted to text"]),
}

AUTOMATIC = {
    "auto_reply": "Auto-Submitted: auto-replied",
    "vacation": "Precedence: bulk",
    "dsn": "sent by mailer-daemon",
    "mailing_list": "a mailing list mail (List-Id)",
    "own_mail": "sent by this server",
}


def test_every_fixture_has_a_case() -> None:
    names = {p.stem for p in FIXTURES.glob("*.eml")}
    assert names == set(CASES) | {"huge_body"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture(name: str) -> None:
    commands, comment, ignored = CASES[name]
    parsed = parse(name)
    assert parsed.commands == commands
    assert parsed.comment == comment
    assert parsed.ignored == ignored
    assert parsed.automatic_reason == AUTOMATIC.get(name)
    assert parsed.is_automatic is (name in AUTOMATIC)


def test_a_forwarded_mail_is_never_read() -> None:
    """An attached or inline ``message/rfc822`` is a mail of someone else: none of its lines
    runs, none is listed as not understood, and its text is neither comment nor kept."""
    p = parse("forwarded")
    assert p.not_understood == [] and "polis subscribe" not in p.text
    assert "SECRET" not in p.text and "ploy resign" not in p.text and p.text == "my move"


def test_senders_and_ids() -> None:
    p = parse("subject_move")
    assert (p.sender, p.sender_name, p.message_id) == (
        "alice@example.org",
        "Alice Example",
        "<move1@example.org>",
    )
    assert p.subject_is_command and p.references == [] and p.in_reply_to is None
    assert parse("no_message_id").message_id is None
    assert parse("no_message_id").sender == "bob@example.org"


def test_reply_to_wins_over_from() -> None:
    p = parse("crlf_gmail")
    assert p.sender == "alice@home.example"
    assert p.sender_name == "Alice Example"
    assert p.references == ["<board101-7@example.net>"]  # In-Reply-To when no References


def test_references_folded_header() -> None:
    p = parse("reply_quoted")
    assert p.references == ["<board101-1@example.net>", "<board101-7@example.net>"]
    assert p.in_reply_to == "<board101-7@example.net>"
    assert not p.subject_is_command  # "Re: Ploy Board 101 alice" is our own subject


def test_decoded_headers() -> None:
    assert parse("base64").subject == "Zug – bitte"
    p = parse("latin1")
    assert p.subject == "Grüße" and p.sender_name == "Jürgen Müller"
    assert parse("garbage").subject == "café"  # unknown charset: utf-8, else latin-1


def test_headerless_mail_answers_the_envelope_sender() -> None:
    assert parse("malformed").sender == "alice@example.org"
    assert parse("malformed", envelope_from=None).sender is None


def test_headers_for_quoting() -> None:
    assert parse("subject_move").headers == [
        ("From", "Alice Example <alice@example.org>"),
        ("To", "pbmserv@example.net"),
        ("Date", "Sat, 21 Nov 2026 10:00:00 +0000"),
        ("Subject", MOVE),
    ]


def test_text_is_the_whole_body() -> None:
    p = parse("reply_quoted")
    assert "> Summary of Ploy Board 101" in p.text and p.text.startswith(MOVE)


def test_the_subjects_line_repeated_in_the_body_runs_once() -> None:
    """Players often write the line in both: it once ran twice ("it is not your turn")."""
    body = f"pbmserv   {MOVE.capitalize()}\nploy show 101\n{MOVE.replace('e4-e5', 'e5-e6')}\n"
    body += "\nGood game!\n"  # (a phone capitalises the first word)
    raw = f"From: alice@example.org\nSubject: Re: {MOVE}\n\n{body}".encode()
    p = parse_message(raw, "alice@example.org", server_addresses=[SERVER])
    assert p.commands == [MOVE, "ploy show 101", MOVE.replace("e4-e5", "e5-e6")]
    assert p.comment == "Good game!"


@pytest.mark.parametrize(
    ("subject", "body", "commands"),
    [
        ("Vacation", "polis vacation alice pw 3", ["polis vacation alice pw 3"]),
        ("Re: Move", f"{MOVE}\n", [MOVE]),
        ("help", "no command here", ["help"]),  # a lone word alone runs
        ("list", "", ["list"]),
        ("ploy show 101", f"{MOVE}\n", ["ploy show 101", MOVE]),  # more than one word runs
    ],
)
def test_a_lone_subject_word_above_command_lines_is_the_topic(
    subject: str, body: str, commands: list[str]
) -> None:
    """``Subject: Vacation`` above a ``polis vacation ...`` line ran as a command of its own
    too, and the answer said "vacation: not enough arguments" beside the line's result."""
    raw = f"From: alice@example.org\nSubject: {subject}\n\n{body}\n".encode()
    p = parse_message(raw, "alice@example.org", server_addresses=[SERVER])
    assert p.commands == commands
    assert p.subject_is_command is (commands[0] != body.strip().split("\n")[0])


def test_huge_body() -> None:
    p = parse("huge_body")
    assert p.commands == [MOVE]
    lines = p.comment.split("\n")
    assert len(lines) == 200 and lines[0].startswith("line 00000")
    assert p.ignored == [  # 2,000 lines of 65 characters: the first 64,000 characters are read
        "the text after line 984 (1,016 more lines) was left out: a mail is read up to 1,000 "
        "lines and 64,000 characters",
        "784 comment lines over the limit of 200 left out",
    ]
    assert p.text.endswith(lines[0].replace("00000", "00983"))


def test_max_commands_parameter() -> None:
    p = parse("over_limit", max_commands=2)
    assert p.commands == ["ploy show 100", "ploy show 101"]
    assert p.ignored == ["11 command lines over the limit of 2 ignored"]
    p = parse("body_commands", max_commands=1)
    assert p.ignored == ["1 command line over the limit of 1 ignored"]


def test_command_words_parameter() -> None:
    p = parse("body_commands", command_words={"pylon"})
    assert p.commands == ["PYLON move 7 alice s3cret a1"]  # below prose: word and verb
    assert p.comment.startswith(MOVE.replace("s3cret", "********"))
    p = parse_message(b"Subject: hex move 3 a pw b\n\n", "a@example.org", command_words={"Hex"})
    assert p.commands == ["hex move 3 a pw b"]


@pytest.mark.parametrize(
    ("envelope_from", "headers", "reason"),
    [
        ("", "", "empty envelope sender (a bounce)"),
        ("<>", "", "empty envelope sender (a bounce)"),
        ("postmaster@example.org", "", "sent by postmaster"),
        ("a@example.org", "From: MAILER-DAEMON@mx.example.org\n", "sent by mailer-daemon"),
        ("a@example.org", "Auto-Submitted: auto-generated\n", "Auto-Submitted: auto-generated"),
        ("a@example.org", "Auto-Submitted: no\n", None),
        ("a@example.org", "Precedence: junk\n", "Precedence: junk"),
        ("a@example.org", "Precedence: list\n", "Precedence: list"),
        ("a@example.org", "List-Unsubscribe: <mailto:x@y>\n", "a mailing list mail (List-Unsubscribe)"),
        ("a@example.org", "X-Pbmserv-Server: other\n", "a pbmserv mail (X-Pbmserv-Server)"),
        ("a@example.org", "From: PBM <PBMSERV@example.net>\n", "sent by this server"),
        ("a@example.org", "X-Autoreply: yes\n", "an automatic reply (X-Autoreply)"),
        (None, "", None),
        ("<pbmserv@example.net>", "", "sent by this server"),
        ("a@example.org", "Precedence: auto_reply\n", "Precedence: auto_reply"),
        ("a@example.org", "Precedence: JUNK\n", "Precedence: junk"),
        ("a@example.org", "X-Auto-Response-Suppress: All\n", "an automatic reply (X-Auto-Response-Suppress)"),
        ("a@example.org", "X-Auto-Response-Suppress: \n", "an automatic reply (X-Auto-Response-Suppress)"),
        ("owner-chess@lists.example", "", "sent by a list owner (owner-chess)"),
        ("chess-owner@lists.example", "", "sent by a list owner (chess-owner)"),
        ("chess-bounces+a=example.org@lists.example", "", "sent by a bounce address (chess-bounces)"),
        ("chess-bounce@lists.example", "", "sent by a bounce address (chess-bounce)"),
        ("chess-request@lists.example", "", "sent by a list's request address (chess-request)"),
        ("noreply@shop.example", "", "sent by a no-reply address (noreply)"),
        ("No-Reply@shop.example", "", "sent by a no-reply address (no-reply)"),
        ("DoNotReply@shop.example", "", "sent by a no-reply address (donotreply)"),
        ("a@example.org", "From: Shop <no-reply@shop.example>\n", "sent by a no-reply address (no-reply)"),
        ("ownership-team@example.org", "", None),  # a person's address that only looks alike
        ("bounces@lists.example", "", "sent by a bounce address (bounces)"),
        ("bounce-1234-a=example.org@news.example", "", "sent by a bounce address (bounce-1234-a=example.org)"),
        ("no_reply@shop.example", "", "sent by a no-reply address (no_reply)"),
        ("noreply-dmarc-support@google.example", "", "sent by a no-reply address (noreply-dmarc-support)"),
        ("bouncer@example.org", "", None),  # a person's address that only looks alike
        ("a@example.org", "X-Autogenerated: Reply\n", "an automatic reply (X-Autogenerated)"),
        ("a@example.org", "Precedence: auto-reply\n", "Precedence: auto-reply"),
        ("a@example.org", "Return-Path: <>\n", "empty Return-Path (a bounce)"),
        ("a@example.org", "Return-Path: <a@example.org>\n", None),
    ],
)  # fmt: skip
def test_automatic(envelope_from: str | None, headers: str, reason: str | None) -> None:
    raw = (headers + "Subject: ploy show 101\n\nhi\n").encode()
    p = parse_message(raw, envelope_from, server_addresses=[SERVER])
    assert p.automatic_reason == reason
    assert p.is_automatic is (reason is not None)


@pytest.mark.parametrize(
    ("subject", "reason"),
    [
        ("Automatic reply: Polis Board 101 bob", "an automatic reply (Subject: Automatic reply)"),
        ("Auto: Polis Board 101 bob", "an automatic reply (Subject: Auto:)"),
        ("Out of Office: Polis Board 101 bob", "an automatic reply (Subject: Out of Office)"),
        ("out of the office until Monday", "an automatic reply (Subject: Out of Office)"),
        ("Autoreply: Polis Board 101 bob", "an automatic reply (Subject: Autoreply)"),
        ("Auto-Reply: Polis Board 101 bob", "an automatic reply (Subject: Autoreply)"),
        ("Undeliverable: Polis Board 101 bob", "a bounce (Subject: Undeliverable)"),
        ("Delivery Status Notification (Failure)", "a bounce (Subject: Delivery Status Notification)"),
        ("Re: Automatic reply: Polis Board 101 bob", None),  # a person answers one
        ("Automatische Antwort: Polis Board 101 bob", "an automatic reply (Subject: Automatische Antwort)"),
        ("Réponse automatique : Polis Board 101 bob", "an automatic reply (Subject: Réponse automatique)"),
        ("Risposta automatica: Polis Board 101 bob", "an automatic reply (Subject: Risposta automatica)"),
        ("Respuesta automática: Polis Board 101 bob", "an automatic reply (Subject: Respuesta automática)"),
        ("Abwesend: Polis Board 101 bob", "an automatic reply (Subject: Abwesend)"),
        ("Abwesenheitsnotiz: Polis Board 101 bob", "an automatic reply (Subject: Abwesenheitsnotiz)"),
        ("Vacation: Polis Board 101 bob", "an automatic reply (Subject: Vacation:)"),
        ("[Auto-Reply] Polis Board 101 bob", "an automatic reply (Subject: [Auto-Reply])"),
        ("Away from my desk", "an automatic reply (Subject: Away from)"),
        ("AW: Polis Board 101 bob", None),  # a German "Re:" from a person
        ("vacation bob pw 10", None),  # the command
        ("polis move 101 bob pw a1-a2", None),
    ],
)  # fmt: skip
def test_automatic_subjects(subject: str, reason: str | None) -> None:
    """Automatic replies and bounces from senders that set no header at all."""
    raw = f"From: bob@example.org\nSubject: {subject}\n\nI am away until Monday.\n".encode()
    p = parse_message(raw, "bob@example.org", server_addresses=[SERVER])
    assert p.automatic_reason == reason
    assert p.is_automatic is (reason is not None)


@pytest.mark.parametrize(
    ("subject", "automatic"),
    [
        ("Away from the office until 3 May", False),
        ("Abwesend bis Montag", False),
        ("Vacation: two weeks", False),
        ("Out of office, please pause my games", False),
        ("Abwesend: Polis Board 101 bob", True),  # an automatic reply to one of our mails
        ("Vacation: Re: Polis Board 101 bob", True),
        ("Automatic reply: List of Polis games", True),
    ],
)
def test_a_person_whose_subject_reads_like_an_automatic_reply_is_read(
    subject: str, automatic: bool
) -> None:
    """The players who send 'vacation' write such Subjects: a Subject rule alone silenced their
    mail, and their command never ran.  With command lines in the mail, only an automatic
    reply to one of our mails is silenced."""
    line = "polis vacation bob pw-bob-1 14"
    raw = f"From: bob@example.org\nSubject: {subject}\n\n{line}\n".encode()
    p = parse_message(raw, "bob@example.org", server_addresses=[SERVER])
    assert p.is_automatic is automatic
    assert p.commands == [line]


@pytest.mark.parametrize(
    ("sender", "no_sender"),
    [
        ("a@x.test, m20@x.test", "the From header names 2 addresses"),
        ('"Alice, A." <a@x.test>', None),
        ("grp: a@x.test, b@x.test;", "the From header is a group of addresses"),
        ("undisclosed-recipients:;", "the From header is a group of addresses"),
    ],
)
def test_a_list_of_senders_leaves_nobody_to_answer(sender: str, no_sender: str | None) -> None:
    """Not the first address of the list, nor the envelope sender: nobody is answered."""
    raw = f"From: {sender}\nSubject: help\n\nhi\n".encode()
    p = parse_message(raw, "a@x.test")
    assert p.no_sender == no_sender
    assert p.sender == (None if no_sender else "a@x.test")
    reply_to = b"From: a@x.test\nReply-To: a@x.test, b@x.test\nSubject: help\n\nhi\n"
    assert parse_message(reply_to, "a@x.test").sender is None


@pytest.mark.parametrize(
    ("subject", "command"),
    [
        (MOVE, MOVE),
        ("Re: " + MOVE, MOVE),
        ("RE: re: Fwd: FW: AW: WG: " + MOVE, MOVE),
        ("** " + MOVE + " **", MOVE),
        ("Re: **" + MOVE, MOVE),
        ("  ploy   move  101 alice s3cret  e4-e5 ", MOVE),
        ("Ploy Board 101 alice", None),
        ("Re: Ploy Board 101 alice", None),
        ("Re: Ploy Board 101 Error", None),
        ("Ploy board 101 alice s3cret e4-e5", "Ploy board 101 alice s3cret e4-e5"),
        ("New Ploy Board 101 alice", None),
        ("Nag: Ploy Board 101 alice", None),
        ("my move", None),
        ("", None),
        ("signup bob pw bob@example.org", "signup bob pw bob@example.org"),
    ],
)
def test_subject_command(subject: str, command: str | None) -> None:
    assert subject_command(subject, command_words()) == command


@pytest.mark.parametrize(
    ("body", "commands", "comment"),
    [
        ("\n\n  \nploy show 1\nploy show 2\n\nhi", ["ploy show 1", "ploy show 2"], "hi"),
        ("ploy show 1\nhi there\nploy show 2", ["ploy show 1", "ploy show 2"], "hi there"),
        ("hi there\nhelp me\nploy show 2", ["ploy show 2"], "hi there\nhelp me"),
        ("> quoted\n\nhelp\n\nthanks", ["help"], "thanks"),
        ("ploy show 1\n-- \nsig", ["ploy show 1"], ""),
        ("ploy show 1\n--\nsig", ["ploy show 1"], ""),
        ("ploy show 1\n____\nOutlook", ["ploy show 1"], ""),
        ("ploy show 1\n> ploy show 2\n", ["ploy show 1"], ""),
        ("> quoted first\nploy show 1", ["ploy show 1"], ""),
        (
            "On Mon, Bob wrote:\n> x\n> y\n\nploy show 1\nok\n-- \nploy show 2",
            ["ploy show 1"],
            "ok",
        ),
        ("hi\nplois shwo 102\nploy shwo 102", ["ploy shwo 102"], "hi"),
        ("ploy show 1\nOn Mon, Bob wrote:\n> x", ["ploy show 1"], ""),
        (
            "ploy show 1\n\nmine\n-----Original Message-----\nFrom: x\nold",
            ["ploy show 1"],
            "mine",
        ),
        ("hello\n\n\n\nworld  \n\n", [], "hello\n\nworld"),
        ("> a\nmy answer\n> b\nsecond answer", [], "my answer\nsecond answer"),
        ("ploy\u00a0show 1\n", ["ploy show 1"], ""),
        ("** ploy show 1 **\n", ["ploy show 1"], ""),
        (  # the original pasted below the reply, unquoted: its unfilled reply line is no command
            "ploy move 101 bob pw e2#3\n\nYour move. Send back:\n"
            "  ploy move 101 bob PASSWORD <move>#3\n",
            ["ploy move 101 bob pw e2#3"],
            "Your move. Send back:\n  ploy move 101 bob ******** <move>#3",  # (masked)
        ),
        (  # and so are the lines that answer a proposal, or swap, or set a reset password
            "ploy move 101 bob pw accept#2\n\n"
            "  ploy move 101 bob PASSWORD accept#2\n  ploy move 101 bob PASSWORD reject#2\n"
            "  ploy move 101 bob PASSWORD accept\n  pylon move 101 bob PASSWORD swap#2\n"
            "  password new bob CODE NEWPASSWORD\n",
            ["ploy move 101 bob pw accept#2"],
            "  ploy move 101 bob ******** accept#2\n  ploy move 101 bob ******** reject#2\n"
            "  ploy move 101 bob ******** accept\n  pylon move 101 bob ******** swap#2\n"
            "  password new bob ******** ********",
        ),
        (  # below "On ... wrote:" with no quote under it, the mail replied to: nothing is read
            "I never signed up, STOP\n\nOn Mon, pbmserv <pbmserv@example.net> wrote:\n\n"
            "To confirm, send the line\n  confirm ABCDEFGH23456723\n",
            [],
            "I never signed up, STOP",
        ),
        (  # nor under Outlook's header block
            "no!\n\nFrom: pbmserv <pbmserv@example.net>\nSent: Monday\nTo: v@example.org\n"
            "Subject: confirm ABCDEFGH23456723\n\n  confirm ABCDEFGH23456723\n",
            [],
            "no!",
        ),
        ("From: me\nploy show 1\nok", ["ploy show 1"], "From: me\nok"),  # (no block)
        (  # a phone's signature is neither command nor comment; the quote below it is skipped
            "ploy show 1\n\nSent from my iPhone\n\nOn Mon, Bob wrote:\n> x\n\nploy show 2\n",
            ["ploy show 1", "ploy show 2"],
            "",
        ),
        (
            "Sent from my phone, sorry for the typos\n",
            [],
            "Sent from my phone, sorry for the typos",
        ),
    ],
)
def test_body(body: str, commands: list[str], comment: str) -> None:
    raw = b"From: a@example.org\nSubject: x\nContent-Type: text/plain; charset=utf-8\n\n"
    p = parse_message(raw + body.encode())
    assert (p.commands, p.comment) == (commands, comment)


@pytest.mark.parametrize(
    ("body", "says_more"),
    [
        ("", False),
        ("> Somebody asked ...\n\n-- \nVictor", False),  # quoted text and a signature only
        ("On Mon, pbmserv wrote:\n> Somebody asked\n", False),
        ("\nSent from my iPhone\n\n> Somebody asked\n", False),
        ("Sent from Yahoo Mail on Android\n\n> Somebody asked\n", False),
        ("I never signed up, STOP", True),
        ("STOP\n\nOn Mon, pbmserv wrote:\n\n  confirm ABCDEFGH23456723\n", True),
        ("help", True),  # a command line of its own
        ("sigunp 101 x", True),  # a line not understood
    ],
)
def test_what_a_reply_says_besides_its_subject(body: str, says_more: bool) -> None:
    """A code in the Subject is a yes only from a mail that says nothing more."""
    raw = b"From: v@example.org\nSubject: Re: confirm ABCDEFGH23456723\n\n" + body.encode()
    p = parse_message(raw)
    assert p.commands[0] == "confirm ABCDEFGH23456723" and p.says_more is says_more


@pytest.mark.parametrize(
    ("subject", "body", "not_understood", "comment"),
    [
        ("hi", "move 101 bob pw e2\nok", ["move 101 bob pw e2"], "ok"),  # game word forgotten
        (
            "hi",
            "Move 12 was a blunder\nshow 3 of them",
            [],
            "Move 12 was a blunder\nshow 3 of them",
        ),
        ("hi", "Good game.\nMove 123 was a blunder", [], "Good game.\nMove 123 was a blunder"),
        ("Re: plois mvoe 101 bob pw e2", "hi", ["plois mvoe 101 bob pw e2"], "hi"),
        ("Re: move 101 bob pw e2", "ploy show 1", ["move 101 bob pw e2"], ""),
        ("Re: Ploy Board 101 bob", "hi", [], "hi"),
        ("my move 101 was good", "hi", [], "hi"),
    ],
)
def test_lines_that_only_look_like_commands(
    subject: str, body: str, not_understood: list[str], comment: str
) -> None:
    """A game's command with a board number (101 on) but no game word, and a Subject that only
    looks like a command, are lines not understood: never a comment, and masked as such
    (``unread_texts`` has the Subject as written, for its quotes)."""
    raw = f"From: a@example.org\nSubject: {subject}\n\n{body}\n".encode()
    p = parse_message(raw)
    assert (p.not_understood, p.comment) == (not_understood, comment)
    if p.subject_not_understood:
        assert p.unread_texts == [*not_understood, subject]


def test_lines_not_understood_are_listed_up_to_the_command_limit() -> None:
    """As many lines not understood are kept as command lines (the Subject's among them); the
    rest are counted in one note and left out of the text, which is quoted and kept: nothing
    later masks or lists them one by one."""
    body = "polis show 101\n" + "plois mvoe 101 bob Sekrit77 e2\n" * 30 + "hello\n"
    raw = f"From: a@example.org\nSubject: plois shwo 101\n\n{body}".encode()
    p = parse_message(raw, max_commands=5)
    assert p.commands == ["polis show 101"] and p.comment == "hello"
    assert p.not_understood == ["plois shwo 101", *["plois mvoe 101 bob Sekrit77 e2"] * 4]
    assert p.ignored == ["26 more lines not understood left out: an answer lists at most 5"]
    assert p.text.count("Sekrit77") == 4 and p.text.count(LEFT_OUT) == 26
    assert p.text.endswith(f"{LEFT_OUT}\nhello\n")
    assert read_body("plois shwo 102\n" * 3, {"polis"}).not_understood_over == 0  # no limit


def test_only_the_first_part_of_a_long_text_is_read() -> None:
    """A mail is read (and kept) up to MAX_TEXT_LINES lines and MAX_TEXT_CHARS characters,
    the Subject and the headers kept up to MAX_HEADER_CHARS: every line read costs the
    grammar's work, and a mail may have a megabyte."""
    raw = b"Subject: hi\n\n" + b"polis show 101\n" + b"x 1\n" * 5_000 + b"polis show 102\n"
    p = parse_message(raw)
    assert p.commands == ["polis show 101"]  # the second one was past the part read
    assert p.text.count("\n") == MAX_TEXT_LINES - 1
    assert p.ignored[0].startswith("the text after line 1000 (4,002 more lines) was left out")
    p = parse_message(b"Subject: hi\n\npolis show 101 " + b"x" * 100_000)
    assert p.text == ("polis show 101 " + "x" * 100_000)[:MAX_TEXT_CHARS]
    assert p.ignored[0].startswith("the text after its first 64,000 characters was left out")
    p = parse_message(b"Subject: polis show " + b" ".join([b"101"] * 1000) + b"\n\nhi")
    assert len(p.subject) == len(p.commands[0]) == dict(p.headers)["Subject"].__len__() == 1000
    assert p.ignored == ["the Subject after 1,000 characters was left out"]


def test_an_answer_is_cut_at_its_size_limit() -> None:
    body = "".join(f"line {n:05}\n" for n in range(20_000))  # 220,000 bytes
    cut = bounded(body)
    assert len(cut.encode()) <= MAX_ANSWER_BYTES
    head, note = cut.split("\n[")
    assert body.startswith(head) and head.endswith("\n") and len(head) > MAX_ANSWER_BYTES - 200
    assert note == (
        f"The rest of this answer ({len(body) - len(head):,} bytes) is left out: an answer "
        "carries at most 128 KB. Ask for less in one mail.]\n"
    )
    assert bounded("short\n") == "short\n"
    assert len(bounded("é" * 100_000, 1000).encode()) <= 1000  # (two bytes each, none split)


def test_a_quote_masks_only_the_lines_it_quotes() -> None:
    seen: list[str] = []

    def mask(text: str) -> str:
        seen.append(text)
        return text.replace("Sekrit77", "********")

    quoted = quote_mail("hi", "polis move 101 bob Sekrit77 e2\n" + "more\n" * 10_000, mask)
    assert quoted.count("\n> ") == QUOTED_LINES and "Sekrit77" not in quoted
    assert sum(text.count("\n") for text in seen) < QUOTED_LINES
    long = quote_mail("hi", "polis show " + "101 " * 1000, mask)
    assert long.endswith("> polis show " + "101 " * 122 + "1 [...]\n")


def test_html_to_text() -> None:
    html = (
        "<html><head><style>p{}</style><script>var x = '<p>';</script></head><body>"
        "<p>one&nbsp;two &eacute; &#8364;</p><div>three<br/>four</div>"
        "<div class=gmail_quote>On Mon, Bob wrote:<blockquote>old <b>text</b>"
        "<blockquote>older</blockquote></blockquote></div></body></html>"
    )
    assert html_to_text(html) == (
        "one two é €\n\nthree\nfour\n\nOn Mon, Bob wrote:\n> old text\n> > older"
    )


@pytest.mark.parametrize("start", ["<a", "x<", "</", "<!--a>", "<!--[if x]>", "<![if x>"])
def test_html_of_tags_that_never_end_is_read_in_linear_time(start: str) -> None:
    """html.parser looked for the end of each up to the end of the mail: 200 KB of "<a" took
    44 s, and a mail may have 1 MB.  Such a start is text."""
    import time

    html = start * (100_000 // len(start)) + "<p>polis show 101</p>"
    began = time.thread_time()
    text = html_to_text(html)
    assert time.thread_time() - began < 1.5  # (100 KB: 11 s for "<a", 3.8 s for "<!--a>")
    if start.startswith("<!--"):  # a comment that never ends hides the rest, as in a browser
        assert text == ""
    else:
        assert text.startswith(start) and text.endswith("polis show 101")


def test_html_tags_comments_and_sections_that_end_are_read_as_before() -> None:
    html = (
        "<head><!--[if gte mso 9]><xml><o:x></o:x></xml><![endif]--></head><body>"
        "<p><![if !supportLists]>1.<![endif]> first</p><p>a &lt; b</p><!-- note -->"
        "<![CDATA[ x ]]><p>end</p></body>"
    )
    assert html_to_text(html) == "1. first\n\na < b\n\nend"


def test_html_comments_and_sections_holding_tags_stay_unread() -> None:
    """A comment or CDATA section that ends is not read, whatever tags or '<' it holds: the
    start of one followed by a '<' before a '>' was taken for a tag that never ends, so the
    comment's text went into the mail's text (and a comment to the opponent)."""
    html = (
        "<p>hi</p><!-- a <b>hidden</b> note --><p>a</p><!-- x<y -->"
        "<![CDATA[ a<b ]]><p>polis list</p>"
    )
    assert html_to_text(html) == "hi\n\na\n\npolis list"
    # the "downlevel-revealed" comments of mail templates (Outlook, newsletters)
    html = "<p>Hi</p><!--[if !mso]><!--><p>polis list</p><!--<![endif]--><p>bye</p>"
    assert html_to_text(html) == "Hi\n\npolis list\n\nbye"


@pytest.mark.parametrize(
    "hostile", ["<!--" + "<a" * 50_000 + "-->", "<![CDATA[" + "<a" * 50_000 + "]]>"]
)
def test_html_comment_full_of_tag_starts_is_read_in_linear_time(hostile: str) -> None:
    import time

    began = time.thread_time()
    assert html_to_text(hostile + "<p>polis show 101</p>") == "polis show 101"
    assert time.thread_time() - began < 1.5


def test_html_comments_end_as_browsers_end_them() -> None:
    """A comment closed by '--!>' (browsers) was shown as text, and '<!-->' is an empty one;
    '-- >' ends none (html.parser's did: what a browser hides was read); a script's '<!--' is
    no comment (it hid what followed)."""
    html = "<p>a</p><!-- x -- ><p>b</p><!-- y --!><p>c</p><!-->d<!--->e<!---->f"
    assert html_to_text(html) == "a\n\nc\ndef"
    html = '<script>var s = "<!--";</script><p>polis show 101</p><!-- z -->'
    assert html_to_text(html) == "polis show 101"
    assert html_to_text("<!DOCTYPE html><?xml version='1.0'?><![foo]><p>hi</p>") == "hi"


def test_html_quoted_values_may_hold_angle_brackets() -> None:
    """A '<' in a quoted attribute value made the tag text (a tag that never ends)."""
    html = '<a title="a<b" href=\'x>y\'>polis show 101</a><p title="<!--">ok</p><!-- -->'
    assert html_to_text(html) == "polis show 101\nok"
    assert html_to_text('<a title="x" <b>y</b>') == '<a title="x" y'  # (a '<' outside one)


@pytest.mark.parametrize(
    "start", ['<a title="<', "<a b='\"", "<a b=\"<a b='", "<!-- -- ", "</script", "<!--a--!"]
)
def test_html_of_quotes_and_comments_that_never_end_is_read_in_linear_time(start: str) -> None:
    import time

    html = start * (500_000 // len(start)) + "<p>polis show 101</p>"
    began = time.thread_time()
    text = html_to_text(html)
    assert time.thread_time() - began < 3  # (0.2-1 s on a busy machine)
    if start.startswith("<!--"):  # a comment that never ends hides the rest, as in a browser
        assert text == ""
    else:
        assert text.endswith("\npolis show 101") and text.startswith(start[:2])


def test_html_reply_drops_the_quote() -> None:
    raw = (
        b"From: a@example.org\nSubject: x\nContent-Type: text/html\n\n"
        b"<div>ploy show 1</div><div>thanks</div><div>On Mon, Bob wrote:"
        b"<blockquote>ploy move 1 bob pw x</blockquote></div>"
    )
    p = parse_message(raw)
    assert (p.commands, p.comment) == (["ploy show 1"], "thanks")


# ----------------------------------------------------------------------------- passwords


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (MOVE, "ploy move 101 alice ******** e4-e5"),
        ("PLOY MOVE 101 alice S3cret e4", "PLOY MOVE 101 alice ******** e4"),
        ("ploy board 101 alice pw e4#12", "ploy board 101 alice ******** e4#12"),
        ("ploy resign 101 alice pw", "ploy resign 101 alice ********"),
        ("pylon swap 7 bob pw", "pylon swap 7 bob ********"),
        ("polis queue 3 bob pw a1", "polis queue 3 bob ******** a1"),
        ("polis qmove 3 bob pw a1", "polis qmove 3 bob ******** a1"),
        ("plotto chat 3 bob pw hello all", "plotto chat 3 bob ******** hello all"),
        ("ploy move 101 alice", "ploy move 101 alice"),  # no password given
        ("ploy show 101 102 103 104", "ploy show 101 102 103 104"),
        ("ploy challenge a b c d", "ploy challenge a b c d"),
        ("hex move 5 bob pw a1", "hex move 5 bob ******** a1"),  # unknown game, numeric board
        ("I will resign soon and then go", "I will resign soon and then go"),
        ("signup bob pw bob@example.org", "signup bob ******** bob@example.org"),
        ("signup bob", "signup bob"),
        ("signoff bob pw", "signoff bob ********"),
        ("change password bob old new", "change password bob ******** ********"),
        ("change password bob old", "change password bob ********"),
        ("change address bob pw b@x c@y", "change address bob ******** b@x c@y"),
        ("change something bob pw", "change something bob pw"),
        ("pbmserv signup bob pw", "pbmserv signup bob ********"),
        ("> ploy move 101 alice pw e4", "> ploy move 101 alice ******** e4"),
        (">> ploy move 101 alice pw e4", ">> ploy move 101 alice ******** e4"),
        (">ploy move 101 alice pw e4", ">ploy move 101 alice ******** e4"),
        ("Subject: Re: ploy move 1 a pw e4", "Subject: Re: ploy move 1 a ******** e4"),
        ("** ploy move 1 a pw e4 **", "** ploy move 1 a ******** e4 **"),
        ("  ploy  move\t1 a  pw  e4", "  ploy  move\t1 a  ********  e4"),
        ("a\nsignup b pw\n\nc", "a\nsignup b ********\n\nc"),
        ("", ""),
    ],
)
def test_mask_passwords(text: str, masked: str) -> None:
    assert mask_passwords(text) == masked


def test_mask_passwords_known_passwords_anywhere() -> None:
    text = "my password is s3cret, really: s3cret\nso s3cret"
    assert mask_passwords(text, commands=[MOVE]) == (
        "my password is ********, really: ********\nso ********"
    )


def test_mask_passwords_with_command_words() -> None:
    assert mask_passwords("hex move b5 bob pw a1") == "hex move b5 bob pw a1"
    assert mask_passwords("hex move b5 bob pw a1", {"hex"}) == "hex move b5 bob ******** a1"


def test_command_passwords() -> None:
    assert command_passwords(MOVE) == ["s3cret"]
    assert command_passwords("change password bob old new") == ["old", "new"]
    assert command_passwords("ploy show 101") == []


# ----------------------------------------------------------------------------- robustness


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_bytes(raw: bytes) -> None:
    p = parse_message(raw, "a@example.org")
    assert isinstance(p.commands, list) and isinstance(p.comment, str)


MIME_PIECES = [
    b"From: a@example.org\n",
    b"From: =?bogus?Q?x=ZZ?= <>\n",
    b"Reply-To: ,,,<@>\n",
    b"Subject: =?utf-8?B?####?=\n",
    b"Message-ID: <<>>\n",
    b"References: <a@b> junk <c@d\n",
    b"Content-Type: multipart/mixed; boundary=B\n",
    b"Content-Type: multipart/alternative\n",
    b'Content-Type: text/plain; charset="x-weird"\n',
    b"Content-Type: text/html; charset=utf-16\n",
    b"Content-Transfer-Encoding: base64\n",
    b"Content-Transfer-Encoding: quoted-printable\n",
    b"Content-Disposition: attachment; filename*=utf-8''%E2%82\n",
    b"\n",
    b"--B\n",
    b"--B--\n",
    b"ploy move 1 a pw e4\n",
    b"=E2=82=AC=\n",
    b"<p>x</p><blockquote>\n",
    b"\xff\xfe\x00\x80\n",
    b"SGVsbG8=\n",
    b"> quoted\n",
    b"-- \n",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(MIME_PIECES), max_size=30))
def test_never_raises_on_mime_soup(pieces: list[bytes]) -> None:
    p = parse_message(b"".join(pieces), "")
    assert p.is_automatic  # empty envelope sender


def _storable(p: ParsedMail) -> bool:
    fields = [p.subject, p.sender_name, p.comment, p.text, *p.commands, *p.ignored]
    fields += [v for _, v in p.headers] + [p.sender or "", p.message_id or "", *p.references]
    return all(not any(0xD800 <= ord(c) <= 0xDFFF or c == "\x00" for c in f) for f in fields)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(MIME_PIECES), max_size=30), st.binary(max_size=50))
def test_fields_are_always_storable(pieces: list[bytes], tail: bytes) -> None:
    assert _storable(parse_message(b"".join(pieces) + tail, "a@example.org"))


def test_raw_8bit_headers() -> None:
    for raw in (
        b"From: J\xc3\xbcrgen <j@example.org>\nSubject: Gr\xc3\xbc\xc3\x9fe\n\nhi\n",
        b"From: J\xfcrgen <j@example.org>\nSubject: Gr\xfc\xdfe\n\nhi\n",
    ):
        p = parse_message(raw)
        assert (p.subject, p.sender_name, p.sender) == ("Grüße", "Jürgen", "j@example.org")
        assert _storable(p)


def test_mostly_utf8_body_with_a_broken_byte() -> None:
    raw = b"Subject: x\nContent-Type: text/plain; charset=utf-8\n\ncaf\xc3\xa9 \xff\n"
    assert parse_message(raw).comment == "café \ufffd"


@pytest.mark.parametrize(
    "body",
    [
        "am " + "schrieb x " * 30_000,  # one long decoded line: no quadratic regex
        "On Mon, Bob wrote:\nmine\n" * 40_000,  # many attributions: linear history stripping
        "> q\n" * 100_000,
        "ploy show 1\n" * 50_000,
    ],
)
def test_big_bodies_are_fast(body: str) -> None:
    import base64
    import time

    raw = b"Subject: x\nContent-Transfer-Encoding: base64\n\n" + base64.encodebytes(body.encode())
    start = time.thread_time()
    p = parse_message(raw)
    assert time.thread_time() - start < 3
    assert len(p.commands) <= 10


@pytest.mark.parametrize(
    "content_type",
    ["multipart/mixed", 'multipart/mixed; boundary="NOT-THERE"', "multipart/alternative"],
)
def test_broken_multipart_is_read_as_text(content_type: str) -> None:
    raw = f"From: a@example.org\nContent-Type: {content_type}\n\nploy show 1\n\nhi\n".encode()
    p = parse_message(raw)
    assert (p.commands, p.comment) == (["ploy show 1"], "hi")
    assert p.ignored == ["a broken multipart mail is read as plain text"]


@pytest.mark.parametrize(
    "line,masked",
    [
        ("vacation alice s3cret 10", "vacation alice ******** 10"),
        ("accept alice s3cret", "accept alice ********"),
        ("limit alice s3cret 5", "limit alice ******** 5"),
        ("seek alice s3cret 2", "seek alice ******** 2"),
        ("tournament join spring alice s3cret", "tournament join spring alice ********"),
    ],
)
def test_account_and_tournament_passwords_are_masked(line, masked):
    assert mask_passwords(line) == masked


def test_common_account_words_mask_only_at_a_line_start():
    assert mask_passwords("I am on vacation until Monday.") == "I am on vacation until Monday."
    assert mask_passwords("> vacation alice s3cret 3") == "> vacation alice ******** 3"


def test_command_credentials_pair_userid_and_password():
    from pbmserv.commands.grammar import command_credentials

    assert command_credentials("pylon move 101 alice s3cret c3") == [("alice", "s3cret")]
    assert command_credentials("change password alice old new") == [
        ("alice", "old"),
        ("old", "new"),
    ]
    assert command_credentials("pylon show 101") == []


def _multipart(parts: list[str], headers: str = "") -> bytes:
    body = "".join(f"--b\n{part}\n" for part in parts)
    return (
        f"From: alice@example.org\nSubject: ploy show 1\n{headers}MIME-Version: 1.0\n"
        f'Content-Type: multipart/mixed; boundary="b"\n\n{body}--b--\n'
    ).encode()


def test_a_mail_of_many_parts_is_read_to_its_100th() -> None:
    """1 MB of empty attachments (15,000) took 4 s to read and was answered with a line for
    each, the answer cut at its size limit."""
    attachment = 'Content-Type: application/octet-stream; name="f.bin"\n\nx'
    text = "Content-Type: text/plain\n\nhello"
    p = parse_message(_multipart([text] + [attachment] * 5000), "alice@example.org")
    assert (p.commands, p.comment) == (["ploy show 1"], "hello")
    assert p.ignored == [
        *["attachment f.bin ignored"] * 98,  # (the mail is a part, its text one)
        "the parts of the mail after its first 100 ignored",
    ]


def test_parts_nested_too_deep_for_the_parser_keep_the_headers() -> None:
    """A thousand nested multiparts: the parser's recursion fails, and the mail used to be
    read without its headers (its Subject's command lost, the envelope sender answered, a
    bounce's marks unseen)."""
    depth = 1500
    head = "".join(
        f'--b{i}\nContent-Type: multipart/mixed; boundary="b{i + 1}"\n\n' for i in range(depth)
    )
    raw = (
        "From: alice@example.org\nSubject: ploy show 1\nMIME-Version: 1.0\n"
        f'Content-Type: multipart/mixed; boundary="b0"\n\n{head}--b{depth}\n\nhi\n'
    ).encode()
    p = parse_message(raw, "bob@example.org")
    assert (p.sender, p.commands, p.is_automatic) == ("alice@example.org", ["ploy show 1"], False)
    assert "the MIME structure could not be read; the mail is read as text" in p.ignored
    p = parse_message(raw.replace(b"MIME", b"Auto-Submitted: auto-replied\nMIME", 1), "b@x.org")
    assert p.is_automatic


@pytest.mark.parametrize("name", ["Subject", "From"])
def test_a_header_of_many_encoded_words_is_read_in_bounded_memory(name: str) -> None:
    """The standard library's header parser takes memory growing with the square of the
    encoded words in a value: a Subject of 60,000 (840 KB, within a mail's size limit) took
    more than the machine had, and the server was killed at each attempt."""
    import tracemalloc

    words = " ".join(["=?utf-8?q?a?="] * 6_000)
    value = {"From": f"{words} <a@example.org>", "Subject": words}[name]
    raw = f"{name}: {value}\nTo: pbmserv@example.org\n\nhi\n".encode()
    tracemalloc.start()
    try:
        parse_message(raw, "a@example.org")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40_000_000, f"{peak:,} bytes"  # (without the bound: 290 MB for the Subject)


def test_a_header_of_a_million_lines_costs_little_and_gets_no_answer() -> None:
    """A million short header lines (7 MB) held the worker for 7 seconds (the parser's time
    for each header line, and every header looked up going through them all).  The header is
    read up to its first 1,000 lines: such a mail is not answered (the marks of a robot may
    stand in its end, a mail loop grows its header), and costs a fraction of a second."""
    import time

    raw = b"From: a@example.org\nSubject: polis help\n" + b"X-A: b\n" * 1_000_000 + b"\nhi\n"
    began = time.thread_time()
    parsed = parse_message(raw, "a@example.org")
    assert time.thread_time() - began < 3  # (7 s before)
    assert parsed.is_automatic and "more than 1,000 lines" in (parsed.automatic_reason or "")
    assert parsed.sender == "a@example.org" and parsed.commands == ["polis help"]
    normal = b"From: a@example.org\nSubject: polis help\n" + b"Received: x\n" * 900 + b"\nhi\n"
    assert not parse_message(normal, "a@example.org").is_automatic


@pytest.mark.parametrize(
    "inner",
    [
        b"--b\n",  # a part's header
        b"--b\nContent-Type: message/rfc822\n\n",  # the header of a mail inside the mail
        b"--b\nContent-Type:\n message/rfc822\n\n",
    ],
)
def test_a_part_header_of_a_million_lines_is_read_up_to_its_first_hundred(inner) -> None:
    import time

    raw = (
        b"From: a@example.org\nSubject: polis help\n"
        b"Content-Type: multipart/mixed; boundary=b\n\n"
        + inner
        + b"X-A: b\n" * 1_000_000
        + b"\nhi\n--b--\n"
    )
    began = time.thread_time()
    parsed = parse_message(raw, "a@example.org")
    assert time.thread_time() - began < 1.5  # (2.4 to 4 s before)
    assert parsed.commands == ["polis help"] and not parsed.is_automatic
    assert (
        "header lines of the parts left out (a part's header is read up to 100 lines, 2,000 in all)"
        in parsed.ignored
    )


@pytest.mark.parametrize("charset", ["punycode", "idna", "Punycode"])
def test_a_part_declared_in_a_codec_no_mail_is_written_in_is_read_as_undeclared(charset) -> None:
    """Python's punycode and idna decoders take time growing with the square of the text:
    400 KB declared 'charset=punycode' held the worker for 6 seconds (10 MB: hours)."""
    import time

    raw = (
        (
            f"From: a@example.org\nSubject: hi\nContent-Type: text/plain; charset={charset}\n\n"
        ).encode()
        + b"polis help\n"
        + b"a" * 200_000
        + b"-"
        + b"b" * 200_000
        + b"\n"
    )
    began = time.thread_time()
    parsed = parse_message(raw, "a@example.org")
    assert time.thread_time() - began < 1.5  # (6 s before)
    assert parsed.commands == ["polis help"]


def test_a_long_text_right_below_the_header_or_a_dashed_line_is_not_cut_as_a_header() -> None:
    """A header ends at its first line that is no header line, blank or not (as the parser
    reads it): a mail without the blank line below its header, or a text below a '-----'
    line, is text, not a header of more than 1,000 or 100 lines."""
    raw = b"From: a@example.org\nSubject: x\npolis help\n" + b"line\n" * 1500
    parsed = parse_message(raw, "a@example.org")
    assert not parsed.is_automatic and parsed.commands == ["polis help"]
    body = b"hello\n-----\n" + b"line\n" * 150 + b"polis help\n"
    parsed = parse_message(b"From: a@example.org\nSubject: x\n\n" + body, "a@example.org")
    assert parsed.commands == ["polis help"] and not parsed.ignored


def test_a_text_below_a_dashed_line_is_not_cut_unless_the_mail_has_parts() -> None:
    """A mail of one text part whose text below a '--' line began with more than 100
    indented lines (a pasted listing, a board, commands) lost its lines after the 100th, as
    'header lines of the parts': a '--' line starts a part only in a multipart mail."""
    body = b"hello\n-----\n" + b"  line %d\n" * 150 % tuple(range(150)) + b"polis help\n"
    parsed = parse_message(b"From: a@example.org\nSubject: x\n\n" + body, "a@example.org")
    assert parsed.commands == ["polis help"] and not parsed.ignored
    assert "line 149" in parsed.text


def test_a_text_part_below_a_dashed_line_is_not_cut() -> None:
    """In a mail of parts, every '--' line was taken for a boundary: a text part whose text
    below a '-----' line began with more than 100 indented lines lost the rest.  Only the
    boundaries the headers declare start a part now."""
    text = b"hello\n-----\n" + b"  line %d\n" * 150 % tuple(range(150)) + b"polis help\n"
    raw = (
        b"From: a@example.org\nSubject: x\n"
        b'Content-Type: multipart/mixed;\n boundary="=_b--x"\n\n'
        b"--=_b--x\nContent-Type: text/plain\n\n" + text + b"--=_b--x--\n"
    )
    parsed = parse_message(raw, "a@example.org")
    assert parsed.commands == ["polis help"] and not parsed.ignored
    assert "line 149" in parsed.text


@pytest.mark.parametrize("multipart", [False, True])
def test_an_html_mail_with_thousands_of_dashed_lines_is_read_whole(multipart: bool) -> None:
    """An HTML mail whose style held more than 1,200 lines starting with '--' (CSS custom
    properties, as newsletters and some webmail write) lost its text and commands below them:
    the MIME parser was given the mail up to its 1,201st such line.  Only boundary lines
    count now."""
    style = "".join(f"--color-{i}: #{i:06x};\n" for i in range(3000))
    html = f"<html><head><style>\n:root {{\n{style}}}\n</style></head>"
    html += "<body><p>polis show 101</p><p>thanks</p></body></html>\n"
    head = "From: a@example.org\nSubject: hello\nMIME-Version: 1.0\n"
    if multipart:
        raw = head + 'Content-Type: multipart/alternative; boundary="=_b"\n\n'
        raw += "--=_b\nContent-Type: text/plain\n\n\n--=_b\nContent-Type: text/html\n\n"
        raw += html + "--=_b--\n"
    else:
        raw = head + "Content-Type: text/html\n\n" + html
    parsed = parse_message(raw.encode(), "a@example.org")
    assert parsed.commands == ["polis show 101"]
    assert parsed.comment == "thanks"


def test_the_parts_past_the_100th_are_cut_before_the_parser_by_their_boundaries() -> None:
    from pbmserv.mail.decode import parts_read

    head = b'Content-Type: multipart/mixed; boundary="b"\n\n'
    raw = head + b"--b\n\nx\n" * 50_000 + b"--b--\n"
    assert parts_read(raw, 1000).count(b"\n--b\n") == 201  # (2 * MAX_PARTS + 1)
    dashes = head + b"--b\n\n" + b"--x\n" * 50_000 + b"--b--\n"
    assert parts_read(dashes, 1000) == dashes  # (no boundary lines)
    # a boundary declared in RFC 2231's form: every '--' line counts, as before
    odd = b'Content-Type: multipart/mixed; boundary*0="b"\n\n' + b"--b\n\nx\n" * 50_000
    assert parts_read(odd, 1000).count(b"\n--b\n") == 1200


@pytest.mark.parametrize(
    "declared",
    [
        'x-boundary="z"; boundary="b"',  # (the first 'boundary=' was x-boundary's)
        'boundary="b"; x-boundary="z"',
        'x-note="; boundary=z"; boundary=b',
        'boundary="z"; boundary="b"',  # (the parser takes the first: both count)
    ],
)
def test_the_parts_are_cut_whatever_other_parameters_the_content_type_has(declared) -> None:
    """The boundary read first in a Content-Type field was taken for its boundary: in
    'x-boundary="z"; boundary="b"' it was 'z', so that the lines of 'b', the parser's, were
    not counted, and 150,000 empty parts went to the parser (1.2 s a megabyte)."""
    from pbmserv.mail.decode import parts_read

    head = f"Content-Type: multipart/mixed; {declared}\n\n".encode()
    raw = head + b"--b\n\nx\n" * 50_000 + b"--b--\n"
    assert parts_read(raw, 1000).count(b"\n--b\n") == 201  # (2 * MAX_PARTS + 1)


def test_lines_ended_by_a_cr_alone_are_counted_as_the_parser_reads_them() -> None:
    """The MIME parser ends a line at a CR alone as at LF; the counts read LF alone, so a
    mail written with CRs went to the parser whole, its 50,000 parts and its header lines."""
    from pbmserv.mail.decode import MAX_HEADER_LINES, header_lines_cut, parts_read

    head = b'Content-Type: multipart/mixed; boundary="b"\r\r'
    raw = head + b"--b\r\rx\r" * 50_000 + b"--b--\r"
    assert parts_read(raw, 1000).count(b"\n--b\n") == 201  # (2 * MAX_PARTS + 1)
    many = b"From: a@example.org\r" + b"X-A: b\r" * 5000 + b"\rpolis help\r"
    kept, top, _ = header_lines_cut(parts_read(many, 1000))
    assert top and kept.count(b"X-A: b") < MAX_HEADER_LINES
    crlf = head.replace(b"\r", b"\r\n") + b"--b\r\n\r\nx\r\n--b--\r\n"
    assert parts_read(crlf, 1000) == crlf  # (CRLF is left as it is)


def test_the_header_lines_of_all_the_parts_are_bounded_together() -> None:
    """A thousand parts of 100 header lines each kept 120,000 header lines for the parser
    (0.8 s); the parts' headers keep 2,000 lines in all."""
    from pbmserv.mail.decode import MAX_PARTS_HEADER_LINES, header_lines_cut

    raw = b"From: a@example.org\nSubject: polis help\nContent-Type: multipart/mixed; boundary=b\n\n"
    raw += (b"--b\n" + b"X-A: b\n" * 100 + b"\nhi\n") * 1300
    kept, top, parts = header_lines_cut(raw)
    assert parts and not top
    assert kept.count(b"X-A: b") <= MAX_PARTS_HEADER_LINES

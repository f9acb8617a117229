"""Mail text as its writer laid it out: HTML line breaks (``<pre>``, ``<br>``, blocks,
``white-space: pre``) and ``format=flowed`` soft line breaks (RFC 3676); a command line's
tail cut off by a line break is reported, never taken for a comment."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbmserv.mail.decode import html_to_text
from pbmserv.mail.flowed import unflow
from pbmserv.mail.parse import parse_message
from tests.mail_lines import MAIL_LINE

CHALLENGE = "ploy challenge carol erin dave ann -partnership -classic --nagtime=3"
OPTIONS = "--forfeittime=10 --unrated"
BOARD = "    a b c d\n 3  . . X .\n 2  . O . .\n 1  X . . .\n    a b c d"


def mail(body: str, content_type: str = "text/plain; charset=utf-8", cte: str = "8bit") -> bytes:
    head = f"From: a@example.org\nSubject: hi\nContent-Type: {content_type}\n"
    return f"{head}Content-Transfer-Encoding: {cte}\n\n{body}".encode()


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ("<pre>ploy games carol\npolis games ann</pre>", "ploy games carol\npolis games ann"),
        (
            "<pre>\r\nploy games carol\r\npolis games ann\r\n</pre>",
            "ploy games carol\npolis games ann",
        ),
        (f"<pre>{BOARD}</pre>", BOARD),
        ("<div>ploy games carol<br>polis games ann</div>", "ploy games carol\npolis games ann"),
        ("<div>one</div><div><br></div><div>two</div>", "one\n\ntwo"),  # Gmail
        (
            "<p class=MsoNormal>one<o:p></o:p></p><p class=MsoNormal>two<o:p></o:p></p>",
            "one\n\ntwo",
        ),  # Outlook
        ('<div style="white-space: pre-wrap">one\ntwo</div>three\nfour', "one\ntwo\nthree four"),
        ("<span>one\ntwo</span>", "one two"),  # outside pre, a line break is a blank
        (  # an inner element's end closes it only, not the outer pre block
            '<div style="white-space:pre-wrap"><div>Hi,</div>ploy a\nploy b\n</div>',
            "Hi,\nploy a\nploy b",
        ),
        ("<pre>one<br>two\nthree</pre>", "one\ntwo\nthree"),  # (br has no end tag)
        ("<pre>one \x01\ntwo</pre>", "one\ntwo"),
        (
            f"<div>ok</div><blockquote><pre>{BOARD}</pre></blockquote>",
            "ok\n\n" + "\n".join("> " + line for line in BOARD.split("\n")),
        ),
    ],
)
def test_html_keeps_its_line_breaks(html: str, text: str) -> None:
    assert html_to_text(html) == text


def test_an_html_only_mail_with_pre_runs_each_line() -> None:
    p = parse_message(mail("<pre>ploy games carol\npolis games ann</pre>", "text/html"))
    assert p.commands == ["ploy games carol", "polis games ann"]


def test_a_board_quoted_in_pre_is_quoted_back_line_by_line() -> None:
    board = "\n".join(
        f"{n:>2}  " + " ".join(".XO"[(n + c) % 3] for c in range(12)) for n in range(12)
    )
    html = "<div>polis show 101</div><div class=gmail_quote>On Mon, bob wrote:<br>"
    html += f"<blockquote><pre>{board}</pre></blockquote></div>"
    p = parse_message(mail(html, "text/html"))
    assert p.commands == ["polis show 101"]
    assert max(len(line) for line in p.text.split("\n")) <= MAIL_LINE
    assert p.text.count("\n> ") == 12


# RFC 3676, section 4: soft line breaks, DelSp, the signature, space-stuffing, quote depth
@pytest.mark.parametrize(
    ("flowed", "delsp", "text"),
    [
        ("Hello \nworld\n", False, "Hello world\n"),
        ("Hello \nworld\n", True, "Helloworld\n"),
        ("Hello\r\nworld\r\n", False, "Hello\nworld\n"),
        ("a \nb \nc\nd\n", False, "a b c\nd\n"),
        ("first \n-- \nsig\n", False, "first \n-- \nsig\n"),  # the signature stays apart
        ("text\n-- \nsig \nmore\n", False, "text\n-- \nsig more\n"),
        (" From me\n >not a quote\n  two\n", False, "From me\n>not a quote\n two\n"),
        (">> deep \n>> line\n> shallow\n", False, ">> deep line\n> shallow\n"),
        ("> quoted \nnot quoted\n", False, "> quoted \nnot quoted\n"),  # depth changed
        ("> \n>\n", False, ">\n>\n"),
        ("no end ", False, "no end "),
        ("", False, ""),
    ],
)
def test_unflow(flowed: str, delsp: bool, text: str) -> None:
    assert unflow(flowed, delsp) == text


WORD = st.text(string.ascii_letters + string.digits + "-=#.", min_size=1, max_size=12).filter(
    lambda word: word != "--"  # (a line "-- " is the signature separator, never a soft break)
)


@given(st.lists(st.lists(WORD, min_size=1, max_size=12), max_size=8), st.randoms())
def test_wrapped_lines_come_back_whole(lines: list[list[str]], random) -> None:
    """Any line a mail program soft-wraps at any blanks reads back as it was written."""
    flowed = []
    for words in lines:
        cuts = sorted(random.sample(range(1, len(words)), random.randint(0, len(words) - 1)))
        pieces = [words[a:b] for a, b in zip([0, *cuts], [*cuts, len(words)], strict=True)]
        flowed += [" ".join(p) + " " for p in pieces[:-1]] + [" ".join(pieces[-1])]
    flowed = [(" " + line if line.startswith((" ", ">", "From ")) else line) for line in flowed]
    written = "".join(line + "\n" for line in flowed)
    assert unflow(written) == "".join(" ".join(w) + "\n" for w in lines)


@pytest.mark.parametrize(
    ("content_type", "cte", "body", "commands", "unread"),
    [
        (
            "text/plain; charset=utf-8; format=flowed",
            "8bit",
            f"{CHALLENGE} \n{OPTIONS}\n",
            [f"{CHALLENGE} {OPTIONS}"],
            [],
        ),
        (
            'text/plain; charset="utf-8"; format="flowed"; delsp="yes"',
            "8bit",
            "polis move 102 bob pw  \ne4-e3#8\n",
            ["polis move 102 bob pw e4-e3#8"],
            [],
        ),
        (
            "text/plain; charset=utf-8; format=flowed",
            "quoted-printable",
            "polis move 102 bob pw=20\ne4-e3#8\n> ploy move 101 bob pw=20\n> e2-e4\n",
            ["polis move 102 bob pw e4-e3#8"],
            [],
        ),
        # not flowed: the line cut off is listed as not understood, never a comment
        ("text/plain; charset=utf-8", "8bit", f"{CHALLENGE}\n{OPTIONS}\n", [CHALLENGE], [OPTIONS]),
        (
            "text/plain",
            "8bit",
            "ploy challenge a b c d\n-partnership\n",
            ["ploy challenge a b c d"],
            ["-partnership"],
        ),
    ],
)
def test_soft_wrapped_commands(
    content_type: str, cte: str, body: str, commands: list[str], unread: list[str]
) -> None:
    p = parse_message(mail(body, content_type, cte))
    assert (p.commands, p.not_understood) == (commands, unread)
    assert OPTIONS not in p.comment and "e4-e3" not in p.comment


def test_a_signature_after_a_soft_break_is_never_read() -> None:
    """A soft break before "-- " joined the signature to the text: its lines ran."""
    body = "Hi Bob, see you \r\n-- \r\npolis resign 103 alice secret1\r\n"
    p = parse_message(mail(body, "text/plain; charset=utf-8; format=flowed", "8bit"))
    assert p.commands == [] and "resign" not in p.comment and "secret1" not in p.comment


def test_a_signature_that_looks_like_a_flag_stays_the_comment() -> None:
    """Only a game's flags, ``--options`` and ``-name=value`` are a command's cut-off tail."""
    p = parse_message(mail("polis move 101 alice pw a7-a6\n-Alice\n", "text/plain", "8bit"))
    assert p.commands == ["polis move 101 alice pw a7-a6"] and p.not_understood == []
    assert "-Alice" in p.comment

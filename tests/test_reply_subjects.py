"""A reply to one of our mails keeps our Subject (``Re: List of Ploy games``): it is never read
as a command line, nor listed as a line not understood, whatever mail it answers; a command
line in a reply's Subject still runs, and so does ``Re: confirm CODE``."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbmserv.commands.grammar import command_words
from pbmserv.mail.parse import parse_message, subject_command
from pbmserv.render import subjects

ROOT = Path(__file__).resolve().parents[1]


def read(subject: str, body: str = "") -> tuple[list[str], list[str]]:
    p = parse_message(f"From: a@example.org\nSubject: {subject}\n\n{body}\n".encode())
    return p.commands, p.not_understood


@pytest.mark.parametrize(
    ("subject", "body", "commands", "unread"),
    [
        # the newcomer's replies: our subjects ran as commands, or came back "not understood"
        ("Re: List of Ploy games", "", [], []),
        ("Re: List of games", "", [], []),
        ("Re: pbmserv Error", "", [], []),
        ("Re: Polis Error", "", [], []),
        ("Re: Ploy help", "", [], []),
        ("RE: AW: SV: Fwd: pbmserv help", "", [], []),
        ("Re: pbmserv: answers to 2 commands (1 refused)", "", [], []),
        ("Re: pbmserv: answers to 3 commands", "", [], []),
        ("Re: pbmserv: nothing confirmed", "", [], []),
        ("Re: pbmserv: answer limit reached", "", [], []),
        ("Re: Ploy Standings", "", [], []),
        ("Re: Tournament spring joined", "", [], []),
        ("Re: Tournament spring round 2", "", [], []),
        ("Re: pbmserv digest: 3 boards", "", [], []),
        ("Re: pbmserv message from bob", "", [], []),
        ("Re: Polis Board 101 queue", "", [], []),
        (
            "Re: pbmserv password reset",
            "password new bob K7QX-2D3M s3cret-new",
            ["password new bob K7QX-2D3M s3cret-new"],
            [],
        ),
        ("Re: Polis Board 101 alice", "polis show 101", ["polis show 101"], []),
        # a command line in a reply's Subject still runs, and so does a code mail's subject
        ("Re: polis move 101 alice PW a7-a6", "", ["polis move 101 alice PW a7-a6"], []),
        ("Re: confirm K7QX-2D3M", "", ["confirm K7QX-2D3M"], []),
        ("confirm K7QX-2D3M", "", ["confirm K7QX-2D3M"], []),
        ("Re: ploy help me", "", ["ploy help me"], []),
        # typed by the player, not replied to: the help he asks for
        ("Ploy help", "", ["Ploy help"], []),
        ("pbmserv help", "", ["pbmserv help"], []),
        ("ploy standings", "", ["ploy standings"], []),
        ("Re: plois shwo 102", "", [], ["plois shwo 102"]),
    ],
)
def test_a_reply_to_our_mail_runs_only_its_body(
    subject: str, body: str, commands: list[str], unread: list[str]
) -> None:
    assert read(subject, body) == (commands, unread)


VALUES = {
    "game": st.sampled_from(["Ploy", "Polis", "Pylon", "Plotto", "pbmserv", "Tournament"]),
    "board": st.integers(101, 10**6),
    "count": st.integers(0, 10**4),
    "refused": st.integers(1, 10),
    "userid": st.text(string.ascii_lowercase + string.digits + "-_", min_size=1, max_size=12),
    "name": st.text(string.ascii_letters + string.digits, min_size=1, max_size=12),
    "server": st.sampled_from(["pbmserv", "PBM Server", "Games"]),
    "what": st.sampled_from(["", "alice", "Error", "queue", "record", "Preview"]),
    "s": st.sampled_from(["", "s"]),
}


def _fields(shape: subjects.Shape) -> list[str]:
    return [
        name for _, name, _, _ in string.Formatter().parse(shape.text.replace("?}", "}")) if name
    ]


@st.composite
def our_subjects(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from([s for s in subjects.SHAPES if not s.command]))
    values = {}
    for name in _fields(shape):
        if name == "topic":
            values[name] = draw(st.sampled_from(shape.topics[name][3:-1].split("|"))).replace(
                "\\", ""
            )
        else:
            values[name] = draw(VALUES[name])
    return shape(**values)


# what mail programs write in front of a reply or a forward, in their users' languages
PREFIXES = ["Re: ", "RE: ", "Aw: ", "Fwd: ", "Re: Re: ", "SV:", "TR: ", "RV: ", "Odp: ", "R: "]
PREFIXES += ["Antw: ", "YNT: ", "ΑΠ: ", "回复：", "回复: ", "转发: ", "Ｒｅ：", "Re[2]: ", "VS: "]


@given(our_subjects(), st.sampled_from(PREFIXES))
def test_no_subject_of_ours_replied_to_is_ever_read(subject: str, prefix: str) -> None:
    assert subjects.ours(subject)
    assert read(prefix + subject) == ([], [])


@given(
    our_subjects(),
    st.sampled_from(["Re: ", "Fwd: "]),
    st.sampled_from([" [SPAM]", " (fwd)", " [ext] (2)", " [***SPAM*** 7.1]"]),
)
def test_a_tag_after_a_subject_of_ours_changes_nothing(subject: str, prefix: str, tag: str) -> None:
    """'Re: Polis Board 101 bob [SPAM]' ran as a move with '[SPAM]' as its password (a
    filter that tags every mail cost the player a failed login a mail)."""
    assert read(prefix + subject + tag) == ([], [])


@given(
    st.sampled_from(["alice", "bob-2", "x"]),
    st.text(string.ascii_letters + string.digits + "-!", min_size=1, max_size=16),
    st.sampled_from(["a7-a6", "e4-e3#8", "swap", "resign"]),
)
def test_a_move_in_a_reply_subject_still_runs(userid: str, password: str, move: str) -> None:
    line = f"polis move 101 {userid} {password} {move}"
    for prefix in ("Re: ", "回复：", "Odp: ", "Ｒｅ： "):
        assert subject_command(prefix + line, command_words()) == line


@pytest.mark.parametrize("word", ["Read:", "Rex:", "Board:", "polis", "r", "回:"])
def test_only_known_prefixes_are_dropped(word: str) -> None:
    assert not subjects.is_reply_prefix(word)
    assert subjects.without_reply_prefixes(f"{word} x") == f"{word} x"


def test_the_builders_write_what_is_recognised() -> None:
    made = [
        subjects.board("Ploy", 101),
        subjects.board("Ploy", 101, "alice"),
        subjects.game("Ploy", "subscribe all"),
        subjects.server("change address"),
        subjects.tournament("spring", "final standings"),
        subjects.error(subjects.board("Ploy", 101)),
        subjects.help_about("pbmserv"),
        subjects.answers(2, 1),
        subjects.answers(2, 0),
        subjects.PASSWORD_RESET(server="My PBM Server"),
    ]
    assert made[:2] == ["Ploy Board 101", "Ploy Board 101 alice"]
    assert all(subjects.ours(s) for s in made), [s for s in made if not subjects.ours(s)]
    assert not subjects.ours(subjects.CONFIRM(code="K7QX")), "a reply to a code mail confirms"


# the calls that hand a subject to a mail, and where the subject stands in them
SUBJECT_ARGUMENT = {"answer": 1, "Answer": 0, "mail_users": 2, "text_mail": 2, "queue_mail": 2}


def test_every_subject_we_mail_is_built_by_a_shape() -> None:
    """A subject written as a literal or an f-string at the call that mails it could drift from
    the shapes that :func:`pbmserv.render.subjects.ours` recognises (the shell's and the web's
    answers are never mailed)."""
    offences = []
    for path in sorted((ROOT / "pbmserv").rglob("*.py")):
        if path.parts[-2] in ("cli", "web"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            args = list(node.args)
            if name in SUBJECT_ARGUMENT and len(args) > SUBJECT_ARGUMENT[name]:
                args = [args[SUBJECT_ARGUMENT[name]]]
            else:
                args = []
            args += [k.value for k in node.keywords if k.arg == "subject"]
            for arg in args:
                if isinstance(arg, (ast.JoinedStr, ast.Constant, ast.BinOp)):
                    offences.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offences == []

"""The shell prints the answers a mail would get, in the shell's own words: a shell user runs
lines ("Run this line", "Run 'pbmserv help'"), he sends back no mail.  The mails to the other
players that the shell queues keep the mail's words, as the answers by mail do."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_shell import pbmserv

from pbmserv.store.models import Outbox

# what only a mail's reader is asked to do
MAIL_WORDS = re.compile(
    r"send back|Send '|, send:|send the line|reply to this mail|mail you|this mail\b|your mail\b",
    re.IGNORECASE,
)
SESSION = [
    "pbmserv signup alice secret1 alice@example.org",
    "pbmserv signup bob secret2 bob@example.org",
    "pbmserv signup carol secret3 carol@example.org",
    "polis challenge alice bob",
    "polis move 101 alice secret1 a7-a6",
    "polis move 101 alice secret1 propose",  # bob, to move, has a proposal to answer
    "polis show 101",
    "polis move 101 alice wrongpw a6-a5",  # wrong password: how to reset it
    "polis move 101 bob secret2 b2-b3",
    "polis move 101 bob secret2 c2-c3",  # out of turn: how to queue it
    "pylon challenge alice bob -size=5",
    "pylon move 101 alice secret1 c3",  # bob may swap (pie rule)
    "pbmserv robot add polibot --game polis",
    "polis challenge alice polibot",
    "polis move 102 alice secret1 a7-a6",  # the robot answers; alice's lines follow
    "pbmserv help move",
    "pbmserv help bogus",
    "pylon help",
    "pbmserv list",
    "polis games alice",
    "polis history 101",
    "polis showas 101 alice",
    "pbmserv all show alice",
    "polis",
    "pbmserv nosuch",
]


def _output(done) -> str:  # type: ignore[no-untyped-def]
    return done.stdout + done.stderr


@pytest.mark.slow
def test_a_shell_session_prints_no_mail_words(tmp_path: Path):
    data = tmp_path / "data"
    said: dict[str, str] = {}
    for line in SESSION:
        script, *words = line.split()
        said[line] = _output(pbmserv(*words, data=data, script=script))
    for line, text in said.items():
        found = MAIL_WORDS.findall(text)
        assert found == [], (line, found, text)
    assert "Your move. Run this line, with your password and your move:" in said["polis show 101"]
    assert (
        "To accept or reject it, run one of these lines"
        in said["polis move 101 alice secret1 propose"]
    )
    assert (
        "run the line\n  pbmserv password reset alice\n"
        in said["polis move 101 alice wrongpw a6-a5"]
    )
    assert (
        "when your turn comes, run:\n  polis queue 101 bob"
        in said["polis move 101 bob secret2 c2-c3"]
    )
    assert (
        "Run 'pbmserv help' for the list" in said["pbmserv signup alice secret1 alice@example.org"]
    )
    assert "Run 'pbmserv help' for the accounts" in said["pylon help"]
    assert "Or swap (pie rule" in said["pylon move 101 alice secret1 c3"]
    server = _output(pbmserv("help", data=data))
    assert "Run command lines in a shell" in server
    assert "The answer ends with the lines to run" in server


def test_the_mails_a_shell_queues_keep_the_mail_words(shell, sessions):
    """A shell's move mails the other players their board: 'Send back this line', as ever."""
    shell.signup("alice", "bob")
    answer = shell.ok("polis challenge alice bob")
    assert "Your move. Run this line" in answer.body
    with sessions() as s:
        bodies = [m.body for m in s.query(Outbox).all()]
    assert any("Your move. Send back this line" in body for body in bodies), bodies
    assert not any("Run this line" in body for body in bodies)
    mailed = shell("polis show 101", channel="mail", sender="alice@example.org")
    assert "Your move. Send back this line" in mailed.body


def test_submit_reset_and_a_wrong_move_number_are_told_in_the_shell_words(shell):
    """'submit', 'password reset' and a move's #N ahead of the board told a shell user to
    'send' a line ('To play it send:', 'Then send', 'then send your move with #1'); the shell
    runs it, and the mail keeps its words (a wrong #N is said in words fit for both)."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    ahead = shell("polis move 101 alice pw-alice a7-a6#9").body
    submitted = shell.ok("polis submit 101 alice pw-alice a7-a6").body
    reset = shell.ok("password reset alice").body
    for text in (ahead, submitted, reset):
        assert MAIL_WORDS.findall(text) == [] and "send" not in text, text
    assert "then end your move with #1)" in " ".join(ahead.split())
    assert "To play it run: polis confirm 101 alice PASSWORD\n" in submitted
    assert "Then run\n  pbmserv password new alice CODE NEWPASSWORD\n" in reset
    mailed = shell("password reset alice", channel="mail", sender="alice@example.org").body
    assert "Then send\n  password new alice CODE NEWPASSWORD\n" in mailed
    mailed = shell("polis submit 101 alice pw-alice a7-a6", channel="mail").body
    assert "To play it send: polis confirm 101 alice PASSWORD\n" in mailed


def test_a_first_confirmation_in_the_shell_welcomes_in_the_shell_words(shell):
    """erin signed up by mail and confirms her code in the shell: the welcome told her to
    "Send 'list'" and 'help'; the shell runs 'pbmserv list' and 'pbmserv help'."""
    from test_codes import mail, mails_to

    mail(shell, "erin@example.org", "signup erin pw-erin-1")
    code = mails_to(shell, "erin@example.org")[-1].body.split("confirm ")[1].split()[0]
    done = " ".join(shell.ok(f"confirm {code}").body.split())
    assert "Welcome, erin: you can play now. Run 'pbmserv list' for the games" in done
    assert "and 'pbmserv help' for every command." in done
    assert MAIL_WORDS.findall(done) == [], done

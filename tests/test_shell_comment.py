"""A comment from the shell: what a mail writes below its command lines is ``-m TEXT`` (or
``--comment TEXT``) on a shell's line, masked for passwords as a mail's comment is."""

from __future__ import annotations


def _mails_to(shell, address: str) -> str:
    return "\n".join(m.body for m in shell.outbox() if m.recipient == address)


def test_a_move_from_the_shell_carries_a_comment(shell, operator):
    """'polis move 101 alice PW a7-a6 hi' was "illegal move 'a7-a6hi'": the shell had no way
    to send the comment a mail writes below its lines.  -m TEXT is it; the other players read
    it under the board, the password in it masked however it is spelt."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    said = "Your move, bob. (My password is PW-ALICE, do not tell.)"
    status, out, err = operator("polis", "move", "101", "alice", "pw-alice", "a7-a6", "-m", said)
    assert status == 0, err
    assert "1. a7-a6" in out and "alice writes:\n\nYour move, bob. (My password is ********," in out
    mailed = _mails_to(shell, "bob@example.org")
    assert "alice writes:\n\nYour move, bob. (My password is ********, do not tell.)" in mailed
    assert "pw-alice" not in (mailed + out).lower()
    # a second line, and the password from the environment, masked too
    status, out, err = operator(
        "pbmserv", "polis", "move", "101", "bob", "pw-bob", "b2-b3", "--comment=Thanks.",
        "--comment", "pw-bob is mine",
    )  # fmt: skip
    assert status == 0, err
    assert "bob writes:\n\nThanks.\n******** is mine\n" in _mails_to(shell, "alice@example.org")


def test_the_password_the_environment_gives_is_masked_in_the_comment(shell, operator, monkeypatch):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    monkeypatch.setenv("PBMSERV_PASSWORD", "pw-alice")
    status, _, err = operator("polis", "move", "101", "alice", "-m", "a7-a6 is pw-alice's", "a7-a6")
    assert status == 0, err
    mailed = _mails_to(shell, "bob@example.org")
    assert "1. a7-a6" in mailed and "alice writes:\n\na7-a6 is ********'s\n" in mailed


def test_every_command_that_carries_a_comment_takes_it_from_the_shell(shell, operator):
    """Resignations, queued moves and proposals read the comment as a move does."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice a7-a6")
    status, out, _ = operator("polis", "queue", "101", "alice", "pw-alice", "b7-b6", "-m", "Ha")
    assert status == 0 and "Your comment waits with it" in out
    status, out, _ = operator("polis", "move", "101", "bob", "pw-bob", "propose", "-m", "Peace?")
    assert status == 0 and "bob writes:\n\nPeace?" in _mails_to(shell, "alice@example.org")
    status, out, _ = operator("polis", "resign", "101", "bob", "pw-bob", "-m", "Well played.")
    assert status == 0, out
    assert "bob writes:\n\nWell played." in _mails_to(shell, "alice@example.org")


def test_a_comment_option_without_its_text_is_a_usage_error(shell, operator):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    status, _, err = operator("polis", "move", "101", "alice", "pw-alice", "a7-a6", "-m")
    assert status == 2 and "a comment option needs its text after it" in err
    status, out, _ = operator("polis", "move", "--help")
    assert "-m TEXT" in out and "a comment the others read under the board" in out
    status, out, _ = operator("--help")
    assert "is -m TEXT (or --comment TEXT) among the words" in " ".join(out.split())


def test_by_mail_the_comment_is_the_mails_text(shell):
    """The option is the shell's: a mail's line is read as before (its text is the
    comment), so no word of it changes meaning."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    refused = shell(
        "polis move 101 alice pw-alice a7-a6 -m hi", channel="mail", sender="alice@example.org"
    )
    assert refused.status == 1 and "a7-a6-mhi" in refused.body

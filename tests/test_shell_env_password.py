"""PBMSERV_PASSWORD in a shell: it stands for the password of a line, and a line that gives
the password all the same (typed, or the ``PASSWORD`` of the lines our mails give) means
what it says; a shell's line never has words silently dropped."""

from __future__ import annotations


def test_the_line_a_board_mail_gives_works_with_the_password_from_the_environment(
    shell, operator, monkeypatch
):
    """With PBMSERV_PASSWORD set, the line the answer ends with ('polis move 101 alice
    PASSWORD <move>#1') was "illegal move 'PASSWORDa7-a6#1'", and the password typed as
    well was echoed in "illegal move 'pw-alicea7-a6'"."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    monkeypatch.setenv("PBMSERV_PASSWORD", "pw-alice")
    status, out, err = operator("polis", "move", "101", "alice", "PASSWORD", "a7-a6#1")
    assert status == 0, err
    assert "1. a7-a6" in out
    monkeypatch.setenv("PBMSERV_PASSWORD", "pw-bob")
    status, out, err = operator("polis", "move", "101", "bob", "pw-bob", "a2-a3")
    assert status == 0, err
    assert "2. a2-a3" in out and "pw-bob" not in out + err


def test_a_password_changed_with_the_old_one_in_the_environment(shell, operator, monkeypatch):
    """'change password alice OLD NEW' with PBMSERV_PASSWORD=OLD answered 'The password of
    alice is changed.' and set it to OLD (NEW was dropped): alice was then refused NEW."""
    shell.signup("alice")
    monkeypatch.setenv("PBMSERV_PASSWORD", "pw-alice")
    status, out, err = operator("change", "password", "alice", "pw-alice", "new-secret")
    assert status == 0 and "is changed" in out, err
    shell.ok("change password alice new-secret newer-secret")  # NEW is the password now


def test_words_left_over_on_a_shell_line_do_nothing(shell, operator, monkeypatch):
    """Words after a command's arguments were dropped: 'polis resign 101 alice PW --coment
    "Well played"' (a misspelt comment option) resigned without the comment, and 'change
    password alice OLD NEW' with PBMSERV_PASSWORD set to another password set it to OLD.
    Such a line is now a usage error (exit 2) that changes nothing."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice a7-a6")
    status, _, err = operator("polis", "resign", "101", "bob", "pw-bob", "--coment", "Bye")
    assert status == 2 and "is more than the command takes" in err, err
    assert "nothing was done" in err and "polis resign [OPTIONS] BOARD" in err
    assert shell.mover("polis") == "bob"  # not resigned
    monkeypatch.setenv("PBMSERV_PASSWORD", "pw-bob")
    status, out, err = operator("change", "password", "bob", "old-one", "new-one")
    assert status == 2 and "leave it out of the line" in err, out + err
    shell.ok("change password bob pw-bob pw-bob2")  # unchanged until now
    # by mail a line may run on into prose, as before
    mailed = shell.ok(
        "polis resign 101 bob pw-bob2 as agreed", channel="mail", sender="bob@example.org"
    )
    assert "bob declined the game" in mailed.body
    status, out, err = operator("help", "polis", "move")  # help changes nothing: as before
    assert status == 0 and "Commands for polis" in out, err

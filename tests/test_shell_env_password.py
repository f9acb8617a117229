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

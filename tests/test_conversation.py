"""A mail conversation a player can follow: the line to send back, numbered moves, one answer
per mail, commands below quotes, and the cosmetics of board headers (issue 17)."""

from __future__ import annotations


def _last_mail_to(shell, address):
    return [m for m in shell.outbox() if m.recipient == address][-1]


def test_board_mail_to_the_player_to_move_ends_with_the_line_to_send(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob", channel="mail", sender="alice@example.org")
    new = _last_mail_to(shell, "bob@example.org")
    assert "polis move 101" not in new.body  # alice moves first: bob is not told to move
    answer = shell.ok(
        "polis move 101 alice pw-alice d7-e6", channel="mail", sender="alice@example.org"
    )
    assert "PASSWORD" not in answer.body  # alice is not to move
    mail = _last_mail_to(shell, "bob@example.org")
    assert mail.body.endswith("  polis move 101 bob PASSWORD <move>#2\n")
    assert "  1. d7-e6" in mail.body
    # the number the line shows is the one the server expects
    shell.ok("polis move 101 bob pw-bob b2-c3#2")
    refused = shell("polis move 101 alice pw-alice e7-f6#2")
    assert refused.status == 1 and "this would be move 3, not move 2" in refused.body
    mail = _last_mail_to(shell, "alice@example.org")
    assert "  1. d7-e6      2. b2-c3" in mail.body
    assert mail.body.endswith("  polis move 101 alice PASSWORD <move>#3\n")


def test_the_shell_answer_shows_the_line_for_the_player_to_move(shell):
    shell.signup("alice", "bob")
    new = shell.ok("polis challenge alice bob")
    assert new.body.endswith("  polis move 101 alice PASSWORD <move>#1\n")
    shown = shell.ok("polis show 101")
    assert shown.body.endswith("  polis move 101 alice PASSWORD <move>#1\n")
    old = shell.ok("polis move 101 alice pw-alice d7-e6")
    assert old.body.endswith("  polis move 101 bob PASSWORD <move>#2\n")
    assert "PASSWORD" not in shell.ok("polis show 101#0").body  # a past position: no line


def test_long_player_names_are_never_cut(shell):
    shell.signup("carol", "dave", "player16", "spammer")
    shell.ok("ploy challenge carol dave player16 spammer")
    body = shell.ok("ploy show 101").body
    header = body[body.index("turn.") :].splitlines()[2:4]
    for name in ("carol", "dave", "player16", "spammer"):
        assert name in header[0]
    assert header[1].split() == ["(green)", "(red)", "(yellow)", "(blue)"]
    for line in body.splitlines():
        assert len(line) <= 76, line

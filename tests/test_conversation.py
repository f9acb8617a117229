"""A mail conversation a player can follow: the line to send back, numbered moves, one answer
per mail, commands below quotes, and the cosmetics of board headers (issue 17)."""

from __future__ import annotations


def _last_mail_to(shell, address):
    return [m for m in shell.outbox() if m.recipient == address][-1]


def test_board_mail_to_the_player_to_move_ends_with_the_line_to_send(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")  # by mail it waits for confirmation (test_abuse)
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
    assert refused.body.endswith("  polis move 101 alice PASSWORD <move>#3\n")  # try again
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


def test_a_mailed_show_has_the_line_only_for_the_player_to_move_by_his_address(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    line = "  polis move 101 alice PASSWORD <move>#1\n"
    mine = shell.ok("polis show 101", channel="mail", sender="Alice@Example.org")
    assert mine.body.endswith(line)  # alice is to move, and the address is hers
    theirs = shell.ok("polis show 101", channel="mail", sender="bob@example.org")
    assert "PASSWORD" not in theirs.body
    stranger = shell.ok("polis show 101", channel="mail", sender="eve@example.org")
    assert "PASSWORD" not in stranger.body


def test_long_player_names_are_never_cut(shell):
    shell.signup("carol", "dave", "player16", "spammer")
    shell.ok("ploy challenge carol dave player16 spammer")
    body = shell.ok("ploy show 101").body
    header = body[body.index("To move:") :].splitlines()[2:4]
    for name in ("carol", "dave", "player16", "spammer"):
        assert name in header[0]
    assert header[1].split() == ["(green)", "(red)", "(yellow)", "(blue)"]
    for line in body.splitlines():
        assert len(line) <= 76, line


# --------------------------------------------------------------------------- one answer per mail


def _mail(shell, settings, sessions, clock, sender, subject, body, n=[0]):  # noqa: B006
    from pbmserv.mail import inbox
    from pbmserv.mail.worker import process_next

    n[0] += 1
    raw = (
        (
            f"From: {sender}\r\nTo: pbmserv@example.org\r\nSubject: {subject}\r\n"
            f"Message-ID: <c{n[0]}@example.org>\r\n\r\n{body}"
        )
        .replace("\n", "\r\n")
        .replace("\r\r\n", "\r\n")
        .encode()
    )
    before = len(shell.outbox())
    inbox.store(sessions, raw, sender, ["pbmserv@example.org"], clock.now)
    while process_next(sessions, settings, lambda: clock.now) is not None:
        pass
    return shell.outbox()[before:]


def test_one_mail_many_commands_gets_one_answer(shell, settings, sessions, clock):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    body = (
        "polis move 101 alice pw-alice d7-e6\n"
        "polis show 101\n"
        "polis move 101 alice pw-alice a1-a2\n"
        "\nGood luck!\n"
        "plois shwo 102\n"
    )
    out = _mail(shell, settings, sessions, clock, "alice@example.org", "moves", body)
    answers = [m for m in out if m.recipient == "alice@example.org"]
    assert len(answers) == 1
    answer = answers[0]
    assert answer.subject == "pbmserv: answers to 3 commands (1 refused)"
    text = answer.body
    assert "pw-alice" not in text
    for k, line in enumerate(
        ["polis move 101 alice ******** d7-e6", "polis show 101", "polis move 101 alice"], 1
    ):
        assert f"\n{k}. {line}" in text
    assert text.count("Summary of Polis Board 101") == 1  # the board drawn once, at the end
    assert "(Polis board 101 is drawn under command 3.)" in text
    assert "Error: " in text and "To move: bob (red)." in text
    assert text.index("Lines not understood") > text.index("3. polis move")
    assert "  plois shwo 102\n" in text
    # the opponent gets the board mail with the comment, without the mistyped line
    to_bob = [m for m in out if m.recipient == "bob@example.org"]
    assert len(to_bob) == 1 and "Good luck!" in to_bob[0].body
    assert "plois" not in to_bob[0].body


def test_a_reply_with_the_command_below_the_quote(shell, settings, sessions, clock):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    body = (
        "On Mon, 23 Nov 2026, pbmserv <pbmserv@example.org> wrote:\n"
        "> Summary of Polis Board 101\n"
        "> polis move 101 alice PASSWORD <move>#1\n"
        "\n"
        "polis move 101 alice pw-alice d7-e6#1\n"
        "Your turn!\n"
        "-- \n"
        "polis move 101 alice pw-alice a7-a6\n"
    )
    out = _mail(
        shell, settings, sessions, clock, "alice@example.org", "Re: Polis Board 101 alice", body
    )
    answer = [m for m in out if m.recipient == "alice@example.org"]
    assert len(answer) == 1 and answer[0].subject == "Polis Board 101 bob", answer[0].body
    to_bob = [m for m in out if m.recipient == "bob@example.org"][0]
    assert "Your turn!" in to_bob.body and "  1. d7-e6" in to_bob.body
    assert to_bob.body.endswith("polis move 101 bob PASSWORD <move>#2\n")


def test_only_mistyped_lines_are_reported(shell, settings, sessions, clock):
    shell.signup("alice")
    out = _mail(shell, settings, sessions, clock, "alice@example.org", "hello", "plois shwo 102\n")
    assert len(out) == 1 and out[0].subject == "pbmserv Error"
    assert "no command found" in out[0].body and "  plois shwo 102\n" in out[0].body


def test_a_reply_with_the_move_alone_gets_the_line_to_send(shell, settings, sessions, clock):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    out = _mail(
        shell,
        settings,
        sessions,
        clock,
        "alice@example.org",
        "Re: Polis Board 101 alice",
        "a7-a6\n",
    )
    assert len(out) == 1 and out[0].subject == "pbmserv Error"
    assert "no command found" in out[0].body
    assert "Your subject names Polis board 101. To move there" in out[0].body
    assert "\n  polis move 101 alice PASSWORD <move>\n" in out[0].body
    # a subject that names no board of ours gets no such line
    other = _mail(
        shell, settings, sessions, clock, "alice@example.org", "Re: Chess Board 5", "e4\n"
    )
    assert "Your subject names" not in other[0].body


def test_an_html_mail_is_not_called_unprocessed(shell, settings, sessions, clock):
    from pbmserv.mail import inbox
    from pbmserv.mail.worker import process_next

    shell.signup("alice")
    raw = (
        b"From: alice@example.org\r\nTo: pbmserv@example.org\r\nSubject: hi\r\n"
        b"Message-ID: <html1@example.org>\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
        b"<p>help</p><p>thanks</p>\r\n"
    )
    inbox.store(sessions, raw, "alice@example.org", ["pbmserv@example.org"], clock.now)
    while process_next(sessions, settings, lambda: clock.now) is not None:
        pass
    answer = shell.outbox()[-1]
    assert "Not processed" not in answer.body and "Ignored" not in answer.body
    assert "Notes on reading your mail:\n  HTML part converted to text\n" in answer.body


def test_common_words_start_a_command_only_as_one():
    from pbmserv.commands.grammar import command_words
    from pbmserv.mail.lines import read_body
    from pbmserv.mail.parse import declared_verbs

    body = read_body("All the best!\nall show alice\n", command_words(), declared_verbs())
    assert body.commands == ["all show alice"] and body.comment == "All the best!"

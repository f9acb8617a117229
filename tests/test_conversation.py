"""A mail conversation a player can follow: the line to send back, numbered moves, one answer
per mail, commands below quotes, and the cosmetics of board headers (issue 17)."""

from __future__ import annotations

from email.utils import format_datetime


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
            f"Date: {format_datetime(clock.now)}\r\n"
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
    # one "Last move:" line, the clock's: the board names the move it shows as the previous
    assert to_bob.body.count("Last move:") == 1 and "\nPrevious move: d7-e6.\n" in to_bob.body
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
    # in any language, and an answer's topic word is no userid
    for subject in ("回复: Polis Board 101 queue", "TR: Polis Board 101 Preview"):
        out = _mail(shell, settings, sessions, clock, "alice@example.org", subject, "a7-a6\n")
        assert "\n  polis move 101 USERID PASSWORD <move>\n" in out[0].body, subject
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
        + f"Date: {format_datetime(clock.now)}\r\n".encode()
        + b"Message-ID: <html1@example.org>\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
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


# --------------------------------------------------------------------------- proposals, swap


ANSWER = "To accept or reject it, send back one of these lines, with your password:\n"
STATUS = (
    "It passes when every player still in the game accepts it; a reject or any\nmove closes it.\n"
)


def test_a_draw_offer_carries_its_comment_and_the_lines_to_answer_it(shell):
    shell.signup("alice", "bob")
    shell.ok("ploy challenge alice bob")
    shell.ok("ploy move 101 alice pw-alice f1+4", comment="Good luck!")
    mine = shell.ok(
        "ploy move 101 bob pw-bob propose",
        channel="mail",
        sender="bob@example.org",
        comment="How about a draw?",
    )
    assert "accept#" not in mine.body and mine.body.endswith("PASSWORD <move>#2\n")  # his turn
    assert "Accepted: bob. Still to answer: alice." in mine.body  # the proposer's status
    mail = _last_mail_to(shell, "alice@example.org")
    assert "Proposal #1: bob proposes a draw." in mail.body
    assert "bob writes:\n\nHow about a draw?\n" in mail.body
    assert "Good luck!" not in mail.body  # the move's comment was read with the move
    assert mail.body.endswith(
        "\nProposal #1 is open: a draw.\nAccepted: bob. Still to answer: alice.\n"
        + STATUS
        + ANSWER
        + "  ploy move 101 alice PASSWORD accept#1\n  ploy move 101 alice PASSWORD reject#1\n"
    )
    shown = shell.ok("ploy show 101", channel="mail", sender="alice@example.org")
    assert shown.body.endswith("  ploy move 101 alice PASSWORD reject#1\n")  # still open
    rejected = shell.ok("ploy move 101 alice pw-alice reject#1", comment="No thanks, I am winning.")
    mail = _last_mail_to(shell, "bob@example.org")
    assert "alice rejects proposal #1: a draw. It is closed." in mail.body
    assert "alice writes:\n\nNo thanks, I am winning.\n" in mail.body
    assert "accept" not in mail.body and mail.body.endswith(
        "  ploy move 101 bob PASSWORD <move>#2\n"
    )
    assert "accept" not in rejected.body


def test_a_player_to_move_may_answer_a_proposal_or_move(shell):
    shell.signup("alice", "bob")
    shell.ok("ploy challenge alice bob")
    shell.ok("ploy move 101 alice pw-alice f1+4")
    shell.ok("ploy move 101 alice pw-alice undo")
    mail = _last_mail_to(shell, "bob@example.org")
    assert mail.body.endswith(
        "\nProposal #1 is open: to take back move 1 (f1+4, alice).\n"
        "Accepted: alice. Still to answer: bob.\n"
        + STATUS
        + ANSWER
        + "  ploy move 101 bob PASSWORD accept#1\n  ploy move 101 bob PASSWORD reject#1\n"
        "\nYour move. Send back this line, with your password and your move:\n"
        "  ploy move 101 bob PASSWORD <move>#2\n"
    )
    done = shell.ok("ploy move 101 bob pw-bob accept#1", comment="Take it back, then.")
    assert "bob accepts proposal #1. Move 1 (f1+4, alice) is taken back." in done.body
    mail = _last_mail_to(shell, "alice@example.org")
    assert "bob writes:\n\nTake it back, then.\n" in mail.body
    assert mail.body.endswith("  ploy move 101 alice PASSWORD <move>#1\n")


def test_a_decline_carries_its_comment(shell):
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob carol")
    shell.ok("nim resign 101 carol pw-carol", comment="Sorry, no time this month.")
    mail = _last_mail_to(shell, "alice@example.org")
    assert "carol declined the game; it restarts" in mail.body
    assert "carol writes:\n\nSorry, no time this month.\n" in mail.body
    shell.ok("nim resign 101 bob pw-bob", comment="Me neither.")
    mail = _last_mail_to(shell, "alice@example.org")
    assert "bob declined the game, so it is removed (" in mail.body
    assert "bob writes:\n\nMe neither.\n" in mail.body


def test_the_second_player_is_told_that_he_may_swap(shell):
    shell.signup("alice", "bob", "carol")
    shell.ok("pylon challenge alice bob")
    shell.ok("pylon move 101 alice pw-alice e5")
    mail = _last_mail_to(shell, "bob@example.org")
    assert mail.body.endswith(
        "  pylon move 101 bob PASSWORD <move>#2\n"
        "Or swap (pie rule, this move only): you take over o, alice moves next as x:\n"
        "  pylon move 101 bob PASSWORD swap#2\n"
    )
    shell.ok("pylon move 101 bob pw-bob swap#2")  # the line works
    assert "swap#" not in _last_mail_to(shell, "alice@example.org").body
    # where the pie rule applies: Polis, Ploy and Plotto with -swap (two players), Pylon always
    for line, number, first, swap in [
        ("polis challenge alice bob -swap", 101, "d7-e6", True),
        ("polis challenge alice bob", 102, "d7-e6", False),
        ("ploy challenge alice bob -swap", 101, "f1+4", True),
        ("plotto challenge alice bob -swap", 101, "a3", True),
        ("pylon challenge alice bob carol", 102, "e5", False),
    ]:
        game = line.split()[0]
        shell.ok(line)
        shell.ok(f"{game} move {number} alice pw-alice {first}")
        body = _last_mail_to(shell, "bob@example.org").body
        assert body.endswith(f"  {game} move {number} bob PASSWORD <move>#2\n") != swap, line
        assert (f"  {game} move {number} bob PASSWORD swap#2\n" in body) == swap, line


# --------------------------------------------------------------------------- preview


def said(text: str) -> str:
    """An answer's words with its line breaks as spaces (our lines are wrapped to 78)."""
    return " ".join(text.split())


def test_a_preview_out_of_turn_says_whose_move_it_is(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    bob = {"channel": "mail", "sender": "bob@example.org"}
    refused = shell("polis preview 101 h2-g3", **bob)  # bob plays red; blue is to move
    assert refused.status == 1 and "no piece of yours" not in refused.body
    assert (
        "preview stops at 'h2-g3': it is blue's (alice's) move in this position, not yours; "
        "a preview shows the position after the move of the player to move (put blue's move "
        "first to see yours after it)"
    ) in said(refused.body)
    assert "The board is unchanged" not in refused.body  # (a preview never changes it)
    assert "The position where the preview stopped (a preview changes nothing):" in refused.body
    shown = shell.ok("polis preview 101 d7-e6 h2-g3", **bob)  # so
    assert "1. d7-e6 2. h2-g3 It is blue's (alice's) move in this position" in said(shown.body)
    # the shell is nobody in particular: the answer says for whom the move was judged
    assert (
        "preview stops at 'h2-g3': it is blue's (alice's) move in this position (a preview "
        "plays its moves in turn, from the player to move), and for blue: no piece of yours "
        "on h2"
    ) in said(shell("polis preview 101 h2-g3").body)
    # every game: Ploy refuses red's move on green's turn; a Pylon placement is anyone's move
    shell.ok("ploy challenge alice bob")
    ploy = shell("ploy preview 101 e8-e6", **bob)
    assert "it is green's (alice's) move in this position, not yours;" in said(ploy.body)
    shell.ok("pylon challenge alice bob")
    pylon = shell.ok("pylon preview 101 e5", **bob)
    assert (
        "It is o's (alice's) move in this position: the first move is played for o, the "
        "others in turn."
    ) in " ".join(pylon.body.split())
    alice = shell.ok("pylon preview 101 e5", channel="mail", sender="alice@example.org")
    assert "It is o's" not in alice.body


def test_a_reply_to_our_answer_runs_only_its_body(shell, settings, sessions, clock):
    shell.signup("bob")
    asked = _mail(shell, settings, sessions, clock, "bob@example.org", "password reset bob", "")
    reset = [m for m in asked if "password new bob CODE" not in m.body][-1]  # (not the answer)
    code = reset.body.split("password new bob ")[1].split()[0]
    body = f"password new bob {code} Zq8-echo-new\n\n> {reset.body.splitlines()[0]}\n"
    out = _mail(
        shell, settings, sessions, clock, "bob@example.org", "Re: pbmserv password reset", body
    )
    assert [m.subject for m in out] == ["pbmserv password new"], out[0].body
    assert "The password of bob is changed." in out[0].body
    # a reply to an answer with nothing of its own: no command, and it says why
    again = _mail(shell, settings, sessions, clock, "bob@example.org", "Re: List of Ploy games", "")
    assert [m.subject for m in again] == ["pbmserv Error"]
    assert "unknown game" not in again[0].body
    assert "Your subject is that of one of our mails" in again[0].body


def test_a_refusal_quotes_the_mail_only_when_it_has_text(shell):
    """A mail whose Subject is its one command line and whose body is empty (the usual mail)
    had its refusal end in "Your mail (Subject: ...):" over nothing, the command a second time
    and no quote, as if the answer were cut off.  It ends with the command; a mail with text
    still has it quoted."""
    from test_codes import mail

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mail(shell, "alice@example.org", "polis move 101 alice pw-alice a1-a2")
    refusal = _last_mail_to(shell, "alice@example.org")
    assert refusal.subject == "Polis Board 101 Error"
    assert refusal.body.endswith("Your command was:\n  polis move 101 alice ******** a1-a2\n")
    assert "Your mail" not in refusal.body
    mail(shell, "alice@example.org", "polis move 101 alice pw-alice a1-a2", "Hm, and now?")
    refusal = _last_mail_to(shell, "alice@example.org")
    assert refusal.body.endswith(
        "\n\nYour mail (Subject: polis move 101 alice ******** a1-a2):\n> Hm, and now?\n"
    )


def test_a_game_command_without_its_game_says_to_write_the_game_first(shell):
    """A newcomer writes 'move 101 ...' or 'games alice' (the help shows GAME move, GAME
    games): he was told "no command found", or saw the line listed as not understood, and
    not why.  The answer names the command word and says to write the game's name first."""
    from test_codes import mail

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    from pbmserv.games import all_games

    names = [g.name for g in all_games()]  # (the tests' own game too)
    hint = (
        f"'{{verb}}' is a command of each game: write the game's name before it, as in "
        f"'{names[0]} {{verb}} ...' (the games: {', '.join(names)})."
    )
    for subject, body, verb in [
        ("move 101 alice pw-alice a7-a6", "", "move"),
        ("games alice", "", "games"),
        ("Hello", "show 101 alice pw-alice", "show"),  # (not understood, and no command)
        ("polis show 101", "move 101 alice pw-alice a7-a6", "move"),  # and one that runs
    ]:
        mail(shell, "alice@example.org", subject, body)
        answer = _last_mail_to(shell, "alice@example.org")
        assert hint.format(verb=verb) in " ".join(answer.body.split()), answer.body
        assert answer.body.count("is a command of each game") == 1
        assert "pw-alice" not in answer.body
    assert "Summary of Polis Board 101" in answer.body  # (the line that runs ran)
    mail(shell, "alice@example.org", "Hello", "Let us move on")
    assert "is a command of each game" not in _last_mail_to(shell, "alice@example.org").body


def test_a_chat_mail_says_how_to_chat_back(shell):
    """bob chats on a board; alice replies to his chat mail with her text alone, as to any
    mail.  The chat mail gave no line to answer with (a message does), and her reply was told
    how to move.  The chat mail now ends with her own chat line, the answer to a reply names
    it, and the line with her text below it reaches bob."""
    from test_codes import mail

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mail(shell, "bob@example.org", "polis chat 101 bob pw-bob", "Good luck!")
    chat = _last_mail_to(shell, "alice@example.org")
    assert chat.subject == "Polis Board 101 Chat"
    assert chat.body.endswith("\n\nAnswer: polis chat 101 alice PASSWORD\n"), chat.body
    assert "Answer:" not in _last_mail_to(shell, "bob@example.org").body  # (his own copy)
    mail(shell, "alice@example.org", f"Re: {chat.subject}", "Thanks, you too!\n\n> Good luck!")
    told = _last_mail_to(shell, "alice@example.org")
    assert "no command found" in told.body and "<move>" not in told.body
    assert "put this line above your text" in told.body
    assert "\n  polis chat 101 USERID PASSWORD\n" in told.body
    mail(
        shell, "alice@example.org", f"Re: {chat.subject}", "polis chat 101 alice pw-alice\nThanks!"
    )
    back = _last_mail_to(shell, "bob@example.org")
    assert "alice writes:\n\nThanks!\n" in back.body
    assert back.body.endswith("\nAnswer: polis chat 101 bob PASSWORD\n")


def test_a_move_out_of_turn_says_how_to_queue_it(shell):
    """bob moves before alice has: he was told whose turn it is, and no more.  The refusal
    now gives the line that queues his move; sent as it stands it is queued and played once
    alice has moved.  Plotto's moves cannot be queued: no such line there."""
    from test_codes import mail

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mail(shell, "bob@example.org", "polis move 101 bob pw-bob b2-b3")
    refusal = _last_mail_to(shell, "bob@example.org")
    assert "it is not your turn: alice is to move" in refusal.body
    assert "To have it played for you when your turn comes, send:\n" in refusal.body
    line = refusal.body.split("when your turn comes, send:\n", 1)[1].split("\n", 1)[0].strip()
    assert line == "polis queue 101 bob PASSWORD b2-b3"
    mail(shell, "bob@example.org", line.replace("PASSWORD", "pw-bob"))
    played = shell.ok("polis move 101 alice pw-alice a7-a6")
    assert "1. a7-a6" in played.body and "2. b2-b3 (Auto)" in played.body, played.body
    shell.ok("plotto challenge alice bob")
    mail(shell, "bob@example.org", "plotto move 101 bob pw-bob a1")
    refusal = _last_mail_to(shell, "bob@example.org")
    assert "it is not your turn" in refusal.body and "queue" not in refusal.body


def test_a_long_comment_is_wrapped_like_the_rest_of_the_mail(shell):
    """A paragraph sent format=flowed (Thunderbird, Apple Mail) is one logical line once
    read, and went on to the other players as a line of hundreds of columns; a comment's
    lines are wrapped at the mail's width now, and lines that fit (a diagram) stay as typed."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    paragraph = " ".join(["Nice opening, I did not expect that move at all"] * 8)
    diagram = "  . x .\n  x o x"
    shell.ok("polis move 101 alice pw-alice a7-a6", comment=f"{paragraph}\n{diagram}")
    mail = _last_mail_to(shell, "bob@example.org").body
    said = mail[mail.index("alice writes:") : mail.rindex("*" * 72)]
    assert max(len(line) for line in said.splitlines()) <= 76, said
    assert " ".join(said.split()).startswith("alice writes: " + paragraph)
    assert "\n" + diagram + "\n" in said

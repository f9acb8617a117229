"""The dispatcher's commands and error paths, on the test game Nim over a real store."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from pbmserv.domain import boards
from pbmserv.store.models import Board, MoveRecord, Outbox


def records(shell, number=101):
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.game == "nim", Board.number == number))
        return [(m.seat, m.text, m.auto) for m in board.moves]


def board_row(shell, number=101):
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.game == "nim", Board.number == number))
        return board.status.value, board.winners, [seat.user.userid for seat in board.seats]


# ----------------------------------------------------------------------------- accounts


def test_signup_rules(shell):
    assert shell("signup alice secret alice@example.org").status == 0
    taken = shell("signup Alice other alice2@example.org")
    assert taken.status == 1 and "taken" in taken.body
    assert "not a valid userid" in shell("signup 9lives secret x@example.org").body
    assert "at least" in shell("signup carol abc carol@example.org").body
    assert "not a mail address" in shell("signup carol secret nowhere").body
    by_mail = shell("signup dave secret", channel="mail", sender="Dave@Example.org")
    assert by_mail.status == 0 and "dave@example.org" in by_mail.body
    assert "secret" not in by_mail.body


def test_change_password_and_address(shell):
    shell.signup("alice")
    wrong = shell("change password alice nope newpass")
    assert wrong.status == 1 and "wrong password" in wrong.body
    shell.ok("change password alice pw-alice newpass")
    assert shell("nim challenge alice alice").status == 1  # (sanity: a player twice is refused)
    assert shell("change address alice pw-alice a@example.org").status == 1
    shell.ok("change address alice newpass a@example.org b@example.org")
    shell.signup("bob")
    shell.ok("nim challenge alice bob")
    recipients = {m.recipient for m in shell.outbox()}
    assert {"a@example.org", "b@example.org", "bob@example.org"} <= recipients


def test_change_address_without_an_address_is_a_usage_error_in_the_shell(shell):
    """The shell has no sender to stand for a missing address: the line must not remove them."""
    shell.signup("alice")
    empty = shell("change address alice pw-alice")
    assert empty.status == 2 and "give the new addresses" in empty.body
    assert "Usage: pbmserv change address" in empty.body
    shell.signup("bob")
    shell.ok("nim challenge alice bob")
    assert "alice@example.org" in {m.recipient for m in shell.outbox()}


def test_passwords_are_case_sensitive(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    assert shell("nim move 101 alice PW-ALICE 1").status == 1
    assert records(shell) == []


def test_signoff(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob -pile=1")
    refused = shell("signoff bob pw-bob")
    assert refused.status == 1 and "Nim 101" in refused.body
    shell.ok("nim move 101 alice pw-alice 1")
    shell.ok("signoff bob pw-bob")
    assert shell("nim challenge alice bob").status == 1
    assert shell("signup bob again bob@example.org").status == 1  # the userid stays reserved


def test_repeated_failures_are_slowed_then_refused(shell, clock):
    shell.signup("alice")
    for _ in range(3):
        assert "wrong password" in shell("change password alice bad newpass").body
    slowed = shell("change password alice bad newpass")
    assert "try again in" in slowed.body
    assert "try again in" in shell("change password alice pw-alice newpass").body  # even right
    for _ in range(5):
        clock.advance(minutes=10)
        shell("change password alice bad newpass")
    locked = shell("change password alice pw-alice newpass")
    assert "refused until" in locked.body
    clock.advance(minutes=61)
    shell.ok("change password alice pw-alice newpass")


def test_failures_from_one_sender_count_across_userids(shell):
    shell.signup("alice", "bob")
    for userid in ("alice", "bob", "alice"):
        shell(f"change password {userid} bad newpass1", channel="mail", sender="evil@example.org")
    again = shell("change password bob pw-bob newpass1", channel="mail", sender="evil@example.org")
    assert "try again in" in again.body
    shell.ok("change password bob pw-bob newpass1", channel="mail", sender="bob@example.org")


# ----------------------------------------------------------------------------- challenge


def test_invalid_challenge_lists_every_reason(shell):
    shell.signup("alice")
    result = shell("nim challenge alice zed -size=3 --nagtime=x --bogus")
    assert result.status == 2  # (a misspelt option or parameter: a usage error)
    for reason in (
        "Invalid challenge",
        "the 2nd userid given names no player",
        "unknown Nim parameter '-size=3'",
        "-pile=N",
        "--nagtime needs a number",
        "unknown option '--bogus'",
    ):
        assert reason in " ".join(result.body.split()), reason  # (lines are wrapped)
    assert shell.outbox() == []


def test_a_misspelt_option_is_a_usage_error_that_names_the_options(shell):
    """'--nagtim=3' was taken for --nagtime (a prefix of it) in silence, and '-nagtime=3'
    (one dash, a game's parameter) was answered with the game's parameters only."""
    shell.signup("alice", "bob", "carol")
    for channel in ("shell", "mail"):
        for word, meant in (("--nagtim=3", "--nagtime"), ("--forfeit=9", "--forfeittime")):
            result = shell(f"plotto challenge alice bob carol {word}", channel=channel)
            said = " ".join(result.body.split())
            assert result.status == (2 if channel == "shell" else 1), said  # nothing created
            assert f"unknown option '{word}' (did you mean {meant}?)" in said, said
            assert "valid options: --nagtime, --forfeittime, --totaltime, --unrated" in said
        one_dash = shell("plotto challenge alice bob carol -nagtime=3", channel=channel)
        said = " ".join(one_dash.body.split())
        assert one_dash.status == (2 if channel == "shell" else 1), said
        assert "unknown Plotto parameter '-nagtime=3'" in said
        assert "an option is written with two dashes (did you mean --nagtime?)" in said
    assert shell.outbox() == []
    shell.ok("plotto challenge alice bob carol --nagtime=3")


def test_a_refused_challenges_usage_counts_the_games_players(shell):
    shell.signup("alice")
    polis = shell("polis challenge alice zed --bogus").body
    ploy = shell("ploy challenge alice zed --bogus").body
    assert "Usage: polis challenge USERID1 USERID2 [-swap] [--OPTION=V]\n" in polis
    assert "Usage: ploy challenge USERID1 USERID2 [USERID3 USERID4] [-partnership]" in ploy
    assert "the 2nd userid given names no player" in " ".join(polis.split())  # (every one)


@pytest.mark.parametrize("game", ["polis", "ploy", "pylon", "plotto"])
def test_one_challenge_usage_everywhere(shell, game):
    """A refused challenge, the challenge's --help and the game's help give one usage, of
    the game's own player counts and parameters; the game's rules agree with it."""
    shell.signup("alice")
    refused = " ".join(shell(f"{game} challenge alice zed --bogus").body.split())
    usage = refused.split("Usage: ", 1)[1].split(" Parameters:")[0]
    words = usage.split()
    assert words[:2] == [game, "challenge"] and words[-1] == "[--OPTION=V]"
    assert "[..]" not in usage and ".." not in words
    helped = " ".join(shell(f"{game} challenge --help").body.split())
    assert f"Usage: pbmserv {game} challenge [OPTIONS] {' '.join(words[2:])}" in helped
    rules = " ".join(shell(f"{game} help").body.split())
    assert usage in rules
    assert f"{game} challenge {' '.join(words[2:4])}" in rules  # (the rules' own lines)
    if game == "polis":
        assert "[USERID3" not in rules


def test_a_challenge_refused_for_its_players_shows_no_usage(shell):
    """Only a line's wrong words call for the usage: a player who takes no challenges, is
    unknown or full, or a sender who is no player, is a refusal of a right line."""
    shell.signup("alice", "bob", "dave")
    shell.ok("reject dave pw-dave")
    for line, why, kw in (
        ("pylon challenge alice dave", "dave does not accept challenges", {}),
        ("pylon challenge alice zed", "the 2nd userid given names no player", {}),
        (
            "pylon challenge alice bob",
            "registered to one of the players",
            {"channel": "mail", "sender": "mallory@example.org"},
        ),
    ):
        refused = shell(line, **kw)
        assert refused.status == 1 and why in refused.body, line
        assert "Usage:" not in refused.body and "Parameters:" not in refused.body, line


def test_a_swap_parameter_where_the_swap_is_always_offered_says_so(shell):
    shell.signup("alice", "bob")
    result = shell("pylon challenge alice bob -swap")
    assert result.status == 2  # (a word Pylon's usage has not: in a shell, a usage error)
    assert "Pylon offers the swap (pie rule) in every two-player game: -swap is not needed" in (
        " ".join(result.body.split())
    )


def test_challenge_sends_new_board_mails(shell):
    shell.signup("alice", "bob", "carol")
    pending = shell.ok(
        "nim challenge alice bob carol -pile=20 --nagtime=3",
        channel="mail",
        sender="carol@example.org",
    )
    assert pending.subject.startswith("confirm ") and shell.outbox() == []  # nobody mailed yet
    result = shell.ok(pending.subject, channel="mail", sender="carol@example.org")
    assert result.subject == "New Nim Board 101 alice"
    assert "(-pile=20 --nagtime=3)" in result.body
    mails = shell.outbox()
    assert sorted(m.recipient for m in mails) == ["alice@example.org", "bob@example.org"]
    assert all(m.subject == "New Nim Board 101 alice" for m in mails)
    shell.ok("nim chall bob alice")
    assert shell.ok("nim games").body.count("to move") == 2


def test_mail_challenge_must_come_from_a_player(shell):
    shell.signup("alice", "bob")
    result = shell("nim challenge alice bob", channel="mail", sender="mallory@example.org")
    assert result.status == 1 and "registered to one of the players" in result.body


# ----------------------------------------------------------------------------- moves


def test_move_errors_change_nothing(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    cases = {
        "nim move 101 alice wrong 1": "wrong password",
        "nim move 101 bob pw-bob 1": "not your turn: alice is to move",
        "nim move 101 alice pw-alice 4": "you may take 1 to 3 stones, not 4",
        "nim move 101 alice pw-alice x": "not a number of stones",
        "nim move 102 alice pw-alice 1": "no Nim board 102",
        "nim move 101 alice pw-alice 1#2": "#2 is ahead of the board: the move due is move 1",
        "nim move 101 alice pw-alice pass": "may not pass",
        "nim move 101 alice pw-alice swap": "not started with -swap",
        "nim move 101 alice pw-alice accept": "no open proposal",
    }
    before = len(shell.outbox())
    for line, message in cases.items():
        result = shell(line)
        assert result.status == 1, line
        assert message in " ".join(result.body.split()), (line, result.body)
        assert "pw-alice" not in result.body
    assert records(shell) == []
    assert len(shell.outbox()) == before
    illegal = shell("nim move 101 alice pw-alice 4")
    assert illegal.subject == "Nim Board 101 Error"
    assert "Pile: 15" in illegal.body


def test_usage_errors_have_status_2(shell):
    assert shell("nim move").status == 2
    assert shell("nosuchgame challenge a b").status == 2
    assert shell("nim frobnicate").status == 2
    assert shell("nim move abc alice pw 1").status == 2


def test_move_number_guard_and_notifications(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    first = len(shell.outbox())
    result = shell.ok("nim move 101 alice pw-alice 2#1", comment="Good luck!")
    assert result.subject == "Nim Board 101 bob"
    assert "alice writes:" in result.body and "Good luck!" in result.body
    mails = shell.outbox()[first:]
    assert [m.recipient for m in mails] == ["bob@example.org"]
    shown = "Your move. Run this line"  # the shell's words for the mail's line to send back
    assert shown in result.body and shown not in mails[0].body
    assert mails[0].body == result.body.replace(shown, "Your move. Send back this line")
    replay = shell("nim move 101 alice pw-alice 2#1")  # the same mail again
    assert replay.status == 1 and "would be move 2, not move 1" in replay.body
    assert "not your turn" in shell("nim move 101 alice pw-alice 2").body
    stale = shell("nim board 101 bob pw-bob 1#1")
    assert "would be move 2, not move 1" in stale.body
    shell.ok("nim board 101 bob pw-bob 1#2")
    assert records(shell) == [(0, "2", False), (1, "1", False)]


def test_whole_game_to_the_end(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob -pile=4")
    shell.ok("nim move 101 alice pw-alice 1")
    end = shell.ok("nim move 101 bob pw-bob 3")
    assert end.subject == "Nim Board 101"
    assert "Game won by bob. (took the last stone)" in end.body
    assert board_row(shell)[:2] == ("finished", [1])
    assert "is over" in shell("nim move 101 alice pw-alice 1").body
    assert "won by bob" in shell.ok("nim history").body
    assert "No Nim boards match" in shell.ok("nim games alice active").body


def test_swap_exchanges_seats_and_is_recorded(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob -swap")
    shell.ok("nim move 101 alice pw-alice 2")
    swapped = shell.ok("nim swap 101 bob pw-bob")
    assert "bob has swapped sides." in swapped.body
    assert swapped.subject == "Nim Board 101 alice"  # the first player moves next
    assert board_row(shell)[2] == ["bob", "alice"]
    assert records(shell) == [(0, "2", False), (1, "swap", False)]
    assert "swap" in shell("nim swap 101 alice pw-alice").body
    shell.ok("nim move 101 alice pw-alice 1")
    assert records(shell)[-1] == (1, "1", False)


def test_forced_pass_is_automatic(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob -freeze")
    result = shell.ok("nim move 101 alice pw-alice 2")  # 13 left: bob must pass
    assert records(shell) == [(0, "2", False), (1, "pass", True)]
    assert "pass (Auto)" in result.body
    assert result.subject == "Nim Board 101 alice"


def test_a_comment_stays_with_its_move_when_a_forced_pass_follows(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob -freeze")
    result = shell.ok(
        "nim move 101 alice pw-alice 2",
        channel="mail",
        sender="alice@example.org",
        comment="Your turn to wait.",
    )
    assert records(shell)[-1] == (1, "pass", True)
    to_bob = [m for m in shell.outbox() if m.recipient == "bob@example.org"][-1]
    for body in (result.body, to_bob.body, shell.ok("nim show 101").body):
        assert "Your turn to wait." in body


# ----------------------------------------------------------------------------- resign


def test_resign_on_turn_and_queued(shell):
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob carol -pile=30")
    shell.ok("nim move 101 alice pw-alice 1")
    shell.ok("nim move 101 bob pw-bob 1")
    shell.ok("nim move 101 carol pw-carol 1")
    queued = shell.ok("nim resign 101 carol pw-carol")
    assert "queued" in queued.body
    shell.ok("nim move 101 alice pw-alice 1")
    result = shell.ok("nim move 101 bob pw-bob 1")
    assert "carol resigned." in result.body
    assert records(shell)[-1] == (2, "resign", True)
    assert result.subject == "Nim Board 101 alice"
    final = shell.ok("nim resign 101 alice pw-alice")
    assert "Game won by bob" in final.body


def test_decline_restarts_or_removes(shell):
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob carol")
    shell.ok("nim move 101 alice pw-alice 1")
    declined = shell.ok("nim resign 101 carol pw-carol")
    assert "declined the game; it restarts" in declined.body
    said = " ".join(declined.body.split())  # what the restart took away
    assert "The move played so far is dropped. Seats now: alice (1), bob (2)." in said
    assert declined.subject == "New Nim Board 101 alice"
    assert board_row(shell) == ("active", None, ["alice", "bob"])
    assert records(shell) == []
    removed = shell.ok("nim resign 101 bob pw-bob")
    assert "bob declined the game, so it is removed (" in removed.body
    assert "Nim board 101 was removed" in shell("nim show 101").body
    for line in ("nim games", "nim games alice", "pbmserv list nim"):  # never replayed
        assert "removed" in shell.ok(line).body, line


def test_a_queued_move_counts_as_moved_so_resigning_is_no_decline(shell):
    """A player whose moves were all played from his queue has played: resigning loses the
    game, it does not remove it (else queued moves left a lost game unrated)."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("polis queue 101 bob pw-bob b2-b3")
    played = shell.ok("polis move 101 alice pw-alice a7-a6")
    assert "b2-b3 (Auto)" in played.body
    shell.ok("polis move 101 alice pw-alice g7-g6")
    resigned = shell.ok("polis resign 101 bob pw-bob")
    assert "declined" not in resigned.body
    assert "Game won by alice" in resigned.body
    assert "Game won by alice" in shell.ok("polis show 101").body


# ----------------------------------------------------------------------------- votes


def test_draw_needs_every_player(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    shell.ok("nim move 101 alice pw-alice propose")
    assert board_row(shell)[0] == "active"
    shell.ok("nim move 101 bob pw-bob reject")
    assert "no open proposal" in shell("nim move 101 bob pw-bob accept").body
    shell.ok("nim move 101 bob pw-bob propose")
    ambiguous = shell("nim move 101 alice pw-alice accept")  # meant for #1, or for #2?
    assert ambiguous.status == 1 and "accept#2 or reject#2" in ambiguous.body
    done = shell.ok("nim move 101 alice pw-alice accept#2")
    assert "drawn by agreement" in done.body
    assert board_row(shell)[:2] == ("finished", [])
    assert "Game was a tie." in done.body


def test_undo_takes_back_the_last_move(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    shell.ok("nim move 101 alice pw-alice 3")
    shell.ok("nim move 101 alice pw-alice undo")
    result = shell.ok("nim move 101 bob pw-bob accept")
    assert "bob accepts proposal #1. Move 1 (3, alice) is taken back." in result.body
    assert records(shell) == []
    assert result.subject == "Nim Board 101 alice"


# ----------------------------------------------------------------------------- show, preview


def test_an_earlier_position_is_shown_with_the_record_and_comments_up_to_it(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    shell.ok("nim move 101 alice pw-alice 3", comment="My first move.")
    shell.ok("nim move 101 bob pw-bob 2", comment="A later comment.")
    at1 = shell.ok("nim show 101#1").body
    assert "Position after move 1 of 2." in at1 and "My first move." in at1
    assert "1. 3" in at1 and "2. 2" not in at1  # the record up to that position, as then
    assert "A later comment." not in at1 and "A later comment." in shell.ok("nim show 101").body


def test_show_games_preview(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    shell.ok("nim move 101 alice pw-alice 3")
    shell.ok("nim move 101 bob pw-bob 2")
    assert "Pile: 10" in shell.ok("nim show 101").body
    at1 = shell.ok("nim show 101#1").body
    assert "Pile: 12" in at1 and "Position after move 1 of 2." in at1
    assert "Pile: 10" in shell.ok("nim show alice").body
    assert (
        "Pile: 10" in shell.ok("nim show bob next").body
        or "No Nim boards" in shell.ok("nim show bob next").body
    )
    assert "Pile: 10" in shell.ok("nim show alice next").body
    preview = shell.ok("nim preview 101 3 3")
    assert "Pile: 4" in preview.body and "Nothing is stored" in preview.body
    assert "preview stops at '9'" in shell("nim preview 101 9").body
    assert len(records(shell)) == 2
    table = shell.ok("nim games").body
    assert "101" in table and "alice bob" in table and "alice to move" in table


def test_a_command_names_and_draws_at_most_ten_boards_or_players(shell):
    """``show`` with 2,000 boards took 5 s of the worker and mailed 14 MB to the address a
    mail's From gave.  A command names at most ten boards, players or games (more is refused
    before any is looked at), and draws at most ten boards when players name them."""
    shell.signup("alice", "bob")
    for _ in range(12):
        shell.ok("nim challenge alice bob")
    boards = [str(number) for number in range(101, 112)]
    refused = shell(f"nim show {' '.join(boards)}")
    assert refused.status == 1
    assert "a command takes at most 10 boards, this one names 11" in refused.body
    assert shell.ok(f"nim show {' '.join(boards[:10])}").body.count("Pile:") == 10
    mine = shell.ok("nim show alice")
    assert mine.body.count("Pile:") == 10
    note = "2 more boards match; a command draws at most 10. 'nim games alice' lists them all."
    assert note in " ".join(mine.body.split())
    players = " ".join(["alice"] * 11)
    games = " ".join(["nim"] * 11)
    for line in (f"nim show {players}", f"nim games {players}", f"nim history {players}"):
        assert "a command takes at most 10 players, this one names 11" in shell(line).body
    assert "a command takes at most 10 games, this one names 11" in shell(f"list {games}").body
    moves = " ".join(["1"] * 501)
    refused = shell(f"nim preview 101 {moves}")
    assert "a command takes at most 500 moves, this one names 501" in refused.body


def test_list_of_several_games_is_one_answer_with_a_table_per_game_each_named(shell):
    """By mail the answers of one line share a mail: each table carries its game's name, and
    the subject names no one game (it once read "List of Ploy games" over Polis's boards)."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    listed = shell.ok("list polis ploy", channel="mail", sender="alice@example.org")
    assert listed.subject == "List of games"
    polis, ploy = listed.body.split("Ploy games:")
    assert polis.startswith("Polis games:") and "alice bob" in polis
    assert "No Ploy boards match." in ploy
    one = shell.ok("list polis")
    assert one.subject == "List of Polis games" and one.body.startswith("Polis games:")


def test_help_texts(shell):
    assert "signup USERID PASSWORD" in shell.ok("help").body
    assert "nim move BOARD USERID PASSWORD" in shell.ok("nim help").body
    assert "nim" in shell.ok("list").body
    assert "Usage" in shell("nim challenge --help").body
    twice = shell("nim challenge alice bob --nagtime=3 --nagtime=7 -pile=3 -pile=4 -pile=5")
    said = " ".join(twice.body.split())
    assert twice.status != 0 and "--nagtime is given twice" in said
    assert said.count("-pile is given twice") == 1, said
    # by mail too: the options a command reads with its words, each with what it does
    assert "--nagtime=DAYS: days without a move before a reminder" in shell.ok("nim help").body
    assert "--format=F: roundrobin, swiss or knockout" in shell.ok("help").body


def test_a_command_word_is_a_help_topic(shell):
    """'help challenge' (PBMSERV.md: help [topic]) was refused; by shell and mail it gives the
    command's usage and description, for every game where it is a game's command."""
    for channel in ("shell", "mail"):
        kw = {"channel": channel, "sender": "x@example.org"} if channel == "mail" else {}
        challenge = shell.ok("help challenge", **kw)
        assert challenge.subject == "pbmserv help"
        assert challenge.body.startswith("GAME challenge USERID1 USERID2")
        assert "Start a new game at once" in challenge.body and "GAME is one of:" in challenge.body
        assert "GAME move BOARD USERID PASSWORD" in shell.ok("help MOVE", **kw).body
        assert shell.ok("help limit", **kw).body.startswith("limit USERID PASSWORD N|none")
        assert "change address USERID PASSWORD" in shell.ok("help change", **kw).body
    wrong = shell("help movee")  # (a shell runs 'pbmserv help move', a mail sends 'help move')
    assert wrong.status == 1 and "Did you mean 'pbmserv help move'?" in wrong.body
    mailed = shell("help movee", channel="mail", sender="x@example.org")
    assert mailed.status == 1 and "Did you mean 'help move'?" in mailed.body
    assert "Send 'help GAME' for the rules of a game" in mailed.body


def test_cache_agrees_with_replay(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob -pile=40")
    for i in range(8):
        who = ("alice", "bob")[i % 2]
        shell.ok(f"nim move 101 {who} pw-{who} {1 + i % 3}")
        with shell.sessions() as s:
            board = s.scalar(select(Board).where(Board.number == 101))
            assert board.cache_ply == len(board.moves)
            assert boards.position_of(board).serialize() == boards.replay(board).serialize()
    with shell.sessions() as s, s.begin():
        board = s.scalar(select(Board).where(Board.number == 101))
        board.position_cache = None  # lost cache: rebuilt from the record
        assert boards.position_of(board).serialize() == boards.replay(board).serialize()
    with shell.sessions() as s:
        assert s.scalar(select(MoveRecord).where(MoveRecord.ply == 8)).text
    assert all(isinstance(m, Outbox) for m in shell.outbox())


def test_preverified_passwords_skip_argon2_but_failures_still_count(shell):
    from pbmserv.domain import accounts

    shell.signup("alice")
    pairs = [("alice", "pw-alice"), ("alice", "bad")]
    accounts.preverify(shell.sessions, shell.settings, pairs, shell.clock.now)
    with shell.sessions() as s:
        hash_ = accounts.find_user(s, "alice").password_hash
    assert accounts.check_password(shell.settings, hash_, "pw-alice", True)
    assert not accounts.check_password(shell.settings, hash_, "bad", True)
    assert "wrong password" in shell("change password alice bad newpass").body


def test_a_games_table_lists_the_newest_boards_only(shell, monkeypatch):
    """Without a player named, ``games`` and ``history`` read every board of the game, its
    record and position, for any sender: they list the newest ``MAX_LISTED`` and say so."""
    from pbmserv.commands import listing

    monkeypatch.setattr(listing, "MAX_LISTED", 2)
    shell.signup("alice", "bob", "carol")
    for pair in ("alice bob", "bob carol", "carol alice"):
        shell.ok(f"polis challenge {pair}")
    table = shell.ok("polis games").body
    assert "102 " in table and "103 " in table and "101 " not in table
    assert "Only the newest 2 boards are listed; name players to see theirs." in table
    mine = shell.ok("polis games alice").body  # alice's two: all of them, no note
    assert "101 " in mine and "103 " in mine and "Only the newest" not in mine


def test_a_challenge_of_thousands_of_bad_parameters_gets_a_short_answer(shell):
    """Each unknown parameter or option was a sentence with the valid ones: 8,000 of them on
    a mailed line made an answer of 487 KB (cut at 128 KB) and seconds of the worker."""
    shell.signup("alice", "bob")
    bad = " ".join(f"-p{i}=1 --x{i} --nagtime=x" for i in range(3000))
    result = shell(f"polis challenge alice bob {bad}")
    assert result.status == 2 and len(result.body) < 1200, result.body
    said = " ".join(result.body.split())
    assert "unknown Polis parameters '-p0=1', '-p1=1', '-p2=1', '-p3=1', '-p4=1' and 2995 more" in (
        said
    )
    assert said.count("valid parameters: -swap") == 1
    assert "unknown options '--x0', '--x1', '--x2', '--x3', '--x4' and 2995 more" in said
    assert said.count("--nagtime needs a number") == 1
    assert shell.outbox() == []


def test_a_bad_parameter_value_typed_often_is_said_once(shell):
    """'-size=99' typed a thousand times was said five times over, then '995 more problems
    with parameters' that were the same one again."""
    shell.signup("alice", "bob")
    result = shell("pylon challenge alice bob " + " ".join(["-size=99"] * 1000))
    said = " ".join(result.body.split())
    assert result.status == 1 and said.count("-size=99 is out of range") == 1, said
    assert "more problems" not in said


def test_a_password_check_hashes_the_password_once(shell, monkeypatch) -> None:
    """check_password computed the password's SHA-256 (its key in the memory of recent checks)
    twice per call: once to ask whether it was remembered, once for its own key.  Once now,
    whether the check is remembered, refused lately or made with argon2."""
    import hashlib
    import types

    from pbmserv.domain import passwords

    digests: list[bytes] = []

    def sha256(data: bytes):  # (counts, then hashes)
        digests.append(data)
        return hashlib.sha256(data)

    stored = passwords.hasher(shell.settings).hash("Sekrit77")
    monkeypatch.setattr(passwords, "hashlib", types.SimpleNamespace(sha256=sha256))
    for password, ok in [
        ("Sekrit77", True),
        ("Sekrit77", True),
        ("wrong", False),
        ("wrong", False),
    ]:
        digests.clear()
        assert passwords.check_password(shell.settings, stored, password, True) is ok
        assert len(digests) == 1

"""The small things users see (issue 17, point 8): board headers, turn lines, the record after a
swap, finished boards, usage paths, vacation days, error subjects, the end of a Pylon game.
Board mails that change are pinned by the golden file ``mail_cosmetics.txt``."""

from __future__ import annotations

import random

from golden import assert_golden

from pbmserv.cli.main import main
from pbmserv.games import get_game


def test_board_headers_swap_and_finished_board_golden(shell):
    shell.signup("carol", "dave", "player16", "spammer", "you", "bob")
    four = shell.ok("ploy challenge carol dave player16 spammer")
    shell.ok("polis challenge you bob -swap")
    shell.ok("polis move 101 you pw-you d7-e6")
    shell.ok("polis move 101 bob pw-bob swap")
    swapped = shell.ok("polis move 101 you pw-you b2-c3")
    over = shell.ok("polis resign 101 bob pw-bob")
    for mail in (four, swapped, over):
        for line in mail.body.splitlines():
            assert len(line) <= 76, line
    assert "  carol         dave          player16      spammer" in four.body
    assert "  (green)       (red)         (yellow)      (blue)" in four.body
    assert "To move: carol (green)." in four.body
    assert "'s turn" not in swapped.body and "To move: bob (blue)." in swapped.body
    assert (  # each move under the player who made it, and what the swap did
        "  bob (blue)                     you (red)\n"
        "                                 1. d7-e6\n"
        "  2. swap (bob takes over blue)  3. b2-c3\n"
    ) in swapped.body
    assert "--" not in swapped.body.split("a  b  c")[0]
    assert "<- to move" not in over.body and "Game won by you." in over.body
    assert "PASSWORD" not in over.body
    text = "\n".join(f"Subject: {m.subject}\n\n{m.body}" for m in (four, swapped, over))
    assert_golden("mail_cosmetics.txt", text, "the board mail layout")


def test_after_a_swap_each_move_is_listed_under_the_player_who_made_it(shell):
    shell.signup("alice", "bob")
    shell.ok("pylon challenge alice bob")
    for line in ("alice pw-alice e5", "bob pw-bob swap", "alice pw-alice e1", "bob pw-bob e3"):
        shell.ok(f"pylon move 101 {line}")
    mail = shell.ok("pylon move 101 alice pw-alice g3")
    assert (
        "\n  bob (o)                     alice (x)\n"
        "                              1. e5\n"
        "  2. swap (bob takes over o)  3. e1\n"
        "  4. e3                       5. g3\n\n"
    ) in mail.body
    shown = shell.ok("pylon show 101").body  # the whole record: the same rows
    assert "  2. swap (bob takes over o)  3. e1\n  4. e3                       5. g3\n" in shown


def test_error_subjects_follow_one_scheme(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    illegal = shell("polis move 101 alice pw-alice a1-h8")
    usage = shell("polis move 101")
    missing = shell("polis show 999")
    other = shell("polis challenge alice")
    assert illegal.status == 1 and illegal.subject == "Polis Board 101 error"
    assert usage.status == 2 and usage.subject == "Polis Board 101 error"
    assert missing.subject == "Polis Board 999 error"
    assert other.subject == "Polis error"


def test_usage_shows_the_command_as_typed(shell, capsys):
    by_mail = shell("polis show", channel="mail", sender="x@example.org")
    assert "Usage: polis show " in by_mail.body and "pbmserv polis" not in by_mail.body
    assert main(["polis", "show"], prog_name="polis") == 2
    err = capsys.readouterr().err
    assert "Usage: polis show " in err and "polis polis" not in err
    assert "See 'polis show --help'." in err
    assert main(["polis", "show"]) == 2
    assert "Usage: pbmserv polis show " in capsys.readouterr().err
    # and so does --help
    help_by_mail = shell("polis move --help", channel="mail", sender="x@example.org")
    assert help_by_mail.body.startswith("Usage: polis move [OPTIONS] BOARD")
    assert main(["polis", "move", "--help"], prog_name="polis") == 0
    assert capsys.readouterr().out.startswith("Usage: polis move [OPTIONS] BOARD")
    assert main(["polis", "--help"], prog_name="polis") == 0
    assert capsys.readouterr().out.startswith("Usage: polis [OPTIONS] COMMAND")
    assert main(["polis", "move", "--help"]) == 0
    assert capsys.readouterr().out.startswith("Usage: pbmserv polis move [OPTIONS] BOARD")


def test_a_group_alone_prints_its_help(shell, capsys):
    """`pbmserv` alone was a traceback (the grammar looked at the first word of none), `polis`
    alone "Error: Usage: polis polis ..." and then the usage again.  Both print the group's
    help, as click does for a group without its command (exit 2: the command is missing)."""
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Usage: pbmserv [OPTIONS] COMMAND [ARGS]...\n") and "signup" in err
    assert "Error" not in err and err.count("Usage:") == 1
    assert main(["polis"], prog_name="polis") == 2
    err = capsys.readouterr().err
    assert err.startswith("Usage: polis [OPTIONS] COMMAND [ARGS]...\n") and "challenge" in err
    assert "Error" not in err and err.count("Usage:") == 1 and "polis polis" not in err
    assert main(["db"]) == 2
    assert capsys.readouterr().err.startswith("Usage: pbmserv db [OPTIONS] COMMAND")
    by_mail = shell("polis", channel="mail", sender="x@example.org")
    assert by_mail.status == 2 and by_mail.body.startswith("Usage: polis [OPTIONS] COMMAND")


def test_vacation_off_gives_back_whole_days(shell, clock):
    shell.signup("alice")
    shell.ok("vacation alice pw-alice 3")
    clock.advance(seconds=1.3)
    back = shell.ok("vacation alice pw-alice off")
    assert "; 0 of 42 vacation days used" in back.body
    assert "e-0" not in back.body


def test_pylon_says_why_it_ends_with_empty_points():
    game = get_game("pylon")
    rng = random.Random(0)
    position = game.new(2, game.defaults())
    while position.to_move is not None:
        moves = [m for m in position.legal_moves() if str(m) not in ("swap", "resign")]
        position.play(rng.choice(moves))
    outcome = position.outcome()
    assert outcome is not None
    assert outcome.reason.startswith("nobody can place: every empty point would be suicide;")

"""The small things users see (issue 17, point 8): board headers, turn lines, the record after a
swap, finished boards, usage paths, vacation days, error subjects, the end of a Pylon game, and
lines that fit a mail (78 columns) in every kind of mail.  Board mails that change are pinned
by the golden file ``mail_cosmetics.txt``."""

from __future__ import annotations

import random
from email.utils import format_datetime

from golden import assert_golden
from mail_lines import overlong

from pbmserv.cli.main import main
from pbmserv.domain import boards
from pbmserv.domain.clocks import tick
from pbmserv.games import all_games, get_game
from pbmserv.store.models import Board


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
        "  you (blue, then red)           bob (blue)\n"
        "  1. d7-e6                       2. swap (bob takes over blue)\n"
        "  3. b2-c3\n"
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
    assert (  # the first mover keeps the first column: the rows run on in step
        "\n  alice (o, then x)           bob (o)\n"
        "  1. e5                       2. swap (bob takes over o)\n"
        "  3. e1                       4. e3\n"
        "  5. g3\n\n"
    ) in mail.body
    shown = shell.ok("pylon show 101").body  # the whole record: the same rows
    assert "  3. e1                       4. e3\n  5. g3\n" in shown
    before = shell.ok("pylon show 101#1").body  # before the swap: the same columns
    assert "  alice (o, then x)  bob (o)\n  1. e5\n\n" in before


def test_error_subjects_follow_one_scheme(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    illegal = shell("polis move 101 alice pw-alice a1-h8")
    usage = shell("polis move 101")
    missing = shell("polis show 999")
    other = shell("polis challenge alice")
    assert illegal.status == 1 and illegal.subject == "Polis Board 101 Error"
    assert usage.status == 2 and usage.subject == "Polis Board 101 Error"
    assert missing.subject == "Polis Board 999 Error"
    assert other.subject == "Polis Error"


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
    by_mail = shell("polis", channel="mail", sender="x@example.org")  # no shell usage by mail
    assert by_mail.status == 2 and "a command word is missing after 'polis'" in by_mail.body
    assert "Send 'polis help'" in by_mail.body and "[OPTIONS]" not in by_mail.body


def test_vacation_off_gives_back_whole_days(shell, clock):
    shell.signup("alice")
    shell.ok("vacation alice pw-alice 3")
    clock.advance(seconds=1.3)
    back = shell.ok("vacation alice pw-alice off")
    assert "; 0 of 42 vacation days used" in " ".join(back.body.split())
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


# ----------------------------------------------------------------------------- 78 columns

REAL_GAMES = [g.name for g in all_games() if g.name != "nim"]
ILLEGAL = {"ploy": "e7-e6", "polis": "a2-a3", "pylon": "b2", "plotto": "a9"}  # legal text


def _next_moves(shell, game: str, count: int, number: int = 101) -> list[tuple[str, str]]:
    """(userid, move) for the next ``count`` moves of a board (the first legal ones)."""
    from sqlalchemy import select

    with shell.sessions() as session:
        board = session.scalar(select(Board).where(Board.game == game, Board.number == number))
        position = boards.position_of(board)
        out = []
        for _ in range(count):
            user = board.seats[position.controller(position.to_move)].user.userid
            move = next(m for m in position.legal_moves() if str(m) not in ("swap", "resign"))
            out.append((user, position.format_move(move)))
            position.play(move)
        return out


def _mail(shell, sender: str, subject: str, body: str) -> None:
    """A mail through the inbox and the worker (its one answer lands in the outbox)."""
    from pbmserv.mail import inbox
    from pbmserv.mail.worker import process_next

    raw = (
        f"From: {sender}\nTo: pbmserv@example.org\nSubject: {subject}\n"
        f"Date: {format_datetime(shell.clock.now)}\n"
        f"Message-ID: <{abs(hash(body))}@example.org>\n\n{body}"
    )
    clock, to = shell.clock, ["pbmserv@example.org"]
    inbox.store(shell.sessions, raw.replace("\n", "\r\n").encode(), sender, to, clock.now)
    while process_next(shell.sessions, shell.settings, lambda: clock.now) is not None:
        pass


def test_every_kind_of_mail_keeps_to_78_columns(shell, clock):
    """Errors, confirmations, reminders and forfeits, queue answers, previews, the board mails
    of every game from the challenge to the end, help, lists and account answers: no line is
    longer than a mail's 78 columns, except one that a single long token fills."""
    answers = []

    def say(line: str, **how: str) -> None:
        got = shell(line, **how)
        answers.extend(got if isinstance(got, list) else [got])

    by_mail = {"channel": "mail", "sender": "alice@example.org"}
    say("signup dave pw-dave dave@example.org", channel="mail", sender="dave@example.org")
    shell.signup("alice", "bob", "carol")
    for game in REAL_GAMES:
        say(f"{game} challenge alice bob", **by_mail)  # a confirmation waits
        say(f"{game} challenge alice bob -nosuch --bogus")  # every parameter listed
        say(f"{game} challenge alice bob --nagtime=3 --forfeittime=9 --totaltime=30")
        say(f"{game} challenge carol bob")  # board 102: its clock runs out below
        say(f"{game} help")
        say(f"{game} shwo 101", **by_mail)
        say(f"{game} move 101", **by_mail)
        say(f"{game} move 101 alice pw-alice zz")
        say(f"{game} move 101 alice pw-alice {ILLEGAL[game]}")
        (_, first), (_, second), (_, third) = _next_moves(shell, game, 3)
        say(f"{game} move 101 bob pw-bob {second}")  # not his turn
        say(f"{game} move 101 alice pw-alice {first}#7")  # ahead of the board
        say(f"{game} queue 101 bob pw-bob {second}")
        say(f"{game} queue 101 bob pw-bob cancel")
        say(f"{game} preview 101 {first} {second} {third}")
        say(f"{game} preview new {first} {second}")
        say(f"{game} submit 101 alice pw-alice {first}")
        say(f"{game} move 101 alice pw-alice {first}#1")
        say(f"{game} move 101 alice pw-alice {third}#1")  # behind the board
        say(f"{game} resign 101 bob pw-bob")  # his first move: he declines...
        say(f"{game} challenge alice bob")  # ...so a new board 103
        say(f"{game} move 103 alice pw-alice {first}")
        [(_, move)] = _next_moves(shell, game, 1, number=103)
        say(f"{game} move 103 bob pw-bob {move}")
        say(f"{game} resign 103 alice pw-alice")  # a finished board
        say(f"{game} show 103")
        say(f"{game} games")
        say(f"{game} history")
        say(f"{game} export 103 text")
        say(f"{game} standings")
    clock.advance(days=8)
    tick(shell.sessions, shell.settings, clock.now)  # reminders
    clock.advance(days=14)
    tick(shell.sessions, shell.settings, clock.now)  # forfeits
    for line in ("help", "help polls", "list", "shwo", "sigunp x y", "vacation alice pw-alice 3"):
        say(line, **by_mail)
    for line in (
        "vacation alice pw-alice off",
        "notifications alice pw-alice once",
        "seek alice pw-alice 2",
        "password reset alice",
        "polis notifications 102 carol pw-carol digest",
    ):
        say(line, **by_mail)
    _mail(shell, "bob@example.org", "moves", "ploy show 102\nploy resign 102 bob pw-bob\n")
    _mail(shell, "nobody@example.org", "Re: Pylon Board 102 bob", "a1\n")
    # a refusal quotes the mail: a long Subject wraps (it made a line of 86 columns)
    _mail(
        shell,
        "bob@example.org",
        "tournament create mailt bob pw-bob --game=polis --format=swiss",
        "",
    )
    texts = [f"{a.subject}\n{a.body}" for a in answers]
    texts += [f"{m.subject}\n{m.body}" for m in shell.outbox()]
    assert any("Nag:" in t for t in texts) and any("forfeits: out of time" in t for t in texts)
    for text in texts:
        assert overlong(text) == [], text

"""The mails of a game that ends a tournament round come before the mails of what follows from
it (the next round's boards, the round mail, a knockout's replays, the final standings), on
every path that ends a game: the outbox is sent in id order, and players read "your new board"
of round 2 before "game over" of round 1 (the pairing ran inside the move, before the caller
queued the board mail; by mail, before the answer to the mover too)."""

from __future__ import annotations

from sqlalchemy import select
from test_codes import mail
from test_robots import operator, operator_ok
from tournament_play import board_of, play, started

from pbmserv.domain import clocks, tournaments
from pbmserv.store.models import Board, BoardStatus

PLAYERS = ("ann", "bob", "cat", "dan")


def outbox_from(shell, start: int) -> list[tuple[str, str]]:
    """(recipient's userid, subject) of the outbox rows from ``start`` on, in id order (the
    order they are sent in)."""
    return [(m.recipient.partition("@")[0], m.subject) for m in shell.outbox()[start:]]


def follows(subject: str) -> bool:
    """A mail of what a finished round sets off: a new board, a round, its replays, the
    final standings."""
    return subject.startswith(("New ", "Tournament "))


def assert_ended_first(rows: list[tuple[str, str]], number: int) -> None:
    """Every mail about board ``number`` (the game that ended the round, the answer to its
    mover included) comes before the first mail of what follows, and there is such a mail."""
    about = [i for i, (_, subject) in enumerate(rows) if subject.startswith(f"Nim Board {number}")]
    after = [i for i, (_, subject) in enumerate(rows) if follows(subject)]
    assert about and after, rows
    assert max(about) < min(after), rows


def round_one_but_the_last_game(shell) -> int:
    """A round robin of four (R1: ann-dan, bob-cat) whose first game is over: board t1r1b2
    (bob to move, against cat) ends the round; its number."""
    started(shell, "rr", "-pile=1 --format roundrobin", PLAYERS)
    play(shell, "t1r1b1", "first")
    assert board_of(shell, "t1r1b2")[1:] == ("bob", "cat")
    return board_of(shell, "t1r1b2")[0]


def round_two_paired(shell) -> bool:
    with shell.sessions() as s:
        return tournaments.find(s, "rr").current_round == 2


def test_a_move_by_shell(shell):
    number = round_one_but_the_last_game(shell)
    start = len(shell.outbox())
    shell.ok("nim move t1r1b2 bob pw-bob 1")
    rows = outbox_from(shell, start)
    assert_ended_first(rows, number)
    assert ("cat", f"Nim Board {number}") in rows and ("cat", "Tournament rr round 2") in rows


def test_a_move_by_mail_answers_the_mover_before_his_next_board(shell):
    number = round_one_but_the_last_game(shell)
    start = len(shell.outbox())
    mail(shell, "bob@example.org", "nim move t1r1b2 bob pw-bob 1")
    rows = outbox_from(shell, start)
    assert_ended_first(rows, number)
    assert rows[:2] == [("cat", f"Nim Board {number}"), ("bob", f"Nim Board {number}")]
    assert round_two_paired(shell)


def test_a_resignation_by_mail(shell):
    number = round_one_but_the_last_game(shell)
    start = len(shell.outbox())
    mail(shell, "bob@example.org", "nim resign t1r1b2 bob pw-bob")
    rows = outbox_from(shell, start)
    assert_ended_first(rows, number)
    assert ("bob", f"Nim Board {number}") in rows and round_two_paired(shell)


def test_a_draw_agreed_by_mail(shell):
    number = round_one_but_the_last_game(shell)
    shell.ok("nim move t1r1b2 bob pw-bob propose")
    start = len(shell.outbox())
    mail(shell, "cat@example.org", f"nim move {number} cat pw-cat accept")
    rows = outbox_from(shell, start)
    assert_ended_first(rows, number)
    assert ("cat", f"Nim Board {number}") in rows and round_two_paired(shell)


def test_a_draw_agreed_by_shell(shell):
    number = round_one_but_the_last_game(shell)
    shell.ok("nim move t1r1b2 bob pw-bob propose")
    start = len(shell.outbox())
    shell.ok(f"nim move {number} cat pw-cat accept")
    assert_ended_first(outbox_from(shell, start), number)


def test_a_mail_of_several_lines_follows_up_once_after_its_answer(shell):
    """The board that ends the round on the first line, a look at the pairings on the
    second: the answer (one for the mail) still comes before round 2, which is paired once."""
    number = round_one_but_the_last_game(shell)
    start = len(shell.outbox())
    mail(shell, "bob@example.org", "nim move t1r1b2 bob pw-bob 1", "tournament pairings rr")
    rows = outbox_from(shell, start)
    assert_ended_first(rows, number)
    answer = [i for i, (userid, subject) in enumerate(rows) if userid == "bob"][0]
    assert not follows(rows[answer][1]) and answer < min(
        i for i, (_, subject) in enumerate(rows) if follows(subject)
    ), rows
    assert rows.count(("bob", "Tournament rr round 2")) == 1
    with shell.sessions() as s:
        assert tournaments.find(s, "rr").current_round == 2


def test_a_forfeit_by_the_clocks(shell, clock):
    number = round_one_but_the_last_game(shell)
    clock.advance(days=tournaments.FORFEIT_DAYS, minutes=1)
    start = len(shell.outbox())
    report = clocks.tick(shell.sessions, shell.settings, clock.now)
    assert report.forfeits == [f"Nim {number} bob"]
    assert_ended_first(outbox_from(shell, start), number)
    assert round_two_paired(shell)


def test_an_open_draw_accepted_at_the_time_limit(shell, clock):
    number = round_one_but_the_last_game(shell)
    shell.ok("nim move t1r1b2 bob pw-bob propose")
    clock.advance(days=tournaments.FORFEIT_DAYS, minutes=1)
    start = len(shell.outbox())
    report = clocks.tick(shell.sessions, shell.settings, clock.now)
    assert report.draws == [f"Nim {number} bob"]
    assert_ended_first(outbox_from(shell, start), number)
    assert round_two_paired(shell)


def robot_tournament(shell) -> None:
    """A double round robin of Nim from 5 stones (the first to move wins) of the robot
    ``bot`` (seed 1: it moves first in round 1) and ann."""
    shell.signup("ann")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("tournament create rb --game nim -pile=5 --format roundrobin --double")
    operator_ok(shell, "robot join bot rb")  # (a robot has no password to join with)
    shell.ok("tournament join rb ann pw-ann")
    shell.ok("tournament start rb")


def test_the_operator_enters_a_robot_and_takes_it_out(shell):
    """A robot has no password, so no command could enter one in a tournament (nor take out
    one that cannot play on, which the clock never forfeits): 'robot join' and 'robot
    withdraw' do, from the shell, for a robot of the tournament's game."""
    operator_ok(shell, "robot add other --game polis")
    shell.ok("tournament create rb --game nim -pile=5 --format roundrobin --double")
    r = operator(shell, "robot join other rb")
    assert r.status == 1 and "robot other plays Polis, and tournament rb is of Nim" in r.body
    shell.signup("ann", "cat", "dan")
    r = operator(shell, "robot join cat rb")
    assert r.status == 1 and "there is no robot 'cat'" in r.body
    operator_ok(shell, "robot add bot --game nim --level normal")
    operator_ok(shell, "robot join bot rb")
    for userid in ("ann", "cat", "dan"):
        shell.ok(f"tournament join rb {userid} pw-{userid}")
    shell.ok("tournament start rb")
    assert board_of(shell, "t1r1b1")[1:] == ("bot", "dan")  # seed 1 moves first
    r = operator(shell, "robot join bot rb")
    assert r.status == 1 and "tournament rb has started; joining is closed" in r.body
    number = board_of(shell, "t1r1b1")[0]
    start = len(shell.outbox())
    said = operator_ok(shell, "robot withdraw bot rb").body  # on its turn: it resigns
    assert "bot withdraws from tournament rb." in said and "He resigned on t1r1b1" in said
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.number == number))
        assert board.status is BoardStatus.finished
        t = tournaments.find(s, "rb")
        assert [p.withdrawn for p in t.players if p.user.userid == "bot"] == [True]
    assert ("dan", f"Nim Board {number}") in outbox_from(shell, start)
    r = operator(shell, "robot withdraw bot rb")
    assert r.status == 1 and "bot has already withdrawn from tournament rb" in r.body


def test_a_robots_move_then_a_draw_a_robot_accepts_in_the_final_round(shell):
    robot_tournament(shell)
    first = board_of(shell, "t1r1b1")
    assert first[1:] == ("bot", "ann")
    operator_ok(shell, "robot run")  # the robot takes 1: 4 left, ann loses
    shell.ok(f"nim move {first[0]} ann pw-ann 1")
    start = len(shell.outbox())
    operator_ok(shell, "robot run")  # the robot takes the last 3: round 1 is over
    rows = outbox_from(shell, start)
    assert_ended_first(rows, first[0])
    assert ("ann", "Tournament rb round 2") in rows
    second = board_of(shell, "t1r2b1")
    assert second[1:] == ("ann", "bot")
    shell.ok(f"nim move {second[0]} ann pw-ann propose")
    start = len(shell.outbox())
    operator_ok(shell, "robot run")  # ann would win: the robot accepts the draw
    rows = outbox_from(shell, start)
    assert_ended_first(rows, second[0])
    assert rows[-1] == ("ann", "Tournament rb final standings")
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.number == second[0]))
        assert board.status is BoardStatus.finished and board.result == "draw agreed"


def test_a_knockout_tie_its_replay_and_the_final(shell):
    started(shell, "ko", "-pile=1 --format knockout", PLAYERS)  # 1-4, 2-3
    play(shell, "t1r1b1", "first")
    tied = board_of(shell, "t1r1b2")
    shell.ok(f"nim move {tied[0]} {tied[1]} pw-{tied[1]} propose")
    start = len(shell.outbox())
    mail(shell, f"{tied[2]}@example.org", f"nim move {tied[0]} {tied[2]} pw-{tied[2]} accept")
    rows = outbox_from(shell, start)
    assert_ended_first(rows, tied[0])
    assert (tied[2], "Tournament ko round 1 replays") in rows
    replay = board_of(shell, "t1r1b3")
    assert replay[1:] == (tied[2], tied[1])  # seats swapped
    start = len(shell.outbox())
    mail(shell, f"{replay[1]}@example.org", f"nim move {replay[0]} {replay[1]} pw-{replay[1]} 1")
    rows = outbox_from(shell, start)
    assert_ended_first(rows, replay[0])
    assert (replay[1], "Tournament ko round 2") in rows
    final = board_of(shell, "t1r2b1")
    start = len(shell.outbox())
    mail(shell, f"{final[1]}@example.org", f"nim resign {final[0]} {final[1]} pw-{final[1]}")
    rows = outbox_from(shell, start)
    assert_ended_first(rows, final[0])
    assert rows[-4:] == [(u, "Tournament ko final standings") for u in PLAYERS]


def test_a_withdrawal_that_ends_the_last_game_of_the_round(shell):
    number = round_one_but_the_last_game(shell)
    start = len(shell.outbox())
    shell.ok("tournament withdraw rr cat pw-cat")  # not cat's turn: the game ends at once
    rows = outbox_from(shell, start)
    assert_ended_first(rows, number)
    assert ("bob", f"Nim Board {number}") in rows and round_two_paired(shell)


def test_a_withdrawal_by_mail_answers_him_before_the_next_round(shell):
    """His withdrawal ended the last game of the round, and paired the next round inside
    itself: the round's mails went out before his own answer.  Now the game's mails, then
    his answer, then round 2."""
    number = round_one_but_the_last_game(shell)
    start = len(shell.outbox())
    mail(shell, "cat@example.org", "tournament withdraw rr cat pw-cat")
    rows = outbox_from(shell, start)
    assert_ended_first(rows, number)
    assert rows[:3] == [
        ("bob", f"Nim Board {number}"),
        ("cat", f"Nim Board {number}"),
        ("cat", "Tournament rr withdrawn"),
    ], rows
    assert all(follows(subject) for _, subject in rows[3:]) and len(rows) > 3, rows
    assert round_two_paired(shell)

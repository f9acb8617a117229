"""Robots answer draw and undo proposals (a proposal waited for ever for a robot's answer)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_community import records
from test_robot_turns import pbmserv
from test_robots import _damage, board, operator, operator_ok

from pbmserv.games import get_game
from pbmserv.robots import accepts_draw, budget_of, votes
from pbmserv.store.models import BoardStatus


def last_mail_to(shell, userid: str) -> str:
    """The newest mail to ``userid``, its lines joined (our sentences are wrapped)."""
    mails = [m for m in shell.outbox() if m.recipient == f"{userid}@example.org"]
    return " ".join(mails[-1].body.split())


def test_a_robot_refuses_a_draw_when_it_does_not_stand_worse(shell):
    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("nim challenge alice bot -pile=8")  # alice to move from 8 stones: she loses
    shell.ok("nim move 101 alice pw-alice propose")
    ran = operator_ok(shell, "robot run").body
    assert "nim 101: bot rejects proposal #1: a draw. It is closed." in ran
    mail = last_mail_to(shell, "alice")
    assert "bot rejects proposal #1: a draw. It is closed." in mail
    assert "A robot accepts a draw only when it stands clearly worse." in mail
    assert board(shell, 101).status is BoardStatus.active
    assert "No robot is to move" in operator_ok(shell, "robot run").body  # answered once


def test_a_robot_accepts_a_draw_when_it_stands_worse(shell):
    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("nim challenge alice bot -pile=10")  # alice takes 2 and wins: the robot is lost
    shell.ok("nim move 101 alice pw-alice propose")
    ran = operator_ok(shell, "robot run").body
    assert "nim 101: bot accepts proposal #1. The game is drawn by agreement." in ran
    found = board(shell, 101)
    assert found.status is BoardStatus.finished and found.moves == []
    assert "The game is drawn by agreement." in last_mail_to(shell, "alice")


def test_a_robot_thinks_about_a_draw_on_its_own_turn_too(shell):
    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("nim challenge bot alice -pile=9")  # the robot moves first and would win
    shell.ok("nim move 101 alice pw-alice propose")
    ran = operator_ok(shell, "robot run").body
    assert "bot rejects proposal #1: a draw" in ran and "nim 101: bot played 1" in ran


def test_an_undo_takes_back_the_humans_move_with_the_robots_reply(shell):
    """A robot replies at once, so an undo of the newest move alone took back the robot's
    reply, which it would only play again: the human could never take back his own slip."""
    shell.signup("alice", "carol")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("nim challenge alice bot -pile=10 --unrated")
    shell.ok("nim move 101 alice pw-alice 1")
    operator_ok(shell, "robot run")  # the robot replies
    [(_, reply, _)] = records(shell)[1:]
    asked = shell.ok("nim move 101 alice pw-alice undo")
    assert f"to take back moves 1 (1, alice) and 2 ({reply}, bot)" in " ".join(asked.body.split())
    ran = operator_ok(shell, "robot run").body
    assert "bot accepts proposal #1. Moves 1 (1, alice) and 2" in ran
    assert board(shell, 101).moves == []  # alice is to move again from 10 stones
    # three players: alice's own slip, on carol's turn; the robot agrees, carol decides
    shell.ok("nim challenge alice carol bot -pile=20 --unrated")
    shell.ok("nim move 102 alice pw-alice 3")
    shell.ok("nim move 102 alice pw-alice undo")
    ran = operator_ok(shell, "robot run").body
    assert "nim 102: bot accepts proposal #1: to take back move 1 (3, alice)." in ran
    assert "Still to answer: carol" in last_mail_to(shell, "carol")
    done = shell.ok("nim move 102 carol pw-carol accept#1")
    assert "Move 1 (3, alice) is taken back." in " ".join(done.body.split())
    assert board(shell, 102).moves == []


def test_an_answer_thought_about_while_the_board_moved_on_is_not_recorded(shell):
    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("nim challenge alice bot -pile=10")
    shell.ok("nim move 101 alice pw-alice propose")
    with shell.sessions() as session:
        [ask] = votes.asks(session)
    agree = votes.decide(ask)
    shell.ok("nim move 101 alice pw-alice 2")  # her move closes the proposal meanwhile
    with shell.sessions() as session, session.begin():
        assert votes.record(session, ask, agree, shell.clock.now) is None
    found = board(shell, 101)
    assert found.status is BoardStatus.active and [m.text for m in found.moves] == ["2"]


def test_a_damaged_board_with_a_proposal_is_named_once_and_the_others_answered(shell):
    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("nim challenge alice bot -pile=8")  # 101: damaged below
    shell.ok("nim challenge alice bot -pile=10")  # 102: healthy
    shell.ok("nim move 101 alice pw-alice propose")
    shell.ok("nim move 102 alice pw-alice propose")
    _damage(shell, 101)
    ran = operator(shell, "robot run --until-idle")
    assert ran.status == 65, ran.body  # the store needs a look
    assert ran.body.count("nim 101:") == 1 and "cannot be read (JSONDecodeError" in ran.body
    assert "nim 102: bot accepts proposal #1. The game is drawn by agreement." in ran.body
    assert board(shell, 101).status is BoardStatus.active  # nothing recorded on it


def test_the_servers_robots_answer_a_proposal(shell, settings, clock):
    """The server's robot loop (mail's channel) answers as ``robot run`` does."""
    from waiting import wait_until

    from pbmserv.cli.server import Server

    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("nim challenge alice bot -pile=10")
    shell.ok("nim move 101 alice pw-alice propose", channel="mail", sender="alice@example.org")
    server = Server(settings, listen=False, clock=lambda: clock.now)
    server.start()
    try:
        wait_until(
            lambda: board(shell, 101).status is BoardStatus.finished,
            "the server's robot to accept the draw on nim board 101",
        )
    finally:
        server.stop()
    found = board(shell, 101)
    assert found.result == "draw agreed" and found.winners == [] and found.moves == []


def test_a_draw_is_judged_by_the_robots_own_side():
    """With two sides the search's value is the mover's: turned round for the robot."""
    nim = get_game("nim")
    losing_for_mover = nim.new(2, {"pile": 8})  # seat 0 to move loses
    assert accepts_draw(losing_for_mover, 0, budget_of("normal"))  # seat 0 stands worse
    assert not accepts_draw(losing_for_mover, 1, budget_of("normal"))
    winning_for_mover = nim.new(2, {"pile": 9})
    assert not accepts_draw(winning_for_mover, 0, budget_of("normal"))
    assert accepts_draw(winning_for_mover, 1, budget_of("normal"))


@pytest.mark.slow
def test_a_shell_proposal_gets_the_robots_answer_at_once(tmp_path: Path):
    """Without a server, the command that makes the proposal brings the robot's answer (as a
    move brings its one reply)."""
    data = tmp_path / "data"
    pbmserv("signup", "alice", "secret1", data=data)
    pbmserv("robot", "add", "bot", "--game", "pylon", "--level", "easy", data=data)
    assert pbmserv("pylon", "challenge", "alice", "bot", "--unrated", data=data).returncode == 0
    moved = pbmserv("pylon", "move", "101", "alice", "secret1", "a1", data=data)
    assert moved.returncode == 0 and "Robot bot played" in moved.stdout, moved.stderr
    assert "on Pylon board 101; alice is to move." in moved.stdout
    undo = pbmserv("pylon", "move", "101", "alice", "secret1", "undo", data=data)
    assert undo.returncode == 0, undo.stderr
    assert "Robot bot on Pylon board 101: bot accepts proposal #1. Moves 1 (a1, alice) and 2" in (
        " ".join(undo.stdout.split())
    )
    assert undo.stdout.endswith(  # the move due after the undo, not before it (#3)
        "alice is to move.\nYour move. Run this line, with your password and your move:\n"
        "  pylon move 101 alice PASSWORD <move>#1\n"
    ), undo.stdout
    shown = pbmserv("pylon", "show", "101", data=data).stdout
    assert "To move: alice" in shown and "Robot" not in shown  # taken back, answered once


@pytest.mark.slow
def test_the_shell_gives_the_lines_to_send_after_the_robots_reply_and_why_it_said_no(
    tmp_path: Path,
):
    """The shell's answer ends with the lines of the player to move: after the robot's reply
    that is the human again, who got no line to send (only the board before the reply, with
    the robot to move); and a robot's 'no' to an undo said why only in the board mail."""
    data = tmp_path / "data"
    pbmserv("signup", "alice", "secret1", data=data)
    pbmserv("robot", "add", "bot", "--game", "pylon", "--level", "easy", data=data)
    assert pbmserv("pylon", "challenge", "alice", "bot", data=data).returncode == 0  # rated
    moved = pbmserv("pylon", "move", "101", "alice", "secret1", "a1", data=data)
    assert moved.returncode == 0, moved.stderr
    reply = moved.stdout[moved.stdout.index("Robot bot played") :]
    assert "on Pylon board 101; alice is to move.\nYour move. Run this line" in reply
    assert reply.endswith("  pylon move 101 alice PASSWORD <move>#3\n"), reply
    undo = pbmserv("pylon", "move", "101", "alice", "secret1", "undo", data=data)
    said = " ".join(undo.stdout[undo.stdout.index("Robot bot on") :].split())
    assert "bot rejects proposal #1" in said
    assert "A robot takes moves back only in an unrated game" in said


SETUPS = [("ploy", 2), ("ploy", 4), ("polis", 2), ("pylon", 2), ("pylon", 3), ("pylon", 4)]
SETUPS += [("plotto", 2), ("plotto", 3), ("plotto", 4)]


@pytest.mark.parametrize("name,players", SETUPS)
def test_no_robot_takes_a_draw_at_the_start(name, players):
    """An even position is no reason: every robot accepted a draw offered before any move
    while the human was to move (the tempo and a shallow search's noise, read as 'worse')."""
    position = get_game(name).new(players, {})
    for seat in range(players):
        for level in ("easy", "normal") if players == 2 else ("easy",):
            assert not accepts_draw(position, seat, budget_of(level)), (seat, level)


def test_a_proposal_made_while_the_robot_thinks_is_answered_before_its_move(
    shell, settings, sessions, clock
):
    """The robot's move closed a proposal made while it thought, unanswered and unsaid."""
    from pbmserv.robots.service import ASKED_MEANWHILE, pending, play_turn, run_pending

    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("nim challenge bot alice -pile=9")  # the robot is to move (and wins from 9)
    with sessions() as session:
        [turn] = pending(session)  # the robot has read its turn and thinks...
    shell.ok("nim move 101 alice pw-alice propose")  # ...when alice offers a draw
    result = play_turn(sessions, settings, turn, lambda: clock.now)
    assert not result.played and result.text == ASKED_MEANWHILE
    assert board(shell, 101).moves == []
    done = run_pending(sessions, settings, lambda: clock.now)
    assert [d.text for d in done][0] == (
        "bot rejects proposal #1: a draw. It is closed. A robot accepts a draw only when it "
        "stands clearly worse."
    )
    assert [m.text for m in board(shell, 101).moves] == ["1"]  # then it moved


def test_the_answers_of_a_boards_robots_come_in_one_mail(shell):
    """Two robots' votes were two board mails to every human within a second."""
    shell.signup("alice")
    operator_ok(shell, "robot add bot1 --game nim --level normal")
    operator_ok(shell, "robot add bot2 --game nim --level normal")
    shell.ok("nim challenge alice bot1 bot2 -pile=20 --unrated")
    shell.ok("nim move 101 alice pw-alice 3")
    shell.ok("nim move 101 alice pw-alice undo")  # on bot1's turn: it answers first
    before = len(shell.outbox())
    ran = operator_ok(shell, "robot run").body
    assert "bot1 accepts proposal #1" in ran and "bot2 accepts proposal #1. Move 1" in ran
    to_alice = [m for m in shell.outbox()[before:] if m.recipient == "alice@example.org"]
    said = " ".join(to_alice[0].body.split())
    assert "bot1 accepts proposal #1" in said and "Move 1 (3, alice) is taken back." in said
    assert len(to_alice) == 1 and board(shell, 101).moves == []


def test_in_a_rated_game_a_robot_takes_nothing_back(shell):
    """A player could take back and try again until he won, and farm rating."""
    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("nim challenge alice bot -pile=10")
    shell.ok("nim move 101 alice pw-alice 1")
    operator_ok(shell, "robot run")
    shell.ok("nim move 101 alice pw-alice undo")
    ran = operator_ok(shell, "robot run").body
    assert "bot rejects proposal #1: to take back moves 1 (1, alice) and 2" in ran
    assert "A robot takes moves back only in an unrated game" in last_mail_to(shell, "alice")
    assert len(board(shell, 101).moves) == 2


def test_a_robot_that_accepted_waits_for_the_others_before_it_moves(shell, clock):
    """Its move closed the proposal it had just accepted, so the others could never pass it."""
    shell.signup("alice", "carol")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("nim challenge alice bot carol -pile=20 --unrated")
    shell.ok("nim move 101 alice pw-alice 3")
    shell.ok("nim move 101 alice pw-alice undo")  # on the robot's turn
    ran = operator_ok(shell, "robot run").body
    assert "bot accepts proposal #1" in ran and "played" not in ran
    again = operator_ok(shell, "robot run").body
    assert "waits for the other players' answers to a proposal it accepted" in again
    done = shell.ok("nim move 101 carol pw-carol accept#1")  # and carol can still answer
    assert "Move 1 (3, alice) is taken back." in " ".join(done.body.split())
    # unanswered, it waits the board's reminder period (7 days), then plays on
    shell.ok("nim move 101 alice pw-alice 3")
    shell.ok("nim move 101 alice pw-alice undo#2")
    assert "bot accepts proposal #2" in operator_ok(shell, "robot run").body
    clock.advance(days=6)
    assert "waits for the other players' answers" in operator_ok(shell, "robot run").body
    clock.advance(days=2)
    assert "nim 101: bot played" in operator_ok(shell, "robot run").body


def test_a_board_mail_gives_no_clock_dates_for_a_robots_turn(shell):
    """The clock never nags nor forfeits a robot, and the mails said when it would."""
    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level normal")
    moved = shell.ok("nim challenge alice bot -pile=10")
    assert "Reminder:" in moved.body  # alice to move
    shown = shell.ok("nim move 101 alice pw-alice 1")  # now the robot is to move
    assert "Reminder:" not in shown.body and "Forfeit:" not in shown.body

"""Robot players through the dispatcher: the operator's robot commands, a human against a robot,
robots against each other to the end, declines, the ply guard, and no mail to robots."""

from __future__ import annotations

from sqlalchemy import select
from waiting import wait_until

from pbmserv.commands import Request, run, split
from pbmserv.robots.service import pending, play_turn, run_pending
from pbmserv.store.models import Board, BoardStatus, MoveRecord, Robot, User


def operator(shell, line: str):
    """Run an operator (shell-only) command line, as ``pbmserv ...`` does."""
    from pbmserv.cli.main import build_cli

    req = Request(
        settings=shell.settings, sessions=shell.sessions, now=shell.clock.now, source="shell"
    )
    answers = run(build_cli(), split(line), req)
    return answers[0]


def operator_ok(shell, line: str):
    result = operator(shell, line)
    assert result.status == 0, result.body
    return result


def board(shell, number: int, game: str = "nim") -> Board:
    with shell.sessions() as s:
        found = s.scalar(select(Board).where(Board.game == game, Board.number == number))
        assert found is not None
        found.moves, found.seats  # noqa: B018 - load before the session closes
        for seat in found.seats:
            seat.user  # noqa: B018
        return found


def test_robot_add_list_level_and_refusals(shell):
    operator_ok(shell, "robot add deep --game nim --level easy")
    listed = operator_ok(shell, "robot list").body
    assert "deep" in listed and "nim" in listed and "easy" in listed
    assert operator(shell, "robot add deep --game nim").status == 1  # taken
    assert "unknown robot level" in operator(shell, "robot add x2 --game nim --level huge").body
    assert "unknown game 'chess'; known games:" in operator(shell, "robot add x3 --game chess").body
    bad = operator(shell, "robot add '<i>x</i>' --game nim").body  # (its first quote was lost)
    assert "Error: '<i>x</i>' is not a valid userid: use 2 to 32 letters" in bad, bad
    operator_ok(shell, "robot level deep nodes=500")
    assert "nodes=500" in operator_ok(shell, "robot list").body
    assert operator(shell, "robot level nobody easy").status == 1
    # no password opens a robot's account
    shell.signup("alice")
    shell.ok("nim challenge alice deep")
    for guess in ("", "robot", "robot: no password", "x" * 40):
        assert shell(f"nim move 101 deep '{guess}' 1").status == 1
    with shell.sessions() as s:
        robot = s.scalar(select(Robot))
        assert robot is not None and robot.user.addresses == []


def test_human_against_robot_mails_only_the_human(shell, clock):
    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("nim challenge alice bot -pile=10")
    before = len(shell.outbox())
    assert "No robot is to move" in operator_ok(shell, "robot run").body
    shell.ok("nim move 101 alice pw-alice 1")  # 9 left: the robot takes 1 and leaves 8
    clock.advance(minutes=5)
    ran = operator_ok(shell, "robot run").body
    assert "nim 101: bot played 1" in ran
    found = board(shell, 101)
    assert [m.text for m in found.moves] == ["1", "1"]
    assert found.moves[-1].source == "robot"
    mails = shell.outbox()[before:]
    assert {m.recipient for m in mails} == {"alice@example.org"}
    assert any("Board 101" in m.subject and "alice" in m.subject for m in mails)
    assert "No robot is to move" in operator_ok(shell, "robot run").body  # never twice
    # the robot wins the game it cannot lose from 8 stones
    while board(shell, 101).status is BoardStatus.active:
        shell.ok("nim move 101 alice pw-alice 1")
        operator_ok(shell, "robot run")
    assert board(shell, 101).winners == [1]


def test_robots_play_each_other_to_the_end(shell):
    operator_ok(shell, "robot add left --game pylon --level easy")
    operator_ok(shell, "robot add right --game pylon --level nodes=200")
    challenged = shell.ok("pylon challenge left right -size=3")
    # nobody sends a robot's move: the answer says who plays it, not "send back this line"
    assert "Send back" not in challenged.body
    assert "left is a robot: its moves are played for it" in challenged.body
    result = operator_ok(shell, "robot run --until-idle")
    found = board(shell, 101, "pylon")
    assert found.status is BoardStatus.finished
    assert len(found.moves) >= 5
    assert result.body.count("played") >= 5
    assert shell.outbox() == []  # nobody to mail: both players are robots


def test_robot_refuses_or_declines_a_game_it_is_not_listed_for(shell):
    """A challenge in another game is refused at once; a board made otherwise (before that
    rule, or with the robot listed for another game since) is declined at its first turn."""
    shell.signup("alice")
    operator_ok(shell, "robot add nimbot --game nim")
    refused = shell("polis challenge nimbot alice")
    assert refused.status == 1 and "nimbot is a robot that plays Nim only" in refused.body

    def list_for(game: str) -> None:
        with shell.sessions() as s, s.begin():
            s.scalar(select(Robot)).game = game

    list_for("polis")
    shell.ok("polis challenge nimbot alice")
    list_for("nim")
    done = operator_ok(shell, "robot run").body
    assert "declined" in done
    found = board(shell, 101, "polis")
    assert found.status is BoardStatus.removed
    assert any("declined" in m.body for m in shell.outbox())
    listed = shell.ok("polis games").body  # a removed board is listed, never replayed
    assert "101" in listed and "removed" in listed


def test_a_stale_robot_turn_is_refused_not_doubled(shell, settings, sessions, clock, caplog):
    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level easy")
    shell.ok("nim challenge bot alice -pile=12")
    with sessions() as s:
        (turn,) = pending(s)
    first = play_turn(sessions, settings, turn, lambda: clock.now)
    assert first.played
    with caplog.at_level("INFO", logger="pbmserv.robots"):  # the same turn again: a lost race
        second = play_turn(sessions, settings, turn, lambda: clock.now)
    assert not second.played and second.text == "the board changed meanwhile"
    (said,) = [r.getMessage() for r in caplog.records]  # in a robot's words, not a mail's
    assert said == (
        "robot bot on nim 101: the board moved on while the robot thought about move 1 (move 2 "
        "is due: another process or an undo came first); not played"
    )
    with sessions() as s:
        assert len(s.scalars(select(MoveRecord)).all()) == 1
    assert run_pending(sessions, settings, lambda: clock.now) == []


def test_robot_user_is_a_user_like_others(shell):
    operator_ok(shell, "robot add helper --game plotto --level easy")
    shell.signup("bob")
    shell.ok("plotto challenge helper bob")  # the robot moves first
    operator_ok(shell, "robot run")
    found = board(shell, 101, "plotto")
    assert len(found.moves) == 1 and found.moves[0].seat == 0
    with shell.sessions() as s:
        user = s.scalar(select(User).where(User.userid == "helper"))
        assert user is not None and user.accepts_challenges


def test_the_serve_process_plays_robot_turns(shell, settings, clock):

    from pbmserv.cli.server import Server

    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level normal")
    shell.ok("nim challenge bot alice -pile=7")  # the robot is to move
    server = Server(settings, listen=False, clock=lambda: clock.now)
    server.start()
    try:
        wait_until(lambda: board(shell, 101).moves, "the server's robot to play on nim board 101")
    finally:
        server.stop()
    assert [m.text for m in board(shell, 101).moves] == ["3"]  # 7 - 3 = 4: a won position


def test_a_robot_with_an_address_still_gets_no_mail(shell):
    from pbmserv.store.models import Address

    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level easy")
    with shell.sessions() as s, s.begin():
        robot = s.scalar(select(User).where(User.userid == "bot"))
        s.add(Address(user_id=robot.id, address="bot@example.org"))
    shell.ok("nim challenge alice bot")
    shell.ok("nim move 101 alice pw-alice 2")
    operator_ok(shell, "robot run")
    assert "bot@example.org" not in {m.recipient for m in shell.outbox()}
    assert "alice@example.org" in {m.recipient for m in shell.outbox()}


def test_a_robot_watching_a_board_gets_no_mail(shell):
    from pbmserv.store.models import Address, Subscription, SubscriptionKind

    shell.signup("alice", "bob")
    operator_ok(shell, "robot add bot --game nim --level easy")
    shell.ok("nim challenge alice bob")
    with shell.sessions() as s, s.begin():
        robot = s.scalar(select(User).where(User.userid == "bot"))
        board_id = s.scalar(select(Board.id).where(Board.game == "nim", Board.number == 101))
        s.add(Address(user_id=robot.id, address="bot@example.org"))
        s.add(Subscription(board_id=board_id, user_id=robot.id, kind=SubscriptionKind.all))
    shell.ok("nim move 101 alice pw-alice 2")
    assert "bot@example.org" not in {m.recipient for m in shell.outbox()}
    assert "bob@example.org" in {m.recipient for m in shell.outbox()}


def _damage(shell, number: int, game: str = "nim") -> None:
    """Corrupt a board's cached position as an operator's sqlite3 or psql would (no version bump)."""
    from sqlalchemy import update

    with shell.sessions() as s, s.begin():
        s.execute(
            update(Board)
            .where(Board.game == game, Board.number == number)
            .values(position_cache='{"n": 2, "broken')
        )


def test_a_board_whose_position_cannot_be_read_is_skipped_and_named_once(shell, caplog):
    """One damaged robot board stopped every robot (exit 70 from cron, a traceback every pass in
    the server): it is skipped, named once with its game and number, and the others play."""
    operator_ok(shell, "robot add left --game nim --level easy")
    operator_ok(shell, "robot add right --game nim --level easy")
    shell.ok("nim challenge left right -pile=9")  # 101: damaged below
    shell.ok("nim challenge right left -pile=9")  # 102: healthy
    _damage(shell, 101)
    with caplog.at_level("INFO", logger="pbmserv.robots"):
        ran = operator(shell, "robot run --until-idle")
    assert ran.status == 65, ran.body  # the store needs a look (README: exit statuses)
    assert ran.body.count("nim 101:") == 1 and "cannot be read (JSONDecodeError" in ran.body
    assert board(shell, 102).status is BoardStatus.finished  # the other robots played on
    assert board(shell, 101).moves == []
    named = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(named) == 1 and "nim 101" in named[0].getMessage(), named
    assert not any(r.exc_info for r in caplog.records)  # one line, no traceback


def test_the_servers_robots_skip_a_damaged_board_until_its_row_changes(shell, settings, clock):
    from pbmserv.robots.service import Unreadable

    operator_ok(shell, "robot add left --game nim --level easy")
    operator_ok(shell, "robot add right --game nim --level easy")
    shell.ok("nim challenge left right -pile=9")
    _damage(shell, 101)
    unreadable = Unreadable()  # what the server's robot loop keeps from pass to pass
    first = run_pending(shell.sessions, settings, lambda: clock.now, unreadable=unreadable)
    assert [(d.number, d.unreadable) for d in first] == [(101, True)]
    for _ in range(3):  # not rebuilt, not reported again
        assert run_pending(shell.sessions, settings, lambda: clock.now, unreadable=unreadable) == []
    with shell.sessions() as s, s.begin():  # the operator repairs it: the cache is rebuilt
        s.scalar(select(Board).where(Board.number == 101)).position_cache = None
    again = run_pending(shell.sessions, settings, lambda: clock.now, unreadable=unreadable)
    assert [(d.number, d.played) for d in again] == [(101, True)]


def test_a_robot_move_that_fails_is_not_tried_again_every_pass(
    shell, settings, clock, monkeypatch, caplog
):
    """A robot whose move fails on a fault of ours failed again in every pass of the server's
    loop, a traceback each (the review found it): the board is skipped, with one traceback,
    until its row changes; the other robots play on."""
    from pbmserv.robots import service

    operator_ok(shell, "robot add left --game nim --level easy")
    operator_ok(shell, "robot add right --game nim --level easy")
    shell.ok("nim challenge left right -pile=9")  # 101: its robot's move fails
    shell.ok("nim challenge right left -pile=9")  # 102
    real = service.play_turn

    def play(sessions, settings, turn, now, stop):  # type: ignore[no-untyped-def]
        if turn.number == 101:
            raise ZeroDivisionError("a bug")
        return real(sessions, settings, turn, now, stop)

    monkeypatch.setattr(service, "play_turn", play)
    unreadable = service.Unreadable()
    with caplog.at_level("ERROR", logger="pbmserv.robots"):
        first = run_pending(shell.sessions, settings, lambda: clock.now, unreadable=unreadable)
        for _ in range(3):
            later = run_pending(shell.sessions, settings, lambda: clock.now, unreadable=unreadable)
            assert all(d.number == 102 for d in later)
    failed = [d for d in first if d.number == 101]
    assert (
        len(failed) == 1 and "its robot's move failed (ZeroDivisionError: a bug)" in failed[0].text
    )
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 1 and "nim 101" in tracebacks[0].getMessage()
    assert board(shell, 102).moves  # the other robots played on


def test_quick_robots_play_first_in_a_pass(shell):
    """Robots' turns are played one after another: an easy robot's reply waited behind a
    strong one's 15 seconds when the strong robot's board was older."""
    operator_ok(shell, "robot add slow --game nim --level strong")
    operator_ok(shell, "robot add quick --game nim --level easy")
    shell.signup("alice")
    shell.ok("nim challenge slow alice -pile=9")  # 101, the older turn
    shell.ok("nim challenge quick alice -pile=9")  # 102
    ran = operator_ok(shell, "robot run").body.splitlines()
    assert [line.split(":")[0] for line in ran] == ["nim 102", "nim 101"]


def test_a_human_waiting_comes_before_games_of_robots_only(shell):
    """A game of robots only (an older board) plays after a human's reply, even a slower one."""
    for name, level in (("r1", "easy"), ("r2", "easy"), ("slow", "strong")):
        operator_ok(shell, f"robot add {name} --game nim --level {level}")
    shell.signup("alice")
    shell.ok("nim challenge r1 r2 -pile=9")  # 101: robots only, the oldest turn
    shell.ok("nim challenge slow alice -pile=9")  # 102: alice waits for slow's reply
    ran = operator_ok(shell, "robot run").body.splitlines()
    assert [line.split(":")[0] for line in ran] == ["nim 102", "nim 101"]


def test_the_servers_pass_gives_games_of_robots_only_a_slice_then_looks_again(shell):
    """With a slice, a pass plays robots-only games until the slice is spent (here at once:
    one move), oldest first; the next pass takes the next board, so each game gets its turn."""
    for name in ("r1", "r2", "r3", "r4"):
        operator_ok(shell, f"robot add {name} --game nim --level easy")
    shell.ok("nim challenge r1 r2 -pile=9")  # 101
    shell.ok("nim challenge r3 r4 -pile=9")  # 102

    def one_pass() -> list[int]:
        shell.clock.advance(seconds=1)
        done = run_pending(
            shell.sessions, shell.settings, lambda: shell.clock.now, robots_only_seconds=0
        )
        return [d.number for d in done if d.played]

    passes = [one_pass() for _ in range(3)]
    assert passes == [[101], [102], [101]]


def test_a_strong_robots_game_of_robots_only_is_not_starved_by_quick_ones(shell):
    """Games of robots only take turns oldest first whatever their levels: by thinking time,
    two quick games would take every slice and the strong robots' game would never move."""
    for name, level in (("s1", "strong"), ("s2", "strong"), ("e1", "easy"), ("e2", "easy")):
        operator_ok(shell, f"robot add {name} --game nim --level {level}")
    operator_ok(shell, "robot add e3 --game nim --level easy")
    operator_ok(shell, "robot add e4 --game nim --level easy")
    shell.ok("nim challenge s1 s2 -pile=9")  # 101: the oldest
    shell.ok("nim challenge e1 e2 -pile=9")  # 102
    shell.ok("nim challenge e3 e4 -pile=9")  # 103
    played = []
    for _ in range(3):
        shell.clock.advance(seconds=1)
        done = run_pending(
            shell.sessions, shell.settings, lambda: shell.clock.now, robots_only_seconds=0
        )
        played += [d.number for d in done if d.played]
    assert played == [101, 102, 103]


def test_robot_run_plays_nothing_while_another_process_holds_the_clocks(shell, monkeypatch):
    """``robot run`` from cron played beside a running server (or another run): both searched
    the same turns.  Where another holds the store's lock it says so and plays nothing;
    otherwise it holds the lock through every pass of ``--until-idle``."""
    from pbmserv.cli.store import PLAYED_ELSEWHERE
    from pbmserv.robots import service
    from pbmserv.store.lock import ClocksLock

    operator_ok(shell, "robot add left --game nim --level easy")
    operator_ok(shell, "robot add right --game nim --level easy")
    shell.ok("nim challenge left right -pile=9")
    server = ClocksLock(shell.settings.url)  # as a running server holds it
    assert server.acquire()
    try:
        for line in ("robot run", "robot run --until-idle"):
            assert operator_ok(shell, line).body == PLAYED_ELSEWHERE.replace(
                "Another pbmserv process (a running server, or a tick or robot run)",
                "A running server (pbmserv serve)",
            )
    finally:
        server.release()
    assert board(shell, 101).moves == []

    elsewhere: list[bool] = []  # whether another process could take the lock, at each pass
    run_pending = service.run_pending

    def watched(*args, **kwargs):
        other = ClocksLock(shell.settings.url)
        elsewhere.append(other.acquire())
        other.release()
        return run_pending(*args, **kwargs)

    monkeypatch.setattr(service, "run_pending", watched)
    assert operator_ok(shell, "robot run --until-idle").body.count("played") >= 3
    assert board(shell, 101).status is BoardStatus.finished
    assert len(elsewhere) >= 3 and not any(elsewhere)
    other = ClocksLock(shell.settings.url)
    try:
        assert other.acquire()  # and let go once done
    finally:
        other.release()

"""Robot turns and clock checks are found through indexed columns (issue 18), never by replaying
every board: ``Board.to_move_id`` follows every change of who is to move, the robots read only
the boards it names, and the clock tick looks only at boards whose ``due_at`` has come."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace

from sqlalchemy import event, select
from test_robots import operator_ok

from pbmserv.domain import boards, clocks
from pbmserv.robots.service import pending, replies
from pbmserv.store import migrate
from pbmserv.store.db import make_engine
from pbmserv.store.models import Board, BoardStatus


def assert_index_matches_the_record(shell) -> None:
    """Every board's ``to_move_id`` is the user to move in the position replayed from its
    record (None once the game is over or the board removed)."""
    with shell.sessions() as s:
        rows = list(s.scalars(select(Board)))
        assert rows
        for board in rows:
            if board.status is BoardStatus.removed:
                assert board.to_move_id is None
                continue
            mover = board.user_to_move(boards.replay(board))
            assert board.to_move_id == (mover.id if mover else None), board.number


@contextmanager
def counted(sessions):
    """Count the SQL statements run through ``sessions``' engine."""
    engine = sessions.kw["bind"]
    statements: list[str] = []

    def note(_conn, _cursor, statement, *_args):  # type: ignore[no-untyped-def]
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", note)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", note)


def test_who_is_to_move_follows_moves_votes_declines_and_forfeits(shell, clock):
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob")  # 101: moves, undo, draw
    shell.ok("nim challenge alice bob carol")  # 102: a decline, then a removal
    shell.ok("nim challenge bob alice")  # 103: a resignation
    shell.ok("nim challenge carol alice")  # 104: a forfeit by the clock
    assert_index_matches_the_record(shell)
    for line in (
        "nim move 101 alice pw-alice 3",
        "nim move 101 bob pw-bob 1",
        "nim move 101 alice pw-alice undo",
        "nim move 101 bob pw-bob accept",
        "nim resign 102 carol pw-carol",
        "nim move 103 bob pw-bob 2",
        "nim resign 103 alice pw-alice",
        "nim move 101 alice pw-alice propose",
        "nim move 101 bob pw-bob accept#2",
        "nim resign 102 bob pw-bob",
    ):
        shell.ok(line)
        assert_index_matches_the_record(shell)
    clock.advance(days=22)
    assert clocks.tick(shell.sessions, shell.settings, clock.now).forfeits == ["Nim 104 carol"]
    assert_index_matches_the_record(shell)


def test_robot_turns_come_from_the_index_not_from_every_robot_board(shell):
    shell.signup("alice")
    operator_ok(shell, "robot add deep --game nim --level easy")
    shell.ok("nim challenge deep alice")  # 101: the robot is to move
    with shell.sessions() as s, counted(shell.sessions) as few:
        assert [t.number for t in pending(s)] == [101]
    for _ in range(30):  # boards with a robot seat where the human is to move
        shell.ok("nim challenge alice deep")
    with shell.sessions() as s, counted(shell.sessions) as many:
        assert [t.number for t in pending(s)] == [101]
    assert len(many) == len(few)  # no statement per board with a robot seat


def test_a_command_answers_only_the_robot_turns_of_the_boards_it_changed(shell):
    shell.signup("alice")
    operator_ok(shell, "robot add deep --game nim --level easy")
    shell.ok("nim challenge alice deep")
    shell.ok("nim challenge alice deep")
    shell.ok("nim move 101 alice pw-alice 1")  # deep to move on 101 (no robot answered)
    shell.ok("nim move 102 alice pw-alice 1")  # deep to move on 102, at the same instant
    with shell.sessions() as s:
        both = replies(s, shell.clock.now)
        only = replies(s, shell.clock.now, board_ids={board_id(s, 102)})
        none = replies(s, shell.clock.now, board_ids=set())
    assert sorted(t.number for t in both) == [101, 102]
    assert [t.number for t in only] == [102]
    assert none == []


def board_id(session, number: int) -> int:
    return session.scalar(select(Board.id).where(Board.game == "nim", Board.number == number))


def test_the_tick_looks_only_at_boards_that_are_due(shell, clock):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    clocks.tick(shell.sessions, shell.settings, clock.now)  # due times computed
    with counted(shell.sessions) as one_board:
        clocks.tick(shell.sessions, shell.settings, clock.now)
    for _ in range(20):
        shell.ok("nim challenge alice bob")
    clocks.tick(shell.sessions, shell.settings, clock.now)
    with counted(shell.sessions) as many_boards:
        report = clocks.tick(shell.sessions, shell.settings, clock.now)
    assert report.nags == [] and len(many_boards) == len(one_board)
    clock.advance(days=7)
    with counted(shell.sessions) as all_due:
        assert len(clocks.tick(shell.sessions, shell.settings, clock.now).nags) == 21
    assert len(all_due) > len(many_boards)  # now each board is looked at


def test_due_times_follow_a_change_of_the_settings_periods(shell, clock):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    assert clocks.tick(shell.sessions, shell.settings, clock.now).nags == []
    clock.advance(days=4)
    assert clocks.tick(shell.sessions, shell.settings, clock.now).nags == []
    shorter = replace(shell.settings, nag_days=3.0)
    assert clocks.tick(shell.sessions, shorter, clock.now).nags == ["Nim 101 alice"]
    clock.advance(days=2)
    longer = replace(shell.settings, nag_days=30.0, forfeit_days=40.0)
    assert clocks.tick(shell.sessions, longer, clock.now).nags == []
    clock.advance(days=20)  # 26 days: past the default forfeit, not the longer one
    assert clocks.tick(shell.sessions, longer, clock.now).forfeits == []
    assert clocks.tick(shell.sessions, shell.settings, clock.now).forfeits == ["Nim 101 alice"]


def test_migration_0008_fills_in_who_is_to_move_on_existing_boards(shell, clock):
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob")
    shell.ok("nim challenge bob carol alice")
    shell.ok("nim challenge carol alice")
    shell.ok("nim move 101 alice pw-alice 2")
    shell.ok("nim move 102 bob pw-bob 1")
    shell.ok("nim resign 103 carol pw-carol")
    with shell.sessions() as s:  # a stale cache: the migration replays the record
        s.get(Board, board_id(s, 102)).position_cache = None
        s.commit()
    engine = make_engine(shell.settings.url)
    try:
        migrate.downgrade(engine, "0007")
        migrate.upgrade(engine)
    finally:
        engine.dispose()
    shell.sessions.kw["bind"].dispose()  # no connection remembers the old table
    assert_index_matches_the_record(shell)
    with shell.sessions() as s:
        assert s.get(Board, board_id(s, 103)).to_move_id is None

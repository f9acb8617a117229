"""A move on a long game costs what a move on a short one does (issue 18): the move, its board
mail and its answer read the number of plies and the newest entries of the record, never the
whole record, and what they show is what the whole record gives."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import event, select

from pbmserv.domain import boards
from pbmserv.games import get_game
from pbmserv.render.board_mail import MOVE_MAIL_ROUNDS, board_mail_body, is_swap, move_rows
from pbmserv.store.models import Board, Comment, MoveRecord

TEXTS = ["a1", "a1", "swap", "pass"]


def play_random(shell, game_name: str, players: list[str], plies: int, seed: int) -> int:
    """Play ``plies`` random moves (no resign or swap) on a new board; the board's number."""
    shell.ok(f"{game_name} challenge {' '.join(players)}")
    number = 101
    position = get_game(game_name).new(len(players))
    rng = random.Random(seed)
    for ply in range(plies):
        choices = [m for m in position.legal_moves() if str(m) not in ("swap", "resign")]
        move = rng.choice(choices)
        user = players[position.to_move]
        text = position.format_move(move)
        shell.ok(f"{game_name} move {number} {user} pw-{user} {text}#{ply + 1}")
        position.play(move)
    return number


@contextmanager
def counting_loads() -> Iterator[list[int]]:
    """Count the move and comment rows brought into memory inside the block (in ``[0]``)."""
    seen = [0]

    def note(*_args: object) -> None:
        seen[0] += 1

    event.listen(MoveRecord, "load", note)
    event.listen(Comment, "load", note)
    try:
        yield seen
    finally:
        event.remove(MoveRecord, "load", note)
        event.remove(Comment, "load", note)


def loaded_records(shell, line: str) -> int:
    """How many move and comment rows running ``line`` brings into memory."""
    with counting_loads() as seen:
        shell.ok(line)
    return seen[0]


def next_move(shell, game_name: str, number: int) -> str:
    with shell.sessions() as s:
        board = s.scalars(select(Board).where(Board.number == number)).one()
        position = boards.position_of(board)
        user = board.user_to_move(position)
        text = position.format_move(next(iter(position.legal_moves())))
        return f"{game_name} move {number} {user.userid} pw-{user.userid} {text}"


def test_a_move_on_a_long_game_reads_only_the_newest_entries(shell):
    shell.signup("alice", "bob")
    number = play_random(shell, "polis", ["alice", "bob"], 60, seed=1)
    line = next_move(shell, "polis", number)
    window = MOVE_MAIL_ROUNDS * 2 + 1
    assert loaded_records(shell, line) <= window + 1  # and the comment, were there one


def test_players_mailed_once_until_they_move_cost_no_whole_record_either(shell):
    shell.signup("alice", "bob")
    shell.ok("notifications alice pw-alice once")
    shell.ok("notifications bob pw-bob once")
    number = play_random(shell, "polis", ["alice", "bob"], 60, seed=3)
    line = next_move(shell, "polis", number)
    window = MOVE_MAIL_ROUNDS * 2 + 1
    assert loaded_records(shell, line) <= window + 3  # and the moves since the one mail


def test_the_move_mail_of_a_long_game_is_what_the_whole_record_gives(shell):
    shell.signup("alice", "bob", "carol", "dave")
    number = play_random(shell, "ploy", ["alice", "bob", "carol", "dave"], 45, seed=2)
    shell.ok(next_move(shell, "ploy", number), comment="a comment for the record")
    with shell.sessions() as s:
        board = s.scalars(select(Board).where(Board.number == number)).one()
        position = boards.position_of(board)
        partial = board_mail_body(board, position, with_comment=True)
        assert len(board.moves) == 46 and board.comments  # now loaded: the whole record
        whole = board_mail_body(board, position, with_comment=True)
    assert partial == whole
    assert "a comment for the record" in whole


@given(
    seats=st.integers(2, 4),
    rounds=st.integers(1, 5),
    # each entry's seat follows the last one's, passing over 0-2 seats now and then
    steps=st.lists(st.tuples(st.sampled_from([0, 0, 0, 0, 1, 2]), st.sampled_from(TEXTS))),
)
def test_the_newest_rounds_x_seats_plus_one_entries_give_the_last_rows(seats, rounds, steps):
    entries, seat = [], -1
    for ply, (skip, text) in enumerate(steps, start=1):
        seat = (seat + 1 + skip) % seats
        entries.append(MoveRecord(ply=ply, seat=seat, text=text, auto=text == "pass"))
    whole = move_rows(entries, seats)
    swapped = any(is_swap(entry, seats) for entry in entries)  # (callers: position.swapped)
    newest = move_rows(entries[-(rounds * seats + 1) :], seats, swapped=swapped)
    assert newest[-rounds:] == whole[-rounds:]


def test_the_web_lists_count_the_moves_and_name_the_mover_without_reading_records(shell):
    from pbmserv.web.queries import board_lists, player_page

    shell.signup("alice", "bob")
    number = play_random(shell, "polis", ["alice", "bob"], 31, seed=4)
    with counting_loads() as seen, shell.sessions() as s:
        (row,), finished = board_lists(s, None)
        page = player_page(s, "bob")
    assert seen[0] == 0 and not finished
    assert (row.number, row.moves, row.status) == (number, 31, "bob to move")
    assert [(r.number, r.moves, r.status) for r in page.active] == [(number, 31, "bob to move")]


def test_the_newest_entries_come_oldest_first_and_none_for_no_count(shell):
    from pbmserv.store import records

    shell.signup("alice", "bob")
    number = play_random(shell, "polis", ["alice", "bob"], 12, seed=5)
    with shell.sessions() as s:
        board = s.scalars(select(Board).where(Board.number == number)).one()
        assert [m.ply for m in records.newest_moves(board, 5)] == [8, 9, 10, 11, 12]
        assert records.newest_moves(board, 0) == records.newest_moves(board, -3) == []
        assert records.recorded_plies(board) == 12
        assert "moves" not in board.__dict__  # read in part, never loaded


def test_entries_and_comments_read_in_part_are_those_of_the_loaded_record(shell):
    """The newest entries and the comments from a move on, read by a plain query when the
    record is not loaded, are exactly what the loaded collections hold (every field a reader
    uses)."""
    from pbmserv.store import records

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    moves = ["a7-a6", "a2-a3", "b7-b6", "b2-b3"]
    for ply, move in enumerate(moves):
        user = "alice" if ply % 2 == 0 else "bob"
        shell.ok(f"polis move 101 {user} pw-{user} {move}", comment=f"Move {ply + 1}, by {user}.")
    fields = ("ply", "seat", "user_id", "text", "auto", "at")

    def read(loaded: bool) -> tuple[list[tuple[object, ...]], list[list[tuple[str, str]]]]:
        with shell.sessions() as s:
            board = s.scalars(select(Board).where(Board.number == 101)).one()
            if loaded:
                assert len(board.moves) == 4 and len(board.comments) == 4
            entries = [tuple(getattr(m, f) for f in fields) for m in records.newest_moves(board, 3)]
            said = [records.comments_after(board, ply - 1) for ply in range(1, 6)]
            assert ("moves" in board.__dict__) is loaded
            return entries, said

    assert read(False) == read(True)
    entries, said = read(False)
    assert [e[0] for e in entries] == [2, 3, 4] and entries[-1][3] == "b2-b3"
    assert said[2:4] == [
        [("alice", "Move 3, by alice."), ("bob", "Move 4, by bob.")],
        [("bob", "Move 4, by bob.")],
    ]
    assert len(said[0]) == 4 and said[4] == []

"""Plotto: the help's example, parsing, line rules and tie-breaks, variants, board drawing, and
property tests that check the incremental bookkeeping against a from-scratch recomputation."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from golden import assert_golden
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbmserv.games import get_game
from pbmserv.games.base import RESIGN, IllegalMove, PlayersError, UnreadableMove
from pbmserv.games.plotto import (
    AXES,
    CENTRE,
    FULL,
    NEIGHBOURS,
    PlottoPosition,
    cell_of,
    index_of,
    label_of,
    read_diagram,
    xy_of,
)
from pbmserv.render.templates import render_board

GOLDEN = Path(__file__).parent / "golden"

EXAMPLE = r"""
      c  __ e
   a  __/3 \__
   __/2 \__/2 \
  /1 \__/4 \__/
  \__/3 \__/f
   b \__/1 \
      d \__/
"""

GAME = get_game("plotto")
LETTERS = re.compile("[a-z]+").findall


def pieces_of(diagram: str) -> dict[tuple[int, int], int]:
    return {xy: int(tok) for xy, tok in read_diagram(diagram).items() if tok.isdigit()}


def example(players: int = 2, turn: int = 0, **params: bool) -> PlottoPosition:
    return PlottoPosition.from_pieces(pieces_of(EXAMPLE), players, params, turn)


def texts(position: PlottoPosition) -> list[str]:
    return [position.format_move(m) for m in position.legal_moves()]


# ----- the help's example


def test_example_labels_sit_where_the_help_draws_them():
    drawn = {tok: xy for xy, tok in read_diagram(EXAMPLE).items() if tok.isalpha()}
    assert example().labels() == drawn
    assert list(drawn) == ["c", "e", "a", "f", "b", "d"]  # reading order differs from label order
    assert list(example().labels()) == list("abcdef")


def test_example_valid_moves_are_the_helps_list_with_d4_for_d5():
    assert texts(example()) == ["a3", "a4", "b2", "b4", "c1", "c4", "d2", "d4", "e1", "e4", "f3"]


@pytest.mark.parametrize("players,turn", [(2, 0), (2, 1), (3, 2), (4, 3)])
def test_e1_wins_for_player_one_whoever_plays_it(players, turn):
    position = example(players, turn)
    position.push_text("e1")
    assert position.outcome().winners == (0,)
    assert position.to_move is None


@pytest.mark.parametrize("players,turn", [(2, 0), (2, 1), (3, 0), (4, 2)])
def test_2b_wins_for_player_two(players, turn):
    position = example(players, turn)
    assert position.parse_move("2b") == position.parse_move("b2")
    position.push_text("2b")
    assert position.outcome().winners == (1,)


def test_other_example_moves_do_not_win():
    for text in ["a3", "a4", "b4", "c1", "c4", "d2", "d4", "e4", "f3"]:
        position = example()
        position.push_text(text)
        assert position.outcome() is None, text
        assert position.to_move == 1


def test_example_board_drawing_matches_the_help(tmp_path):
    text = render_board(example())
    inner = [line[4:].rstrip(" |") for line in text.splitlines() if line.startswith("  | ")]
    expected = [line[2:] for line in EXAMPLE.strip("\n").splitlines()]
    assert inner == expected
    assert_golden("plotto_example.txt", text, "the Plotto example board")


# ----- move text


def test_labels_round_trip():
    assert [label_of(i) for i in (0, 25, 26, 27, 51, 701, 702)] == [
        "a",
        "z",
        "aa",
        "ab",
        "az",
        "zz",
        "aaa",
    ]
    for i in range(2000):
        assert index_of(label_of(i)) == i


def test_first_and_second_moves():
    position = GAME.new(2)
    assert texts(position) == ["a1", "a2", "a3", "a4"]
    position.push_text("a2")
    assert position.board == {CENTRE: 2}
    assert len(texts(position)) == 18
    assert "a2" not in texts(position)
    position.push_text("c1")  # the cell above the centre
    assert xy_of(next(c for c, n in position.board.items() if n == 1)) == (0, -2)
    assert texts(position) == ["a3", "a4", "b3", "b4"]  # the two cells touching both


@pytest.mark.parametrize(
    "text,error,words",
    [
        ("e5", IllegalMove, "numbered 1 to 4"),
        ("e0", IllegalMove, "numbered 1 to 4"),
        ("g1", IllegalMove, "no cell is labelled 'g'"),
        ("zz3", IllegalMove, "labels are a to f"),
        ("e2", IllegalMove, "touches a 2"),
        ("f4", IllegalMove, "f takes 3"),
        ("e", UnreadableMove, "letter and a number"),
        ("1", UnreadableMove, "letter and a number"),
        ("e1-f3", UnreadableMove, "letter and a number"),
        ("e1e", UnreadableMove, "letter and a number"),
    ],
)
def test_errors_say_what_is_wrong(text, error, words):
    with pytest.raises(error) as info:
        example().parse_move(text)
    assert words in str(info.value)


def test_number_first_and_upper_case_are_accepted():
    position = example()
    assert position.parse_move("1E") == position.parse_move("e1") == position.parse_move(" E 1")
    assert position.format_move(position.parse_move("1e")) == "e1"


def test_cell_touching_all_four_numbers_gets_no_label():
    # the centre's six neighbours 1 2 3 4 1 2 (alternating so none touch their own number)
    ring = [(0, -2), (1, -1), (1, 1), (0, 2), (-1, 1), (-1, -1)]
    position = PlottoPosition.from_pieces(dict(zip(ring, [1, 2, 3, 1, 2, 4], strict=True)))
    assert (0, 0) not in position.labels().values()
    ring3 = PlottoPosition.from_pieces(dict(zip(ring, [1, 2, 3, 1, 2, 3], strict=True)))
    label = _label_at(ring3, (0, 0))
    assert [t for t in texts(ring3) if t[:-1] == label] == [f"{label}4"]


def _label_at(position: PlottoPosition, xy: tuple[int, int]) -> str:
    return next(label for label, at in position.labels().items() if at == xy)


# ----- lines and tie-breaks


def _place(position: PlottoPosition, xy: tuple[int, int], number: int) -> None:
    position.push_text(f"{_label_at(position, xy)}{number}")


# Placing 4 at (0, 0) makes 1-2-4-1 downwards (ends 1) and 2-3-4-2 down-right (ends 2).
DOUBLE = {(0, -4): 1, (0, -2): 2, (0, 2): 1, (-2, -2): 2, (-1, -1): 3, (1, 1): 2}


@pytest.mark.parametrize(
    "players,mover,winner",
    [(2, 0, 0), (2, 1, 1), (3, 0, 0), (3, 1, 1), (3, 2, None), (4, 3, None)],
)
def test_lines_for_several_players(players, mover, winner):
    position = PlottoPosition.from_pieces(DOUBLE, players, turn=mover)
    _place(position, (0, 0), 4)
    if winner is None:
        assert position.outcome() is None
        assert position.to_move == (mover + 1) % players
    else:
        assert position.outcome().winners == (winner,)


def test_old_lines_do_not_count_later():
    position = PlottoPosition.from_pieces(DOUBLE, 3, turn=2)
    _place(position, (0, 0), 4)
    assert position.outcome() is None
    for move in position.legal_moves():  # any move that makes no new line of its own
        after = position.copy()
        after.play(move)
        if not brute_line_seats(after.board, move // 8, 3, False):
            break
    position.play(move)
    assert len(position.board) == len(DOUBLE) + 2
    assert position.outcome() is None


def test_a_line_for_one_other_player_wins_for_him():
    pieces = {**DOUBLE, (1, 1): 3}  # the diagonal now ends 2..3: only player 1's line
    position = PlottoPosition.from_pieces(pieces, 3, turn=2)
    _place(position, (0, 0), 4)
    assert position.outcome().winners == (0,)


def test_lines_for_a_resigned_player_are_ignored():
    position = PlottoPosition.from_pieces(DOUBLE, 3, turn=1)
    position.play(RESIGN)  # player 2 resigns: player 3 moves
    assert position.to_move == 2
    _place(position, (0, 0), 4)
    assert position.outcome().winners == (0,)


def test_last_player_left_wins():
    position = GAME.new(3)
    position.play(RESIGN)
    assert position.to_move == 1
    position.play(RESIGN)
    assert position.outcome().winners == (2,)
    assert position.to_move is None


def test_pieces_beyond_the_ends_do_not_matter():
    # run 2 1 3 4 [1] 2 downwards: placing 1 at (0, 0) makes 1-3-4-1 inside a longer run
    pieces = {(0, -8): 2, (0, -6): 1, (0, -4): 3, (0, -2): 4, (0, 2): 2, (1, 1): 3}
    position = PlottoPosition.from_pieces(pieces, 2)
    _place(position, (0, 0), 1)
    assert position.outcome().winners == (0,)


def test_bridging_a_gap_makes_a_line():
    # 1 3 _ 1 downwards: filling the gap with 2 gives 1-3-2-1
    pieces = {(0, -4): 1, (0, -2): 3, (0, 2): 1, (1, 1): 4}
    position = PlottoPosition.from_pieces(pieces, 2, turn=1)
    _place(position, (0, 0), 2)
    assert position.outcome().winners == (0,)


def test_three_is_too_short_and_gaps_break_lines():
    pieces = {(0, -4): 1, (0, -2): 3, (1, 1): 4, (0, 4): 1, (1, 3): 3}
    position = PlottoPosition.from_pieces(pieces, 2)
    _place(position, (0, 0), 1)  # 1-3-1 (three) and 1 _ 1 (gap): no line
    assert position.outcome() is None


def test_three_and_four_are_neutral_with_two_players():
    pieces = {(0, -6): 3, (0, -4): 1, (0, -2): 2, (1, 1): 1}
    position = PlottoPosition.from_pieces(pieces, 2)
    _place(position, (0, 0), 3)
    assert position.outcome() is None
    four = PlottoPosition.from_pieces(pieces, 3)
    _place(four, (0, 0), 3)
    assert four.outcome().winners == (2,)


def test_four_players_four_wins_for_player_four():
    pieces = {(0, -6): 4, (0, -4): 1, (0, -2): 2, (1, 1): 1}
    position = PlottoPosition.from_pieces(pieces, 4, turn=1)
    _place(position, (0, 0), 4)
    assert position.outcome().winners == (3,)


def test_four_players_take_turns_in_order():
    position = GAME.new(4)
    seen = []
    for _ in range(6):
        seen.append(position.to_move)
        position.play(next(iter(position.legal_moves())))
    assert seen == [0, 1, 2, 3, 0, 1]


# ----- tournament


def test_tournament_is_for_two_players():
    for players in (3, 4):
        with pytest.raises(PlayersError):
            GAME.new(players, {"tournament": True})
    assert GAME.new(2, {"tournament": True}).params["tournament"] is True


@pytest.mark.parametrize(
    "line,winner",
    [
        ((1, 2, 4, 3), 0),
        ((3, 2, 4, 1), 0),
        ((2, 1, 3, 4), 1),
        ((4, 1, 3, 2), 1),
        ((1, 2, 3, 1), None),
        ((2, 1, 3, 2), None),
        ((3, 1, 2, 3), None),
    ],
)
def test_tournament_ends(line, winner):
    top, m1, m2, placed = line
    side = 1 if placed != 1 else 2
    pieces = {(0, -6): top, (0, -4): m1, (0, -2): m2, (1, 1): side}
    position = PlottoPosition.from_pieces(pieces, 2, {"tournament": True})
    _place(position, (0, 0), placed)
    got = position.outcome()
    assert (got.winners if got else None) == (None if winner is None else (winner,))


def test_tournament_seat_notes():
    notes = [s.note for s in GAME.new(2, {"tournament": True}).seats()]
    assert notes == ["wins with 1..3 or 3..1", "wins with 2..4 or 4..2"]


# ----- the board in a mail


def test_swap_is_a_parameter():
    position = GAME.new(2, {"swap": True})
    position.push_text("a1")
    assert position.parse_move("swap")
    assert "swap" in [p.name for p in GAME.params]


def test_wide_board_is_split_into_strips_within_76_columns():
    # a zig-zag of 1 2 1 2 ... across 60 columns
    pieces = {(x, x % 2): 1 + x % 2 for x in range(60)}
    position = PlottoPosition.from_pieces(pieces, 2)
    text = render_board(position)
    assert max(map(len, text.splitlines())) <= 76
    assert "Columns 1 to 20 of 60" in text
    assert "Columns 41 to 60 of 60" in text
    assert text.count("/1 \\") == 30 and text.count("/2 \\") == 30
    labels = set(position.labels())
    drawn = {w for line in text.splitlines() if line.startswith("  |") for w in LETTERS(line)}
    assert labels <= drawn


def test_finished_board_invites_no_move():
    """The board mail says how the game ended (above the board); the drawing of a finished
    game shows no cell letters and no word on how to move."""
    position = example()
    position.push_text("e1")
    text = render_board(position)
    assert "Game over" not in text and "line of four" not in text
    assert "Valid moves" not in text and "letter + number" not in text
    assert not {w for line in text.splitlines() if line.startswith("  |") for w in LETTERS(line)}


def test_the_board_says_what_wins():
    """The legend said 'Player 1: wins with 1..1' and nothing else of the goal: a player by
    mail was not told that it means a straight line of four or more, whoever placed it."""
    plain = " ".join(render_board(example()).split())
    assert "A straight line of four or more pieces, whoever placed them, wins" in plain
    assert "whose number is at both ends (1..1: a 1 at each end)" in plain
    tournament = " ".join(render_board(example(tournament=True)).split())
    assert "whose numbers are at its ends (1..3: a 1 at one end, a 3 at the other)" in tournament
    over = example()
    over.push_text("e1")
    assert "straight line" not in render_board(over)  # (finished: no word on how to win)


# ----- properties over random games


def brute_open(board: dict[int, int]) -> set[int]:
    if not board:
        return {CENTRE}
    need = 1 if len(board) == 1 else 2
    out = set()
    for cell in {c + d for c in board for d in NEIGHBOURS} - set(board):
        touching = [board[cell + d] for d in NEIGHBOURS if cell + d in board]
        if len(touching) >= need and len(set(touching)) < 4:
            out.add(cell)
    return out


def brute_line_seats(board: dict[int, int], cell: int, players: int, tournament: bool) -> set:
    """Every 4+ segment of consecutive pieces through ``cell``, checked one by one."""
    seats = set()
    for d in AXES:
        lo = 0
        while cell + (lo - 1) * d in board:
            lo -= 1
        hi = 0
        while cell + (hi + 1) * d in board:
            hi += 1
        for start in range(lo, 1):
            for end in range(max(start + 3, 0), hi + 1):
                a, b = board[cell + start * d], board[cell + end * d]
                if tournament and {a, b} in ({1, 3}, {2, 4}):
                    seats.add((a - 1) % 2)
                if not tournament and a == b and a <= players:
                    seats.add(a - 1)
    return seats


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    players=st.sampled_from([2, 3, 4]),
    tournament=st.booleans(),
)
def test_incremental_state_matches_recomputation(seed, players, tournament):
    if tournament and players != 2:
        players = 2
    rng = random.Random(seed)
    position = GAME.new(players, {"tournament": tournament})
    record = []
    while position.to_move is not None and len(record) < 150:
        assert position.open == brute_open(position.board)
        for cell in position.open:
            touching = {position.board[cell + d] for d in NEIGHBOURS if cell + d in position.board}
            assert position.mask.get(cell, 0) == sum(1 << n for n in touching)
            assert position.mask.get(cell, 0) != FULL
        moves = list(position.legal_moves())
        assert [position.format_move(m) for m in moves] == sorted(
            (position.format_move(m) for m in moves), key=lambda t: (index_of(t[:-1]), t[-1])
        )
        move = rng.choice(moves)
        mover = position.to_move
        snapshot = position.copy()
        record.append(position.format_move(move))
        position.play(move)
        cell, number = divmod(move, 8)
        expected = brute_line_seats(position.board, cell, players, tournament)
        outcome = position.outcome()
        if mover in expected or len(expected) == 1:
            want = mover if mover in expected else next(iter(expected))
            assert outcome is not None and outcome.winners == (want,)
        else:
            assert outcome is None
        assert snapshot.board != position.board  # the copy is independent
    again = GAME.replay(players, {"tournament": tournament}, record)
    assert again.serialize() == position.serialize()
    assert PlottoPosition.deserialize(position.serialize()).open == position.open


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_board_always_fits_and_shows_every_label(seed):
    rng = random.Random(seed)
    position = GAME.new(4)
    for _ in range(rng.randrange(0, 120)):
        if position.to_move is None:
            break
        position.play(rng.choice(list(position.legal_moves())))
    text = render_board(position)
    assert all(len(line) <= 76 and line.isascii() for line in text.splitlines())
    drawn = {w for line in text.splitlines() if line.startswith("  |") for w in LETTERS(line)}
    assert set(position.labels()) <= drawn if position.outcome() is None else not drawn
    assert text.count("\\__/") >= len(position.board)  # every piece has a bottom


def test_setup_rejects_non_cells():
    with pytest.raises(ValueError):
        PlottoPosition.from_pieces({(0, 1): 1})
    assert xy_of(cell_of(-3, 5)) == (-3, 5)


def long_game(seed: int, players: int, plies: int, params: dict | None = None) -> PlottoPosition:
    """A random game that avoids ending moves where it can, so boards sprawl and fill up."""
    rng = random.Random(seed)
    position = GAME.new(players, params or {})
    for _ in range(plies):
        if position.to_move is None:
            break
        moves = list(position.legal_moves())
        rng.shuffle(moves)
        for move in moves:
            after = position.copy()
            after.play(move)
            if after.outcome() is None:
                break
        position.play(move)
    return position


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), players=st.sampled_from([2, 3, 4]))
def test_long_games_keep_consistent_state_and_fit_the_mail(seed, players):
    position = long_game(seed, players, 300)
    assert position.open == brute_open(position.board)
    for cell in position.open:
        touching = {position.board[cell + d] for d in NEIGHBOURS if cell + d in position.board}
        assert position.mask[cell] == sum(1 << n for n in touching)
    restored = PlottoPosition.deserialize(position.serialize())
    assert restored.open == position.open and restored.mask == position.mask
    text = render_board(position)
    assert all(len(line) <= 76 and line.isascii() for line in text.splitlines())
    drawn = {w for line in text.splitlines() if line.startswith("  |") for w in LETTERS(line)}
    assert set(position.labels()) <= drawn if position.outcome() is None else not drawn


def test_midgame_board_golden():
    position = long_game(7, 3, 40)
    text = render_board(position)
    assert_golden("plotto_midgame.txt", text, "the Plotto mid-game board")

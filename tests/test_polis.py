"""Polis: every example of the rules text, the rulings of DECISIONS.md, tricky cases, move counts,
random-game properties, and an independent slow reference resolver to compare against."""

from __future__ import annotations

import random

import pytest
from golden import assert_golden
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbmserv.games import get_game
from pbmserv.games.base import RESIGN, IllegalMove, UnreadableMove
from pbmserv.games.polis import PolisPosition, square_of
from pbmserv.render.templates import render_board

GAME = get_game("polis")
EMPTY_ROW = "........"


def diagram(*rows: str, to_move: int = 0) -> PolisPosition:
    """Shorthand: 8 rows, rank 8 first."""
    return PolisPosition.from_diagram(rows, to_move)


def after(position: PolisPosition, text: str) -> list[str]:
    position.push_text(text)
    return position.diagram()


# --------------------------------------------------------------------------- start


def test_initial_position():
    p = GAME.new(2)
    assert p.diagram() == [
        "Bbbbbbbb",
        "bbbbbbbb",
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        "rrrrrrrr",
        "rrrrrrrR",
    ]
    assert p.to_move == 0
    assert [s.label for s in p.seats()] == ["blue", "red"]
    assert not p.is_stunned(0) and not p.is_stunned(1)


def test_initial_move_counts():
    p = GAME.new(2)
    moves = list(p.legal_moves())
    assert len(moves) == 22
    total = 0
    for move in moves:
        q = p.copy()
        q.play(move)
        total += len(list(q.legal_moves()))
    assert total == 22 * 22


def perft(position: PolisPosition, depth: int) -> int:
    if depth == 0:
        return 1
    total = 0
    for move in position.legal_moves():
        child = position.copy()
        child.play(move)
        total += perft(child, depth - 1)
    return total


def test_perft_depth_3():
    # regression figure; the legal-move sets themselves are checked against the reference below
    assert perft(GAME.new(2), 3) == 18360


# --------------------------------------------------------------------------- rules examples


def test_hop_example_top_left_dog_to_centre():
    # BD BD . / BD . . / . . RD  ->  c6-d5 gives  RD . . / . BD BD / . BD .
    p = diagram(
        "B.......", EMPTY_ROW, "..bb....", "..b.....", "....r...", EMPTY_ROW, EMPTY_ROW, ".......R"
    )
    assert after(p, "c6-d5") == [
        "B.......",
        EMPTY_ROW,
        "..r.....",  # the red dog hopped into the square just left
        "...bb...",
        "...b....",
        EMPTY_ROW,
        EMPTY_ROW,
        ".......R",
    ]


def test_hop_blocked_by_occupied_square():
    # blue c6 would hop to e4 and red e4 to c6: both squares are occupied, both stay
    p = diagram(
        "B.......", EMPTY_ROW, "..bb....", EMPTY_ROW, "....r...", EMPTY_ROW, EMPTY_ROW, ".......R"
    )
    assert after(p, "d6-d5")[2:5] == ["..b.....", "...b....", "....r..."]


def test_hop_off_the_board_stays():
    p = diagram(
        "B.......", EMPTY_ROW, ".b......", ".r......", EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, ".......R"
    )
    assert after(p, "b6-a5")[2:5] == [EMPTY_ROW, "br......", EMPTY_ROW]


def test_defended_red_dog_stays():
    # | RD | RD | BD <- |  | : the middle red dog is held by the red dog beyond it
    p = diagram(
        "B.......", EMPTY_ROW, EMPTY_ROW, "rr.b....", EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, ".......R"
    )
    assert after(p, "d5-c5")[3] == "rrb....."


def test_undefended_red_dog_hops_into_square_just_left():
    p = diagram(
        "B.......", EMPTY_ROW, EMPTY_ROW, ".r.b....", EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, ".......R"
    )
    assert after(p, "d5-c5")[3] == "..br...."


def test_defence_only_along_the_axis():
    # | RD |   |   |   |  /  |   | RD | BD <- |   | : the red dog is hopped to the right
    p = diagram(
        "B.......", EMPTY_ROW, "r.......", ".r.b....", EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, ".......R"
    )
    assert after(p, "d5-c5")[2:4] == ["r.......", "..br...."]


def test_own_dogs_always_hop_over_the_mover():
    # a friendly neighbour is never "defended": b5 hops although a5 is blue
    p = diagram(
        "B.......", EMPTY_ROW, EMPTY_ROW, "bb.b....", EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, ".......R"
    )
    assert after(p, "d5-c5")[3] == "b.bb...."


def test_capture_needs_one_axis_static():
    #  |   |   |   |  /  | RD | BD |   |  /  |   | RD |   |  : the blue dog is safe
    p = diagram(
        "B.......", EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, "rb......", ".r.....R"
    )
    assert p.capturable() == []


def test_capture_needs_one_axis_after_a_move():
    p = diagram(
        "B.......",
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        "rb......",
        "..r....R",
        to_move=1,
    )
    assert after(p, "c1-b1")[6:] == ["rb......", ".r.....R"]
    assert p.last_captured == []


def test_diagonal_capture_static():
    # | RD |   |   |  /  |   | BD |   |  /  |   |   | RD | : the blue dog is captured
    p = diagram(
        "B.......", EMPTY_ROW, "..r.....", "...b....", "....r...", EMPTY_ROW, EMPTY_ROW, ".......R"
    )
    assert p.capturable() == ["d5"]


def test_moving_into_the_diagonal_capture_is_illegal():
    p = diagram(
        "B.......", EMPTY_ROW, "..rb....", EMPTY_ROW, "....r...", EMPTY_ROW, EMPTY_ROW, ".......R"
    )
    with pytest.raises(IllegalMove, match="d6-d5 is illegal: the moved dog would be captured"):
        p.parse_move("d6-d5")
    assert square_of("d6") << 6 | square_of("d5") not in set(p.legal_moves())


def test_simultaneous_captures():
    # | RD | BD | RD | BD | : both central dogs are captured
    p = diagram(
        "B.......", EMPTY_ROW, EMPTY_ROW, ".......b", "....rbr.", EMPTY_ROW, EMPTY_ROW, "R......."
    )
    assert after(p, "h5-h4")[4] == "....r..b"
    assert p.last_captured == [square_of("f4"), square_of("g4")]


def test_stunned_chariot_does_not_count_for_captures():
    # | RD | BC* | RD | BD | : the central red dog is safe, the chariot is stunned
    p = diagram(
        EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, ".......b", "....rBr.", EMPTY_ROW, EMPTY_ROW, "R......."
    )
    assert p.is_stunned(0)
    assert after(p, "h5-h4")[4] == "....rBrb"
    assert p.last_captured == []
    assert p.is_stunned(0)
    assert "(B)" in render_board(p)


def test_unstunned_chariot_counts_for_captures():
    # a dog next to an unstunned chariot is captured between it and an enemy dog
    p = diagram(
        EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, ".......b", ".....Br.", EMPTY_ROW, EMPTY_ROW, "R......."
    )
    assert after(p, "h5-h4")[4] == ".....B.b"


def test_illegal_sacrifice_even_to_cause_hops():
    # d6-d5 would hop the red e6 dog to c4, but the moved dog ends between c6 and e4
    p = diagram(
        "B.......", EMPTY_ROW, "..rbr...", EMPTY_ROW, "....r...", EMPTY_ROW, EMPTY_ROW, ".......R"
    )
    with pytest.raises(IllegalMove, match="moved dog would be captured"):
        p.parse_move("d6d5")


def test_safe_move_may_hop_own_dog_into_danger():
    # e5-d4 is safe; it hops the blue d5 dog into d3 between the defended red c3 and e3
    p = diagram(
        "B.......", EMPTY_ROW, EMPTY_ROW, "...bb...", EMPTY_ROW, "..r.r...", ".r...r..", ".......R"
    )
    assert after(p, "e5-d4")[3:7] == [EMPTY_ROW, "...b....", "..r.r...", ".r...r.."]
    assert p.last_captured == [square_of("d3")]


def test_pieces_in_a_row():
    # | RD | RD -> |   | BD | : the blue dog hops between the red dogs and is captured
    p = diagram(
        "B.......",
        EMPTY_ROW,
        EMPTY_ROW,
        "rr.b....",
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        ".......R",
        to_move=1,
    )
    assert after(p, "b5-c5")[3] == "r.r....."
    assert p.last_captured == [square_of("b5")]


def test_death_square_diagonal():
    # red b6 and d4 are spaced one apart: e6-d6 hops the blue e7 dog into c5, where it dies
    p = diagram(
        "B.......",
        "....b...",
        ".r..r...",
        EMPTY_ROW,
        "...r....",
        EMPTY_ROW,
        EMPTY_ROW,
        ".......R",
        to_move=1,
    )
    assert after(p, "e6-d6")[1:5] == [EMPTY_ROW, ".r.r....", EMPTY_ROW, "...r...."]
    assert p.last_captured == [square_of("c5")]


def test_hop_out_of_danger_before_captures():
    # after g6-f5 the red e5 dog stands between blue d5 and f5, but it hops to g5 first
    p = diagram(
        "B.......", EMPTY_ROW, "......b.", "...br...", EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, ".......R"
    )
    assert after(p, "g6-f5")[2:4] == [EMPTY_ROW, "...b.br."]
    assert p.last_captured == []


# --------------------------------------------------------------------------- stun rulings


def test_chariot_stunned_by_two_dogs():
    p = diagram(
        EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, "r.......", "B.......", "r.......", EMPTY_ROW, ".......R"
    )
    assert p.is_stunned(0) and not p.is_stunned(1)


def test_mutual_stun_non_mover_is_stunned():
    rows = (
        "........",
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        "..rBRb..",
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
    )
    blue_to_move = PolisPosition.from_diagram(rows, 0)  # red moved last: blue's chariot stunned
    assert blue_to_move.is_stunned(0) and not blue_to_move.is_stunned(1)
    red_to_move = PolisPosition.from_diagram(rows, 1)
    assert red_to_move.is_stunned(1) and not red_to_move.is_stunned(0)


def test_mutual_stun_created_by_a_move():
    p = diagram(
        EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, ".....b..", "..rBR.b.", EMPTY_ROW, EMPTY_ROW, EMPTY_ROW
    )
    assert p.is_stunned(0) and not p.is_stunned(1)
    assert after(p, "f5-f4")[4] == "..rBRbb."
    assert not p.is_stunned(0) and p.is_stunned(1)
    with pytest.raises(IllegalMove, match="your chariot on e4 is stunned and cannot move"):
        p.parse_move("e4-e5")


def test_chariot_stunned_by_dogs_cannot_stun_the_other():
    # R is held by blue dogs on e5/e3, so it does not count: B (between c4 r and R) is free
    p = diagram(
        EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, "....b...", "..rBR...", "....b...", EMPTY_ROW, EMPTY_ROW
    )
    assert p.is_stunned(1) and not p.is_stunned(0)


def test_stunned_chariot_does_not_hop():
    # blue B on d4 is stunned by red c3 and e5; b5-c5 would hop it to b6
    rows = [
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        ".r..r...",
        "...B....",
        "..r.....",
        EMPTY_ROW,
        ".......R",
    ]
    p = diagram(*rows, to_move=1)
    assert p.is_stunned(0)
    assert after(p, "b5-c5")[2:6] == [EMPTY_ROW, "..r.r...", "...B....", "..r....."]
    free = diagram(
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        ".r......",
        "...B....",
        "..r.....",
        EMPTY_ROW,
        ".......R",
        to_move=1,
    )
    assert not free.is_stunned(0)
    assert after(free, "b5-c5")[2:6] == [".B......", "..r.....", EMPTY_ROW, "..r....."]


def test_stun_kept_during_hops_then_recomputed():
    # c4 and e4 hop away (friendly hops) but B, stunned before the move, stays; then it is free
    q = diagram(
        EMPTY_ROW,
        EMPTY_ROW,
        "...r....",
        EMPTY_ROW,
        "..rBr...",
        EMPTY_ROW,
        EMPTY_ROW,
        ".......R",
        to_move=1,
    )
    assert q.is_stunned(0)
    assert after(q, "d6-d5")[2:5] == ["..r.r...", "...r....", "...B...."]
    assert not q.is_stunned(0)


def test_moving_chariot_may_not_end_stunned():
    p = diagram(
        EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, "...B....", "..r.r...", EMPTY_ROW, EMPTY_ROW, ".......R"
    )
    with pytest.raises(IllegalMove, match="d5-d4 is illegal: the moved chariot would end stunned"):
        p.parse_move("d5-d4")
    assert "d5-d4" not in {p.format_move(m) for m in p.legal_moves()}


# --------------------------------------------------------------------------- ends


def test_chariot_moving_to_goal_rank_wins():
    p = diagram(
        EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, "B.......", ".......R"
    )
    p.push_text("a2-a1")
    assert p.outcome().winners == (0,)
    assert p.to_move is None
    assert "blue chariot reached rank 1" in p.outcome().reason


def test_chariot_hopped_onto_goal_rank_wins_for_its_owner():
    # blue d8-c7 hops the red chariot from c6 to c8: red wins although blue moved
    p = diagram(
        "...b...B", EMPTY_ROW, "..R.....", EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, EMPTY_ROW
    )
    assert after(p, "d8-c7")[:3] == ["..R....B", "..b.....", EMPTY_ROW]
    assert p.outcome().winners == (1,)
    assert p.to_move is None


def test_both_chariots_on_goal_ranks_mover_wins():
    rows = (
        "R.......",
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        EMPTY_ROW,
        "B.......",
    )
    assert PolisPosition.from_diagram(rows, 0).outcome().winners == (1,)  # red moved last
    assert PolisPosition.from_diagram(rows, 1).outcome().winners == (0,)


def test_no_legal_move_loses():
    p = diagram(
        EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, "r.......", "B.......", "r.......", EMPTY_ROW, ".......R"
    )
    assert list(p._moves()) == []
    assert p.outcome().winners == (1,)
    assert p.outcome().reason == "blue has no legal move"
    assert p.to_move is None
    with pytest.raises(IllegalMove, match="game is over"):
        p.parse_move("a4-b4")


def test_resign():
    p = GAME.new(2)
    p.play(RESIGN)
    assert p.outcome().winners == (1,)
    assert p.to_move is None
    assert not p.seats()[0].in_play


# --------------------------------------------------------------------------- notation


@pytest.mark.parametrize("text", ["d7-d6", "d7d6", "D7-D6", "D7D6", " d7 - d6 "])
def test_notation_variants(text):
    p = GAME.new(2)
    move = p.parse_move(text)
    assert p.format_move(move) == "d7-d6"


@pytest.mark.parametrize(
    "text,error,message",
    [
        ("c2-c3", IllegalMove, "no piece of yours on c2 (the red dog there is not yours)"),
        ("c5-c4", IllegalMove, "no piece of yours on c5"),
        ("c7-c5", IllegalMove, "c7-c5: pieces move one step"),
        ("c7-c7", IllegalMove, "a piece must move"),
        ("c8-c7", IllegalMove, "c7 is occupied"),
        ("a8-a7", IllegalMove, "a7 is occupied"),
        ("i2-i3", UnreadableMove, "i2 is not a square"),
        ("a9-a8", UnreadableMove, "a9 is not a square"),
        ("c7", UnreadableMove, "not a Polis move"),
        ("c7xc6", UnreadableMove, "not a Polis move"),
    ],
)
def test_errors_say_what_is_wrong(text, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        GAME.new(2).parse_move(text)


def test_board_drawing():
    text = render_board(GAME.new(2))
    lines = text.splitlines()
    assert lines[0].split() == list("abcdefgh")
    assert lines[2] == " 8 | B  b  b  b  b  b  b  b | 8"
    assert "Legend" in text
    assert all(len(line) <= 76 and line.isascii() for line in lines)


# --------------------------------------------------------------------------- fixed move counts


@pytest.mark.parametrize(
    "rows,to_move,count",
    [
        # lone chariots: 8 steps for B in the middle, 3 for R in its corner
        (
            (
                EMPTY_ROW,
                EMPTY_ROW,
                EMPTY_ROW,
                EMPTY_ROW,
                "...B....",
                EMPTY_ROW,
                EMPTY_ROW,
                ".......R",
            ),
            0,
            8,
        ),
        (
            (
                EMPTY_ROW,
                EMPTY_ROW,
                EMPTY_ROW,
                EMPTY_ROW,
                "...B....",
                EMPTY_ROW,
                EMPTY_ROW,
                ".......R",
            ),
            1,
            3,
        ),
        # stunned chariot and a dog on the edge: only the dog's 5 steps
        (
            (
                "......b.",
                EMPTY_ROW,
                EMPTY_ROW,
                "r.......",
                "B.......",
                "r.......",
                EMPTY_ROW,
                ".......R",
            ),
            0,
            5,
        ),
        # the d6 dog: 7 empty neighbours, d5 a sacrifice; plus chariot a8's 3 steps
        (
            (
                "B.......",
                EMPTY_ROW,
                "..rb....",
                EMPTY_ROW,
                "....r...",
                EMPTY_ROW,
                EMPTY_ROW,
                ".......R",
            ),
            0,
            9,
        ),
    ],
)
def test_fixed_move_counts(rows, to_move, count):
    assert len(list(PolisPosition.from_diagram(rows, to_move).legal_moves())) == count


# --------------------------------------------------------------------------- reference resolver


def reference_result(rows: list[str], mover: int, stunned: tuple[bool, bool], frm: str, to: str):
    """A slow, independent reading of the rules on a dict of (file, rank) -> char."""
    board = {}
    for i, row in enumerate(rows):
        for f, c in enumerate(row):
            if c != ".":
                board[(f, 7 - i)] = c
    colour = {"b": 0, "B": 0, "r": 1, "R": 1}
    fx, fy = ord(frm[0]) - 97, int(frm[1]) - 1
    tx, ty = ord(to[0]) - 97, int(to[1]) - 1
    board[(tx, ty)] = board.pop((fx, fy))

    def on(x, y):
        return 0 <= x < 8 and 0 <= y < 8

    def is_stunned_map(b, stun):
        return lambda sq: b[sq] in "BR" and stun[colour[b[sq]]]

    before = dict(board)
    dirs = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0)]
    hops = []
    for dx, dy in dirs:
        n, t, beyond = (tx + dx, ty + dy), (tx - dx, ty - dy), (tx + 2 * dx, ty + 2 * dy)
        if n not in before or not on(*t) or t in before:
            continue
        c = before[n]
        if c in "BR" and stunned[colour[c]]:
            continue
        if colour[c] != mover and beyond in before and colour[before[beyond]] == colour[c]:
            continue
        hops.append((n, t, c))
    for n, _t, _c in hops:
        del board[n]
    for _n, t, c in hops:
        board[t] = c

    def stun_of(b, last_mover):
        def flanked(sq, counted):
            x, y = sq
            me = colour[b[sq]]
            for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
                a, z = (x + dx, y + dy), (x - dx, y - dy)
                if (
                    a in b
                    and z in b
                    and colour[b[a]] != me
                    and colour[b[z]] != me
                    and all(counted(s) for s in (a, z))
                ):
                    return True
            return False

        chariots = {colour[c]: sq for sq, c in b.items() if c in "BR"}
        fixed = []
        for guess in ((False, False), (True, False), (False, True), (True, True)):

            def counted(s, guess=guess):
                return b[s] not in "BR" or not guess[colour[b[s]]]

            result = tuple(seat in chariots and flanked(chariots[seat], counted) for seat in (0, 1))
            if result == guess:
                fixed.append(guess)
        if len(fixed) == 1:
            return fixed[0]
        assert fixed == [(True, False), (False, True)]
        return (True, False) if last_mover == 1 else (False, True)

    s1 = stun_of(board, mover)
    captured = []
    for sq, c in board.items():
        if c in "br":
            x, y = sq
            for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
                a, z = (x + dx, y + dy), (x - dx, y - dy)
                if all(
                    s in board
                    and colour[board[s]] != colour[c]
                    and not (board[s] in "BR" and s1[colour[board[s]]])
                    for s in (a, z)
                ):
                    captured.append(sq)
                    break
    for sq in captured:
        del board[sq]
    s2 = stun_of(board, mover)
    moved_ok = (tx, ty) in board and not (board[(tx, ty)] in "BR" and s2[mover])
    out = ["".join(board.get((f, r), ".") for f in range(8)) for r in range(7, -1, -1)]
    return out, s2, moved_ok


def all_steps(p: PolisPosition):
    seat = p.turn
    for sq in range(64):
        c = p.diagram()[7 - sq // 8][sq % 8]
        if c == "." or (c in "bB") != (seat == 0):
            continue
        if c in "BR" and p.is_stunned(seat):
            continue
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                x, y = sq % 8 + dx, sq // 8 + dy
                if (dx or dy) and 0 <= x < 8 and 0 <= y < 8 and p.diagram()[7 - y][x] == ".":
                    yield f"{chr(97 + sq % 8)}{sq // 8 + 1}", f"{chr(97 + x)}{y + 1}"


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_engine_agrees_with_reference(seed):
    rng = random.Random(seed)
    p = GAME.new(2)
    for _ in range(60):
        if p.to_move is None:
            break
        legal = {p.format_move(m) for m in p.legal_moves()}
        rows = p.diagram()
        stunned = (p.is_stunned(0), p.is_stunned(1))
        expected_legal = set()
        for frm, to in all_steps(p):
            out, s2, ok = reference_result(rows, p.turn, stunned, frm, to)
            if ok:
                expected_legal.add(f"{frm}-{to}")
        assert legal == expected_legal
        text = rng.choice(sorted(legal))
        frm, to = text.split("-")
        out, s2, _ok = reference_result(rows, p.turn, stunned, frm, to)
        p.push_text(text)
        assert p.diagram() == out
        assert (p.is_stunned(0), p.is_stunned(1)) == s2


# --------------------------------------------------------------------------- properties


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_game_properties(seed):
    rng = random.Random(seed)
    p = GAME.new(2)
    counts = (15, 15)
    record = []
    while p.to_move is not None and len(record) < 200:
        moves = list(p.legal_moves())
        assert moves
        move = rng.choice(moves)
        mover = p.to_move
        record.append(p.format_move(move))
        p.play(move)
        text = "".join(p.diagram())
        assert len(text) == 64
        assert text.count("B") == 1 and text.count("R") == 1  # chariots are never removed
        new_counts = (text.count("b"), text.count("r"))
        assert new_counts[0] <= counts[0] and new_counts[1] <= counts[1]
        counts = new_counts
        # the moved piece survived and, if a chariot, is not stunned
        moved = p.piece_at(record[-1][3:])
        assert moved in ("bB" if mover == 0 else "rR")
        if moved in "BR":
            assert not p.is_stunned(mover)
        restored = PolisPosition.deserialize(p.serialize())
        assert restored.serialize() == p.serialize()
        assert restored.diagram() == p.diagram()
        assert p.copy().serialize() == p.serialize()
    assert GAME.replay(2, {}, record).serialize() == p.serialize()
    if p.outcome() is not None:
        assert p.to_move is None


# --------------------------------------------------------------------------- golden board

GOLDEN_RECORD = [
    "d7-e6",
    "b2-a3",
    "c7-b6",
    "g2-f3",
    "b5-c4",
    "c1-b2",
    "g8-f7",
    "a4-b4",
    "e5-d4",
    "d2-d3",
    "d8-e8",
    "c1-d2",
    "b8-c7",
    "a2-b3",
    "a5-a4",
    "g1-f2",
    "e7-f8",
    "b4-a3",
    "c6-b5",
    "h2-h3",
    "b5-a6",
    "c5-d6",
    "e8-e7",
    "f1-e1",
    "g8-f7",
    "d2-e2",
    "d7-c8",
    "f1-f2",
    "c8-d8",
    "g1-f1",
    "f7-e8",
    "d1-c2",
    "h8-g8",
    "g4-f5",
    "f6-g5",
    "c2-b3",
    "e8-f8",
    "d1-c2",
    "a6-a5",
    "d3-e2",
]


@pytest.mark.parametrize("plies", [0, len(GOLDEN_RECORD)])
def test_golden_board(plies):
    """The drawing after a fixed record."""
    text = render_board(GAME.replay(2, {}, GOLDEN_RECORD[:plies]))
    assert_golden(f"polis_board_{plies}.txt", text, "the Polis board drawing")

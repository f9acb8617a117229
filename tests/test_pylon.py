"""Pylon: the examples of the help text, the readings we chose, and properties of random games.

Positions are written with board-point helpers: ``B("c", 4)`` is board point (column c, row 4)
of the ordinary n x n board, i.e. doubled-grid cell ``e7``; ``U("c", 4)`` is the level-1 point
resting on c4, d4, c5 and d5 (cell ``f8``); ``"2" + B(...)`` the level-2 point on that cell.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbmserv.games import get_game
from pbmserv.games.base import PASS, SWAP, Capture, IllegalMove, UnreadableMove
from pbmserv.games.pylon import EMPTY, GAME, PylonPosition, geometry, pyramid
from pbmserv.render.templates import render_board

O, X, V, Z = 0, 1, 2, 3  # noqa: E741
GOLDEN = Path(__file__).parent / "golden" / "pylon_move_counts.json"


def new(players: int = 2, size: int = 6) -> PylonPosition:
    pos = GAME.new(players, {"size": size})
    assert isinstance(pos, PylonPosition)
    return pos


def replay(players: int, size: int, record: list[str]) -> PylonPosition:
    pos = GAME.replay(players, {"size": size}, record)
    assert isinstance(pos, PylonPosition)
    return pos


def B(col: str, row: int) -> str:
    """Doubled-grid name of board point (col, row) of the plain n x n board."""
    return f"{chr(97 + 2 * (ord(col) - 97))}{2 * row - 1}"


def U(col: str, row: int) -> str:
    """Doubled-grid name of the level-1 point resting on (col, row) and the three up-right."""
    return f"{chr(98 + 2 * (ord(col) - 97))}{2 * row}"


def pid(pos: PylonPosition, text: str, level: int | None = None) -> int:
    """The point index a name denotes at a given level (default: the lowest of its cell)."""
    geo = pos.geo
    col, row = ord(text[0]) - 97, int(text[1:]) - 1
    pts = geo.at[col, row]
    return pts[0] if level is None else next(p for p in pts if geo.level[p] == level)


def owners(pos: PylonPosition) -> dict[tuple[int, str], int]:
    g = pos.geo
    return {(g.level[p], g.names[p]): c for p, c in enumerate(pos.board) if c != EMPTY}


def added(before: PylonPosition, after: PylonPosition) -> dict[tuple[int, str], int]:
    a, b = owners(before), owners(after)
    assert all(b[k] == v for k, v in a.items()), "marbles never change colour or vanish"
    return {k: v for k, v in b.items() if k not in a}


# --------------------------------------------------------------------------- help examples


def example_a() -> PylonPosition:
    pieces = [(B("b", 4), X)]
    for r in (1, 2, 3):
        pieces += [(B("a", r), O), (B("b", r), O), (B("c", r), X)]
    pieces.append((U("a", 1), O))
    return PylonPosition.set_up(pieces, size=5, to_move=X)


def test_example_a_in_place_capture_stacks_up_to_level_2():
    pos = example_a()
    after = pos.copy()
    after.push_text(B("a", 4))
    assert added(pos, after) == {
        (0, B("a", 4)): X,
        (1, U("a", 3)): X,
        (1, U("a", 2)): X,
        (1, U("b", 2)): X,
        (1, U("b", 1)): X,
        (2, B("b", 2)): X,  # rests on the captured O level-1 marble, valid only after the rest
    }
    assert after.to_move == O
    assert after.scores() == [7, 10]


def test_example_b_capture_without_stacking():
    pos = PylonPosition.set_up([(B("a", 3), X), (B("b", 3), O), (B("a", 2), O)], size=5, to_move=O)
    x_marble = pid(pos, B("a", 3))
    assert pos.geo.level[x_marble] == 0
    after = pos.copy()
    after.push_text(B("a", 4))
    assert added(pos, after) == {(0, B("a", 4)): O}
    # the X marble was captured (no board-level freedom) yet stays and scores
    assert after.dead_group(x_marble, 0, after.board) == {x_marble}
    assert after.scores() == [3, 1]


def test_example_c_suicide_refused():
    pos = PylonPosition.set_up([(B("a", 4), O), (B("b", 3), O), (B("a", 2), O)], size=5, to_move=X)
    with pytest.raises(IllegalMove, match="suicide"):
        pos.parse_move(B("a", 3))
    assert pid(pos, B("a", 3)) not in set(pos.legal_moves())
    assert pos.parse_move(B("c", 3)) == pid(pos, B("c", 3))  # elsewhere is fine


def test_example_d_legal_thanks_to_its_capture():
    pos = PylonPosition.set_up(
        [(B("a", 5), O), (B("b", 4), O), (B("a", 3), O), (B("b", 3), X), (B("a", 2), X)],
        size=6,
        to_move=X,
    )
    after = pos.copy()
    after.push_text(B("a", 4))
    assert added(pos, after) == {(0, B("a", 4)): X, (1, U("a", 3)): X}
    new = pid(after, B("a", 4))
    group = after.group(new)
    assert pid(after, B("b", 3)) in group  # linked through the added level-1 marble
    assert after.dead_group(new, 0, after.board) is None  # a freedom on the board level
    assert not any(after._free(q, after.board) for q in after.geo.nbrs[new])


def example_e(to_move: int = X) -> PylonPosition:
    pieces = [(B(c, 4), O) for c in "bcd"] + [(B(c, 3), X) for c in "bcd"]
    pieces += [(B("b", 2), O), (B("c", 2), O), (U("b", 3), O), (U("b", 2), O)]
    return PylonPosition.set_up(pieces, size=5, to_move=to_move)


def test_example_e_overpass_cuts_and_point_e_is_suicide_for_both():
    pos = example_e()
    left, mid, right = (pid(pos, B(c, 3)) for c in "bcd")
    assert pos.group(left) == {left}
    assert pos.group(mid) == {mid, right}
    for seat in (X, O):
        pos = example_e(seat)
        with pytest.raises(IllegalMove, match="suicide"):
            pos.parse_move(U("c", 3))
        with pytest.raises(IllegalMove, match="suicide"):
            pos.parse_move("1" + U("c", 3))


def example_f() -> PylonPosition:
    pieces = [(B(c, r), O) for r in (5, 4) for c in "bcd"]
    pieces += [(B("b", 3), O), (B("c", 3), O), (B("d", 3), X), (B("e", 3), X)]
    pieces += [(B(c, 2), O) for c in "bcd"]
    pieces += [(U("b", 4), O), (U("b", 3), O), (U("c", 3), X), (U("c", 2), O)]
    return PylonPosition.set_up(pieces, size=6, to_move=O)


def test_example_f_level_1_capture_stacks_at_g_only():
    pos = example_f()
    level1_x = pid(pos, U("c", 3))
    group = pos.group(level1_x)
    assert group == {level1_x, pid(pos, B("d", 3)), pid(pos, B("e", 3))}
    assert pos.dead_group(level1_x, 0, pos.board) is None  # board-level freedoms exist ...
    after = pos.copy()
    after.push_text(U("c", 4))  # ... but 'f' is a level-1 move
    assert added(pos, after) == {(1, U("c", 4)): O, (2, B("c", 4)): O}  # 'g'


def test_level_prefix_is_checked():
    pos = example_f()
    g = B("c", 4)
    with pytest.raises(IllegalMove, match="next free level"):
        pos.parse_move("0" + g)
    with pytest.raises(IllegalMove, match="does not rest on four"):
        pos.parse_move("2" + g)
    with pytest.raises(IllegalMove, match="has no level 1"):
        pos.parse_move("1" + g)
    with pytest.raises(IllegalMove, match="not a point"):
        pos.parse_move("b3")
    with pytest.raises(IllegalMove, match="off the board"):
        pos.parse_move("z3")
    with pytest.raises(UnreadableMove):
        pos.parse_move("3")


def test_buried_marbles_are_out_of_connections():
    # X board points a1..c3 and the four X level-1 marbles on them; an O on level 2 over the
    # centre board point hides it
    pieces = [(B(c, r), X) for r in (1, 2, 3) for c in "abc"]
    pieces += [(U(c, r), X) for r in (1, 2) for c in "ab"]
    pos = PylonPosition.set_up(pieces, size=4, to_move=O)
    centre = pid(pos, B("b", 2))
    assert pos.visible(centre)
    assert centre in pos.group(pid(pos, B("a", 1)))
    pos = PylonPosition.set_up([*pieces, ("2" + B("b", 2), O)], size=4, to_move=X)
    assert not pos.visible(centre)
    assert centre not in pos.group(pid(pos, B("a", 1)))
    assert pos.group(centre) == {centre}


def test_edge_links_cannot_be_cut():
    geo = geometry(6)
    for p in range(geo.size):
        for q, u, _v in geo.links[p]:
            lv, side = geo.level[p], geo.n - geo.level[p]
            (cp, rp), (cq, rq) = geo.cell[p], geo.cell[q]
            on_edge = (rp == rq and rp in (lv, lv + 2 * (side - 1))) or (
                cp == cq and cp in (lv, lv + 2 * (side - 1))
            )
            assert (u < 0) == on_edge


# --------------------------------------------------------------------------- turns and ending


def test_full_pyramid_ends_the_game():
    geo = geometry(3)
    pieces = [
        (("" if geo.level[p] == 0 else str(geo.level[p])) + geo.names[p], p % 2)
        for p in range(geo.size)
    ]
    pos = PylonPosition.set_up(pieces, size=3)
    assert pos.to_move is None
    assert sum(pos.scores()) == pyramid(3) == 14
    outcome = pos.outcome()
    assert outcome is not None and outcome.winners == ()  # 7 - 7: a tie


def test_forced_pass_and_end():
    # size 3, found by random play: x has no legal placement (every point is suicide), o has
    pos = replay(2, 3, ["c3", "a3", "c5", "e5", "c1", "e1", "a5"])
    assert pos.to_move == X
    assert list(pos.legal_moves()) == [PASS]
    assert pos._legal_for(O)
    with pytest.raises(IllegalMove, match="must pass"):
        pos.parse_move("a1")
    pos.push_text("pass")
    assert pos.to_move == O
    assert PASS not in set(pos.legal_moves())
    with pytest.raises(IllegalMove):
        pos.parse_move("pass")


def test_three_player_tie_on_top_shares_the_win_and_resign_skips():
    pieces = [(B("a", 1), O), (B("c", 1), X), (B("a", 3), V), (B("c", 3), O)]
    pieces += [(B("b", 1), X)]
    pos = PylonPosition.set_up(pieces, size=3, players=3, to_move=O)
    assert pos.scores() == [2, 2, 1]
    pos.turn = None  # pretend nobody can place: score as it stands
    outcome = pos.outcome()
    assert outcome is not None and outcome.winners == (O, X)
    pos = new(3)
    pos.push_text("a1")
    assert pos.to_move == X
    pos.push_text("resign")
    assert pos.to_move == V
    pos.push_text("e1")
    assert pos.to_move == O  # x is skipped
    pos.push_text("resign")
    assert pos.to_move is None
    final = pos.outcome()
    assert final is not None and final.winners == (V,)
    assert pos.scores() == [1, 0, 1]


def test_swap_and_symbols():
    pos = get_game("pylon").new(2)
    assert [s.symbol for s in pos.seats()] == ["o", "x"]
    assert [s.symbol for s in get_game("pylon").new(4).seats()] == ["o", "x", "v", "z"]
    pos.push_text("c3")
    assert SWAP in set(pos.legal_moves())
    assert not get_game("pylon").new(3).swap_available()


def test_board_drawing():
    pos = example_f()
    pos.push_text(U("c", 4))
    text = render_board(pos)
    assert "o  player 1: 16 marbles" in text
    assert max(map(len, text.splitlines())) <= 76
    for size in (3, 11, 12, 13):
        text = render_board(get_game("pylon").new(4, {"size": size}))
        assert max(map(len, text.splitlines())) <= 76
        assert ("level 0:" in text) == (size >= 12)


# --------------------------------------------------------------------------- properties


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(3, 7),
    players=st.integers(2, 4),
)
def test_random_game_properties(seed, size, players):
    rng = random.Random(seed)
    pos = new(players, size)
    geo = pos.geo
    while pos.to_move is not None:
        moves = list(pos.legal_moves())
        pos.play(rng.choice(moves))
        board = pos.board
        assert sum(c != EMPTY for c in board) <= pyramid(size)
        for p, c in enumerate(board):
            if c != EMPTY and geo.level[p]:
                assert all(board[s] != EMPTY for s in geo.below[p])
        if all(c != EMPTY for c in board):
            assert pos.to_move is None
    sc = pos.scores()
    for seat in range(players):
        assert sc[seat] == pos.board.count(seat)
    outcome = pos.outcome()
    assert outcome is not None
    live = [s for s in range(players) if s not in pos.resigned]
    best = max(sc[s] for s in live)
    if outcome.winners:
        assert all(sc[w] == best for w in outcome.winners)
    # nobody could place any more
    for seat in live:
        assert not pos._legal_for(seat)


# --------------------------------------------------------------------------- golden counts


def golden_positions() -> dict[str, PylonPosition]:
    out = {"a": example_a(), "e": example_e(), "f": example_f()}
    for size, players, seed, depth in ((6, 2, 1, 30), (6, 2, 2, 45), (5, 3, 3, 25), (8, 4, 4, 70)):
        rng = random.Random(seed)
        pos = new(players, size)
        record = []
        for _ in range(depth):
            if pos.to_move is None:
                break
            moves = sorted(pos.legal_moves(), key=str)
            move = moves[rng.randrange(len(moves))]
            record.append(pos.format_move(move))
            pos.play(move)
        out[f"size{size}-{players}p-{seed}"] = replay(players, size, record)
    return out


def test_golden_move_counts():
    got = {name: len(list(pos.legal_moves())) for name, pos in golden_positions().items()}
    want = json.loads(GOLDEN.read_text())
    assert got == want


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(3, 6), players=st.integers(2, 3))
def test_quick_legality_agrees_with_full_simulation(seed, size, players):
    """The shortcut in move generation never disagrees with playing the move out in full."""
    rng = random.Random(seed)
    pos = new(players, size)
    while pos.to_move is not None:
        for seat in range(players):
            fast = pos._legal_for(seat)
            slow = {p: r for p in sorted(pos.valid) if (r := pos._simulate(p, seat)) is not None}
            assert fast == slow
        pos.play(rng.choice(list(pos.legal_moves())))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(3, 6), players=st.integers(2, 4))
def test_one_placement_and_the_turn_order_agree_with_every_placement(seed, size, players):
    """What the robots ask of one point (:meth:`placement`, before any move generation) and
    what the turn order asks (can a seat place at all) agree with the full list of placements."""
    rng = random.Random(seed)
    pos = new(players, size)
    while pos.to_move is not None:
        fresh = pos.copy()
        fresh._cache = None  # as in a position the search never generated moves for
        every = pos.copy().placements()
        assert {p: fresh.placement(p) for p in range(pos.geo.size)} == {
            p: every.get(p) for p in range(pos.geo.size)
        }
        for seat in range(players):
            assert pos._can_place(seat) == bool(pos._legal_for(seat))
        pos.play(rng.choice(list(pos.legal_moves())))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(3, 6), players=st.integers(2, 4))
def test_dead_group_is_the_group_without_a_freedom_on_its_level(seed, size, players):
    """The early-stopping fill behind captures and suicide agrees with its definition: the
    whole group, then a look at each of its marbles on the level for a free neighbour."""
    rng = random.Random(seed)
    pos = new(players, size)
    geo, board = pos.geo, pos.board

    def free(q: int) -> bool:
        return board[q] == EMPTY and all(board[s] != EMPTY for s in geo.below[q])

    while pos.to_move is not None:
        pos.play(rng.choice(list(pos.legal_moves())))
        board = pos.board
        for p in (p for p in range(geo.size) if board[p] != EMPTY):
            whole = pos.group(p)
            for level in range(size):
                touches = any(
                    geo.level[m] == level and any(free(q) for q in geo.nbrs[m]) for m in whole
                )
                assert pos.dead_group(p, level, board) == (None if touches else whole)


def test_capture_names_the_captured_marbles_and_the_points_filled():
    """What the board mail says of a placement (Position.capture): asked before it is played,
    it changes nothing; a quiet placement, or a pass, captures nothing."""
    pos = PylonPosition.set_up([("a1", O), ("c1", X), ("c3", O)], to_move=X)
    before = pos.serialize()
    assert pos.capture(pos.parse_move("a3")) == Capture({O: ("a1",)}, ("b2",))
    assert pos.serialize() == before
    assert pos.capture(pos.parse_move("e5")) is None and pos.capture(PASS) is None
    pos.push_text("a3")
    assert pos.board[pos.geo.names.index("b2")] == X  # the point it named is filled
    # a group of several marbles, covered by several
    pieces = [("a1", O), ("c1", O), ("a3", X), ("c3", X), ("e3", X)]
    pos = PylonPosition.set_up(pieces, size=4, to_move=X)
    assert pos.capture(pos.parse_move("e1")) == Capture({O: ("a1", "c1")}, ("b2", "d2"))


def test_the_board_says_who_wins():
    """The board mail counted marbles but never said that the most of them wins, once
    nobody can place."""
    text = " ".join(render_board(get_game("pylon").new(2, {"size": 3})).split())
    assert "The game ends when nobody can place: most marbles on the board wins" in text

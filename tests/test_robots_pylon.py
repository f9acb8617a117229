"""The Pylon robot's group safety: its scratch placement agrees with the engine, a group in atari
counts what its capture would fill (nothing behind a one-point eye), and the robot saves a group
in atari that extending saves."""

from __future__ import annotations

import random

import pytest

from pbmserv.games import get_game
from pbmserv.games.pylon import EMPTY, PylonPosition
from pbmserv.robots import Budget, budget_of, choose_move
from pbmserv.robots.pylon import LOST, PylonAdapter, place, safety
from pbmserv.robots.search import ProbeSearcher, Searcher, search


@pytest.mark.parametrize("players", [2, 3, 4])
def test_place_agrees_with_the_engine(players):
    """For every empty valid point of random games: None exactly when the engine refuses the
    point (suicide), else the engine's board after the move and the number of points filled."""
    rng = random.Random(players)
    checked = captures = 0
    for _ in range(6):
        pos = get_game("pylon").new(players, {"size": 4 + players % 2})
        assert isinstance(pos, PylonPosition)
        while pos.to_move is not None:
            seat = pos.to_move
            legal = set(pos.move_list())
            for p in sorted(pos.valid):
                result = place(pos, p, seat)
                assert (result is not None) == (p in legal), pos.format_move(p)
                if result is None:
                    continue
                child = pos.copy()
                child.play(p)
                board, filled = result
                assert board == child.board
                assert (
                    filled
                    == sum(c != EMPTY for c in child.board) - sum(c != EMPTY for c in pos.board) - 1
                )
                checked += 1
                captures += filled > 0
            pos.play(rng.choice(pos.move_list()))
    assert checked > 100 and captures > 0  # the games tested captures too


def atari(to_move: int = 1) -> PylonPosition:
    """o's group a3-c1-c3 (seat 0) has one freedom on the board level, a1; x (seat 1) to move.
    x at a1 captures it and fills b2, b4 and d2 (every point resting on it that is full below)."""
    pieces = [("a3", 0), ("c3", 0), ("c1", 0), ("a5", 1), ("c5", 1), ("e3", 1), ("e1", 1)]
    return PylonPosition.set_up(pieces, size=4, to_move=to_move)


def test_a_group_in_atari_counts_what_its_capture_fills():
    pos = atari()
    hit = place(pos, pos.parse_move("a1"), 1)
    assert hit is not None and hit[1] == 3
    safe = safety(pos)
    assert safe[0] == -LOST * 3  # o will lose what x fills, not its group's size
    assert safe[1] > 0  # x to move takes it
    # with o to move, the same group cannot be saved (o at a1 is suicide): o loses the four
    # marbles of the exchange (the placement and the three filled points)
    mine = atari(to_move=0)
    assert place(mine, pos.parse_move("a1"), 0) is None
    assert safety(mine)[0] < 0


def saving() -> PylonPosition:
    """o (seat 0, to move) has c5-e5 in atari at e3; x at e3 would fill d4 and d6.  Extending
    to e3 gives the group the freedoms e1 and g3."""
    pieces = [("c5", 0), ("e5", 0), ("c7", 1), ("e7", 1), ("a5", 1), ("g5", 1), ("c3", 1)]
    return PylonPosition.set_up(pieces, size=5, to_move=0)


@pytest.mark.parametrize("budget", [Budget(nodes=10_000, depth=1), budget_of("easy")])
def test_the_robot_saves_a_group_in_atari(budget):
    pos = saving()
    e3 = pos.parse_move("e3")
    hit = place(pos, e3, 1)
    assert hit is not None and hit[1] == 2, "x at e3 must capture and fill two points"
    assert safety(pos)[0] == 0  # o to move can save it: nothing is lost yet
    result = choose_move(pos, budget)
    assert pos.format_move(result.move) == "e3"
    # any other move leaves the capture to x: the position after it says so
    other = pos.copy()
    other.play(pos.parse_move("a1"))
    assert safety(other)[0] < 0 < safety(other)[1]


def random_positions(players: int, count: int, seed: int) -> list[PylonPosition]:
    """Positions of random games on the standard board, every fifth ply."""
    rng = random.Random(seed)
    out: list[PylonPosition] = []
    while len(out) < count:
        pos = get_game("pylon").new(players, {})
        assert isinstance(pos, PylonPosition)
        while pos.to_move is not None and len(out) < count:
            if pos.ply % 5 == 3:
                out.append(pos.copy())
            pos.play(rng.choice(pos.move_list()))
    return out


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_seats_vector_is_every_seats_evaluation(players):
    adapter = PylonAdapter()
    for pos in random_positions(players, 12, players):
        vector = adapter.evaluate_seats(pos)
        assert vector == [adapter.evaluate(pos, s) for s in range(players)]
        value = adapter.values(pos)
        assert vector == [value[s] - max(value[:s] + value[s + 1 :]) for s in range(players)]


def probe_line(adapter: PylonAdapter, pos: PylonPosition, robot: int, rounds: int) -> int:
    """The robot's value of the line from ``pos`` (the robot just moved), computed here: every
    other seat plays the move its own evaluation likes best (ties: the worst for the robot), the
    robot its own best between rounds; the least of its values at the ends of the rounds."""
    ends = []
    while True:
        assert pos.to_move is not None  # (no game of these tests ends within a line)
        mover = pos.to_move
        if mover == robot:
            ends.append(adapter.evaluate(pos, robot))
            if len(ends) == rounds:
                return min(ends)
        children = [adapter.play(pos, move) for move in pos.move_list()]
        ranked = [(adapter.evaluate_seats(child), child) for child in children]
        pos = max(ranked, key=lambda r: (r[0][mover], -r[0][robot]))[1]


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("rounds", [1, 3])
def test_the_probe_plays_the_move_whose_line_of_best_replies_ends_best(players, rounds):
    """With a budget for every line, the probe's move is the best by a line computed here:
    ``rounds`` rounds in which each other seat plays its statically best reply, the robot its
    own statically best move between them."""
    adapter = PylonAdapter()
    adapter.probe_rounds = rounds
    budget = Budget(nodes=10**6, depth=2)
    for pos in random_positions(players, 3, 10 + players)[1:]:
        robot = pos.to_move
        assert robot is not None
        result = ProbeSearcher(adapter, budget).run(pos)
        assert result.depth == players * rounds  # every seat's move, round after round
        values = {
            m: probe_line(adapter, adapter.play(pos, m), robot, rounds) for m in pos.move_list()
        }
        assert values[result.move] == max(values.values()) == result.score


def capture_ahead() -> PylonPosition:
    """Four players, x (seat 1) to move at ply 13 of a random game (4-3-3-3 marbles).  After c1
    and the replies every other seat likes best, x stands better than after i1 (one round), but
    in the second round o (seat 0) captures and stands five marbles up; after i1 nobody
    captures within three rounds."""
    pos = random_positions(4, 12, 24)[2]
    assert pos.ply == 13 and pos.to_move == 1
    return pos


def test_three_rounds_see_the_capture_that_one_round_misses():
    pos = capture_ahead()
    c1, i1 = pos.parse_move("c1"), pos.parse_move("i1")
    budget = Budget(nodes=10**6, depth=2)
    one = PylonAdapter()
    one.probe_rounds = 1
    assert ProbeSearcher(one, budget).run(pos).move == c1
    three = PylonAdapter()
    assert three.probe_rounds == 3
    assert ProbeSearcher(three, budget).run(pos).move == i1
    # one round: c1 is better; three rounds: o's capture makes it far worse
    assert probe_line(one, one.play(pos, c1), 1, 1) > probe_line(one, one.play(pos, i1), 1, 1)
    assert probe_line(one, one.play(pos, c1), 1, 3) < probe_line(one, one.play(pos, i1), 1, 3)
    after = one.play(pos, c1)
    for _ in range(7):  # e3 g3 i5 (the first round), c5 (x's own best), g1 i7, o's i1
        mover = after.to_move
        assert mover is not None
        after = max(
            (one.play(after, m) for m in after.move_list()),
            key=lambda c: (one.evaluate_seats(c)[mover], -one.evaluate_seats(c)[1]),
        )
    assert after.scores()[0] >= after.scores()[1] + 5


@pytest.mark.parametrize("level", ["easy", "normal", "strong"])
def test_every_level_probes_three_and_four_seats_and_searches_two_full_width(level):
    """The probe beat the paranoid search at every level with three or four players (the
    module docstring); two players keep alpha-beta."""
    adapter = PylonAdapter()
    budget = budget_of(level)
    for players in (3, 4):
        pos = random_positions(players, 2, 7)[1]
        chosen = search(pos, adapter, budget)
        probe = ProbeSearcher(adapter, budget).run(pos)
        assert (chosen.move, chosen.pv) == (probe.move, [probe.move])
        assert chosen.depth > players  # a line beyond the round of replies
    two = random_positions(2, 2, 7)[1]
    full = Searcher(adapter, Budget(nodes=300, depth=2)).run(two)
    chosen = search(two, adapter, Budget(nodes=300, depth=2))
    assert (chosen.move, chosen.depth, chosen.pv) == (full.move, full.depth, full.pv)


def test_the_probe_keeps_to_its_node_budget():
    adapter = PylonAdapter()
    pos = get_game("pylon").new(4, {})
    assert isinstance(pos, PylonPosition)
    first = len(pos.move_list())  # the static ranking of the robot's moves: one node each
    for nodes in (5, 200, 800):
        result = ProbeSearcher(adapter, Budget(nodes=nodes, depth=2)).run(pos)
        assert result.move in pos.move_list()
        assert result.nodes <= max(nodes, first + 1)  # (the node that ran out counts)

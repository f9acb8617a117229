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


def greedy_line(adapter: PylonAdapter, pos: PylonPosition, robot: int) -> PylonPosition:
    """From ``pos`` (the robot just moved), every other seat plays the move its own evaluation
    likes best (ties: the worst for the robot) until the robot is to move again."""
    while pos.to_move is not None and pos.to_move != robot:
        mover = pos.to_move
        best = None
        for move in pos.move_list():
            child = adapter.play(pos, move)
            assert child.to_move is not None  # (no game of these tests ends within a line)
            value = adapter.evaluate_seats(child)
            if best is None or (value[mover], -value[robot]) > (best[0][mover], -best[0][robot]):
                best = (value, child)
        assert best is not None
        pos = best[1]
    return pos


@pytest.mark.parametrize("players", [3, 4])
def test_the_probe_plays_the_move_whose_line_of_best_replies_ends_best(players):
    """With a budget for every line, the probe's move is the best by a line computed here: each
    later seat plays its statically best reply up to the robot's next turn."""
    adapter = PylonAdapter()
    budget = Budget(nodes=10**6, depth=2)
    for pos in random_positions(players, 3, 10 + players)[1:]:
        robot = pos.to_move
        assert robot is not None
        result = ProbeSearcher(adapter, budget).run(pos)
        assert result.depth == players  # the robot's move and one reply of every other seat
        ends = {m: greedy_line(adapter, adapter.play(pos, m), robot) for m in pos.move_list()}
        values = {m: adapter.evaluate(end, robot) for m, end in ends.items()}
        assert values[result.move] == max(values.values()) == result.score


def test_the_probe_serves_three_seats_at_a_depth_short_of_one_round():
    adapter = PylonAdapter()
    three = random_positions(3, 2, 7)[1]
    assert isinstance(ProbeSearcher(adapter, budget_of("easy")), Searcher)
    easy = search(three, adapter, budget_of("easy"))
    assert easy.depth == 3 and easy.pv == [easy.move]
    # a budget deep enough for a round (normal), two seats and four keep the paranoid search
    deep = search(three, adapter, Budget(nodes=300, depth=3))
    assert deep.depth <= 3 and len(deep.pv) >= 1 and deep.nodes <= 300 + len(three.move_list())
    two = random_positions(2, 2, 7)[1]
    assert search(two, adapter, budget_of("easy")).depth == 2
    four = random_positions(4, 2, 7)[1]
    paranoid = Searcher(adapter, budget_of("easy")).run(four)
    found = search(four, adapter, budget_of("easy"))
    assert (found.move, found.depth, found.pv) == (paranoid.move, paranoid.depth, paranoid.pv)
    assert found.depth == 2 and len(found.pv) == 2  # a full-width search, not a probe


def test_the_probe_keeps_to_its_node_budget():
    adapter = PylonAdapter()
    pos = get_game("pylon").new(4, {})
    assert isinstance(pos, PylonPosition)
    first = len(pos.move_list())  # the static ranking of the robot's moves: one node each
    for nodes in (5, 200, 800):
        result = ProbeSearcher(adapter, Budget(nodes=nodes, depth=2)).run(pos)
        assert result.move in pos.move_list()
        assert result.nodes <= max(nodes, first + 1)  # (the node that ran out counts)

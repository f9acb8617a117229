"""The robots' search finds forced wins in one and in two moves in hand-made positions of every
game (set up with each engine's documented set-up method), and plays legal, reproducible moves.

Every position is first checked by brute force (so a test cannot pass on a position where any
move wins), then the robot's choice is checked: a win in one must win at once; after a win in
two, every reply of the opponent must leave a win in one.
"""

from __future__ import annotations

import pytest

from pbmserv.games import get_game
from pbmserv.games.base import SWAP, Position
from pbmserv.games.plotto import PlottoPosition
from pbmserv.games.ploy import PloyPosition
from pbmserv.games.polis import PolisPosition
from pbmserv.games.pylon import PylonPosition
from pbmserv.robots import LEVELS, Budget, adapter_for, budget_of, choose_move
from pbmserv.robots.search import WIN

BUDGET = Budget(nodes=30_000)


def moves(pos: Position) -> list:
    return [m for m in pos.legal_moves() if m != SWAP]


def after(pos: Position, move) -> Position:
    child = pos.copy()
    child.play(move)
    return child


def wins_at_once(pos: Position, move) -> bool:
    seat = pos.to_move
    outcome = after(pos, move).outcome()
    return outcome is not None and outcome.winners == (seat,)


def wins_in_two(pos: Position, move) -> bool:
    """After ``move`` every reply of the (one) opponent leaves a win in one."""
    seat = pos.to_move
    child = after(pos, move)
    if child.to_move is None or child.to_move == seat:
        return False
    for reply in moves(child):
        grand = after(child, reply)
        outcome = grand.outcome()
        if outcome is not None and outcome.winners == (seat,):
            continue  # the reply was forced (a pass) and the game is over
        if grand.to_move != seat or not any(wins_at_once(grand, m) for m in moves(grand)):
            return False
    return True


# ----------------------------------------------------------------------------- positions


def ploy_win_in_one() -> Position:
    # green's heavy lance on a6 looks north along a7, a8 to the red commander on a9
    return PloyPosition.setup(
        2,
        pieces={
            "e1": ("green", "commander", "NE NW SE SW"),
            "a6": ("green", "heavy lance", "NW N NE"),
            "a9": ("red", "commander", "NE NW SE SW"),
            "b8": ("red", "shield", "N"),
            "i9": ("red", "light lance", "NW NE S"),
        },
    )


def ploy_win_in_two() -> Position:
    # the lance must first turn north (+2); the red commander is walled in by its own shield
    return PloyPosition.setup(
        2,
        pieces={
            "e1": ("green", "commander", "NE NW SE SW"),
            "a6": ("green", "heavy lance", "NE E SE"),
            "a9": ("red", "commander", "NE NW SE SW"),
            "b8": ("red", "shield", "N"),
            "i9": ("red", "shield", "N"),
        },
    )


def ploy_four_players() -> Position:
    # four players: red can take yellow's commander (and with it yellow's army)
    return PloyPosition.setup(
        4,
        pieces={
            "a1": ("green", "commander", "N E S W"),
            "b2": ("green", "shield", "NE"),
            "a9": ("red", "commander", "N E S W"),
            "e5": ("red", "medium lance", "W N E"),
            "e8": ("yellow", "commander", "N E S W"),
            "i8": ("yellow", "shield", "S"),
            "i1": ("blue", "commander", "N E S W"),
            "h2": ("blue", "shield", "NW"),
        },
        turn=1,
    )


def polis_win_in_one() -> Position:
    return PolisPosition.from_diagram(
        """
        ........
        .......R
        ........
        ........
        ........
        r.......
        ..B.....
        ........
        """
    )


def polis_win_in_two() -> Position:
    return PolisPosition.from_diagram(
        """
        ........
        ........
        .......R
        ........
        ........
        ..B.....
        ........
        ........
        """
    )


def pylon_win_in_one() -> Position:
    moves_ = [("e5", 0), ("e1", 1), ("c1", 0), ("c3", 1), ("a5", 0), ("e3", 1), ("c5", 0)]
    return PylonPosition.set_up(moves_, size=3, to_move=1)


def pylon_win_in_two() -> Position:
    # only a5 wins: the others let x (seat 1) keep a marble more at the end
    moves_ = [("e3", 0), ("e1", 1), ("c3", 0), ("e5", 1), ("a1", 0), ("a3", 1)]
    return PylonPosition.set_up(moves_, size=3, to_move=0)


def plotto_win_in_one() -> Position:
    # a column 1 3 4 .: a 1 below completes 1..1 for player 1
    return PlottoPosition.from_pieces({(0, 0): 1, (0, 2): 3, (0, 4): 4, (1, 5): 2})


def plotto_three_win_in_one() -> Position:
    # three players: player 2 (number 2) closes 2 3 1 2 on the column
    return PlottoPosition.from_pieces(
        {(0, 0): 2, (0, 2): 3, (0, 4): 1, (1, 5): 4, (-1, 5): 3}, players=3, turn=1
    )


def plotto_win_in_two() -> Position:
    # player 2 to move has one placement that leaves two threats of 2..2 (from a real game)
    pieces = {
        (0, 0): 2,
        (1, 1): 4,
        (0, 2): 3,
        (1, -1): 1,
        (2, 0): 3,
        (2, 2): 2,
        (-1, 1): 4,
        (3, 1): 1,
        (-1, -1): 1,
        (2, -2): 2,
        (0, -2): 3,
    }
    return PlottoPosition.from_pieces(pieces, turn=1)


WIN_IN_ONE = {
    "ploy": ploy_win_in_one,
    "polis": polis_win_in_one,
    "pylon": pylon_win_in_one,
    "plotto": plotto_win_in_one,
    "plotto-3": plotto_three_win_in_one,
}
WIN_IN_TWO = {
    "ploy": ploy_win_in_two,
    "polis": polis_win_in_two,
    "pylon": pylon_win_in_two,
    "plotto": plotto_win_in_two,
}


@pytest.mark.parametrize("name", sorted(WIN_IN_ONE))
def test_robot_finds_a_win_in_one(name):
    pos = WIN_IN_ONE[name]()
    legal = moves(pos)
    winning = [m for m in legal if wins_at_once(pos, m)]
    assert winning and len(winning) < len(legal), "the position must test something"
    result = choose_move(pos, BUDGET)
    assert result.move in winning, pos.format_move(result.move)
    assert result.score >= WIN - 2


@pytest.mark.parametrize("name", sorted(WIN_IN_TWO))
def test_robot_finds_a_win_in_two(name):
    pos = WIN_IN_TWO[name]()
    legal = moves(pos)
    assert not any(wins_at_once(pos, m) for m in legal), "no win in one here"
    winning = [m for m in legal if wins_in_two(pos, m)]
    assert winning and len(winning) < len(legal), "the position must test something"
    result = choose_move(pos, BUDGET)
    assert result.move in winning, pos.format_move(result.move)
    assert result.score >= WIN - 4


def test_four_player_ploy_robot_takes_a_commander():
    pos = ploy_four_players()
    result = choose_move(pos, BUDGET)
    assert pos.format_move(result.move) == "e5xe8"
    after_capture = after(pos, result.move)
    assert after_capture.seats()[2].in_play is False


def test_node_budget_play_is_reproducible_and_legal():
    game = get_game("ploy")
    pos = game.new(2, {})
    for _ in range(4):
        first = choose_move(pos, Budget(nodes=1500))
        again = choose_move(pos.copy(), Budget(nodes=1500))
        assert first.move == again.move and first.nodes == again.nodes
        assert first.move in moves(pos)
        pos.play(first.move)


@pytest.mark.parametrize(
    ("game", "players", "params"),
    [
        ("ploy", 4, {}),
        ("ploy", 4, {"partnership": True}),
        ("ploy", 4, {"partnership": True, "classic": True}),
        ("pylon", 3, {"size": 4}),
        ("pylon", 4, {"size": 4}),
        ("plotto", 3, {}),
        ("plotto", 4, {}),
        ("plotto", 2, {"tournament": True}),
        ("polis", 2, {}),
        ("ploy", 2, {"classic": True, "relaxed": True}),
    ],
)
def test_every_variant_plays_legal_moves(game, players, params):
    pos = get_game(game).new(players, params)
    for _ in range(3):
        if pos.to_move is None:
            break
        result = choose_move(pos, Budget(nodes=400))
        assert result.move in list(pos.legal_moves())
        pos.play(result.move)


def test_levels_and_adapters():
    assert budget_of("strong") == LEVELS["strong"]
    assert budget_of("nodes=123").nodes == 123
    assert budget_of("seconds=0.5").seconds == 0.5
    assert budget_of("nodes=123").seconds == 60  # every budget is bounded in time
    assert budget_of("seconds=60").seconds == 60
    # unbounded ones held every robot (and a shell command waiting for one) for ever
    bad_ones = ("seconds=1e9", "seconds=inf", "seconds=nan", "nodes=99999999999999999999")
    for bad in ("", "nodes=0", "seconds=x", "godlike", *bad_ones):
        with pytest.raises(ValueError):
            budget_of(bad)
    assert type(adapter_for("nim")).__name__ == "Adapter"
    assert type(adapter_for("ploy")).__name__ == "PloyAdapter"


def ploy_four_commander_en_prise() -> Position:
    # four players, green to move: blue's lance on a3 aims at green's commander on a1, and red's
    # heavy lance on e4 hangs to green's lance on e2; blue moves after red and yellow, beyond an
    # easy robot's horizon, so only the evaluation can tell green that taking the lance loses
    return PloyPosition.setup(
        4,
        pieces={
            "a1": ("green", "commander", "N E S W"),
            "e2": ("green", "medium lance", "N E W"),
            "h1": ("green", "shield", "N"),
            "i9": ("red", "commander", "N E S W"),
            "e4": ("red", "heavy lance", "S E W"),
            "h9": ("red", "shield", "S"),
            "i5": ("yellow", "commander", "N E S W"),
            "i4": ("yellow", "shield", "S"),
            "a9": ("blue", "commander", "N E S W"),
            "a3": ("blue", "medium lance", "S E W"),
            "b9": ("blue", "shield", "S"),
        },
        turn=0,
    )


def commander_attacked_by(pos: PloyPosition, seat: int) -> bool:
    """Whether ``seat``, were it to move in ``pos``, could take green's commander."""
    trial = pos.copy()
    trial.turn = seat
    square = next(sq for sq, p in enumerate(trial.board) if p and p >> 8 & 15 == 0 and not p >> 12)
    return any(m >> 7 & 127 == square and m & 127 != square for m in trial.move_list())


@pytest.mark.parametrize("level", ["easy", "normal"])
def test_four_player_ploy_robot_saves_its_commander_from_a_later_seat(level):
    pos = ploy_four_commander_en_prise()
    assert isinstance(pos, PloyPosition)
    assert commander_attacked_by(pos, 3)
    grab = next(m for m in moves(pos) if pos.format_move(m) == "e2xe4")
    assert commander_attacked_by(after(pos, grab), 3)  # grabbing leaves the commander hanging
    result = choose_move(pos, LEVELS[level])
    assert result.move != grab
    assert not commander_attacked_by(after(pos, result.move), 3), pos.format_move(result.move)

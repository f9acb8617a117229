"""Ploy: the manual's examples, the setups, perft counts, scenarios and random-game properties."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbmserv.games import get_game
from pbmserv.games.base import PASS, RESIGN, AmbiguousMove, IllegalMove, UnreadableMove
from pbmserv.games.ploy import NAMES, SQUARE, PloyPosition
from pbmserv.render.templates import render_board

GAME = get_game("ploy")
GOLDEN = Path(__file__).parent / "golden" / "ploy_perft.json"


def setup(pieces, players=2, turn=0, **params) -> PloyPosition:
    return PloyPosition.setup(players, params, pieces, turn)


def motions_from(position: PloyPosition, square: str) -> set[str]:
    """Canonical texts of the motion moves (no turn) of the piece on ``square``."""
    out = set()
    for m in position.move_list():
        text = position.format_move(m)
        if text.startswith(square) and text[2] in "-x" and len(text) == 5:
            out.add(text)
    return out


# --------------------------------------------------------------------------- the manual


def test_manual_light_lance():
    """Figure 4: the light lance on e4 reaches d5, e3, e2, e1, hits f5, is blocked at c6."""
    p = setup(
        {
            "e4": ("green", "light lance", "NW NE S"),
            "c6": ("green", "shield", "N"),
            "f5": ("red", "shield", "S"),
            "h8": ("red", "shield", "S"),
            "a1": ("green", "commander", "NE NW SE SW"),
            "i9": ("red", "commander", "NE NW SE SW"),
        }
    )
    assert motions_from(p, "e4") == {"e4-d5", "e4-e3", "e4-e2", "e4-e1", "e4xf5"}
    with pytest.raises(IllegalMove, match="blocked at c6"):
        p.parse_move("e4-b7")
    with pytest.raises(IllegalMove, match="own side"):
        p.parse_move("e4-c6")
    with pytest.raises(IllegalMove, match="blocked at f5"):
        p.parse_move("e4-g6")
    with pytest.raises(IllegalMove, match="at most 3 points"):
        p.parse_move("e4-a8")
    with pytest.raises(IllegalMove, match="no flag pointing north"):
        p.parse_move("e4-e5")
    assert p.parse_move("e4-f5") == p.parse_move("E4XF5")
    p.push_text("e4xf5")
    assert p.piece_at("f5") == ("green", "light lance", ["NE", "S", "NW"])


def test_manual_heavy_probe_turn():
    """Figure 5: a heavy probe on c3 turned by 135 degrees (f3+3 style notation)."""
    p = setup(
        {
            "c3": ("green", "heavy probe", "N NE"),
            "a1": ("green", "commander", "NE NW SE SW"),
            "i9": ("red", "commander", "NE NW SE SW"),
        }
    )
    move = p.parse_move("c3+3")
    assert p.format_move(move) == "c3+3"
    assert p.parse_move("c3-5") == move
    p.play(move)
    assert p.piece_at("c3")[2] == ["SW", "W"]  # N+3 = SW, NE+3 = W
    q = setup({"c3": ("green", "heavy probe", "N NE"), "i9": ("red", "commander", "N E S W")})
    q.push_text("c3-3")
    assert q.piece_at("c3")[2] == ["SE", "S"]


def test_manual_shield_combined_move():
    """Figure 6: the shield moves e7-d6 and turns by 90 degrees."""
    p = setup(
        {
            "e7": ("green", "shield", "SW"),
            "a1": ("green", "commander", "NE NW SE SW"),
            "i9": ("red", "commander", "NE NW SE SW"),
        }
    )
    move = p.parse_move("e7-d6+2")
    assert p.format_move(move) == "e7-d6+2"
    assert p.parse_move("E7-D6-6") == move
    p.play(move)
    assert p.piece_at("e7") is None
    assert p.piece_at("d6") == ("green", "shield", ["SE"])
    q = setup({"e7": ("green", "shield", "SW"), "i9": ("red", "commander", "N E S W")})
    q.place("e6", "green", "light lance", "NW NE S")
    with pytest.raises(IllegalMove, match="only a shield"):
        q.parse_move("e6-d7+1")


# --------------------------------------------------------------------------- setups

DIAG = {"NE", "NW", "SE", "SW"}

# transcribed from DECISIONS.md (Ploy): square -> (colour, kind, flags)
TWO = {
    "e1": ("green", "commander", DIAG),
    "d1": ("green", "heavy lance", {"NW", "N", "NE"}),
    "f1": ("green", "heavy lance", {"NW", "N", "NE"}),
    "c1": ("green", "light lance", {"NW", "NE", "S"}),
    "g1": ("green", "light lance", {"NW", "NE", "S"}),
    "b1": ("green", "medium lance", {"W", "N", "E"}),
    "h1": ("green", "medium lance", {"W", "N", "E"}),
    "e2": ("green", "light probe", {"N", "S"}),
    "d2": ("green", "medium probe", {"NW", "NE"}),
    "f2": ("green", "medium probe", {"NW", "NE"}),
    "c2": ("green", "heavy probe", {"N", "NE"}),
    "g2": ("green", "heavy probe", {"N", "NW"}),
    "d3": ("green", "shield", {"N"}),
    "e3": ("green", "shield", {"N"}),
    "f3": ("green", "shield", {"N"}),
    "e9": ("red", "commander", DIAG),
    "d9": ("red", "heavy lance", {"SW", "S", "SE"}),
    "f9": ("red", "heavy lance", {"SW", "S", "SE"}),
    "c9": ("red", "light lance", {"SW", "SE", "N"}),
    "g9": ("red", "light lance", {"SW", "SE", "N"}),
    "b9": ("red", "medium lance", {"W", "S", "E"}),
    "h9": ("red", "medium lance", {"W", "S", "E"}),
    "e8": ("red", "light probe", {"S", "N"}),
    "d8": ("red", "medium probe", {"SW", "SE"}),
    "f8": ("red", "medium probe", {"SW", "SE"}),
    "c8": ("red", "heavy probe", {"S", "SE"}),
    "g8": ("red", "heavy probe", {"S", "SW"}),
    "d7": ("red", "shield", {"S"}),
    "e7": ("red", "shield", {"S"}),
    "f7": ("red", "shield", {"S"}),
}

PLUS = {"N", "E", "S", "W"}
FOUR = {
    # green, as tabulated
    "a1": ("green", "commander", PLUS),
    "a2": ("green", "heavy lance", {"N", "NE", "E"}),
    "b1": ("green", "medium lance", {"NE", "NW", "SE"}),
    "b2": ("green", "medium probe", {"N", "E"}),
    "a3": ("green", "heavy probe", {"E", "SE"}),
    "c1": ("green", "heavy probe", {"N", "NW"}),
    "c2": ("green", "shield", {"NE"}),
    "b3": ("green", "shield", {"NE"}),
    "c3": ("green", "shield", {"NE"}),
    # red, as tabulated (the medium lance is green's turned 90 degrees clockwise)
    "a9": ("red", "commander", PLUS),
    "b9": ("red", "heavy lance", {"E", "SE", "S"}),
    "a8": ("red", "medium lance", {"SE", "NE", "SW"}),
    "b8": ("red", "medium probe", {"E", "S"}),
    "a7": ("red", "heavy probe", {"NE", "E"}),
    "c9": ("red", "heavy probe", {"S", "SW"}),
    "b7": ("red", "shield", {"SE"}),
    "c7": ("red", "shield", {"SE"}),
    "c8": ("red", "shield", {"SE"}),
    # yellow: green's block turned 180 degrees about e5
    "i9": ("yellow", "commander", PLUS),
    "i8": ("yellow", "heavy lance", {"S", "SW", "W"}),
    "h9": ("yellow", "medium lance", {"SW", "SE", "NW"}),
    "h8": ("yellow", "medium probe", {"S", "W"}),
    "i7": ("yellow", "heavy probe", {"W", "NW"}),
    "g9": ("yellow", "heavy probe", {"S", "SE"}),
    "g8": ("yellow", "shield", {"SW"}),
    "h7": ("yellow", "shield", {"SW"}),
    "g7": ("yellow", "shield", {"SW"}),
    # blue: green's block turned 90 degrees counter-clockwise
    "i1": ("blue", "commander", PLUS),
    "h1": ("blue", "heavy lance", {"W", "NW", "N"}),
    "i2": ("blue", "medium lance", {"NW", "SW", "NE"}),
    "h2": ("blue", "medium probe", {"W", "N"}),
    "g1": ("blue", "heavy probe", {"N", "NE"}),
    "i3": ("blue", "heavy probe", {"W", "SW"}),
    "h3": ("blue", "shield", {"NW"}),
    "g2": ("blue", "shield", {"NW"}),
    "g3": ("blue", "shield", {"NW"}),
}


def _partnership() -> dict:
    out = {}
    rows = {
        "green": ("c9", "b9", "d9", "b8", "c8", "d8", "b7 c7 d7", "S"),
        "yellow": ("g9", "h9", "f9", "f8", "g8", "h8", "f7 g7 h7", "S"),
        "red": ("c1", "b1", "d1", "b2", "c2", "d2", "b3 c3 d3", "N"),
        "blue": ("g1", "h1", "f1", "f2", "g2", "h2", "f3 g3 h3", "N"),
    }
    for colour, (cmd, ml, hl, hp1, mp, hp2, shields, fwd) in rows.items():
        south = fwd == "S"
        out[cmd] = (colour, "commander", DIAG)
        out[ml] = (colour, "medium lance", {"W", "S" if south else "N", "E"})
        out[hl] = (colour, "heavy lance", {"SW", "S", "SE"} if south else {"NW", "N", "NE"})
        out[hp1] = (colour, "heavy probe", {"S", "SE"} if south else {"N", "NE"})
        out[mp] = (colour, "medium probe", {"SW", "SE"} if south else {"NW", "NE"})
        out[hp2] = (colour, "heavy probe", {"S", "SW"} if south else {"N", "NW"})
        for sq in shields.split():
            out[sq] = (colour, "shield", {fwd})
    return out


PARTNERSHIP = _partnership()


@pytest.mark.parametrize(
    "players,params,expected",
    [(2, {}, TWO), (4, {}, FOUR), (4, {"partnership": True}, PARTNERSHIP)],
    ids=["2p", "4p", "partnership"],
)
def test_initial_setup_square_by_square(players, params, expected):
    for classic in (False, True):
        p = GAME.new(players, {**params, "classic": classic})
        for name in NAMES:
            got = p.piece_at(name)
            want = expected.get(name)
            if want is None:
                assert got is None, name
            else:
                assert (got[0], got[1], set(got[2])) == want, name
        assert len(expected) == (30 if players == 2 else 36)


def test_partnership_seats_and_teams():
    p = GAME.new(4, {"partnership": True})
    infos = p.seats()
    assert [s.label for s in infos] == ["green", "red", "yellow", "blue"]
    assert [s.team for s in infos] == [0, 1, 0, 1]
    assert [s.team for s in GAME.new(4).seats()] == [None] * 4


# --------------------------------------------------------------------------- counts


def perft(position: PloyPosition, depth: int) -> int:
    if depth == 0 or position.to_move is None:
        return 1
    moves = list(position._generate())
    if depth == 1:
        return len(moves)
    total = 0
    for m in moves:
        child = position.copy()
        child._apply(m)
        total += perft(child, depth - 1)
    return total


def divide(position: PloyPosition, depth: int) -> dict[str, int]:
    out = {}
    for m in position._generate():
        child = position.copy()
        child._apply(m)
        out[position.format_move(m)] = perft(child, depth - 1)
    return out


def test_initial_move_counts():
    counts = json.loads(GOLDEN.read_text())["start"]
    for key, want in counts.items():
        players, _, flags = key.partition(" ")
        params = {f.lstrip("-"): True for f in flags.split()}
        assert len(GAME.new(int(players), params).move_list()) == want, key


@pytest.mark.parametrize("variant", ["2", "2 -classic"])
def test_perft(variant):
    data = json.loads(GOLDEN.read_text())["perft"][variant]
    params = {f.lstrip("-"): True for f in variant.split()[1:]}
    start = GAME.new(2, params)
    for depth_text, want in data["total"].items():
        depth = int(depth_text)
        got = perft(start, depth)
        if got != want:
            got_div = divide(start, depth)
            want_div = data.get(f"divide{depth}", {})
            diff = {
                k: (got_div.get(k), want_div.get(k))
                for k in set(got_div) | set(want_div)
                if got_div.get(k) != want_div.get(k)
            }
            print(json.dumps(dict(sorted(got_div.items())), indent=1))
            pytest.fail(f"perft({depth}) = {got}, expected {want}; divide differences: {diff}")


# --------------------------------------------------------------------------- scenarios

C = ("commander", "NE NW SE SW")


def test_two_player_commander_capture_and_hash():
    p = setup(
        {
            "e4": ("green", "shield", "N"),
            "e1": ("green", *C),
            "e5": ("red", *C),
            "a9": ("red", "shield", "S"),
        }
    )
    move = p.parse_move("e4xe5")
    assert p.format_move(move) == "e4xe5#"
    assert p.parse_move("E4-E5#") == move
    p.play(move)
    assert p.outcome().winners == (0,)
    assert p.to_move is None
    assert not p.seats()[1].in_play


def test_hash_refused_on_a_move_that_does_not_end_the_game():
    p = GAME.new(2)
    with pytest.raises(IllegalMove, match="does not end the game"):
        p.parse_move("e3-e4#")
    assert p.format_move(p.parse_move("e3-e4")) == "e3-e4"


@pytest.mark.parametrize("relaxed", [False, True])
def test_elimination_by_losing_all_other_pieces(relaxed):
    p = setup(
        {
            "a4": ("green", "heavy lance", "NW N NE"),
            "e1": ("green", *C),
            "e9": ("red", *C),
            "a5": ("red", "shield", "S"),
        },
        relaxed=relaxed,
    )
    text = "a4xa5" if relaxed else "a4xa5#"
    assert p.format_move(p.parse_move("a4xa5")) == text
    p.push_text("a4xa5")
    if relaxed:
        assert p.outcome() is None and p.to_move == 1
    else:
        assert p.outcome().winners == (0,)


def four(pieces, turn=0, **params) -> PloyPosition:
    return setup(pieces, players=4, turn=turn, **params)


def test_four_player_commander_capture_takes_over_and_skips():
    p = four(
        {
            "a1": ("green", *C),
            "b2": ("green", "shield", "N"),
            "b3": ("red", *C),
            "a9": ("red", "heavy lance", "S SE SW"),
            "i9": ("yellow", *C),
            "i1": ("blue", *C),
        }
    )
    p.push_text("b2xb3")
    assert p.outcome() is None
    assert (
        not p.seats()[1].in_play and "eliminated, commander captured by green" in p.seats()[1].note
    )
    assert p.to_move == 2  # red's turn is skipped
    p.push_text("i9+1")
    p.push_text("i1+1")
    assert p.to_move == 0
    p.push_text("a9-a8")  # green now moves red's lance
    assert p.piece_at("a8")[0] == "red"


def test_three_army_take_over_chain():
    p = four(
        {
            "a1": ("green", *C),
            "b2": ("green", "shield", "N"),
            "b3": ("red", *C),
            "a9": ("red", "heavy lance", "S SE SW"),
            "d4": ("yellow", "heavy lance", "W SW NW"),
            "i9": ("yellow", *C),
            "i1": ("blue", *C),
            "i6": ("blue", "heavy lance", "NW N NE"),
        }
    )
    p.push_text("b2xb3")  # green beats red and takes over red's army
    assert p.ctrl == [0, 0, 2, 3] and p.to_move == 2
    p.push_text("d4xa1")  # yellow beats green: green's army and red's pass to yellow
    seats = p.seats()
    assert not seats[0].in_play and "eliminated, commander captured by yellow" in seats[0].note
    assert p.ctrl == [2, 2, 2, 3]
    assert "also moves green, red" in p.board_context()["seats"][2]["text"]
    p.push_text("i1+1")
    assert p.to_move == 2
    p.push_text("a9-a8")  # yellow moves red's lance
    assert p.piece_at("a8")[0] == "red"
    p.push_text("i6xi9#")  # blue beats yellow and wins with all four armies
    assert p.outcome().winners == (3,)
    assert p.ctrl == [3, 3, 3, 3]


def test_four_player_bare_commander_default_and_classic():
    pieces = {
        "a1": ("green", *C),
        "b2": ("green", "shield", "N"),
        "b3": ("red", "shield", "S"),
        "a9": ("red", *C),
        "i9": ("yellow", *C),
        "i1": ("blue", *C),
    }
    p = four(pieces)
    p.push_text("b2xb3")
    assert not p.seats()[1].in_play
    assert p.piece_at("a9") == ("red", "commander", ["NE", "SE", "SW", "NW"])
    assert p.ctrl[1] == 0  # the bare commander passes to green
    q = four(pieces, classic=True)
    q.push_text("b2xb3")
    assert q.piece_at("a9") is None
    r = four(pieces, relaxed=True)
    r.push_text("b2xb3")
    assert r.seats()[1].in_play and r.piece_at("a9") is not None


def test_partnership_absorption_and_team_end():
    p = four(
        {
            "c9": ("green", *C),
            "c4": ("green", "shield", "N"),
            "c5": ("yellow", "shield", "S"),
            "c8": ("red", "shield", "N"),
            "c1": ("red", *C),
            "g9": ("yellow", *C),
            "g1": ("blue", *C),
            "g6": ("blue", "heavy lance", "NW N NE"),
        },
        turn=1,
        partnership=True,
    )
    p.push_text("c8xc9")  # red takes green's commander: green is absorbed by yellow
    assert p.outcome() is None
    infos = p.seats()
    assert not infos[0].in_play and "absorbed by yellow" in infos[0].note
    assert p.ctrl == [2, 1, 2, 3]
    p.push_text("g9+1")  # yellow
    p.push_text("g1+1")  # blue
    assert p.to_move == 0 and p.controller(0) == 2  # green's turn, played by yellow
    assert "green's turn is played by yellow" in render_board(p)
    with pytest.raises(IllegalMove, match="own side"):
        p.parse_move("c4xc5")  # the partner's piece blocks
    p.push_text("c4+1")  # yellow turns green's shield on green's turn
    assert p.to_move == 1
    p.push_text("c1+1")  # red
    p.push_text("g9+1")  # yellow
    assert p.format_move(p.parse_move("g6xg9")) == "g6xg9#"
    p.push_text("g6xg9")  # blue takes yellow's commander: the green+yellow team is beaten
    assert p.outcome().winners == (1, 3)
    assert p.to_move is None


def test_classic_partnership_turn_order():
    p = four(
        {
            "c9": ("green", *C),
            "c8": ("red", "shield", "N"),
            "c1": ("red", *C),
            "g9": ("yellow", *C),
            "g8": ("yellow", "shield", "S"),
            "g1": ("blue", *C),
            "g2": ("blue", "shield", "N"),
        },
        turn=1,
        partnership=True,
        classic=True,
    )
    p.push_text("c8xc9")  # red takes green's commander, green's last piece: green is out
    assert not p.seats()[0].in_play
    order = []
    for _ in range(8):
        seat = p.to_move
        order.append((seat, p.controller(seat)))
        p.play(next(m for m in p.legal_moves() if p.format_move(m).endswith(("+1", "-1"))))
    # B, C, D, C(for A), B, C, D, C ...
    assert order == [(2, 2), (3, 3), (0, 2), (1, 1), (2, 2), (3, 3), (0, 2), (1, 1)]


def test_classic_partnership_plays_on_without_commander():
    p = four(
        {
            "c9": ("green", *C),
            "a5": ("green", "shield", "N"),
            "c8": ("red", "shield", "N"),
            "c1": ("red", *C),
            "g9": ("yellow", *C),
            "g8": ("yellow", "shield", "S"),
            "g1": ("blue", *C),
            "g2": ("blue", "shield", "N"),
        },
        turn=1,
        partnership=True,
        classic=True,
    )
    p.push_text("c8xc9")
    assert p.seats()[0].in_play and "plays on" in p.seats()[0].note
    p.push_text("g9+1")
    p.push_text("g1+1")
    assert p.to_move == 0 and p.controller(0) == 0
    p.push_text("a5-a6")


def test_no_op_rotations_refused():
    p = GAME.new(2)
    with pytest.raises(IllegalMove, match="not a move"):
        p.parse_move("e1+2")  # the commander's X turned by 90 degrees
    with pytest.raises(IllegalMove, match="not a move"):
        p.parse_move("e2+4")  # the light probe's N-S turned by 180 degrees
    with pytest.raises(IllegalMove, match="not a move"):
        p.parse_move("e3+8")
    assert p.parse_move("e1-1") == p.parse_move("e1+3") == p.parse_move("e1+1")
    texts = [p.format_move(m) for m in p.move_list() if p.format_move(m).startswith("e1")]
    assert texts == ["e1+1"]
    assert p.format_move(p.parse_move("e3-4")) == "e3+4"
    assert p.format_move(p.parse_move("e3+5")) == "e3-3"
    q = GAME.new(2, {"classic": True})
    with pytest.raises(IllegalMove, match="one step"):
        q.parse_move("e3+2")
    assert q.format_move(q.parse_move("e3+7")) == "e3-1"


def test_error_messages():
    p = GAME.new(2)
    with pytest.raises(IllegalMove, match="no piece on e5"):
        p.parse_move("e5-e6")
    with pytest.raises(IllegalMove, match="not yours"):
        p.parse_move("e7-e6")
    with pytest.raises(UnreadableMove):
        p.parse_move("e3")
    with pytest.raises(UnreadableMove, match="not a point"):
        p.parse_move("j3-j4")
    with pytest.raises(IllegalMove, match="not on a line"):
        p.parse_move("e3-f5")
    with pytest.raises(IllegalMove, match="nothing to capture"):
        p.parse_move("e3xe4")
    with pytest.raises(IllegalMove, match="at most 1 point"):
        p.parse_move("e3-e5")


def test_resignations():
    p = GAME.new(2)
    p.play(RESIGN)
    assert p.outcome().winners == (1,)
    p = GAME.new(4)
    p.play(RESIGN)
    assert p.piece_at("a1") is None and not p.seats()[0].in_play
    assert p.to_move == 1
    for _ in range(3):
        p.play(p.parse_move(p.format_move(next(iter(p.move_list())))))
    assert p.to_move == 1  # green's turns are skipped
    p = GAME.new(4, {"partnership": True})
    p.play(RESIGN)  # green is absorbed by yellow
    assert p.ctrl[0] == 2 and p.piece_at("c9") is not None
    for _ in range(3):
        p.play(next(iter(p.move_list())))
    assert p.to_move == 0 and p.controller(0) == 2
    p.play(RESIGN)  # yellow resigns on green's turn: the team loses
    assert p.outcome().winners == (1, 3)


def test_pass_when_no_move():
    p = setup({"e1": ("green", *C), "e9": ("red", *C)})
    p.board[SQUARE["e1"]] = 0  # green has nothing at all (only possible in a set-up position)
    assert list(p.legal_moves()) == [PASS]


def test_board_drawing():
    for players, params in ((2, {}), (4, {}), (4, {"partnership": True})):
        text = render_board(GAME.new(players, params))
        lines = text.splitlines()
        assert max(map(len, lines)) <= 76
        assert all(32 <= ord(c) < 127 for line in lines for c in line)
        assert lines[0].split() == list("abcdefghi")
    text = render_board(GAME.new(2))
    assert " 1 |   .   -(M)-  (L)   (H)   (C)   (H)   (L)  -(M)-   .   | 1" in text
    assert "(X) green" in text and "[X] red" in text and "{X}" not in text


def test_help_text():
    text = (Path(__file__).parent.parent / "templates" / "help" / "ploy.txt").read_text()
    assert all(len(line) <= 76 for line in text.splitlines())
    assert text.isascii()
    for word in ("-partnership", "-classic", "-relaxed", "-swap", "e7-d6+2", "B, C, D, C"):
        assert word in text


# --------------------------------------------------------------------------- properties

ORDER = ("N", "NW", "W", "SW", "S", "SE", "E", "NE")
STEP = {"N": (0, 1), "NW": (-1, 1), "W": (-1, 0), "SW": (-1, -1)}
STEP.update({"S": (0, -1), "SE": (1, -1), "E": (1, 0), "NE": (1, 1)})
RANGE = {"commander": 1, "shield": 1}


def reference_moves(p: PloyPosition) -> set[tuple[str, str, frozenset[str]]]:
    """An independent, slow move generator: (from, to, flags afterwards)."""
    actor = p.controller(p.to_move)
    team = (lambda s: s % 2) if p.partnership else (lambda s: s)
    colours = ["green", "red", "yellow", "blue"]
    classic = bool(p.params.get("classic"))
    turns = (1, 7) if classic else range(1, 8)

    def turned(flags, k):
        return frozenset(ORDER[(ORDER.index(f) + k) % 8] for f in flags)

    out = set()
    for name in NAMES:
        piece = p.piece_at(name)
        if piece is None or p.ctrl[colours.index(piece[0])] != actor:
            continue
        _, kind, flags = piece
        flags = frozenset(flags)
        reach = RANGE.get(kind, len(flags))
        for k in turns:
            if turned(flags, k) != flags:
                out.add((name, name, turned(flags, k)))
        for f in flags:
            col, row = "abcdefghi".index(name[0]), int(name[1]) - 1
            for _ in range(reach):
                col, row = col + STEP[f][0], row + STEP[f][1]
                if not (0 <= col < 9 and 0 <= row < 9):
                    break
                target = f"{'abcdefghi'[col]}{row + 1}"
                other = p.piece_at(target)
                if other and team(p.ctrl[colours.index(other[0])]) == team(actor):
                    break
                out.add((name, target, flags))
                if kind == "shield":
                    for k in turns:
                        out.add((name, target, turned(flags, k)))
                if other:
                    break
    return out


def engine_moves(p: PloyPosition) -> set[tuple[str, str, frozenset[str]]]:
    out = set()
    for m in p.move_list():
        frm, to = NAMES[m & 127], NAMES[m >> 7 & 127]
        child = p.copy()
        child._apply(m)
        out.add((frm, to, frozenset(child.piece_at(to)[2])))
    return out


VARIANTS = [
    (2, {}),
    (2, {"classic": True}),
    (4, {}),
    (4, {"relaxed": True}),
    (4, {"partnership": True}),
    (4, {"partnership": True, "classic": True}),
]


@pytest.mark.parametrize("players,params", VARIANTS)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_games_match_reference(players, params, seed):
    rng = random.Random(seed)
    p = GAME.new(players, params)
    for ply in range(400):
        if p.to_move is None:
            break
        moves = p.move_list()
        assert len(set(moves)) == len(moves)
        if ply % 7 == 0:
            assert engine_moves(p) == reference_moves(p)
        texts = {p.format_move(m) for m in moves}
        assert len(texts) == len(moves)
        move = rng.choice(moves)
        text = p.format_move(move)
        assert p.parse_move(text) == move
        before = p.serialize()
        ends = text.endswith("#")
        p.play(move)
        outcome = p.outcome()
        drawn = outcome is not None and outcome.reason.startswith("drawn")  # endless-game rulings
        assert (outcome is not None and not drawn) == ends
        assert type(p).deserialize(p.serialize()).serialize() == p.serialize()
        assert before != p.serialize()
        live = [s for s in p.seats() if s.in_play]
        assert live
    out = p.outcome()
    if out is not None:
        assert p.to_move is None
        assert out.winners or out.reason.startswith("drawn")


MOVE_LIKE = r"\A[a-j][0-9]{1,2}([-x][a-j][0-9])?([+-][0-9]{1,2})?#?\Z"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.from_regex(MOVE_LIKE), seed=st.integers(min_value=0, max_value=20))
def test_move_like_texts_parse_to_legal_moves_or_say_why(text, seed):
    rng = random.Random(seed)
    players, params = VARIANTS[seed % len(VARIANTS)]
    p = GAME.new(players, params)
    for _ in range(rng.randrange(0, 40)):
        if p.to_move is None:
            break
        p.play(rng.choice(list(p.legal_moves())))
    if p.to_move is None:
        return
    try:
        move = p.parse_move(text)
    except (IllegalMove, UnreadableMove, AmbiguousMove) as exc:
        assert str(exc)
    else:
        assert move in set(p.legal_moves())
        assert p.parse_move(p.format_move(move)) == move


def test_same_point_texts():
    p = GAME.new(2)
    with pytest.raises(IllegalMove, match="must leave its point"):
        p.parse_move("e3-e3")
    assert p.parse_move("e3-e3+1") == p.parse_move("e3+1")


def test_flags_on_the_edge_files_keep_clear_of_the_frame():
    """A west flag of a piece on the a file was drawn against the frame (``1 |-(C)-``): a
    blank column inside each side of the frame keeps every flag apart from it."""
    text = render_board(GAME.new(4))
    rows = [line for line in text.splitlines() if line.startswith(("   |", " 1 |", " 9 |"))]
    assert " 1 | -(C)-  " in text and "-{C}- | 9" in text
    assert all(line[4] == " " and line.rstrip().rstrip("0123456789 ")[-2] == " " for line in rows)


def test_the_board_says_how_a_player_is_out_and_who_wins():
    """The board mail explained pieces, owners, flags and turns, but never what a player
    plays for: how he is out (strict or -relaxed) and that the last one (team) left wins."""
    ploy = get_game("ploy")

    def said(players: int, **params: bool) -> str:
        return " ".join(render_board(ploy.new(players, params)).split())

    strict = "A player is out when his commander is captured, or all the pieces he moves"
    assert strict + " but commanders; the last player left wins." in said(2)
    assert "is captured; the last player left wins." in said(4, relaxed=True)
    assert "; the last team left wins." in said(4, partnership=True)
    over = ploy.new(2, {})
    over.play(RESIGN)
    assert "player is out" not in render_board(over)

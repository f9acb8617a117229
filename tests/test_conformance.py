"""One conformance suite for every registered game (the game-engine contract, issue 2).

Random legal games are played to the end (hypothesis picks the seeds); along the way every legal
move's canonical text must parse back to the same move, replaying the record must give the same
serialised position, the outcome must agree with the seats in play, garbage must raise one of the
three move errors, and the board must draw as 7-bit ASCII within 76 columns.
"""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbmserv.games import all_games, get_game
from pbmserv.games.base import (
    FORFEIT,
    RESIGN,
    SWAP,
    AmbiguousMove,
    Game,
    IllegalMove,
    MoveError,
    ParamError,
    Position,
    UnreadableMove,
)
from pbmserv.render.templates import render_board

MAX_PLIES = 300  # long enough for most random games to finish; the rest are cut off


def variants(game: Game) -> list[tuple[int, dict[str, bool | int]]]:
    """Every player count with default parameters, and each flag parameter switched on alone."""
    out: list[tuple[int, dict[str, bool | int]]] = []
    for players in game.players:
        candidates: list[dict[str, bool | int]] = [{}]
        for p in game.params:
            if p.is_flag:
                candidates.append({p.name: True})
            elif p.minimum is not None:
                candidates.append({p.name: p.minimum})
        for params in candidates:
            try:
                game.check_players(players, {**game.defaults(), **params})
            except ValueError:
                continue
            out.append((players, params))
    return out


VARIANTS = [
    pytest.param(
        game.name, players, params, id=f"{game.name}-{players}p-{'-'.join(params) or 'default'}"
    )
    for game in all_games()
    for players, params in variants(game)
]

GARBAGE = [
    "",
    "   ",
    "zz99",
    "a0-a1",
    "!!",
    "e4-",
    "-",
    "1",
    "z",
    "a1a1a1a1a1",
    "\x00",
    "é5",
    "99-99",
]


def play_random_game(position: Position, rng: random.Random, resign_chance: float = 0.0):
    """Play random legal moves; return the list of canonical move texts."""
    record: list[str] = []
    while position.to_move is not None and len(record) < MAX_PLIES:
        moves = list(position.legal_moves())
        assert moves, "a position with a seat to move must have a legal move (PASS if forced)"
        move = RESIGN if resign_chance and rng.random() < resign_chance else rng.choice(moves)
        text = position.format_move(move)
        assert position.parse_move(text) == move
        record.append(text)
        position.play(move)
    return record


@pytest.mark.parametrize("name,players,params", VARIANTS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_game_contract(name, players, params, seed):
    game = get_game(name)
    rng = random.Random(seed)
    position = game.new(players, params)
    assert position.ply == 0
    record: list[str] = []
    while position.to_move is not None and len(record) < MAX_PLIES:
        seat = position.to_move
        assert 0 <= seat < players
        assert 0 <= position.controller(seat) < players
        moves = list(position.legal_moves())
        assert moves
        assert len(set(moves)) == len(moves), "legal_moves yields a move twice"
        texts = [position.format_move(m) for m in moves]
        assert len(set(texts)) == len(texts), "two legal moves share one canonical text"
        sample = moves if len(moves) <= 40 else rng.sample(moves, 40)
        for move in sample:
            text = position.format_move(move)
            assert position.parse_move(text) == move, text
            assert position.parse_move(text.upper()) == move, text
        move = rng.choice(moves)
        record.append(position.format_move(move))
        position.play(move)
        assert position.ply == len(record)
    check_end(position, players)
    replayed = game.replay(players, params, record)
    assert replayed.serialize() == position.serialize()
    restored = type(position).deserialize(position.serialize())
    assert restored.serialize() == position.serialize()
    assert sorted(map(restored.format_move, restored.legal_moves())) == sorted(
        map(position.format_move, position.legal_moves())
    )
    check_board(position)


def test_a_long_result_is_wrapped_on_the_board():
    """Found by the test above (seed 649): a 4-player draw among the players still in made a
    'Game over' line of 106 columns."""
    test_random_game_contract.hypothesis.inner_test("ploy", 4, {"classic": True}, 649)


def check_end(position: Position, players: int) -> None:
    outcome = position.outcome()
    if outcome is None:
        assert position.to_move is not None
        return
    assert position.to_move is None
    assert list(position.legal_moves()) == []
    assert outcome.reason
    assert all(0 <= w < players for w in outcome.winners)
    infos = position.seats()
    for w in outcome.winners:
        assert w not in position.resigned
        # a winner is in play, or the partner of one who is (an absorbed partnership seat)
        assert infos[w].in_play or any(
            infos[o].in_play and infos[o].team is not None and infos[o].team == infos[w].team
            for o in outcome.winners
        ), f"winner {w} is not in play"
    # a draw is among the seats still in: never one that resigned, always every one in play
    still_in = set(position.still_in())
    assert not still_in & position.resigned
    assert {i for i, s in enumerate(infos) if s.in_play} - position.resigned <= still_in
    with pytest.raises(IllegalMove):
        position.parse_move("pass")


def check_board(position: Position) -> None:
    text = render_board(position)
    assert text.strip()
    for line in text.splitlines():
        assert len(line) <= 76, f"board line longer than 76 columns: {line!r}"
        assert all(32 <= ord(c) < 127 for c in line), f"non-ASCII board line: {line!r}"


@pytest.mark.parametrize("name,players,params", VARIANTS)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_resignations_end_consistently(name, players, params, seed):
    """Random resignations never break the contract: the game goes on or ends with a winner."""
    game = get_game(name)
    rng = random.Random(seed)
    position = game.new(players, params)
    record = play_random_game(position, rng, resign_chance=0.05)
    check_end(position, players)
    assert game.replay(players, params, record).serialize() == position.serialize()


@pytest.mark.parametrize("name,players,params", VARIANTS)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_a_forfeit_decides_as_a_resignation_and_says_so(name, players, params, seed):
    """The clock's ``Forfeit`` is a resignation for the rules: the game goes on (or ends) the
    same way, move for move; only its words say "forfeited on time" where a resignation's
    say "resigned" (the result, the seat's note), also after a copy or a saved position."""
    rng = random.Random(seed)
    forfeit = get_game(name).new(players, params)
    for _ in range(rng.randrange(0, 40)):
        if forfeit.to_move is None:
            return
        forfeit.play(rng.choice([m for m in forfeit.legal_moves() if m != RESIGN]))
    if forfeit.to_move is None:
        return
    resign = forfeit.copy()
    forfeit.play(FORFEIT)
    resign.play(RESIGN)
    assert forfeit.forfeited and forfeit.resigned == resign.resigned
    for saved in (forfeit.copy(), type(forfeit).deserialize(forfeit.serialize())):
        assert saved.forfeited == forfeit.forfeited and saved.outcome() == forfeit.outcome()
    told, said = resign.outcome(), forfeit.outcome()
    if told is not None and "resigned" in told.reason:
        assert said is not None and "forfeited on time" in said.reason
    for before, after in zip(resign.seats(), forfeit.seats(), strict=True):
        if "resigned" in before.note:
            assert "forfeited on time" in after.note, (before.note, after.note)
    for _ in range(60):  # the same game from here on
        assert forfeit.to_move == resign.to_move
        assert (said is None) == (told is None) and (said is None or said.winners == told.winners)
        moves = sorted(map(forfeit.format_move, forfeit.legal_moves()))
        assert moves == sorted(map(resign.format_move, resign.legal_moves()))
        if not moves:
            break
        move = rng.choice(moves)
        forfeit.push_text(move)
        resign.push_text(move)
        told, said = resign.outcome(), forfeit.outcome()


@pytest.mark.parametrize("name,players,params", VARIANTS)
@settings(max_examples=25, deadline=None)
@given(text=st.text(alphabet=string.printable + "äöü§\u00e9\u2603", max_size=12))
def test_garbage_raises_move_errors_only(name, players, params, text):
    position = get_game(name).new(players, params)
    try:
        move = position.parse_move(text)
    except (UnreadableMove, IllegalMove, AmbiguousMove) as exc:
        assert str(exc), "a move error must say what is wrong"
    else:
        assert move == RESIGN or move in set(position.legal_moves())


@pytest.mark.parametrize("name", [g.name for g in all_games() if g.name != "nim"])
def test_fixed_garbage(name):
    game = get_game(name)
    position = game.new(game.min_players)
    for text in GARBAGE:
        with pytest.raises(MoveError):
            position.parse_move(text)


@pytest.mark.parametrize("name", [g.name for g in all_games()])
def test_parameters(name):
    game = get_game(name)
    assert game.parse_params([]) == game.defaults()
    with pytest.raises(ParamError) as info:
        game.parse_params(["-nosuchthing"])
    for p in game.params:
        assert p.name in str(info.value), "the error must name every valid parameter"
        unique = next(
            p.name[:k]
            for k in range(1, len(p.name) + 1)
            if [q.name for q in game.params if q.name.startswith(p.name[:k])] == [p.name]
        )
        value = "" if p.is_flag else f"={p.default}"
        assert p.name in game.parse_params([f"-{unique}{value}"])
        if p.is_flag:
            assert game.parse_params([f"-{p.name}"])[p.name] is True
            assert game.format_params(game.parse_params([f"-{p.name}"])) == [f"-{p.name}"]
        # given twice (also by a prefix): refused, not the last one taken in silence
        with pytest.raises(ParamError, match=f"-{p.name} is given twice"):
            game.parse_params([f"-{p.name}{value}", f"-{unique}{value}"])


@pytest.mark.parametrize("name", [g.name for g in all_games() if 2 in g.players])
def test_swap_exchanges_nothing_on_the_board(name):
    game = get_game(name)
    params = {"swap": True} if game.swap == "param" else {}
    if game.swap == "never":
        pytest.skip("no pie rule")
    position = game.new(2, params)
    assert not position.swap_available()
    first = next(m for m in position.legal_moves())
    position.play(first)
    seat = position.to_move
    before = position.board_context()
    assert position.swap_available()
    assert position.parse_move("swap") == SWAP
    position.play(SWAP)
    assert position.swapped
    assert position.to_move == seat, "after a swap the same seat (now the first player) moves"
    assert position.board_context() == before
    assert not position.swap_available()
    with pytest.raises(IllegalMove):
        position.parse_move("swap")


@pytest.mark.parametrize("name", [g.name for g in all_games()])
def test_new_board_renders(name):
    game = get_game(name)
    for players in game.players:
        check_board(game.new(players))


@pytest.mark.parametrize("name,players,params", VARIANTS)
def test_a_resignation_that_ends_the_game_names_who_left_in_the_players_terms(
    name, players, params
):
    """With two players the reason names the opponent ("the opponent resigned", "green
    resigned"), never "the others" (a two-player tournament board read "the others forfeited
    on time"); with more, never "the opponent"."""
    position = get_game(name).new(players, params)
    while position.to_move is not None:
        position.play(RESIGN)
    outcome = position.outcome()
    assert outcome is not None and "resigned" in outcome.reason, outcome
    if players == 2:
        assert "the others" not in outcome.reason, outcome
    else:
        assert "the opponent" not in outcome.reason, outcome

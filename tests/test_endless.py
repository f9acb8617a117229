"""Endless games (DECISIONS.md, "Endless games"): the third repetition of a position with the same
player to move, and 100 moves in a row without a capture, draw Ploy and Polis.  Through the
engines and through the dispatcher (board mail warnings, the reason in the mail and in ``show``).
"""

from __future__ import annotations

import random

import pytest

from pbmserv.games import get_game
from pbmserv.games.base import Position
from pbmserv.games.endless import QUIET_REASON, REPETITION_REASON

PLOY_SHUFFLE_2P = ["d3+1", "d7+1", "d3-1", "d7-1"]  # each side turns a shield there and back
PLOY_SHUFFLE_4P = ["a1+1", "a7+1", "i7+1", "g1+1", "a1-1", "a7-1", "i7-1", "g1-1"]
POLIS_SHUFFLE = ["h7-h6", "a2-a3", "h8-h7", "a1-a2"]  # hops bring every piece back


def _quiet_line(position: Position, moves: int, seed: int) -> list[str]:
    """Move texts that capture nothing, end nothing and never repeat a position a third time."""
    rng = random.Random(seed)
    texts: list[str] = []
    for _ in range(moves):
        candidates = [m for m in position.legal_moves() if str(m) not in ("swap", "resign")]
        rng.shuffle(candidates)
        for move in candidates:
            child = position.copy()
            child.play(move)
            quiet = child.draws.quiet == position.draws.quiet + 1  # type: ignore[attr-defined]
            if quiet and child.outcome() is None and child.repetitions() == 1:
                texts.append(position.format_move(move))
                position.play(move)
                break
        else:
            raise AssertionError("no quiet move found")
    return texts


def _play(position: Position, texts: list[str]) -> None:
    for text in texts:
        assert position.outcome() is None, text
        position.push_text(text)


# ----------------------------------------------------------------------------- engines


@pytest.mark.parametrize(
    ("game", "players", "shuffle"),
    [("ploy", 2, PLOY_SHUFFLE_2P), ("ploy", 4, PLOY_SHUFFLE_4P), ("polis", 2, POLIS_SHUFFLE)],
)
def test_third_repetition_draws(game, players, shuffle):
    position = get_game(game).new(players)
    _play(position, shuffle)  # back to the start: the second occurrence
    assert position.repetitions() == 2
    now = len(shuffle)
    assert position.draw_warnings()[0] == (
        f"The position now (after move {now}) has occurred twice: if it occurs again with the"
        " same player to move, the game is drawn."
    )
    _play(position, shuffle[:-1])
    assert position.outcome() is None  # the same position, but another player to move
    position.push_text(shuffle[-1])  # the third occurrence with the same player to move
    outcome = position.outcome()
    assert outcome is not None and outcome.draw and outcome.reason == REPETITION_REASON
    assert position.to_move is None and position.draw_warnings() == []
    saved = type(position).deserialize(position.serialize())
    assert saved.outcome() == outcome


def test_the_warning_names_the_positions_that_occurred_twice():
    """A position that occurred twice some moves ago is named by the move after which it last
    occurred (the warning used to say "a position" whichever it was, as if it were the one
    on the board); two such positions are named together."""
    position = get_game("ploy").new(2)
    _play(position, PLOY_SHUFFLE_2P)  # the start again, after move 4
    position.push_text("e3-e4")  # move 5: the position after move 4 is no longer on the board
    assert position.draw_warnings() == [
        "The position after move 4 has occurred twice: if it occurs again with the same player"
        " to move, the game is drawn."
    ]
    _play(position, ["d7+1", "d3+1", "d7-1", "d3-1"])  # the position after move 5 again
    warning = position.draw_warnings()[0]
    assert warning.startswith("The position after move 4 and the position now (after move 9)")
    assert warning.endswith(
        "have each occurred twice: if one of them occurs again with the same player to move,"
        " the game is drawn."
    )
    saved = type(position).deserialize(position.serialize())  # the plies are kept
    assert saved.draw_warnings() == position.draw_warnings()


@pytest.mark.parametrize(("game", "players"), [("ploy", 2), ("ploy", 4), ("polis", 2)])
def test_a_hundred_moves_without_a_capture_draw(game, players):
    position = get_game(game).new(players)
    line = _quiet_line(position.copy(), 99, seed=players)
    _play(position, line[:89])
    assert position.draw_warnings() == []  # 11 moves left: no warning yet
    position.push_text(line[89])
    assert position.draw_warnings() == [
        "90 moves without a capture: the game is drawn unless there is a capture within the "
        "next 10 moves."
    ]
    # the record survives saving and loading (the server keeps positions serialised)
    position = type(position).deserialize(position.serialize())
    _play(position, line[90:])
    assert position.outcome() is None and "next 1 move." in position.draw_warnings()[0]
    position.push_text(_quiet_draw(position))
    outcome = position.outcome()
    assert outcome is not None and outcome.draw and outcome.reason == QUIET_REASON


def _quiet_draw(position: Position) -> str:
    """A move that draws by the 100-move rule (the position has had 99 quiet moves)."""
    for move in position.legal_moves():
        child = position.copy()
        child.play(move)
        outcome = child.outcome()
        if outcome is not None and outcome.reason == QUIET_REASON:
            return position.format_move(move)
    raise AssertionError("no quiet move")


def test_a_capture_starts_the_count_again():
    from pbmserv.games.ploy import PloyPosition

    position = PloyPosition.setup(
        2,
        pieces={
            "e1": ("green", "commander", "N NE NW S"),
            "e9": ("red", "commander", "N NE NW S"),
            "a1": ("green", "shield", "N"),
            "a3": ("red", "light probe", "N S"),
            "i1": ("green", "heavy lance", "N NE NW"),
            "i9": ("red", "heavy lance", "S SE SW"),
        },
    )
    _play(position, ["i1+1", "i9+1", "i1-1", "i9-1"])  # the start again
    assert position.repetitions() == 2
    position.push_text("a1-a2")
    position.push_text("a3xa2")  # a hit: what came before can never occur again
    assert position.repetitions() == 1 and position.draw_warnings() == []
    assert position.draws.quiet == 0


def test_four_players_with_two_out_share_the_draw():
    """A draw is among the players still in: the eliminated (here resigned) keep their loss.
    The outcome is a draw (no winners: it was the shared win of yellow and blue before), and
    the position says who is still in to share it."""
    position = get_game("ploy").new(4)
    position.push_text("resign")  # green
    position.push_text("resign")  # red
    shuffle = ["i7+1", "g1+1", "i7-1", "g1-1"]  # yellow and blue
    _play(position, shuffle * 2)
    outcome = position.outcome()
    assert outcome is not None
    assert outcome.draw and outcome.reason == REPETITION_REASON
    assert position.still_in() == (2, 3)


def test_partnership_draw_is_a_draw_between_the_teams():
    position = get_game("ploy").new(4, {"partnership": True})
    texts = []
    for _seat in range(4):
        moves = sorted(position.format_move(m) for m in position.legal_moves())
        texts.append(next(t for t in moves if t.endswith("+1")))
        position.push_text(texts[-1])
    back = [t[:-2] + "-1" for t in texts]
    _play(position, back + texts + back)
    outcome = position.outcome()
    assert outcome is not None and outcome.draw and outcome.reason == REPETITION_REASON


# ----------------------------------------------------------------------------- dispatcher


@pytest.mark.parametrize(
    ("game", "users", "shuffle"),
    [
        ("ploy", ["alice", "bob"], PLOY_SHUFFLE_2P),
        ("ploy", ["alice", "bob", "carol", "dave"], PLOY_SHUFFLE_4P),
        ("polis", ["alice", "bob"], POLIS_SHUFFLE),
    ],
)
def test_repetition_draw_through_the_dispatcher(shell, game, users, shuffle):
    shell.signup(*users)
    shell.ok(f"{game} challenge {' '.join(users)}")
    mail = shell.play(game, shuffle)
    said = " ".join(mail.body.split())
    assert f"Draw near: the position now (after move {len(shuffle)}) has occurred twice" in said
    mail = shell.play(game, shuffle)
    assert "Game was a tie. (drawn by repetition" in mail.body
    assert mail.body.count("drawn by repetition") == 1  # said once: no 'Game over' under the board
    shown = shell.ok(f"{game} show 101").body
    assert "Game was a tie. (drawn by repetition: the same position a third time" in shown
    assert "is over" in shell(f"{game} move 101 alice pw-alice {shuffle[0]}").body


@pytest.mark.parametrize(
    ("game", "users"),
    [("ploy", ["alice", "bob"]), ("ploy", ["a1", "b2", "c3", "d4"]), ("polis", ["alice", "bob"])],
)
def test_quiet_draw_through_the_dispatcher(shell, game, users):
    line = _quiet_line(get_game(game).new(len(users)), 99, seed=len(users))
    shell.signup(*users)
    shell.ok(f"{game} challenge {' '.join(users)}")
    mail = shell.play(game, line[:89])
    assert "Draw near" not in mail.body
    mail = shell.play(game, line[89:90])
    assert "Draw near: 90 moves without a capture" in mail.body
    mail = shell.play(game, line[90:])
    from sqlalchemy import select

    from pbmserv.domain import boards
    from pbmserv.store.models import Board

    with shell.sessions() as s:
        position = boards.position_of(s.scalar(select(Board).where(Board.game == game)))
    mail = shell.play(game, [_quiet_draw(position)])
    assert f"Game was a tie. ({QUIET_REASON})" in mail.body
    assert f"Game was a tie. ({QUIET_REASON})" in shell.ok(f"{game} show 101").body


@pytest.mark.parametrize("game", ["ploy", "polis"])
def test_the_help_says_how_endless_games_end(shell, game):
    text = shell.ok(f"{game} help").body
    assert "The third time the same position occurs with the same player to" in text
    assert "100 moves in a row" in text and "warns" in text

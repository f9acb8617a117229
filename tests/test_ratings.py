"""Elo ratings per game type: hand-computed numbers, establishment, unrated games, standings."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from pbmserv.domain import ratings
from pbmserv.store.models import Rating, User


def rating_rows(shell, game="nim"):
    with shell.sessions() as s:
        rows = s.scalars(select(Rating).where(Rating.game == game)).all()
        return {r.user.userid: (r.rating, r.games, r.won, r.lost, r.tied) for r in rows}


def win_for_first(shell, players: str, number: int) -> None:
    """A Nim game with a one-stone pile: the first player takes it and wins."""
    shell.ok(f"nim challenge {players} -pile=1")
    first = players.split()[0]
    shell.ok(f"nim move {number} {first} pw-{first} 1")


def test_formula_by_hand():
    # equal ratings: expected 0.5 each, the winner gains K/2
    assert ratings.new_ratings([1600, 1600], [1, 0]) == [1616, 1584]
    # 1616 against 1584: expected score of 1584 is 1/(1+10^(32/400)) = 0.454078...
    e = 1 / (1 + 10 ** (32 / 400))
    assert e == pytest.approx(0.4540781, abs=1e-6)
    new = ratings.new_ratings([1616, 1584], [0, 1])
    assert new == pytest.approx([1616 - 32 * (1 - e), 1584 + 32 * (1 - e)])
    assert new == pytest.approx([1598.5305, 1601.4695], abs=1e-3)
    # three players: each against the average of the other two
    three = ratings.new_ratings([1700, 1600, 1500], [0, 1, 0])
    e_a = 1 / (1 + 10 ** ((1550 - 1700) / 400))  # 0.703385
    e_b = 1 / (1 + 10 ** ((1600 - 1600) / 400))  # 0.5
    e_c = 1 / (1 + 10 ** ((1650 - 1500) / 400))  # 0.296615
    assert three == pytest.approx([1700 - 32 * e_a, 1600 + 32 * (1 - e_b), 1500 - 32 * e_c])
    assert three == pytest.approx([1677.4917, 1616.0, 1490.5083], abs=1e-3)
    # a tie between equals changes nothing; a team of two winners both score 1
    assert ratings.new_ratings([1600, 1600], [0.5, 0.5]) == [1600, 1600]
    assert ratings.new_ratings([1600, 1600, 1600], [1, 1, 0])[:2] == [1616, 1616]


def test_two_player_games_are_rated_and_shown(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob -pile=1")
    end = shell.ok("nim move 101 alice pw-alice 1")
    assert "Game won by alice." in end.body
    assert "Rating changes: alice 1600 -> 1616, bob 1600 -> 1584" in end.body
    assert rating_rows(shell) == {
        "alice": (1616, 1, 1, 0, 0),
        "bob": (1584, 1, 0, 1, 0),
    }
    win_for_first(shell, "bob alice", 102)
    rows = rating_rows(shell)
    assert rows["alice"][0] == pytest.approx(1598.5305, abs=1e-3)
    assert rows["bob"][0] == pytest.approx(1601.4695, abs=1e-3)
    mail = shell.outbox()[-1]
    assert "Rating changes: bob 1584 -> 1601, alice 1616 -> 1599" in mail.body


def test_three_player_game_and_draw_agreement(shell):
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob carol -pile=1")
    shell.ok("nim move 101 alice pw-alice 1")
    assert {k: v[0] for k, v in rating_rows(shell).items()} == {
        "alice": 1616,
        "bob": 1584,
        "carol": 1584,
    }
    # a drawn game: alice (1616) expected more than 0.5 against 1584, so she loses points
    shell.ok("nim challenge alice bob")
    shell.ok("nim move 102 alice pw-alice propose")
    end = shell.ok("nim move 102 bob pw-bob accept")
    e = 1 / (1 + 10 ** (-32 / 400))
    rows = rating_rows(shell)
    assert rows["alice"][0] == pytest.approx(1616 + 32 * (0.5 - e))
    assert rows["alice"][4] == 1 and rows["bob"][4] == 1
    assert "Rating changes: alice 1616 -> 1615, bob 1584 -> 1585" in end.body


def test_unrated_games_change_nothing(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob -pile=1 --unrated")
    end = shell.ok("nim move 101 alice pw-alice 1")
    assert "Rating changes" not in end.body
    assert rating_rows(shell) == {}


def test_established_after_twenty_games_and_standings(shell, clock):
    shell.signup("alice", "bob", "carol", "dave")
    for i in range(20):
        first, second = ("alice", "bob") if i % 2 == 0 else ("bob", "alice")
        win_for_first(shell, f"{first} {second}", 101 + i)
    win_for_first(shell, "carol dave", 121)
    clock.advance(days=1)
    shell.ok("nim challenge carol alice")  # one active game each
    shell.ok("limit alice pw-alice 5")
    shell.ok("seek dave pw-dave 2")
    page = shell.ok("nim standings")
    assert page.subject == "Nim Standings"
    body = page.body
    established = body.split("Provisional players:")[0]
    provisional = body.split("Provisional players:")[1].split("Inactive players")[0]
    assert "alice" in established and "bob" in established
    assert "carol" in provisional and "dave" in provisional
    lines = {line.split()[0]: line.split() for line in body.splitlines() if line.startswith("  ")}
    assert lines["Player"] == ["Player", "Rating", "Won", "Lost", "Tied", "Active", "Limit", "Seek"]
    assert lines["alice"][2:] == ["10", "10", "0", "1", "5", "-"]
    assert lines["carol"] == ["carol", "1616", "1", "0", "0", "1", "-", "-"]
    assert lines["dave"][-1] == "2"
    assert shell.ok("nim ratings").body == body
    # half a year without a finished game makes a player inactive
    clock.advance(days=181)
    later = shell.ok("nim standings").body
    inactive = later.split("Inactive players")[1]
    assert "alice" in inactive and "bob" in inactive
    assert "Established players (20 or more rated games):\n  none" in later


def test_rating_ignores_closed_accounts_in_standings(shell):
    shell.signup("alice", "bob")
    win_for_first(shell, "alice bob", 101)
    shell.ok("signoff bob pw-bob")
    body = shell.ok("nim standings").body
    assert "alice" in body and "bob" not in body
    with shell.sessions() as s:
        assert s.scalar(select(User).where(User.userid == "bob")) is not None

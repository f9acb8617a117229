"""A draw is among the players still in (DECISIONS.md, "Endless games"): whoever resigned,
forfeited or was eliminated before it keeps the loss, in every place a result shows (the board
mail's result line, ``show``, ``games`` and ``history``, the standings, the web pages, the
records) and in the ratings; a draw of every player stays a tie.

Found by a tester who played 3- and 4-player games by mail: a Pylon draw by agreement gave the
player who had resigned a tie and rating points (H4), and a four-player Ploy repetition after
two eliminations was announced, listed and rated as the survivors' win (H5).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select
from starlette.testclient import TestClient

from pbmserv.domain import ratings
from pbmserv.games import get_game
from pbmserv.games.endless import REPETITION_REASON
from pbmserv.store.models import Board, BoardStatus, Rating, Seat, User
from pbmserv.web.app import create_app

# A four-player Ploy game (default rules) in which yellow takes green's commander (move 47)
# and red's (move 53): found by a seeded random game, every move of it legal in turn.
PLOY_TWO_OUT = [
    "a3+1",
    "c7-d6+1",
    "h8+3",
    "i2-1",
    "c3+4",
    "b8-2",
    "g9-1",
    "g1-2",
    "b3-2",
    "c8-1",
    "g8-f7-1",
    "g1+2",
    "c3+4",
    "b8-3",
    "h7-g6",
    "g1+4",
    "c2+2",
    "b7-c6",
    "h9-g8",
    "h3-2",
    "b1+3",
    "b9+3",
    "i7-3",
    "h2+3",
    "c1+2",
    "c6-1",
    "g9-f8",
    "i2+1",
    "c3-d4-1",
    "c9-1",
    "f8xd6",
    "h3-i4+3",
    "d4-1",
    "a7+3",
    "d6xd4",
    "h2-2",
    "a3-c5",
    "c8-c7",
    "i8-1",
    "h1+3",
    "b1-2",
    "b9-2",
    "d4xb2",
    "i4-h4+2",
    "c5+2",
    "a8-b7",
    "b2xa1",
    "g3-f4+3",
    "c7+4",
    "c5xa7",
    "f4+4",
    "c6+3",
    "a7xa9",
]
SURVIVORS_SHUFFLE = ["h1+1", "b9+1", "h1-1", "b9-1"]  # blue, then yellow, there and back


def words(text: str) -> str:
    """A mail's text with its line breaks undone (the result line is wrapped)."""
    return " ".join(text.split())


def rating_rows(shell, game: str) -> dict[str, tuple[int, int, int, int, int]]:
    """userid: (rounded rating, games, won, lost, tied)."""
    with shell.sessions() as s:
        rows = s.scalars(select(Rating).where(Rating.game == game)).all()
        return {r.user.userid: (round(r.rating), r.games, r.won, r.lost, r.tied) for r in rows}


def exported(shell, game: str) -> tuple[str, dict]:
    body = shell.ok(f"{game} export 101").body
    return body[: body.index("{")], json.loads(body[body.index("{") :])


def web(settings, clock) -> TestClient:
    return TestClient(create_app(settings, lambda: clock.now))


# ----------------------------------------------------------------------------- Ploy (H5)


def test_ploy_repetition_after_two_eliminations_is_a_draw_of_the_two_left(shell, settings, clock):
    shell.signup("alice", "bob", "carol", "dave")
    shell.ok("ploy challenge alice bob carol dave")  # green, red, yellow, blue
    out = shell.play("ploy", PLOY_TWO_OUT)
    assert "alice" in out.body and "eliminated, commander captured by yellow" in words(out.body)
    shell.play("ploy", SURVIVORS_SHUFFLE)
    end = shell.play("ploy", SURVIVORS_SHUFFLE)
    line = f"Game drawn between carol and dave (alice and bob were out). ({REPETITION_REASON})"
    assert line in words(end.body)
    assert "won by" not in words(end.body).lower()
    assert all(len(row) <= 78 for row in end.body.splitlines())
    for mail in shell.outbox()[-3:]:  # the other players' board mails say the same
        assert line in words(mail.body)
    assert (
        "Rating changes: alice 1600 -> 1584, bob 1600 -> 1584, carol 1600 -> 1611, dave 1600 -> 1611"
        in words(end.body)
    )
    # each of carol and dave draws with the other and beats alice and bob: (1/2 + 2) / 3
    assert rating_rows(shell, "ploy") == {
        "alice": (1584, 1, 0, 1, 0),
        "bob": (1584, 1, 0, 1, 0),
        "carol": (1611, 1, 0, 0, 1),
        "dave": (1611, 1, 0, 0, 1),
    }
    assert line in words(shell.ok("ploy show 101").body)
    for listing in ("ploy history", "ploy games", "ploy history carol"):
        assert "drawn by carol, dave" in shell.ok(listing).body
    rows = [row.split() for row in shell.ok("ploy standings").body.splitlines()]
    standings = {row[0]: row[2:5] for row in rows if len(row) > 5}
    assert standings["carol"] == ["0", "0", "1"] and standings["alice"] == ["0", "1", "0"]
    text, data = exported(shell, "ploy")
    assert "Winners: none\nDrawn: carol and dave (alice and bob lost)\n" in text
    assert (data["version"], data["winners"], data["drawn"]) == (2, [], ["carol", "dave"])
    client = web(settings, clock)
    page = client.get("/boards/ploy/101").text
    assert "Game drawn between carol and dave (alice and bob were out)." in page
    for userid in ("carol", "alice"):
        player = client.get(f"/players/{userid}").text
        assert "drawn by carol and dave" in player and "won by" not in player


# ----------------------------------------------------------------------------- Pylon (H4)


@pytest.mark.parametrize(
    ("users", "line", "survivor"),
    [
        (["alice", "bob", "dave"], "Game drawn between alice and bob (dave was out).", 1608),
        # each survivor: 1/2 against the two others, 1 against dave: 2/3, +32 * (2/3 - 1/2)
        (
            ["alice", "bob", "carol", "dave"],
            "Game drawn among alice, bob and carol (dave was out).",
            1605,
        ),
    ],
)
def test_pylon_draw_by_agreement_after_a_resignation(shell, users, line, survivor):
    shell.signup(*users)
    shell.ok(f"pylon challenge {' '.join(users)}")
    shell.play("pylon", ["a1", "c1", "e1", "g1"][: len(users)])  # everybody has moved
    shell.play("pylon", ["a3", "c3", "e3"][: len(users) - 1])
    shell.ok("pylon move 101 dave pw-dave resign")
    shell.ok("pylon move 101 alice pw-alice propose")
    for userid in users[1:-1]:
        end = shell.ok(f"pylon move 101 {userid} pw-{userid} accept")
    assert "The game is drawn by agreement. " + line in words(end.body)
    assert f"{line} (draw agreed)" in words(shell.ok("pylon show 101").body)
    assert "tie" not in end.body
    rows = rating_rows(shell, "pylon")
    assert rows["dave"] == (1584, 1, 0, 1, 0)  # a resigned player cannot win, nor tie
    assert all(rows[u] == (survivor, 1, 0, 0, 1) for u in users[:-1])
    standings = shell.ok("pylon standings").body
    dave = next(row for row in standings.splitlines() if row.split()[:1] == ["dave"])
    assert dave.split()[2:5] == ["0", "1", "0"]  # won, lost, tied
    assert "drawn by " + ", ".join(users[:-1]) in shell.ok("pylon history").body


def test_ploy_partnership_draw_by_agreement_after_a_resignation(shell):
    """Green resigns (yellow, his partner, takes over his pieces): the teams then agree a draw,
    which green does not share."""
    users = ["alice", "bob", "carol", "dave"]
    shell.signup(*users)
    shell.ok(f"ploy challenge {' '.join(users)} -partnership")
    shell.play("ploy", ["d7-d6", "d3-d4", "h7-h6", "h3-h4"])
    shell.ok("ploy move 101 alice pw-alice resign")
    shell.ok("ploy move 101 bob pw-bob propose")
    shell.ok("ploy move 101 carol pw-carol accept")
    end = shell.ok("ploy move 101 dave pw-dave accept")
    line = "Game drawn among bob, carol and dave (alice was out)."
    assert line in words(end.body)
    assert line + " (draw agreed)" in words(shell.ok("ploy show 101").body)
    rows = rating_rows(shell, "ploy")
    assert rows["alice"] == (1584, 1, 0, 1, 0)
    assert all(rows[u][2:] == (0, 0, 1) for u in users[1:])


def test_a_draw_of_every_player_stays_a_tie(shell):
    """Nobody was out: the draw reads, lists and rates as it always did."""
    users = ["alice", "bob", "carol", "dave"]
    shell.signup(*users)
    shell.ok(f"ploy challenge {' '.join(users)} -partnership")
    shell.ok("ploy move 101 alice pw-alice propose")
    for userid in users[1:]:
        end = shell.ok(f"ploy move 101 {userid} pw-{userid} accept")
    assert "Game was a tie." in words(end.body)
    assert "Game was a tie. (draw agreed)" in words(shell.ok("ploy show 101").body)
    assert "Rating changes: alice 1600 -> 1600" in end.body
    assert all(row == (1600, 1, 0, 0, 1) for row in rating_rows(shell, "ploy").values())
    assert "tie" in shell.ok("ploy history").body.splitlines()[-1]
    text, data = exported(shell, "ploy")
    assert "Winners: none (a tie)\n" in text and "Drawn:" not in text
    assert data["drawn"] == users and data["winners"] == []


def test_a_draw_stored_before_the_drawn_seats_were_kept_reads_as_before(shell):
    """A finished board stored without the seats of its draw (the store before migration
    0012) loads and shows as it was stored and rated: a tie of every player."""
    from pbmserv.store import migrate

    shell.signup("alice", "bob", "dave")
    shell.ok("pylon challenge alice bob dave")
    shell.play("pylon", ["a1", "c1", "e1", "a3", "c3"])
    shell.ok("pylon move 101 dave pw-dave resign")
    shell.ok("pylon move 101 alice pw-alice propose")
    shell.ok("pylon move 101 bob pw-bob accept")
    engine = shell.sessions.kw["bind"]
    migrate.downgrade(engine, "0011")
    migrate.upgrade(engine)
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.game == "pylon"))
        assert board.drawn is None and board.drawn_seats() == [0, 1, 2]
    assert "Game was a tie. (draw agreed)" in words(shell.ok("pylon show 101").body)
    assert shell.ok("pylon history").body.splitlines()[-1].endswith(" tie")
    _, data = exported(shell, "pylon")
    assert data["drawn"] == ["alice", "bob", "dave"]


# ----------------------------------------------------------------------------- properties


@given(players=st.integers(2, 4), data=st.data())
def test_a_draws_scores_give_each_pair_its_result(players, data):
    """Survivors score the mean of drawing with each other and beating those out (1/2 when
    nobody was out, 1 when one is left), those out 0; with equal ratings the survivors gain
    what a tie would not give them, and nobody out gains."""
    drawn = sorted(data.draw(st.sets(st.integers(0, players - 1), min_size=1, max_size=players)))
    users = [User(id=i, userid=f"u{i}") for i in range(players)]
    board = Board(status=BoardStatus.finished, winners=[], drawn=drawn)
    board.seats = [Seat(index=i, user=u) for i, u in enumerate(users)]
    scores, tied = ratings.board_scores(board, users)
    assert tied
    for i, score in enumerate(scores):
        if i not in drawn:
            assert score == 0.0
            continue
        pairs = [0.5 if j in drawn else 1.0 for j in range(players) if j != i]
        assert score == pytest.approx(sum(pairs) / len(pairs))
    after = ratings.new_ratings([1600.0] * players, scores)
    assert all(after[i] >= 1600 for i in drawn) and all(
        after[i] < 1600 for i in range(players) if i not in drawn
    )
    if len(drawn) == players:
        assert scores == [0.5] * players


def test_the_engine_says_a_draw_and_who_is_still_in():
    """The Ploy engine's outcome of a draw has no winners (it listed the players still in as
    winners before); the position names who shares it."""
    position = get_game("ploy").replay(4, {}, PLOY_TWO_OUT + SURVIVORS_SHUFFLE * 2)
    outcome = position.outcome()
    assert outcome is not None and outcome.draw and outcome.reason == REPETITION_REASON
    assert position.still_in() == (2, 3)

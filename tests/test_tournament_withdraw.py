"""Withdrawing from a running tournament: every running game of the player ends at once as his
loss, whoever is to move, with his comment in the board mails; he is never paired again.

Found by a tester: a withdrawal out of turn only queued a resignation, the game went on, and
the opponent's forfeit on time gave the withdrawn player the win.
"""

from __future__ import annotations

import json

from mail_lines import overlong
from sqlalchemy import select
from starlette.testclient import TestClient
from tournament_play import board_of, pairings, play, table

from pbmserv.domain import clocks
from pbmserv.store.models import Board, BoardStatus, Proposal, Rating, Seat, TournamentGame
from pbmserv.web.app import create_app

WITHDREW = "Game won by dan. (bob withdrew from tournament sw)"


def swiss(shell, pile: int = 5) -> None:
    """Tournament ``sw`` (t1), Swiss, 2 rounds of Nim: round 1 is ann-cat (t1r1b1, board 101)
    and dan-bob (t1r1b2, board 102), the first named to move."""
    shell.signup("ann", "bob", "cat", "dan")
    shell.ok(f"tournament create sw --game nim -pile={pile} --format swiss --rounds 2")
    for u in ("ann", "bob", "cat", "dan"):
        shell.ok(f"tournament join sw {u} pw-{u}")
    shell.ok("tournament start sw")
    assert pairings(shell, 1, 1) == [("ann", "cat"), ("dan", "bob")]


def words(text: str) -> str:
    return " ".join(text.split())


def test_withdrawal_out_of_turn_ends_the_game_at_once(shell, settings, clock):
    swiss(shell)
    assert board_of(shell, "t1r1b2") == (102, "dan", "bob")
    shell.ok("nim queue 102 bob pw-bob 1")
    shell.ok("nim move 102 dan pw-dan propose")
    said = "Sorry, I have to stop: a new job."
    out = shell.ok("tournament withdraw sw bob pw-bob", comment=said)
    assert "His game ends without a move on t1r1b2 (Nim board 102): dan wins." in words(out.body)
    assert "queued" not in out.body and overlong(out.body) == []
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.number == 102))
        assert board.status is BoardStatus.finished and board.to_move_id is None
        assert (board.winners, board.result) == ([0], "bob withdrew from tournament sw")
        assert all(seat.queued_move is None for seat in board.seats)
        assert not any(p.open for p in s.scalars(select(Proposal)))
        row = s.scalar(select(TournamentGame).where(TournamentGame.board_id == board.id))
        assert row.result == "1-0"
        rated = {r.user.userid: (round(r.rating), r.won, r.lost) for r in s.scalars(select(Rating))}
        assert rated == {"dan": (1616, 1, 0), "bob": (1584, 0, 1)}
    mail = [m for m in shell.outbox() if m.recipient == "dan@example.org"][-1]
    assert mail.subject == "Nim Board 102"  # a finished board: nobody to move
    assert "bob writes:" in mail.body and said in mail.body
    assert WITHDREW in words(mail.body) and overlong(mail.body) == []
    assert ("bob", 0.0, 1.0, 0.0) in table(shell, "sw")
    # the clock no longer runs for anyone on it: dan cannot forfeit it back to bob
    clock.advance(days=8)
    report = clocks.tick(shell.sessions, shell.settings, clock.now)
    assert "Nim 102" not in " ".join(report.forfeits)
    assert WITHDREW in words(shell.ok("nim show t1r1b2").body)
    for listing in ("nim history", "nim games dan", "nim history bob"):
        body = shell.ok(listing).body
        assert "won by dan" in body, listing
    export = shell.ok("nim export 102").body
    assert "Winners: dan\n" in export and "Result: bob withdrew from tournament sw\n" in export
    data = json.loads(export[export.index("{") :])
    assert (data["status"], data["winners"], data["drawn"]) == ("finished", ["dan"], [])
    assert data["result"] == "bob withdrew from tournament sw"
    page = TestClient(create_app(settings, lambda: clock.now)).get("/boards/nim/102").text
    assert WITHDREW in words(page)


def test_withdrawal_on_his_turn_resigns_with_his_comment(shell):
    swiss(shell)
    out = shell.ok("tournament withdraw sw dan pw-dan", comment="Good luck, all.")
    assert "He resigned on t1r1b2 (Nim board 102): bob wins." in words(out.body)
    mail = [m for m in shell.outbox() if m.recipient == "bob@example.org"][-1]
    assert mail.subject == "Nim Board 102"
    assert "dan writes:" in mail.body and "Good luck, all." in mail.body
    assert "dan resigned." in mail.body and "dan withdrew from tournament sw." in mail.body
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.number == 102))
        assert board.status is BoardStatus.finished and board.moves[-1].text == "resign"


def test_withdrawal_without_a_running_game_says_so(shell):
    swiss(shell, pile=1)
    play(shell, "t1r1b2", "first")  # dan beats bob
    out = shell.ok("tournament withdraw sw dan pw-dan", comment="Bye.")
    assert "No game of his was running. His comment goes to nobody." in words(out.body)
    with shell.sessions() as s:
        seats = s.scalars(select(Seat).where(Seat.queued_resign.is_(True))).all()
        assert seats == []

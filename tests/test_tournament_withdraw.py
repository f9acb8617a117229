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
from tournament_play import board_of, pairings, play, started, table

from pbmserv.domain import clocks, tournaments
from pbmserv.store.models import (
    Board,
    BoardStatus,
    Proposal,
    Rating,
    Seat,
    TournamentGame,
    User,
)
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


# ----------------------------------------------------------------------------- never paired again


def standing_names(shell, name: str) -> list[tuple[str, str]]:
    with shell.sessions() as s:
        return [(x.userid, x.status) for x in tournaments.standings(tournaments.find(s, name))]


def test_knockout_passes_a_withdrawn_winner_over_and_his_opponent_advances(shell):
    players = [f"p{i}" for i in range(1, 9)]
    shell.signup(*players)
    shell.ok("tournament create ko --game nim -pile=1 --format knockout")
    for u in players:
        shell.ok(f"tournament join ko {u} pw-{u}")
    shell.ok("tournament start ko")
    assert pairings(shell, 1, 1) == [("p1", "p8"), ("p4", "p5"), ("p2", "p7"), ("p3", "p6")]
    play(shell, "t1r1b1", "first")  # p1 wins, then withdraws before round 2 is paired
    shell.ok("tournament withdraw ko p1 pw-p1")
    play(shell, "t1r1b4", "draw")  # p3 - p6 tied: a replay is due once the round is over
    shell.ok("tournament withdraw ko p6 pw-p6")  # ... but p6 withdraws: p3 advances
    play(shell, "t1r1b2", "first")  # p4
    play(shell, "t1r1b3", "first")  # p2
    assert len(pairings(shell, 1, 1)) == 4  # no replay of p3 - p6
    assert pairings(shell, 1, 2) == [("p4", ""), ("p2", "p3")]  # p1's place: p4 has a bye
    play(shell, "t1r2b2", "first")  # p2
    assert pairings(shell, 1, 3) == [("p2", "p4")]
    play(shell, "t1r3b1", "second")  # p2 resigns: p4 wins the final
    ranked = standing_names(shell, "ko")
    assert ranked[:2] == [("p4", ""), ("p2", "out in round 3")]
    # out in round 2 both, p1 (who did not play it) on his better score
    assert ranked[2:4] == [("p1", "withdrawn"), ("p3", "out in round 2")]
    final = [m for m in shell.outbox() if m.subject == "Tournament ko final standings"]
    assert final and "Finished. p4 wins tournament ko." in final[0].body


def knockout_of_four(shell) -> None:
    """Tournament ``ko`` of Nim with two stones: round 1 is ann-dan (t1r1b1) and bob-cat
    (t1r1b2), ann and bob to move (taking both stones wins)."""
    started(shell, "ko", "-pile=2 --format knockout", ("ann", "bob", "cat", "dan"))
    assert pairings(shell, 1, 1) == [("ann", "dan"), ("bob", "cat")]


def test_a_finalist_who_withdraws_before_the_final_ranks_below_the_winner(shell):
    knockout_of_four(shell)
    shell.ok("nim move t1r1b1 ann pw-ann 2")  # ann wins ...
    shell.ok("tournament withdraw ko ann pw-ann")  # ... and leaves before the final
    shell.ok("nim move t1r1b2 bob pw-bob 2")  # bob: the last player left
    assert pairings(shell, 1, 2) == []
    assert standing_names(shell, "ko")[:2] == [("bob", ""), ("ann", "withdrawn")]
    final = [m for m in shell.outbox() if m.subject == "Tournament ko final standings"]
    assert [m.recipient for m in final] == [f"{u}@example.org" for u in ("bob", "cat", "dan")]
    assert "Finished. bob wins tournament ko." in final[0].body
    assert "bob wins tournament ko." in shell.ok("tournament standings ko").body


def test_a_finalist_who_withdraws_during_the_final_loses_it(shell, settings, clock):
    knockout_of_four(shell)
    shell.ok("nim move t1r1b1 ann pw-ann 2")
    shell.ok("nim move t1r1b2 bob pw-bob 2")
    assert pairings(shell, 1, 2) == [("ann", "bob")]  # ann to move
    shell.ok("tournament withdraw ko bob pw-bob")
    assert standing_names(shell, "ko")[:2] == [("ann", ""), ("bob", "withdrawn")]
    body = shell.ok("tournament standings ko").body
    assert "Finished. ann wins tournament ko." in body
    page = TestClient(create_app(settings, lambda: clock.now)).get("/tournaments/ko").text
    assert "ann</a> wins." in page


def test_swiss_pairs_a_withdrawn_player_no_more(shell):
    started(shell, "sw", "-pile=1 --format swiss --rounds 3", ("ann", "bob", "cat", "dan"))
    play(shell, "t1r1b1", "first")  # ann beats cat
    shell.ok("tournament withdraw sw dan pw-dan")  # dan to move on t1r1b2: he resigns
    for round_ in (2, 3):
        paired = pairings(shell, 1, round_)
        assert len(paired) == 2 and "dan" not in {p for pair in paired for p in pair}
        assert ("", "") not in paired and sum(1 for _, b in paired if b == "") == 1  # a bye
        for number in range(1, 3):
            if paired[number - 1][1]:
                play(shell, f"t1r{round_}b{number}", "first")


def test_round_robin_scores_a_withdrawn_players_later_games_as_forfeits(shell):
    started(shell, "rr", "-pile=1 --format roundrobin", ("ann", "bob", "cat", "dan"))
    # R1 ann-dan bob-cat, R2 cat-ann dan-bob, R3 ann-bob cat-dan (test_tournaments)
    shell.ok("tournament withdraw rr ann pw-ann")  # to move on t1r1b1: dan wins
    play(shell, "t1r1b2", "first")  # bob beats cat
    assert pairings(shell, 1, 2) == [("dan", "bob"), ("cat", "ann")]
    rows = shell.ok("tournament pairings rr 2").body
    assert [line.split() for line in rows.splitlines() if "forfeit" in line] == [
        ["-", "-", "cat", "ann", "1-0", "forfeit"]
    ]
    play(shell, "t1r2b1", "first")  # dan beats bob
    assert pairings(shell, 1, 3) == [("cat", "dan"), ("ann", "bob")]
    round_mail = [m for m in shell.outbox() if m.subject == "Tournament rr round 3"][0]
    assert "bob wins by forfeit: ann has withdrawn." in round_mail.body
    assert sorted(m.recipient for m in shell.outbox() if m.subject == round_mail.subject) == [
        f"{u}@example.org" for u in ("bob", "cat", "dan")
    ]
    play(shell, "t1r3b1", "second")  # cat resigns: dan wins
    # dan 3 (ann, bob, cat), bob 2 (cat, ann by forfeit), cat 1 (ann by forfeit), ann 0
    assert [(u, score) for u, score, _, _ in table(shell, "rr")] == [
        ("dan", 3.0),
        ("bob", 2.0),
        ("cat", 1.0),
        ("ann", 0.0),
    ]
    final = [m for m in shell.outbox() if m.subject == "Tournament rr final standings"]
    assert len(final) == 3 and "Finished. dan wins tournament rr." in final[0].body


def test_a_withdrawn_leader_keeps_his_place_but_does_not_win(shell):
    """In a Swiss (or a round robin) a withdrawn player keeps his place by score, and the
    final mail named him the winner."""
    started(shell, "sw", "-pile=1 --format swiss --rounds 2", ("ann", "bob", "cat", "dan"))
    play(shell, "t1r1b1", "first")  # ann beats cat
    play(shell, "t1r1b2", "first")  # dan beats bob
    play(shell, "t1r2b1", "first")  # dan beats ann: dan 2
    shell.ok("tournament withdraw sw dan pw-dan")  # no game of his is running
    play(shell, "t1r2b2", "first")  # bob beats cat: the last game
    assert [row[0] for row in table(shell, "sw")][:2] == ["dan", "ann"]
    final = [m for m in shell.outbox() if m.subject == "Tournament sw final standings"]
    assert final and "Finished. ann wins tournament sw." in final[0].body


def test_withdrawing_twice_says_so_and_a_stranger_does_not_play(shell):
    """A second withdrawal was answered "bob does not play in tournament sw", which denied
    the games he had played there; it now says he has withdrawn already."""
    swiss(shell)
    shell.ok("tournament withdraw sw bob pw-bob")
    again = shell("tournament withdraw sw bob pw-bob")
    assert again.status == 1
    assert "bob has already withdrawn from tournament sw" in again.body
    assert "does not play" not in again.body
    shell.signup("eve")
    stranger = shell("tournament withdraw sw eve pw-eve")
    assert stranger.status == 1 and "eve does not play in tournament sw" in stranger.body


def test_closing_the_account_leaves_its_tournaments(shell):
    """A player who signed off stayed entered: an open tournament paired his closed account at
    its start, and a running one in its next round, so that his opponent waited a week for the
    clock to forfeit a player who gets no mail.  Signing off now leaves an open tournament and
    withdraws from a running one (he has no running game: signoff wants none)."""
    swiss(shell, pile=1)
    shell.ok("tournament create later --game nim --format roundrobin")
    for u in ("cat", "dan"):
        shell.ok(f"tournament join later {u} pw-{u}")
    play(shell, "t1r1b1", "first")  # ann beats cat: cat has no running game, dan-bob goes on
    out = shell.ok("signoff cat pw-cat")
    assert "cat has left tournament later." in out.body
    assert "cat withdraws from tournament sw." in out.body
    assert "The account cat is closed. Goodbye." in out.body
    assert "joined: dan." in shell.ok("tournament standings later").body
    assert ("cat", 0.0, 1.0, 0.0) in table(shell, "sw")
    play(shell, "t1r1b2", "first")  # round 2: the three still in, one with a bye
    paired = pairings(shell, 1, 2)
    assert len(paired) == 2 and all("cat" not in pair for pair in paired)


def close_as_signoff_did(shell, userid: str) -> None:
    """Close ``userid``'s account as signoff did before it left the tournaments: his entries
    stay (a store of that time holds such entries)."""
    with shell.sessions() as s, s.begin():
        user = s.scalar(select(User).where(User.userid == userid))
        user.addresses.clear()
        user.password_hash = "!closed"
        user.accepts_challenges = False


def test_the_start_leaves_out_an_account_closed_before_signoff_left(shell):
    """An entry whose account was closed before signoff withdrew players was seeded and
    paired at the start: its opponent waited a week for the forfeit of a player who gets no
    mail.  The start leaves it out, and says so in its answer and in the round's mail."""
    shell.signup("ann", "bob", "cat", "dan")
    shell.ok("tournament create rr --game nim -pile=1 --format roundrobin")
    for u in ("ann", "bob", "cat", "dan"):
        shell.ok(f"tournament join rr {u} pw-{u}")
    close_as_signoff_did(shell, "cat")
    close_as_signoff_did(shell, "dan")
    left = "cat and dan are left out: their accounts are closed."
    out = shell.ok("tournament start rr")
    assert left in out.body and "1 round" in out.body, out.body
    assert pairings(shell, 1, 1) == [("ann", "bob")]
    assert [row[0] for row in table(shell, "rr")] == ["ann", "bob"]
    mailed = [m for m in shell.outbox() if m.subject == "Tournament rr round 1"]
    assert sorted(m.recipient for m in mailed) == ["ann@example.org", "bob@example.org"]
    assert all(left in m.body for m in mailed)


def test_a_start_with_fewer_than_two_open_accounts_is_refused(shell):
    shell.signup("ann", "cat")
    shell.ok("tournament create duo --game nim --format roundrobin")
    for u in ("ann", "cat"):
        shell.ok(f"tournament join duo {u} pw-{u}")
    close_as_signoff_did(shell, "cat")
    out = shell("tournament start duo")
    assert out.status == 1 and (
        "tournament duo needs at least two players (cat is left out: the account is closed)"
    ) in words(out.body), out.body
    assert "joined: ann, cat." in shell.ok("tournament standings duo").body  # (nothing changed)


def test_a_later_round_leaves_out_an_account_closed_before_signoff_left(shell):
    swiss(shell, pile=1)
    play(shell, "t1r1b1", "first")  # ann beats cat: cat has no running game, dan-bob goes on
    close_as_signoff_did(shell, "cat")
    play(shell, "t1r1b2", "first")  # round 2: the three still in, one with a bye
    paired = pairings(shell, 1, 2)
    assert len(paired) == 2 and all("cat" not in pair for pair in paired), paired
    mailed = [m for m in shell.outbox() if m.subject == "Tournament sw round 2"]
    assert sorted(m.recipient for m in mailed) == [
        f"{u}@example.org" for u in ("ann", "bob", "dan")
    ]
    assert all("cat is left out: the account is closed." in m.body for m in mailed)
    assert ("cat", 0.0, 1.0, 0.0) in table(shell, "sw")

"""Tournaments played out through the dispatcher with the test game Nim (-pile=1: the first
player wins by taking the stone; the second wins when the first resigns or forfeits; a draw is
proposed and accepted).  Expected pairings and standings are worked out by hand in the comments
from the rules in pbmserv/tournaments.py."""

from __future__ import annotations

from email.utils import format_datetime

import pytest
from mail_lines import overlong
from sqlalchemy import select
from tournament_play import board_of, mails, pairings, play, started, table

from pbmserv.domain import clocks, pairing, tournaments
from pbmserv.store.models import Board, BoardStatus, Tournament

# ----------------------------------------------------------------------------- pure pairing


def test_circle_method_and_double():
    assert pairing.circle_rounds([1, 2, 3, 4]) == [
        [(1, 4), (2, 3)],
        [(3, 1), (4, 2)],
        [(1, 2), (3, 4)],
    ]
    double = pairing.circle_rounds([1, 2, 3, 4], double=True)
    assert double[3:] == [[(4, 1), (3, 2)], [(1, 3), (2, 4)], [(2, 1), (4, 3)]]
    odd = pairing.circle_rounds([1, 2, 3])
    assert [p for r in odd for p in r if -1 in p] == [(1, -1), (2, -1), (3, -1)]
    for rounds in (pairing.circle_rounds(list(range(1, 7))),):
        met = [frozenset(p) for r in rounds for p in r]
        assert len(met) == len(set(met)) == 15  # everyone meets everyone once
        for player in range(1, 7):
            firsts = sum(1 for r in rounds for p in r if p[0] == player)
            assert firsts in (2, 3)  # 5 games: seats balanced


def test_bracket_order():
    assert pairing.bracket(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    assert pairing.bracket(4) == [1, 4, 2, 3]


def test_swiss_avoids_rematches_and_gives_one_bye():
    data = pairing.SwissInput(
        ranked=[1, 2, 3, 4, 5],
        scores={1: 1, 2: 1, 3: 0.5, 4: 0.5, 5: 0},
        met={frozenset((1, 2)), frozenset((3, 4))},
        had_bye={5},
    )
    pairs, bye, rematches = pairing.swiss_pairs(data)
    assert bye == 4 and not rematches  # the lowest-ranked player who had no bye yet
    assert {frozenset(p) for p in pairs} == {frozenset((1, 3)), frozenset((2, 5))}


# ----------------------------------------------------------------------------- commands


def test_only_admins_create_and_start(shell):
    shell.signup("ann", "bob")
    r = shell("tournament create cup ann pw-ann --game nim --format swiss", channel="mail")
    assert r.status == 1 and "administrator" in r.body
    shell.settings.admins = ["ann"]
    shell.ok("tournament create cup ann pw-ann --game=nim --format=swiss", channel="mail")
    r = shell("tournament create cup --game nim --format swiss")
    assert r.status == 1 and "already" in r.body
    r = shell("tournament create two --game nim --format knockout --rounds 3")
    assert r.status == 1 and "Swiss" in r.body
    r = shell("tournament start cup", channel="mail")
    said = " ".join(r.body.split())  # mail must name an admin and his password, and says so
    assert r.status == 1 and "by mail this needs an administrator's userid and password" in said
    assert "tournament start NAME USERID PASSWORD" in said and "********" not in said, said
    shell.ok("tournament join cup ann pw-ann", channel="mail")
    r = shell("tournament start cup")
    assert r.status == 1 and "two players" in r.body
    r = shell("tournament join cup bob wrong")
    assert r.status == 1
    shell.ok("tournament join cup bob pw-bob")
    shell.ok("tournament start cup ann pw-ann", channel="mail")
    r = shell("tournament join cup bob pw-bob")
    assert r.status == 1 and "closed" in r.body
    assert "t1r1b1" in shell.ok("tournament pairings cup").body
    assert "Tournament cup" in shell.ok("tournament list").body


def test_round_robin_played_out_with_a_nag_and_a_forfeit(shell, clock):
    started(shell, "rr", "-pile=1 --format roundrobin", ("ann", "bob", "cat", "dan"))
    # seeds by join order (all rated 1600): the circle method gives
    # R1 1-4 2-3, R2 3-1 4-2, R3 1-2 3-4 (seats by balance, see test_circle_method)
    assert pairings(shell, 1, 1) == [("ann", "dan"), ("bob", "cat")]
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.number == board_of(shell, "t1r1b1")[0]))
        assert board.options == {"nagtime": 1.0, "forfeittime": 7.0, "tournament": "t1r1b1"}
    assert mails(shell, "New Nim Board 101 ann") == ["ann@example.org", "dan@example.org"]
    assert len(mails(shell, "Tournament rr round 1")) == 4
    assert "--tournament=t1r1b1" in shell.ok("nim show t1r1b1").body
    play(shell, "t1r1b1", "first")  # ann beats dan
    assert pairings(shell, 1, 2) == []  # round 2 waits for the last game of round 1
    play(shell, "t1r1b2", "draw")  # bob - cat drawn
    assert pairings(shell, 1, 2) == [("cat", "ann"), ("dan", "bob")]
    assert len(mails(shell, "Tournament rr round 2")) == 4
    play(shell, "t1r2b1", "second")  # cat resigns: ann wins
    play(shell, "t1r2b2", "first")  # dan beats bob
    assert pairings(shell, 1, 3) == [("ann", "bob"), ("cat", "dan")]
    play(shell, "t1r3b2", "first")  # cat beats dan
    clock.advance(days=1, minutes=1)
    report = clocks.tick(shell.sessions, shell.settings, clock.now)
    assert report.nags == [f"Nim {board_of(shell, 't1r3b1')[0]} ann"]  # tournament nag: 1 day
    clock.advance(days=6)
    report = clocks.tick(shell.sessions, shell.settings, clock.now)
    assert report.forfeits == [f"Nim {board_of(shell, 't1r3b1')[0]} ann"]  # forfeit: 7 days
    # ann 2 (beat dan, cat); bob 1.5; cat 1.5; dan 1.
    # Buchholz: ann 1+1.5+1.5=4, bob 1.5+1+2=4.5, cat 1.5+2+1=4.5, dan 2+1.5+1.5=5
    # S-B: ann 1+1.5=2.5, bob .75+2=2.75, cat .75+1=1.75, dan 1.5
    assert table(shell, "rr") == [
        ("ann", 2.0, 4.0, 2.5),
        ("bob", 1.5, 4.5, 2.75),
        ("cat", 1.5, 4.5, 1.75),
        ("dan", 1.0, 5.0, 1.5),
    ]
    with shell.sessions() as s:
        assert s.scalar(select(Tournament.status)) == "finished"
    final = [m for m in shell.outbox() if m.subject == "Tournament rr final standings"]
    assert len(final) == 4 and "Forfeit" not in final[0].body
    assert "bob" in shell.ok("tournament standings rr").body
    body = shell.ok("nim show t1r3b1").body
    assert "Forfeit" in body and "Game won by bob" in body


def test_swiss_eight_players(shell, clock):
    players = [f"p{i}" for i in range(1, 9)]
    shell.signup(*players)
    shell.ok("tournament create sw --game nim -pile=1 --format swiss --rounds 3")
    for u in players:
        shell.ok(f"tournament join sw {u} pw-{u}", channel="mail", sender=f"{u}@example.org")
    shell.ok("tournament start sw")
    # R1: one score group, top half against bottom half, seats alternate by board
    assert pairings(shell, 1, 1) == [("p1", "p5"), ("p6", "p2"), ("p3", "p7"), ("p8", "p4")]
    play(shell, "t1r1b1", "first")  # p1 wins
    play(shell, "t1r1b2", "second")  # p2 wins
    play(shell, "t1r1b3", "second")  # p7 wins
    play(shell, "t1r1b4", "draw")  # p8 - p4
    # ranked p1 p2 p7 (1) | p4 p8 (1/2, met) | p3 p5 p6 (0).  p7 floats to p8 (colours fit),
    # p4 floats to the top of the zero group, p3; p5 - p6 stay.  Lower first-seat balance first.
    assert pairings(shell, 1, 2) == [("p2", "p1"), ("p7", "p8"), ("p4", "p3"), ("p5", "p6")]
    play(shell, "t1r2b1", "second")  # p1 wins
    play(shell, "t1r2b2", "first")  # p7 wins
    play(shell, "t1r2b3", "draw")  # p4 - p3
    play(shell, "t1r2b4", "second")  # p6 wins
    # ranked p1 p7 (2) | p2 p4 p6 (1) | p3 p8 (1/2) | p5 (0).  p2-p6 met and p2-p4 clash on
    # colour, so p4-p6; p2 floats down to p3; p8-p5.  Seats: who was second last time moves first.
    assert pairings(shell, 1, 3) == [("p1", "p7"), ("p3", "p2"), ("p6", "p4"), ("p8", "p5")]
    play(shell, "t1r3b1", "first")  # p1 wins
    play(shell, "t1r3b3", "first")  # p6 wins
    play(shell, "t1r3b4", "draw")  # p8 - p5
    clock.advance(days=7, minutes=1)
    report = clocks.tick(shell.sessions, shell.settings, clock.now)
    assert len(report.forfeits) == 1  # p3 forfeits: p2 wins
    assert table(shell, "sw") == [
        ("p1", 3.0, 4.5, 4.5),
        ("p2", 2.0, 5.5, 2.5),
        ("p7", 2.0, 4.5, 1.5),
        ("p6", 2.0, 3.5, 1.5),
        ("p4", 1.0, 3.5, 0.75),
        ("p8", 1.0, 3.5, 0.75),
        ("p5", 0.5, 6.0, 0.5),
        ("p3", 0.5, 5.0, 0.5),
    ]
    met = [frozenset(p) for r in (1, 2, 3) for p in pairings(shell, 1, r)]
    assert len(met) == len(set(met))  # no rematches
    assert len(mails(shell, "Tournament sw final standings")) == 8


def test_swiss_bye_for_an_odd_count(shell):
    started(shell, "odd", "-pile=1 --format swiss --rounds 2", ("ann", "bob", "cat"))
    assert pairings(shell, 1, 1) == [("ann", "bob"), ("cat", "")]  # cat: bye (1 point)
    play(shell, "t1r1b1", "first")
    # ann 1, cat 1 (bye), bob 0: bob may not get... ann-cat play, bob (no bye yet) sits out
    assert pairings(shell, 1, 2) == [("cat", "ann"), ("bob", "")]
    assert "(bye)" in shell.ok("tournament pairings odd 1").body


def test_each_round_mail_tells_its_reader_his_game_or_his_bye(shell):
    """The round mail was the same table for everybody: which board is mine, do I move
    first, have I a bye?  And no tournament mail linked the tournament's page."""
    started(shell, "odd", "-pile=1 --format swiss --rounds 2", ("ann", "bob", "cat"))
    [number, _, _] = board_of(shell, "t1r1b1")

    def round_mail(userid: str) -> str:
        [mail] = [
            m
            for m in shell.outbox()
            if m.subject == "Tournament odd round 1" and m.recipient == f"{userid}@example.org"
        ]
        return " ".join(mail.body.split())

    assert (
        f"Your game in round 1: t1r1b1 (Nim board {number}) against bob; you play first."
        in round_mail("ann")
    )
    assert "against ann; you play second. Its board comes in a mail of its own." in (
        round_mail("bob")
    )
    assert round_mail("cat").startswith("You have a bye in round 1: it scores 1.")
    assert "On the web: https://games.example.org/tournaments/odd" in round_mail("cat")


def test_knockout_with_a_replayed_tie_and_board_names(shell):
    started(shell, "ko", "-pile=1 --format knockout", ("ann", "bob", "cat", "dan", "eve"))
    # 5 players, bracket of 8: 1-(8), 4-5, 2-(7), 3-(6): three byes to the top seeds
    assert pairings(shell, 1, 1) == [("ann", ""), ("dan", "eve"), ("bob", ""), ("cat", "")]
    play(shell, "t1r1b2", "draw")
    assert pairings(shell, 1, 1)[-1] == ("eve", "dan")  # replay, seats swapped: t1r1b5
    [replay] = [m for m in shell.outbox() if m.subject == "Tournament ko round 1 replays"][:1]
    assert (
        "dan and eve drew t1r1b2: they play again with the seats swapped (t1r1b5); if that is "
        "drawn too, dan, the higher seed, goes on." in " ".join(replay.body.split())
    )
    play(shell, "t1r1b5", "first")  # eve wins
    assert pairings(shell, 1, 2) == [("ann", "eve"), ("bob", "cat")]
    play(shell, "t1r2b1", "second")  # eve beats ann
    play(shell, "t1r2b2", "draw")
    play(shell, "t1r2b3", "draw")  # the replay ties too: the higher seed, bob, advances
    assert pairings(shell, 1, 3) == [("bob", "eve")]
    play(shell, "t1r3b1", "first")
    with shell.sessions() as s:
        t = tournaments.find(s, "ko")
        assert t.status == "finished"
        # the winner, then by the round in which they went out, then by score
        assert [x.userid for x in tournaments.standings(t)] == ["bob", "eve", "cat", "ann", "dan"]
    # the mail shows what a knockout ranks by: no Buchholz or Sonneborn-Berger columns
    said = shell.ok("tournament standings ko").body
    assert "Buchh" not in said and "S-B" not in said and "Sonneborn" not in said
    assert "  Rank  Player           Seed  Score Games\n" in said
    assert "     3  cat                 3    2.0     2  out in round 2\n" in said
    assert " ".join(said.split()).endswith(
        "Score: win 1, draw 1/2, loss 0, bye 1. Players are ranked by the round they went out "
        "in (those still in first), then by score, then by seed."
    )
    assert overlong(said) == [], said  # its note was 88 columns wide
    r = shell("nim show t1r9b1")
    assert r.status == 1 and "no Nim board t1r9b1" in r.body


def test_the_replays_mail_names_the_replay_to_its_players_and_no_board_to_the_others(shell):
    """A knockout's replays mail told each player of the drawn match to play the drawn board
    (over: 'Its board comes in a mail of its own'), not the replay, and the loser of a match
    already decided that his finished game's board would come."""
    started(shell, "ko", "-pile=1 --format knockout", ("ann", "bob", "cat", "dan"))
    assert pairings(shell, 1, 1) == [("ann", "dan"), ("bob", "cat")]
    play(shell, "t1r1b2", "first")  # bob beats cat
    play(shell, "t1r1b1", "draw")  # ann and dan replay on t1r1b3, dan first
    [replay, _, _] = board_of(shell, "t1r1b3")

    def replay_mail(userid: str) -> str:
        [mail] = [
            m
            for m in shell.outbox()
            if m.subject == "Tournament ko round 1 replays"
            and m.recipient == f"{userid}@example.org"
        ]
        return " ".join(mail.body.split())

    assert replay_mail("dan").startswith(
        f"Your game in round 1: t1r1b3 (Nim board {replay}) against ann; you play first. "
        "Its board comes in a mail of its own."
    )
    assert replay_mail("ann").startswith(
        f"Your game in round 1: t1r1b3 (Nim board {replay}) against dan; you play second."
    )
    for userid in ("bob", "cat"):  # their match is decided: the table says how
        assert replay_mail(userid).startswith("Tournament ko (t1)"), replay_mail(userid)


def test_the_notes_of_a_round_mail_are_wrapped(shell):
    """The note of a replay (who drew, the replay's board, who goes on after a second draw)
    was one line of 130 columns in the round mail and the answer to 'pairings'."""
    started(shell, "ko", "-pile=1 --format knockout", ("ann", "bob"))
    play(shell, "t1r1b1", "draw")
    [mail] = [m for m in shell.outbox() if m.subject == "Tournament ko round 1 replays"][:1]
    assert "they play again with the seats swapped" in mail.body
    assert overlong(mail.body) == [], mail.body


def test_withdraw(shell):
    shell.signup("ann", "bob", "cat", "dan")
    shell.ok("tournament create wd --game nim -pile=5 --format roundrobin")
    for u in ("ann", "bob", "cat", "dan"):
        shell.ok(f"tournament join wd {u} pw-{u}")
    shell.ok("tournament withdraw wd dan pw-dan")  # before the start: just leaves
    shell.ok("tournament join wd dan pw-dan")
    shell.ok("tournament start wd")
    shell.ok("tournament withdraw wd ann pw-ann")  # ann is to move on t1r1b1: resigned at once
    with shell.sessions() as s:
        number = board_of(shell, "t1r1b1")[0]
        board = s.scalar(select(Board).where(Board.number == number))
        assert board.status is BoardStatus.finished
    play(shell, "t1r1b2", "second")
    # round 2 (3-1 4-2): ann is paired no more; her game with cat is cat's forfeit win
    assert pairings(shell, 1, 2) == [("dan", "bob"), ("cat", "ann")]
    round_mail = [m for m in shell.outbox() if m.subject == "Tournament wd round 2"][0]
    assert "cat wins by forfeit: ann has withdrawn." in round_mail.body
    r = shell("tournament withdraw wd ann pw-ann")
    assert r.status == 1


@pytest.mark.parametrize("line", ["tournament standings nosuch", "tournament pairings nosuch"])
def test_unknown_tournament(shell, line):
    r = shell(line)
    assert r.status == 1 and "no tournament" in r.body


def test_double_round_robin_swaps_seats_and_names_take_a_move_number(shell):
    shell.signup("ann", "bob")
    shell.ok("tournament create dbl --game nim -pile=3 --format roundrobin --double")
    shell.ok("tournament join dbl ann pw-ann")
    shell.ok("tournament join dbl bob pw-bob")
    shell.ok("tournament start dbl")
    assert pairings(shell, 1, 1) == [("ann", "bob")]
    shell.ok("nim move t1r1b1 ann pw-ann 1#1")
    assert "Position after move 1" in shell.ok("nim show t1r1b1#1").body
    shell.ok("nim move t1r1b1 bob pw-bob 2")  # bob takes the last stone
    assert pairings(shell, 1, 2) == [("bob", "ann")]
    play(shell, "t1r2b1", "second")  # bob resigns
    assert table(shell, "dbl") == [("ann", 1.0, 2.0, 1.0), ("bob", 1.0, 2.0, 1.0)]
    with shell.sessions() as s:
        assert tournaments.find(s, "t1").status == "finished"


def test_join_and_standings_by_mail_through_the_worker(shell, settings, sessions, clock):
    from pbmserv.mail import inbox
    from pbmserv.mail.worker import process_next

    shell.signup("ann")
    shell.ok("tournament create cup --game nim --format swiss")

    def mail(subject: str, n: int) -> None:
        raw = (
            f"From: ann@example.org\r\nTo: pbmserv@example.org\r\nSubject: {subject}\r\n"
            f"Message-ID: <t{n}@example.org>\r\nDate: {format_datetime(clock.now)}\r\n"
            "\r\nthanks\r\n"
        ).encode()
        inbox.store(sessions, raw, "ann@example.org", ["pbmserv@example.org"], clock.now)
        while process_next(sessions, settings, lambda: clock.now) is not None:
            pass

    mail("tournament join cup ann pw-ann", 1)
    mail("tournament join cup ann pw-ann", 2)  # twice: refused, password masked in the quote
    answers = [m for m in shell.outbox() if m.recipient == "ann@example.org"]
    assert [m.subject for m in answers[-2:]] == ["Tournament cup joined", "Tournament cup Error"]
    assert "already joined" in answers[-1].body and "pw-ann" not in answers[-1].body
    mail("tournament join cup", 3)  # a usage error: the same subject, without a name
    mail("tournament jion cup ann pw-ann", 4)
    answers = [m for m in shell.outbox() if m.recipient == "ann@example.org"]
    assert [m.subject for m in answers[-2:]] == ["Tournament Error", "Tournament Error"]
    assert "pw-ann" not in answers[-1].body
    with shell.sessions() as s:
        assert [p.user.userid for p in tournaments.find(s, "cup").players] == ["ann"]


@pytest.mark.parametrize("count", [6, 7, 10, 11])
def test_swiss_random_results_keep_the_rules(count):
    import random

    rng = random.Random(count)
    players = list(range(1, count + 1))
    data = pairing.SwissInput(ranked=players, scores=dict.fromkeys(players, 0.0))
    for _ in range(count // 2):
        pairs, bye, rematches = pairing.swiss_pairs(data)
        assert not rematches
        assert (bye is None) == (count % 2 == 0) and bye not in data.had_bye
        seen = [p for pair in pairs for p in pair] + ([bye] if bye else [])
        assert sorted(seen) == players
        for first, second in pairs:
            data.met.add(frozenset((first, second)))
            data.colours.setdefault(first, []).append("first")
            data.colours.setdefault(second, []).append("second")
            got = rng.choice((1.0, 0.5, 0.0))
            data.scores[first] += got
            data.scores[second] += 1 - got
        if bye:
            data.had_bye.add(bye)
            data.scores[bye] += 1
        data.ranked = sorted(players, key=lambda p: (-data.scores[p], p))
    for p in players:  # seats stay balanced: never more than two apart
        seq = data.colours[p]
        assert abs(seq.count("first") - seq.count("second")) <= 2


def test_joining_by_mail_needs_a_confirmed_address(shell, clock):
    """An account that never confirmed an address joined a tournament by mail, and since a
    tournament's players are never removed, its userid was held for ever.  By mail the
    account now needs a confirmed address to join; the shell's accounts are as before."""
    from pbmserv.domain.housekeeping import housekeeping

    shell.ok("tournament create cup --game nim --format swiss")
    shell.ok("signup squat pw-squat", channel="mail", sender="victim@example.org")
    refused = shell("tournament join cup squat pw-squat", channel="mail", sender="x@example.org")
    assert refused.status == 1 and "once an address of the account is confirmed" in refused.body
    clock.advance(days=shell.settings.unconfirmed_account_days + 1)
    housekeeping(shell.sessions, shell.settings, clock.now)
    assert shell("tournament join cup squat pw-squat").status == 1  # removed: no such player
    shell.signup("ann")
    shell.ok("signup bob pw-bob")  # the shell's: no address at all, joins from the shell
    shell.ok("tournament join cup ann pw-ann", channel="mail", sender="ann@example.org")
    shell.ok("tournament join cup bob pw-bob")
    with shell.sessions() as s:
        assert [p.user.userid for p in tournaments.find(s, "cup").players] == ["ann", "bob"]


def test_a_board_name_given_with_another_game_says_whose_board_it_is(shell):
    """``polis show t1r1b1`` for a Nim tournament's board said "there is no polis board
    t1r1b1" (the game's word in lower case, where every other refusal names Polis), leaving
    the player to guess that the mails' name belongs to another game."""
    started(shell, "mixup", "--format roundrobin", ("ann", "bob"))
    [number, _, _] = board_of(shell, "t1r1b1")
    r = shell("polis show t1r1b1")
    assert r.status == 1
    assert f"there is no Polis board t1r1b1: t1r1b1 is Nim board {number}" in r.body
    r = shell("polis move T1R1B1 ann pw-ann a7-a6")
    assert r.status == 1 and f"t1r1b1 is Nim board {number}" in r.body
    r = shell("nim show t1r9b1")
    assert r.status == 1 and "there is no Nim board t1r9b1" in r.body
    assert "is Nim board" not in r.body


def test_the_round_mail_says_when_a_held_back_board_comes(shell):
    """The round mail said "Its board comes in a mail of its own" to a player whose
    notifications hold the new board's mail back (a digest player's comes with the digest, a
    'once' player's when it is his turn): he waited for a mail that did not come."""
    shell.signup("ann", "bob", "cat", "dan")
    shell.ok("notifications ann pw-ann digest")
    shell.ok("notifications bob pw-bob once")
    shell.ok("tournament create modes --game nim -pile=1 --format roundrobin")
    for userid in ("ann", "bob", "cat", "dan"):
        shell.ok(f"tournament join modes {userid} pw-{userid}")
    shell.ok("tournament start modes")
    assert pairings(shell, 1, 1) == [("ann", "dan"), ("bob", "cat")]
    said = {m.recipient: " ".join(m.body.split()) for m in mails_of(shell, "round 1")}
    assert "Its board comes with your daily digest" in said["ann@example.org"]
    assert "Its board comes in a mail of its own" not in said["ann@example.org"]
    # bob moves first: his one mail is the new board's
    assert "Its board comes in a mail of its own" in said["bob@example.org"]
    assert "Its board comes in a mail of its own" in said["dan@example.org"]
    new = [m.recipient for m in shell.outbox() if m.subject.startswith("New Nim Board")]
    assert "ann@example.org" not in new and "bob@example.org" in new
    play(shell, "t1r1b1", "first")
    play(shell, "t1r1b2", "first")
    assert pairings(shell, 1, 2) == [("cat", "ann"), ("dan", "bob")]
    said = {m.recipient: " ".join(m.body.split()) for m in mails_of(shell, "round 2")}
    assert (
        "Its board comes when it is your turn (your notifications: 'once')"
        in (said["bob@example.org"])
    )


def mails_of(shell, subject_end: str):
    return [m for m in shell.outbox() if m.subject == f"Tournament modes {subject_end}"]


def test_a_one_round_tournament_is_not_said_to_have_1_rounds(shell):
    """Two players in a round robin (or a Swiss of --rounds 1): the heading of every answer,
    round mail and page read "round robin, 1 rounds"."""
    started(shell, "duel", "-pile=1 --format roundrobin", ("ann", "bob"))
    said = shell.ok("tournament standings duel").body
    assert "Tournament duel (t1): Nim -pile=1, round robin, 1 round\n" in said
    assert "1 rounds" not in said
    shell.ok("tournament create solo --game nim --format swiss")
    shell.ok("tournament join solo ann pw-ann")
    listed = shell.ok("tournament list").body  # "open, 1 players" too
    assert "Tournament solo (t2): Nim, Swiss: open, 1 player\n" in listed
    assert "1 players" not in listed and "running, 2 players" in listed
    for status in ("has", "was over after"):  # a round it does not have: "has 1 rounds"
        said = shell("tournament pairings duel 2").body
        assert f"there is no round 2: duel {status} 1 round\n" in said, said
        if status == "has":
            play(shell, "t1r1b1", "first")

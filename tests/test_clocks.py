"""Clocks: nags, forfeits, per-board periods, the chess clock, vacations and `pbmserv tick`."""

from __future__ import annotations

from sqlalchemy import select
from waiting import wait_until

from pbmserv.domain import boards, clocks, tournaments
from pbmserv.numbers import clock_days
from pbmserv.store.models import Board


def tick(shell):
    return clocks.tick(shell.sessions, shell.settings, shell.clock.now)


def board(shell, number=101):
    with shell.sessions() as s:
        found = s.scalar(select(Board).where(Board.game == "nim", Board.number == number))
        found.seats, found.moves  # noqa: B018 - load before the session closes
        return found


def records(shell, number=101):
    return [(m.seat, m.text, m.auto) for m in board(shell, number).moves]


def nags(shell):
    return [(m.recipient, m.subject) for m in shell.outbox() if m.subject.startswith("Nag:")]


def test_nag_after_seven_days_once_per_period(shell, clock):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    shell.ok("nim move 101 alice pw-alice 1")
    clock.advance(days=6, hours=23)
    assert tick(shell).nags == []
    clock.advance(hours=1)
    assert tick(shell).nags == ["Nim 101 bob"]
    assert nags(shell) == [("bob@example.org", "Nag: Nim Board 101 bob")]
    mail = [m for m in shell.outbox() if m.subject.startswith("Nag:")][0]
    assert "Reminder: it has been your turn for 7d 00h" in mail.body
    assert "Without a move by 2026-11-22 12:00 UTC you forfeit the game." in mail.body
    assert "Pile: 14" in mail.body
    clock.advance(days=3)
    assert tick(shell).nags == []  # once per nag period
    clock.advance(days=4)
    assert tick(shell).nags == ["Nim 101 bob"]  # 14 days: the second period
    assert len(nags(shell)) == 2
    shell.ok("nim move 101 bob pw-bob 1")  # a move starts the count again
    clock.advance(days=6)
    assert tick(shell).nags == []
    clock.advance(days=1)
    assert tick(shell).nags == ["Nim 101 alice"]


def test_a_nag_gives_the_lines_to_answer_an_open_proposal(shell, clock):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    shell.ok("nim move 101 alice pw-alice 1")
    shell.ok("nim move 101 alice pw-alice propose")
    clock.advance(days=7)
    assert tick(shell).nags == ["Nim 101 bob"]
    mail = [m for m in shell.outbox() if m.subject.startswith("Nag:")][0]
    said = " ".join(mail.body.split())  # (wrapped)
    assert "by 2026-11-22 12:00 UTC the open draw proposal is accepted: the game is drawn" in said
    assert mail.body.endswith(
        "  nim move 101 bob PASSWORD accept#1\n  nim move 101 bob PASSWORD reject#1\n"
        "\nYour move. Send back this line, with your password and your move:\n"
        "  nim move 101 bob PASSWORD <move>#2\n"
    )


def test_forfeit_at_21_days_is_recorded_and_replayable(shell, clock):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    shell.ok("nim move 101 alice pw-alice 2")
    clock.advance(days=21)
    before = len(shell.outbox())
    report = tick(shell)
    assert report.forfeits == ["Nim 101 bob"]
    assert records(shell) == [(0, "2", False), (1, "Forfeit", True)]
    found = board(shell)
    assert found.status.value == "finished" and found.winners == [0]
    position = boards.replay(found)
    assert position.outcome() is not None and position.outcome().winners == (0,)
    assert boards.position_of(found).serialize() == position.serialize()
    mails = shell.outbox()[before:]
    assert sorted(m.recipient for m in mails) == ["alice@example.org", "bob@example.org"]
    assert all(m.subject == "Nim Board 101" for m in mails)
    body = mails[0].body
    assert "bob forfeits: out of time" in body and "2. Forfeit\n" in body
    assert "(Auto)" not in body  # only the server enters a forfeit: the mark adds nothing
    assert "Game won by alice." in body and "Rating changes: alice 1600 -> 1616" in body
    assert "2. Forfeit\n" in shell.ok("nim show 101").body
    assert tick(shell).forfeits == []  # nothing more to do


def test_three_player_forfeit_continues_the_game(shell, clock):
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob carol")
    clock.advance(days=22)
    assert tick(shell).forfeits == ["Nim 101 alice"]
    with shell.sessions() as s:
        found = s.scalar(select(Board).where(Board.number == 101))
        assert found.status.value == "active"
        assert boards.user_to_move(found, boards.position_of(found)).userid == "bob"
    shell.ok("nim move 101 bob pw-bob 1")
    assert records(shell)[-1] == (1, "1", False)


def test_per_board_periods_and_tournament_flag(shell, clock):
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob --nagtime=2 --forfeittime=5")
    shell.ok("nim challenge bob carol")
    shell.ok("nim challenge carol alice")
    with shell.sessions() as s, s.begin():
        b = s.scalar(select(Board).where(Board.number == 103))
        b.options = {**b.options, "tournament": True}
    clock.advance(days=1)
    assert tick(shell).nags == ["Nim 103 carol"]
    clock.advance(days=1)
    assert tick(shell).nags == ["Nim 101 alice", "Nim 103 carol"]
    clock.advance(days=3)
    report = tick(shell)
    assert report.forfeits == ["Nim 101 alice"]
    clock.advance(days=2)
    report = tick(shell)
    assert report.forfeits == ["Nim 103 carol"]
    assert board(shell, 102).status.value == "active"


def test_totaltime_runs_only_on_ones_own_turn(shell, clock):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob --totaltime=3")
    clock.advance(days=1)
    shell.ok("nim move 101 alice pw-alice 1")
    clock.advance(days=2)
    shell.ok("nim move 101 bob pw-bob 1")
    found = board(shell)
    assert [s.time_used for s in found.seats] == [86400.0, 2 * 86400.0]
    body = shell.ok("nim show 101").body
    assert "Time used: alice 1d 00h, bob 2d 00h (of 3d 00h)" in body
    clock.advance(days=1, hours=23)  # alice: 2d 23h in all
    assert tick(shell).forfeits == []
    shell.ok("nim move 101 alice pw-alice 1")
    clock.advance(days=1)  # bob: 3d: his chess clock has run out long before 21 days
    assert tick(shell).forfeits == ["Nim 101 bob"]
    assert records(shell)[-1] == (1, "Forfeit", True)


def test_pending_draw_is_accepted_instead_of_a_forfeit(shell, clock):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    shell.ok("nim move 101 alice pw-alice 1")
    shell.ok("nim move 101 bob pw-bob propose")
    clock.advance(days=21)
    report = tick(shell)
    assert report.draws == ["Nim 101 bob"] and report.forfeits == []
    found = board(shell)
    assert found.status.value == "finished" and found.winners == []
    assert all(m.text != "Forfeit" for m in found.moves)
    mail = shell.outbox()[-1]
    assert "open draw proposal is accepted" in mail.body and "Game was a tie." in mail.body


def test_vacation_suspends_nags_and_forfeits_with_grace(shell, clock):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    shell.ok("nim move 101 alice pw-alice 1")
    answer = shell.ok("vacation bob pw-bob 30")
    assert "bob is on vacation until 2026-12-01 12:00 UTC; 30 of 42" in answer.body
    said = " ".join(answer.body.split())  # how to come back earlier, the line to send
    assert "Back earlier: 'vacation bob PASSWORD off' ends it now and gives back" in said
    clock.advance(days=29)
    report = tick(shell)
    assert report.nags == [] and report.forfeits == []
    clock.advance(days=1, hours=1)  # back: nagged, but not forfeited during the grace
    report = tick(shell)
    assert report.nags == ["Nim 101 bob"] and report.forfeits == []
    assert "back from vacation" in shell.ok("vacation bob pw-bob").body
    clock.advance(days=1)
    assert tick(shell).forfeits == []
    clock.advance(hours=23)
    assert tick(shell).forfeits == ["Nim 101 bob"]


def test_vacation_allowance_and_off(shell, clock):
    shell.signup("alice")
    shell.ok("vacation alice pw-alice 20")
    clock.advance(days=5)
    off = shell.ok("vacation alice pw-alice off")
    said = " ".join(off.body.split())  # (lines are wrapped)
    assert "back from vacation" in said and "5 of 42 vacation days used in 2026" in said
    assert shell("vacation alice pw-alice off").status == 1
    shell.ok("vacation alice pw-alice 30")
    too_much = shell("vacation alice pw-alice 43")
    assert too_much.status == 2 and "1 to 42 days" in too_much.body
    clock.advance(days=1)
    again = shell.ok("vacation alice pw-alice 20")  # 5 + 1 used, 29 given back, 20 more
    assert "26 of 42" in again.body
    over = shell("vacation alice pw-alice 40")
    assert over.status == 1 and "vacation days left in 2026" in over.body
    clock.advance(days=60)  # a new calendar year: a new allowance
    assert "0 of 42 vacation days used in 2027" in shell.ok("vacation alice pw-alice").body
    shell.ok("vacation alice pw-alice 42")


def test_a_vacation_over_new_year_counts_each_day_in_its_year(shell, clock):
    """42 days taken on 25 December were all counted in the old year, and the new year gave
    42 more while they ran on: 58 days in a row without a forfeit, 51 of them in 2027."""
    shell.signup("alice")
    clock.advance(days=54)  # 2026-12-25 12:00
    said = " ".join(shell.ok("vacation alice pw-alice 42").body.split())
    assert "until 2027-02-05 12:00 UTC" in said
    assert "6.5 of 42 vacation days used in 2026 (and 35.5 in 2027)" in said
    clock.advance(days=16)  # 2027-01-10: 35.5 days of 2027 are taken already
    said = " ".join(shell.ok("vacation alice pw-alice").body.split())
    assert "35.5 of 42 vacation days used in 2027" in said
    more = shell("vacation alice pw-alice 42")  # 9.5 used with the rest given back
    assert more.status == 1 and "has 32.5 vacation days left in 2027" in more.body
    said = " ".join(shell.ok("vacation alice pw-alice 30").body.split())
    assert "until 2027-02-09 12:00 UTC" in said and "39.5 of 42" in said


def test_pbmserv_tick_from_the_shell(shell, clock):
    from pbmserv.cli.main import build_cli
    from pbmserv.commands import Request, run

    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    clock.advance(days=8)
    req = Request(settings=shell.settings, sessions=shell.sessions, now=clock.now)
    [result] = run(build_cli(), ["tick"], req)
    assert result.status == 0 and result.subject == "pbmserv tick"
    assert "Clock check at 2026-11-09 12:00 UTC:" in result.body
    assert "nags:     1 Nim 101 alice" in result.body
    assert "forfeits: 0" in result.body
    assert nags(shell) == [("alice@example.org", "Nag: Nim Board 101 alice")]


def test_tick_says_where_its_links_point_without_web_base_url(shell, clock):
    """cron ran `tick` without the server's config: its mails linked to 127.0.0.1:8080 while
    the server served on 8612."""
    from dataclasses import replace

    from pbmserv.cli.main import build_cli
    from pbmserv.commands import Request, run

    bare = replace(shell.settings, web_base_url="", listen_host="127.0.0.1", web_port=8080)
    req = Request(settings=bare, sessions=shell.sessions, now=clock.now)
    [result] = run(build_cli(), ["tick"], req)
    assert result.status == 0 and "Warning" not in result.body  # no mail written: nothing said
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    clock.advance(days=8)  # alice is reminded by this tick
    req = Request(settings=bare, sessions=shell.sessions, now=clock.now)
    [result] = run(build_cli(), ["tick"], req)
    said = " ".join(result.body.split())
    assert result.status == 0
    assert "Warning: web_base_url is empty, so board mails link to http://127.0.0.1:8080" in said
    assert "give tick the server's config file and environment" in said
    req = Request(settings=shell.settings, sessions=shell.sessions, now=clock.now)
    [result] = run(build_cli(), ["tick"], req)
    assert "Warning" not in result.body  # web_base_url set


def _due_lines(body):
    return [line for line in body.splitlines() if line.startswith(("Reminder:  ", "Forfeit:   "))]


def test_board_mails_show_when_the_clock_acts(shell, clock):
    """M9: the web page showed the reminder and forfeit dates, the board mail did not.  The
    dates shown are those the clock keeps: after a reminder, on vacation, with a chess clock."""
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    moved = shell.ok("nim move 101 alice pw-alice 1")
    expected = [
        "Reminder:  2026-11-08 12:00 UTC (if no move by then)",
        "Forfeit:   2026-11-22 12:00 UTC (if no move by then)",
    ]
    assert _due_lines(moved.body) == expected
    [mail] = [m for m in shell.outbox() if m.subject == "Nim Board 101 bob"]
    assert _due_lines(mail.body) == expected
    clock.advance(days=7)
    assert tick(shell).nags == ["Nim 101 bob"]
    nag = shell.outbox()[-1].body
    assert _due_lines(nag)[0] == "Reminder:  2026-11-15 12:00 UTC (if no move by then)"
    assert all(len(line) <= 78 for line in nag.splitlines())
    shell.ok("vacation bob pw-bob 20")  # until 2026-11-28 12:00, then 2 days of grace
    assert _due_lines(shell.ok("nim show 101").body) == [
        "Reminder:  2026-11-28 12:00 UTC (if no move by then)",
        "Forfeit:   2026-11-30 12:00 UTC (if no move by then)",
    ]
    clock.advance(days=21, hours=-1)  # 2026-11-29 11:00: the reminder is due, the forfeit not
    report = tick(shell)
    assert report.nags == ["Nim 101 bob"] and report.forfeits == []
    clock.advance(hours=25)
    assert tick(shell).forfeits == ["Nim 101 bob"]
    assert _due_lines(shell.ok("nim show 101").body) == []  # over
    shell.ok("nim challenge alice bob --totaltime=3")  # the chess clock comes first
    assert _due_lines(shell.ok("nim show 102").body) == [
        "Forfeit:   2026-12-03 12:00 UTC (if no move by then)"
    ]


def test_server_checks_the_clocks(shell, clock, monkeypatch):
    from pbmserv.cli import server

    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    clock.advance(days=8)
    monkeypatch.setattr(server, "CLOCK_SECONDS", 0.05)
    running = server.Server(shell.settings, listen=False, clock=lambda: clock.now)
    running.start()
    try:
        wait_until(lambda: nags(shell), "the server's clock loop to nag alice", 10)
    finally:
        running.stop()
    assert nags(shell) == [("alice@example.org", "Nag: Nim Board 101 alice")]


def test_one_broken_board_does_not_stop_the_clock(shell, clock):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    shell.ok("nim challenge bob alice")
    with shell.sessions() as s, s.begin():
        s.scalar(select(Board).where(Board.number == 101)).position_cache = "{broken"
    clock.advance(days=7)
    assert tick(shell).nags == ["Nim 102 bob"]
    for days in (tournaments.NAG_DAYS, tournaments.FORFEIT_DAYS):  # what tournaments set
        assert clock_days(days) == days


def test_clock_options_are_days_within_a_year(shell, clock):
    """``--nagtime=1e300`` was taken, and the dates it made overflowed in every clock check
    of the server (nags, forfeits and the housekeeping after them stopped for all boards)."""
    shell.signup("alice", "bob")
    for value in ("1e300", "inf", "nan", "0", "-1", "366", "x"):
        refused = shell(f"nim challenge alice bob --nagtime={value}")
        assert refused.status == 1, value
        said = " ".join(refused.body.split())  # (wrapped to the mail's width)
        assert "--nagtime needs a number of days from 1 to 365, as in --nagtime=7" in said
    shell.ok("nim challenge alice bob --nagtime=365")
    # a board stored before that check is clocked by the defaults, and the others go on
    shell.ok("nim challenge bob alice")
    with shell.sessions() as s, s.begin():
        b = s.scalar(select(Board).where(Board.number == 101))
        b.options = {**b.options, "nagtime": 1e300, "forfeittime": 1e300}  # (inf: no JSON)
    clock.advance(days=7)
    assert tick(shell).nags == ["Nim 101 alice", "Nim 102 bob"]


def test_a_challenge_gives_every_player_at_least_a_day(shell, clock):
    """``--totaltime=0.00001`` started a board whose player to move had 0.86 seconds: the next
    clock check forfeited him, and the result was rated (``--forfeittime`` alike; a tiny
    ``--nagtime`` nagged him at every check).  The three options take 1 to 365 days, by mail
    and from the shell; a board stored with less runs on the defaults."""
    shell.signup("alice", "bob")
    for option in ("totaltime", "forfeittime", "nagtime"):
        for value in ("0.00001", "0.99"):
            line = f"nim challenge alice bob --{option}={value}"
            for channel in ("shell", "mail"):
                refused = shell(line, channel=channel, sender="alice@example.org")
                assert refused.status == 1, (line, channel)
                said = " ".join(refused.body.split())
                assert f"--{option} needs a number of days from 1 to 365" in said, said
    assert shell.outbox() == []
    shell.ok("nim challenge alice bob --totaltime=2 --forfeittime=1.5 --nagtime=1")
    clock.advance(hours=23)
    assert tick(shell).forfeits == [] and tick(shell).nags == []
    clock.advance(hours=1)
    assert tick(shell).nags == ["Nim 101 alice"]
    clock.advance(hours=12)
    assert tick(shell).forfeits == ["Nim 101 alice"]
    shell.ok("nim challenge bob alice")
    with shell.sessions() as s, s.begin():  # as stored before the check
        b = s.scalar(select(Board).where(Board.number == 102))
        b.options = {"totaltime": 0.00001, "forfeittime": 0.00001, "nagtime": 0.00001}
    clock.advance(minutes=5)
    assert tick(shell).forfeits == [] and tick(shell).nags == []
    assert "Time used" not in shell.ok("nim show 102").body  # no total time: none shown
    clock.advance(days=7)
    assert tick(shell).nags == ["Nim 102 bob"]
    for days in (tournaments.NAG_DAYS, tournaments.FORFEIT_DAYS):  # what tournaments set
        assert clock_days(days) == days


def test_the_clock_never_nags_nor_forfeits_a_robot(shell, clock):
    """With no server or robot run playing its turns, tick nagged the robot and then forfeited
    it: it lost a game it never had the chance to play."""
    from test_robots import operator_ok

    shell.signup("alice")
    operator_ok(shell, "robot add bot --game nim --level easy")
    shell.ok("nim challenge bot alice -pile=9")  # the robot is to move, and nobody plays it
    for days in (8, 30):
        clock.advance(days=days)
        report = tick(shell)
        assert report.nags == [] and report.forfeits == [], report
    assert board(shell).status.value == "active" and nags(shell) == []
    operator_ok(shell, "robot run")  # once it has moved, alice's clock runs as always
    clock.advance(days=8)
    assert [n.split()[-1] for n in tick(shell).nags] == ["alice"]

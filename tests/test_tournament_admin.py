"""Creating and cancelling tournaments: each option once, a Swiss's rounds bounded at create,
``tournament cancel`` for a tournament that has not started (the admins' commands, by mail
only for the admins named in the settings), names, and the rounds ``pairings`` shows.

Found by a tester: ``--rounds=1000`` was taken at create and refused only at start, the last
of a repeated option was taken in silence, a tournament that could not start kept its name
for ever, the error for a long name did not say the limit, ``t1r1b1`` was taken as a name,
and ``pairings rr1 9`` of a 3-round event said "not paired yet".
"""

from __future__ import annotations

import pytest
from mail_lines import overlong
from sqlalchemy import func, select
from tournament_play import play, started

from pbmserv.domain import tournaments
from pbmserv.store.models import Tournament, TournamentPlayer


@pytest.mark.parametrize("rounds", ["1000", "21", "0"])
def test_swiss_rounds_are_bounded_at_create(shell, rounds):
    r = shell(f"tournament create sw --game nim --format swiss --rounds={rounds}")
    assert r.status == 1 and f"--rounds takes rounds, 1 to 20, not {rounds}" in r.body
    with shell.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Tournament)) == 0
    shell.ok(
        f"tournament create sw --game nim --format swiss --rounds={tournaments.MAX_SWISS_ROUNDS}"
    )


@pytest.mark.parametrize(
    ("options", "twice"),
    [
        ("--game nim --game polis --format swiss", "--game"),
        ("--game=nim --format swiss --rounds=2 --rounds=3", "--rounds"),
        ("--game nim --format=swiss --format knockout", "--format"),
        # (the answer masks a word that could be a password)
        ("--game nim --format roundrobin --double --double", "********"),
    ],
)
def test_a_repeated_option_is_refused(shell, options, twice):
    r = shell(f"tournament create cup {options}")
    assert r.status == 2 and f"{twice} is given more than once" in r.body
    with shell.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Tournament)) == 0


def test_cancel_removes_a_tournament_that_has_not_started(shell):
    shell.signup("ann", "bob", "boss")
    shell.ok("tournament create cup --game nim --format swiss --rounds 3")
    shell.ok("tournament join cup ann pw-ann")
    shell.ok("tournament join cup bob pw-bob")
    r = shell("tournament cancel cup ann pw-ann", channel="mail")
    assert r.status == 1 and "administrator" in r.body
    shell.settings.admins = ["boss"]
    r = shell("tournament cancel cup boss wrong", channel="mail")
    assert r.status == 1
    r = shell("tournament cancel cup", channel="mail")  # by mail: an admin and his password
    assert r.status == 1 and "needs an administrator's userid and password" in r.body
    out = shell.ok("tournament cancel cup boss pw-boss", channel="mail")
    assert out.subject == "Tournament cup cancelled"
    assert "A mail tells its players: ann, bob." in " ".join(out.body.split())
    mails = [m for m in shell.outbox() if m.subject == "Tournament cup cancelled"]
    assert sorted(m.recipient for m in mails) == ["ann@example.org", "bob@example.org"]
    assert "cancelled this tournament before it started" in " ".join(mails[0].body.split())
    assert overlong(mails[0].body) == [] and overlong(out.body) == []
    with shell.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Tournament)) == 0
        assert s.scalar(select(func.count()).select_from(TournamentPlayer)) == 0
    r = shell("tournament standings cup")
    assert r.status == 1 and "no tournament 'cup'" in r.body
    shell.ok("tournament create cup --game nim --format knockout")  # the name is free again
    assert "Nobody had joined." in shell.ok("tournament cancel cup").body


def test_the_players_read_why_a_tournament_was_cancelled(shell):
    """The administrator's reason, written under the line in his mail, was dropped: the
    players read only that the tournament was cancelled."""
    shell.signup("ann", "bob", "boss")
    shell.settings.admins = ["boss"]
    shell.ok("tournament create cup --game nim --format swiss --rounds 3")
    shell.ok("tournament join cup ann pw-ann")
    reason = "Too few players this month; try the spring cup."
    shell.ok("tournament cancel cup boss pw-boss", channel="mail", comment=reason)
    [mail] = [m for m in shell.outbox() if m.subject == "Tournament cup cancelled"]
    assert f"boss writes:\n\n{reason}\n" in mail.body
    assert overlong(mail.body) == []
    shell.ok("tournament create cup --game nim --format swiss --rounds 3")
    shell.ok("tournament join cup ann pw-ann")
    shell.ok("tournament cancel cup")  # (the shell: no comment)
    assert "writes:" not in shell.outbox()[-1].body


def test_a_started_tournament_cannot_be_cancelled(shell):
    started(shell, "cup", "--format swiss", ("ann", "bob"))
    r = shell("tournament cancel cup")
    assert r.status == 1 and "has started: only a tournament that has not started" in r.body
    assert "t1r1b1" in shell.ok("tournament pairings cup").body


def test_cancel_is_in_the_help(shell):
    body = shell.ok("help").body
    assert "tournament cancel NAME [USERID PASSWORD]" in body
    assert "'cancel' removes a tournament that has not started" in body


# ----------------------------------------------------------------------------- names and rounds


def test_a_name_too_long_says_the_limit(shell):
    r = shell(f"tournament create {'a' * 40} --game nim --format swiss")
    assert r.status == 1 and "at most 32 characters, not 40" in r.body
    shell.ok(f"tournament create {'a' * 32} --game nim --format swiss")


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("t1r1b1", "'t1r1b1' reads as board 1 of round 1 of tournament t1"),
        ("T12r3b45", "'t12r3b45' reads as board 45 of round 3 of tournament t12"),
        ("t7", "'t7' reads as tournament number 7"),
    ],
)
def test_a_name_that_reads_as_a_tournament_or_a_board_is_refused(shell, name, why):
    r = shell(f"tournament create {name} --game nim --format swiss")
    assert r.status == 1 and why in " ".join(r.body.split())
    assert "may not have the form t<number>" in " ".join(r.body.split())
    shell.ok("tournament create t1r1 --game nim --format swiss")  # no board name: allowed


def test_pairings_refuses_a_round_the_tournament_does_not_have(shell):
    shell.signup("ann", "bob", "cat", "dan")
    shell.ok("tournament create rr1 --game nim -pile=1 --format roundrobin")
    for u in ("ann", "bob", "cat", "dan"):
        shell.ok(f"tournament join rr1 {u} pw-{u}")
    r = shell("tournament pairings rr1 0")
    assert r.status == 1 and "there is no round 0: rounds count from 1" in r.body
    assert "not paired yet" in shell.ok("tournament pairings rr1 2").body  # rounds unknown
    shell.ok("tournament start rr1")
    for round_ in ("9", "0", "999999"):
        r = shell(f"tournament pairings rr1 {round_}")
        assert r.status == 1 and f"there is no round {round_}: rr1 has 3 rounds" in r.body
    assert "Round 3:\n  not paired yet" in shell.ok("tournament pairings rr1 3").body
    for name in ("t1r1b1", "t1r1b2", "t1r2b1", "t1r2b2", "t1r3b1", "t1r3b2"):
        play(shell, name, "first")
    assert "Finished." in shell.ok("tournament pairings rr1 3").body
    r = shell("tournament pairings rr1 4")
    assert r.status == 1 and "there is no round 4: rr1 was over after 3 rounds" in r.body


def test_an_admins_userid_gives_no_rights_to_whoever_signs_it_up_by_mail(shell):
    """With admins = ["boss"] and no account boss, anyone could 'signup boss PW' by mail and
    then create tournaments and broadcast.  By mail an admin's userid cannot be signed up,
    and an admin account (one made by mail before its userid was named, say) acts by mail
    only once one of its addresses is confirmed."""
    mallory = {"channel": "mail", "sender": "mallory@evil.example"}
    shell.ok("signup chief pw-chief", **mallory)  # before 'chief' is named an admin
    shell.settings.admins = ["Boss", "chief"]
    refused = shell("signup boss pw-boss", **mallory)
    assert refused.status == 1 and "the userid 'boss' is reserved" in refused.body
    refused = shell("tournament create cup chief pw-chief --game nim --format swiss", **mallory)
    assert refused.status == 1 and "only once an address of the account is confirmed" in (
        " ".join(refused.body.split())
    )
    refused = shell("broadcast chief pw-chief", comment="Free prizes!", **mallory)
    assert refused.status == 1 and "is confirmed" in " ".join(refused.body.split())
    shell.ok("signup boss pw-boss boss@example.org")  # the operator's, from the shell
    shell.ok("tournament create cup boss pw-boss --game nim --format swiss", **mallory)


def test_the_server_says_at_start_which_admins_cannot_act_by_mail(shell, clock, caplog):
    from pbmserv.cli.server import Server

    shell.ok("signup chief pw-chief", channel="mail", sender="chief@example.org")
    shell.settings.admins = ["boss", "chief", "root", "gone"]
    shell.signup("root", "gone")
    shell.ok("signoff gone pw-gone")
    running = Server(shell.settings, listen=False, clock=lambda: clock.now, robots_and_clocks=False)
    with caplog.at_level("INFO", logger="pbmserv.server"):
        running.start()
        running.stop()
    said = [r.getMessage() for r in caplog.records if "administrator" in r.getMessage()]
    assert said.pop() == "the administrator 'root' acts by mail from root@example.org"
    assert said == [
        "the administrator 'boss' named in the config has no account: sign it up from the "
        "shell (pbmserv signup boss PASSWORD ADDRESS)",
        "the administrator 'chief' has no confirmed address and cannot act by mail: set one "
        "from the shell (pbmserv change address chief PASSWORD ADDRESS)",
        "the administrator 'gone' named in the config has closed its account",
    ]

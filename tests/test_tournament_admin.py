"""Creating and cancelling tournaments: each option once, a Swiss's rounds bounded at create,
and ``tournament cancel`` for a tournament that has not started (the admins' commands, by
mail only for the admins named in the settings).

Found by a tester: ``--rounds=1000`` was taken at create and refused only at start, the last
of a repeated option was taken in silence, and a tournament that could not start kept its
name for ever.
"""

from __future__ import annotations

import pytest
from mail_lines import overlong
from sqlalchemy import func, select

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
    assert r.status == 2
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


def test_a_started_tournament_cannot_be_cancelled(shell):
    shell.signup("ann", "bob")
    shell.ok("tournament create cup --game nim --format swiss")
    shell.ok("tournament join cup ann pw-ann")
    shell.ok("tournament join cup bob pw-bob")
    shell.ok("tournament start cup")
    r = shell("tournament cancel cup")
    assert r.status == 1 and "has started: only a tournament that has not started" in r.body
    assert "t1r1b1" in shell.ok("tournament pairings cup").body


def test_cancel_is_in_the_help(shell):
    body = shell.ok("help").body
    assert "tournament cancel NAME [USERID PASSWORD]" in body
    assert "'cancel' removes a tournament that has not started" in body

"""Notification modes (issue 17, point 6): every move, a daily digest, one mail until the player
acts; per user and per board; the clock reminders respect them."""

from __future__ import annotations

from test_games_via_dispatcher import _state

from pbmserv.domain.clocks import tick
from pbmserv.games import get_game


def _to(shell, address, since=0):
    return [m for m in shell.outbox()[since:] if m.recipient == address]


def _game(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")


def test_once_sends_one_mail_until_the_player_moves(shell):
    shell.signup("alice", "bob", "carol")
    shell.ok("notifications carol pw-carol once")
    shell.ok("pylon challenge alice bob carol")
    assert _to(shell, "carol@example.org") == []  # not her turn yet
    shell.ok("pylon move 101 alice pw-alice a1")
    assert _to(shell, "carol@example.org") == []
    assert len(_to(shell, "bob@example.org")) == 2  # every move for bob
    shell.ok("pylon move 101 bob pw-bob c1")
    [turn] = _to(shell, "carol@example.org")  # her turn: the one mail
    assert turn.body.endswith("pylon move 101 carol PASSWORD <move>#3\n")
    n = len(shell.outbox())
    shell.ok("pylon move 101 carol pw-carol e1")
    shell.ok("pylon move 101 alice pw-alice g1")
    assert _to(shell, "carol@example.org", n) == []
    shell.ok("pylon move 101 bob pw-bob i1")
    assert len(_to(shell, "carol@example.org", n)) == 1  # she moved since: her turn again


def test_board_mode_overrides_the_users_and_results_always_go_out(shell):
    _game(shell)
    shell.ok("notifications bob pw-bob once")
    answer = shell.ok("polis notifications 101 bob pw-bob digest")
    assert "gets digest" in answer.body and "its own mode" in answer.body
    n = len(shell.outbox())
    shell.ok("polis move 101 alice pw-alice d7-e6")
    assert _to(shell, "bob@example.org", n) == []  # digest: held for the daily mail
    shell.ok("polis notifications 101 bob pw-bob default")
    shell.ok("polis move 101 bob pw-bob b2-c3")
    shell.ok("polis move 101 alice pw-alice a7-a6")
    assert len(_to(shell, "bob@example.org", n)) == 1  # once (his own mode) after his move
    shell.ok("polis notifications 101 bob pw-bob digest")
    _, _, moves = _state(shell, get_game("polis"))
    shell.ok(f"polis move 101 bob pw-bob {[m for m in moves if m not in ('swap', 'resign')][0]}")
    shell.ok("polis resign 101 alice pw-alice")
    last = _to(shell, "bob@example.org", n)[-1]
    assert last.subject == "Polis Board 101" and "Game won by bob" in last.body


def test_digest_is_one_mail_a_day_from_the_clock(shell, settings, sessions, clock):
    shell.signup("alice", "bob", "carol")
    shell.ok("notifications bob pw-bob digest")
    shell.ok("polis challenge alice bob")
    shell.ok("plotto challenge alice bob")
    assert _to(shell, "bob@example.org") == []
    shell.ok("polis move 101 alice pw-alice d7-e6")
    report = tick(sessions, settings, clock.now)
    assert report.digests == 1
    [digest] = _to(shell, "bob@example.org")
    assert digest.subject == "pbmserv digest: 2 boards"
    assert (
        "Summary of Polis Board 101" in digest.body and "Summary of Plotto Board 101" in digest.body
    )
    assert "polis move 101 bob PASSWORD <move>#2" in digest.body
    shell.ok("plotto move 101 alice pw-alice a3")
    clock.advance(hours=2)
    assert tick(sessions, settings, clock.now).digests == 0  # not before a day has passed
    clock.advance(days=1)
    assert tick(sessions, settings, clock.now).digests == 1
    assert _to(shell, "bob@example.org")[-1].subject == "pbmserv digest: 1 board"
    assert tick(sessions, settings, clock.now).digests == 0  # nothing new


def test_clock_reminders_respect_the_modes(shell, settings, sessions, clock):
    shell.signup("alice", "bob")
    shell.ok("notifications bob pw-bob once")
    shell.ok("polis challenge alice bob --nagtime=1 --forfeittime=30")
    shell.ok("polis move 101 alice pw-alice d7-e6")  # bob's one mail
    n = len(shell.outbox())
    clock.advance(days=2)
    report = tick(sessions, settings, clock.now)
    assert report.nags == ["Polis 101 bob"]
    assert _to(shell, "bob@example.org", n) == []  # once: no reminder after the one mail
    shell.ok("notifications bob pw-bob every")
    clock.advance(days=2)
    tick(sessions, settings, clock.now)
    assert [m.subject for m in _to(shell, "bob@example.org", n)] == ["Nag: Polis Board 101 bob"]


def test_unknown_mode_and_strangers_are_refused(shell):
    _game(shell)
    assert shell("notifications bob pw-bob weekly").status == 2
    shell.signup("carol")
    assert shell("polis notifications 101 carol pw-carol once").status == 1
    shown = shell.ok("notifications alice pw-alice")
    assert "alice gets every (a board mail for every move)" in shown.body

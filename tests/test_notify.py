"""Notification modes (issue 17, point 6): every move, a daily digest, one mail until the player
acts; per user and per board.  What concerns the player himself comes whatever his mode: the
clock's reminder (a mail of its own), the mail that puts him out of the game, the result; and
a digest or "once" mail brings the comments the player has not had."""

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
    said = " ".join(answer.body.split())
    assert said == (
        "On Polis board 101 bob gets one mail a day with every board that changed (mode "
        "'digest'): its own mode."
    )
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


def test_a_once_player_gets_his_reminder_and_is_told_he_forfeits(shell, settings, sessions, clock):
    """H6: dave (once) had his one mail, then neither the reminder nor the mail saying that he
    forfeited; the game went on and only the others were told."""
    shell.signup("alice", "bob", "carol", "dave")
    shell.ok("notifications dave pw-dave once")
    shell.ok("pylon challenge alice bob carol dave --nagtime=2 --forfeittime=5")
    for userid, move in (("alice", "a1"), ("bob", "c1"), ("carol", "e1")):
        shell.ok(f"pylon move 101 {userid} pw-{userid} {move}")
    [turn] = _to(shell, "dave@example.org")  # his one mail
    n = len(shell.outbox())
    clock.advance(days=2)
    assert tick(sessions, settings, clock.now).nags == ["Pylon 101 dave"]
    [nag] = _to(shell, "dave@example.org", n)
    assert nag.subject == "Nag: Pylon Board 101 dave"
    said = " ".join(nag.body.split())
    assert "Reminder: it has been your turn for 2d 00h." in said
    assert (  # four players: only his seat forfeits (M5)
        "Without a move by 2026-11-06 12:00 UTC you forfeit your seat; the game goes on "
        "without you." in said
    )
    n = len(shell.outbox())
    clock.advance(days=3)
    assert tick(sessions, settings, clock.now).forfeits == ["Pylon 101 dave"]
    mails = shell.outbox()[n:]
    assert sorted(m.recipient.split("@")[0] for m in mails) == ["alice", "bob", "carol", "dave"]
    [told] = _to(shell, "dave@example.org", n)
    assert "dave forfeits: out of time" in told.body and "To move: alice" in told.body
    n = len(shell.outbox())
    shell.ok("pylon move 101 alice pw-alice g1")
    assert _to(shell, "dave@example.org", n) == []  # out of the game: once, no turn any more


def test_a_digest_player_gets_the_reminder_at_once_as_its_own_mail(
    shell, settings, sessions, clock
):
    """M1: bob's digest said "2 boards changed" and nothing of the reminder (no 'Reminder',
    no date), and took in a board that had not changed."""
    shell.signup("alice", "bob")
    shell.ok("notifications bob pw-bob digest")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice d7-e6")
    assert tick(sessions, settings, clock.now).digests == 1
    n = len(shell.outbox())
    clock.advance(days=7)
    report = tick(sessions, settings, clock.now)
    assert report.nags == ["Polis 101 bob"] and report.digests == 0
    [nag] = _to(shell, "bob@example.org", n)
    assert nag.subject == "Nag: Polis Board 101 bob"
    said = " ".join(nag.body.split())
    assert "Reminder: it has been your turn for 7d 00h." in said
    assert "Without a move by 2026-11-22 12:00 UTC you forfeit the game." in said
    assert nag.body.endswith("polis move 101 bob PASSWORD <move>#2\n")
    clock.advance(days=1)
    assert tick(sessions, settings, clock.now).digests == 0  # the board did not change


def _comments(body):
    """The comments of a board mail, as (userid, text)."""
    parts = body.split("*" * 72 + "\n")[1::2]
    return [tuple(p.strip().split(" writes:\n\n")) for p in parts]


def test_digest_and_once_mails_bring_the_comments_they_cover(shell, settings, sessions, clock):
    """M2: alice's "hello all" with her move reached only the players who get every mail."""
    shell.signup("alice", "bob", "carol")
    shell.ok("notifications bob pw-bob digest")
    shell.ok("notifications carol pw-carol once")
    shell.ok("nim challenge alice bob carol -pile=30")
    shell.ok("nim move 101 alice pw-alice 1", comment="hello all")
    shell.ok("nim move 101 bob pw-bob 1", comment="hi")
    [turn] = _to(shell, "carol@example.org")  # her turn: every comment since the game began
    assert _comments(turn.body) == [("alice", "hello all"), ("bob", "hi")]
    assert tick(sessions, settings, clock.now).digests == 1
    [digest] = _to(shell, "bob@example.org")
    assert _comments(digest.body) == [("alice", "hello all")]  # not his own
    shell.ok("nim move 101 carol pw-carol 1", comment="third")
    shell.ok("nim move 101 alice pw-alice 1", comment="again")
    n = len(shell.outbox())
    clock.advance(days=1)
    assert tick(sessions, settings, clock.now).digests == 1
    [digest] = _to(shell, "bob@example.org", n)
    assert _comments(digest.body) == [("carol", "third"), ("alice", "again")]
    shell.ok("nim move 101 bob pw-bob 1")
    [turn] = _to(shell, "carol@example.org", n)  # since her last mail, not her own
    assert _comments(turn.body) == [("alice", "again")]


def test_a_player_out_of_the_game_is_told_whatever_his_mode(shell):
    """A queued resignation taken on his turn puts carol (once) out while the game goes on:
    that mail reaches her though it is not her turn."""
    shell.signup("alice", "bob", "carol")
    shell.ok("notifications carol pw-carol once")
    shell.ok("nim challenge alice bob carol -pile=30")
    for userid in ("alice", "bob", "carol", "alice"):
        shell.ok(f"nim move 101 {userid} pw-{userid} 1")
    shell.ok("nim resign 101 carol pw-carol")  # bob's turn: queued
    n = len(shell.outbox())
    shell.ok("nim move 101 bob pw-bob 1")
    [told] = _to(shell, "carol@example.org", n)
    assert "carol resigned." in told.body and "To move: alice" in told.body


def test_a_once_player_is_mailed_again_after_a_move_is_taken_back(shell):
    """The record shrinks with an undo: the turn that comes back after it is a new one."""
    shell.signup("alice", "bob")
    shell.ok("notifications bob pw-bob once")
    shell.ok("nim challenge alice bob -pile=30")
    shell.ok("nim move 101 alice pw-alice 1")
    shell.ok("nim move 101 bob pw-bob 1")
    shell.ok("nim move 101 alice pw-alice 1")  # bob's turn: his mail at move 3
    shell.ok("nim move 101 alice pw-alice undo")
    shell.ok("nim move 101 bob pw-bob accept")  # alice's move 3 is taken back
    n = len(shell.outbox())
    shell.ok("nim move 101 alice pw-alice 2")  # a new move 3: bob's turn again
    [turn] = _to(shell, "bob@example.org", n)
    assert "Pile: 26" in turn.body


def test_a_once_player_whose_own_move_is_taken_back_is_told_it_is_his_turn(shell):
    """bob (once) had his mail at move 2, moved, and his undo passed: his turn is back at the
    ply he was mailed at, and he was told nothing (the review found it)."""
    shell.signup("alice", "bob")
    shell.ok("notifications bob pw-bob once")
    shell.ok("nim challenge alice bob -pile=30")
    shell.ok("nim move 101 alice pw-alice 1")  # bob's turn: his mail at move 2
    shell.ok("nim move 101 bob pw-bob 1")
    shell.ok("nim move 101 bob pw-bob undo")
    n = len(shell.outbox())
    shell.ok("nim move 101 alice pw-alice accept")  # bob's move 2 is taken back
    [turn] = _to(shell, "bob@example.org", n)
    assert "Pile: 29" in turn.body and "To move: bob" in turn.body


def test_unknown_mode_and_strangers_are_refused(shell):
    _game(shell)
    assert shell("notifications bob pw-bob weekly").status == 2
    shell.signup("carol")
    assert shell("polis notifications 101 carol pw-carol once").status == 1
    shown = shell.ok("notifications alice pw-alice")
    said = " ".join(shown.body.split())
    assert said.startswith("alice gets a board mail for every move (mode 'every'), on every")

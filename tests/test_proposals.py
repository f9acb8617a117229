"""Draw and undo proposals with three and four players, as a tester played them by mail: an
undo names the moves it takes back and never brings a player who is out back into the game,
one proposal is open at a time, an answer counts only for the proposal it names, every mail
about an open proposal says who has answered; comments sent with queued moves and
resignations reach the others when those are played."""

from __future__ import annotations

from test_clocks import tick
from test_community import records
from test_conversation import _last_mail_to
from test_games_via_dispatcher import PLOY_FOUR, play_till_one_ploy_seat_is_out

from pbmserv.games import get_game

STATUS = "It passes when every player still in the game accepts it; a reject or any move closes it."


def _mail(shell, userid):
    return _last_mail_to(shell, f"{userid}@example.org")


def flat(text: str) -> str:
    """The text with its lines joined (our sentences are wrapped to the mail's width)."""
    return " ".join(text.split())


def _first_moves(game: str, players: int, count: int) -> list[str]:
    """The first legal move, ``count`` times from the start (Plotto's labels change with
    every move, so a test cannot write them down once)."""
    position = get_game(game).new(players, {})
    found = []
    for _ in range(count):
        move = next(position.legal_moves())
        found.append(position.format_move(move))
        position.play(move)
    assert position.outcome() is None
    return found


def test_an_undo_never_takes_back_a_resignation_nor_brings_its_player_back(shell):
    """Pylon 104 of the report: eve's queued resignation followed carol's c5."""
    shell.signup("bob", "carol", "eve")
    shell.ok("pylon challenge bob carol eve -size=3")
    for line in ("bob pw-bob a1", "carol pw-carol c1", "eve pw-eve e1", "bob pw-bob a3"):
        shell.ok(f"pylon move 101 {line}")
    queued = shell.ok("pylon resign 101 eve pw-eve", comment="I have to leave, sorry.")
    assert queued.subject == "Pylon Board 101 queue"  # as the queue command's: no board here
    shell.ok("pylon move 101 carol pw-carol c5")
    resigned = _mail(shell, "bob").body  # eve's resignation came with carol's move
    refused = shell("pylon move 101 carol pw-carol undo")
    assert refused.status == 1
    assert (
        "(moves 5 (c5, carol) and 6 (resign, eve, queued)), but move 6 (resign, eve, "
        "queued) put eve out of the game; a player who is out stays out" in flat(refused.body)
    )
    out = shell("pylon move 101 eve pw-eve propose")
    assert out.status == 1 and "eve is out of the game on board 101" in out.body
    assert records(shell, game="pylon")[-1] == (2, "resign", True)
    shell.ok("pylon move 101 bob pw-bob a5")  # move 7
    proposed = shell.ok("pylon move 101 bob pw-bob undo")
    assert "Proposal #1: bob proposes to take back move 7 (a5, bob)." in proposed.body
    body = _mail(shell, "carol").body
    assert "Accepted: bob. Still to answer: carol." in flat(body)
    assert "pylon move 101 carol PASSWORD accept#1" in body
    # eve has no vote, and once out she gets the result, not every mail of the game
    assert "Proposal #1" not in _mail(shell, "eve").body
    done = shell.ok("pylon move 101 carol pw-carol accept#1")
    assert "carol accepts proposal #1. Move 7 (a5, bob) is taken back." in done.body
    assert records(shell, game="pylon")[-1] == (2, "resign", True)  # and eve is still out
    assert "eve  (resigned)" in done.body and "To move: bob (o)." in done.body
    said = "is queued: it takes effect on your turn. Your comment waits with it"
    assert said in flat(queued.body)  # and it did, till her resignation was played:
    assert "eve resigned." in resigned and "eve writes:\n\nI have to leave, sorry.\n" in resigned


def test_an_undo_never_takes_back_a_forfeit(shell, clock):
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob carol -pile=30")
    shell.ok("nim move 101 alice pw-alice 2")
    clock.advance(days=21)
    assert tick(shell).forfeits == ["Nim 101 bob"]
    refused = shell("nim move 101 alice pw-alice undo")
    assert refused.status == 1 and "put bob out of the game" in flat(refused.body)
    assert records(shell) == [(0, "2", False), (1, "Forfeit", True)]


def test_an_undo_never_takes_back_an_elimination(shell):
    """Four players of Ploy: the move that knocked one out stays, and he has no vote."""
    plan, _ = play_till_one_ploy_seat_is_out(shell)
    users = PLOY_FOUR
    last = records(shell, game="ploy")[-1]
    mover = users[plan[-1][0]]
    refused = shell(f"ploy move 101 {mover} pw-{mover} undo")
    assert refused.status == 1
    said = flat(refused.body)
    assert f"but move {len(plan)} ({plan[-1][1]}, {mover}) put " in said
    assert "out of the game; a player who is out stays out" in said
    assert records(shell, game="ploy")[-1] == last


def test_an_undo_names_every_move_it_takes_back_and_queued_comments_travel(shell):
    """Plotto 103 of the report (Plotto moves cannot be queued now; Pylon has the same
    course): bob's move set off carol's queued move."""
    shell.signup("alice", "bob", "carol")
    shell.ok("pylon challenge alice bob carol")
    moves = _first_moves("pylon", 3, 6)
    for ply, user in enumerate(("alice", "bob", "carol", "alice")):
        shell.ok(f"pylon move 101 {user} pw-{user} {moves[ply]}")
    queued = shell.ok(f"pylon queue 101 carol pw-carol {moves[5]}", comment="Queued, good luck.")
    assert f"is queued as 0{moves[5]}" in flat(queued.body)  # (with the level it has now)
    shell.ok(f"pylon move 101 bob pw-bob {moves[4]}", comment="My move.")
    assert records(shell, game="pylon")[-1] == (2, moves[5], True)
    to_alice = _mail(shell, "alice").body
    taken = f"moves 5 ({moves[4]}, bob) and 6 ({moves[5]}, carol, queued)"
    proposed = shell.ok("pylon move 101 carol pw-carol undo")
    assert f"Proposal #1: carol proposes to take back {taken}." in flat(proposed.body)
    shell.ok("pylon move 101 alice pw-alice accept#1")
    to_bob = _mail(shell, "bob").body
    assert f"alice accepts proposal #1: to take back {taken}." in flat(to_bob)
    assert "Accepted: alice, carol. Still to answer: bob." in flat(to_bob)
    assert to_bob.endswith("  pylon move 101 bob PASSWORD reject#1\n")
    to_carol = _mail(shell, "carol").body  # the proposer is told how it stands
    assert "Accepted: alice, carol. Still to answer: bob." in flat(to_carol)
    assert "accept#1" not in to_carol
    done = shell.ok("pylon move 101 bob pw-bob accept#1")
    assert f"bob accepts proposal #1. M{taken[1:]} are taken back." in flat(done.body)
    assert len(records(shell, game="pylon")) == 4
    assert "bob writes:\n\nMy move.\n" in to_alice  # the mail of bob's move 5 and carol's 6
    assert "carol writes:\n\nQueued, good luck.\n" in to_alice
    assert "is played on your turn. Your comment waits with it" in flat(queued.body)
    shell.ok(f"pylon move 101 bob pw-bob {moves[4]}")  # move 5 again: no old comment
    assert "writes:" not in _mail(shell, "carol").body


def test_one_proposal_at_a_time_and_an_answer_counts_only_for_its_own(shell):
    """Pylon 102 of the report: bob's accept of alice's undo passed her draw proposal."""
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob carol -pile=30")
    shell.ok("nim move 101 alice pw-alice 1")
    stale = shell("nim move 101 alice pw-alice undo#1")  # on a proposal, #N guards as on a move
    assert stale.status == 1 and "this would be move 2, not move 1" in flat(stale.body)
    shell.ok("nim move 101 alice pw-alice undo#2")
    to_bob = _mail(shell, "bob").body
    for line in ("alice pw-alice propose", "bob pw-bob undo"):
        second = shell(f"nim move 101 {line}")
        assert second.status == 1
        said = flat(second.body)
        assert "proposal #1 is open (to take back move 1 (1, alice)): it must be" in said
        assert "accept#1 or reject#1" in said
    assert "Proposal #1 is open: to take back move 1 (1, alice). Accepted: alice." in flat(to_bob)
    assert "nim move 101 bob PASSWORD accept#1\n" in to_bob
    shell.ok("nim move 101 bob pw-bob accept#1")
    to_carol = _mail(shell, "carol").body
    assert "bob accepts proposal #1: to take back move 1 (1, alice)." in flat(to_carol)
    assert "Accepted: alice, bob. Still to answer: carol. " + STATUS in flat(to_carol)
    again = shell("nim move 101 bob pw-bob accept#1")
    assert again.status == 1 and "bob has already accepted proposal #1" in flat(again.body)
    withdrawn = shell.ok("nim move 101 alice pw-alice reject#1")
    assert "alice rejects proposal #1: to take back move 1 (1, alice). It is closed." in flat(
        withdrawn.body
    )
    shell.ok("nim move 101 alice pw-alice propose")
    for late in ("accept", "accept#1"):  # bob's answers to the undo, arriving late
        refused = shell(f"nim move 101 bob pw-bob {late}")
        assert refused.status == 1 and "the open one is #2: a draw" in flat(refused.body)
    assert records(shell) == [(0, "1", False)]
    shell.ok("nim move 101 bob pw-bob accept#2")
    done = shell.ok("nim move 101 carol pw-carol accept#2")
    assert "carol accepts proposal #2. The game is drawn by agreement." in flat(done.body)


def test_queued_comments_go_with_what_is_played_or_the_answer_says_where(shell):
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob carol -pile=30")
    shell.ok("nim queue 101 carol pw-carol 2", comment="Not this one.")
    cancelled = shell.ok("nim queue 101 carol pw-carol cancel", comment="Never mind.")
    shell.ok("nim queue 101 carol pw-carol resign", comment="Goodbye, all.")
    shell.ok("nim move 101 alice pw-alice 1")
    played = shell.ok("nim move 101 bob pw-bob 1")
    assert "carol resigned." in played.body and "carol writes:\n\nGoodbye, all.\n" in played.body
    assert "Not this one." not in played.body and "Never mind." not in played.body
    said = flat(cancelled.body)
    assert "is cancelled, and the comment queued with it." in said
    assert "The comment of this line goes to nobody." in said

"""Spectators, chat, queued and two-step moves, and accept/reject/limit/seek."""

from __future__ import annotations

from sqlalchemy import select

from pbmserv.store.models import Board, User


def records(shell, number=101, game="nim"):
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.game == game, Board.number == number))
        return [(m.seat, m.text, m.auto) for m in board.moves]


def flat(text: str) -> str:
    """The text with its lines joined (answers are wrapped to the mail's width)."""
    return " ".join(text.split())


def _to_move(shell, number=101, game="nim"):
    """The userid of the player to move on a board (None once it is over)."""
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.game == game, Board.number == number))
        return None if board.to_move_id is None else s.get(User, board.to_move_id).userid


def new_mails(shell, before):
    return [(m.recipient.split("@")[0], m.subject) for m in shell.outbox()[before:]]


# ----------------------------------------------------------------------------- spectators


def test_subscribe_notify_and_unsubscribe_fan_out(shell):
    shell.signup("alice", "bob", "carol", "dave")
    shell.ok("nim challenge alice bob -pile=5")
    sub = shell.ok("nim sub 101 carol pw-carol")
    assert "carol now gets every mail of Nim board 101" in sub.body
    again = shell.ok("nim sub 101 carol pw-carol")  # (twice: nothing new)
    assert "carol already gets every mail of Nim board 101" in again.body
    shell.ok("nim notify 101 dave pw-dave")
    before = len(shell.outbox())
    moved = shell.ok("nim move 101 alice pw-alice 1")
    assert "Subscribers:\n  carol\n  dave (result only)\n" in moved.body
    assert new_mails(shell, before) == [
        ("bob", "Nim Board 101 bob"),
        ("carol", "Nim Board 101 bob"),
    ]
    before = len(shell.outbox())
    shell.ok("nim unsub 101 carol pw-carol")
    shell.ok("nim move 101 bob pw-bob 1")
    assert new_mails(shell, before) == [("alice", "Nim Board 101 alice")]
    before = len(shell.outbox())
    shell.ok("nim move 101 alice pw-alice 3")  # takes the last stone
    assert sorted(new_mails(shell, before)) == [("bob", "Nim Board 101"), ("dave", "Nim Board 101")]
    assert shell("nim unsubscribe 101 carol pw-carol").status == 1


def test_spectators_cost_a_move_no_query_of_their_own(shell):
    """The board comes with its spectators, their accounts and addresses in one query: a move
    on a board that five people watch reads what a move on a board nobody watches reads
    (before, each spectator's account, addresses and robot row were queries of their own)."""
    from test_board_index import counted

    shell.signup("alice", "bob", *(f"fan{i}" for i in range(5)))
    shell.ok("nim challenge alice bob -pile=9")  # 101: watched
    shell.ok("nim challenge alice bob -pile=9")  # 102: not watched
    for i in range(5):
        shell.ok(f"nim subscribe 101 fan{i} pw-fan{i}")
    shell.ok("nim move 101 alice pw-alice 1")
    shell.ok("nim move 102 alice pw-alice 1")  # both boards now at the same point
    with counted(shell.sessions) as watched:
        moved = shell.ok("nim move 101 bob pw-bob 1")
    with counted(shell.sessions) as unwatched:
        shell.ok("nim move 102 bob pw-bob 1")
    assert "Subscribers:\n  fan0\n  fan1\n  fan2\n  fan3\n  fan4\n" in moved.body

    def reads(statements: list[str]) -> list[str]:
        return [s for s in statements if s.lstrip().upper().startswith("SELECT")]

    assert len(reads(watched)) == len(reads(unwatched))
    assert len(watched) - len(unwatched) <= 5  # their board mails (PostgreSQL: in one INSERT)


def test_subscribe_refusals(shell):
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob -pile=1")
    assert "plays on board 101" in shell("nim subscribe 101 alice pw-alice").body
    assert shell("nim subscribe 101 carol wrong").status == 1
    assert shell("nim subscribe 102 carol pw-carol").status == 1
    shell.ok("nim move 101 alice pw-alice 1")
    assert "is over" in shell("nim subscribe 101 carol pw-carol").body


def test_forfeit_mail_reaches_result_only_spectators(shell, clock):
    from pbmserv.domain import clocks

    shell.signup("alice", "bob", "dave")
    shell.ok("nim challenge alice bob")
    shell.ok("nim notify 101 dave pw-dave")
    clock.advance(days=7)
    clocks.tick(shell.sessions, shell.settings, clock.now)
    assert all(m.recipient != "dave@example.org" for m in shell.outbox())
    clock.advance(days=14)
    clocks.tick(shell.sessions, shell.settings, clock.now)
    assert [m.subject for m in shell.outbox() if m.recipient == "dave@example.org"] == [
        "Nim Board 101"
    ]


# ----------------------------------------------------------------------------- chat


def test_chat_goes_to_players_and_spectators_only_from_them(shell):
    shell.signup("alice", "bob", "carol", "mallory")
    shell.ok("nim challenge alice bob")
    shell.ok("nim subscribe 101 carol pw-carol")
    before = len(shell.outbox())
    said = shell.ok(
        "nim chat 101 carol pw-carol",
        channel="mail",
        sender="carol@example.org",
        comment="Nice opening!",
    )
    assert said.subject == "Nim Board 101 Chat"
    assert "carol writes:\n\nNice opening!" in said.body
    assert "\nSent to alice and bob.\n" in said.body  # the sender's copy says who got it
    assert sorted(new_mails(shell, before)) == [
        ("alice", "Nim Board 101 Chat"),
        ("bob", "Nim Board 101 Chat"),
    ]
    shell.ok("nim chat 101 alice pw-alice thanks carol")
    assert "alice writes:\n\nthanks carol" in shell.outbox()[-1].body
    refused = shell("nim chat 101 mallory pw-mallory", comment="spam")
    assert refused.status == 1 and "only the players and spectators" in refused.body
    assert "nothing to say" in shell("nim chat 101 alice pw-alice").body


def test_chat_skips_a_spectator_who_asked_for_the_result_only(shell):
    """'notify' is the board's final mail only: no chat reaches dave, nor names him."""
    shell.signup("alice", "bob", "carol", "dave")
    shell.ok("nim challenge alice bob")
    shell.ok("nim subscribe 101 carol pw-carol")
    shell.ok("nim notify 101 dave pw-dave")
    before = len(shell.outbox())
    said = shell.ok("nim chat 101 bob pw-bob hello all")
    assert "\nSent to alice and carol.\n" in said.body
    assert sorted(u for u, _ in new_mails(shell, before)) == ["alice", "carol"]
    own = shell.ok("nim chat 101 dave pw-dave good luck")  # he may still chat himself
    assert "\nSent to alice, bob and carol.\n" in own.body


def test_chat_lines_to_one_address_are_capped_a_day(shell, settings):
    """A spectator's chat reaches the players of any board he subscribes to: capped, even
    with his password from his own address (his text is not the game)."""
    settings.max_messages_per_pair_per_day = 1
    shell.signup("alice", "bob", "carol", "mallory")
    shell.ok("nim challenge alice bob")
    shell.ok("nim subscribe 101 mallory pw-mallory")
    line = "nim chat 101 mallory pw-mallory"

    def chat():
        return shell(line, channel="mail", sender="mallory@example.org", comment="spam")

    before = len(shell.outbox())
    assert "not sent" not in chat().body
    assert sorted(new_mails(shell, before)) == [
        ("alice", "Nim Board 101 Chat"),
        ("bob", "Nim Board 101 Chat"),
    ]
    before = len(shell.outbox())
    again = chat()
    assert again.status == 1 and new_mails(shell, before) == []
    assert (
        "your chat line was not sent to alice, bob: alice has had 1 message from mallory "
        "today; bob has had 1 message from mallory today."
    ) in " ".join(again.body.split())
    shell.ok("nim subscribe 101 carol pw-carol")
    some = chat()  # only the capped ones are left out
    assert some.status == 0 and new_mails(shell, before) == [("carol", "Nim Board 101 Chat")]
    assert "It was not sent to alice, bob: alice has had 1 message" in " ".join(some.body.split())


# ----------------------------------------------------------------------------- queue


def test_queued_move_is_played_when_the_turn_comes(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    queued = shell.ok("nim qmove 101 bob pw-bob 2")
    assert "is queued" in queued.body
    moved = shell.ok("nim move 101 alice pw-alice 1")
    assert records(shell) == [(0, "1", False), (1, "2", True)]
    assert moved.subject == "Nim Board 101 alice" and "2 (Auto)" in moved.body
    # on one's own turn the queued move is played at once
    played = shell.ok("nim queue 101 alice pw-alice 3")
    assert played.subject == "Nim Board 101 bob" and records(shell)[-1] == (0, "3", False)


def test_illegal_queued_move_is_reported(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob -pile=5")
    assert "cannot queue 'x'" in shell("nim queue 101 bob pw-bob x").body
    queued = shell.ok("nim queue 101 bob pw-bob 3")
    assert "is queued" in queued.body
    moved = shell.ok("nim move 101 alice pw-alice 3")  # two left: taking 3 is illegal now
    assert "The queued move 3 of bob was not legal" in moved.body
    assert moved.subject == "Nim Board 101 bob"
    assert records(shell) == [(0, "3", False)]
    mail = shell.outbox()[-1]
    assert mail.recipient == "bob@example.org" and "The queued move 3 of bob" in mail.body


def test_queue_cancel_and_resign(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob -pile=2")
    shell.ok("nim queue 101 bob pw-bob 3")
    shell.ok("nim queue 101 bob pw-bob cancel")
    shell.ok("nim move 101 alice pw-alice 1")
    assert records(shell) == [(0, "1", False)]
    shell.ok("nim move 101 bob pw-bob 1")  # bob takes the last stone: no queue involved
    assert shell("nim queue 101 alice pw-alice 1").status == 1  # the game is over


def test_cancel_drops_a_queued_resignation_and_the_newest_wish_is_queued(shell):
    """A player who queued ``resign`` and changed his mind must be able to take it back:
    ``cancel`` dropped only a queued move, and he resigned on his turn all the same."""
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob -pile=9")
    shell.ok("nim queue 101 bob pw-bob resign", comment="I give up.")
    cancelled = shell.ok("nim queue 101 bob pw-bob cancel")
    assert (
        "Your queued resignation on Nim board 101 is cancelled, and the comment queued with it."
        in flat(cancelled.body)
    )
    nothing = shell.ok("nim queue 101 bob pw-bob cancel")
    assert "You have nothing queued on Nim board 101: nothing is cancelled." in flat(nothing.body)
    shell.ok("nim move 101 alice pw-alice 1")
    assert records(shell) == [(0, "1", False)]  # bob did not resign: it is his turn
    # one thing is queued at a time, the newest: a move replaces a resignation, and back
    shell.ok("nim move 101 bob pw-bob 1")
    shell.ok("nim queue 101 bob pw-bob resign")
    replaced = shell.ok("nim queue 101 bob pw-bob 2")
    assert "It replaces your queued resignation." in flat(replaced.body)
    shell.ok("nim move 101 alice pw-alice 1")
    assert records(shell)[-1] == (1, "2", True)  # his queued move, not a resignation
    shell.ok("nim queue 101 bob pw-bob 1")
    again = shell.ok("nim resign 101 bob pw-bob")  # not his turn: queued as well
    assert "It replaces your queued move 1." in flat(again.body)
    shell.ok("nim move 101 alice pw-alice 1")
    assert records(shell)[-1][1] == "resign" and records(shell)[-1][0] == 1


def test_a_queued_move_is_not_judged_for_the_player_to_move_now(shell):
    """Queued while alice is to move, bob's move is his own: no note that it moves none of
    "his" pieces (the position would judge it as alice's move)."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    queued = shell.ok("polis queue 101 bob pw-bob a2-a3")
    assert "is queued" in queued.body
    assert "not yours" not in queued.body and "Note:" not in queued.body
    shell.ok("polis move 101 alice pw-alice a7-a6")
    assert records(shell, game="polis")[-1][1:] == ("a2-a3", True)  # played for bob
    assert "cannot queue 'z9'" in shell("polis queue 101 bob pw-bob z9").body  # unreadable


def test_plotto_refuses_a_queued_letter_that_would_name_another_cell(shell):
    """Plotto's letters are handed out again after every move: carol's queued d4 (the cell
    she saw) landed on another cell once bob had played.  A letter names no cell for long, so
    the queue refuses it and says why; on her own turn it is played at once as before."""
    shell.signup("alice", "bob", "carol")
    shell.ok("plotto challenge alice bob carol")
    shell.ok("plotto move 101 alice pw-alice a1")
    refused = shell("plotto queue 101 carol pw-carol a2")
    assert refused.status == 1
    assert "cannot queue 'a2': Plotto moves cannot be queued" in refused.body
    assert "letters are handed out again after every move" in " ".join(refused.body.split())
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.game == "plotto"))
        assert [seat.queued_move for seat in board.seats] == [None, None, None]
    shell.ok("plotto move 101 bob pw-bob a2")
    played = shell.ok("plotto queue 101 carol pw-carol a3")  # her turn: played now
    assert records(shell, game="plotto")[-1] == (2, "a3", False)
    assert played.subject == "Plotto Board 101 alice"


def test_a_queued_pylon_point_keeps_the_level_it_has_now(shell):
    """A Pylon point without a level means its next free level, which may rise before the
    player's turn: the queue keeps the level the player saw, and it is checked on his turn."""
    shell.signup("alice", "bob", "carol")
    shell.ok("pylon challenge alice bob carol")
    queued = shell.ok("pylon queue 101 carol pw-carol c3")
    assert "Your move c3 on Pylon board 101 is queued as 0c3" in queued.body
    shell.ok("pylon move 101 alice pw-alice c3")  # c3 is taken: no other level for carol
    moved = shell.ok("pylon move 101 bob pw-bob a1")
    assert "The queued move 0c3 of carol was not legal" in moved.body
    assert records(shell, game="pylon") == [(0, "c3", False), (1, "a1", False)]


# ----------------------------------------------------------------------------- submit, confirm


def test_submit_then_confirm(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    assert "not your turn" in shell("nim submit 101 bob pw-bob 1").body
    assert "you may take 1 to 3" in shell("nim submit 101 alice pw-alice 4").body
    before = len(shell.outbox())
    preview = shell.ok("nim submit 101 alice pw-alice 2")
    assert preview.subject == "Nim Board 101 Submitted"
    assert "Your move 2 (move 1)" in preview.body and "Pile: 13" in preview.body
    assert "nim confirm 101 alice PASSWORD" in preview.body
    assert records(shell) == [] and len(shell.outbox()) == before
    done = shell.ok("nim confirm 101 alice pw-alice")
    assert done.subject == "Nim Board 101 bob"
    assert records(shell) == [(0, "2", False)]
    assert "no submitted move" in shell("nim confirm 101 alice pw-alice").body


def test_an_undo_drops_a_submission_shown_on_a_position_it_takes_back(shell):
    """alice submits move 3 (and sees the board after it); an undo takes move 2 back and bob
    plays another move 2: 'confirm' played alice's stored move as move 3 on a position she
    never saw, since its number matched again."""
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob -pile=15")
    shell.ok("nim move 101 alice pw-alice 1")
    shell.ok("nim move 101 bob pw-bob 1")
    shell.ok("nim submit 101 alice pw-alice 3")  # pile 13: would leave 10
    shell.ok("nim move 101 alice pw-alice undo")  # takes back bob's 1
    shell.ok("nim move 101 bob pw-bob accept#1")
    assert "submitted" not in shell.ok("nim showas 101 alice pw-alice").body
    shell.ok("nim move 101 bob pw-bob 3")  # another move 2
    refused = shell("nim confirm 101 alice pw-alice")
    assert refused.status == 1 and "alice has no submitted move on board 101" in refused.body
    assert [text for _, text, _ in records(shell)] == ["1", "3"]


def test_confirm_of_a_stale_submission_is_refused(shell):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    shell.ok("nim submit 101 alice pw-alice 2")
    shell.ok("nim move 101 alice pw-alice 1")
    shell.ok("nim move 101 bob pw-bob 1")
    stale = shell("nim confirm 101 alice pw-alice")
    assert stale.status == 1 and "not move 1" in stale.body
    assert len(records(shell)) == 2


# ----------------------------------------------------------------------------- accounts


def user(shell, userid):
    with shell.sessions() as s:
        return s.scalar(select(User).where(User.userid == userid))


def test_accept_and_reject(shell):
    shell.signup("alice", "bob")
    shell.ok("reject bob pw-bob")
    assert user(shell, "bob").accepts_challenges is False
    refused = shell("nim challenge alice bob")
    assert refused.status == 1 and "bob does not accept challenges" in refused.body
    assert shell("accept bob wrong").status == 1
    shell.ok("accept bob pw-bob")
    shell.ok("nim challenge alice bob")


def test_limit_refuses_challenges_over_it(shell):
    shell.signup("alice", "bob", "carol")
    answer = shell.ok("limit bob pw-bob 1")
    assert "bob takes at most 1 active game (now 0 active)" in answer.body
    shell.ok("nim challenge alice bob -pile=1")
    refused = shell("nim challenge carol bob")
    assert refused.status == 1 and "bob has 1 active game and takes at most 1" in refused.body
    shell.ok("nim move 101 alice pw-alice 1")  # the game ends: room for one more
    shell.ok("nim challenge carol bob")
    shell.ok("limit bob pw-bob none")
    shell.ok("nim challenge alice bob")
    assert shell("limit bob pw-bob many").status == 2


def test_a_limit_under_the_games_played_and_a_seek_it_blocks_say_so(shell):
    """A limit below what he plays holds off new challenges: the answer says so, and a seek
    that the limit blocks says that too (it was refused later without a word)."""
    shell.signup("alice", "bob", "dave")
    shell.ok("nim challenge alice dave")
    shell.ok("nim challenge bob dave")
    said = " ".join(shell.ok("limit dave pw-dave 1").body.split())
    assert said == (
        "dave takes at most 1 active game. He has 2 active now, so challenges to him are "
        "refused until he is under the limit."
    )
    sought = " ".join(shell.ok("seek dave pw-dave 2").body.split())
    assert "dave seeks 2 more games" in sought
    assert "His limit of 1 active game (2 active now) refuses every challenge until he is " in (
        sought
    )
    shell.ok("limit dave pw-dave 3")
    sought = " ".join(shell.ok("seek dave pw-dave 2").body.split())
    assert sought.endswith(
        "His limit of 3 active games (2 active now) lets only 1 more start for now."
    )
    shell.ok("limit dave pw-dave 5")
    assert "His limit" not in shell.ok("seek dave pw-dave 2").body


def test_seek_counts_down_and_turns_accept_on(shell):
    shell.signup("alice", "bob")
    shell.ok("reject bob pw-bob")
    answer = shell.ok("seek bob pw-bob 2")
    assert "bob seeks 2 more games" in answer.body
    assert user(shell, "bob").accepts_challenges is True
    shell.ok("nim challenge alice bob")
    assert user(shell, "bob").seeking == 1
    assert "bob" in shell.ok("nim standings").body
    shell.ok("seek bob pw-bob 0")
    assert user(shell, "bob").seeking == 0
    assert "bob" not in shell.ok("nim standings").body


def test_help_lists_the_new_commands(shell):
    general = shell.ok("help").body
    for word in ("vacation", "accept", "reject", "limit", "seek"):
        assert f"\n  {word} USERID PASSWORD" in general, word
    game = shell.ok("nim help").body
    for word in ("subscribe", "unsubscribe", "notify", "chat", "queue", "submit", "confirm"):
        assert f"nim {word} BOARD USERID PASSWORD" in game, word
    assert "nim standings" in game


def test_the_chat_senders_copy_names_only_who_got_it(shell):
    """The copy's "Sent to" named every player and spectator, robots and players without an
    address to mail included (the review found it)."""
    from test_robots import operator_ok

    shell.signup("alice", "carol")
    operator_ok(shell, "robot add r1 --game polis --level easy")
    shell.ok("polis challenge alice r1")
    shell.ok("polis subscribe 101 carol pw-carol")
    said = shell.ok("polis chat 101 alice pw-alice", comment="Hello")
    assert "\nSent to carol.\n" in said.body


def test_a_player_out_of_a_game_that_goes_on_gets_its_result_not_every_move(shell):
    """With robots playing on, two players who had resigned got 150 board mails each in 20
    seconds: once out, a player gets the result, and the moves only if he subscribes."""
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob carol -pile=15")
    for who in ("alice", "bob", "carol"):  # (a resignation before one's first move declines)
        shell.ok(f"nim move 101 {who} pw-{who} 1")
    before = len(shell.outbox())
    resigned = shell.ok("nim move 101 alice pw-alice resign")
    told = [m for m in shell.outbox()[before:] if m.recipient == "alice@example.org"]
    assert told == []  # (the resigning player's own answer is the command's: it says so)
    assert "The game goes on without you: you get its result" in resigned.body
    shell.ok("nim move 101 bob pw-bob 1")
    shell.ok("nim move 101 carol pw-carol 1")
    assert "alice" not in [r for r, _ in new_mails(shell, before)]
    watched = shell.ok("nim subscribe 101 alice pw-alice")
    assert "alice now gets every mail of Nim board 101." in flat(watched.body)
    before = len(shell.outbox())
    shell.ok("nim move 101 bob pw-bob 1")
    assert "alice" in [r for r, _ in new_mails(shell, before)]
    shell.ok("nim unsubscribe 101 alice pw-alice")
    before = len(shell.outbox())
    shell.ok("nim move 101 carol pw-carol 1")
    assert "alice" not in [r for r, _ in new_mails(shell, before)]
    while (who := _to_move(shell)) is not None:
        shell.ok(f"nim move 101 {who} pw-{who} 1")
    assert "alice" in [r for r, _ in new_mails(shell, before)]  # the result


def test_a_player_put_out_is_told_he_gets_the_result_only(shell):
    shell.signup("alice", "bob", "carol")
    shell.ok("nim challenge alice bob carol -pile=15")
    for who in ("alice", "bob", "carol"):
        shell.ok(f"nim move 101 {who} pw-{who} 1")
    shell.ok("nim queue 101 bob pw-bob resign")
    before = len(shell.outbox())
    shell.ok("nim move 101 alice pw-alice 1")  # bob's queued resignation is played
    [to_bob] = [m for m in shell.outbox()[before:] if m.recipient == "bob@example.org"]
    assert "The game goes on without you: you get its result" in to_bob.body
    assert "nim subscribe 101 USERID PASSWORD" in to_bob.body

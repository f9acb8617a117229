"""The classic commands players relied on (issue 17, point 10): message, broadcast, showas,
all show, preview new, subscribe all, and the misspelling aliases."""

from __future__ import annotations

from sqlalchemy import select

from pbmserv.commands.grammar import mask_passwords
from pbmserv.store.models import Board, BoardStatus


def _to(shell, address, since=0):
    return [m for m in shell.outbox()[since:] if m.recipient == address]


def test_message_goes_only_to_players_you_share_a_board_with(shell):
    shell.signup("alice", "bob", "carol")
    shell.ok("polis challenge alice bob")
    n = len(shell.outbox())
    sent = shell.ok(
        "message alice pw-alice bob", channel="mail", sender="alice@example.org", comment="Hi Bob!"
    )
    assert "Your message went to bob" in sent.body
    [mail] = _to(shell, "bob@example.org", n)
    assert mail.subject == "pbmserv message from alice"
    assert "alice writes:\n\nHi Bob!\n" in mail.body
    stranger = shell(
        "message alice pw-alice carol", channel="mail", sender="alice@example.org", comment="Hi"
    )
    assert stranger.status == 1 and "share no unfinished board" in stranger.body
    assert _to(shell, "carol@example.org") == []
    empty = shell("message alice pw-alice bob", channel="mail", sender="alice@example.org")
    assert empty.status == 1 and "nothing to say" in empty.body
    shell.ok('message alice pw-alice bob "--text=from the shell"')
    assert "from the shell" in _to(shell, "bob@example.org")[-1].body
    shell.ok("message --text hello alice pw-alice bob")  # a value after it, as click reads it
    assert "alice writes:\n\nhello\n" in _to(shell, "bob@example.org")[-1].body


def test_a_message_from_the_shell_says_to_use_text_and_the_words_name_recipients(shell):
    """A shell has no mail body: the error names --text.  The words after the password are
    userids (unlike chat's, which are its text): one naming nobody says where the text goes."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    empty = shell("message alice pw-alice bob")
    assert empty.status == 1 and "nothing to say: give it with --text=TEXT" in empty.body
    by_mail = shell("message alice pw-alice bob", channel="mail", sender="alice@example.org")
    assert "nothing to say: write it in the mail body" in by_mail.body
    words = shell("message alice pw-alice bob hello there --text=x")
    said = " ".join(words.body.split())
    assert words.status == 1 and "the 2nd userid given names no player" in said
    assert "'hello'" not in said and ": the words after the password" in said
    assert "the message itself goes in the mail body or --text=TEXT" in said


def test_a_message_mail_gives_its_reader_his_own_answer_line(shell):
    shell.signup("alice", "bob", "carol")
    shell.ok("pylon challenge alice bob carol")
    shell.ok('message alice pw-alice bob carol "--text=hi both"')
    for userid in ("bob", "carol"):
        mail = _to(shell, f"{userid}@example.org")[-1]
        assert mail.body.endswith(f"\nAnswer: message {userid} PASSWORD alice\n"), mail.body


def test_a_message_to_a_robot_does_not_claim_it_went(shell):
    """'Your message went to polibot', and no mail was made: robots get none."""
    from test_robots import operator_ok

    shell.signup("alice", "bob")
    operator_ok(shell, "robot add polibot --game polis --level easy")
    shell.ok("polis challenge alice polibot")
    alone = shell("message alice pw-alice polibot", comment="Hello robot")
    assert alone.status == 1 and "polibot: robots read no messages" in alone.body
    shell.ok("polis challenge alice bob")
    both = shell.ok("message alice pw-alice bob polibot", comment="Hello both")
    said = " ".join(both.body.split())
    assert "Your message went to bob:" in said and "Not to polibot: robots read no" in said


def test_message_goes_only_to_players_of_an_unfinished_board(shell):
    """A game once played together is no lasting licence to mail each other."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    line = "message alice pw-alice bob"
    shell.ok(line, channel="mail", sender="alice@example.org", comment="Good game?")
    with shell.sessions() as s, s.begin():
        s.scalar(select(Board)).status = BoardStatus.finished
    over = shell(line, channel="mail", sender="alice@example.org", comment="Buy pills")
    assert over.status == 1 and "share no unfinished board" in over.body
    assert "Buy pills" not in _to(shell, "bob@example.org")[-1].body


def test_a_players_messages_to_one_address_are_capped_a_day(shell, settings, clock):
    """Even with his password from his own address: his text to others is not the game."""
    settings.max_messages_per_pair_per_day = 2
    settings.max_messages_per_recipient_per_day = 3
    shell.signup("alice", "bob", "carol", "dave")
    shell.ok("polis challenge alice bob")
    shell.ok("plotto challenge carol bob dave")
    shell.ok("pylon challenge alice dave")
    n = len(shell.outbox())

    def message(author: str, *to: str):
        line = f"message {author} pw-{author} {' '.join(to) or 'bob'}"
        return shell(line, channel="mail", sender=f"{author}@example.org", comment="Hi")

    assert [message("alice").status for _ in range(3)] == [0, 0, 1]
    refused = " ".join(message("alice").body.split())
    assert "your message was not sent to bob: bob has had 2 messages from alice today" in refused
    assert [message("carol").status for _ in range(2)] == [0, 1]  # 3 from all players
    assert "bob has had 3 messages from players today" in " ".join(message("carol").body.split())
    assert len(_to(shell, "bob@example.org", n)) == 3
    some = message("alice", "bob", "dave")  # only the capped one is left out
    assert some.status == 0 and "Your message went to dave:" in some.body
    assert "It was not sent to bob: bob has had 2 messages" in " ".join(some.body.split())
    shell.ok('message alice pw-alice bob "--text=the operator types this"')  # the shell
    assert len(_to(shell, "bob@example.org", n)) == 4
    clock.advance(days=1)  # a new UTC day
    assert message("alice").status == 0


def test_broadcast_is_for_administrators(shell, settings):
    shell.signup("alice", "bob", "root")
    settings.admins = ["root"]
    refused = shell(
        "broadcast alice pw-alice", channel="mail", sender="alice@example.org", comment="x"
    )
    assert refused.status == 1 and "administrator" in refused.body
    n = len(shell.outbox())
    shell.ok(
        "broadcast root pw-root", channel="mail", sender="root@example.org", comment="Down at 6."
    )
    got = {m.recipient for m in shell.outbox()[n:] if m.subject == "pbmserv broadcast"}
    assert got == {"alice@example.org", "bob@example.org", "root@example.org"}
    assert shell.ok('broadcast "--text=Back up."').body == "The message went to 3 addresses.\n"


def test_showas_shows_the_board_from_the_players_seat(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice d7-e6")
    shell.ok("polis queue 101 alice pw-alice a7-a6")
    mine = shell.ok("polis showas alice pw-alice 101")
    assert "Only for you:\n  Your queued move (blue): a7-a6\n" in mine.body
    assert "PASSWORD" not in mine.body  # bob is to move
    bobs = shell.ok("polis showas bob pw-bob 101")
    assert "queued" not in bobs.body
    assert bobs.body.endswith("polis move 101 bob PASSWORD <move>#2\n")
    shell.signup("carol")
    assert shell("polis showas carol pw-carol 101").status == 1
    assert mask_passwords("polis showas alice pw-alice 101") == "polis showas alice ******** 101"


def test_all_show_lists_a_players_boards_in_every_game(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("pylon challenge bob alice")
    both = shell.ok("all show alice")
    assert both.body.startswith("2 active boards of alice.")
    assert "Summary of Polis Board 101" in both.body and "Summary of Pylon Board 101" in both.body
    nxt = shell.ok("all show alice next")
    assert nxt.body.startswith("1 next board of alice.") and "Summary of Polis" in nxt.body
    assert shell("all show nobody").status == 1
    for channel in ("shell", "mail"):  # was "wrong arguments", not what to write instead
        wrong = shell("all games alice", channel=channel, sender="alice@example.org")
        assert wrong.status == 2 and "Error: 'all' has one command, show\n" in wrong.body
        assert "show USERID [next|active]" in wrong.body
    for _ in range(10):  # a command draws at most ten boards
        shell.ok("polis challenge alice bob")
    many = shell.ok("all show alice").body
    assert many.startswith(
        "12 active boards of alice.\nThe first 10 are drawn: a command draws at most 10.\n"
    )
    assert many.count("Summary of ") == 10


def test_preview_new_of_a_game_for_more_players(shell):
    """'ploy preview new -partnership MOVE' set up two players, which -partnership forbids:
    a bug's answer (exit 70 in the shell, 'internal error' by mail).  A new game has the
    fewest players its parameters allow; parameters no count allows are refused."""
    shell.signup("alice")
    team = shell.ok(
        "ploy preview new -partnership c7-c6", channel="mail", sender="alice@example.org"
    )
    assert "Preview of a new Ploy game (4 players): 1. c7-c6" in team.body
    refused = shell("ploy preview new -partnership -swap c3-c4")
    assert refused.status == 1
    assert "-partnership needs four players; -swap is for two-player games only" in " ".join(
        refused.body.split()
    )
    two = shell.ok("ploy preview new -swap e3-e4")
    assert "Preview of a new Ploy game (2 players): 1. e3-e4" in two.body


def test_preview_at_a_move_the_board_has_not_reached(shell):
    """'polis preview 101#99 b2-c3' played b2-c3 on the board as it is (after move 1) and
    numbered it '100. b2-c3' (without moves: 'after move 99: no moves'), where 'show 101#99'
    says the board has no move 99: preview says so too."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice d7-e6")
    refused = shell("polis preview 101#99 b2-c3", channel="mail", sender="bob@example.org")
    assert refused.status == 1
    assert "board 101 has 1 move; there is no move 99" in refused.body
    assert "after move 99" not in refused.body
    assert "Preview of Polis board 101: 2. b2-c3" in shell.ok("polis preview 101#1 b2-c3").body


def test_preview_new_and_subscribe_all(shell):
    shell.signup("alice", "bob", "carol")
    new = shell.ok("polis preview new d7-e6 b2-c3")
    assert "Preview of a new Polis game (2 players): 1. d7-e6 2. b2-c3" in new.body
    assert "Nothing is stored." in new.body
    assert shell("polis preview new zz9").status == 1
    refused = shell("polis preview new " + " ".join(["d7-e6"] * 501))  # refused before it plays
    assert "a command takes at most 500 moves, this one names 501" in refused.body
    shell.ok("polis challenge alice bob")
    shell.ok("polis challenge bob alice")
    subscribed = shell.ok("polis subscribe all carol pw-carol")
    assert "carol now gets every mail of these Polis boards: 101, 102." in subscribed.body
    n = len(shell.outbox())
    shell.ok("polis move 102 bob pw-bob d7-e6")
    assert len(_to(shell, "carol@example.org", n)) == 1
    again = shell.ok("polis subscribe all carol pw-carol").body
    assert again == "carol already gets every mail of Polis boards 101, 102.\n"
    shell.ok("polis challenge alice bob")
    more = " ".join(shell.ok("polis subscribe all carol pw-carol").body.split())
    assert more == (
        "carol now gets every mail of these Polis boards: 103. carol already gets every mail "
        "of Polis boards 101, 102."
    )
    none = shell.ok("polis subscribe all bob pw-bob").body
    assert "none (no other active boards)" in " ".join(none.split())
    shell.ok("polis subscribe 101 carol pw-carol")  # the board form still works


def test_misspelling_aliases(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    assert shell.ok("polis mvoe 101 alice pw-alice d7-e6").subject == "Polis Board 101 bob"
    for alias in ("qboard", "boardq", "moveq"):
        queued = shell.ok(f"polis {alias} 101 alice pw-alice a7-a6")
        assert "a7-a6" in queued.body
    assert mask_passwords("polis moveq 101 alice s3cret a1") == "polis moveq 101 alice ******** a1"


def test_preview_new_of_three_or_four_players(shell):
    """'GAME preview new' had no way to say how many play: a Pylon game of three or a Ploy
    game of four each for himself could not be previewed.  '-players=N' says it, checked
    against the game's counts as a challenge is."""
    shell.signup("alice")
    three = shell.ok(
        "pylon preview new -players=3 -size=4 a1 c1 e1", channel="mail", sender="alice@example.org"
    )
    assert "Preview of a new Pylon game (3 players): 1. a1 2. c1 3. e1" in three.body
    four = shell.ok("ploy preview new -players=4 b3-c4")
    assert "Preview of a new Ploy game (4 players): 1. b3-c4" in four.body
    team = shell.ok("ploy preview new -partnership -players=4 c7-c6")
    assert "(4 players)" in team.body
    for line, said in [
        ("ploy preview new -players=3 b3-c4", "Ploy is played by 2 or 4 players, not 3"),
        ("polis preview new -players=4 d7-e6", "Polis is played by 2 players, not 4"),
        ("ploy preview new -partnership -players=2 c7-c6", "-partnership needs four players"),
        (
            "pylon preview new -players=many a1",
            "-players needs a number: -players=N, N being 2, 3 or 4",
        ),
    ]:
        refused = shell(line)
        assert refused.status == 1, line
        assert said in " ".join(refused.body.split()), refused.body
    usage = shell.ok("pylon help", channel="mail", sender="alice@example.org").body
    assert "[-players=N]" in usage

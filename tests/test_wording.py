"""A player's review of the mail conversation: one table of what an answer must say and must not
say (each line once, in the mail's own terms, within 78 columns), then the behaviour behind
some of it: forfeits on time in every game, the move count of a finished game, help topics."""

from __future__ import annotations

import pytest
from mail_lines import overlong
from sqlalchemy import select

from pbmserv.domain.clocks import tick
from pbmserv.games import all_games, get_game
from pbmserv.store.models import Board

REAL_GAMES = [g.name for g in all_games() if g.name != "nim"]
PLOTTO_TO_MOVE_7 = ["a1", "a4", "a2", "b2", "b1", "c3"]  # c2, move 7, makes a line for player 2


def _plotto_moves(upto: int) -> list[str]:
    players = ("alice", "bob")
    return [
        f"plotto move 101 {players[i % 2]} pw-{players[i % 2]} {m}"
        for i, m in enumerate(PLOTTO_TO_MOVE_7[:upto])
    ]


PLOY = ["ploy challenge alice bob"]
PLOY_2 = [*PLOY, "ploy move 101 alice pw-alice e3-e4"]
PLOY_3 = [*PLOY_2, "ploy move 101 bob pw-bob e7-e6"]
PLOTTO_6 = ["plotto challenge alice bob", *_plotto_moves(6)]
BY_MAIL = {"channel": "mail", "sender": "alice@example.org"}

# id, set-up lines, the line, how it is sent, what the answer must say, what it must not say
CASES = [
    # 1. no shell words by mail, the hint kept
    (
        "no-such-game-command-by-mail",
        PLOY,
        "ploy shwo 101",
        BY_MAIL,
        [
            "Error: No such command 'shwo'. Did you mean 'show'?\n",
            "\nUsage: ploy show BOARD[#K]... | USERID... [active|inactive|next]\n",
            "Send 'ploy help' for the rules and commands of Ploy.",
        ],
        ["--help", "[OPTIONS]", "COMMAND [ARGS]"],
    ),
    (
        "no-such-command-by-mail",
        [],
        "shwo 101",
        BY_MAIL,
        ["No such command 'shwo'.", "Send 'help' for the commands of this server."],
        ["--help", "[OPTIONS]", "COMMAND [ARGS]"],
    ),
    (
        "a-game-alone-by-mail",
        [],
        "ploy",
        BY_MAIL,
        ["a command word is missing after 'ploy'", "Send 'ploy help'"],
        ["--help", "[OPTIONS]", "Usage:"],
    ),
    (
        "missing-arguments-by-mail",
        PLOY,
        "ploy move 101",
        BY_MAIL,
        ["Error: not enough arguments\n", "\nUsage: ploy move BOARD USERID PASSWORD [MOVE[#N]]\n"],
        ["--help", "[OPTIONS]", "; usage:"],
    ),
    # 2. the move named once, in lines of 78 columns
    (
        "challenge-confirmation",
        [],
        "ploy challenge alice bob",
        BY_MAIL,
        ["Nobody else has been told. To start the game, reply to this mail (keep the\n"],
        [],
    ),
    (
        "illegal-move-named-once",
        ["pylon challenge alice bob"],
        "pylon move 101 alice pw-alice b2",
        {},
        ["Error: illegal move 'b2': a marble there (level 1) does not rest on four"],
        ["b2: b2", "'b2': b2", "at b2"],
    ),
    (
        "a-taken-pylon-point-is-said-to-be-taken",
        ["pylon challenge alice bob", "pylon move 101 alice pw-alice e3"],
        "pylon move 101 bob pw-bob e3",
        {},
        ["Error: e3 is taken: a marble is there already, and level 2 above it needs\n"],
        ["does not rest on four"],
    ),
    (
        "unreadable-move-named-once",
        PLOY,
        "ploy move 101 alice pw-alice b2",
        {},
        ["Error: illegal move 'b2': say where the piece goes (b2-...)"],
        ["'b2': 'b2'"],
    ),
    (
        "no-move-named-once",
        PLOY,
        "ploy move 101 alice pw-alice zz",
        {},
        ["Error: illegal move 'zz': not a Ploy move: write e4-d5"],
        ["'zz': 'zz'"],
    ),
    # 3. the queue answer speaks to the player
    (
        "queue-answer",
        PLOY,
        "ploy queue 101 bob pw-bob e7-e6",
        {},
        ["Your move e7-e6 on Ploy board 101 is queued: it is played on your turn."],
        ["of bob", "The move"],
    ),
    (
        "queue-cancel",
        [*PLOY, "ploy queue 101 bob pw-bob e7-e6"],
        "ploy queue 101 bob pw-bob cancel",
        {},
        ["Your queued move e7-e6 on Ploy board 101 is cancelled."],
        ["of bob"],
    ),
    # 4. one marble
    (
        "pylon-one-marble",
        ["pylon challenge alice bob"],
        "pylon move 101 alice pw-alice a1",
        {},
        ["alice  (1 marble)\n", "bob  (0 marbles)\n", "player 1: 1 marble\n"],
        ["1 marbles"],
    ),
    # 5. an ending said once
    (
        "ploy-resignation-once",
        PLOY_3,
        "ploy resign 101 alice pw-alice",
        {},
        [  # the seat's note on its line; the players by the marks the drawing uses
            "\nalice resigned.\nGame won by bob.\n",
            "\n   (X) green    resigned\n",
            "  (X) green    alice  (resigned)\n",
        ],
        ["Game over", "(green resigned)", "out; resigned"],
    ),
    (  # the result's reason names the players, as the notes of the board mail do
        "polis-show-names-who-resigned",
        [
            "polis challenge alice bob",
            "polis move 101 alice pw-alice a7-a6",
            "polis move 101 bob pw-bob b2-b3",
            "polis resign 101 alice pw-alice",
        ],
        "polis show 101",
        {},
        ["Game won by bob. (alice resigned)"],
        ["(blue resigned)"],
    ),
    (
        "plotto-preview-numbers-the-move",
        PLOTTO_6,
        "plotto preview 101 c2",
        {},
        [
            "Preview of Plotto board 101: 7. c2\n",
            "The game would end: line of four for player 2; won by player 2.\n",
        ],
        ["after move 6: c2", "Game over", "letter + number"],
    ),
    (
        "plotto-finished-board-invites-no-move",
        PLOTTO_6,
        "plotto move 101 alice pw-alice c2",
        {},
        [
            "Game won by bob. (line of four for player 2 (bob))\n",
            "Legend: a number is a piece. Figures above and below the frame number the\n",
        ],
        ["Game over", "letter + number", "Valid moves", "Your move"],
    ),
    # 7. the moves of a finished game
    (
        "games-of-a-finished-game",
        [*PLOTTO_6, "plotto move 101 alice pw-alice c2"],
        "plotto games",
        {},
        ["\n101     7      alice bob                                won by bob\n"],
        [],
    ),
    (
        "games-of-a-game-on",
        PLOY_2,
        "ploy games",
        {},
        ["\n101     2      alice bob                                bob to move\n"],
        [],
    ),
    # 8. an unknown help topic
    (
        "unknown-help-topic",
        [],
        "help polls",
        BY_MAIL,
        ["Error: there is no help on 'polls'. Did you mean 'help polis'?\n"],
        ["Accounts\n"],
    ),
    # 9. typos work, unlisted
    (
        "help-lists-no-typos",
        [],
        "help",
        BY_MAIL,
        ["Also: board.\n", "Also: qmove.\n"],
        ["mvoe", "qboard", "boardq", "moveq"],
    ),
    (
        "a-typo-still-works",
        PLOY,
        "ploy mvoe 101 alice pw-alice e3-e4",
        {},
        ["To move: bob (red)."],
        ["Error"],
    ),
    # 10. #N ahead of the board, or behind it
    (
        "move-number-ahead",
        PLOY_2,
        "ploy move 101 bob pw-bob e7-e6#3",
        {},
        ["Error: #3 is ahead of the board: the move due is move 2 (a typo? then end\n"],
        ["has changed"],
    ),
    (
        "move-number-behind",
        PLOY_3,
        "ploy move 101 alice pw-alice d3-d4#2",
        {},
        ["Error: this would be move 3, not move 2: the board has changed since your\n"],
        ["ahead"],
    ),
    # 12. a usage is one line while it fits a mail line, never cut like prose
    (
        "usage-on-one-line",
        [],
        "plotto challenge alice bob --bogus",
        {},
        [
            "\nUsage: plotto challenge USERID1 USERID2 [USERID3 [USERID4]] [-tournament]\n"
            "    [-swap] [--OPTION=V]\n"
        ],
        ["\n[--OPTION=V]\n"],
    ),
    # 13. a decline that restarts the game says what it lost
    (
        "a-restart-says-what-was-lost",
        [
            "signup carol pw-carol carol@example.org",
            "plotto challenge carol alice bob",
            "plotto move 101 carol pw-carol a1",
            "plotto move 101 alice pw-alice a2",
        ],
        "plotto resign 101 bob pw-bob",
        {},
        ["played so far are dropped. Seats now: carol (1), alice (2).\n"],
        [],
    ),
    (
        "a-restart-says-which-seats-changed",
        [
            "signup carol pw-carol carol@example.org",
            "plotto challenge carol alice bob",
            "plotto move 101 carol pw-carol a1",
        ],
        "plotto resign 101 alice pw-alice",
        {},
        ["played so far is dropped. Seats now: carol (1), bob (2, was 3).\n"],
        [],
    ),
    # 14. the player counts a game allows, as said aloud
    (
        "player-counts-with-or",
        ["signup carol pw-carol carol@example.org"],
        "ploy challenge alice bob carol",
        {},
        ["Ploy is played by 2 or 4 players, not 3"],
        ["2, 4"],
    ),
]

# 11. one spelling of error subjects (the classic "<Game> Board <n> Error")
SUBJECTS = {
    "illegal-move-named-once": "Pylon Board 101 Error",
    "no-such-game-command-by-mail": "Ploy Board 101 Error",
    "a-game-alone-by-mail": "Ploy Error",
    "no-such-command-by-mail": "pbmserv Error",
    "unknown-help-topic": "pbmserv Error",
    "a-typo-still-works": "Ploy Board 101 bob",
}


@pytest.mark.parametrize(
    ("setup", "line", "how", "must", "must_not"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_what_an_answer_says(shell, request, setup, line, how, must, must_not):
    shell.signup("alice", "bob")
    for command in setup:
        shell.ok(command)
    answer = shell(line, **how)
    for text in must:
        assert text in answer.body, (text, answer.body)
    for text in must_not:
        assert text not in answer.body, (text, answer.body)
    assert overlong(answer.body) == [], answer.body
    case = request.node.callspec.id
    if case in SUBJECTS:
        assert answer.subject == SUBJECTS[case]


# ----------------------------------------------------------------------------- behaviour


def _board(shell, game: str, number: int = 101) -> Board:
    with shell.sessions() as session:
        board = session.scalar(select(Board).where(Board.game == game, Board.number == number))
        assert board is not None
        session.expunge(board)
        return board


@pytest.mark.parametrize("game", REAL_GAMES)
def test_a_forfeit_on_time_is_told_as_one_in_every_game(shell, clock, game):
    """The clock's forfeit is a resignation for the rules (same winner), but every text says
    it was a forfeit on time: the result, the players' notes, ``show`` later."""
    shell.signup("alice", "bob")
    shell.ok(f"{game} challenge alice bob")
    clock.advance(days=22)
    before = len(shell.outbox())
    forfeits = tick(shell.sessions, shell.settings, clock.now).forfeits
    assert forfeits == [f"{get_game(game).display_name} 101 alice"]
    board = _board(shell, game)
    assert board.status.value == "finished" and board.winners == [1]
    assert "forfeited on time" in (board.result or "") and "resign" not in (board.result or "")
    mail = shell.outbox()[before].body
    assert "alice forfeits: out of time after 22d 00h without a move." in mail
    assert "resign" not in mail
    shown = shell.ok(f"{game} show 101").body
    assert "Game won by bob. (" in shown and "forfeited on time" in shown
    assert "resign" not in shown


def test_help_on_a_topic_that_is_no_game_suggests_the_nearest(shell):
    assert shell("help polls").status == 1
    assert "Did you mean" not in shell("help xyzzy").body  # nothing near: no guess
    assert shell.ok("help polis").subject == "Polis help"


def test_show_and_games_say_alike_that_no_board_matches(shell):
    """'polis games alice inactive' answered "No Polis boards match." and 'polis show alice
    inactive' "No boards match.", for the same boards."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    listed = shell.ok("polis games alice inactive").body
    shown = shell.ok("polis show alice inactive").body
    assert "No Polis boards match." in listed and shown == "No Polis boards match.\n"


@pytest.mark.parametrize("line", ["pbmserv robot list", "pbmserv mail list", "pbmserv status"])
def test_an_operator_command_by_mail_says_it_is_for_the_shell(shell, line):
    """The README shows 'pbmserv robot add ...'; mailed, it got "No such command 'robot'" as
    if the server had no robots. The answer now says what the word is and where it runs."""
    shell.signup("alice")
    word = line.split()[1]
    refused = shell(line, channel="mail", sender="alice@example.org")
    assert refused.status == 2
    assert f"'{word}' is an operator command: it runs only in a shell on the" in refused.body
    assert "No such command" not in refused.body


def test_list_names_the_robots_a_player_may_challenge(shell):
    """By mail a player could not find the robots: 'help' sent him to the operator's 'pbmserv
    robot list'. 'list' names them under their games, with their levels."""
    from test_robots import operator_ok

    shell.signup("alice")
    operator_ok(shell, "robot add polibot --game polis --level easy")
    listed = shell.ok("list", channel="mail", sender="alice@example.org").body
    polis = listed[listed.index("  polis") :]
    assert "robots to challenge: polibot (easy)" in polis.split("  pylon")[0]
    assert listed.count("robots to challenge") == 1
    assert "'list' names them under their games" in shell.ok("help").body

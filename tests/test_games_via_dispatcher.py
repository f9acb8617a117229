"""A whole game of each registered game, through the dispatcher from challenge to result, with
golden board mails (see tests/golden.py for how to rewrite them after a deliberate layout change)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from golden import assert_golden
from sqlalchemy import select

from pbmserv.commands import Answer
from pbmserv.domain import boards
from pbmserv.games import all_games
from pbmserv.store.models import Board

GOLDEN = Path(__file__).parent / "golden"
REAL_GAMES = [g for g in all_games() if g.name != "nim"]
MAX_MOVES = 400


def _state(shell, game, number=101):
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.game == game.name, Board.number == number))
        position = boards.position_of(board)
        mover = boards.user_to_move(board, position)
        moves = sorted(position.format_move(m) for m in position.legal_moves())
        return board.status.value, (mover.userid if mover else None), moves


def _play_out(shell, game, players, seed):
    rng = random.Random(seed)
    mails = []
    for _ in range(MAX_MOVES):
        status, mover, moves = _state(shell, game)
        if status != "active":
            break
        moves = [m for m in moves if m not in ("swap", "resign")]
        choice = rng.choice(moves)
        result = shell.ok(f"{game.name} move 101 {mover} pw-{mover} {choice}")
        mails.append(result)
    return mails


@pytest.mark.slow
@pytest.mark.parametrize("game", REAL_GAMES, ids=[g.name for g in REAL_GAMES])
def test_whole_game_through_the_dispatcher(shell, game):
    players = ["alice", "bob", "carol", "dave"][: game.min_players]
    shell.signup(*players)
    new = shell.ok(f"{game.name} challenge {' '.join(players)}")
    assert new.subject == f"New {game.display_name} Board 101 alice"
    mails = _play_out(shell, game, players, seed=7)
    status, mover, _ = _state(shell, game)
    last = mails[-1]
    if status == "finished":
        assert last.subject == f"{game.display_name} Board 101"
        assert "Game won by" in last.body or "Game was a tie" in last.body
        assert "is over" in shell(f"{game.name} move 101 alice pw-alice pass").body
    else:
        assert last.subject == f"{game.display_name} Board 101 {mover}"
    for mail in [new, *mails[:3], last]:
        for line in mail.body.splitlines():
            assert len(line) <= 76 and line.isascii(), line
    text = "\n".join(f"Subject: {m.subject}\n\n{m.body}" for m in [new, *mails[:2]])
    assert_golden(f"mail_{game.name}.txt", text, "the board mail layout")
    _check_record(shell, game, status, last.subject)


def _check_record(shell, game, status, last_subject):
    """The JSON record (export by command) replays to the same final position; a finished
    game's last mail carries it as an attachment."""
    import json

    from pbmserv.domain import record

    exported = shell.ok(f"{game.name} export 101 json").body
    data = json.loads(exported[exported.index("{") :])
    assert data["format"] == "pbmserv-record" and data["version"] == record.VERSION
    replayed = record.replay(data)
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.game == game.name, Board.number == 101))
        final = boards.position_of(board)
        assert replayed.serialize() == final.serialize() == data["position"]
        assert len(data["moves"]) == len(board.moves)
        attached = record.attachments_for(s, last_subject)
    if status == "finished":
        assert data["status"] == "finished" and data["winners"] == [
            w["userid"] for w in data["players"] if w["userid"] in data["winners"]
        ]
        [(name, mime, raw)] = attached
        assert (name, mime) == (f"{game.name}-101.json", "application/json")
        assert record.replay(json.loads(raw)).serialize() == data["position"]
    else:
        assert attached == []


@pytest.mark.parametrize("game", REAL_GAMES, ids=[g.name for g in REAL_GAMES])
def test_help_texts_fit_a_mail(shell, game):
    for text in (shell.ok(f"{game.name} help").body, shell.ok("help").body):
        for line in text.splitlines():
            assert len(line) <= 76 and line.isascii(), line


def _plan(game, players, params, seed, stop, prefer_captures=False):
    """A seeded random game, cut where ``stop(position, move)`` first holds after a move."""
    rng = random.Random(seed)
    position = game.new(players, params)
    plan = []
    while position.to_move is not None:
        moves = [m for m in position.legal_moves() if str(m) not in ("swap", "resign")]
        captures = [m for m in moves if "x" in position.format_move(m)] if prefer_captures else []
        move = rng.choice(captures) if captures and rng.random() < 0.9 else rng.choice(moves)
        plan.append((position.controller(position.to_move), position.format_move(move)))
        position.play(move)
        if stop(position, move):
            return plan
    raise AssertionError("the seeded game never reached the wanted state")


def test_automatic_forced_pass_in_pylon(shell):
    from pbmserv.games import get_game
    from pbmserv.games.base import PASS

    game = get_game("pylon")
    plan = _plan(game, 2, {"size": 3}, 6, lambda p, m: m == PASS and p.to_move is not None)
    shell.signup("alice", "bob")
    shell.ok("pylon challenge alice bob -size=3")
    users = ["alice", "bob"]
    for seat, text in plan:
        if text != "pass":
            last = shell.ok(f"pylon move 101 {users[seat]} pw-{users[seat]} {text}")
    passer = plan[-1][0]
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.game == "pylon"))
        record = [(m.seat, m.text, m.auto) for m in board.moves]
    assert record[-1] == (passer, "pass", True)
    assert "pass (Auto)" in last.body
    assert last.subject == f"Pylon Board 101 {users[1 - passer]}"  # the other player again


PLOY_FOUR = ["alice", "bob", "carol", "dave"]


def play_till_one_ploy_seat_is_out(shell) -> tuple[list[tuple[int, str]], Answer]:
    """A four-player Ploy board 101 of alice, bob, carol and dave, played by the shell until
    one seat is knocked out: the (seat, move) plan and the answer to its last move."""
    from pbmserv.games import get_game

    def one_out(position, move):
        return position.to_move is not None and sum(not s.in_play for s in position.seats()) == 1

    plan = _plan(get_game("ploy"), 4, {}, 0, one_out, prefer_captures=True)
    shell.signup(*PLOY_FOUR)
    shell.ok("ploy challenge alice bob carol dave")
    last = None
    for seat, text in plan:
        last = shell.ok(f"ploy move 101 {PLOY_FOUR[seat]} pw-{PLOY_FOUR[seat]} {text}")
    assert last is not None
    return plan, last


def test_eliminated_ploy_seat_is_skipped(shell):
    from pbmserv.games import get_game

    game = get_game("ploy")
    users = PLOY_FOUR
    _, last = play_till_one_ploy_seat_is_out(shell)
    _, mover, _ = _state(shell, game)
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.game == "ploy"))
        out = [i for i, info in enumerate(boards.position_of(board).seats()) if not info.in_play]
    assert len(out) == 1 and "eliminated, " in last.body
    victim = users[out[0]]
    for _ in range(8):  # two more rounds: the eliminated seat never gets a turn
        status, mover, moves = _state(shell, game)
        assert mover != victim
        move = sorted(moves)[0]
        last = shell.ok(f"ploy move 101 {mover} pw-{mover} {move}")
        assert not last.subject.endswith(victim)
    rows = [line for line in last.body.splitlines() if line[:5].strip().rstrip(".").isdigit()]
    assert any("--" in row for row in rows[-2:]), "the skipped seat shows -- in the move list"


# --------------------------------------------------------------------------- what a move did


def _words(text: str) -> str:
    return " ".join(text.split())  # the notes are wrapped at 76 columns


def test_a_pylon_capture_says_whose_marbles_it_covered(shell):
    shell.signup("alice", "bob")
    shell.ok("pylon challenge alice bob")
    for line in ("alice pw-alice a1", "bob pw-bob c1", "alice pw-alice c3"):
        quiet = shell.ok(f"pylon move 101 {line}")
    assert "captures" not in quiet.body
    mail = shell.ok("pylon move 101 bob pw-bob a3")  # alice's a1 has no freedom left
    note = "Move 4 (a3, bob) captures alice's o marble at a1: x marble added at b2."
    assert note in mail.body
    to_alice = [m for m in shell.outbox() if m.recipient == "alice@example.org"][-1]
    assert note in to_alice.body


@pytest.mark.parametrize(
    ("players", "params", "seed", "victim", "why"),
    [
        (2, "", 23, "red (bob)", "eliminated, commander captured by green"),
        (4, "-partnership", 33, "blue (dave)", "commander captured; absorbed by red"),
    ],
)
def test_a_ploy_move_that_knocks_a_player_out_says_so(shell, players, params, seed, victim, why):
    from pbmserv.games import get_game

    game = get_game("ploy")

    def knocked_out(position, move):
        return any(not s.in_play for s in position.seats())

    plan = _plan(game, players, {"partnership": bool(params)}, seed, knocked_out, True)
    users = ["alice", "bob", "carol", "dave"][:players]
    shell.signup(*users)
    shell.ok(f"ploy challenge {' '.join(users)} {params}")
    for ply, (seat, text) in enumerate(plan, start=1):
        last = shell.ok(f"ploy move 101 {users[seat]} pw-{users[seat]} {text}")
        assert ("knocks out" in last.body) == (ply == len(plan))
    seat, text = plan[-1]
    note = f"Move {len(plan)} ({text}, {users[seat]}) knocks out {victim}: {why}."
    assert note in _words(last.body)
    nested = [line for line in last.body.splitlines() if re.search(r"\([^()]*\(", line)]
    assert nested == []  # "bob  (eliminated by green (commander captured))" no more
    others = [m for m in shell.outbox() if m.recipient != f"{users[seat]}@example.org"]
    assert note in _words(others[-1].body)


def test_an_absorbed_partner_is_told_so_and_his_partners_moves_are_marked(shell):
    """alice (green) resigns after the first round of a partnership game: carol (yellow)
    takes over green's pieces and turns.  alice's move is refused with the reason (not "it
    is not your turn"), and green's turn that carol plays shows her name in the move list
    of the mail and of the web page."""
    from pbmserv.web.queries import move_rows

    shell.signup("alice", "bob", "carol", "dave")
    shell.ok("ploy challenge alice bob carol dave -partnership")
    for user, move in (("alice", "b7-b6"), ("bob", "b3-b4"), ("carol", "f7-f6"), ("dave", "f3-f4")):
        shell.ok(f"ploy move 101 {user} pw-{user} {move}")
    shell.ok("ploy resign 101 alice pw-alice")
    for user, move in (("bob", "c3-c4"), ("carol", "g7-g6"), ("dave", "g3-g4")):
        shell.ok(f"ploy move 101 {user} pw-{user} {move}")
    # green's turn (move 9), which carol plays
    refused = shell("ploy move 101 alice pw-alice d7-d6")
    assert refused.status == 1
    said = " ".join(refused.body.split())
    assert (
        "alice (green) is out of the game (resigned; absorbed by yellow): carol (yellow)"
        " plays green's turns" in said
    )
    assert "not your turn" not in said
    queued = shell("ploy queue 101 alice pw-alice d7-d6")
    assert queued.status == 1 and "alice (green) is out of the game" in queued.body
    moved = shell.ok("ploy move 101 carol pw-carol d7-d6")
    assert "9. d7-d6 (carol)" in moved.body
    assert "7. g7-g6 (" not in moved.body  # carol's own moves are not marked
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.game == "ploy"))
        cells = [c for row in move_rows(board, boards.position_of(board)) for c in row if c]
    assert [(c.ply, c.text) for c in cells if c.ply in (7, 9)] == [
        (7, "g7-g6"),
        (9, "d7-d6 (carol)"),
    ]

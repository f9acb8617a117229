"""A whole game of each registered game, through the dispatcher from challenge to result, with
golden board mails (set UPDATE_GOLDEN=1 to rewrite them after a deliberate layout change)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from sqlalchemy import select

from pbmserv import boards
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
    golden = GOLDEN / f"mail_{game.name}.txt"
    text = "\n".join(f"Subject: {m.subject}\n\n{m.body}" for m in [new, *mails[:2]])
    if os.environ.get("UPDATE_GOLDEN") or not golden.exists():
        golden.write_text(text)
    assert text == golden.read_text(), f"board mail layout changed: compare with {golden}"


@pytest.mark.parametrize("game", REAL_GAMES, ids=[g.name for g in REAL_GAMES])
def test_help_texts_fit_a_mail(shell, game):
    for text in (shell.ok(f"{game.name} help").body, shell.ok("help").body):
        for line in text.splitlines():
            assert len(line) <= 76 and line.isascii(), line

"""A small site for the web tests: four players, a board of each game with some moves and
comments, a running Ploy tournament; built through the dispatcher like real play."""

from __future__ import annotations

import random

from sqlalchemy import select

from pbmserv.domain import boards
from pbmserv.store.models import Board

PLAYERS = ("alice", "bob", "carol", "dave")
GAMES = ("ploy", "pylon", "plotto", "polis")
HOSTILE = "<script>alert('x')</script> \"><img src=x onerror=alert(1)> & done"


def mover_and_moves(shell, game: str, number: int) -> tuple[str | None, list[str]]:
    with shell.sessions() as s:
        board = s.scalar(select(Board).where(Board.game == game, Board.number == number))
        position = boards.replay(board)
        mover = boards.user_to_move(board, position)
        moves = sorted(position.format_move(m) for m in position.legal_moves())
        return (mover.userid if mover else None), [m for m in moves if m not in ("swap", "resign")]


def play(shell, game: str, number: int, count: int, seed: int = 3) -> list[str]:
    """Play ``count`` random legal moves on a board; return their texts."""
    rng = random.Random(seed)
    played = []
    for i in range(count):
        mover, moves = mover_and_moves(shell, game, number)
        if mover is None or not moves:
            break
        move = rng.choice(moves)
        comment = HOSTILE if i == 1 else ""
        shell.ok(f"{game} move {number} {mover} pw-{mover} {move}", comment=comment)
        played.append(move)
    return played


def build(shell) -> dict[str, int]:
    """Players, one board per game with moves, a Ploy tournament; the board numbers by game."""
    shell.signup(*PLAYERS)
    numbers = {}
    for game in GAMES:
        answer = shell.ok(f"{game} challenge alice bob")
        numbers[game] = int(answer.subject.split("Board ")[1].split()[0])
        play(shell, game, numbers[game], 6)
    shell.settings.admins = ["alice"]
    shell.ok("tournament create spring --game ploy --format roundrobin")
    for userid in PLAYERS:
        shell.ok(f"tournament join spring {userid} pw-{userid}")
    shell.ok("tournament start spring")
    return numbers


def more_tournaments(shell) -> None:
    """After :func:`build`: a running Swiss (summer) and knockout (cup), an open knockout
    (early), so that every format and state has a page."""
    shell.ok("tournament create summer --game ploy --format swiss --rounds 2")
    shell.ok("tournament create cup --game ploy --format knockout")
    shell.ok("tournament create early --game pylon --format knockout")
    for name in ("summer", "cup", "early"):
        for userid in PLAYERS:
            shell.ok(f"tournament join {name} {userid} pw-{userid}")
    shell.ok("tournament start summer")
    shell.ok("tournament start cup")

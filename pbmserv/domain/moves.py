"""A move and everything it sets off, for every caller (commands, clocks, robots).

:mod:`pbmserv.domain.boards` changes one board (the record, the automatic loop, the result and
the ratings); a finished board may also end a tournament round, which pairs the next one.  That
second step lives here, above both, so that the board service never calls the tournament
service behind its callers' backs and the two do not import each other.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from pbmserv.domain import boards, proposals, tournaments
from pbmserv.domain.boards import Played
from pbmserv.games.base import Position
from pbmserv.store.models import Board, BoardStatus, User


def settle(session: Session, board: Board, now: datetime) -> None:
    """After any change to ``board``: if it has finished, its tournament takes the result."""
    if board.status is BoardStatus.finished:
        tournaments.board_finished(session, board, now)


def play(
    session: Session,
    board: Board,
    position: Position,
    user: User,
    text: str,
    *,
    now: datetime,
    source: str = "",
    expected_ply: int | None = None,
    comment: str = "",
) -> Played:
    """:func:`pbmserv.domain.boards.play_move`, then :func:`settle`."""
    played = boards.play_move(
        session,
        board,
        position,
        user,
        text,
        now=now,
        source=source,
        expected_ply=expected_ply,
        comment=comment,
    )
    settle(session, board, now)
    return played


def forfeit(
    session: Session, board: Board, position: Position, user: User, now: datetime, elapsed: float
) -> Played:
    """The player to move ran out of time (:func:`pbmserv.domain.boards.forfeit`)."""
    played = boards.forfeit(session, board, position, user, now, elapsed)
    settle(session, board, now)
    return played


def finish_draw(
    session: Session, board: Board, position: Position, reason: str, now: datetime
) -> None:
    """End the game drawn (:func:`pbmserv.domain.boards.finish_draw`)."""
    boards.finish_draw(session, board, position, reason, now)
    settle(session, board, now)


def vote(
    session: Session,
    board: Board,
    position: Position,
    user: User,
    word: str,
    now: datetime,
    number: int | None = None,
) -> tuple[str, Position]:
    """A draw or undo proposal, or an answer to one (:func:`pbmserv.domain.proposals.vote`)."""
    note, position = proposals.vote(session, board, position, user, word, now, number)
    settle(session, board, now)
    return note, position

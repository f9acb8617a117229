"""A move and everything it sets off, for every caller (commands, clocks, robots).

:mod:`pbmserv.domain.boards` changes one board (the record, the automatic loop, the result and
the ratings); a finished board's result also counts in its tournament at once, and may end a
round, which pairs the next one.  Those steps live here, above both, so that the board service
never calls the tournament service behind its callers' backs and the two do not import each
other.

Pairing the next round is the caller's last step (:func:`follow_up`), after it has queued the
mails of the move: the outbox is sent in order, and a player read "your new board" of the next
round before "game over" of the game that ended the last.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from pbmserv.domain import boards, proposals, tournaments
from pbmserv.domain.boards import Played
from pbmserv.games.base import Position
from pbmserv.store.models import Board, User


def follow_up(session: Session, board: Board, now: datetime) -> None:
    """What the finished ``board`` sets off beyond its own mails: when it was the last game of
    its tournament's round, the next round (or the replays, or the final standings) and their
    mails.  Every caller of the functions below runs it once it has queued the board's mails
    (by mail, the answer to the sender comes first too: the mail worker runs it then)."""
    tournaments.advance(session, board, now)


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
    """:func:`pbmserv.domain.boards.play_move`; the result counts in its tournament at once, and
    the caller runs :func:`follow_up` after the mails."""
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
    tournaments.record_result(session, board)
    return played


def forfeit(
    session: Session, board: Board, position: Position, user: User, now: datetime, elapsed: float
) -> Played:
    """The player to move ran out of time (:func:`pbmserv.domain.boards.forfeit`)."""
    played = boards.forfeit(session, board, position, user, now, elapsed)
    tournaments.record_result(session, board)
    return played


def finish_draw(
    session: Session, board: Board, position: Position, reason: str, now: datetime
) -> None:
    """End the game drawn (:func:`pbmserv.domain.boards.finish_draw`)."""
    boards.finish_draw(session, board, position, reason, now)
    tournaments.record_result(session, board)


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
    tournaments.record_result(session, board)
    return note, position

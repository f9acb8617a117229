"""A board's record read in part: a move, its mail and its answer need the number of plies and
the newest few entries, not the whole record, which grows with the game (loading 80 entries
cost more than the rest of a move mail).  When a board's ``moves`` or ``comments`` are already
loaded they are used as they are, pending changes included; otherwise one small plain query
each, whose rows are read as :class:`Entry` values, not as the ORM's objects (which cost three
times the query).  A board's new entries reach the table at once when its collection is not
loaded (:func:`pbmserv.domain.boards.play_move`), so such a query sees them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Protocol

from sqlalchemy import CursorResult, Executable, Select, bindparam, func, inspect, select
from sqlalchemy.orm import Session, object_session

from pbmserv.store.models import Board, Comment, MoveRecord, User


class Entry(Protocol):
    """A record entry as its readers use it: a :class:`MoveRecord`, or a row read for them."""

    @property
    def ply(self) -> int: ...
    @property
    def seat(self) -> int: ...
    @property
    def user_id(self) -> int | None: ...
    @property
    def text(self) -> str: ...
    @property
    def auto(self) -> bool: ...
    @property
    def at(self) -> datetime: ...


@dataclass(frozen=True, slots=True)
class _Row:
    ply: int
    seat: int
    user_id: int | None
    text: str
    auto: bool
    at: datetime


def recorded_plies(board: Board) -> int:
    """How many entries the board's record holds."""
    if _loaded(board, "moves"):
        return len(board.moves)
    return _read(board, _count_query(), board_id=board.id).scalar() or 0


def newest_moves(board: Board, count: int) -> Sequence[Entry]:
    """The newest ``count`` entries of the record, oldest first."""
    if count <= 0:  # (SQLite reads a negative LIMIT as none)
        return []
    if _loaded(board, "moves"):
        return list(board.moves[-count:])
    rows = _read(board, _newest_query(), board_id=board.id, count=count)
    return [_Row(*row) for row in rows][::-1]


def newest_move(board: Board) -> Entry | None:
    """The record's newest entry (None before the first move)."""
    return next(iter(newest_moves(board, 1)), None)


def plies_of(session: Session, boards: list[Board]) -> dict[int, int]:
    """How many entries each board's record holds, by board id, in one query (a list of boards
    counts them all at once)."""
    if not boards:
        return {}
    counts = session.execute(
        select(MoveRecord.board_id, func.count())
        .where(MoveRecord.board_id.in_([b.id for b in boards]))
        .group_by(MoveRecord.board_id)
    )
    return {board.id: 0 for board in boards} | {board_id: n for board_id, n in counts}


def comments_after(board: Board, ply: int, up_to: int | None = None) -> list[tuple[str, str]]:
    """The comments written with the entries after ``ply`` (a move, or a queued move or
    resignation, which brings its own), and up to ``up_to`` when given (an earlier position
    shown), oldest first: (userid, text)."""
    if up_to is not None or _loaded(board, "comments"):
        found = sorted(
            (c for c in board.comments if ply < c.ply and (up_to is None or c.ply <= up_to)),
            key=lambda c: (c.ply, c.id or 0),
        )
        return [(c.user.userid, c.text) for c in found]
    rows = _read(board, _comments_after_query(), board_id=board.id, ply=ply)
    return [(userid, text) for userid, text in rows]


def _loaded(board: Board, name: str) -> bool:
    """Whether the collection is in memory (a board not yet stored has all of them)."""
    state = inspect(board)
    return name not in state.unloaded or state.session is None or board.id is None


def _read(board: Board, query: Executable, **params: object) -> CursorResult[*tuple[Any, ...]]:
    """Run one of the plain queries below in the board's session (no flush: see above)."""
    session = object_session(board)
    assert session is not None  # _loaded is true for a detached board
    return session.connection().execute(query, params)


@lru_cache(maxsize=1)
def _count_query() -> Select[int]:
    moves = MoveRecord.__table__.c
    return select(func.count(moves.id)).where(moves.board_id == bindparam("board_id"))


@lru_cache(maxsize=1)
def _newest_query() -> Select[int, int, int | None, str, bool, datetime]:
    moves = MoveRecord.__table__.c
    return (
        select(moves.ply, moves.seat, moves.user_id, moves.text, moves.auto, moves.at)
        .where(moves.board_id == bindparam("board_id"))
        .order_by(moves.ply.desc())
        .limit(bindparam("count"))
    )


@lru_cache(maxsize=1)
def _comments_after_query() -> Select[str, str]:
    comments, users = Comment.__table__.c, User.__table__.c
    return (
        select(users.userid, comments.text)
        .join_from(Comment.__table__, User.__table__, comments.user_id == users.id)
        .where(comments.board_id == bindparam("board_id"), comments.ply > bindparam("ply"))
        .order_by(comments.ply, comments.id)
    )

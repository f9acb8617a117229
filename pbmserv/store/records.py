"""A board's record read in part: a move, its mail and its answer need the number of plies and
the newest few entries, not the whole record, which grows with the game (loading 80 entries
cost more than the rest of a move mail).  When a board's ``moves`` or ``comments`` are already
loaded they are used as they are, pending changes included; otherwise one small query each.
"""

from __future__ import annotations

from functools import lru_cache

from sqlalchemy import Select, bindparam, func, inspect, select
from sqlalchemy.orm import Session, object_session

from pbmserv.store.models import Board, Comment, MoveRecord


def recorded_plies(board: Board) -> int:
    """How many entries the board's record holds."""
    if _loaded(board, "moves"):
        return len(board.moves)
    return _session(board).scalar(_count_query(), {"board_id": board.id}) or 0


def newest_moves(board: Board, count: int) -> list[MoveRecord]:
    """The newest ``count`` entries of the record, oldest first."""
    if count <= 0:  # (SQLite reads a negative LIMIT as none)
        return []
    if _loaded(board, "moves"):
        return list(board.moves[-count:])
    found = _session(board).scalars(_newest_query(), {"board_id": board.id, "count": count})
    return list(found)[::-1]


def newest_move(board: Board) -> MoveRecord | None:
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


def comments_at(board: Board, ply: int) -> list[Comment]:
    """The comments written with the move of ``ply``, oldest first."""
    if _loaded(board, "comments"):
        return [c for c in board.comments if c.ply == ply]
    return list(_session(board).scalars(_comments_query(), {"board_id": board.id, "ply": ply}))


def _loaded(board: Board, name: str) -> bool:
    """Whether the collection is in memory (a board not yet stored has all of them)."""
    state = inspect(board)
    return name not in state.unloaded or state.session is None or board.id is None


def _session(board: Board) -> Session:
    session = object_session(board)
    assert session is not None  # _loaded is true for a detached board
    return session


@lru_cache(maxsize=1)
def _count_query() -> Select[int]:
    return select(func.count(MoveRecord.id)).where(MoveRecord.board_id == bindparam("board_id"))


@lru_cache(maxsize=1)
def _newest_query() -> Select[MoveRecord]:
    return (
        select(MoveRecord)
        .where(MoveRecord.board_id == bindparam("board_id"))
        .order_by(MoveRecord.ply.desc())
        .limit(bindparam("count"))
    )


@lru_cache(maxsize=1)
def _comments_query() -> Select[Comment]:
    return (
        select(Comment)
        .where(Comment.board_id == bindparam("board_id"), Comment.ply == bindparam("ply"))
        .order_by(Comment.id)
    )

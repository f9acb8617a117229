"""When the clock acts on a board: its periods, the next reminder and the forfeit.

One rule for the clock check (:mod:`pbmserv.domain.clocks`) and for every mail and page that
shows the dates, so that no mail promises a date the clock does not keep.

- Periods: ``--nagtime``/``--forfeittime`` of the board, else 1 and 7 days on a board whose
  options hold ``"tournament": true``, else the settings' ``nag_days``/``forfeit_days``.
- The forfeit comes ``forfeit`` days after the last move, or when the seat to move has used up
  its ``--totaltime``, but never while its player is on vacation or in the ``GRACE_DAYS``
  after it.
- The reminder comes ``nag`` days after the last move or the last reminder since it, but not
  during a vacation (it waits for the player's return).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import object_session

from pbmserv.config import Settings
from pbmserv.games.base import Position
from pbmserv.numbers import clock_days
from pbmserv.render.board_mail import Due
from pbmserv.render.links import CLOCK_KEY
from pbmserv.store.models import Board, BoardStatus, Robot, User

TOURNAMENT_NAG_DAYS = 1.0
TOURNAMENT_FORFEIT_DAYS = 7.0
GRACE_DAYS = 2
DAY = 86400.0


def periods_of(
    options: dict[str, Any], nag_days: float, forfeit_days: float
) -> tuple[float, float]:
    """The nag and forfeit periods in days of a board with ``options``, given the defaults."""
    tournament = bool(options.get("tournament"))
    nag = clock_days(options.get("nagtime")) or (TOURNAMENT_NAG_DAYS if tournament else nag_days)
    forfeit = clock_days(options.get("forfeittime")) or (
        TOURNAMENT_FORFEIT_DAYS if tournament else forfeit_days
    )
    return float(nag), float(forfeit)


def periods(board: Board, settings: Settings) -> tuple[float, float]:
    """The board's nag and forfeit periods in days."""
    return periods_of(board.options, settings.nag_days, settings.forfeit_days)


def on_vacation(user: User, now: datetime) -> bool:
    return user.vacation_until is not None and now < user.vacation_until


def protected(user: User, now: datetime) -> bool:
    """On vacation, or within the grace period after it: the clock cannot forfeit him."""
    return user.vacation_until is not None and now < user.vacation_until + timedelta(
        days=GRACE_DAYS
    )


def forfeit_moment(
    options: dict[str, Any], last: datetime, time_used: float | None, forfeit_days: float
) -> datetime:
    """When the clock forfeits the seat to move, vacations aside: ``forfeit_days`` after the
    last move, or sooner when its chess clock (``--totaltime``, ``time_used`` so far) runs
    out.  The clock's scan (:func:`pbmserv.domain.clocks.due_time`) reads these columns raw."""
    due = last + timedelta(days=forfeit_days)
    total = clock_days(options.get("totaltime"))
    if total is not None and time_used is not None:
        due = min(due, last + timedelta(seconds=total * DAY - time_used))
    return due


def reminder_moment(last: datetime, nagged: datetime | None, nag_days: float) -> datetime:
    """When the clock reminds the player to move next, vacations aside: ``nag_days`` after the
    last move, or after the last reminder since that move."""
    since = nagged if nagged is not None and nagged >= last else last
    return since + timedelta(days=nag_days)


def forfeit_at(board: Board, mover: User, time_used: float, forfeit_days: float) -> datetime:
    """When the clock forfeits the seat to move (``time_used``: its chess clock so far) if
    ``mover`` does not move before."""
    due = forfeit_moment(board.options, board.last_move_at, time_used, forfeit_days)
    if mover.vacation_until is not None:
        due = max(due, mover.vacation_until + timedelta(days=GRACE_DAYS))
    return due


def reminder_at(board: Board, mover: User, nag_days: float) -> datetime:
    """When the clock reminds ``mover`` next if he does not move before."""
    due = reminder_moment(board.last_move_at, board.nagged_at, nag_days)
    if mover.vacation_until is not None and due < mover.vacation_until:
        due = mover.vacation_until
    return due


def due(
    board: Board, position: Position, defaults: tuple[float, float] | None = None
) -> Due | None:
    """The next reminder and the forfeit of the player to move (None when nobody is to move).

    ``defaults``: the settings' nag and forfeit days; a board mail, composed deep down, takes
    them from the board's session (:func:`pbmserv.render.links.attach`), as its link does."""
    if board.status is not BoardStatus.active or position.to_move is None:
        return None
    mover = board.user_to_move(position)
    if mover is None:
        return None
    session = object_session(board)
    if session is not None and session.get(Robot, mover.id) is not None:
        return None  # the clock never nags nor forfeits a robot (pbmserv.domain.clocks)
    if defaults is None:
        defaults = session.info.get(CLOCK_KEY) if session is not None else None
    nag_days, forfeit_days = periods_of(
        board.options, *(defaults or (Settings.nag_days, Settings.forfeit_days))
    )
    seat = board.seats[position.to_move]
    forfeit = forfeit_at(board, mover, seat.time_used or 0.0, forfeit_days)
    reminder = reminder_at(board, mover, nag_days)
    return Due(reminder if reminder < forfeit else None, forfeit)

"""The clocks of correspondence play: reminders ("nags"), forfeits, the chess clock, vacations.

:func:`tick` looks only at the boards whose time is due; the server calls it on a schedule and
``pbmserv tick`` once (for cron).  Time always comes in as an argument, so tests move it.
Each active board keeps ``due_at``, the earliest moment :func:`check_board` may act on it
(:func:`due_time`); any change to a board clears it and the next tick computes it again, as it
does for every board when the settings' periods change.

- The player to move is nagged when the board's last move is ``nag`` days old, and again once
  per further ``nag`` days: subject ``Nag: <Game> Board <n> <userid>``.
- When the last move is ``forfeit`` days old, or the player to move has used up the
  ``--totaltime`` of his seat (time counts only on one's own turn), the seat forfeits: the
  automatic entry ``Forfeit`` (replayed as a resignation) and the board mail to everyone.  An
  open draw proposal is accepted instead: the game ends drawn.
- Defaults come from the settings (``nag_days`` 7, ``forfeit_days`` 21); ``--nagtime`` and
  ``--forfeittime`` set them per board; a board whose options hold ``"tournament": true`` uses
  1 and 7 days unless those options are given.  The three options take 1 to 365 days
  (:func:`pbmserv.numbers.clock_days`); a board stored with another value (before that check,
  or by hand) runs on the defaults, and without a total time.
- A user on vacation (``vacation`` command) is neither nagged nor forfeited; after the vacation
  he has ``GRACE_DAYS`` before the clock can forfeit him (the periods and dates:
  :mod:`pbmserv.domain.deadlines`).  The allowance is
  ``VACATION_DAYS_PER_YEAR`` per calendar year, each day counted in its own year (a vacation
  over New Year counts in both; :mod:`pbmserv.commands.preferences`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.domain import boards, deadlines, moves, notify
from pbmserv.domain.deadlines import forfeit_at, periods, periods_of, reminder_at
from pbmserv.games.base import FORFEIT, Position
from pbmserv.render.board_mail import format_days
from pbmserv.store.models import Board, BoardStatus, ClockBasis, ProposalKind, Robot, User
from pbmserv.store.outage import unavailable

log = logging.getLogger("pbmserv.domain.clocks")
VACATION_DAYS_PER_YEAR = 42
NEVER = datetime(9999, 1, 1, tzinfo=UTC)  # the due time of a board where nobody is to move
EARLY = timedelta(milliseconds=1)  # due times err early: a board checked too soon is harmless


@dataclass
class TickReport:
    nags: list[str] = field(default_factory=list)  # "Nim 101 alice"
    forfeits: list[str] = field(default_factory=list)
    draws: list[str] = field(default_factory=list)
    digests: int = 0  # daily digests mailed (notification mode "digest")

    def lines(self, now: datetime) -> list[str]:
        head = f"Clock check at {now:%Y-%m-%d %H:%M} UTC:"
        return [
            head,
            f"  nags:     {len(self.nags)} {' '.join(self.nags)}".rstrip(),
            f"  forfeits: {len(self.forfeits)} {' '.join(self.forfeits)}".rstrip(),
            f"  draws:    {len(self.draws)} {' '.join(self.draws)}".rstrip(),
            f"  digests:  {self.digests}",
        ]


def due_time(board: Board, settings: Settings, time_used: float | None) -> datetime:
    """The earliest moment :func:`check_board` may nag, forfeit or draw on ``board`` (vacations
    aside: a board whose player is protected is looked at and left alone).  ``time_used`` is
    that of the seat to move, needed only when the board has a ``--totaltime``."""
    if board.status is not BoardStatus.active or board.to_move_id is None:
        return NEVER
    return _due(board.options, board.last_move_at, board.nagged_at, time_used, settings)


def _due(
    options: dict[str, Any],
    last: datetime,
    nagged: datetime | None,
    time_used: float | None,
    settings: Settings,
) -> datetime:
    """:func:`check_board`'s conditions turned round: the earlier of the forfeit (or draw) and
    the next reminder, as :mod:`pbmserv.domain.deadlines` tells the players, a little early."""
    nag_days, forfeit_days = periods_of(options, settings.nag_days, settings.forfeit_days)
    forfeit = deadlines.forfeit_moment(options, last, time_used, forfeit_days)
    return min(forfeit, deadlines.reminder_moment(last, nagged, nag_days)) - EARLY


def _seat_time(board: Board) -> float | None:
    """The time used by the seat to move, when the board has a total time (else None)."""
    if board.options.get("totaltime") is None or board.status is not BoardStatus.active:
        return None
    seat = boards.position_of(board).to_move
    return None if seat is None else (board.seats[seat].time_used or 0.0)


def _compute_due_times(sessions: sessionmaker[Session], settings: Settings) -> None:
    """Fill in ``due_at`` where it was cleared (or everywhere, when the periods changed)."""
    basis = (float(settings.nag_days), float(settings.forfeit_days))
    try:
        with sessions() as session, session.begin():
            seen = session.get(ClockBasis, 1)
            if seen is None:  # the first tick: every due time is still empty
                session.add(ClockBasis(id=1, nag_days=basis[0], forfeit_days=basis[1]))
            elif (seen.nag_days, seen.forfeit_days) != basis:
                seen.nag_days, seen.forfeit_days = basis
                session.execute(
                    update(Board).where(Board.status == BoardStatus.active).values(due_at=None)
                )
    except IntegrityError:  # another process's first tick wrote the row at the same time
        pass
    with sessions() as session:
        rows = session.execute(
            select(
                Board.id,
                Board.version,
                Board.to_move_id,
                Board.options,
                Board.last_move_at,
                Board.nagged_at,
            ).where(Board.due_at.is_(None), Board.status == BoardStatus.active)
        ).all()
        changes = []
        for row in rows:
            if row.to_move_id is None:
                changes.append((row.id, row.version, NEVER))
                continue
            used = None
            if "totaltime" in row.options:
                full = session.get(Board, row.id)
                used = None if full is None else _seat_time(full)
            due = _due(row.options, row.last_move_at, row.nagged_at, used, settings)
            changes.append((row.id, row.version, due))
    if not changes:
        return
    with sessions() as session, session.begin():
        # only where the board is still as read: a move meanwhile cleared it again
        session.connection().execute(
            update(Board.__table__)  # type: ignore[arg-type]
            .where(
                Board.__table__.c.id == bindparam("bid"),
                Board.__table__.c.version == bindparam("bversion"),
                Board.__table__.c.due_at.is_(None),
            )
            .values(due_at=bindparam("due")),
            [{"bid": i, "bversion": v, "due": d} for i, v, d in changes],
        )


def tick(sessions: sessionmaker[Session], settings: Settings, now: datetime) -> TickReport:
    """Check the clock of every board whose time is due (one transaction per board)."""
    report = TickReport()
    _compute_due_times(sessions, settings)
    with sessions() as session:
        ids = list(
            session.scalars(
                select(Board.id)
                .where(Board.due_at <= now, Board.status == BoardStatus.active)
                .order_by(Board.id)
            )
        )
    for board_id in ids:
        done = TickReport()  # counted only once its transaction is committed
        try:
            with sessions() as session, session.begin():
                board = session.get(Board, board_id)
                if board is not None and board.status is BoardStatus.active:
                    if session.bind is not None and session.bind.dialect.name == "postgresql":
                        session.refresh(board, with_for_update=True)
                    mover = board.to_move_id
                    if mover is not None and session.get(Robot, mover) is not None:
                        board.due_at = NEVER  # a robot's turn: see check_board
                    else:
                        check_board(session, settings, board, now, done)
                        board.due_at = due_time(board, settings, _seat_time(board))
        except Exception as exc:  # noqa: BLE001 - e.g. a move changed the board meanwhile: next tick
            if unavailable(exc):  # the database went away: the clock loop backs off, once
                raise
            log.exception("clock check of board id %s", board_id)
            continue
        report.nags += done.nags
        report.forfeits += done.forfeits
        report.draws += done.draws
    with sessions() as session, session.begin():
        report.digests = notify.send_digests(session, now)
    for kind, names in (("nag", report.nags), ("forfeit", report.forfeits)):
        for name in names:
            log.info("%s: %s", kind, name)
    for name in report.draws:
        log.info("draw at the time limit: %s", name)
    return report


def check_board(
    session: Session, settings: Settings, board: Board, now: datetime, report: TickReport
) -> None:
    """Nag, forfeit or draw ``board`` when its player to move is late.  Never for a robot's
    turn (the caller skips those): a robot is late only when no server or ``robot run``
    plays its turns, and a robot forfeited by the clock lost a game it never had the chance
    to play (a robot gets no reminder either: it has no mail)."""
    position = boards.position_of(board)
    mover = boards.user_to_move(board, position)
    if mover is None or position.to_move is None:
        return
    nag_days, forfeit_days = periods(board, settings)
    elapsed = (now - board.last_move_at).total_seconds()
    seat = board.seats[position.to_move]
    # the moments the board mails and the web page show (one rule: pbmserv.domain.deadlines)
    deadline = forfeit_at(board, mover, seat.time_used or 0.0, forfeit_days)
    name = f"{boards.game_of(board).display_name} {board.number} {mover.userid}"
    if now >= deadline:
        if any(p.kind == ProposalKind.draw for p in boards.open_proposals(session, board)):
            _draw(session, board, position, mover, now)
            report.draws.append(name)
        else:
            _forfeit(session, board, position, mover, now, elapsed)
            report.forfeits.append(name)
        return
    if now < reminder_at(board, mover, nag_days):
        return
    board.nagged_at = now
    _nag(session, board, position, mover, now, elapsed, deadline)
    report.nags.append(name)


def _nag(
    session: Session,
    board: Board,
    position: Position,
    mover: User,
    now: datetime,
    elapsed: float,
    deadline: datetime,
) -> None:
    """The reminder, which says what happens at ``deadline`` without a move."""
    when = f"{deadline:%Y-%m-%d %H:%M} UTC"
    note = f"Reminder: it has been your turn for {format_days(elapsed)}."
    if any(p.kind == ProposalKind.draw for p in boards.open_proposals(session, board)):
        then = f"Without a move by {when} the open draw proposal is accepted: the game is drawn."
    elif _goes_on_without(position):
        then = f"Without a move by {when} you forfeit your seat; the game goes on without you."
    else:
        then = f"Without a move by {when} you forfeit the game."
    notify.nag_mail(session, board, position, mover, f"{note}\n{then}", now)


def _goes_on_without(position: Position) -> bool:
    """Whether the game goes on when the seat to move forfeits (three or four players)."""
    after = position.copy()
    after.play(FORFEIT)
    return after.outcome() is None


def _draw(session: Session, board: Board, position: Position, mover: User, now: datetime) -> None:
    moves.finish_draw(session, board, position, "draw proposal accepted at the time limit", now)
    note = f"{mover.userid} ran out of time; the open draw proposal is accepted instead."
    notify.board_mail(session, board, position, [note], now)
    moves.follow_up(session, board, now)  # (the next round's mails come after)


def _forfeit(
    session: Session,
    board: Board,
    position: Position,
    mover: User,
    now: datetime,
    elapsed: float,
) -> None:
    played = moves.forfeit(session, board, position, mover, now, elapsed)
    notes = [f"{mover.userid} forfeits: out of time after {format_days(elapsed)} without a move."]
    notify.board_mail(session, board, played.position, notes + played.notes, now, out=played.out)
    moves.follow_up(session, board, now)

"""Robots answer draw and undo proposals, so that a proposal in a game with a robot is decided.

Why: a proposal passes only when every player still in the game accepts it, and a robot never
answered, so a human who offered a robot a draw, or asked to take back a slip, waited for an
answer that never came (his next move closed the proposal unanswered).

What a robot answers: a draw, yes only when it stands clearly worse
(:func:`pbmserv.robots.accepts_draw`, thought about within its level's budget as a move is); an
undo, yes in an unrated game (``--unrated``): a robot lets a slip be taken back, as a friendly
partner does, and the undo takes back the human's move with the robots' replies to it
(:func:`pbmserv.domain.proposals.undo_span`); in a rated game, no: a player could take back
and try again until he won, and farm rating.  A robot that has accepted holds its move while
the others answer (its move would close the proposal), for the board's reminder period
(:func:`held_until`).

As a robot's move (:mod:`pbmserv.robots.service`): a short read finds the answers owed, the
robot thinks with no session open, and a short write records the answer only if the proposal is
still open and the board has not moved meanwhile, through :func:`pbmserv.domain.moves.vote` as a
human's answer; the board mail with the proposal's lines goes to the humans.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

from pbmserv.config import Settings
from pbmserv.domain import boards, moves, notify, proposals
from pbmserv.domain.deadlines import periods_of
from pbmserv.games import get_game
from pbmserv.games.base import Position
from pbmserv.robots import accepts_draw, budget_of
from pbmserv.robots.search import Stopped
from pbmserv.store.db import readonly_sessions
from pbmserv.store.models import Board, BoardStatus, Proposal, Robot, Seat
from pbmserv.store.outage import unavailable

log = logging.getLogger("pbmserv.robots")
WHY_NOT = {
    "draw": "A robot accepts a draw only when it stands clearly worse.",
    "undo": "A robot takes moves back only in an unrated game (challenge it with --unrated):"
    " a rated game is not played again until it is won.",
}


@dataclass(frozen=True)
class Ask:
    """A proposal a robot has still to answer, as read: enough to think without the database."""

    board_id: int
    game: str
    number: int
    proposal_id: int
    proposal: int  # its number on the board (the #N of the answer)
    kind: str  # "draw" or "undo"
    ply: int  # the position's ply: the board must not have moved when the answer is recorded
    user_id: int
    userid: str
    seat: int
    level: str
    state: str  # the serialised position
    unrated: bool  # the game counts for no rating (--unrated)


@dataclass(frozen=True)
class Answer:
    """A robot's answer to a proposal, for logs and the operator."""

    game: str
    number: int
    userid: str
    note: str  # "robbie rejects proposal #1: a draw. It is closed."
    notes: tuple[str, ...] = ()  # what the board mail says of it (the note, and why not)


class Skips(Protocol):
    """Where boards that fail are kept (:class:`pbmserv.robots.service.Unreadable`): one
    damaged board must not stop every robot, nor fail in every pass of the server's loop."""

    def skips(self, board: Board) -> bool: ...

    def add(self, board: Board, userid: str, exc: Exception, *, failed: bool = False) -> None: ...


def asks(
    session: Session, board_ids: Collection[int] | None = None, unreadable: Skips | None = None
) -> list[Ask]:
    """The answers robots owe: on active boards with an open proposal (only those of
    ``board_ids``, when given), every robot still in the game that has not accepted it, oldest
    proposal first.  A board whose position cannot be read goes to ``unreadable``."""
    query = (
        select(Board)
        .join(Proposal, Proposal.board_id == Board.id)
        .join(Seat, Seat.board_id == Board.id)
        .join(Robot, Robot.user_id == Seat.user_id)
        .where(Proposal.open.is_(True), Board.status == BoardStatus.active)
        .group_by(Board.id)
        .order_by(func.min(Proposal.at), Board.id)
    )
    if board_ids is not None:
        if not board_ids:
            return []
        query = query.where(Board.id.in_(sorted(board_ids)))
    robots = {r.user_id: r for r in session.scalars(select(Robot))}
    out: list[Ask] = []
    for board in session.scalars(query):
        if unreadable is not None and unreadable.skips(board):
            continue
        try:
            position = boards.position_of(board)
        except Exception as exc:  # noqa: BLE001 - one damaged board must not stop the others
            if unavailable(exc) or unreadable is None:
                raise
            robot_seat = next(s for s in board.seats if s.user_id in robots)
            unreadable.add(board, robot_seat.user.userid, exc)
            continue
        proposal = next(iter(boards.open_proposals(session, board)), None)
        vote = None if proposal is None else proposals.open_vote(session, board, position)
        if vote is None or proposal is None:
            continue
        for seat in sorted(board.seats, key=lambda s: s.index):
            robot = robots.get(seat.user_id)
            if robot is None or seat.user_id not in vote.waiting:
                continue
            live = [s for s in boards.seats_of(board, seat.user) if s in position.live_seats()]
            out.append(
                Ask(
                    board.id,
                    board.game,
                    board.number,
                    proposal.id,
                    vote.number,
                    vote.kind,
                    position.ply,
                    seat.user_id,
                    seat.user.userid,
                    live[0] if live else seat.index,
                    robot.level,
                    position.serialize(),
                    bool(board.options.get("unrated")),
                )
            )
    return out


def held_until(
    session: Session, board: Board, position: Position, user_id: int, nag_days: float
) -> datetime | None:
    """Until when a robot to move holds its move: it has accepted the open proposal, which
    waits for the other players' answers, and its move would close it (any move does), so it
    gives them the board's reminder period to answer; None when it does not wait."""
    proposal = next(iter(boards.open_proposals(session, board)), None)
    if proposal is None:  # (the common case, asked for every robot turn of every pass)
        return None
    vote = proposals.open_vote(session, board, position)
    if vote is None or not vote.waiting or user_id in vote.waiting:
        return None
    nag, _ = periods_of(board.options, nag_days, nag_days)
    return proposal.at + timedelta(days=nag)


def decide(ask: Ask, stop: Callable[[], bool] | None = None) -> bool:
    """The robot's answer (True: accept), thought about with no database session open."""
    if ask.kind == "undo":  # (rated: a move taken back and tried again until it wins)
        return ask.unrated
    position = get_game(ask.game).position_class.deserialize(ask.state)
    return accepts_draw(position, ask.seat, budget_of(ask.level), stop)


def record(session: Session, ask: Ask, agree: bool, now: datetime) -> Answer | None:
    """Record the answer, unless the proposal was closed or the board moved on while the
    robot thought (None: nothing is owed any more).  The caller mails the board once for
    the answers of all its robots (:func:`mail_answers`)."""
    board = session.get(Board, ask.board_id, with_for_update=True)
    if board is None or board.status is not BoardStatus.active:
        return None
    current = next(iter(boards.open_proposals(session, board)), None)
    position = boards.position_of(board)
    if current is None or current.id != ask.proposal_id or position.ply != ask.ply:
        return None
    vote = proposals.open_vote(session, board, position)
    if vote is None or ask.user_id not in vote.waiting:
        return None
    user = next(s.user for s in board.seats if s.user_id == ask.user_id)
    word = "accept" if agree else "reject"
    note, position = moves.vote(session, board, position, user, word, now, ask.proposal)
    notes = (note,) if agree else (note, WHY_NOT[ask.kind])
    return Answer(ask.game, ask.number, ask.userid, note, notes)


def mail_answers(session: Session, board_id: int, answers: Sequence[Answer], now: datetime) -> None:
    """One board mail to the humans for the answers of a board's robots (two robots' votes
    were two board mails within a second); then what a draw they agreed sets off (a
    tournament's next round, whose mails come after the board's)."""
    board = session.get(Board, board_id)
    if board is None or not answers:
        return
    position = boards.position_of(board)
    notes = [note for answer in answers for note in answer.notes]
    vote = proposals.open_vote(session, board, position)
    notify.board_mail(session, board, position, notes, now, vote=vote)
    moves.follow_up(session, board, now)


def answer_proposals(
    sessions: sessionmaker[Session],
    settings: Settings,
    now: Callable[[], datetime],
    board_ids: Collection[int] | None = None,
    stop: Callable[[], bool] | None = None,
    unreadable: Skips | None = None,
) -> list[Answer]:
    """Robots answer the open proposals that wait for them (on ``board_ids`` only, when
    given): read, think, then one short write per board, with one board mail for its robots'
    answers.  A board that fails (its position cannot be read, or the answer fails on a
    fault of ours) goes to ``unreadable`` and the others are answered."""
    with readonly_sessions(settings.url)() as session:
        owed = asks(session, board_ids, unreadable)
    done: list[Answer] = []
    for board_id, group in itertools.groupby(owed, key=lambda ask: ask.board_id):
        asked = list(group)
        first = asked[0]
        try:
            agrees = [decide(ask, stop) for ask in asked]
            with sessions() as session, session.begin():
                moment = now()
                answers = [
                    answer
                    for ask, agree in zip(asked, agrees, strict=True)
                    if (answer := record(session, ask, agree, moment)) is not None
                ]
                mail_answers(session, board_id, answers, moment)
        except (boards.BoardError, StaleDataError, IntegrityError) as exc:
            # the board moved on meanwhile (a move, another process's robot): nothing is owed
            log.info("robots on %s %d: no answer (%s)", first.game, first.number, exc)
            continue
        except Stopped:  # the server stops: the answers recorded so far are reported
            log.info("robots on %s %d: stopped while thinking", first.game, first.number)
            break
        except Exception as exc:  # noqa: BLE001 - one bad board must not stop the other robots
            if unavailable(exc) or unreadable is None:
                raise
            with readonly_sessions(settings.url)() as session:
                board = session.get(Board, board_id)
                if board is not None:
                    unreadable.add(board, first.userid, exc, failed=True)
            continue
        for answer in answers:
            log.info(
                "robot %s on %s %d: %s", answer.userid, answer.game, answer.number, answer.note
            )
        done += answers
    return done

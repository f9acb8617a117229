"""The robot turn: find boards where a robot is to move, think, and play through the board service.

Thinking takes seconds, so it never happens inside a database transaction:

1. a short read finds the pending turns (:func:`pending`) with the position as it stands;
2. the move is computed with no session open (:func:`pbmserv.robots.choose_move`);
3. a short write transaction plays it with :func:`pbmserv.domain.moves.play` and the ply guard
   ``expected_ply``: if the board changed meanwhile (an undo, a resignation, another robot loop
   that was quicker) the move is refused and nothing is stored, so a move is never doubled.
   Board rows also carry a version counter, so a concurrent writer makes the commit fail instead
   of overwriting.

The automatic loop (queued moves, forced passes) runs inside ``play_move`` as for a human move,
and the board mail goes to the human players (and spectators) through the same code as a human
move's.  Robots have no mail address, so nothing is ever mailed to them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

from pbmserv.config import Settings
from pbmserv.domain import accounts, boards, moves, notify, players, proposals
from pbmserv.errors import reason
from pbmserv.games import get_game
from pbmserv.games.base import MoveError
from pbmserv.render import subjects
from pbmserv.render.board_mail import reply_line
from pbmserv.render.templates import fill
from pbmserv.robots import budget_of, choose_move, votes
from pbmserv.robots.search import Stopped
from pbmserv.store import records
from pbmserv.store.db import readonly_sessions
from pbmserv.store.models import Board, BoardStatus, Robot, User
from pbmserv.store.outage import unavailable

log = logging.getLogger("pbmserv.robots")
NO_PASSWORD = "robot: no password"  # not an argon2 hash: every password check fails


@dataclass(frozen=True)
class Turn:
    """A robot's pending turn, as read: enough to think without the database."""

    board_id: int
    game: str
    number: int
    ply: int  # the move number the robot's move will be (the expected_ply guard)
    user_id: int
    userid: str
    level: str
    decline: bool  # challenged in a game it is not listed for, before its first move
    state: str  # the serialised position
    held_until: datetime | None = None  # it waits for the answers to a proposal it accepted
    robots_only: bool = False  # every player still in the game is a robot: no human waits


@dataclass(frozen=True)
class Done:
    """What one robot turn did, for logs and the operator."""

    game: str
    number: int
    userid: str
    text: str  # the move played, "declined", or why nothing was played
    played: bool
    nodes: int = 0
    depth: int = 0
    seconds: float = 0.0
    unreadable: bool = False  # the board's stored position could not be read: skipped
    vote: bool = False  # an answer to a proposal (``text``), not a move


class Unreadable:
    """Boards whose stored position could not be read, each with the row as it failed.

    Why: one damaged board (a position cache edited by hand, a record a newer engine no longer
    reads) must not stop every robot, nor be rebuilt and logged in every pass of the server's
    loop.  Such a board is skipped, named once in the log and once in what the pass returns,
    and tried again only when its row changes (a repair, an undo, a move)."""

    def __init__(self) -> None:
        self.rows: dict[int, tuple[int, str | None, int]] = {}
        self.found: list[Done] = []  # the boards found unreadable since the caller last took them

    def skips(self, board: Board) -> bool:
        return self.rows.get(board.id) == _row_key(board)

    def add(self, board: Board, userid: str, exc: Exception, *, failed: bool = False) -> None:
        """Skip ``board`` until its row changes: its position cannot be read, or (``failed``)
        its robot's move failed, which it would do again in every pass, a traceback each."""
        self.rows[board.id] = _row_key(board)
        what = "its robot's move failed" if failed else "its stored position cannot be read"
        why = f"skipped: {what} ({reason(exc)})"
        log.error(
            "robot %s on %s %d: %s; the other robots play on, this board is tried again once "
            "its row changes",
            userid,
            board.game,
            board.number,
            why,
            exc_info=exc if failed else None,  # (a bug: its traceback, once)
        )
        self.found.append(Done(board.game, board.number, userid, why, False, unreadable=not failed))

    def take(self) -> list[Done]:
        found, self.found = self.found, []
        return found


def _row_key(board: Board) -> tuple[int, str | None, int]:
    """What changes when a board's row does: its version (bumped by pbmserv), and the cache
    columns (an operator may repair them with sqlite3 or psql, which bump nothing)."""
    return board.version, board.position_cache, board.cache_ply


def pending(
    session: Session,
    board_ids: Collection[int] | None = None,
    *,
    unreadable: Unreadable | None = None,
    nag_days: float = Settings.nag_days,
) -> list[Turn]:
    """Every active board where a robot is to move (or only those of ``board_ids``), oldest
    move first.  The boards come from the index on ``Board.to_move_id``: the cost is the number
    of robot turns, not the number of boards with a robot seat.  A board whose position cannot
    be read is left out and goes to ``unreadable`` (see :class:`Unreadable`)."""
    query = (
        select(Board, Robot)
        .join(Robot, Robot.user_id == Board.to_move_id)
        .where(Board.status == BoardStatus.active)
        .order_by(Board.last_move_at, Board.id)
    )
    if board_ids is not None:
        if not board_ids:
            return []
        query = query.where(Board.id.in_(sorted(board_ids)))
    unreadable = Unreadable() if unreadable is None else unreadable
    turns = []
    for board, robot in session.execute(query).all():
        if unreadable.skips(board):
            continue
        try:
            turn = _turn(session, board, robot, nag_days)
        except Exception as exc:  # noqa: BLE001 - one damaged board must not stop the others
            if unavailable(exc):  # the database went away: no board is to blame
                raise
            unreadable.add(board, robot.user.userid, exc)
            continue
        if turn is not None:
            turns.append(turn)
    return turns


def _turn(session: Session, board: Board, robot: Robot, nag_days: float) -> Turn | None:
    """The robot's turn on ``board``, None if the robot is not to move after all."""
    position = boards.position_of(board)
    mover = boards.user_to_move(board, position)
    if mover is None or mover.id != robot.user_id:
        return None
    decline = board.game != robot.game and not any(
        boards.has_moved(board, s) for s in boards.seats_of(board, mover)
    )
    gone = players.gone_users(board, position)
    robots_only = all(
        session.get(Robot, seat.user_id) is not None
        for seat in board.seats
        if seat.user_id not in gone
    )
    return Turn(
        board.id,
        board.game,
        board.number,
        position.ply + 1,
        mover.id,
        mover.userid,
        robot.level,
        decline,
        position.serialize(),
        votes.held_until(session, board, position, mover.id, nag_days),
        robots_only,
    )


def think(turn: Turn, stop: Callable[[], bool] | None = None) -> tuple[str, int, int, float]:
    """The robot's move text for ``turn`` (no database): (text, nodes, depth, seconds);
    :class:`Stopped` when ``stop()`` turns true meanwhile."""
    game = get_game(turn.game)
    position = game.position_class.deserialize(turn.state)
    result = choose_move(position, budget_of(turn.level), stop)
    assert result.move is not None
    return position.format_move(result.move), result.nodes, result.depth, result.seconds


def play_turn(
    sessions: sessionmaker[Session],
    settings: Settings,
    turn: Turn,
    now: Callable[[], datetime],
    stop: Callable[[], bool] | None = None,
) -> Done:
    """Think (outside any transaction), then play the move if the board has not changed;
    :class:`Stopped` (nothing played) when ``stop()`` turns true while the robot thinks."""
    if turn.decline:
        text, nodes, depth, seconds = "declined", 0, 0, 0.0
    else:
        text, nodes, depth, seconds = think(turn, stop)
    when = now()
    try:
        with sessions() as session, session.begin():
            board = session.get(Board, turn.board_id)
            user = session.get(User, turn.user_id)
            if board is None or user is None:
                return Done(turn.game, turn.number, turn.userid, "board gone", False)
            if turn.decline:
                _decline(session, when, board, user)
            else:
                _play(session, when, board, user, text, turn.ply, settings.nag_days)
    except _AskedMeanwhile as exc:
        log.info("robot %s on %s %d: %s", turn.userid, turn.game, turn.number, exc)
        return Done(turn.game, turn.number, turn.userid, ASKED_MEANWHILE, False)
    except _MovedOn as exc:  # a lost race (another process's robot, an undo): no news
        log.info("robot %s on %s %d: %s", turn.userid, turn.game, turn.number, exc)
        return Done(turn.game, turn.number, turn.userid, "the board changed meanwhile", False)
    except (boards.BoardError, MoveError) as exc:
        log.info("robot %s on %s %d: %s", turn.userid, turn.game, turn.number, exc)
        return Done(turn.game, turn.number, turn.userid, str(exc), False)
    except (StaleDataError, IntegrityError):  # another writer played on this board first
        return Done(turn.game, turn.number, turn.userid, "the board changed meanwhile", False)
    return Done(turn.game, turn.number, turn.userid, text, True, nodes, depth, seconds)


class _MovedOn(Exception):
    """The board moved on while the robot thought: its move is not played."""


class _AskedMeanwhile(_MovedOn):
    """A proposal the robot must answer was made while it thought: it answers first."""


ASKED_MEANWHILE = "did not move: a proposal was made while it thought, and it answers that first"


def _play(
    session: Session,
    now: datetime,
    board: Board,
    user: User,
    text: str,
    ply: int,
    nag_days: float,
) -> None:
    position = boards.position_of(board)
    if board.status is BoardStatus.active and position.ply + 1 != ply:  # (the ply guard's words
        raise _MovedOn(  # are a mail's: "since your mail was written")
            f"the board moved on while the robot thought about move {ply} (move "
            f"{position.ply + 1} is due: another process or an undo came first); not played"
        )
    vote = proposals.open_vote(session, board, position)
    if vote is not None and user.id in vote.waiting:  # made while the robot thought
        raise _AskedMeanwhile(
            f"proposal #{vote.number} was made while the robot thought about move {ply}: it "
            "answers the proposal first (its move would close it unanswered); not played"
        )
    held = votes.held_until(session, board, position, user.id, nag_days)
    if held is not None and now < held:  # accepted while it thought: the others answer first
        raise _MovedOn(f"it waits for the other players' answers until {held:%Y-%m-%d %H:%M} UTC")
    played = moves.play(
        session, board, position, user, text, now=now, source="robot", expected_ply=ply
    )
    notify.board_mail(
        session,
        board,
        played.position,
        played.notes,
        now,
        actor=user,
        with_comment=True,
        out=played.out,
    )
    moves.follow_up(session, board, now)  # (a tournament's next round: after its mail)


def _decline(session: Session, now: datetime, board: Board, user: User) -> None:
    """A robot challenged in a game it is not listed for leaves the board (as a human can)."""
    if board.status is not BoardStatus.active:
        raise boards.BoardError("the game is over")
    note, position = boards.decline(session, board, user, now)
    others = [s.user for s in board.seats]
    if position is None:
        subject = subjects.board(boards.game_of(board).display_name, board.number)
        notify.text_mail(session, others, subject, [fill(note)], now, actor=user)
        return
    notify.board_mail(
        session, board, position, [note], now, actor=user, new=True, with_comment=True
    )


def run_pending(
    sessions: sessionmaker[Session],
    settings: Settings,
    now: Callable[[], datetime],
    *,
    stop: Callable[[], bool] = lambda: False,
    unreadable: Unreadable | None = None,
    robots_only_seconds: float | None = None,
) -> list[Done]:
    """Robots answer the proposals that wait for them, then play one move on every board where
    a robot is to move now (one pass); a board whose position cannot be read is skipped, and
    listed (once per ``unreadable``) as not played.

    Turns that a human waits for come first, quick robots first among them; games of robots
    only come last, oldest first.  With ``robots_only_seconds`` the pass ends once its robots-only turns have
    thought that long (the server's loop: it starts the next pass at once, which puts a human
    who moved meanwhile first, so a long robot tournament never holds up a human's reply by
    more than one robot move; the oldest boards move first, so every game gets its turn).

    The turns are read through a read-only session: the server looks after every batch of mail,
    and on SQLite a writer's session would take the write lock from the worker each time.  A
    database that cannot be reached raises (the caller's loop backs off and says so once).
    """
    unreadable = Unreadable() if unreadable is None else unreadable
    answers = votes.answer_proposals(sessions, settings, now, stop=stop, unreadable=unreadable)
    if stop():  # the server stops: the other answers and the moves wait for its restart
        return _answered(answers) + unreadable.take()
    with readonly_sessions(settings.url)() as session:
        turns = pending(session, unreadable=unreadable, nag_days=settings.nag_days)
    turns.sort(key=_order)
    done = _answered(answers) + unreadable.take()
    robots_only_since: float | None = None  # when the pass came to the robots-only games
    for turn in turns:
        if stop():
            break
        if turn.robots_only and robots_only_seconds is not None:
            if robots_only_since is None:
                robots_only_since = time.monotonic()
            elif time.monotonic() - robots_only_since >= robots_only_seconds:
                break
        if turn.held_until is not None and now() < turn.held_until:  # (not logged: each pass)
            when = f"{turn.held_until:%Y-%m-%d %H:%M} UTC"
            why = f"waits for the other players' answers to a proposal it accepted, until {when}"
            done.append(Done(turn.game, turn.number, turn.userid, why, False))
            continue
        try:
            result = play_turn(sessions, settings, turn, now, stop)
            if not result.played and result.text == ASKED_MEANWHILE:
                answers = votes.answer_proposals(
                    sessions, settings, now, [turn.board_id], stop, unreadable
                )
                done += _answered(answers) + unreadable.take()
        except Stopped:  # the server stops: this turn is played after it starts again
            log.info(
                "robot %s on %s %d: stopped while thinking", turn.userid, turn.game, turn.number
            )
            break
        except Exception as exc:  # noqa: BLE001 - one bad board must not stop the other robots
            if unavailable(exc):
                raise
            with readonly_sessions(settings.url)() as session:
                board = session.get(Board, turn.board_id)
                if board is not None:
                    unreadable.add(board, turn.userid, exc, failed=True)
            done += unreadable.take()
            continue
        log.info(
            "robot %s on %s %d: %s (%d nodes, depth %d, %.1fs)",
            result.userid,
            result.game,
            result.number,
            result.text,
            result.nodes,
            result.depth,
            result.seconds,
        )
        done.append(result)
    return done


def replies(
    session: Session,
    since: datetime,
    board_ids: Collection[int] | None = None,
    *,
    unreadable: Unreadable | None = None,
    nag_days: float = Settings.nag_days,
) -> list[Turn]:
    """The robot turns that a human's move at or after ``since`` has just brought about (on the
    boards ``board_ids`` only, when given: the boards a command changed).

    This is what a shell command may still do itself when no server runs: answer the human
    who moved, once.  Robots to move on other boards, or after another robot (robot against
    robot), wait for the server or ``pbmserv robot run``.
    """
    turns = pending(session, board_ids, unreadable=unreadable, nag_days=nag_days)
    if not turns:
        return []
    robots = set(session.scalars(select(Robot.user_id)))
    out = []
    for turn in turns:
        board = session.get(Board, turn.board_id)
        last = records.newest_move(board) if board is not None else None
        if last is not None and last.at >= since and last.user_id not in robots:
            out.append(turn)
    return out


def answer_human(
    sessions: sessionmaker[Session],
    settings: Settings,
    now: Callable[[], datetime],
    since: datetime,
    board_ids: Collection[int] | None = None,
) -> list[Done]:
    """Robots answer the open proposals (of ``board_ids``) that wait for them, and play the
    one robot reply to each human move made since ``since`` (see :func:`replies`)."""
    if board_ids is not None and not board_ids:
        return []
    unreadable = Unreadable()  # (a damaged board is named, not a failure of the command)
    answers = votes.answer_proposals(sessions, settings, now, board_ids, unreadable=unreadable)
    done = _answered(answers) + unreadable.take()
    with sessions() as session:
        turns = replies(
            session, since, board_ids, unreadable=unreadable, nag_days=settings.nag_days
        )
    done += unreadable.take()
    turns = [t for t in turns if t.held_until is None or now() >= t.held_until]
    return done + [play_turn(sessions, settings, turn, now) for turn in turns]


def _order(turn: Turn) -> tuple[bool, float]:
    """Where ``turn`` comes in a pass (the sort is stable: oldest move first among equals):
    a human's reply first, quick robots first; then games of robots only, oldest first
    whatever their levels (by thinking time, quick games would take every slice and a strong
    robot's game would never move)."""
    return (turn.robots_only, 0.0 if turn.robots_only else _thinking_time(turn))


def _thinking_time(turn: Turn) -> float:
    """How long the robot of ``turn`` may think: the quick ones play first in a pass, so that
    an easy robot's reply does not wait behind a strong one's 15 seconds (robots' turns are
    played one after another)."""
    try:
        budget = budget_of(turn.level)
    except ValueError:  # (a level stored before the bounds: it fails when played, as before)
        return 0.0
    return budget.seconds or 0.0


def _answered(answers: list[votes.Answer]) -> list[Done]:
    """Robots' answers to proposals as turns done: something changed (a proposal decided, a
    move taken back, a game drawn), so a loop until idle looks again."""
    return [Done(a.game, a.number, a.userid, " ".join(a.notes), True, vote=True) for a in answers]


def next_up(sessions: sessionmaker[Session], game: str, number: int) -> str:
    """Who acts next on a board after a robot's reply, for the shell that asked for it: a
    human to move, or a robot whose turn waits for the server or ``pbmserv robot run`` (a
    shell command plays one robot reply only); '' when the game is over. A human to move is
    given the lines to run, as his board mail gives them to send back (the shell's answer ends with
    those of the player to move)."""
    with sessions() as session:
        board = session.scalar(select(Board).where(Board.game == game, Board.number == number))
        if board is None or board.status is not BoardStatus.active or board.to_move_id is None:
            return ""
        mover = session.get(User, board.to_move_id)
        if mover is None:
            return ""
        if session.get(Robot, mover.id) is None:  # the lines he sends, as his board mail has
            position = boards.position_of(board)
            vote = proposals.open_vote(session, board, position)
            lines = reply_line(board, position, mover, vote, "shell").rstrip("\n")
            return f"{mover.userid} is to move" + (f".\n{lines.lstrip()}" if lines else "")
        return (
            f"robot {mover.userid} is to move: 'pbmserv serve' or 'pbmserv robot run' plays its "
            "turn"
        )


def run_until_idle(
    sessions: sessionmaker[Session],
    settings: Settings,
    now: Callable[[], datetime],
    *,
    max_moves: int = 10_000,
) -> list[Done]:
    """Pass after pass until no robot is to move (robot against robot plays to the end)."""
    done: list[Done] = []
    unreadable = Unreadable()  # each damaged board reported once, not in every pass
    while len(done) < max_moves:
        batch = run_pending(sessions, settings, now, unreadable=unreadable)
        done += batch
        if not any(d.played for d in batch):
            break
    return done


def add_robot(session: Session, userid: str, game: str, level: str, now: datetime) -> User:
    """Create robot user ``userid`` for ``game``; ValueError says what is wrong."""
    userid = accounts.normalise_userid(userid)
    problem = accounts.check_userid(userid)
    if problem:
        raise ValueError(problem)
    if accounts.find_user(session, userid) is not None:
        raise ValueError(f"the userid '{userid}' is taken")
    game_name = get_game(game).name  # KeyError names the known games
    budget_of(level)
    user = User(userid=userid, password_hash=NO_PASSWORD, created=now, accepts_challenges=True)
    session.add(user)
    session.flush()
    session.add(Robot(user_id=user.id, game=game_name, level=level.strip().lower(), created=now))
    return user

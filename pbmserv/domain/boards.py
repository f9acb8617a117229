"""Boards in the store: creating them, rebuilding positions, and playing moves.

This is where the move record and the game engine meet.  Every change to a board goes through
:func:`play_move` (or the decline/undo helpers), which appends to the record, runs the automatic
loop of the classic servers, refreshes the cached position and closes the board when the game
ends.  Nothing here formats or sends mail (:mod:`pbmserv.domain.notify` does), and nothing
here knows tournaments: :mod:`pbmserv.domain.moves` wraps these functions for the callers and
tells a tournament when one of its boards has finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from sqlalchemy import Insert, Select, bindparam, func, insert, select
from sqlalchemy.orm import Session, joinedload, object_session

from pbmserv.domain.players import not_your_turn
from pbmserv.domain.ratings import rate_board
from pbmserv.games import get_game
from pbmserv.games.base import FORFEIT as FORFEIT_MOVE
from pbmserv.games.base import PASS, RESIGN, Game, MoveError, Position, SpecialMove
from pbmserv.render.effects import move_notes
from pbmserv.store import records
from pbmserv.store.models import (
    Board,
    BoardStatus,
    Comment,
    MoveRecord,
    Proposal,
    Seat,
    Subscription,
    User,
)

FIRST_BOARD_NUMBER = 101
FORFEIT = FORFEIT_MOVE.word  # the automatic entry of a seat that ran out of time


class BoardError(Exception):
    """A request about a board that the rules or the board's state refuse."""


class NotYourTurn(BoardError):
    """A move of a player of the board while it is another's turn (or he is out)."""


@dataclass
class Played:
    """What one accepted command did to a board, for the answer mails."""

    board: Board
    position: Position
    entries: list[MoveRecord]  # the move and every automatic entry after it
    notes: list[str]  # status notes: "bob has swapped sides.", "alice resigned."
    out: frozenset[int] = frozenset()  # user ids whose seats left play (the game goes on)

    @property
    def newest(self) -> MoveRecord | None:
        """The record's newest entry now."""
        return self.entries[-1] if self.entries else None


def game_of(board: Board) -> Game:
    return get_game(board.game)


def find_board(session: Session, game: Game, number: int, *, for_update: bool = False) -> Board:
    """The board with its seats and their users, in one query (every command needs them; the
    users' addresses and robot rows too, which every board mail reads)."""
    lock = for_update and session.bind is not None and session.bind.dialect.name == "postgresql"
    found = session.scalars(_board_query(lock), {"game": game.name, "number": number})
    board = found.unique().one_or_none()
    if board is None:
        raise BoardError(f"there is no {game.display_name} board {number}")
    if board.status is BoardStatus.removed:  # its players had mails of it, and a link
        raise BoardError(f"{game.display_name} board {number} {REMOVED}")
    return board


REMOVED = "was removed: a player declined the game, which could not go on without him"


@lru_cache(maxsize=2)
def _board_query(lock: bool) -> Select[Board]:
    """Built once (building it cost a third of running it); ``lock``: FOR UPDATE of the board."""
    mailable = (joinedload(User.addresses), joinedload(User.robot))  # who gets the board mail
    query = (
        select(Board)
        .where(Board.game == bindparam("game"), Board.number == bindparam("number"))
        .options(
            joinedload(Board.seats).joinedload(Seat.user).options(*mailable),
            joinedload(Board.subscriptions).joinedload(Subscription.user).options(*mailable),
        )
    )
    return query.with_for_update(of=Board) if lock else query


def replay(board: Board, upto: int | None = None) -> Position:
    """The position after the first ``upto`` plies of the record (all of them by default)."""
    game = game_of(board)
    moves = board.moves if upto is None else board.moves[:upto]
    position = game.new(len(board.seats), board.params)
    for record in moves:
        play_entry(position, record.text)
    return position


def play_entry(position: Position, text: str) -> None:
    """Play one entry of a record (``Forfeit`` is no move a player can name)."""
    position.play(FORFEIT_MOVE if text == FORFEIT else position.parse_move(text))


def position_of(board: Board) -> Position:
    """The current position: the cache when it is up to date, else a replay of the record."""
    game = game_of(board)
    if board.position_cache and board.cache_ply == records.recorded_plies(board):
        return game.position_class.deserialize(board.position_cache)
    position = replay(board)
    _store_cache(board, position)
    return position


def _store_cache(board: Board, position: Position) -> None:
    """Keep the derived columns: the cached position and the user to move (robot turns are
    found by that column's index, never by replaying boards)."""
    board.position_cache = position.serialize()
    board.cache_ply = position.ply
    mover = board.user_to_move(position)
    board.to_move_id = None if mover is None else mover.id


def next_number(session: Session, game: Game) -> int:
    highest = session.scalar(select(func.max(Board.number)).where(Board.game == game.name))
    return FIRST_BOARD_NUMBER if highest is None else highest + 1


def create_board(
    session: Session,
    game: Game,
    users: list[User],
    params: dict[str, bool | int],
    options: dict[str, object],
    now: datetime,
) -> tuple[Board, Position]:
    position = game.new(len(users), params)
    board = Board(
        game=game.name,
        number=next_number(session, game),
        params=position.params,
        options=options,
        status=BoardStatus.active,
        created=now,
        last_move_at=now,
        seats=[Seat(index=i, user=u) for i, u in enumerate(users)],
    )
    _store_cache(board, position)
    session.add(board)
    session.flush()
    return board, position


def seat_user(board: Board, seat: int) -> User:
    return board.seats[seat].user


def user_to_move(board: Board, position: Position) -> User | None:
    """The user who must act now (the partner, when a partnership seat was absorbed)."""
    return board.user_to_move(position)


def seats_of(board: Board, user: User) -> list[int]:
    return [s.index for s in board.seats if s.user_id == user.id]


def _record(
    board: Board,
    position: Position,
    move: object,
    user: User | None,
    *,
    auto: bool,
    now: datetime,
    source: str,
    text: str | None = None,
    notes: list[str] | None = None,
) -> MoveRecord:
    """Append the entry for ``move`` (written as ``text`` when given) and play it; ``notes``
    get what it did that its text does not say (captures, players knocked out)."""
    seat = position.to_move
    assert seat is not None
    entry = MoveRecord(
        ply=position.ply + 1,
        seat=seat,
        user_id=user.id if user else None,
        text=text or position.format_move(move),
        auto=auto,
        at=now,
        source=source,
    )
    _add_to_board(board, entry, "moves", _insert_move())
    if notes is None or isinstance(move, SpecialMove):  # resign, swap, pass: noted elsewhere
        position.play(move)
        return entry
    before, capture = position.seats(), position.capture(move)
    position.play(move)
    users = [s.user.userid for s in board.seats]
    mover = user.userid if user else users[seat]
    after = position.seats()
    notes += move_notes(entry.ply, entry.text, seat, mover, users, before, after, capture)
    return entry


def _add_to_board(
    board: Board, entry: MoveRecord | Comment, collection: str, statement: Insert
) -> None:
    """Store a new entry of ``board``'s ``collection``: one plain INSERT when that collection
    is not loaded (each move's case: the unit of work would cost more than the statement), or
    through the collection when it is (a replay or an undo read it: it must stay whole)."""
    session = object_session(board)
    assert session is not None
    if board.id is None or collection in board.__dict__:
        entry.board = board  # type: ignore[assignment]
        session.add(entry)
        return
    entry.board_id = board.id
    columns = {column.key: getattr(entry, column.key) for column in statement.table.columns}
    del columns["id"]
    session.connection().execute(statement, columns)


@lru_cache(maxsize=1)
def _insert_move() -> Insert:
    return insert(MoveRecord)


@lru_cache(maxsize=1)
def _insert_comment() -> Insert:
    return insert(Comment)


def play_move(
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
    """Play ``user``'s move ``text`` on ``board``, then the automatic loop; raise on any problem.

    ``expected_ply`` is the ``#N`` guard: the move must be move number N (plies from 1).
    """
    if board.status is not BoardStatus.active:
        raise BoardError(f"{game_of(board).display_name} board {board.number} is over")
    if expected_ply is not None and expected_ply != position.ply + 1:
        raise BoardError(wrong_number(expected_ply, position.ply + 1))
    mover = user_to_move(board, position)
    if mover is None or mover.id != user.id:
        if not seats_of(board, user):
            raise BoardError(f"{user.userid} does not play on board {board.number}")
        raise NotYourTurn(not_your_turn(board, position, user))
    move = position.parse_move(text)  # MoveError propagates with its message for the player
    live = position.live_seats()
    notes: list[str] = []
    entries = [
        _record(board, position, move, user, auto=False, now=now, source=source, notes=notes)
    ]
    mover_seat = board.seats[entries[0].seat]  # his clock ran since the last move
    mover_seat.time_used = (mover_seat.time_used or 0.0) + (
        now - board.last_move_at
    ).total_seconds()
    if move == RESIGN:
        notes.append(f"{user.userid} resigned.")
    if position.swapped and entries[0].text == "swap":
        _exchange_seats(board)
        notes.append(f"{user.userid} has swapped sides.")
    _add_comment(board, position.ply, user, comment, now)
    entries += _after_move(session, board, position, now, notes)
    return Played(board, position, entries, notes, _left(board, position, live))


def _left(board: Board, position: Position, live: list[int]) -> frozenset[int]:
    """The players of the seats in play before (``live``) and out now: their mails of this
    command tell them they are out, so they get it whatever their notification mode."""
    now_live = set(position.live_seats())
    return frozenset(board.seats[i].user_id for i in live if i not in now_live)


def _add_comment(board: Board, ply: int, user: User, text: str | None, now: datetime) -> None:
    """Store what ``user`` wrote with the entry ``ply`` (his move, or his queued move or
    resignation, whose comment waited with it), if anything."""
    if text and text.strip():
        note = Comment(ply=ply, user_id=user.id, text=text.strip(), at=now)
        _add_to_board(board, note, "comments", _insert_comment())


def wrong_number(expected: int, due: int) -> str:
    """Why a move's ``#N`` is refused: a number below the move due was written before the
    board moved on; one above it cannot come from any board mail (a typo, or an undo)."""
    if expected > due:
        return (
            f"#{expected} is ahead of the board: the move due is move {due} (a typo? then "
            f"end your move with #{due})"
        )
    return (
        f"this would be move {due}, not move {expected}: the board has changed since your "
        "mail was written"
    )


def _after_move(
    session: Session, board: Board, position: Position, now: datetime, notes: list[str]
) -> list[MoveRecord]:
    """What follows every entry: the automatic loop, closing the game if it ended, dropping
    open proposals, refreshing the cached position."""
    entries = run_automatic(board, position, now=now, notes=notes)
    board.last_move_at = now
    _close_if_over(board, position, now)
    _store_cache(board, position)  # before the query below flushes: one UPDATE of the board
    _close_proposals(session, board)
    return entries


def forfeit(
    session: Session, board: Board, position: Position, user: User, now: datetime, elapsed: float
) -> Played:
    """The player to move ran out of time: an automatic ``Forfeit`` entry (a resignation that
    the engines word as a forfeit on time)."""
    seat = board.seats[position.to_move]  # type: ignore[index]
    seat.time_used = (seat.time_used or 0.0) + elapsed
    live = position.live_seats()
    entry = _record(board, position, FORFEIT_MOVE, user, auto=True, now=now, source="clock")
    notes: list[str] = []
    entries = [entry, *_after_move(session, board, position, now, notes)]
    return Played(board, position, entries, notes, _left(board, position, live))


def finish_draw(
    session: Session, board: Board, position: Position, reason: str, now: datetime
) -> None:
    """End the game drawn (agreement, or an open draw accepted at the time limit), among the
    players still in it: those who resigned, forfeited or were eliminated keep their loss."""
    finish_off_board(session, board, reason, now, [], list(position.still_in()))


def finish_off_board(
    session: Session,
    board: Board,
    reason: str,
    now: datetime,
    winners: list[int],
    drawn: list[int] | None = None,
) -> None:
    """End the game on a result decided off the board (a draw agreed, a player who left the
    board's tournament: ``winners`` are the others' seats): the engine's position is not
    over, so the board's result is what mails, lists and records read.  No proposal stays
    open, nothing queued is played or shown any more, the ratings take it."""
    _close_proposals(session, board)
    for seat in board.seats:
        _clear_queue(seat)
    board.status, board.to_move_id = BoardStatus.finished, None
    board.finished_at = board.last_move_at = now
    board.winners, board.drawn, board.result = winners, drawn, reason
    _rate(board, now)


def _exchange_seats(board: Board) -> None:
    first, second = board.seats[0], board.seats[1]
    first.user, second.user = second.user, first.user
    first.queued_move, second.queued_move = second.queued_move, first.queued_move
    first.queued_resign, second.queued_resign = second.queued_resign, first.queued_resign
    first.queued_move_comment, second.queued_move_comment = (
        second.queued_move_comment,
        first.queued_move_comment,
    )
    first.queued_resign_comment, second.queued_resign_comment = (
        second.queued_resign_comment,
        first.queued_resign_comment,
    )
    first.time_used, second.time_used = second.time_used, first.time_used


def run_automatic(
    board: Board, position: Position, *, now: datetime, notes: list[str]
) -> list[MoveRecord]:
    """The classic loop after a move: queued resign, queued move, forced pass, until a human acts."""
    entries: list[MoveRecord] = []
    while position.to_move is not None:
        seat = board.seats[position.controller(position.to_move)]
        if seat.queued_resign:
            seat.queued_resign = False
            said, seat.queued_resign_comment = seat.queued_resign_comment, None
            notes.append(f"{seat.user.userid} resigned.")
            entry = _record(board, position, RESIGN, seat.user, auto=True, now=now, source="queued")
            entries.append(entry)
            _add_comment(board, entry.ply, seat.user, said, now)
            continue
        if seat.queued_move:
            text, seat.queued_move = seat.queued_move, None
            said, seat.queued_move_comment = seat.queued_move_comment, None
            try:
                move = position.parse_move(text)
            except MoveError as exc:
                dropped = " Its comment is dropped with it." if said else ""
                notes.append(
                    f"The queued move {text} of {seat.user.userid} was not legal ({exc}).{dropped}"
                )
            else:
                entry = _record(
                    board,
                    position,
                    move,
                    seat.user,
                    auto=True,
                    now=now,
                    source="queued",
                    notes=notes,
                )
                entries.append(entry)
                _add_comment(board, entry.ply, seat.user, said, now)
                continue
        moves = position.legal_moves()
        first = next(moves, None)
        if first == PASS and next(moves, None) is None:
            entries.append(
                _record(board, position, PASS, seat.user, auto=True, now=now, source="forced")
            )
            continue
        break
    return entries


def _close_if_over(board: Board, position: Position, now: datetime) -> None:
    outcome = position.outcome()
    if outcome is None:
        return
    board.status = BoardStatus.finished
    board.finished_at = now
    board.winners = list(outcome.winners)
    board.drawn = None if outcome.winners else list(position.still_in())
    board.result = outcome.reason
    _rate(board, now)


def _rate(board: Board, now: datetime) -> None:
    """What follows every finished game here: the ratings.  (The tournament the board belongs
    to is told by :mod:`pbmserv.domain.moves`, which sits above this module.)"""
    rate_board(object_session(board), board, now)


def _close_proposals(session: Session, board: Board) -> None:
    for proposal in open_proposals(session, board):
        proposal.open = False


def open_proposals(session: Session, board: Board) -> list[Proposal]:
    return list(session.scalars(_proposals_query(), {"board_id": board.id}))


@lru_cache(maxsize=1)
def _proposals_query() -> Select[Proposal]:
    """Built once: every move asks it."""
    return select(Proposal).where(
        Proposal.board_id == bindparam("board_id"), Proposal.open.is_(True)
    )


def queue_resign(board: Board, user: User, comment: str = "") -> str | None:
    """Resign ``user`` on his next turn; ``comment`` is mailed with the resignation then.
    Returns the queued move it replaces (the newer wish wins: one thing is queued at once)."""
    replaced = None
    for seat in board.seats:
        if seat.user_id == user.id:
            replaced = replaced or seat.queued_move
            _clear_queue(seat)
            seat.queued_resign = True
            seat.queued_resign_comment = comment.strip() or None
    return replaced


def queue_move(board: Board, user: User, text: str | None, comment: str = "") -> bool:
    """Play ``text`` for ``user`` when his turn comes (None: cancel whatever he queued, a
    resignation too), with ``comment`` mailed with it then.  Returns whether it replaced (or
    cancelled) a queued resignation: a player who queued ``resign`` and then a move, or
    ``cancel``, has changed his mind, and resigning on his turn would undo that."""
    replaced = False
    for seat in board.seats:
        if seat.user_id == user.id:
            replaced = replaced or seat.queued_resign
            _clear_queue(seat)
            seat.queued_move = text
            seat.queued_move_comment = (comment.strip() or None) if text else None
    return replaced


def has_moved(board: Board, seat: int) -> bool:
    """Whether ``seat`` has played a move of its own: a queued move is the player's choice and
    counts (else he could queue his moves, then leave a lost game unrated by "declining"); a
    forced pass or a forfeit, entered without his word, does not."""
    return any(m.seat == seat and (not m.auto or m.source == "queued") for m in board.moves)


def decline(
    session: Session, board: Board, user: User, now: datetime
) -> tuple[str, Position | None]:
    """``user`` leaves during the first round: restart with the others, or remove the board.

    Returns a note and the new position (None when the board was removed).
    """
    game = game_of(board)
    leaving = [s for s in board.seats if s.user_id == user.id]
    remaining = [s.user for s in board.seats if s.user_id != user.id]
    dropped = len(board.moves)
    labels = [i.label for i in game.new(len(board.seats), board.params).seats()]
    was = {s.user_id: labels[s.index] for s in board.seats}
    for seat in leaving:
        board.seats.remove(seat)
    session.flush()
    board.moves.clear()
    board.comments.clear()
    _close_proposals(session, board)
    board.last_move_at = now
    try:
        game.check_players(len(remaining), board.params)
    except ValueError as exc:
        board.status = BoardStatus.removed
        board.finished_at = now
        board.position_cache = None
        board.to_move_id = None
        for seat in board.seats:  # nothing of a removed board is played or mailed any more
            seat.digest_pending = False
            _clear_queue(seat)
        return f"{user.userid} declined the game, so it is removed ({exc}).", None
    for index, seat in enumerate(board.seats):
        seat.index = index
        _clear_queue(seat)
        seat.mailed_ply = None  # a new game: its record starts again
    position = game.new(len(remaining), board.params)
    _store_cache(board, position)
    return _restart_note(user, board, position, dropped, was), position


def _restart_note(
    user: User, board: Board, position: Position, dropped: int, was: dict[int, str]
) -> str:
    """What a restart after a decline took away: the moves played, the seats that changed."""
    lost = {0: "", 1: " The move played so far is dropped."}.get(
        dropped, f" The {dropped} moves played so far are dropped."
    )
    now = {s.user_id: position.seats()[s.index].label for s in board.seats}
    seats = ", ".join(
        f"{s.user.userid} ({now[s.user_id]}"
        + ("" if was.get(s.user_id) == now[s.user_id] else f", was {was.get(s.user_id)}")
        + ")"
        for s in board.seats
    )
    return f"{user.userid} declined the game; it restarts with the remaining players.{lost} Seats now: {seats}."


def _clear_queue(seat: Seat) -> None:
    seat.queued_move = seat.queued_move_comment = None
    seat.queued_resign, seat.queued_resign_comment = False, None


def take_back(board: Board, count: int) -> Position:
    """Remove the newest ``count`` entries of the record (an undo that passed), and the
    comments written with them: a move played later under the same number is another move."""
    kept = len(board.moves) - count
    while len(board.moves) > kept:
        if board.moves.pop().text == "swap":
            _exchange_seats(board)
    board.comments[:] = [c for c in board.comments if c.ply <= kept]
    for seat in board.seats:  # a board mailed at a ply taken back is news again ("once")
        if seat.mailed_ply is not None and seat.mailed_ply >= kept:
            seat.mailed_ply = kept - 1 if kept else None
        if seat.submitted_move and int(seat.submitted_move.rpartition("#")[2]) > kept:
            seat.submitted_move = None  # shown on a position taken back: 'confirm' would play
            # it, under the same number, on whatever is played there next
    position = replay(board)
    _store_cache(board, position)
    return position

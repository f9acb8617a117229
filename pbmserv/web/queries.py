"""Read-only queries behind the pages: plain data for the templates, nothing written.

Everything the pages take from the domain layer is imported here, in one place: the replay of a
record, the clock's dates, the tournament standings.  A page never uses ``boards.position_of``
(it would store the position cache); it replays the record instead.  A list of boards replays
nothing and loads no record: who is to move comes from the board's index column
(``Board.to_move_id``, kept with the cache), the number of moves from one counting query.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from pbmserv.config import Settings
from pbmserv.domain.accounts import awaiting_confirmation
from pbmserv.domain.boards import REMOVED, replay
from pbmserv.domain.deadlines import due
from pbmserv.domain.pairing import standings
from pbmserv.domain.proposals import open_vote
from pbmserv.domain.tournament_text import board_name, describe, winner
from pbmserv.domain.tournaments import BOARD_NAME, named_board
from pbmserv.games import get_game
from pbmserv.games.base import Game, Position
from pbmserv.numbers import clock_days, whole_number
from pbmserv.render.board_mail import (
    SWAP_TEXT,
    board_title,
    cell_text,
    column_labels,
    column_seats,
    format_days,
    had_swap,
    played_by,
    record_rows,
    swap_cell,
)
from pbmserv.render.results import ending, named_result, short_result
from pbmserv.store import records
from pbmserv.store.models import (
    Board,
    BoardStatus,
    Rating,
    Robot,
    Seat,
    Tournament,
    TournamentPlayer,
    User,
)

LIST_LIMIT = 500  # newest boards shown per list
SWAP_PLY = 2  # the pie rule's swap is the second move (render.board_mail.is_swap)


class NotFound(LookupError):
    """The thing a page names does not exist (the page answers 404)."""


SHOWN_NAME = 60  # the characters of a name a 404 quotes


def shown_name(name: str) -> str:
    """A name of the address as a 404 quotes it: its first 60 characters and '…' (an address
    of thousands of characters was quoted whole).

    >>> shown_name("alice"), len(shown_name("x" * 5000))
    ('alice', 61)
    """
    return name if len(name) <= SHOWN_NAME else name[:SHOWN_NAME] + "…"


def game_or_404(name: str) -> Game:
    try:
        return get_game(name.lower())
    except (KeyError, ValueError) as exc:
        raise NotFound(f"There is no game {shown_name(name)!r} here.") from exc


def tournament_board_path(session: Session, game_name: str, name: str) -> str:
    """The page of a tournament's board named as the mails name it (``t2r1b3``, which works
    wherever a board number does): ``/boards/pylon/104``.  The name is one board of one
    game, so a link under another game's path leads to it too."""
    game = game_or_404(game_name)
    found = named_board(session, name)
    if found is None:
        raise NotFound(f"There is no {game.display_name} board {shown_name(name)}.")
    return f"/boards/{found[0]}/{found[1]}"


def stored_board(session: Session, game: Game, number: int) -> Board:
    board = session.scalar(select(Board).where(Board.game == game.name, Board.number == number))
    if board is None:
        raise NotFound(f"There is no {game.display_name} board {number}.")
    if board.status is BoardStatus.removed:  # the mails of its start link here
        raise NotFound(f"{game.display_name} board {number} {REMOVED}.")
    return board


# ----------------------------------------------------------------------------- board page


@dataclass
class MoveCell:
    ply: int
    text: str
    userid: str


@dataclass
class PlayerRow:
    seat: int
    label: str
    named: str  # the seat by its board mark (SeatInfo.named)
    userid: str
    note: str
    in_play: bool
    to_move: bool
    time_used: str


@dataclass
class BoardPage:
    board: Board
    game: Game
    heading: str
    ply: int  # the position shown: after this many moves
    plies: int  # moves on the board
    position: Position
    status: str
    players: list[PlayerRow]
    columns: list[str]
    move_rows: list[list[MoveCell | None]]
    comments: list[tuple[int, str, str, datetime]]
    clock: list[tuple[str, str]]
    tournament: str | None = None  # the board's name in its tournament, t1r2b3
    tournament_page: str | None = None  # the tournament's name, as its mails name it (spring)
    over: bool = False  # the board's end is shown: no seat is to move, whatever the engine says
    proposal: str = ""  # an open draw or undo proposal, as its mails tell it


def board_legend(page: BoardPage) -> dict[str, Any]:
    """The data of the drawing's legend (the engine's board context), its result naming the
    players as the status line does ("alice resigned", not the seat's "blue resigned")."""
    legend = page.position.board_context()
    if legend.get("result") and page.ply == page.plies and page.board.result:
        legend["result"] = named_result(page.board, page.position)
    return legend


def _tournament_of(session: Session, board_name: str) -> str | None:
    """The name of the tournament whose board is ``board_name`` (``t1r2b3``): its mails name
    it so ("Tournament spring, round 2"), not by its number."""
    found = BOARD_NAME.fullmatch(board_name)
    number = None if found is None else whole_number(found.group(1))
    tournament = None if number is None else session.get(Tournament, number)
    return None if tournament is None else tournament.name


def status_line(board: Board, position: Position, ply: int) -> str:
    """Who is to move, or how the game ended; for an earlier ply, which seat was to move."""
    if ply < len(board.moves):
        seat = position.to_move
        who = "" if seat is None else f"; {position.seats()[seat].label} to move"
        return f"Position after move {ply} of {len(board.moves)}{who}."
    if board.status is BoardStatus.finished:
        reason = f" ({named_result(board, position)})" if board.result else ""
        return ending(board, tie="The game was a tie.") + reason
    seat = position.to_move
    if seat is None:
        return "The game is over."
    user = board.seats[position.controller(seat)].user
    return f"It is {user.userid}'s turn ({position.seats()[seat].label})."


def _columns(board: Board) -> list[int]:
    """The seat of each column of the move list: after a swap, the first mover's first."""
    return column_seats(had_swap(board), len(board.seats))


def move_rows(board: Board, position: Position) -> list[list[MoveCell | None]]:
    """The record in rows of one cell per seat, each move under the player who made it, a new
    row when the column order wraps (as mailed: :func:`record_rows`)."""
    seats = len(board.seats)
    swapped = had_swap(board)
    columns = [board.seats[i] for i in column_seats(swapped, seats)]
    users = {column: s.user.userid for column, s in enumerate(columns)}
    players = [(s.user_id, s.user.userid) for s in columns]
    swap = swap_cell(board, position) if seats == 2 else SWAP_TEXT
    return [
        [
            None
            if entry is None
            else MoveCell(
                entry.ply,
                cell_text(entry, seats, swap, played_by(entry, column, players)),
                users.get(column, ""),
            )
            for column, entry in enumerate(row)
        ]
        for row in record_rows(board.moves, seats, swapped)
    ]


def clock_rows(
    board: Board, settings: Settings, now: datetime, current: Position
) -> list[tuple[str, str]]:
    """The clock's rows; ``current``: the position now (the page may show an older one)."""

    def fmt(t: datetime) -> str:
        return t.strftime("%Y-%m-%d %H:%M UTC")

    rows = [("Started", fmt(board.created))]
    if records.recorded_plies(board):  # (as the board mail: a new board has none)
        rows.append(("Last move", fmt(board.last_move_at)))
    if board.finished_at:
        rows.append(("Finished", fmt(board.finished_at)))
    elif board.status is BoardStatus.active:
        waited = max(0.0, (now - board.last_move_at).total_seconds())
        rows.append(("Waiting for", format_days(waited)))
        defaults = (settings.nag_days, settings.forfeit_days)
        found = due(board, current, defaults)  # the dates the clock keeps, as a mail shows
        if found is not None and found.reminder is not None:
            rows.append(("Reminder after", fmt(found.reminder)))
        if found is not None:
            rows.append(("Forfeit after", fmt(found.forfeit)))
    if total_days := clock_days(board.options.get("totaltime")):
        total = format_days(total_days * 86400)
        for s in board.seats:
            rows.append((f"Time used by {s.user.userid}", f"{format_days(s.time_used)} of {total}"))
    return rows


def board_page(
    session: Session,
    settings: Settings,
    game_name: str,
    number: int,
    ply: int | None,
    now: datetime,
) -> BoardPage:
    game = game_or_404(game_name)
    board = stored_board(session, game, number)
    plies = len(board.moves)
    shown = plies if ply is None else ply
    if not 0 <= shown <= plies:
        moves = "1 move" if plies == 1 else f"{plies} moves"
        raise NotFound(f"{game.display_name} board {number} has no move {ply}: it has {moves}.")
    position = replay(board, shown)
    infos = position.seats()
    controller = None if position.to_move is None else position.controller(position.to_move)
    swapped = had_swap(board)
    # a swap exchanged the seats of its two players: before it each held the other's
    holders = board.seats[::-1] if swapped and shown < SWAP_PLY else list(board.seats)
    players = [
        PlayerRow(
            seat=seat,
            label=infos[seat].label,
            named=infos[seat].named(),
            userid=s.user.userid,
            note=infos[seat].note,
            in_play=infos[seat].in_play,
            to_move=controller == seat and board.status is BoardStatus.active,
            time_used=format_days(s.time_used or 0.0),
        )
        for seat, s in enumerate(holders)
    ]
    name = str(board.options.get("tournament") or "")
    live = shown == plies or board.status is not BoardStatus.active
    current = position if live else replay(board)  # the clock's dates are of the board now
    return BoardPage(
        board=board,
        game=game,
        heading=board_title(board, game),
        ply=shown,
        plies=plies,
        position=position,
        status=status_line(board, position, shown),
        players=players,
        columns=[
            f"{board.seats[i].user.userid} ({label})"
            for i, label in zip(_columns(board), column_labels(infos, swapped), strict=True)
        ],
        move_rows=move_rows(board, position),
        comments=[(c.ply, c.user.userid, c.text, c.at) for c in board.comments],
        clock=clock_rows(board, settings, now, current),
        tournament=name or None,
        tournament_page=_tournament_of(session, name),
        over=shown == plies and board.status is not BoardStatus.active,
        proposal=_proposal(session, board, current),
    )


def _proposal(session: Session, board: Board, current: Position) -> str:
    """The open draw or undo proposal of ``board`` as its mails tell every reader (what it
    does, who accepted, who has still to answer, how it passes): the page of a board whose
    players were voting on one said nothing of it."""
    vote = open_vote(session, board, current)
    return "" if vote is None else vote.status()


# ----------------------------------------------------------------------------- lists


@dataclass
class BoardRow:
    game: Game
    number: int
    players: list[str]
    moves: int
    last_move_at: datetime
    status: str  # "alice to move", "won by bob", "tie", "drawn by carol and dave"


LIST_LOADS = (selectinload(Board.seats).selectinload(Seat.user),)


def _rows(session: Session, boards: Iterable[Board]) -> list[BoardRow]:
    """The list rows of ``boards``: their records are counted in one query, never loaded (a
    list of long games would otherwise read every move of every board)."""
    boards = list(boards)
    plies = records.plies_of(session, boards)
    return [_row(board, plies[board.id]) for board in boards]


def _row(board: Board, plies: int) -> BoardRow:
    game = get_game(board.game)
    users = [s.user.userid for s in board.seats]
    if board.status is BoardStatus.finished:
        status = short_result(board)
    else:  # who must act now, kept with the cached position (the partner of an absorbed seat)
        mover = next((s.user.userid for s in board.seats if s.user_id == board.to_move_id), None)
        status = "" if mover is None else f"{mover} to move"
    return BoardRow(game, board.number, users, plies, board.last_move_at, status)


def board_lists(session: Session, game: Game | None) -> tuple[list[BoardRow], list[BoardRow]]:
    """Active and finished boards (of one game, or all), the most recently moved first."""
    out: tuple[list[BoardRow], list[BoardRow]] = ([], [])
    for status, rows in zip((BoardStatus.active, BoardStatus.finished), out, strict=True):
        query = select(Board).options(*LIST_LOADS).where(Board.status == status)
        if game is not None:
            query = query.where(Board.game == game.name)
        query = query.order_by(Board.last_move_at.desc(), Board.id.desc()).limit(LIST_LIMIT)
        rows.extend(_rows(session, session.scalars(query)))
    return out


# ----------------------------------------------------------------------------- players


@dataclass
class PlayerPage:
    userid: str
    since: datetime
    robot: str | None
    closed: bool
    ratings: list[Rating]
    active: list[BoardRow]
    finished: list[BoardRow]
    tournaments: list[Tournament] = field(default_factory=list)

    def title(self, game: str) -> str:
        """A game's name as the mails and the other pages write it (``Pylon``, not ``pylon``)."""
        return _title(game)


def _title(game: str) -> str:
    try:
        return get_game(game).display_name
    except (KeyError, ValueError):  # a game this server no longer runs
        return game


def player_page(session: Session, userid: str) -> PlayerPage:
    """A player's page.  An account signed up by mail that has confirmed no address yet has
    none: anyone may mail a signup under any userid and address, and until its owner answers
    it is nobody's (it is removed in time), so it reads as no player at all."""
    user = session.scalar(select(User).where(User.userid == userid.strip().lower()))
    if user is None or awaiting_confirmation(user):
        raise NotFound(f"There is no player {shown_name(userid)!r}.")
    robot = session.get(Robot, user.id)
    ratings = list(
        session.scalars(select(Rating).where(Rating.user_id == user.id).order_by(Rating.game))
    )
    boards = list(
        session.scalars(
            select(Board)
            .options(*LIST_LOADS)
            .join(Seat, Seat.board_id == Board.id)
            .where(Seat.user_id == user.id, Board.status != BoardStatus.removed)
            .order_by(Board.last_move_at.desc(), Board.id.desc())
            .limit(LIST_LIMIT)
        ).unique()
    )
    rows = list(zip((b.status for b in boards), _rows(session, boards), strict=True))
    tournaments = session.scalars(
        select(Tournament)
        .join(TournamentPlayer, TournamentPlayer.tournament_id == Tournament.id)
        .where(TournamentPlayer.user_id == user.id)
        .order_by(Tournament.id)
    )
    return PlayerPage(
        userid=user.userid,
        since=user.created,
        robot=None if robot is None else f"{_title(robot.game)} robot, level {robot.level}",
        closed=user.closed,
        ratings=ratings,
        active=[r for s, r in rows if s is BoardStatus.active],
        finished=[r for s, r in rows if s is BoardStatus.finished],
        tournaments=list(tournaments),
    )


# ----------------------------------------------------------------------------- tournaments


@dataclass
class Pairing:
    name: str
    board: BoardRow | None
    first: str
    second: str | None
    result: str


@dataclass
class TournamentPage:
    tournament: Tournament
    description: str
    game: Game
    standings: list[Any]
    rounds: list[tuple[int, list[Pairing]]]
    winner: str | None = None  # once finished: the first of the standings, the last left


RESULTS = {"1-0": "1-0", "0-1": "0-1", "1/2": "1/2-1/2", "bye": "bye"}


def tournament_list(session: Session) -> list[tuple[Tournament, str]]:
    found = session.scalars(select(Tournament).order_by(Tournament.id.desc()))
    return [(t, describe(t)) for t in found]


def tournament_page(session: Session, name: str) -> TournamentPage:
    tournament = session.scalar(select(Tournament).where(Tournament.name == name.lower()))
    number = whole_number(name[1:])
    if tournament is None and name[:1] in "tT" and number is not None:
        tournament = session.get(Tournament, number)
    if tournament is None:
        raise NotFound(f"There is no tournament {shown_name(name)!r}.")
    names = {p.user_id: p.user.userid for p in tournament.players}
    rounds: dict[int, list[Pairing]] = {}
    played = [g.board for g in tournament.games if g.board is not None]
    rows = {board.id: row for board, row in zip(played, _rows(session, played), strict=True)}
    for g in tournament.games:
        row = None if g.board is None else rows[g.board.id]
        result = RESULTS.get(g.result or "", g.result or ("playing" if g.board else ""))
        if g.board is None and g.second_id is not None:  # a withdrawn player's, not played
            result += " forfeit"
        rounds.setdefault(g.round, []).append(
            Pairing(
                name=board_name(tournament.id, g.round, g.number),
                board=row,
                first=names.get(g.first_id, "?"),
                second=None if g.second_id is None else names.get(g.second_id, "?"),
                result=result,
            )
        )
    return TournamentPage(
        tournament=tournament,
        description=describe(tournament),
        game=get_game(tournament.game),
        standings=standings(tournament),
        rounds=sorted(rounds.items()),
        winner=winner(tournament) if tournament.status == "finished" else None,
    )

"""Mail texts: the board mail of the pbmserv layout, game lists and plain answers.

Third-party tools parse these mails, so the layout is kept stable: heading, status notes, whose
turn, the move list in columns (one per seat), the board, players, the comment, the clock block.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from pbmserv.games import get_game
from pbmserv.games.base import FORFEIT, RESIGN, SWAP, Game, Position, SeatInfo
from pbmserv.numbers import clock_days
from pbmserv.render import subjects
from pbmserv.render.links import board_link
from pbmserv.render.results import ending, named_result
from pbmserv.render.templates import fill, render, render_board
from pbmserv.store import records
from pbmserv.store.models import Board, BoardStatus, SubscriptionKind, User
from pbmserv.store.records import Entry

MOVE_MAIL_ROUNDS = 4
COLUMN_WIDTH = 14
MAIL_WIDTH = 76
SWAP_TEXT = SWAP.word  # how the record writes a swap


def board_key(board: Board) -> str:
    """``Polis board 101``: how one mail's answer knows that two sections draw one board."""
    return f"{game_name(board)} board {board.number}"


def game_name(board: Board) -> str:
    return get_game(board.game).display_name


def format_days(seconds: float) -> str:
    """``3d 04h`` for a duration in seconds."""
    hours = int(seconds // 3600)
    return f"{hours // 24}d {hours % 24:02d}h"


def changes_line(board: Board) -> str:
    """``Rating changes: alice 1600 -> 1616, bob 1600 -> 1584`` (empty when unrated)."""
    if not board.rating_changes:
        return ""
    parts = [f"{userid} {old} -> {new}" for userid, old, new in board.rating_changes]
    lines = ["Rating changes:"]
    for i, part in enumerate(parts):
        part += "," if i < len(parts) - 1 else ""
        if len(lines[-1]) + 1 + len(part) > 72:
            lines.append(" ")
        lines[-1] += " " + part
    return "\n".join(lines)


def turn_line(board: Board, position: Position, *, told: bool = False) -> str:
    """Whose turn it is, or the result and why the game ended (unless ``told``: the notes
    above it already say, see :func:`ending_told`)."""
    if board.status is BoardStatus.removed:
        return "The game was removed."
    if board.status is BoardStatus.finished:
        why = f" ({named_result(board, position)})" if board.result and not told else ""
        return textwrap.fill(ending(board) + why, MAIL_WIDTH)
    user = board.user_to_move(position)
    if user is None or position.to_move is None:
        return ""
    label = position.seats()[position.to_move].label
    return f"To move: {user.userid} ({label})."


def ending_told(board: Board, notes: Sequence[str], newest: Entry | None) -> bool:
    """Whether a mail's status notes already tell how the game ended: it ended with the
    resignation or forfeit (``newest``, the record's last entry) that every such mail reports
    in a note ("bob resigned.", "bob forfeits: out of time ...")."""
    return (
        bool(notes)
        and board.status is BoardStatus.finished
        and newest is not None
        and newest.text in (RESIGN.word, FORFEIT.word)
    )


def subject_user(board: Board, position: Position) -> str:
    """The userid at the end of a board subject: the player to move, empty once over."""
    user = board.user_to_move(position)
    return user.userid if user else ""


def board_subject(board: Board, position: Position, *, new: bool = False) -> str:
    shape = subjects.NEW_BOARD if new else subjects.BOARD
    return shape(game=game_name(board), board=board.number, what=subject_user(board, position))


def record_rows(
    entries: Sequence[Entry], seats: int, swapped: bool = False
) -> list[list[Entry | None]]:
    """The record as rows of one column per player, each entry under the player who made it,
    the columns in :func:`column_seats` order; a new row starts when the column order wraps.

    A swap (the second move, two players) exchanged the players' seats: the columns then stay
    with the players in the order they first moved, so the first move and the swap share the
    first row, and the rows run on in step (the first player, now in the second seat, moves
    next).  ``swapped``: the game had a swap (``entries`` may be the newest ones only).
    """
    swapped = swapped or any(is_swap(entry, seats) for entry in entries)
    order = column_seats(swapped, seats)
    rows: list[list[Entry | None]] = []
    last = seats
    for entry in entries:
        column = entry.seat if swapped and entry.ply <= 2 else order.index(entry.seat)
        if column <= last:
            rows.append([None] * seats)
        rows[-1][column] = entry
        last = column
    return rows


def column_seats(swapped: bool, seats: int) -> list[int]:
    """The seat (as it is now) of each column's player: the seats in order, the two exchanged
    after a swap (the player who moved first keeps the first column)."""
    return [1, 0] if swapped and seats == 2 else list(range(seats))


def column_labels(infos: Sequence[SeatInfo], swapped: bool) -> list[str]:
    """The colour (label) of each column's player as its header shows it: after a swap the
    player of the first column made the first move with the first seat's colour, then took the
    second seat's (``o, then x``); the swapper's column has the colour he took over."""
    labels = [infos[seat].label for seat in column_seats(swapped, len(infos))]
    if swapped and len(infos) == 2:
        labels[0] = f"{infos[0].label}, then {infos[1].label}"
    return labels


def cell_text(entry: Entry, seats: int, swap: str = SWAP_TEXT, by: str | None = None) -> str:
    """An entry's cell without its number: the move, ``(Auto)`` when the server entered it
    (a queued move, a forced pass; not a forfeit, which only the server enters) and ``by``,
    who made it when not the player of its column (``f7+1 (carol)``: a partner playing an
    absorbed seat's turn)."""
    text = swap if is_swap(entry, seats) else entry.text
    marks = ["Auto"] if entry.auto and entry.text != FORFEIT.word else []
    if by:
        marks.append(by)
    return text + (f" ({', '.join(marks)})" if marks else "")


def played_by(entry: Entry, column: int, players: Sequence[tuple[int, str]]) -> str | None:
    """The userid of whoever made ``entry`` if it is not the player of its ``column``
    (``players``: each seat's user id and userid, in seat order)."""
    if entry.user_id is None or column >= len(players) or players[column][0] == entry.user_id:
        return None
    return next((name for uid, name in players if uid == entry.user_id), None)


def move_rows(
    moves: Sequence[Entry],
    seats: int,
    swap: str = SWAP_TEXT,
    players: Sequence[tuple[int, str]] = (),
    swapped: bool = False,
) -> list[list[str]]:
    """The record as rows of one cell per seat (:func:`record_rows`); ``swap`` is the text of
    a swap's cell (what it did); ``players`` (each seat's user id and the name to show) mark
    a move made by another than the column's player (:func:`played_by`).

    Every entry carries its move number (``7. d7-e6``), the number a player puts after ``#``.
    A seat passed over inside a row (eliminated, resigned) shows ``--``; the cells before the
    first move of the game are blank, and so are the cells after the newest entry (their turn is still to come).
    """
    rows = record_rows(moves, seats, swapped)
    out = [
        [
            ""
            if entry is None
            else f"{entry.ply}. "
            + cell_text(entry, seats, swap, played_by(entry, column, players) if players else None)
            for column, entry in enumerate(row)
        ]
        for row in rows
    ]
    for row, cells in zip(rows, out, strict=True):
        first = next(entry for entry in row if entry is not None)
        start = row.index(first)
        for i, entry in enumerate(row):
            if entry is None and (i > start or first.ply != 1):
                cells[i] = "--"
    if rows:
        newest = max(i for i, entry in enumerate(rows[-1]) if entry is not None)
        for i in range(newest + 1, seats):
            out[-1][i] = ""
    return out


def is_swap(entry: Entry, seats: int) -> bool:
    """Whether ``entry`` is a swap (pie rule): the second move of a two-player game."""
    return seats == 2 and entry.ply == 2 and entry.text == SWAP_TEXT


def swap_cell(board: Board, position: Position, width: int = MAIL_WIDTH) -> str:
    """What a swap did, for its cell: ``swap (bob takes over o)`` (the swapper now holds the
    first seat); without the name when that would not fit two columns in ``width``."""
    label = position.seats()[0].label
    text = f"{SWAP_TEXT} ({board.seats[0].user.userid} takes over {label})"
    if len(f"2. {text}") + 2 > (width - 2) // 2:
        text = f"{SWAP_TEXT} (takes over {label})"
    return text


def move_list(
    board: Board,
    position: Position,
    entries: Sequence[Entry],
    rounds: int | None,
    swapped: bool = False,
) -> list[str]:
    """The move list in columns, one per seat, headed by the players' names (never cut):
    every row of ``entries`` (the record), or the last ``rounds`` of them (``entries`` may
    then be the newest ``rounds`` × seats + 1 entries only: a row holds at most one entry per
    seat and starts where the column order wraps, so those rows come out as from the whole);
    ``swapped``: the game had a swap that ``entries`` and ``position`` may not show yet (an
    earlier position's record)."""
    seats = len(board.seats)
    infos = position.seats()
    swap = swap_cell(board, position) if seats == 2 else SWAP_TEXT
    swapped = swapped or position.swapped or any(is_swap(entry, seats) for entry in entries)
    columns = [board.seats[i] for i in column_seats(swapped, seats)]
    players = [(s.user_id, s.user.userid) for s in columns]
    rows = move_rows(entries, seats, swap, players, swapped)
    if any(len(c) + 2 > (MAIL_WIDTH - 2) // seats for row in rows for c in row):
        # a move made for another seat names its player by his seat's symbol where the name
        # would not fit the columns (the players' list under the board says who is who)
        players = [(s.user_id, infos[s.index].symbol) for s in columns]
        rows = move_rows(entries, seats, swap, players, swapped)
    start = 0 if rounds is None else max(0, len(rows) - rounds)
    heads = column_labels(infos, swapped)
    names = [f"{s.user.userid} ({label})" for s, label in zip(columns, heads, strict=True)]
    cells = [c for row in rows[start:] for c in row]
    width = max([COLUMN_WIDTH, *(len(c) + 2 for c in cells), *(len(n) + 2 for n in names)])
    if 2 + seats * width > MAIL_WIDTH:  # long names: userids on one line, colours below
        labels = [f"({label})" for label in heads]
        names = [s.user.userid for s in columns]
        width = max([COLUMN_WIDTH, *(len(c) + 2 for c in cells), *(len(n) + 2 for n in names)])
        width = max(width, *(len(x) + 2 for x in labels))
        head = ["".join(f"{n:<{width}}" for n in names), "".join(f"{x:<{width}}" for x in labels)]
    else:
        head = ["".join(f"{n:<{width}}" for n in names)]
    lines = [("  " + line).rstrip() for line in head]
    for row in rows[start:]:
        lines.append(("  " + "".join(f"{c:<{width}}" for c in row)).rstrip())
    return lines


@dataclass(frozen=True)
class OpenVote:
    """An open proposal (``draw`` or ``undo``) and the users who have still to answer it
    (``waiting``: their mails give them the lines to accept or reject it); every mail about
    it says what it does and who has answered (userids in seat order)."""

    kind: str
    waiting: frozenset[int]
    number: int = 1  # its number on the board: the #N of the answers
    what: str = ""  # "a draw", "to take back move 5 (a1, bob)"
    accepted: tuple[str, ...] = ()
    waiting_names: tuple[str, ...] = ()

    def status(self) -> str:
        """The paragraph every reader of a mail about the proposal gets."""
        accepted = ", ".join(self.accepted) or "nobody"
        lines = (
            f"Proposal #{self.number} is open: {self.what}.",
            f"Accepted: {accepted}. Still to answer: {', '.join(self.waiting_names)}.",
            "It passes when every player still in the game accepts it; a reject or any "
            "move closes it.",
        )
        return "\n".join(textwrap.fill(line, MAIL_WIDTH) for line in lines)


def reply_line(
    board: Board,
    position: Position,
    reader: User | None,
    vote: OpenVote | None = None,
    channel: str = "mail",
) -> str:
    """The exact lines ``reader`` sends back ('' when he has nothing to send): his move (and
    the swap, while the pie rule allows it) when he is to move, ``accept`` or ``reject`` when
    he has still to answer the open proposal ``vote`` (whose state every reader is told).
    ``channel``: the answer's; a shell's says to run the lines (``templates/mail/reply.txt.j2``)."""
    if reader is None:
        return ""
    mover = board.user_to_move(position)
    to_move = mover is not None and mover.id == reader.id
    offer = ""
    if to_move and position.swap_available():  # the pie rule: the second player's first move
        first, second = (info.label for info in position.seats()[:2])
        offer = textwrap.fill(
            f"Or swap (pie rule, this move only): you take over {first}, "
            f"{board.seats[0].user.userid} moves next as {second}:",
            MAIL_WIDTH,
        )
    return render(
        "mail/reply.txt.j2",
        channel=channel,
        command=f"{board.game} move {board.number} {reader.userid} PASSWORD",
        vote=vote.status() if vote is not None else "",
        answers=vote.number if vote is not None and reader.id in vote.waiting else 0,
        number=position.ply + 1 if to_move else 0,
        offer=offer,
    )


def _player_line(info: SeatInfo, userid: str) -> str:
    line = f"{info.named():<12} {userid}"
    if info.note:
        line += f"  ({info.note})"
    elif not info.in_play:
        line += "  (out)"
    return line


@dataclass(frozen=True)
class Due:
    """What the clock does next on a board unless the player to move moves: a reminder
    (None when the forfeit comes first) and the forfeit (:mod:`pbmserv.domain.deadlines`)."""

    reminder: datetime | None
    forfeit: datetime


def clock_lines(board: Board, due: Due | None = None) -> list[str]:
    """The clock block; with ``due``, when the player to move is reminded and forfeits (the
    dates the web page shows, so that a player by mail knows them too)."""

    def fmt(t: datetime) -> str:
        return t.strftime("%Y-%m-%d %H:%M UTC")

    lines = [f"Started:   {fmt(board.created)}"]
    if records.recorded_plies(board):  # (a new board's "last move" was its making)
        lines.append(f"Last move: {fmt(board.last_move_at)}")
    if board.finished_at:
        lines.append(f"Finished:  {fmt(board.finished_at)}")
    if total := clock_days(board.options.get("totaltime")):  # (one the clocks can use)
        used = ", ".join(f"{s.user.userid} {format_days(s.time_used or 0.0)}" for s in board.seats)
        lines.append(f"Time used: {used} (of {format_days(total * 86400)})")
    if due is not None:
        if due.reminder is not None:
            lines.append(f"Reminder:  {fmt(due.reminder)} (if no move by then)")
        lines.append(f"Forfeit:   {fmt(due.forfeit)} (if no move by then)")
    return lines


def board_mail_body(
    board: Board,
    position: Position,
    *,
    notes: list[str] = (),  # type: ignore[assignment]
    all_moves: bool = False,
    with_comment: bool = False,
    at_ply: int | None = None,
    said: Sequence[tuple[str, str]] | None = None,
    due: Due | None = None,
) -> str:
    """The full board mail of the pbmserv layout; ``with_comment`` shows what was written with
    the newest move a player made and with the queued moves and resignations it set off.

    ``said``: (userid, text) pairs shown instead of the newest move's comments: what was
    written with the command this mail answers when it was not a move (a proposal, a vote, a
    decline), or every comment a digest or "once" reader has not had yet.  ``due``: the
    clock's next reminder and forfeit, shown in the clock block."""
    game = get_game(board.game)
    rounds = None if all_moves else MOVE_MAIL_ROUNDS
    entries: Sequence[Entry]
    if rounds is None:  # (an earlier position: the record up to it, as then)
        entries = list(board.moves)[:at_ply]
    else:  # a long game's record stays unread
        entries = records.newest_moves(board, rounds * len(board.seats) + 1)
    comments: list[tuple[str, str]] = list(said or [])
    if with_comment and said is None:  # the comments of the newest move a player made
        ply = _newest_players_ply(board, entries)
        comments = [] if ply is None else records.comments_after(board, ply - 1, at_ply)
    return render(
        "mail/board.txt.j2",
        heading=fill(f"Summary of {board_title(board, game)}"),
        notes=[fill(note) for note in notes],
        turn=turn_line(
            board, position, told=ending_told(board, notes, entries[-1] if entries else None)
        )
        if at_ply is None
        else f"Position after move {at_ply} of {len(board.moves)}.",
        # (an earlier position's record may end before the swap: the columns are the board's)
        moves=move_list(board, position, entries, rounds, at_ply is not None and had_swap(board)),
        board=render_board(position, over=board.status is not BoardStatus.active),
        players=[
            _player_line(info, board.seats[i].user.userid)
            for i, info in enumerate(position.seats())
        ],
        comments=comments,
        ratings=changes_line(board) if board.status is BoardStatus.finished else "",
        subscribers=[
            s.user.userid + (" (result only)" if s.kind == SubscriptionKind.result else "")
            for s in board.subscriptions
        ],
        clock=clock_lines(board, due),
        link=board_link(board),
    )


def had_swap(board: Board) -> bool:
    """Whether the board's record holds a swap (its move list's columns follow it)."""
    return any(is_swap(entry, len(board.seats)) for entry in board.moves)


def format_options(options: Mapping[str, object]) -> str:
    """``--forfeittime=5 --nagtime=1.5 --unrated``: the server options as a player writes
    them (days are stored as floats, ``5.0`` is not what he wrote; a flag is stored as True,
    ``--unrated=True`` is not either).

    >>> format_options({"unrated": True, "nagtime": 1.5, "forfeittime": 5.0})
    '--forfeittime=5 --nagtime=1.5 --unrated'
    """

    def option(name: str, value: object) -> str:
        if value is True:
            return f"--{name}"
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return f"--{name}={value}"

    return " ".join(option(k, v) for k, v in sorted(options.items()) if v is not False)


def board_title(board: Board, game: Game) -> str:
    """``Ploy Board 101 (-size=4 --unrated)``: the game, the number, the parameters and options
    as written; the heading of the board's mails (after "Summary of") and of its web page."""
    params = " ".join(game.format_params(board.params))
    suffix = " ".join(x for x in (params, format_options(board.options)) if x)
    return f"{game.display_name} Board {board.number}" + (f" ({suffix})" if suffix else "")


def _newest_players_ply(board: Board, recent: Sequence[Entry]) -> int | None:
    """The ply of the newest move a player made (not a forced pass or a queued move), looked
    for in the ``recent`` entries first."""
    found = next((m.ply for m in reversed(recent) if not m.auto), None)
    if found is None and len(recent) < records.recorded_plies(board):  # only automatic ones
        found = next((m.ply for m in reversed(board.moves) if not m.auto), None)
    return found


def reply_tail(
    board: Board, position: Position, vote: OpenVote | None = None
) -> Callable[[User | None], str]:
    """``reply_line`` for a board, as the per-reader tail of its notifications."""
    return lambda reader: reply_line(board, position, reader, vote)

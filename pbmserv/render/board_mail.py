"""Mail texts: the board mail of the pbmserv layout, game lists and plain answers.

Third-party tools parse these mails, so the layout is kept stable: heading, status notes, whose
turn, the move list in columns (one per seat), the board, players, the comment, the clock block.
"""

from __future__ import annotations

from datetime import datetime

from pbmserv.games import get_game
from pbmserv.games.base import Position, SeatInfo
from pbmserv.render.links import board_link
from pbmserv.render.templates import render, render_board
from pbmserv.store.models import Board, BoardStatus, MoveRecord, SubscriptionKind

MOVE_MAIL_ROUNDS = 4
COLUMN_WIDTH = 14


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


def turn_line(board: Board, position: Position) -> str:
    if board.status is BoardStatus.removed:
        return "The game was removed."
    if board.status is BoardStatus.finished:
        winners = board.winners or []
        if not winners:
            return "Game was a tie." + (f" ({board.result})" if board.result else "")
        names = " and ".join(board.seats[w].user.userid for w in winners)
        return f"Game won by {names}." + (f" ({board.result})" if board.result else "")
    user = board.user_to_move(position)
    return f"It is {user.userid}'s turn." if user else ""


def subject_user(board: Board, position: Position) -> str:
    """The userid at the end of a board subject: the player to move, empty once over."""
    user = board.user_to_move(position)
    return user.userid if user else ""


def board_subject(board: Board, position: Position, *, new: bool = False) -> str:
    subject = f"{'New ' if new else ''}{game_name(board)} Board {board.number} {subject_user(board, position)}"
    return subject.rstrip()


def move_rows(moves: list[MoveRecord], seats: int) -> list[list[str]]:
    """The record as rows of one cell per seat; a new row starts when the seat order wraps.

    A seat passed over inside a row (eliminated, resigned, or the seat that swapped) shows
    ``--``; the cells after the newest entry are left blank (their turn is still to come).
    """
    rows: list[list[str | None]] = []
    last = seats
    for entry in moves:
        if entry.seat <= last:
            rows.append([None] * seats)
        rows[-1][entry.seat] = entry.text + (" (Auto)" if entry.auto else "")
        last = entry.seat
    out = [[cell if cell is not None else "--" for cell in row] for row in rows]
    if out:
        for i in range(last + 1, seats):
            out[-1][i] = ""
    return out


def move_list(board: Board, position: Position, rounds: int | None) -> list[str]:
    seats = len(board.seats)
    infos = position.seats()
    width = max([COLUMN_WIDTH] + [len(m.text) + (7 if m.auto else 0) + 2 for m in board.moves])
    header = "     " + "".join(
        f"{(s.user.userid + ' (' + infos[s.index].label + ')')[: width - 1]:<{width}}"
        for s in board.seats
    )
    rows = move_rows(list(board.moves), seats)
    start = 0 if rounds is None else max(0, len(rows) - rounds)
    lines = [header.rstrip()]
    for number, row in enumerate(rows[start:], start=start + 1):
        lines.append((f"{number:3d}. " + "".join(f"{c:<{width}}" for c in row)).rstrip())
    return lines


def _player_line(info: SeatInfo, userid: str) -> str:
    label = info.symbol if info.label == info.symbol else f"{info.symbol} ({info.label})"
    line = f"{label:<12} {userid}"
    if info.note:
        line += f"  ({info.note})"
    elif not info.in_play:
        line += "  (out)"
    return line


def clock_lines(board: Board) -> list[str]:
    def fmt(t: datetime) -> str:
        return t.strftime("%Y-%m-%d %H:%M UTC")

    lines = [f"Started:   {fmt(board.created)}", f"Last move: {fmt(board.last_move_at)}"]
    if board.finished_at:
        lines.append(f"Finished:  {fmt(board.finished_at)}")
    if board.options.get("totaltime"):
        used = ", ".join(f"{s.user.userid} {format_days(s.time_used or 0.0)}" for s in board.seats)
        lines.append(f"Time used: {used} (of {format_days(board.options['totaltime'] * 86400)})")
    return lines


def board_mail_body(
    board: Board,
    position: Position,
    *,
    notes: list[str] = (),  # type: ignore[assignment]
    all_moves: bool = False,
    comment_ply: int | None = None,
    at_ply: int | None = None,
) -> str:
    """The full board mail of the pbmserv layout."""
    game = get_game(board.game)
    comments = [c for c in board.comments if comment_ply is not None and c.ply == comment_ply]
    params = " ".join(game.format_params(board.params))
    options = " ".join(f"--{k}={v}" for k, v in sorted(board.options.items()))
    return render(
        "mail/board.txt.j2",
        game=game.display_name,
        number=board.number,
        heading_suffix=f" ({' '.join(x for x in (params, options) if x)})"
        if params or options
        else "",
        notes=list(notes),
        turn=turn_line(board, position) if at_ply is None else f"Position after move {at_ply}.",
        moves=move_list(board, position, None if all_moves else MOVE_MAIL_ROUNDS),
        board=render_board(position),
        players=[
            _player_line(info, board.seats[i].user.userid)
            for i, info in enumerate(position.seats())
        ],
        comments=[(c.user.userid, c.text) for c in comments],
        ratings=changes_line(board) if board.status is BoardStatus.finished else "",
        subscribers=[
            s.user.userid + (" (result only)" if s.kind == SubscriptionKind.result else "")
            for s in board.subscriptions
        ],
        clock=clock_lines(board),
        link=board_link(board),
    )

"""The game commands that list and draw boards: show, games, history (the classic servers'
names), split from :mod:`pbmserv.commands.games`, which plays them."""

from __future__ import annotations

import click
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from pbmserv.commands.common import (
    MAX_NAMED,
    at_most,
    check_move_number,
    load_board,
    no_player,
    parse_board_number,
    reader_tail,
)
from pbmserv.commands.dispatch import Refused, Request, answer
from pbmserv.commands.spec import Call
from pbmserv.domain import accounts, boards, deadlines
from pbmserv.domain.proposals import open_vote
from pbmserv.games.base import Game
from pbmserv.render import subjects
from pbmserv.render.board_mail import board_key, board_mail_body, board_subject
from pbmserv.render.results import short_result
from pbmserv.render.templates import fill, render
from pbmserv.store.models import Board, BoardStatus, Seat


def show(call: Call) -> None:
    game, words = call.game, call.args["what"]
    if not words:
        raise click.UsageError(f"not enough arguments; usage: {call.usage}")
    if words[0][0].isdigit():
        at_most(words, "boards")
        show_boards(call, words)
        return
    filters = [w.lower() for w in words if w.lower() in ("active", "inactive", "next")]
    userids = [w for w in words if w.lower() not in ("active", "inactive", "next")]
    at_most(userids, "players")
    with call.req.sessions() as session:
        found = _select_boards(
            call.req, session, game, userids, filters[0] if filters else "active"
        )
        numbers = [str(b.number) for b in found]
    if not numbers:
        answer(
            call.ctx,
            subjects.game(game.display_name, "Boards"),
            f"No {game.display_name} boards match.\n",
        )
        return
    show_boards(call, numbers[:MAX_NAMED], _not_drawn(game, words, len(numbers)))


def _not_drawn(game: Game, words: list[str], found: int) -> str:
    """What a ``show`` of players' boards says of the boards past the first ``MAX_NAMED``."""
    if found <= MAX_NAMED:
        return ""
    return fill(
        f"{found - MAX_NAMED} more boards match; a command draws at most {MAX_NAMED}. "
        f"'{game.name} games {' '.join(words)}' lists them all."
    )


def show_boards(call: Call, words: list[str], note: str = "") -> None:
    """Draw the boards ``words`` names (``101``, ``101#5``), with ``note`` at the end."""
    game = call.game
    parts = []
    heads = []
    key: str | None = None
    with call.req.sessions() as session:
        for word in words:
            number, at = parse_board_number(word)
            board = load_board(session, game, number)
            check_move_number(board, at)
            position = boards.position_of(board) if at is None else boards.replay(board, at)
            tail, due = "", None
            if at is None:  # the lines to send back: a move, or an answer to a proposal
                vote = open_vote(session, board, position)
                tail = reader_tail(call.req, board, position, vote=vote)
                due = deadlines.due(board, position)
            parts.append(
                board_mail_body(
                    board, position, all_moves=True, at_ply=at, with_comment=True, due=due
                )
                + tail
            )
            heads.append(board_subject(board, position))
            key = board_key(board) if at is None else None
    sep = "\n" + "=" * 72 + "\n\n"
    if len(heads) == 1:
        answer(call.ctx, heads[0], parts[0], board=key, summary=f"{key} shown.")
    else:
        body = sep.join(parts) + (f"{sep}{note}\n" if note else "")
        answer(call.ctx, subjects.game(game.display_name, "Boards"), body)


MAX_LISTED = 100
"""The newest boards a ``games`` or ``history`` table lists: without a player named it read
every board of the game, records and positions, for any sender (ten times a mail)."""


def _select_boards(
    req: Request,
    session: Session,
    game: Game,
    userids: list[str],
    which: str,
    finished: bool = False,
    newest: int | None = None,
) -> list[Board]:
    """The boards of ``game`` that match, in number order; with ``newest``, only the newest
    so many of them."""
    query = (
        select(Board)
        .where(Board.game == game.name)
        .options(selectinload(Board.seats).selectinload(Seat.user))
        .order_by(Board.number.desc() if newest else Board.number)
    )
    if newest:
        query = query.limit(newest)
    if finished or which == "inactive":
        query = query.where(Board.status == BoardStatus.finished)
    elif which in ("active", "next"):
        query = query.where(Board.status == BoardStatus.active)
    users = []
    for position, userid in enumerate(userids, 1):
        found = accounts.find_user(session, userid)
        if found is None:
            raise Refused(no_player(req, userid, position))
        users.append(found)
        query = query.where(Board.id.in_(select(Seat.board_id).where(Seat.user_id == found.id)))
    boards_found = list(session.scalars(query).unique())
    if newest:
        boards_found.reverse()
    if which == "next":
        ids = {u.id for u in users}
        boards_found = [
            b
            for b in boards_found
            if (mover := boards.user_to_move(b, boards.position_of(b))) is not None
            and (not ids or mover.id in ids)
        ]
    return boards_found


def games_table(call: Call, game: Game, words: list[str], *, finished: bool = False) -> str:
    filters = [w.lower() for w in words if w.lower() in ("active", "inactive", "next", "all")]
    userids = [w for w in words if w.lower() not in ("active", "inactive", "next", "all")]
    at_most(userids, "players")
    which = filters[0] if filters else ("inactive" if finished else "all")
    with call.req.sessions() as session:
        rows = []
        found = _select_boards(
            call.req, session, game, userids, which, finished, newest=MAX_LISTED + 1
        )
        older = len(found) > MAX_LISTED
        for board in found[-MAX_LISTED:]:
            moves = len(board.moves)  # a game on: the move due (its #N); a game over: its moves
            if board.status is BoardStatus.active:  # (a removed board cannot be replayed)
                mover = boards.user_to_move(board, boards.position_of(board))
                status = f"{mover.userid} to move" if mover else "waiting"
                moves += 1
            elif board.status is BoardStatus.finished:
                status = short_result(board, joiner=", ")
            else:  # removed
                status = board.status.value
            rows.append(
                (
                    board.number,
                    moves,
                    " ".join(s.user.userid for s in board.seats),
                    status,
                )
            )
    note = (
        f"Only the newest {MAX_LISTED} boards are listed; name players to see theirs."
        if older
        else ""
    )
    return render("mail/games.txt.j2", game=game.display_name, rows=rows, note=fill(note))


def games(call: Call) -> None:
    game = call.game
    answer(
        call.ctx,
        subjects.GAME_LIST(game=game.display_name),
        games_table(call, game, call.args["filters"]),
    )


def history(call: Call) -> None:
    game = call.game
    body = games_table(call, game, call.args["userids"], finished=True)
    answer(call.ctx, subjects.game(game.display_name, "History"), body)

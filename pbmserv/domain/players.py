"""Who is still in a game: whether a player has a turn of his own, who plays it when he is
out, and who is out of a game that goes on without him (his mails: the result only)."""

from __future__ import annotations

from pbmserv.games.base import Position
from pbmserv.store.models import Board, BoardStatus, User


def out_of_play(board: Board, position: Position, user: User) -> str | None:
    """Why ``user`` has no turn of his own any more (his seats are all out: eliminated,
    absorbed), naming who plays his seat's turns if someone does; None while he plays on."""
    infos = position.seats()
    mine = [s.index for s in board.seats if s.user_id == user.id]
    if not mine or any(infos[i].in_play for i in mine):
        return None
    seat = mine[0]
    label, note = infos[seat].label, infos[seat].note
    why = f"{user.userid} ({label}) is out of the game" + (f" ({note})" if note else "")
    actor = position.controller(seat)
    if actor != seat and board.seats[actor].user_id != user.id:
        who = board.seats[actor].user.userid
        why += f": {who} ({infos[actor].label}) plays {label}'s turns"
    return why


def gone_users(board: Board, position: Position) -> set[int]:
    """The players out of a game that goes on without them: every seat of theirs resigned,
    forfeited or eliminated, and no partner of theirs still in (a partnership player whose
    partner plays on still wins or loses with him).  They get its result, not every move
    (:func:`pbmserv.domain.mailmodes.admit`)."""
    if board.status is not BoardStatus.active:
        return set()
    infos = position.seats()
    in_game = set(position.live_seats()) - position.resigned
    teams_in = {infos[s].team for s in in_game if infos[s].team is not None}
    keep = {board.seats[s].user_id for s in in_game}
    keep |= {
        board.seats[i].user_id
        for i, info in enumerate(infos)
        if info.team is not None and info.team in teams_in
    }
    return {seat.user_id for seat in board.seats} - keep


def not_your_turn(board: Board, position: Position, user: User) -> str:
    """Why a move of ``user`` is refused out of turn: whose turn it is, or that he is out."""
    out = out_of_play(board, position, user)
    if out is not None:
        return out
    mover = board.user_to_move(position)
    return f"it is not your turn: {mover.userid if mover else 'nobody'} is to move"

"""A player's leaving a tournament: before its start he just leaves; once it runs he
withdraws, and each running game of his ends at once as his loss.

What a withdrawal sets off beyond the mails of the games it ended (when it ended the last game
of the round: the next round, the replays or the final standings, with their mails) is the
caller's last step, as after a move (:func:`pbmserv.domain.moves.follow_up` of each board in
:attr:`Withdrawal.ended`): the outbox is sent in order, and by mail the withdrawing player's
answer came after the next round's mails, which the withdrawal had paired inside itself.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbmserv.domain import boards, notify
from pbmserv.domain.tournament_text import board_name
from pbmserv.domain.tournaments import TournamentError, advance, record_result
from pbmserv.games import get_game
from pbmserv.render.results import names, winners
from pbmserv.store.models import (
    Board,
    BoardStatus,
    Tournament,
    TournamentGame,
    TournamentPlayer,
    TournamentStatus,
    User,
)


class Withdrawal(NamedTuple):
    """What a withdrawal did: the notes of the player's answer (one per game ended), and the
    boards it ended, which the caller follows up once their mails and the answer are queued."""

    notes: list[str]
    ended: list[Board]


def leave_all(session: Session, user: User, now: datetime) -> list[str]:
    """A player who closes his account (he has no running game) leaves every tournament he
    is still in: an open one drops his entry, a running one takes his withdrawal.  Left
    entered, he was paired at the start and later rounds, and his opponents waited a week
    for the clock to forfeit a player who gets no mail.  Returns what each says."""
    rows = session.scalars(
        select(Tournament)
        .join(TournamentPlayer, TournamentPlayer.tournament_id == Tournament.id)
        .where(
            TournamentPlayer.user_id == user.id,
            TournamentPlayer.withdrawn.is_(False),
            Tournament.status != TournamentStatus.finished,
        )
        .order_by(Tournament.id)
    ).all()
    said = []
    for tournament in rows:
        left = withdraw(session, tournament, user, now)
        for board in left.ended:  # (none: signoff refuses a player with a running game)
            advance(session, board, now)
        said.append(left.notes[0])
    return said


def withdraw(
    session: Session, tournament: Tournament, user: User, now: datetime, comment: str = ""
) -> Withdrawal:
    """Take ``user`` out; before the start he just leaves.  Each running game of his ends at
    once as his loss, whoever is to move: a game left running could still be won by him (on
    his opponent's forfeit).  ``comment`` goes to his opponents with the boards."""
    player = next((p for p in tournament.players if p.user_id == user.id), None)
    if player is None:
        raise TournamentError(f"{user.userid} does not play in tournament {tournament.name}")
    if player.withdrawn:  # he did play: saying he does not would deny his own games
        raise TournamentError(
            f"{user.userid} has already withdrawn from tournament {tournament.name}"
        )
    if tournament.status == TournamentStatus.open:
        tournament.players.remove(player)
        session.flush()
        return Withdrawal([f"{user.userid} has left tournament {tournament.name}."], [])
    if tournament.status == TournamentStatus.finished:
        raise TournamentError(f"tournament {tournament.name} is over")
    player.withdrawn = True
    notes = [f"{user.userid} withdraws from tournament {tournament.name}."]
    ended = []
    for row in list(tournament.games):
        board = row.board
        if board is None or board.status is not BoardStatus.active:
            continue
        if user.id in (row.first_id, row.second_id):
            notes.append(_end_game(session, tournament, row, board, user, comment, now))
            ended.append(board)
    if not ended:
        nobody = " His comment goes to nobody." if comment.strip() else ""
        notes.append(f"No game of his was running.{nobody}")
    session.flush()
    return Withdrawal(notes, ended)


def _end_game(
    session: Session,
    tournament: Tournament,
    row: TournamentGame,
    board: Board,
    user: User,
    comment: str,
    now: datetime,
) -> str:
    """End the running game ``board`` of ``user``, who withdraws, as his loss, take its
    result and mail it with his ``comment``; the note of his answer.  On his turn he resigns
    (as ``resign`` would); otherwise the board ends without a move, as a draw by agreement
    does."""
    position = boards.position_of(board)
    left = f"{user.userid} withdrew from tournament {tournament.name}"
    mover = boards.user_to_move(board, position)
    said: list[tuple[str, str]] | None = None
    if mover is not None and mover.id == user.id:
        played = boards.play_move(
            session, board, position, user, "resign", now=now, source="withdraw", comment=comment
        )
        position, notes, out = played.position, [*played.notes, f"{left}."], played.out
        how = "He resigned on"
    else:
        others = [s.index for s in board.seats if s.user_id != user.id]
        boards.finish_off_board(session, board, left, now, others)
        notes, out = [f"{left}: the game ends as his loss."], frozenset({user.id})
        said = [(user.userid, comment.strip())] if comment.strip() else []
        how = "His game ends without a move on"
    record_result(session, board)  # (the round goes on once all his games are mailed)
    notify.board_mail(session, board, position, notes, now, with_comment=True, said=said, out=out)
    name = board_name(tournament.id, row.round, row.number)
    game = get_game(board.game).display_name
    return f"{how} {name} ({game} board {board.number}): {names(winners(board))} wins."

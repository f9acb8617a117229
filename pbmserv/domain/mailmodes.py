"""How a player wants the mails of a board: every move, a daily digest, or one mail until he acts.

The mode is the user's (``notifications USERID PASSWORD MODE``), unless a board has its own
(``GAME notifications BOARD USERID PASSWORD MODE``).  :func:`admit` is asked before a board mail
goes to a player; mails about a finished game and mails to spectators always go out.  The clock
reminders ask it too: a digest player finds the board in the digest, a "once" player who has
had his one mail gets no reminder.  ``notify.send_digests`` runs with the clock checks.
"""

from __future__ import annotations

from datetime import timedelta

from pbmserv.store import records
from pbmserv.store.models import Board, BoardStatus, Seat, User

MODES = {
    "every": "a board mail for every move",
    "digest": "one mail a day with every board that changed",
    "once": "one mail when it is your turn, then none until you move",
}
DIGEST_EVERY = timedelta(days=1)


def mode_of(seat: Seat) -> str:
    return seat.notify or seat.user.notify or "every"


def admit(board: Board, user: User) -> bool:
    """Whether a board mail to ``user`` goes out now (and note what it holds back)."""
    if board.status is not BoardStatus.active:
        return True
    seats = [s for s in board.seats if s.user_id == user.id]
    if not seats:
        return True
    mode = mode_of(seats[0])
    if mode == "digest":
        for seat in seats:
            seat.digest_pending = True
        return False
    if mode == "once":  # the mail that says it is his turn, then none until he moves
        if board.to_move_id != user.id:  # kept with the cached position
            return False
        plies, last = records.recorded_plies(board), seats[0].mailed_ply
        since = [] if last is None else records.newest_moves(board, plies - last)
        if last is not None and all(m.user_id != user.id for m in since):
            return False
        for seat in seats:
            seat.mailed_ply = plies
    return True

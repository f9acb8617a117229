"""How a player wants the mails of a board: every move, a daily digest, or one mail until he acts.

The mode is the user's (``notifications USERID PASSWORD MODE``), unless a board has its own
(``GAME notifications BOARD USERID PASSWORD MODE``).  :func:`admit` is asked before a board mail
goes to a player; mails about a finished game and mails to spectators always go out.  The clock
reminders ask it too: a digest player finds the board in the digest, a "once" player who has
had his one mail gets no reminder.  :func:`send_digests` runs with the clock checks.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

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
        from pbmserv.boards import position_of, user_to_move

        mover = user_to_move(board, position_of(board))
        last = seats[0].mailed_ply
        acted = last is None or any(m.user_id == user.id and m.ply > last for m in board.moves)
        if mover is None or mover.id != user.id or not acted:
            return False
        for seat in seats:
            seat.mailed_ply = len(board.moves)
    return True


def send_digests(session: Session, now: datetime) -> int:
    """One mail per player whose digest is due, with every board held back for it."""
    from pbmserv.boards import position_of
    from pbmserv.outbox import mail_users
    from pbmserv.views import board_mail_body, reply_line

    seats = session.scalars(select(Seat).where(Seat.digest_pending.is_(True))).all()
    by_user: dict[int, list[Seat]] = {}
    for seat in seats:
        by_user.setdefault(seat.user_id, []).append(seat)
    sent = 0
    for user_seats in by_user.values():
        user = user_seats[0].user
        if user.digest_at is not None and now - user.digest_at < DIGEST_EVERY:
            continue
        parts = []
        for board in {s.board_id: s.board for s in user_seats}.values():
            position = position_of(board)
            parts.append(board_mail_body(board, position) + reply_line(board, position, user))
        count = len(parts)
        head = f"Your daily digest: {count} board{'s' if count != 1 else ''} changed.\n\n"
        body = head + ("\n" + "=" * 72 + "\n\n").join(parts)
        subject = f"pbmserv digest: {count} board{'s' if count != 1 else ''}"
        mail_users(session, [user], subject, body, now)
        for seat in user_seats:
            seat.digest_pending = False
        user.digest_at = now
        sent += 1
    return sent

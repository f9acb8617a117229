"""How a player wants the mails of a board: every move, a daily digest, or one mail until he acts.

The mode is the user's (``notifications USERID PASSWORD MODE``), unless a board has its own
(``GAME notifications BOARD USERID PASSWORD MODE``).  :func:`admit` is asked before a board mail
goes to a player.  The mode only spares a player the mails of other players' moves; what
concerns him comes at once whatever it is:

- the result of the game, and the mail that tells him he is out of it while it goes on (his
  forfeit, his queued resignation, a knock-out): mails to spectators always go out too;
  once he is out he gets no more of its mails until the result (``subscribe`` brings them);
- the clock's reminder, which is not a board mail of the mode at all: it is a mail of its own
  (``Nag: ...``, the subject players filter on), sent at once even to a digest player, since a
  digest may come a day later than the reminder's deadline allows (:func:`notify.nag_mail`).

A digest or "once" player reads the comments with the moves when his mail comes: every mail
that reaches him shows the comments of the other players since the last one he had of that
board (``Seat.mailed_ply``, the record's length then; set when he leaves "every", who had
every mail; before his first mail of a board, since the game began).
``notify.send_digests`` runs with the clock checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbmserv.store import records
from pbmserv.store.models import Board, BoardStatus, Seat, SubscriptionKind, User

MODES = {
    "every": "a board mail for every move",
    "digest": "one mail a day with every board that changed",
    "once": "one mail when it is his turn, then none until he moves",
}
DIGEST_EVERY = timedelta(days=1)


class Verdict(NamedTuple):
    """Whether a board mail goes to a player now, and for a player who does not get every
    mail, the ply after which the comments he has not had begin (None: the mail as it is)."""

    send: bool
    since: int | None = None


SEND = Verdict(True)
HOLD = Verdict(False)


def mode_of(seat: Seat) -> str:
    return seat.notify or seat.user.notify or "every"


def admit(board: Board, user: User, *, out: bool = False, gone: bool = False) -> Verdict:
    """Whether a board mail to ``user`` goes out now (and note what it holds back).

    ``out``: the mail tells him that he is out of the game (it goes on without him);
    ``gone``: he was out before it (:func:`pbmserv.domain.players.gone_users`): he gets the
    result, not the moves of the others, unless he subscribed to them (with robots playing
    on, two players who resigned got 150 board mails each in 20 seconds).
    """
    seats = [s for s in board.seats if s.user_id == user.id]
    if not seats:
        return SEND
    if gone and not out and board.status is BoardStatus.active:
        watching = any(
            s.user_id == user.id and s.kind == SubscriptionKind.all for s in board.subscriptions
        )
        return SEND if watching else HOLD
    mode = mode_of(seats[0])
    if mode == "every":
        return SEND
    at_once = out or board.status is not BoardStatus.active
    if mode == "digest" and not at_once:
        for seat in seats:
            seat.digest_pending = True
        return HOLD
    plies, last = records.recorded_plies(board), seats[0].mailed_ply
    had_it = board.to_move_id != user.id or (last is not None and last >= plies)
    if mode == "once" and not at_once and had_it:  # one mail when it is his turn, then none
        return HOLD  # (his turn lasts until he moves: the record grows only then)
    since = unread_since(seats[0])
    for seat in seats:
        seat.mailed_ply = plies
        seat.digest_pending = False  # this mail has it all: no digest of it
    return Verdict(True, since)


def unread_since(seat: Seat) -> int:
    """The ply after which the comments of ``seat``'s board are new to its player: his last
    mail of the board, else the start (his mode was set to leave "every" with the board's
    plies, see :func:`set_user_mode`, so this is a board he has had no mail of)."""
    return -1 if seat.mailed_ply is None else seat.mailed_ply


def set_user_mode(session: Session, user: User, mode: str) -> None:
    """``user``'s mode for the boards without their own."""
    seats = session.scalars(
        select(Seat)
        .join(Board, Seat.board_id == Board.id)
        .where(Seat.user_id == user.id, Seat.notify.is_(None))
        .where(Board.status == BoardStatus.active)
    ).all()
    _leaving_every(session, [s for s in seats if mode_of(s) == "every" and mode != "every"])
    user.notify = mode


def set_board_mode(session: Session, seats: Sequence[Seat], mode: str | None) -> None:
    """The mode of a player's ``seats`` on one board (None: his mode for all boards)."""
    for seat in seats:
        if mode_of(seat) == "every" and (mode or seat.user.notify or "every") != "every":
            _leaving_every(session, [seat])
        seat.notify = mode


def _leaving_every(session: Session, seats: Sequence[Seat]) -> None:
    """Seats whose player leaves "every" has had every mail of his boards: the comments his
    next digest or "once" mail brings begin here."""
    plies = records.plies_of(session, [s.board for s in seats])
    for seat in seats:
        seat.mailed_ply = plies[seat.board_id]

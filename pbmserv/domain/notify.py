"""Notifications: the one place that decides who gets which mail, and builds every board mail.

Every mail to a player goes through :func:`mail_users`, so the rules hold everywhere: one mail
per address, robots never get mail, an address nobody has confirmed gets nothing (its only
mail is the confirmation mail, see :mod:`pbmserv.domain.confirmation`), and the acting user and
the mail's own sender are not sent a copy of their answer.  :func:`board_mail` is the board mail of a move, a forfeit, a
tournament pairing or a robot's move alike: the same text to every player and spectator
(:func:`audience`), returned so that a command can also answer its sender with it.
:func:`player_text` mails a player's own text (a message, a chat line) within the daily caps
of :func:`pbmserv.domain.limits.message_refusal`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import NamedTuple

from sqlalchemy import Insert, insert, inspect, select
from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.domain import deadlines, limits, mailmodes
from pbmserv.domain.boards import position_of
from pbmserv.domain.mailmodes import admit
from pbmserv.domain.players import gone_users
from pbmserv.domain.proposals import open_vote
from pbmserv.games.base import Position
from pbmserv.render import subjects
from pbmserv.render.board_mail import (
    OpenVote,
    board_mail_body,
    board_subject,
    game_name,
    reply_line,
    reply_tail,
)
from pbmserv.render.templates import render
from pbmserv.store import records
from pbmserv.store.models import (
    Board,
    BoardStatus,
    Outbox,
    OutboxStatus,
    Robot,
    Seat,
    SubscriptionKind,
    User,
)


def mail_users(
    session: Session,
    users: Iterable[User],
    subject: str,
    body: str,
    now: datetime,
    *,
    skip: User | None = None,
    skip_address: str | None = None,
    tail: Callable[[User], str] | None = None,
    board: Board | None = None,
    allow: Callable[[User, str], bool] | None = None,
    out: Collection[int] = (),
    gone: Collection[int] = (),
    catch_up: Callable[[User, int], str] | None = None,
) -> int:
    """Queue ``body`` for every address of ``users``; return how many mails were queued.

    ``tail(user)`` is appended for that user only (the line the player to move sends back).
    A mail about ``board`` goes to a player only as his notification mode admits it (those in
    ``out``, user ids, are told they are out of the game: they get it whatever their mode;
    those in ``gone`` were out before, and get no more of its mails but the result);
    one who does not get every mail gets ``catch_up(user, ply)`` instead of ``body``: the mail
    with the comments since ``ply``.  A mail goes to an address only if ``allow(user,
    address)`` (a cap) says so.
    """
    targets = [u for u in users if skip is None or u.id != skip.id]
    robots = _robot_ids(session, targets)
    seen: set[str] = set()
    mails: list[dict[str, object]] = []
    for user in targets:
        if user.id in robots:
            continue
        text = body
        if board is not None:
            verdict = admit(board, user, out=user.id in out, gone=user.id in gone)
            if not verdict.send:
                continue
            if verdict.since is not None and catch_up is not None:
                text = catch_up(user, verdict.since)
        for address in (a.address for a in user.addresses if a.confirmed):
            if address in seen or (skip_address and address.lower() == skip_address.lower()):
                continue
            if allow is not None and not allow(user, address):
                continue
            seen.add(address)
            mails.append(_outgoing(address, subject, text + (tail(user) if tail else ""), now))
    _queue(session, mails)
    return len(seen)


class Sent(NamedTuple):
    """What :func:`player_text` did: how many mails it queued, by userid why the users it
    reached with none were refused (the daily caps), and the users who got it."""

    mails: int
    refused: dict[str, str]
    reached: list[str]


def player_text(
    session: Session,
    settings: Settings,
    author: User,
    users: Iterable[User],
    subject: str,
    body: str,
    now: datetime,
    *,
    capped: bool,
    skip_address: str | None = None,
    tail: Callable[[User], str] | None = None,
) -> Sent:
    """Mail ``author``'s own text (``message``, ``chat``) to ``users`` (not to him), with
    ``tail(user)`` for that user only (the line to answer with).

    ``capped`` (mail; the shell is the operator): an address gets it only within the daily
    caps, even when the author is authenticated, since his text is not the game; a user is
    refused when none of his addresses may get it.
    """
    why_not: dict[int, str] = {}
    reached: set[int] = set()

    def allow(user: User, address: str) -> bool:
        why = (
            limits.message_refusal(session, settings, author.userid, address, now)
            if capped
            else None
        )
        if why is None:
            reached.add(user.id)
            return True
        why_not.setdefault(user.id, why)
        return False

    targets = list(users)
    mails = mail_users(
        session,
        targets,
        subject,
        body,
        now,
        skip=author,
        skip_address=skip_address,
        tail=tail,
        allow=allow,
    )
    refused = {
        u.userid: f"{u.userid} has had {why_not[u.id]}"
        for u in targets
        if u.id in why_not and u.id not in reached
    }
    return Sent(mails, refused, [u.userid for u in targets if u.id in reached])


def _robot_ids(session: Session, users: list[User]) -> set[int]:
    """Which of ``users`` are robots: from their robot rows where those came with them (a
    board's players), else in one query (spectators)."""
    unknown = [u.id for u in users if "robot" in inspect(u).unloaded]
    robots = {u.id for u in users if u.id not in unknown and u.robot is not None}
    if unknown:
        robots.update(session.scalars(select(Robot.user_id).where(Robot.user_id.in_(unknown))))
    return robots


def queue_mail(
    session: Session,
    recipient: str,
    subject: str,
    body: str,
    now: datetime,
    *,
    in_reply_to: str | None = None,
    references: str | None = None,
    inbox_id: int | None = None,
) -> None:
    """Queue one mail to one address (an answer, a confirmation or reset code); an answer
    names the mail it answers (its Message-ID, the thread's, and the inbox row)."""
    mail = _outgoing(recipient, subject, body, now)
    mail.update(in_reply_to=in_reply_to, references=references, inbox_id=inbox_id)
    _queue(session, [mail])


def _outgoing(recipient: str, subject: str, body: str, now: datetime) -> dict[str, object]:
    return {
        "recipient": recipient,
        "subject": subject,
        "body": body,
        "created": now,
        "status": OutboxStatus.pending,
        "next_attempt": now,
    }


def _queue(session: Session, mails: list[dict[str, object]]) -> None:
    """Insert ``mails`` into the outbox at once, in the caller's transaction.

    Why not ``session.add(Outbox(...))``: nothing reads a queued mail back before the commit, and
    an ORM object costs the unit of work far more than its INSERT (a move mail queues two to
    five).  The rows go in now, in order, so what follows in the transaction sees them.
    """
    if mails:
        session.connection().execute(_insert_outbox(), mails)


@lru_cache(maxsize=1)
def _insert_outbox() -> Insert:
    """Built once: every mail queued runs it."""
    return insert(Outbox)


GONE_NOTE = (
    "\nThe game goes on without you: you get its result, and no more of its moves\n"
    "unless you ask for them: {game} subscribe {number} USERID PASSWORD\n"
)


def gone_note(board: Board) -> str:
    """What a player put out of a game that goes on gets from now on (:data:`GONE_NOTE`)."""
    return GONE_NOTE.format(game=board.game, number=board.number)


def audience(board: Board) -> list[User]:
    """Everybody who gets this board's mail now: players, ``subscribe`` spectators, and at the
    end the ``notify`` (result-only) spectators."""
    users: list[User] = []
    finished = board.status is not BoardStatus.active
    for user in [s.user for s in board.seats] + [
        s.user for s in board.subscriptions if s.kind == SubscriptionKind.all or finished
    ]:
        if all(u.id != user.id for u in users):
            users.append(user)
    return users


def board_mail(
    session: Session,
    board: Board,
    position: Position,
    notes: Sequence[str],
    now: datetime,
    *,
    actor: User | None = None,
    sender: str | None = None,
    new: bool = False,
    with_comment: bool = False,
    said: Sequence[tuple[str, str]] | None = None,
    vote: OpenVote | None = None,
    out: Collection[int] = (),
) -> tuple[str, str]:
    """Mail the board to its audience except ``actor`` and the address ``sender``; return
    (subject, body) for the answer to the one who acted.

    ``with_comment`` shows the comment written with the newest move (a player's own move),
    ``said`` what was written with a command that was not a move (a vote, a decline);
    ``vote``: the open proposal, whose players still to answer get the lines for it;
    ``out``: the user ids of the players this mail tells they are out of the game.
    """
    due = deadlines.due(board, position)
    body = board_mail_body(
        board, position, notes=list(notes), with_comment=with_comment, said=said, due=due
    )
    subject = board_subject(board, position, new=new)

    def catch_up(reader: User, since: int) -> str:
        """The mail for a reader who has not had every mail: every comment he missed."""
        missed = [c for c in records.comments_after(board, since) if c[0] != reader.userid]
        missed += [c for c in said or () if c[0] != reader.userid]  # (not stored)
        return board_mail_body(board, position, notes=list(notes), said=missed, due=due)

    gone = gone_users(board, position)
    reply = reply_tail(board, position, vote)

    def tail(user: User) -> str:
        """The line to send back; for a player this mail puts out, what he gets from now on."""
        return reply(user) + (gone_note(board) if user.id in out and user.id in gone else "")

    mail_users(
        session,
        audience(board),
        subject,
        body,
        now,
        skip=actor,
        skip_address=sender,
        tail=tail,
        board=board,
        out=out,
        gone=gone,
        catch_up=catch_up,
    )
    return subject, body


def nag_mail(
    session: Session, board: Board, position: Position, mover: User, note: str, now: datetime
) -> None:
    """The reminder to the player to move: the board with the note on top.  It goes out at
    once whatever his notification mode (see :mod:`pbmserv.domain.mailmodes`)."""
    body = board_mail_body(board, position, notes=[note], due=deadlines.due(board, position))
    subject = subjects.NAG(game=game_name(board), board=board.number, userid=mover.userid)
    tail = reply_tail(board, position, open_vote(session, board, position))
    mail_users(session, [mover], subject, body, now, tail=tail)


def text_mail(
    session: Session,
    users: Iterable[User],
    subject: str,
    lines: Sequence[str],
    now: datetime,
    *,
    actor: User | None = None,
    sender: str | None = None,
) -> str:
    """A short plain-text mail (a removed board, a chat line); returns the body."""
    body = render("mail/text.txt.j2", lines=list(lines))
    mail_users(session, users, subject, body, now, skip=actor, skip_address=sender)
    return body


def send_digests(session: Session, now: datetime) -> int:
    """One mail per player whose digest is due, with every board held back for it and the
    comments the other players wrote there since his last mail of it."""
    seats = session.scalars(select(Seat).where(Seat.digest_pending.is_(True))).all()
    by_user: dict[int, list[Seat]] = {}
    for seat in seats:
        by_user.setdefault(seat.user_id, []).append(seat)
    sent = 0
    for user_seats in by_user.values():
        user = user_seats[0].user
        if user.digest_at is not None and now - user.digest_at < mailmodes.DIGEST_EVERY:
            continue
        parts = []
        for seat in {s.board_id: s for s in user_seats}.values():
            board = seat.board
            position = position_of(board)
            vote = open_vote(session, board, position)
            since = mailmodes.unread_since(seat)
            said = [c for c in records.comments_after(board, since) if c[0] != user.userid]
            body = board_mail_body(board, position, said=said, due=deadlines.due(board, position))
            parts.append(body + reply_line(board, position, user, vote))
        count = len(parts)
        head = f"Your daily digest: {count} board{'s' if count != 1 else ''} changed.\n\n"
        body = head + ("\n" + "=" * 72 + "\n\n").join(parts)
        subject = subjects.DIGEST(count=count, s="s" if count != 1 else "")
        mail_users(session, [user], subject, body, now)
        for seat in user_seats:
            seat.digest_pending = False
            seat.mailed_ply = records.recorded_plies(seat.board)
        user.digest_at = now
        sent += 1
    return sent

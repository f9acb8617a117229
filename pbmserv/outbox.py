"""Queueing mail for the sender thread: the one place that turns users into outbox rows.

Every kind of mail (board mails, nags, forfeits, tournament rounds, chat) goes through
:func:`mail_users`, so the rules hold everywhere: one mail per address, robots never get mail,
and the acting user and the mail's own sender are not sent a copy of their answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbmserv.store.models import Board, Outbox, OutboxStatus, Robot, User


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
) -> int:
    """Queue ``body`` for every address of ``users``; return how many mails were queued.

    ``tail(user)`` is appended for that user only (the line the player to move sends back).
    A mail about ``board`` goes to a player only as his notification mode admits it.
    """
    from pbmserv.notify import admit

    targets = [u for u in users if skip is None or u.id != skip.id]
    robots = set(
        session.scalars(select(Robot.user_id).where(Robot.user_id.in_([u.id for u in targets])))
    )
    seen: set[str] = set()
    for user in targets:
        if user.id in robots or (board is not None and not admit(board, user)):
            continue
        for address in (a.address for a in user.addresses):
            if address in seen or (skip_address and address.lower() == skip_address.lower()):
                continue
            seen.add(address)
            session.add(
                Outbox(
                    recipient=address,
                    subject=subject,
                    body=body + (tail(user) if tail else ""),
                    created=now,
                    status=OutboxStatus.pending,
                    next_attempt=now,
                )
            )
    return len(seen)

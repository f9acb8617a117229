"""The hold on an account's own address after too many wrong passwords from it, and the
unlock code that lets the owner through it.

A From can be forged: a forger who mails wrong passwords from the owner's address spends the
address's day of wrong passwords, and each further one holds the address off a while
(:func:`refusal`).  Our answers go to that address, which the forger cannot read, so a refusal
by the hold gives the owner an unlock code (:func:`code_note`): a mail that carries
``unlock CODE`` logs him in through the hold (his password is still checked, and a wrong one
still counts).  The code works for any number of mails for ``UNLOCK_HOURS``: the forger may
keep guessing all day.  Only its hash is stored, so a new one is made at most once per hold
(the refusal is mailed past the daily caps then: :attr:`pbmserv.commands.dispatch.Mail`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.domain import tokens
from pbmserv.render.templates import fill
from pbmserv.store.models import AuthFailure, TokenKind

OWNER_DAY = timedelta(hours=24)
UNLOCK_HOURS = 24


def owner_key(userid: str) -> str:
    return f"owner:{userid.strip().lower()}"


def refusal(row: AuthFailure, settings: Settings, now: datetime) -> str | None:
    """Why the wrong passwords from an account's own address refuse it at ``now``, or None.

    Only that address's failures count here: nobody's guesses from elsewhere ever refuse it.
    Its standing is ``auth_owner_failures_per_day`` wrong passwords in 24 hours; past them
    each wrong password holds the address off a while longer, doubling from 15 seconds, up to
    ``auth_owner_lockout_minutes`` after the last one, or a forger could guess without limit
    and learn the right password from what it makes happen.  The owner gets through with
    the unlock code the refusal mails him."""
    over = row.count - settings.auth_owner_failures_per_day
    if over < 0 or now - row.first_at >= OWNER_DAY:
        return None
    most = timedelta(minutes=settings.auth_owner_lockout_minutes)
    delay = min(timedelta(seconds=15 * 2 ** min(over, 16)), most)
    if now >= row.last_at + delay:
        return None
    wait = math.ceil((row.last_at + delay - now).total_seconds())
    return f"too many wrong passwords: try again in {wait} seconds"


def record_failure(session: Session, userid: str, now: datetime) -> None:
    """One more wrong password from the owner's address, counted over 24 hours from the first
    (a right password does not clear it: it is a day's allowance, not a streak)."""
    key = owner_key(userid)
    row = session.get(AuthFailure, key)
    if row is not None and now - row.first_at >= OWNER_DAY:
        session.delete(row)
        session.flush()
        row = None
    if row is None:
        session.add(AuthFailure(key=key, count=1, first_at=now, last_at=now))
    else:
        row.count += 1
        row.last_at = now


def code_note(
    session: Session, user_id: int, userid: str, held_since: datetime, now: datetime
) -> tuple[str, bool]:
    """What a refusal by the hold tells the owner about his unlock code, and whether it
    carries a new one: one is made when no code made during this hold (since the wrong
    password that began it) still works; otherwise the one mailed then is named."""
    earlier = tokens.pending(session, TokenKind.unlock, now, user_id=user_id)
    lead = (
        f"Someone may be guessing {userid}'s password with mail forged from your address. "
        "Put the line below anywhere in your mail and its logins skip this hold (your "
        "password is still checked)"
    )
    if earlier is not None and earlier.created >= held_since:
        return fill(lead + ": the unlock code mailed to you earlier still works.") + "\n", False
    code = tokens.issue(session, TokenKind.unlock, user_id=user_id, now=now, hours=UNLOCK_HOURS)
    return fill(f"{lead}; it works for {UNLOCK_HOURS} hours:") + f"\n  unlock {code}\n", True


def unlocked(session: Session, codes: Iterable[str], now: datetime) -> set[int]:
    """The accounts whose hold the valid unlock codes among ``codes`` open."""
    found = set()
    for code in codes:
        try:
            found.add(tokens.check(session, code, now, TokenKind.unlock).user_id)
        except tokens.TokenError:
            continue
    return found

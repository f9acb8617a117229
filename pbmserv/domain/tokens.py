"""One-use codes mailed to an address: address confirmation, challenge confirmation, password
reset.  One mechanism for all three, so that every code is hashed at rest, expires and works
once (to confirm, or to be refused: ``refuse CODE`` uses it up too).  An unlock code
(:mod:`pbmserv.domain.owner_hold`) is only checked, never used up: it works for its day.

Only the SHA-256 of a code is stored: a copy of the database does not let anyone confirm or
reset anything (nor does the outbox: a mail that carried a code keeps no text once it is sent,
see :mod:`pbmserv.mail.sender`).  Codes are 16 characters of base32 (80 bits), easy to copy
from a mail.

>>> len(new_code()), new_code().isalnum()
(16, True)
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session

from pbmserv.store.models import Token, TokenKind


class TokenError(Exception):
    """The code is unknown, used or expired; the message is safe to show."""


def new_code() -> str:
    """A new code, always with a digit: below a mail's prose a line is read as a command only
    when it holds a number (:mod:`pbmserv.mail.lines`), and "confirm CODE" with a code of
    letters alone (one in 28) was taken for prose, so the yes was lost."""
    while True:
        code = base64.b32encode(secrets.token_bytes(10)).decode("ascii")
        if any(c.isdigit() for c in code):
            return code


def digest(code: str) -> str:
    return hashlib.sha256(code.strip().upper().encode("utf-8", "replace")).hexdigest()


def issue(
    session: Session,
    kind: TokenKind,
    *,
    user_id: int,
    now: datetime,
    hours: int,
    address: str | None = None,
    payload: Any = None,
) -> str:
    """Store a new code and return it in clear (to be mailed, never stored)."""
    code = new_code()
    session.add(
        Token(
            token_hash=digest(code),
            kind=kind,
            user_id=user_id,
            address=address,
            payload=payload,
            created=now,
            expires=now + timedelta(hours=hours),
        )
    )
    session.flush()
    return code


def check(session: Session, code: str, now: datetime, kind: TokenKind | None = None) -> Token:
    """The code's token, left unused (a reply that is no yes says what it could do);
    TokenError if it cannot be used (now or ever)."""
    token = session.scalar(select(Token).where(Token.token_hash == digest(code)))
    if token is None or (kind is not None and token.kind is not kind):
        raise TokenError("this code is unknown")
    if token.used_at is not None:
        raise TokenError("this code has been used already")
    if now >= token.expires:
        raise TokenError("this code has expired; ask for a new one")
    return token


def redeem(session: Session, code: str, now: datetime, kind: TokenKind | None = None) -> Token:
    """Mark the code used and return it; TokenError if it cannot be used (now or ever)."""
    token = check(session, code, now, kind)
    token.used_at = now
    return token


def pending(
    session: Session, kind: TokenKind, now: datetime, *, user_id: int, address: str | None = None
) -> Token | None:
    """An unused, unexpired code of this kind for this account (and address)."""
    query = select(Token).where(
        Token.kind == kind, Token.user_id == user_id, Token.used_at.is_(None), Token.expires > now
    )
    if address is not None:
        query = query.where(Token.address == address)
    return session.scalars(query.limit(1)).first()


def withdraw(session: Session, codes: list[str]) -> None:
    """Delete the codes whose mail is not sent after all (an answer over the caps): a code
    nobody got must not stand for one that waits."""
    if codes:
        session.execute(delete(Token).where(Token.token_hash.in_([digest(c) for c in codes])))


def withdraw_all(session: Session, user_id: int) -> None:
    """Delete every code of an account (it is closed: no code may open it again)."""
    session.execute(delete(Token).where(Token.user_id == user_id))


def purge(session: Session, now: datetime) -> int:
    """Delete used and expired codes."""
    result = session.execute(
        delete(Token).where(or_(Token.used_at.is_not(None), Token.expires <= now))
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]

"""Passwords: hashed with argon2id in Unicode NFC, checked, and recent successes remembered.

A password is hashed composed (NFC), so that 'café' typed with an accented letter or with 'e'
and a combining accent (macOS, some phones) is one password.  A hash made so is marked
(``User.password_composed``) and checked once; one made before passwords were composed may be
of the password as typed, and is checked both ways until its owner's next login.
"""

from __future__ import annotations

import hashlib
import threading
import unicodedata
from collections import OrderedDict
from functools import lru_cache
from typing import TYPE_CHECKING

from pbmserv.config import Settings

if TYPE_CHECKING:
    from argon2 import PasswordHasher


@lru_cache(maxsize=4)
def _hasher(time_cost: int, memory_kib: int) -> PasswordHasher:
    from argon2 import PasswordHasher  # lazy: only a command that checks a password needs it

    return PasswordHasher(time_cost=time_cost, memory_cost=memory_kib, parallelism=1)


def hasher(settings: Settings) -> PasswordHasher:
    return _hasher(settings.argon2_time_cost, settings.argon2_memory_kib)


def nfc(password: str) -> str:
    """A password as it is hashed: NFC, so that 'café' typed with an accented letter or with
    'e' and a combining accent (macOS, some phones) is one password."""
    return unicodedata.normalize("NFC", password)


# recent successes, each with whether the hash was of the password as typed, not composed
_VERIFIED: OrderedDict[tuple[str, bytes], bool] = OrderedDict()
_VERIFIED_LOCK = threading.Lock()
_VERIFIED_MAX = 4096


def _verified_key(password_hash: str, password: str) -> tuple[str, bytes]:
    return (password_hash, hashlib.sha256(password.encode("utf-8", "surrogatepass")).digest())


def remembered(password_hash: str, password: str) -> bool:
    """Whether ``password`` verified against ``password_hash`` lately: then no argon2 check
    is needed (:func:`pbmserv.domain.accounts.preverify` paid it outside the transaction)."""
    return _known(_verified_key(password_hash, password))


def _known(key: tuple[str, bytes]) -> bool:
    """:func:`remembered` of a key made already (its SHA-256 is computed once per check)."""
    with _VERIFIED_LOCK:
        if key in _VERIFIED:
            _VERIFIED.move_to_end(key)
            return True
    return False


# recent failures (hash, whether composed, SHA-256 of the password): a mail's password checked
# ahead (:func:`pbmserv.domain.accounts.preverify`) and wrong is not checked again inside the
# transaction, where argon2 would hold the write lock; one check per wrong guess
_REFUSED: OrderedDict[tuple[str, bool, bytes], None] = OrderedDict()


def _refused(key: tuple[str, bool, bytes]) -> bool:
    with _VERIFIED_LOCK:
        if key in _REFUSED:
            _REFUSED.move_to_end(key)
            return True
    return False


def verified_as_typed(password_hash: str, password: str) -> bool | None:
    """Whether ``password`` was last verified against ``password_hash`` as typed, not
    composed: a hash made before passwords were composed, which a login replaces (until then
    the password typed the other way is refused).  None when the success has been forgotten
    since (other logins filled the memory): its form is unknown, and taking it for composed
    would mark a hash of the password as typed composed, which no login then verifies."""
    with _VERIFIED_LOCK:
        return _VERIFIED.get(_verified_key(password_hash, password))


def check_password(settings: Settings, password_hash: str, password: str, composed: bool) -> bool:
    """argon2 verification, remembering recent successes and failures (hash + SHA-256 of the
    password, in memory only) so that :func:`preverify` can pay the deliberate cost outside a
    transaction, once.

    A hash ``composed`` (made of the password in NFC: ``User.password_composed``) is checked
    once.  One made before passwords were composed may be of the password as typed: it is
    checked composed, then as typed when that differs (a wrong password typed decomposed costs
    two verifications, until the owner's next login marks the hash or stores it composed)."""
    key = _verified_key(password_hash, password)
    if _known(key):
        return True
    refused = (key[0], composed, key[1])
    if _refused(refused):
        return False
    from argon2.exceptions import InvalidHashError, VerificationError  # lazy: as _hasher

    ok = as_typed = False
    forms = [nfc(password)] if composed else dict.fromkeys([nfc(password), password])
    for typed in forms:
        try:
            ok = hasher(settings).verify(password_hash, typed)
            as_typed = typed != nfc(password)
            break
        except (VerificationError, InvalidHashError):
            continue
    with _VERIFIED_LOCK:
        if ok:
            _VERIFIED[key] = as_typed
            while len(_VERIFIED) > _VERIFIED_MAX:
                _VERIFIED.popitem(last=False)
        else:
            _REFUSED[refused] = None
            while len(_REFUSED) > _VERIFIED_MAX:
                _REFUSED.popitem(last=False)
    return ok

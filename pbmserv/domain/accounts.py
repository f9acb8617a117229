"""User accounts: sign-up, passwords (argon2id), addresses, and throttling of failed logins.

Passwords are compared case-sensitively through argon2 and never stored, echoed or logged.
Failed checks are counted per sender address and per userid: past ``auth_slowdown_after``
failures a new attempt must wait an exponentially growing delay, past ``auth_lockout_after``
the key is refused until ``auth_lockout_minutes`` have passed.  A mail from one of the
account's own confirmed addresses is counted under a key of its own ("owner:USERID"), and the
right password from there is accepted whatever others guessed: nobody else's guesses can lock
the owner out, and a forger of his address holds it off only until the owner mails the
unlock code the refusal gave him (:mod:`pbmserv.domain.owner_hold`).

Addresses are exactly one RFC 5322 addr-spec (RFC 6531's, with letters of any script), in
one form (:mod:`pbmserv.domain.addresses`): no lists, no display names, no local-only names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from sqlalchemy import Delete, Select, and_, bindparam, delete, func, select
from sqlalchemy.orm import Session, joinedload, sessionmaker

from pbmserv.config import Settings
from pbmserv.domain import addresses, owner_hold
from pbmserv.domain.owner_hold import owner_key as _owner_key
from pbmserv.domain.passwords import check_password, hasher, nfc, remembered, verified_as_typed
from pbmserv.store.models import Address, AuthFailure, Board, BoardStatus, Seat, User

USERID_RE = re.compile(r"^[a-z][a-z0-9_.-]{1,31}$")
MIN_PASSWORD = 4
# the word our mails put where the password goes (``polis move 101 bob PASSWORD <move>#2``)
PLACEHOLDER = "PASSWORD"


def new_password_problem(password: str) -> str | None:
    """Why ``password`` cannot be an account's new password, or None."""
    if len(nfc(password)) < MIN_PASSWORD:  # (as it is hashed: 'e' + accent is one)
        return f"a password needs at least {MIN_PASSWORD} characters"
    if password == PLACEHOLDER:
        return f"{PLACEHOLDER} is the word our mails put in the place of a password: choose another"
    return None


class AuthError(Exception):
    """Authentication refused; the message is safe to show (it never contains the password)."""


class OwnerHeld(AuthError):
    """The hold on the account's own address refused it (:mod:`pbmserv.domain.owner_hold`):
    the refusal gives the owner an unlock code."""

    def __init__(self, message: str, user_id: int, userid: str, since: datetime) -> None:
        super().__init__(message)
        self.user_id, self.userid, self.since = user_id, userid, since


class WrongPassword(AuthError):
    """The account exists and the password is not its own."""

    def __init__(self, userid: str) -> None:
        super().__init__(f"wrong password for '{userid}'")
        self.userid = userid


class UnknownUserid(AuthError):
    """No account has the userid given.  The message does not repeat it: a player who forgot
    his userid put his password in its place."""

    def __init__(self) -> None:
        super().__init__(
            "unknown userid: no account has the name given as the userid (it is not repeated "
            "here, in case it was your password)"
        )


def normalise_userid(userid: str) -> str:
    return userid.strip().lower()


def check_userid(userid: str) -> str | None:
    """Why ``userid`` cannot be a userid, or None if it can."""
    if not USERID_RE.match(userid):
        return (
            f"'{userid}' is not a valid userid: use 2 to 32 letters, digits, '.', '_' or '-', "
            "starting with a letter"
        )
    return None


def parse_address(text: str) -> str | None:
    """The one addr-spec ``text`` is, in its one form (lower-cased; an internationalised one
    NFC with its domain in A-labels: :mod:`pbmserv.domain.addresses`); None unless it is
    exactly one.

    >>> parse_address("Alice@Example.org"), parse_address("a@example.org,root")
    ('alice@example.org', None)
    >>> parse_address("root"), parse_address("Eve <eve@example.org>")
    (None, None)
    >>> parse_address("Jörg@Bücher.example")
    'jörg@xn--bcher-kva.example'
    """
    return addresses.canonical(text)


def check_address(address: str) -> str | None:
    if parse_address(address) is None:
        return f"'{address}' is not a mail address (give one address like name@example.org)"
    return None


def find_user(session: Session, userid: str) -> User | None:
    """The user with its addresses, in one query (a login checks them at once)."""
    found = session.scalars(_user_query(), {"userid": normalise_userid(userid)})
    return found.unique().one_or_none()


@lru_cache(maxsize=1)
def _user_query() -> Select[User]:
    """Built once: building it was a third of the cost of a login's query."""
    return (
        select(User).where(User.userid == bindparam("userid")).options(joinedload(User.addresses))
    )


def users_with_address(session: Session, address: str) -> list[User]:
    rows = session.scalars(
        select(User).join(Address).where(func.lower(Address.address) == address.strip().lower())
    )
    return list(rows.unique())


def create_user(
    session: Session,
    settings: Settings,
    userid: str,
    password: str,
    addresses: list[str],
    now: datetime,
    *,
    confirmed: bool = True,
) -> User:
    """A new account; addresses given by mail start ``confirmed=False``."""
    user = User(
        userid=normalise_userid(userid),
        password_hash=hasher(settings).hash(nfc(password)),
        password_composed=True,
        created=now,
        addresses=[Address(address=a.strip().lower(), confirmed=confirmed) for a in addresses],
    )
    session.add(user)
    session.flush()
    return user


def set_password(user: User, settings: Settings, password: str) -> None:
    user.password_hash = hasher(settings).hash(nfc(password))
    user.password_composed = True


@lru_cache(maxsize=1)
def _hashes_query() -> Select[str, str, bool]:
    """Built once: every batch of mails asks it."""
    return select(User.userid, User.password_hash, User.password_composed).where(
        User.userid.in_(bindparam("userids", expanding=True))
    )


def preverify(
    sessions: sessionmaker[Session],
    settings: Settings,
    pairs: Iterable[tuple[str, str]],
    now: datetime,
) -> None:
    """Check (userid, password) pairs before the caller opens its write transaction.

    argon2 is slow on purpose; done inside the transaction it would hold SQLite's single write
    lock (or a board's row lock) for tens of milliseconds per mail.  Successes and failures
    are remembered, so the check inside the transaction is a dictionary look-up (one argon2
    check per guess); failures are counted there, by :func:`authenticate`.  argon2 releases
    the GIL, so several checks (a batch of mails) run on all cores at once.
    """
    checks = list(checks_needed(sessions, settings, pairs, now).values())
    if len(checks) == 1:
        check_password(settings, *checks[0])
    elif checks:
        with ThreadPoolExecutor(max_workers=min(len(checks), os.cpu_count() or 1)) as pool:
            list(pool.map(lambda pair: check_password(settings, *pair), checks))


def checks_needed(
    sessions: sessionmaker[Session],
    settings: Settings,
    pairs: Iterable[tuple[str, str]],
    now: datetime,
) -> dict[tuple[str, str], tuple[str, str, bool]]:
    """The argon2 checks that would make these (userid, password) logins a look-up inside the
    transaction: (userid, password) -> (hash, password, whether the hash is composed), for
    known userids whose password is not remembered.  Reads only (one query, two when some
    are unknown).

    A userid whose wrong passwords are being throttled (from others, or from its own
    address) is left out: :func:`authenticate` refuses it before any check (except where the
    sender is not the throttled one, which it then checks itself), so guesses mailed at a
    throttled account, from any forged sender, cost no argon2.
    """
    wanted = {(normalise_userid(u), p) for u, p in pairs if u}
    if not wanted:
        return {}
    with sessions() as session:
        userids = sorted({u for u, _ in wanted})
        hashes = {
            userid: (password_hash, composed)
            for userid, password_hash, composed in session.connection().execute(
                _hashes_query(), {"userids": userids}
            )
        }
        unknown = {
            (userid, password)
            for userid, password in wanted
            if userid in hashes and not remembered(hashes[userid][0], password)
        }
        keys = {k for userid, _ in unknown for k in (f"user:{userid}", _owner_key(userid))}
        failures: list[AuthFailure] = []
        if keys:  # (none when every password was checked before)
            failures = list(session.scalars(select(AuthFailure).where(AuthFailure.key.in_(keys))))
        refused = {
            row.key.partition(":")[2]
            for row in failures
            if (owner_hold.refusal if row.key.startswith("owner:") else _throttled)(
                row, settings, now
            )
        }
    return {
        (userid, password): (hashes[userid][0], password, hashes[userid][1])
        for userid, password in unknown
        if userid not in refused
    }


def confirmed_addresses(user: User) -> list[str]:
    return [a.address for a in user.addresses if a.confirmed]


def awaiting_confirmation(user: User) -> bool:
    """Whether the account has addresses and has confirmed none of them (signed up by mail,
    not confirmed yet): it is removed in time unless something keeps it, so nothing may seat
    it before then."""
    return bool(user.addresses) and not confirmed_addresses(user)


def is_owner_address(user: User | None, sender: str | None) -> bool:
    """Whether ``sender`` is one of the confirmed addresses of ``user``."""
    return user is not None and _sender_among(confirmed_addresses(user), sender)


def _sender_among(addresses: list[str], sender: str | None) -> bool:
    return bool(sender and sender.strip().lower() in addresses)


def _failure_keys(userid: str, sender: str | None, owner: bool, known: bool) -> list[str]:
    """The keys a failed login is counted under.  The userid is one only when it names an
    account: a word that names none may be the password of a line whose userid was
    forgotten, and keys are stored in clear.  Such failures count under the sender's key
    alone, which is what slows a guesser down (there is no account of that name to protect,
    and a count under a free name would lock it for whoever signs it up next).  A hash of the
    word was not taken instead: unkeyed, a short password is soon found from it; keyed, it
    needs a secret kept apart from the store, for a count that protects nothing."""
    if owner:
        return [_owner_key(userid)]
    keys = [f"user:{normalise_userid(userid)}"] if known else []
    if sender:
        keys.append(f"sender:{sender.strip().lower()}")
    return keys


def _check_throttle(session: Session, settings: Settings, keys: list[str], now: datetime) -> None:
    for key in keys:
        row = session.get(AuthFailure, key)
        if row is None:
            continue
        refusal = _throttled(row, settings, now)
        if refusal is not None:
            raise AuthError(refusal)
        if row.count >= settings.auth_lockout_after:  # a lock-out that has run out
            session.delete(row)


def _throttled(row: AuthFailure, settings: Settings, now: datetime) -> str | None:
    """Why the failures counted under one key refuse any password at ``now``; None if they
    do not."""
    if row.count >= settings.auth_lockout_after:
        until = row.last_at + timedelta(minutes=settings.auth_lockout_minutes)
        if now < until:
            return f"too many wrong passwords: refused until {until.strftime('%Y-%m-%d %H:%M')} UTC"
        return None
    if now - row.last_at > timedelta(minutes=settings.auth_window_minutes):
        return None
    if row.count >= settings.auth_slowdown_after:
        delay = timedelta(seconds=2 ** (row.count - settings.auth_slowdown_after + 1) * 15)
        if now < row.last_at + delay:
            wait = int((row.last_at + delay - now).total_seconds()) + 1
            return f"too many wrong passwords: try again in {wait} seconds"
    return None


def _record_failure(session: Session, settings: Settings, keys: list[str], now: datetime) -> None:
    window = timedelta(minutes=settings.auth_window_minutes)
    for key in keys:
        row = session.get(AuthFailure, key)
        if row is None or now - row.last_at > window and row.count < settings.auth_lockout_after:
            if row is not None:
                session.delete(row)
                session.flush()
            session.add(AuthFailure(key=key, count=1, first_at=now, last_at=now))
        else:
            row.count += 1
            row.last_at = now


@dataclass(frozen=True)
class Login:
    """Who a right password logged in: the user's id, and whether the mail came from one of
    his confirmed addresses (such a command is never capped, see :mod:`pbmserv.domain.limits`)."""

    user_id: int
    owner: bool


@dataclass(frozen=True)
class _Account:
    """What a login reads of a user, by one plain query (every mail logs in: the ORM's user
    with its addresses cost more than the rest of the login)."""

    id: int
    userid: str
    password_hash: str
    composed: bool  # (User.password_composed)
    confirmed: list[str]

    def owns(self, sender: str | None) -> bool:
        return _sender_among(self.confirmed, sender)


def _account(session: Session, userid: str) -> _Account | None:
    rows = session.connection().execute(_account_query(), {"userid": normalise_userid(userid)})
    found = rows.all()
    if not found:
        return None
    user_id, name, password_hash, composed, _ = found[0]
    confirmed = [address for *_, address in found if address is not None]
    return _Account(user_id, name, password_hash, composed, confirmed)


@lru_cache(maxsize=1)
def _account_query() -> Select[int, str, str, bool, str]:
    """Built once: every login runs it."""
    confirmed = and_(Address.user_id == User.id, Address.confirmed.is_(True))
    return (
        select(User.id, User.userid, User.password_hash, User.password_composed, Address.address)
        .outerjoin(Address, confirmed)
        .where(User.userid == bindparam("userid"))
    )


def authenticate(
    session: Session,
    settings: Settings,
    userid: str,
    password: str,
    *,
    sender: str | None,
    now: datetime,
    unlocked: Collection[int] = (),
) -> Login:
    """Who logs in if ``password`` is right for ``userid``; AuthError otherwise.  The
    accounts ``unlocked`` (their unlock code is in the mail) skip the hold on their address.

    A failure is recorded in ``session``: the caller must let that transaction commit even
    though the command is refused (:func:`pbmserv.commands.common.login` does).
    """
    account = _account(session, userid)
    if password == PLACEHOLDER and not (  # a line pasted from our mail unchanged: no count
        account is not None
        and check_password(settings, account.password_hash, password, account.composed)
    ):  # (an account made before the word was refused as a password still logs in)
        raise AuthError(
            f"{PLACEHOLDER} stands for your password in the line our mail gives: replace it "
            "by your password (it counts as no wrong password)"
        )
    owner = account is not None and account.owns(sender)
    keys = _failure_keys(userid, sender, owner, account is not None)
    if owner and account is not None:  # refused before any check, unless unlocked: owner_hold
        if account.id not in unlocked:
            _check_owner_throttle(session, settings, account, now)
    else:  # refused before any check: a guess at a throttled key learns nothing
        _check_throttle(session, settings, keys, now)
    ok = account is not None and check_password(
        settings, account.password_hash, password, account.composed
    )
    if account is None or not ok:  # (userids are public: the games lists show them)
        if owner:
            owner_hold.record_failure(session, userid, now)
        else:
            _record_failure(session, settings, keys, now)
        if account is None:
            raise UnknownUserid
        raise WrongPassword(account.userid)
    if not owner:  # (the owner's day of wrong passwords is not cleared: owner_hold)
        _forget_failures(session, keys, settings.auth_lockout_after)
    typed = verified_as_typed(account.password_hash, password)  # (None: forgotten: made again)
    again = hasher(settings).check_needs_rehash(account.password_hash) or typed is not False
    if again or not account.composed:  # (a hash that verified composed is marked so)
        user = session.get(User, account.id)
        assert user is not None
        if again:
            set_password(user, settings, password)
        user.password_composed = True
    return Login(account.id, owner)


def _check_owner_throttle(
    session: Session, settings: Settings, account: _Account, now: datetime
) -> None:
    """Refuse mail from the account's own confirmed address, before its password is checked,
    while its own wrong passwords hold it off (see :func:`owner_hold.refusal`)."""
    row = session.get(AuthFailure, _owner_key(account.userid))
    refusal = None if row is None else owner_hold.refusal(row, settings, now)
    if refusal is not None:
        assert row is not None
        raise OwnerHeld(refusal, account.id, account.userid, row.last_at)


def _forget_failures(session: Session, keys: list[str], lockout: int) -> None:
    """A right password clears the failures counted under its keys, except a lock-out, which
    runs its time: one plain DELETE (a query per key cost more than the rest of the login),
    unless the session holds such a row or a failure not yet written (a mail whose first line
    had a wrong password), which the DELETE would miss or leave stale in the session."""
    held = any(Session.identity_key(AuthFailure, key) in session.identity_map for key in keys)
    if held or any(isinstance(row, AuthFailure) for row in session.new):
        for key in keys:
            row = session.get(AuthFailure, key)
            if row is not None and row.count < lockout:
                session.delete(row)
        return
    session.connection().execute(_forget_failures_delete(), {"keys": keys, "lockout": lockout})


@lru_cache(maxsize=1)
def _forget_failures_delete() -> Delete:
    """Built once: every login runs it."""
    return delete(AuthFailure).where(
        AuthFailure.key.in_(bindparam("keys", expanding=True)),
        AuthFailure.count < bindparam("lockout"),
    )


# ----------------------------------------------------------------------------- challenge limits


def active_games(session: Session, user: User) -> int:
    return (
        session.scalar(
            select(func.count(func.distinct(Board.id)))
            .join(Seat, Seat.board_id == Board.id)
            .where(Seat.user_id == user.id, Board.status == BoardStatus.active)
        )
        or 0
    )


def over_limit(session: Session, user: User) -> str | None:
    """Why ``user`` cannot take one more game (his ``limit``), or None."""
    if user.game_limit is None:
        return None
    count = active_games(session, user)
    if count >= user.game_limit:
        return f"{user.userid} has {active_count(count)} and takes at most {user.game_limit}"
    return None


def active_count(count: int) -> str:
    """``1 active game``, ``2 active games``."""
    return f"{count} active game{'' if count == 1 else 's'}"


def after_challenge(users: list[User]) -> None:
    """A new game counts against what each player is seeking."""
    for user in users:
        if user.seeking:
            user.seeking -= 1


def is_admin(settings: Settings, userid: str) -> bool:
    """Whether ``userid`` is one of the administrators named in the config."""
    return normalise_userid(userid) in {normalise_userid(a) for a in settings.admins}


def admin_standing(session: Session, settings: Settings) -> tuple[list[str], dict[str, list[str]]]:
    """Why administrators named in the config cannot act by mail (and what the operator does
    about it), and the confirmed addresses the others act from, for him to check at start.
    The rights come with the userid, so mail cannot sign an admin's userid up (whoever did
    first would be admin), an admin by mail needs a confirmed address, and an account signed
    up by mail before its userid was named in the config belongs to whoever signed it up."""
    problems, acting = [], {}
    for name in dict.fromkeys(normalise_userid(a) for a in settings.admins):
        user = find_user(session, name)
        if user is None:
            problems.append(
                f"the administrator '{name}' named in the config has no account: sign it up "
                f"from the shell (pbmserv signup {name} PASSWORD ADDRESS)"
            )
        elif user.closed:
            problems.append(
                f"the administrator '{name}' named in the config has closed its account"
            )
        elif addresses := confirmed_addresses(user):
            acting[name] = addresses
        else:
            problems.append(
                f"the administrator '{name}' has no confirmed address and cannot act by mail: "
                f"set one from the shell (pbmserv change address {name} PASSWORD ADDRESS)"
            )
    return problems, acting

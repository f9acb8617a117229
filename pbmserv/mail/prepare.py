"""Mails made ready for the worker outside its write transaction: parsed, passwords checked.

Parsing a mail and checking its passwords (argon2, slow on purpose: 17-23 ms of CPU for a
first login) need no write lock, so they never run inside the worker's transaction.  Checked
in the worker's own thread, a batch's first logins held up every mail of the batch and the
worker's thread with them.  :class:`Claims` starts each claimed mail's checks in threads of
their own (argon2 releases the GIL, so they run on the other cores), and the worker processes
the oldest claimed mails whose checks are done while the others' go on.

The mails are claimed (leased to this worker) before their checks start, so that two worker
processes never check the same mail: a first try read the waiting mails without claiming
them, and two workers then checked each first login twice (``bench/mail.py --scaling``: two
workers drained 27 mails/s where one drained 48).  Parsing stays in the worker's thread: in a
thread of its own it waited for the GIL behind the worker's Python, and mails waited for it.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future, wait
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from pbmserv.commands import grammar
from pbmserv.config import Settings
from pbmserv.domain import accounts
from pbmserv.errors import with_traceback
from pbmserv.mail import inbox_queue
from pbmserv.mail.parse import ParsedMail, parse_message
from pbmserv.mail.replay import Refusal, refusal

log = logging.getLogger("pbmserv.mail.prepare")


@dataclass
class Prepared:
    """A mail parsed (and its passwords checked) before the write transaction."""

    message_id: int
    parsed: ParsedMail | None = None
    error: str | None = None  # parsing failed: its reason, then the traceback
    stale: Refusal | None = None  # no Date, or one of a replay: none of its commands runs


def prepare(settings: Settings, words: set[str], mail: inbox_queue.Claimed) -> Prepared:
    """Parse a mail outside the write transaction; a failure is kept for the record."""
    try:
        parsed = parse_message(
            mail.raw,
            mail.mail_from,
            command_words=words,
            max_commands=settings.max_commands_per_mail,
            server_addresses=[settings.server_address, *settings.accept_recipients],
        )
        old = (
            None
            if mail.received is None
            else refusal(mail.dated, mail.received, settings.stale_mail_days)
        )
        return Prepared(mail.id, parsed, stale=old)
    except Exception as exc:  # noqa: BLE001 - recorded as a failed attempt of this mail
        return Prepared(mail.id, error=with_traceback(exc))


def logins_of(prepared: Iterable[Prepared], words: set[str]) -> list[tuple[str, str]]:
    """The (userid, password) pairs the commands of these mails may log in with (none for
    automatic mail, nor for mail with no usable sender: it is set aside unread)."""
    return [
        pair
        for item in prepared
        if item.parsed is not None and not item.parsed.is_automatic and item.parsed.sender
        if item.stale is None  # (nothing of it runs)
        for line in item.parsed.commands
        for pair in grammar.command_credentials(line, words)
    ]


def check_passwords(
    sessions: sessionmaker[Session],
    settings: Settings,
    prepared: Iterable[Prepared],
    words: set[str],
    now: datetime,
) -> None:
    """Check the passwords the commands of these mails log in with, so that the check inside
    the transaction is a look-up (:func:`pbmserv.domain.accounts.preverify`).  Only a
    shortcut: a failure here is logged, and the commands check every password anyway."""
    try:
        accounts.preverify(sessions, settings, logins_of(prepared, words), now)
    except Exception:  # noqa: BLE001 - only a shortcut (above)
        log.exception("checking the passwords of mails before processing them failed")


class Claims:
    """The mails this worker claimed and has not processed yet, oldest first: parsed, their
    password checks running in ``checker``.  Used by the worker's thread alone.

    A mail held here is leased to this worker like any claimed mail (a crash leaves it to
    :func:`pbmserv.mail.inbox_queue.release_dead_claims` or to the lease's end).  When a mail must
    wait (it failed, or lost a lock race), :meth:`release` puts the held ones back in the queue
    uncounted, so that none overtakes it."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        readers: sessionmaker[Session],
        settings: Settings,
        clock: Callable[[], datetime],
        checker: Executor,
    ) -> None:
        self.sessions, self.readers, self.settings, self.clock = sessions, readers, settings, clock
        self.checker = checker
        self._held: list[tuple[Prepared, list[Future[bool]]]] = []
        # the checks running, by hash and the password's digest (no password kept as a key)
        self._checking: dict[tuple[str, bytes], Future[bool]] = {}

    def __len__(self) -> int:
        return len(self._held)

    def claim(self, limit: int) -> None:
        """Claim up to ``limit`` more waiting mails, oldest first, parse them and start the
        argon2 checks their logins need (each once)."""
        if limit <= 0:
            return
        with self.sessions() as session, session.begin():
            claimed = inbox_queue.claim_batch(session, self.clock(), limit)
        if not claimed:
            return
        words = grammar.command_words()
        held: list[tuple[Prepared, list[Future[bool]]]] = [
            (prepare(self.settings, words, mail), []) for mail in claimed
        ]
        self._held += held  # (held before anything else can fail: release() gives them back)
        self._held.sort(key=lambda entry: entry[0].message_id)  # (a lease run out: older)
        logins = {item.message_id: logins_of([item], words) for item, _ in held}
        try:
            needed = accounts.checks_needed(
                self.readers, self.settings, [p for ps in logins.values() for p in ps], self.clock()
            )
        except Exception:  # noqa: BLE001 - only a shortcut: the commands check passwords anyway
            log.exception("reading the password hashes of claimed mails failed")
            needed = {}
        self._checking = {key: f for key, f in self._checking.items() if not f.done()}
        for item, checks in held:
            for userid, password in logins[item.message_id]:
                check = needed.get((accounts.normalise_userid(userid), password))
                if check is None:
                    continue
                key = (check[0], hashlib.sha256(check[1].encode("utf-8", "surrogatepass")).digest())
                if key not in self._checking:
                    self._checking[key] = self.checker.submit(
                        accounts.check_password, self.settings, *check
                    )
                checks.append(self._checking[key])

    def ready(self) -> list[Prepared]:
        """The oldest held mails whose checks are done, no longer held: the next batch.  The
        oldest mail's checks are waited for (nothing may go before it), so this is empty only
        when nothing is held."""
        if not self._held:
            return []
        wait(self._held[0][1])
        count = 1
        while count < len(self._held) and all(c.done() for c in self._held[count][1]):
            count += 1
        batch, self._held = self._held[:count], self._held[count:]
        return [item for item, _ in batch]

    def release(self) -> None:
        """Put every held mail back in the queue, its attempt not counted."""
        inbox_queue.release_claims(self.sessions, self.drop())

    def drop(self) -> list[int]:
        """Forget every held mail; their ids, for the caller to give back to the queue."""
        ids = [item.message_id for item, _ in self._held]
        self._held = []
        return ids

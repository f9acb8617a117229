"""The command worker: claims the stored mails in batches and commits each batch at once.

Everything one mail causes (:mod:`pbmserv.mail.one_mail`: moves, answers to the sender, mails
to the other players, the inbox row marked done) is committed in one transaction, so a crash at
any point leaves either all of it or none of it, and the mail is processed again after a
restart: exactly once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from sqlalchemy import Update, bindparam, update
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.commands import Answer, grammar
from pbmserv.commands.dispatch import error_subject
from pbmserv.config import Settings
from pbmserv.domain import accounts, limits
from pbmserv.errors import reason, stored_reason, with_traceback
from pbmserv.mail import inbox_queue, one_mail
from pbmserv.mail.journal import logged
from pbmserv.mail.prepare import Claims, Prepared, check_passwords, prepare
from pbmserv.render.templates import render
from pbmserv.store.db import readonly_sessions
from pbmserv.store.models import Inbox, InboxStatus
from pbmserv.store.outage import Outage, lock_conflict, unavailable

log = logging.getLogger("pbmserv.mail.worker")


@dataclass
class Outcome:
    message_id: int
    status: InboxStatus
    answers: int
    requeued: bool = False  # lost a lock race (PostgreSQL): back in the queue, not a failure
    note: str | None = None  # why a processed mail got no answer (logged: mail.journal)


POLL_SECONDS = 0.1  # how often an idle worker looks for mail stored by another process


BATCH = 32  # at most this many mails committed together: one fsync for many
BATCH_SECONDS = 0.05  # ... and about this long a batch holds the write lock (SQLite: everybody's);
# 0.1 made a mail that came during a batch of a steady load wait twice as long, for no more throughput


class BatchSize:
    """How many mails to claim next: as many as take about ``BATCH_SECONDS`` to process, from a
    running average of the time per mail, so that a batch never holds the write lock (and the
    listener's 250s) for long, however slow the mails are."""

    def __init__(self, most: int = BATCH, seconds: float = BATCH_SECONDS) -> None:
        self.most, self.seconds, self.per_mail = most, seconds, seconds / most

    def __call__(self) -> int:
        return max(1, min(self.most, round(self.seconds / self.per_mail)))

    def record(self, mails: int, elapsed: float) -> None:
        if mails:
            self.per_mail = 0.7 * self.per_mail + 0.3 * (elapsed / mails)


def run_worker(
    sessions: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime],
    *,
    stopping: threading.Event,
    work: threading.Event,
    on_done: Callable[[], None],
) -> None:
    """Process batches until ``stopping`` is set: at once when ``work`` is set (the listener
    stored mail), else every ``POLL_SECONDS``; ``on_done`` after each batch that did something.

    An idle worker only reads (no write lock); a failing round (the database away for a moment)
    is tried again with a back-off, and a failing streak logged once (:class:`Outage`).
    """
    grammar.command_words()  # every game's engine loads now, not while the first mail waits
    readers = readonly_sessions(settings.url)
    size = BatchSize()
    checker = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="pbmserv-pw")
    claims = Claims(sessions, readers, settings, clock, checker)
    outage = Outage("worker", log)
    stranded: list[int] = []  # claimed mails a failing round could not give back
    while not stopping.is_set():
        done: list[Outcome] = []
        batch: list[Prepared] = []
        try:
            if stranded:  # the database answers again: back to the queue, attempt uncounted
                inbox_queue.release_claims(sessions, stranded)
                stranded = []
            # more mails are claimed and their password checks started; the oldest ones whose
            # checks are done are processed, the others' checks go on meanwhile
            if claims or inbox_queue.waiting(readers, clock()):
                claims.claim(size() - len(claims))
            batch = claims.ready()
            if batch:
                started = time.monotonic()
                done = process_claimed(sessions, settings, clock, batch)
                size.record(len(done), time.monotonic() - started)
                if any(outcome.status is InboxStatus.new for outcome in done):
                    claims.release()  # a mail must wait: none claimed after it overtakes it
            outage.worked()
        except Exception as exc:  # noqa: BLE001 - e.g. the database is away for a moment
            pause = outage.failed(exc)
            # given back at once, or once the database answers: a claim left to run out its
            # lease kept its attempt, and three outages set a mail aside unanswered
            stranded += [item.message_id for item in batch] + claims.drop()
            with contextlib.suppress(Exception):
                inbox_queue.release_claims(sessions, stranded)
                stranded = []
            stopping.wait(pause)
            continue
        if done:
            on_done()
            continue
        if not stopping.is_set():
            work.wait(POLL_SECONDS)
            work.clear()
    with contextlib.suppress(Exception):  # (else their lease runs out)
        claims.release()
    checker.shutdown()


def process_next(
    sessions: sessionmaker[Session], settings: Settings, now: Callable[[], datetime]
) -> Outcome | None:
    """Claim and process the oldest waiting mail; None when the queue is empty."""
    done = process_batch(sessions, settings, now, limit=1)
    return done[0] if done else None


def process_batch(
    sessions: sessionmaker[Session],
    settings: Settings,
    now: Callable[[], datetime],
    limit: int = BATCH,
    *,
    readers: sessionmaker[Session] | None = None,
) -> list[Outcome]:
    """Claim up to ``limit`` waiting mails, oldest first, and process them in one transaction.

    Group commit: each mail runs in a savepoint of one transaction, so a mail that fails is
    rolled back alone (and counted as a failed attempt) while the effects, answers and "done"
    marks of the mails before it are committed together, all or nothing; the mails after it
    go back to the queue uncounted, so none overtakes it.  A crash before the commit leaves the
    whole batch to be processed again; if the commit itself fails, the mails are processed one
    by one.  Parsing and the slow password checks happen before the write transaction, the
    checks reading the password hashes through ``readers`` (read-only sessions: on SQLite no
    write lock is taken for them) when given.
    """
    batch = claim(sessions, settings, now, limit, readers=readers)
    return process_claimed(sessions, settings, now, batch) if batch is not None else []


def claim(
    sessions: sessionmaker[Session],
    settings: Settings,
    now: Callable[[], datetime],
    limit: int,
    *,
    readers: sessionmaker[Session] | None = None,
) -> list[Prepared] | None:
    """Claim up to ``limit`` waiting mails, parse them and check their passwords (argon2,
    never under the write lock)."""
    with sessions() as session, session.begin():
        claimed = inbox_queue.claim_batch(session, now(), limit)
    if not claimed:
        return None
    words = grammar.command_words()
    prepared = [prepare(settings, words, mail) for mail in claimed]
    check_passwords(readers or sessions, settings, prepared, words, now())
    return prepared


def process_claimed(
    sessions: sessionmaker[Session],
    settings: Settings,
    now: Callable[[], datetime],
    prepared: list[Prepared],
) -> list[Outcome]:
    """Process a claimed batch in one transaction (see :func:`process_batch`)."""
    words = grammar.command_words()
    if len(prepared) > 1:
        try:
            with sessions() as session, session.begin():
                outcomes: list[Outcome] = []
                for item in prepared:
                    if outcomes and outcomes[-1].status is InboxStatus.new:
                        # a mail failed or must wait: the rest waits too, so that no later
                        # mail (a board's next move) overtakes it
                        inbox_queue.requeue(session, [item.message_id])
                        outcomes.append(Outcome(item.message_id, InboxStatus.new, 0, requeued=True))
                        continue
                    outcomes.append(_process_in_savepoint(session, settings, item, words, now))
                _mark_processed(session, outcomes, now())
            return logged(prepared, outcomes)
        except Exception as exc:  # noqa: BLE001 - the commit failed: no mail of the batch took effect
            if unavailable(exc):  # no mail's fault: the worker's loop backs off and retries
                raise
            log.exception("a batch of %d mails failed; processing them one by one", len(prepared))
    outcomes = []
    for item in prepared:  # one transaction each
        try:
            with sessions() as session, session.begin():
                outcome = _process_in_savepoint(session, settings, item, words, now)
                _mark_processed(session, [outcome], now())
                outcomes.append(outcome)
        except Exception as exc:  # noqa: BLE001 - one bad mail must never stop the worker
            if unavailable(exc):  # (as above: not an attempt of this mail's)
                raise
            error = with_traceback(exc)
            log.error("mail %s failed: %s", item.message_id, reason(exc))
            with sessions() as session, session.begin():
                status = _failed_attempt(session, settings, item, error, now)
            outcomes.append(Outcome(item.message_id, status, 0))
    return logged(prepared, outcomes)


def _mark_processed(session: Session, outcomes: list[Outcome], committing: datetime) -> None:
    """Stamp the processed mails with the moment their transaction commits: their effects and
    answers are durable from then on (a batch's mails share it).  One UPDATE for the batch, not
    the rows' objects: their own changes were written when their savepoints ended, and nothing
    reads them again (the session ends with the commit)."""
    done = (InboxStatus.done, InboxStatus.ignored)
    ids = [outcome.message_id for outcome in outcomes if outcome.status in done]
    if ids:
        session.connection().execute(_processed_update(), {"ids": ids, "at": committing})


@lru_cache(maxsize=1)
def _processed_update() -> Update:
    """Built once: every batch runs it."""
    return (
        update(Inbox)
        .where(Inbox.id.in_(bindparam("ids", expanding=True)))
        .values(processed_at=bindparam("at", type_=Inbox.processed_at.type))
    )


def _process_in_savepoint(
    session: Session,
    settings: Settings,
    item: Prepared,
    words: set[str],
    now: Callable[[], datetime],
) -> Outcome:
    """One mail inside the batch's transaction; its failure rolls back its savepoint only."""
    error = item.error
    if item.parsed is not None:
        try:
            with session.begin_nested():
                mask = grammar.password_mask(
                    words, commands=item.parsed.commands, unread=item.parsed.unread_texts
                )
                status, count, note = one_mail.process(
                    session, settings, item.message_id, item.parsed, now(), mask, item.stale
                )
                kept = one_mail.masked_copy(item.parsed, mask)  # no password at rest
                inbox_queue.finish(session, item.message_id, status, kept, note)
            return Outcome(item.message_id, status, count, note=note)
        except Exception as exc:  # noqa: BLE001 - this mail fails, the batch goes on
            if lock_conflict(exc):  # another worker's batch: try again, not a failure
                log.info("mail %s waits for another worker: %s", item.message_id, reason(exc))
                inbox_queue.requeue(session, [item.message_id])
                return Outcome(item.message_id, InboxStatus.new, 0, requeued=True)
            if unavailable(exc):  # the database went away: the whole batch is retried
                raise
            error = with_traceback(exc)
    assert error is not None
    log.error("mail %s failed: %s", item.message_id, stored_reason(error))
    return Outcome(item.message_id, _failed_attempt(session, settings, item, error, now), 0)


def _failed_attempt(
    session: Session,
    settings: Settings,
    item: Prepared,
    error: str,
    now: Callable[[], datetime],
) -> InboxStatus:
    """A failed attempt (its savepoint or transaction rolled back): back to the queue, or set
    aside after the last attempt, and then the sender is told, so that no mail of a person goes
    unanswered for good (it used to wait silently for the operator)."""
    status = inbox_queue.mark_failed(session, item.message_id, error)
    if status is InboxStatus.shunted:
        _tell_set_aside(session, settings, item, now())
    return status


def _tell_set_aside(session: Session, settings: Settings, item: Prepared, now: datetime) -> None:
    """Answer a mail set aside: nothing it asked for was done, the operator may run it again.

    Silence for automatic mail and for a mail that could not even be parsed (nothing says whom
    it came from); within the caps of any unauthenticated answer, since it may be forged; no
    word of the mail quoted (it was never read through, so its passwords are not known).  A
    mail set aside when claimed (workers died on it) is not parsed again here: parsing it may
    be what killed them."""
    parsed = item.parsed
    sender = accounts.parse_address(parsed.sender or "") if parsed is not None else None
    if parsed is None or parsed.is_automatic or not sender:
        return
    try:
        with session.begin_nested():
            if limits.answer_allowance(session, settings, sender, now) < 2:
                return  # (the one "limit reached" notice is not spent on it)
            parsed.sender = sender
            body = render("mail/setaside.txt.j2", attempts=inbox_queue.MAX_ATTEMPTS)
            one_mail.queue_answer(
                session, parsed, item.message_id, Answer(error_subject("pbmserv"), body), now
            )
    except Exception:  # noqa: BLE001 - the mail stays set aside, unanswered, as before
        log.exception("mail %s: the notice that it was set aside failed", item.message_id)

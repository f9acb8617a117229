"""The command worker: turns one stored mail into commands, answers and notifications.

Everything one mail causes (moves, answers to the sender, mails to the other players, the
inbox row marked done) is committed in one transaction, so a crash at any point leaves either
all of it or none of it, and the mail is processed again after a restart: exactly once.
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
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError, PendingRollbackError
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.commands import Answer, Channel, Mail, Request, commands, grammar, run, split
from pbmserv.commands.dispatch import REFUSED, USAGE, error_subject
from pbmserv.commands.runner import failed
from pbmserv.config import Settings
from pbmserv.domain import accounts, confirmation, limits, moves, notify, owner_hold, tokens
from pbmserv.domain.addresses import shown
from pbmserv.errors import reason, stored_reason, with_traceback
from pbmserv.games import get_game
from pbmserv.mail import inbox
from pbmserv.mail.journal import logged
from pbmserv.mail.parse import ParsedMail, board_subject, our_subject, without_reply_prefixes
from pbmserv.mail.prepare import Claims, Prepared, check_passwords, prepare
from pbmserv.mail.replay import Stale
from pbmserv.mail.reply import assemble, bounded, game_word_hint, shortened, tail_sections
from pbmserv.render import subjects
from pbmserv.render.templates import fill, render
from pbmserv.store.db import readonly_sessions
from pbmserv.store.models import Board, Inbox, InboxStatus
from pbmserv.store.outage import Outage, unavailable

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
                inbox.release_claims(sessions, stranded)
                stranded = []
            # more mails are claimed and their password checks started; the oldest ones whose
            # checks are done are processed, the others' checks go on meanwhile
            if claims or inbox.waiting(readers, clock()):
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
                inbox.release_claims(sessions, stranded)
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
        claimed = inbox.claim_batch(session, now(), limit)
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
                        inbox.requeue(session, [item.message_id])
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
                status, count, note = _process(
                    session, settings, item.message_id, item.parsed, now(), mask, item.stale
                )
                kept = masked_copy(item.parsed, mask)  # no password at rest
                inbox.finish(session, item.message_id, status, kept, note)
            return Outcome(item.message_id, status, count, note=note)
        except Exception as exc:  # noqa: BLE001 - this mail fails, the batch goes on
            if _lock_conflict(exc):  # another worker's batch: try again, not a failure
                log.info("mail %s waits for another worker: %s", item.message_id, reason(exc))
                inbox.requeue(session, [item.message_id])
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
    status = inbox.mark_failed(session, item.message_id, error)
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
            body = render("mail/setaside.txt.j2", attempts=inbox.MAX_ATTEMPTS)
            _queue_answer(
                session, parsed, item.message_id, Answer(error_subject("pbmserv"), body), now
            )
    except Exception:  # noqa: BLE001 - the mail stays set aside, unanswered, as before
        log.exception("mail %s: the notice that it was set aside failed", item.message_id)


_LOCK_CONFLICTS = {"40P01", "40001", "55P03"}  # deadlock, serialization, lock not available


def _lock_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` is the database giving up on a lock (PostgreSQL), not a bad mail."""
    orig = getattr(exc, "orig", None)
    return getattr(orig, "sqlstate", None) in _LOCK_CONFLICTS


def _process(
    session: Session,
    settings: Settings,
    message_id: int,
    parsed: ParsedMail,
    now: datetime,
    mask: grammar.PasswordMask,
    stale: Stale | None = None,
) -> tuple[InboxStatus, int, str | None]:
    """Everything one mail causes, inside the caller's transaction (parsed outside it);
    ``mask`` hides the mail's passwords in any text (its command lines read once; the words
    its commands find out to be secret are added to it).  Returns the mail's new status, how
    many answers it got, and why it got none when it did not.

    Every command is executed.  The answers of a mail whose password was right and which came
    from that account's confirmed address are always sent, and so is one that carries a new
    unlock code (:mod:`pbmserv.domain.owner_hold`); any other mail gets at most one answer,
    within the caps of :mod:`pbmserv.domain.limits`.  A ``stale`` mail (taken for a replay)
    runs nothing, and its answer says why, within the same caps.
    """
    sender = accounts.parse_address(parsed.sender or "")
    if parsed.is_automatic or not sender:
        return (
            InboxStatus.ignored,
            0,
            "not answered: " + (parsed.automatic_reason or parsed.no_sender or "no usable sender"),
        )
    parsed.sender = sender
    mail = Mail(says_more=parsed.says_more, finished=[])  # what the lines share
    answers, verified, codes, unlock = (
        _run_commands(session, settings, parsed, message_id, now, mask, mail)
        if stale is None
        else ([stale.answer()], False, [], False)
    )
    silence = stale.note() if stale is not None else None
    if not verified:
        allowance = limits.answer_allowance(session, settings, sender, now)
        if unlock:  # a new unlock code: to the owner whatever the caps (one per hold at most)
            allowance = 2
        if allowance < 2:  # the answer is not sent: the codes it carried were never mailed
            tokens.withdraw(session, codes)
        if allowance == 0:
            answers = []
            why = "not answered: " + limits.silence_reason(session, settings, sender, now)
            silence = f"{silence}; {why}" if silence else why
        elif allowance == 1:
            answers = [
                Answer(
                    subjects.LIMIT_REACHED(),
                    fill(
                        f"This server has answered the mails from {shown(sender)} as often as it "
                        "does in one day. Further mails are not answered until tomorrow (UTC), "
                        "except commands with the right password from a confirmed address."
                    )
                    + "\n",
                )
            ]
    for item in answers:
        _queue_answer(session, parsed, message_id, item, now)
    for board_id in mail.finished or []:  # after the answer, which tells how the game ended
        board = session.get(Board, board_id)
        if board is not None:
            moves.follow_up(session, board, now)
    return InboxStatus.done, len(answers), silence


def _run_commands(
    session: Session,
    settings: Settings,
    parsed: ParsedMail,
    message_id: int,
    now: datetime,
    mask: grammar.PasswordMask,
    mail: Mail,
) -> tuple[list[Answer], bool, list[str], bool]:
    """Run every command line of the mail: one answer for the sender (see mail.reply), whether
    a password was right from that account's confirmed address, the codes the answer carries
    (confirmation of the sender's address, of a challenge), and whether it carries a new
    unlock code.  The mail's ``unlock`` lines are read before any line runs.  Words a command found out
    to be secret (an unknown userid: maybe the password of a line whose userid was forgotten)
    are added to ``mask``, for the answer and the mail's kept copy.  ``mail``: what the lines
    share (the caller follows up the boards they finished once the answer is queued)."""
    if not parsed.commands:
        stranger = not (parsed.sender and limits.is_confirmed(session, parsed.sender))
        return [_no_command(parsed, mask, stranger)], False, [], False
    results: list[tuple[str, list[Answer]]] = []
    verified = False
    source = f"mail:{parsed.message_id or message_id}"
    mail.unlocked = owner_hold.unlocked(session, _unlock_codes(parsed.commands), now)
    for index, line in enumerate(parsed.commands):
        req = Request(
            settings=settings,
            sessions=inbox.SharedSession(session),  # type: ignore[arg-type]
            channel=Channel.mail,
            sender=parsed.sender,
            now=now,
            comment=parsed.comment,
            source=source[:255],
            in_transaction=True,
            mail=mail,
            from_subject=index == 0 and parsed.subject_is_command,
        )
        if len(parsed.commands) == 1:  # (its mail's savepoint is its own)
            items = run(commands, split(line), req)
        else:
            items = _run_line(session, line, req, mask)
        mask.hide(req.secret_words)
        refused = {item.status for item in items} & {USAGE, REFUSED}
        habit = refused and not grammar.command_passwords(line)  # (see _misread)
        if req.login_refused or req.secret_words or USAGE in refused or habit:
            _misread(mask, parsed, line)
        results.append((line, items))
        verified = verified or req.owner_verified
    answer = assemble(
        results,
        subject=parsed.subject or "",
        text=parsed.text or "",
        not_understood=parsed.not_understood,
        notes=parsed.ignored,
        mask=mask,
        stranger=not (parsed.sender and limits.is_confirmed(session, parsed.sender)),
    )
    codes = [
        code
        for _, items in results
        for a in items
        if (code := confirmation.code_in_subject(a.subject))
    ]
    if codes:  # the answer carries a code in its subject, so that a reply confirms
        answer.subject = subjects.CONFIRM(code=codes[0])
    return [answer], verified, codes, mail.unlock_code


def _unlock_codes(lines: list[str]) -> list[str]:
    """The codes of the mail's ``unlock CODE`` lines, wherever they stand in it."""
    found = []
    for line in lines:
        words = split(line)
        if len(words) >= 2 and words[0].lower() == "unlock":
            found.append(words[1])
    return found


def _misread(mask: grammar.PasswordMask, parsed: ParsedMail, line: str) -> None:
    """A line refused as usage was not read as its command, and one whose login was refused
    or with a word that names no player (``polis history 101 bob PASSWORD``) may have been
    misread (``polis move 101 alice alice PASSWORD``), and a refused command that takes no
    password may carry one typed by habit (``polis show 999 bob PASSWORD``), so its password
    may stand anywhere: the line is masked as a line not understood wherever it is quoted (the answer,
    the mail's kept copy, the Subject it came from)."""
    mask.misread(line)
    if parsed.subject_is_command and line == parsed.commands[0]:
        mask.misread(parsed.subject)


def _run_line(
    session: Session, line: str, req: Request, mask: Callable[[str], str]
) -> list[Answer]:
    """One command line of a mail of several, in a savepoint of its own.  A command that fails
    on a fault of ours is answered as such and leaves nothing behind, and the mail's other lines
    still run: the mail used to fail as a whole, tried again in vain and set aside unanswered (a
    board number too big for the database lost the valid move on the line before it).  The
    database's own trouble (a lost connection, a lock, a race) still fails the mail, to be
    tried again.  A mail of one line needs no savepoint more: when it fails, it is tried again,
    and after its last attempt set aside for the operator (``pbmserv mail list``) and its
    sender told (:func:`_tell_set_aside`)."""
    try:
        with session.begin_nested():
            return run(commands, split(line), req)
    except _TRY_AGAIN:
        raise
    except Exception as exc:  # noqa: BLE001 - this line fails, the mail goes on
        if _lock_conflict(exc):
            raise
        log.exception("command failed: %s", mask(line))
        return [Answer(failed(split(line)), COMMAND_FAILED, REFUSED)]


COMMAND_FAILED = (
    "Error: this command failed inside the server (a fault of ours, logged for the operator);\n"
    "nothing of it was done. The other commands of your mail were carried out.\n"
)
_TRY_AGAIN = (OperationalError, InterfaceError, IntegrityError, PendingRollbackError)


def masked_copy(parsed: ParsedMail, mask: Callable[[str], str]) -> bytes:
    """What is kept of a processed mail: its main headers and text, every password masked by
    ``mask`` (the raw bytes, which may hide a password in an encoding, are dropped)."""
    head = [f"{name}: {mask(value)}" for name, value in parsed.headers]
    if parsed.message_id:
        head.append(f"Message-ID: {parsed.message_id}")
    head.append("X-Pbmserv-Masked: passwords masked, raw mail dropped after processing")
    return ("\n".join(head) + "\n\n" + mask(parsed.text or "")).encode("utf-8", "replace")


def _no_command(parsed: ParsedMail, mask: Callable[[str], str], stranger: bool) -> Answer:
    """No command line: how to write one, and what the subject may have meant (``mask``
    hides the mail's passwords).  Of a ``stranger``'s subject only a mistyped command word is
    repeated: anyone can forge his address, and any text (spam) would go with it."""
    subject = parsed.subject or ""
    first = subject.split()[0] if subject.split() else ""
    close = grammar.suggest(first, grammar.command_words()) if first else None
    board = _board_named(subject)
    if stranger:  # its first two words ("Halp BUY CHEAP PILLS at http://..." went back whole)
        words = subject.split()
        shown = mask(" ".join(words[:2]) + (" ..." if len(words) > 2 else "")) if close else ""
    else:
        shown = shortened(mask(subject))
    body = render(
        "mail/nocommand.txt.j2",
        subject=shown,
        suggestion=close or "",
        board=board,
        ours=board is None and our_subject(subject),
        hint=game_word_hint([subject, *parsed.not_understood]),
    )
    unread = parsed.not_understood[1:] if parsed.subject_not_understood else parsed.not_understood
    body += tail_sections(unread, parsed.ignored, mask, hint=False)  # (named above)
    return Answer(error_subject("pbmserv"), body, USAGE)


def _board_named(subject: str) -> dict[str, str] | None:
    """The board a subject of our board mails names (``Re: Pylon Board 101 alice``): a reply
    to it with the move alone gets the line to send back."""
    named = board_subject(without_reply_prefixes(subject))
    if named is None:
        return None
    word, number, userid = named
    try:
        game = get_game(word)
    except KeyError:
        return None
    chat = (userid or "").casefold() == "chat"  # a reply to a chat mail: how to chat back
    if not userid or userid.casefold() in subjects.BOARD_TOPICS or accounts.check_userid(userid):
        userid = "USERID"
    named_board = {"title": game.display_name, "game": game.name, "number": str(number)}
    return {**named_board, "userid": userid, "chat": "yes" if chat else ""}


def _queue_answer(
    session: Session, parsed: ParsedMail, message_id: int, item: Answer, now: datetime
) -> None:
    """Queue an answer to the mail, its text cut to :data:`pbmserv.mail.reply.MAX_ANSWER_BYTES`."""
    assert parsed.sender is not None
    references = " ".join(
        [*parsed.references, parsed.message_id] if parsed.message_id else parsed.references
    )
    notify.queue_mail(
        session,
        parsed.sender,
        item.subject,
        bounded(item.body),
        now,
        in_reply_to=parsed.message_id,
        references=references or None,
        inbox_id=message_id,
    )

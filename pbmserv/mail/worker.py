"""The command worker: turns one stored mail into commands, answers and notifications.

Everything one mail causes (moves, answers to the sender, mails to the other players, the
inbox row marked done) is committed in one transaction, so a crash at any point leaves either
all of it or none of it, and the mail is processed again after a restart: exactly once.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from pbmserv.commands import Answer, Channel, Request, commands, grammar, run, split
from pbmserv.commands.dispatch import USAGE
from pbmserv.config import Settings
from pbmserv.domain import accounts, limits
from pbmserv.mail import inbox
from pbmserv.mail.parse import ParsedMail, parse_message
from pbmserv.mail.reply import assemble, tail_sections
from pbmserv.render.templates import render
from pbmserv.store.models import Inbox, InboxStatus, Outbox, OutboxStatus

log = logging.getLogger("pbmserv.mail.worker")


@dataclass
class Outcome:
    message_id: int
    status: InboxStatus
    answers: int


def process_next(
    sessions: sessionmaker[Session], settings: Settings, now: Callable[[], datetime]
) -> Outcome | None:
    """Claim and process the oldest waiting mail; None when the queue is empty."""
    with sessions() as session, session.begin():
        row = inbox.claim(session, now())
        if row is None:
            return None
        message_id, raw, mail_from = row.id, row.raw, row.mail_from
    try:
        words = grammar.command_words()
        parsed = parse_message(
            raw,
            mail_from,
            command_words=words,
            max_commands=settings.max_commands_per_mail,
            server_addresses=[settings.server_address, *settings.accept_recipients],
        )
        if not parsed.is_automatic:
            credentials = [
                pair
                for line in parsed.commands
                for pair in grammar.command_credentials(line, words)
            ]
            accounts.preverify(sessions, settings, credentials)
        with sessions() as session, session.begin():
            row = session.get(Inbox, message_id)
            assert row is not None
            status, count = _process(session, settings, row, parsed, now())
            row.raw = masked_copy(parsed, words)  # no password at rest
            row.status = status
            row.processed_at = now()
            row.claimed_by = None
        return Outcome(message_id, status, count)
    except Exception:  # noqa: BLE001 - one bad mail must never stop the worker
        error = traceback.format_exc()
        log.error("mail %s failed: %s", message_id, error.splitlines()[-1])
        inbox.record_failure(sessions, message_id, error)
        return Outcome(message_id, InboxStatus.new, 0)


def _process(
    session: Session, settings: Settings, row: Inbox, parsed: ParsedMail, now: datetime
) -> tuple[InboxStatus, int]:
    """Everything one mail causes, inside the caller's transaction (parsed outside it).

    Every command is executed.  The answers of a mail whose password was right and which came
    from that account's confirmed address are always sent; any other mail gets at most one
    answer, within the caps of :mod:`pbmserv.domain.limits`.
    """
    sender = accounts.parse_address(parsed.sender or "")
    if parsed.is_automatic or not sender:
        row.last_error = "not answered: " + (parsed.automatic_reason or "no usable sender")
        return InboxStatus.ignored, 0
    parsed.sender = sender
    answers, verified = _run_commands(session, settings, parsed, row, now)
    if not verified:
        allowance = limits.answer_allowance(session, settings, sender, now)
        if allowance == 0:
            row.last_error = "not answered: daily answer limit reached"
            return InboxStatus.done, 0
        if allowance == 1:
            answers = [
                Answer(
                    "pbmserv: answer limit reached",
                    f"This server has answered the mails from {sender} as often as it does in "
                    "one day. Further mails are not answered until tomorrow (UTC), except "
                    "commands with the right password from a confirmed address.\n",
                )
            ]
    for item in answers:
        _queue_answer(session, parsed, row, item, now)
    return InboxStatus.done, len(answers)


def _run_commands(
    session: Session, settings: Settings, parsed: ParsedMail, row: Inbox, now: datetime
) -> tuple[list[Answer], bool]:
    """Run every command line of the mail: one answer for the sender (see mail.reply), and
    whether a password was right from that account's confirmed address."""
    if not parsed.commands:
        return [_no_command(parsed)], False
    results: list[tuple[str, list[Answer]]] = []
    verified = False
    source = f"mail:{parsed.message_id or row.id}"
    for line in parsed.commands:
        req = Request(
            settings=settings,
            sessions=inbox.SharedSession(session),  # type: ignore[arg-type]
            channel=Channel.mail,
            sender=parsed.sender,
            now=now,
            comment=parsed.comment,
            source=source[:255],
        )
        results.append((line, run(commands, split(line), req)))
        verified = verified or req.owner_verified
    words = grammar.command_words()
    answer = assemble(
        results,
        subject=parsed.subject or "",
        text=parsed.text or "",
        not_understood=parsed.not_understood,
        notes=parsed.ignored,
        mask=lambda text: grammar.mask_passwords(text, words, commands=parsed.commands),
    )
    confirming = [
        a.subject for _, items in results for a in items if a.subject.startswith("confirm ")
    ]
    if confirming:  # the answer carries the code in its subject, so that a reply confirms
        answer.subject = confirming[0]
    return [answer], verified


def masked_copy(parsed: ParsedMail, words: set[str]) -> bytes:
    """What is kept of a processed mail: its main headers and text, every password masked
    (the raw bytes, which may hide a password in an encoding, are dropped)."""
    mask = lambda text: grammar.mask_passwords(text, words, commands=parsed.commands)  # noqa: E731
    head = [f"{name}: {mask(value)}" for name, value in parsed.headers]
    if parsed.message_id:
        head.append(f"Message-ID: {parsed.message_id}")
    head.append("X-Pbmserv-Masked: passwords masked, raw mail dropped after processing")
    return ("\n".join(head) + "\n\n" + mask(parsed.text or "")).encode("utf-8", "replace")


def _no_command(parsed: ParsedMail) -> Answer:
    """No command line: how to write one, and what the subject may have meant."""
    subject = parsed.subject or ""
    first = subject.split()[0] if subject.split() else ""
    close = grammar.suggest(first, grammar.command_words()) if first else None
    body = render(
        "mail/nocommand.txt.j2",
        subject=grammar.mask_passwords(subject),
        suggestion=close or "",
        notes=[],
    )
    body += tail_sections(parsed.not_understood, parsed.ignored)
    return Answer("pbmserv error", body, USAGE)


def _queue_answer(
    session: Session, parsed: ParsedMail, row: Inbox, item: Answer, now: datetime
) -> None:
    assert parsed.sender is not None
    references = " ".join(
        [*parsed.references, parsed.message_id] if parsed.message_id else parsed.references
    )
    session.add(
        Outbox(
            recipient=parsed.sender,
            subject=item.subject,
            body=item.body,
            in_reply_to=parsed.message_id,
            references=references or None,
            created=now,
            status=OutboxStatus.pending,
            next_attempt=now,
            inbox_id=row.id,
        )
    )

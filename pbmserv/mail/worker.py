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
from pbmserv.domain import accounts
from pbmserv.mail import inbox
from pbmserv.mail.parse import ParsedMail, parse_message
from pbmserv.mail.reply import assemble, tail_sections
from pbmserv.render.templates import render
from pbmserv.store.models import AnswerCount, Inbox, InboxStatus, Outbox, OutboxStatus

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
    """Everything one mail causes, inside the caller's transaction (parsed outside it)."""
    if parsed.is_automatic or not parsed.sender:
        row.last_error = "not answered: " + (parsed.automatic_reason or "no usable sender")
        return InboxStatus.ignored, 0
    allowance = _answer_allowance(session, settings, parsed.sender, now)
    if allowance == 0:
        row.last_error = "not answered: daily answer limit reached"
        return InboxStatus.ignored, 0
    answers = _run_commands(session, settings, parsed, row, now)
    if allowance == 1:
        answers = [
            Answer(
                "pbmserv: answer limit reached",
                f"This server has answered {settings.max_answers_per_day} mails from "
                f"{parsed.sender} today. Further mails are not answered until tomorrow (UTC).\n",
            )
        ]
    for item in answers:
        _queue_answer(session, parsed, row, item, now)
    return InboxStatus.done, len(answers)


def _answer_allowance(session: Session, settings: Settings, sender: str, now: datetime) -> int:
    """2: answer normally; 1: send the one last notice; 0: stay silent (counts the answer)."""
    day = now.strftime("%Y-%m-%d")
    key = sender.lower()
    counter = session.get(AnswerCount, (key, day))
    if counter is None:
        counter = AnswerCount(sender=key, day=day, count=0)
        session.add(counter)
    counter.count += 1
    if counter.count <= settings.max_answers_per_day:
        return 2
    return 1 if counter.count == settings.max_answers_per_day + 1 else 0


def _run_commands(
    session: Session, settings: Settings, parsed: ParsedMail, row: Inbox, now: datetime
) -> list[Answer]:
    """Run every command line of the mail; one answer for the sender (see mail.reply)."""
    if not parsed.commands:
        return [_no_command(parsed)]
    results: list[tuple[str, list[Answer]]] = []
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
    words = grammar.command_words()
    return [
        assemble(
            results,
            subject=parsed.subject or "",
            text=parsed.text or "",
            not_understood=parsed.not_understood,
            notes=parsed.ignored,
            mask=lambda text: grammar.mask_passwords(text, words, commands=parsed.commands),
        )
    ]


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

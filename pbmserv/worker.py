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

from pbmserv import accounts, inbox
from pbmserv.config import Settings
from pbmserv.dispatch import Answer, Request, run, split
from pbmserv.mail.parse import ParsedMail, command_credentials, mask_passwords, parse_message
from pbmserv.mail.reply import assemble, tail_sections
from pbmserv.render import render
from pbmserv.store.models import AnswerCount, Inbox, InboxStatus, Outbox, OutboxStatus

log = logging.getLogger("pbmserv.worker")


@dataclass
class Outcome:
    message_id: int
    status: InboxStatus
    answers: int


def command_words() -> set[str]:
    """The words that start a command line: every top-level command, game and alias."""
    from pbmserv.commands import commands
    from pbmserv.games import all_games

    words = {"pbmserv", *commands.commands, *getattr(commands, "aliases", {})}
    for game in all_games():
        words.update([game.name, *game.aliases])
    return {w.lower() for w in words}


def command_verbs() -> set[str]:
    """The words that may follow a command word: every game's commands and their aliases."""
    import click

    from pbmserv.commands import commands
    from pbmserv.games import all_games

    ctx = click.Context(commands)
    verbs: set[str] = set()
    for game in all_games():
        group = commands.get_command(ctx, game.name)
        if isinstance(group, click.Group):
            verbs.update(group.commands)
            verbs.update(getattr(group, "aliases", {}))
    for name, command in commands.commands.items():
        if isinstance(command, click.Group) and name not in verbs:
            verbs.update(command.commands)
    return {v.lower() for v in verbs}


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
        words = command_words()
        parsed = parse_message(
            raw,
            mail_from,
            command_words=words,
            command_verbs=command_verbs(),
            max_commands=settings.max_commands_per_mail,
            server_addresses=[settings.server_address, *settings.accept_recipients],
        )
        if not parsed.is_automatic:
            credentials = [
                pair for line in parsed.commands for pair in command_credentials(line, words)
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
    from pbmserv.commands import commands

    if not parsed.commands:
        body = render("mail/nocommand.txt.j2", subject=parsed.subject or "")
        body += tail_sections(parsed.not_understood, parsed.ignored)
        return [Answer("pbmserv error", body, 2)]
    results: list[tuple[str, list[Answer]]] = []
    source = f"mail:{parsed.message_id or row.id}"
    for line in parsed.commands:
        req = Request(
            settings=settings,
            sessions=inbox.SharedSession(session),  # type: ignore[arg-type]
            channel="mail",
            sender=parsed.sender,
            now=now,
            comment=parsed.comment,
            source=source[:255],
        )
        results.append((line, run(commands, split(line), req)))
    words = command_words()
    return [
        assemble(
            results,
            subject=parsed.subject or "",
            text=parsed.text or "",
            not_understood=parsed.not_understood,
            notes=parsed.ignored,
            mask=lambda text: mask_passwords(text, words, commands=parsed.commands),
        )
    ]


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

"""Everything one mail causes: its command lines run, one answer queued for its sender, the
boards it finished followed up, and the copy of it that is kept, every password masked.

The worker (:mod:`pbmserv.mail.worker`) calls :func:`process` inside the savepoint it gives the
mail in its batch's transaction, so that all of it or none of it is committed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError, PendingRollbackError
from sqlalchemy.orm import Session

from pbmserv.commands import Answer, Channel, Mail, Request, commands, grammar, run, spelling, split
from pbmserv.commands.dispatch import REFUSED, USAGE, error_subject
from pbmserv.commands.runner import failed
from pbmserv.config import Settings
from pbmserv.domain import accounts, confirmation, limits, moves, notify, owner_hold, tokens
from pbmserv.domain.addresses import shown
from pbmserv.games import get_game
from pbmserv.mail.parse import ParsedMail, board_subject, our_subject, without_reply_prefixes
from pbmserv.mail.replay import Refusal
from pbmserv.mail.reply import assemble, bounded, cut_quoted_line, game_word_hint, tail_sections
from pbmserv.render import subjects
from pbmserv.render.templates import fill, render
from pbmserv.store.models import Board, InboxStatus
from pbmserv.store.outage import lock_conflict

log = logging.getLogger("pbmserv.mail.worker")  # (the worker's log, as operators know it)


def process(
    session: Session,
    settings: Settings,
    message_id: int,
    parsed: ParsedMail,
    now: datetime,
    mask: grammar.PasswordMask,
    stale: Refusal | None = None,
) -> tuple[InboxStatus, int, str | None]:
    """Everything one mail causes, inside the caller's transaction (parsed outside it);
    ``mask`` hides the mail's passwords in any text (its command lines read once; the words
    its commands find out to be secret are added to it).  Returns the mail's new status, how
    many answers it got, and why it got none when it did not.

    Every command is executed.  The answers of a mail whose password was right and which came
    from that account's confirmed address are always sent, and so is one that carries a new
    unlock code (:mod:`pbmserv.domain.owner_hold`); any other mail gets at most one answer,
    within the caps of :mod:`pbmserv.domain.limits`.  A ``stale`` mail (no Date, or a replay's)
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
        queue_answer(session, parsed, message_id, item, now)
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
            sessions=SharedSession(session),  # type: ignore[arg-type]
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
        if not grammar.read_for_passwords(line, req, items):
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
    """A line not read for its passwords (:func:`pbmserv.commands.grammar.read_for_passwords`)
    may have one anywhere: it is masked as a line not understood wherever it is quoted (the
    answer, the mail's kept copy, the Subject it came from)."""
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
    sender told (by the worker, :mod:`pbmserv.mail.worker`)."""
    try:
        with session.begin_nested():
            return run(commands, split(line), req)
    except _TRY_AGAIN:
        raise
    except Exception as exc:  # noqa: BLE001 - this line fails, the mail goes on
        if lock_conflict(exc):
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
    close = spelling.suggest(first, grammar.command_words()) if first else None
    board = _board_named(subject)
    if stranger:  # its first two words ("Halp BUY CHEAP PILLS at http://..." went back whole)
        words = subject.split()
        shown = mask(" ".join(words[:2]) + (" ..." if len(words) > 2 else "")) if close else ""
    else:
        shown = cut_quoted_line(mask(subject))
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


def queue_answer(
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


class SharedSession:
    """One session for everything a mail's commands do, so that the whole mail commits at once.

    Commands open ``with sessions() as s, s.begin():`` blocks; here those blocks become
    savepoints inside the worker's transaction, and closing does nothing.  Either all of a
    mail's effects, its answers and its "done" mark are committed, or none is.
    """

    def __init__(self, session: Session) -> None:
        self._session = session

    def __call__(self) -> SharedSession:
        return self

    def __getattr__(self, name: str) -> object:
        return getattr(self._session, name)

    def __enter__(self) -> SharedSession:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def begin(self) -> object:
        return self._session.begin_nested()

    def close(self) -> None:
        return None

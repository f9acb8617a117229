"""From the raw bytes of an incoming mail to the command lines and the comment it holds.

``parse_message`` never raises: whatever a mail looks like (broken MIME, unknown charsets,
HTML only, no headers at all) it returns a :class:`ParsedMail` with what could be read and a
note in ``ignored`` about what was left out.  What is a command line comes from the declared
commands (:mod:`pbmserv.commands.grammar`), which also hides passwords.

Example::

    >>> p = parse_message(b"From: a@example.org\\nSubject: ploy move 101 alice pw e4-e5\\n\\nHi!\\n")
    >>> p.commands, p.comment
    (['ploy move 101 alice pw e4-e5'], 'Hi!')
"""

from __future__ import annotations

import email
import email.header
import email.utils
import itertools
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from email import errors
from email.message import Message
from email.parser import BytesParser

from pbmserv.commands import grammar, registry
from pbmserv.mail.decode import (
    MAX_HEADER_LINES,
    MAX_PARTS,
    collect_text,
    decode_bytes,
    header_lines_cut,
    parts_read,
    unsurrogate,
)
from pbmserv.mail.headers import addresses as _addresses
from pbmserv.mail.headers import not_one as _not_one
from pbmserv.mail.headers import raw_header as _raw_header
from pbmserv.mail.headers import usable as _usable
from pbmserv.mail.lines import clean_command, line_kind, read_body
from pbmserv.mail.policy import PARSED_VALUE_CHARS, POLICY
from pbmserv.numbers import whole_number
from pbmserv.render import subjects

MAX_COMMANDS = 10
MAX_COMMENT_LINES = 200
MAX_REFERENCES = 20
# How much of a mail's text is read, and kept (masked) once it is processed.  Every line read
# is sorted, and every line kept is masked, by the grammar: tens of microseconds a line, more
# for a line full of command words.  Commands stand at the top of a mail, or below a quote;
# a thousand lines hold any reply to a board mail, and bound what one mail costs whatever
# its size (a mail may have 1 MB: 70,000 short lines took a minute).
MAX_TEXT_LINES = 1000
MAX_TEXT_CHARS = 64_000
MAX_HEADER_CHARS = 1000  # of the Subject and the headers kept (a Subject is one command line)

_MSGID = re.compile(r"<[\x21-\x3b\x3d\x3f-\x7e]{1,250}>")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


@dataclass
class ParsedMail:
    """What one incoming mail says, ready for the dispatcher.

    ``sender`` is the address to answer (Reply-To, else From, else the envelope sender) or None
    when none is usable; ``no_sender`` says why when a header names several addresses or a
    group (then we cannot tell whom to answer, and answer nobody).  ``commands`` are the command lines (the subject first when it is
    one), at most ``max_commands``.  ``comment`` is the rest of the body without signature and
    quoted history: it is shown under the board.  ``ignored`` holds human-readable notes about
    what was left out; ``not_understood`` the lines that look like a command but are none
    (reported to the sender, never part of the comment), at most ``max_commands`` of them.
    ``is_automatic`` mails (bounces, vacation replies, lists, our own mail) must never be
    answered; ``automatic_reason`` says why.  ``text`` is the decoded body as
    far as it is read (``MAX_TEXT_LINES``, ``MAX_TEXT_CHARS``), the lines not understood past
    the limit replaced by :data:`pbmserv.mail.lines.LEFT_OUT` (for quoting in error mails,
    after :func:`mask_passwords`, and for the mail's kept copy); ``headers`` the decoded
    From/To/Cc/Date/Subject for the same purpose.  ``references`` is the thread to continue:
    the mail's References (or In-Reply-To) ids, without its own Message-ID.
    """

    sender: str | None = None
    no_sender: str | None = None
    sender_name: str = ""
    message_id: str | None = None
    subject: str = ""
    commands: list[str] = field(default_factory=list)
    comment: str = ""
    ignored: list[str] = field(default_factory=list)
    is_automatic: bool = False
    automatic_reason: str | None = None
    references: list[str] = field(default_factory=list)
    in_reply_to: str | None = None
    subject_is_command: bool = False
    subject_not_understood: bool = False  # then it is ``not_understood[0]`` (prefixes dropped)
    not_understood: list[str] = field(default_factory=list)
    text: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)

    @property
    def unread_texts(self) -> list[str]:
        """The texts to mask as lines not understood: those lines, and the Subject as it
        stands (with its ``Re:``) when it is one of them, or when the mail has no command line
        at all (the answer repeats it: a userid and password without their command word, an
        operator's line without ``pbmserv``), unless it is one of our own subjects."""
        subject = self.subject_not_understood or (
            not self.commands and self.subject.strip() and not our_subject(self.subject)
        )
        return [*self.not_understood, *([self.subject] if subject else [])]

    @property
    def says_more(self) -> bool:
        """Whether the body says anything of its own besides the Subject's command line: text,
        a command line or a line not understood (quoted text and a signature are not its own).
        A reply that does is no yes to the code its Subject carries.  A bare ``confirm CODE``
        line is a yes too, not words of its own: an answer with several codes carries one in
        its Subject and tells to send the others' lines, and a reply that did was refused."""
        body = self.commands[1:] if self.subject_is_command else self.commands
        body_commands = [line for line in body if not _bare_confirm(line)]
        body_unread = len(self.not_understood) - self.subject_not_understood
        return bool(self.comment.strip()) or bool(body_commands) or body_unread > 0

    @property
    def raw_headers(self) -> list[tuple[str, str]]:
        """Alias of ``headers`` (the headers shown when the mail is quoted)."""
        return self.headers


def _bare_confirm(line: str) -> bool:
    """``confirm CODE`` and nothing more (``pbmserv confirm CODE`` too).

    >>> _bare_confirm("confirm ABCD"), _bare_confirm("confirm ABCD no"), _bare_confirm("help")
    (True, False, False)
    """
    words = grammar.split_words(line)
    if words and words[0].lower() == registry.PREFIX:
        words = words[1:]
    return len(words) == 2 and words[0].lower() == "confirm"


# ----------------------------------------------------------------------------- headers


def _header(msg: Message, name: str) -> str:
    """A header's decoded value ('' if missing); never raises on malformed headers."""
    try:
        value = msg.get(name)
        if value is None:
            return ""
        text = " ".join(grammar.split_words(str(value)))
        if "\ufffd" not in text:
            return unsurrogate(text)
    except Exception:  # noqa: BLE001
        pass
    try:
        for key, raw in msg.raw_items():  # type: ignore[attr-defined]
            if key.lower() == name.lower():
                chunks = email.header.decode_header(str(raw)[:PARSED_VALUE_CHARS])
                text = "".join(
                    decode_bytes(c, cs) if isinstance(c, bytes) else c for c, cs in chunks
                )
                return unsurrogate(" ".join(grammar.split_words(text)))
    except Exception:  # noqa: BLE001
        pass
    return ""


# ----------------------------------------------------------------------------- body


def is_command(line: str, command_words: Collection[str]) -> bool:
    """Whether a line's first word is a command word (case-insensitive, ``**`` skipped)."""
    words = [w for w in line.split() if w != "**"]
    return bool(words) and words[0].lower() in command_words


def without_reply_prefixes(subject: str) -> str:
    """A subject without its ``Re:``/``Fwd:``... prefixes and ``**`` markers, blanks single."""
    line = clean_command(subject)
    while True:
        shorter = clean_command(subjects.without_reply_prefixes(line).removeprefix("**"))
        if shorter == line:
            return line
        line = shorter


def subject_command(subject: str, command_words: Collection[str]) -> str | None:
    """The command in a subject, or None: ``Re:``/``Fwd:``... prefixes and ``**`` dropped.

    Our own subjects replied to (:func:`our_subject`) are not commands, so replying to a
    board mail, a help or an error with the command in the body just works.
    """
    line = without_reply_prefixes(subject)
    if not is_command(line, command_words) or our_subject(subject):
        return None
    return line


def our_subject(subject: str) -> bool:
    """Whether ``subject`` is that of one of our mails, replied to or forwarded
    (``Re: List of Ploy games``, ``Re: pbmserv Error``; :func:`pbmserv.render.subjects.ours`),
    or a board mail's (``Ploy Board 101 alice``, with or without ``Re:``): never a command
    line.  A Subject without ``Re:`` that reads as one of ours (``Ploy help``) is typed by
    the player, and runs; ``Re: confirm CODE`` is meant to run."""
    line = without_reply_prefixes(subject)
    if board_subject(line) is not None:
        return True
    if line == clean_command(subject):  # no reply prefix: typed by the player
        return False
    words = line.split()  # a reply: a board subject with anything after it, a filter's tag
    if len(words) >= 3 and words[1].lower() == "board" and whole_number(words[2]) is not None:
        return True  # ("Re: Polis Board 101 bob [SPAM]" ran: "[SPAM]" as the password)
    return subjects.ours(line) or subjects.ours(_TAGS.sub("", line))


# what a filter or a mail program adds after a Subject: "[SPAM]", "(fwd)"
_TAGS = re.compile(r"(?:\s*(?:\[[^\]]*\]|\([^)]*\)))+\s*$")


def board_subject(line: str) -> tuple[str, int, str | None] | None:
    """The game word, board number and trailing word (the player to move, or ``Error``) of
    one of our board mail subjects (``Ploy Board 101 alice``), prefixes already dropped."""
    words = line.split()
    if len(words) not in (3, 4) or words[1].lower() != "board":
        return None
    number = whole_number(words[2])
    if number is None:
        return None
    return words[0], number, words[3] if len(words) == 4 else None


# ----------------------------------------------------------------------------- automatic mail

# Mail from robots is never answered: an answer to a robot starts a mail loop.  The rules are
# tables, each row one rule, so that a new kind of robot is one more row (and one more test case).

# The local part of a robot's address (envelope or header sender; a "+detail" dropped), and why.
ROBOT_SENDERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"mailer-daemon|postmaster"), "sent by {local}"),
    (re.compile(r"owner-.+|.+-owner"), "sent by a list owner ({local})"),
    (re.compile(r".+-bounces?"), "sent by a bounce address ({local})"),
    (re.compile(r"bounces?(-.+)?"), "sent by a bounce address ({local})"),  # VERP: bounce-12-..
    (re.compile(r".+-request"), "sent by a list's request address ({local})"),
    (re.compile(r"(no|do[-_.]?not)[-_.]?reply(-.+)?"), "sent by a no-reply address ({local})"),
)
# Precedence values of bulk, list and automatic mail.
ROBOT_PRECEDENCE = ("bulk", "list", "junk", "auto_reply", "auto-reply")
# Headers that only mailing lists (any value) or automatic replies (any value but a "no") set.
LIST_HEADERS = ("List-Id", "List-Unsubscribe")
AUTOREPLY_HEADERS = ("X-Autoreply", "X-Autorespond", "X-Autoresponder", "X-Autogenerated")
# Exchange and Outlook mark their automatic mail with this header, whatever its value.
SUPPRESS_HEADERS = ("X-Auto-Response-Suppress",)
# Subjects of automatic replies and bounces whose sender sets no header at all.
ROBOT_SUBJECTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.I), reason)
    for pattern, reason in (
        (r"automatic reply\b", "an automatic reply (Subject: Automatic reply)"),
        (r"auto:", "an automatic reply (Subject: Auto:)"),
        (r"out of (the )?office\b", "an automatic reply (Subject: Out of Office)"),
        (r"auto[- ]?reply\b", "an automatic reply (Subject: Autoreply)"),
        (r"undeliverable\b", "a bounce (Subject: Undeliverable)"),
        (r"delivery status notification\b", "a bounce (Subject: Delivery Status Notification)"),
        (r"\[auto[- ]?reply\]", "an automatic reply (Subject: [Auto-Reply])"),
        (r"automatische antwort\b", "an automatic reply (Subject: Automatische Antwort)"),
        (r"r[ée]ponse automatique\b", "an automatic reply (Subject: Réponse automatique)"),
        (r"risposta automatica\b", "an automatic reply (Subject: Risposta automatica)"),
        (r"respuesta autom[aá]tica\b", "an automatic reply (Subject: Respuesta automática)"),
        (r"abwesend\b", "an automatic reply (Subject: Abwesend)"),
        (r"abwesenheitsnotiz\b", "an automatic reply (Subject: Abwesenheitsnotiz)"),
        (r"vacation:", "an automatic reply (Subject: Vacation:)"),  # (not the command)
        (r"away from (my|the) (desk|office)\b", "an automatic reply (Subject: Away from)"),
    )
)


def _robot_sender(address: str) -> str | None:
    """Why ``address`` is a robot's (see ``ROBOT_SENDERS``), or None."""
    local = address.strip().strip("<>").rpartition("@")[0] or address.strip().strip("<>")
    local = local.lower().partition("+")[0]
    for pattern, reason in ROBOT_SENDERS:
        if pattern.fullmatch(local):
            return reason.format(local=local)
    return None


def _automatic(
    msg: Message | None, sender: str | None, envelope_from: str | None, servers: set[str]
) -> str | None:
    if envelope_from is not None and envelope_from.strip() in ("", "<>"):
        return "empty envelope sender (a bounce)"
    for who in (envelope_from or "", sender or ""):
        if who and (reason := _robot_sender(who)):
            return reason
    if msg is None:
        return None
    envelope = (envelope_from or "").strip("<> ").lower()
    if (sender and sender.lower() in servers) or envelope in servers:
        return "sent by this server"
    from_addrs = [a for _, a in _addresses(msg, "From")]
    if {a.lower() for a in from_addrs} & servers:
        return "sent by this server"
    for address in from_addrs:
        if reason := _robot_sender(address):
            return reason
    if _header(msg, "X-Pbmserv-Server"):
        return "a pbmserv mail (X-Pbmserv-Server)"
    try:
        # (a report's parts come first: the first parts tell, however many the mail has)
        types = {p.get_content_type() for p in itertools.islice(msg.walk(), MAX_PARTS)}
    except Exception:  # noqa: BLE001
        types = {msg.get_content_type()}
    if "Return-Path" in msg and _header(msg, "Return-Path").strip() in ("", "<>"):
        return "empty Return-Path (a bounce)"
    if "multipart/report" in types or "message/delivery-status" in types:
        return "a delivery status report"
    auto = _header(msg, "Auto-Submitted").split(";")[0].strip().lower()
    if auto and auto != "no":
        return f"Auto-Submitted: {auto}"
    precedence = _header(msg, "Precedence").lower()
    if precedence in ROBOT_PRECEDENCE:
        return f"Precedence: {precedence}"
    for name in LIST_HEADERS:
        if _header(msg, name):
            return f"a mailing list mail ({name})"
    for name in AUTOREPLY_HEADERS:
        value = _header(msg, name).lower()
        if value and value not in ("no", "false", "0"):
            return f"an automatic reply ({name})"
    for name in SUPPRESS_HEADERS:
        if name in msg:  # present at all (read without parsing its value)
            return f"an automatic reply ({name})"
    return None


def _robot_subject(subject: str, commands: bool) -> str | None:
    """Why a Subject reads as an automatic reply's (see ``ROBOT_SUBJECTS``), or None.  People
    write such words too ("Vacation: two weeks" above a ``vacation`` line): in a mail with
    command lines only an automatic reply to one of our mails counts ("Abwesend: Polis Board
    101 bob"), and the person's commands run."""
    for pattern, reason in ROBOT_SUBJECTS:
        if (found := pattern.match(subject)) is None:
            continue
        rest = without_reply_prefixes(subject[found.end() :].lstrip(" :-"))
        if not commands or board_subject(rest) is not None or subjects.ours(rest):
            return reason
    return None


# ----------------------------------------------------------------------------- the parser


def parse_message(
    raw: bytes,
    envelope_from: str | None = None,
    *,
    command_words: Collection[str] | None = None,
    max_commands: int = MAX_COMMANDS,
    server_addresses: Iterable[str] = (),
    command_verbs: Collection[str] | None = None,
) -> ParsedMail:
    """Read one mail; never raises.  See :class:`ParsedMail` for the fields.

    ``envelope_from`` is the SMTP ``MAIL FROM`` ('' or '<>' for bounces; None when unknown).
    ``command_words`` are the words that start a command line, compared case-insensitively
    (default: the declared commands, :func:`pbmserv.commands.grammar.command_words`);
    ``command_verbs`` the words that may follow one (default: the declared sub-commands): a
    line inside prose is a command only with one of them.  ``server_addresses`` are our own
    addresses: mail from them is automatic.
    """
    words = {
        w.lower() for w in (grammar.command_words() if command_words is None else command_words)
    }
    servers = {a.strip("<>").lower() for a in server_addresses if a}
    result = ParsedMail()
    if isinstance(raw, str):  # be kind to callers
        raw = raw.encode("utf-8", "surrogateescape")
    msg: Message | None
    read, long_header, long_part_header = header_lines_cut(parts_read(raw, MAX_TEXT_LINES))
    if long_part_header:
        result.ignored.append(
            "header lines of the parts left out (a part's header is read up to 100 lines, 2,000 in all)"
        )
    try:
        msg = email.message_from_bytes(read, policy=POLICY)
    except Exception:  # noqa: BLE001 - parts nested 1,000 deep: the parser's recursion
        try:  # its headers at least: the Subject's command, whom to answer, a bounce's marks
            msg = BytesParser(policy=POLICY).parsebytes(read, headersonly=True)
            result.ignored.append("the MIME structure could not be read; the mail is read as text")
        except Exception:  # noqa: BLE001
            msg = None
    texts: list[str] = []
    if msg is not None:
        try:
            _read_headers(msg, result, envelope_from)
        except Exception:  # noqa: BLE001
            result.ignored.append("some headers could not be read")
        if not msg.keys() or any(
            isinstance(d, errors.MissingHeaderBodySeparatorDefect) for d in msg.defects
        ):
            result.ignored.append("the mail has no proper header; it is read as text")
        try:
            collect_text(msg, texts, result.ignored)
        except Exception:  # noqa: BLE001
            texts = []
            msg_body = _fallback_body(raw)
            texts.append(msg_body)
            result.ignored.append("the MIME structure could not be read; the mail is read as text")
    else:
        texts.append(_fallback_body(raw))
        result.ignored.append("the mail could not be parsed; it is read as plain text")
    if result.sender is None and envelope_from and not result.no_sender:
        result.sender = _usable(envelope_from)
    text = "\n\n".join(t for t in texts if t.strip())
    text = _CONTROL.sub("", unsurrogate(text).replace("\r\n", "\n").replace("\r", "\n"))
    text = grammar.plain_blanks(text)  # once: what runs and what is masked split words alike
    text = _read_part(text, result.ignored)
    result.text = text
    try:
        reason = _automatic(msg, result.sender, envelope_from, servers)
    except Exception:  # noqa: BLE001
        reason = None
    if long_header and reason is None:  # (its end, where a robot's marks may be, is unread)
        reason = f"a header of more than {MAX_HEADER_LINES:,} lines (a mail loop?)"
    verbs = command_verbs if command_verbs is not None else declared_verbs()
    _read_commands(result, text, words, max_commands, verbs)
    if reason is None and msg is not None:
        reason = _robot_subject(_header(msg, "Subject").lstrip(), bool(result.commands))
    result.is_automatic = reason is not None
    result.automatic_reason = reason
    _make_clean(result)
    return result


def _read_part(text: str, notes: list[str]) -> str:
    """The part of a mail's text that is read and kept: its first ``MAX_TEXT_LINES`` lines, at
    most ``MAX_TEXT_CHARS`` characters (cut at a line's end when there is one); a note in
    ``notes`` says what was left out."""
    part = "\n".join(text.split("\n", MAX_TEXT_LINES)[:MAX_TEXT_LINES])
    if len(part) > MAX_TEXT_CHARS:
        end = part.rfind("\n", 0, MAX_TEXT_CHARS + 1)
        part = part[: max(end, 0) or MAX_TEXT_CHARS]
    if len(part) == len(text):
        return text
    limits = f"a mail is read up to {MAX_TEXT_LINES:,} lines and {MAX_TEXT_CHARS:,} characters"
    if len(part) == MAX_TEXT_CHARS and text[len(part)] != "\n":  # (within a line)
        notes.append(
            f"the text after its first {MAX_TEXT_CHARS:,} characters was left out: {limits}"
        )
        return part
    read = part.count("\n") + 1
    rest = text[len(part) + 1 :]
    over = rest.count("\n") + (not rest.endswith("\n"))
    notes.append(f"the text after line {read} ({over:,} more lines) was left out: {limits}")
    return part


def _clean(text: str) -> str:
    return _CONTROL.sub("", unsurrogate(text))


def _make_clean(result: ParsedMail) -> None:
    """Every text field storable anywhere: no surrogate escapes, no control characters."""
    result.subject = _clean(result.subject)
    result.sender_name = _clean(result.sender_name)
    result.commands = [_clean(c) for c in result.commands]
    result.not_understood = [_clean(c) for c in result.not_understood]
    result.comment = _clean(result.comment)
    result.ignored = [_clean(n) for n in result.ignored]
    result.headers = [(n, _clean(v)) for n, v in result.headers]
    if result.sender is not None and (_clean(result.sender) != result.sender):
        result.sender = None


def _fallback_body(raw: bytes) -> str:
    text = decode_bytes(raw).replace("\r\n", "\n")
    head, sep, body = text.partition("\n\n")
    if sep and re.match(r"^[\w-]+:", head):
        return body
    return text


def _read_headers(msg: Message, result: ParsedMail, envelope_from: str | None) -> None:
    result.subject = _header(msg, "Subject")
    if len(result.subject) > MAX_HEADER_CHARS:
        result.subject = result.subject[:MAX_HEADER_CHARS]
        result.ignored.append(f"the Subject after {MAX_HEADER_CHARS:,} characters was left out")
    from_list = _addresses(msg, "From")
    if from_list:
        result.sender_name = from_list[0][0]
    result.no_sender = _not_one(msg, "Reply-To") or _not_one(msg, "From")
    for name, address in [] if result.no_sender else [*_addresses(msg, "Reply-To"), *from_list]:
        usable = _usable(address)
        if usable:
            result.sender = usable
            if not result.sender_name:
                result.sender_name = name
            break
    ids = _MSGID.findall(_raw_header(msg, "Message-ID"))
    result.message_id = ids[0] if ids else None
    reply_to_ids = _MSGID.findall(_raw_header(msg, "In-Reply-To"))
    result.in_reply_to = reply_to_ids[0] if reply_to_ids else None
    refs = _MSGID.findall(_raw_header(msg, "References")) or reply_to_ids[:1]
    result.references = refs[-MAX_REFERENCES:]
    for name in ("From", "To", "Cc", "Date", "Subject"):
        value = _header(msg, name)[:MAX_HEADER_CHARS]
        if value:
            result.headers.append((name, value))


def _bare(line: str) -> str:
    """A command line without its blanks and optional ``pbmserv`` word, its command words in
    any case (a phone capitalises the body's first word), to compare lines; the rest keeps its
    case, which a password's has."""
    words = line.split()
    words = words[1:] if words and words[0].lower() == "pbmserv" else words
    return " ".join([w.casefold() for w in words[:2]] + words[2:])


def declared_verbs() -> set[str]:
    """The words that may follow a command word: the commands of every group and game."""
    groups = [registry.GAME, *registry.GROUPS.values()]
    return {w.lower() for g in groups for w in g.words()}


def _read_commands(
    result: ParsedMail, text: str, words: set[str], max_commands: int, verbs: Collection[str]
) -> None:
    commands: list[str] = []
    line = subject_command(result.subject, words) if result.subject else None
    unclear: list[str] = []
    if line:
        commands.append(line)
        result.subject_is_command = True
    elif result.subject and not our_subject(result.subject):
        line = without_reply_prefixes(result.subject)
        if line_kind(line, words, verbs) == "unclear":  # ``plois mvoe 101 alice PASSWORD e2``
            unclear.append(line)
            result.subject_not_understood = True
    most = max(max_commands - len(unclear), 0)  # (the subject's counts)
    body = read_body(text, words, verbs, max_not_understood=most)
    if line and len(line.split()) == 1 and body.commands:
        # a lone word above command lines is the mail's topic ("Vacation", "Move"), not a
        # command of its own: it ran beside them, as "vacation: not enough arguments"
        commands.clear()
        result.subject_is_command = False
    # the Subject's line written in the body too (a common habit) runs once, not twice
    said = _bare(commands[0]) if result.subject_is_command else None
    commands += [c for c in body.commands if _bare(c) != said]
    comment = body.comment
    result.not_understood = unclear + body.not_understood
    result.text = body.text
    if body.not_understood_over:
        over = body.not_understood_over
        result.ignored.append(
            f"{over} more line{'s' if over != 1 else ''} not understood left out: an answer "
            f"lists at most {max_commands}"
        )
    if len(commands) > max_commands:
        over = len(commands) - max_commands
        noun = "command line" if over == 1 else "command lines"
        result.ignored.append(f"{over} {noun} over the limit of {max_commands} ignored")
        commands = commands[:max_commands]
    result.commands = commands
    lines = comment.split("\n")
    if len(lines) > MAX_COMMENT_LINES:
        over = len(lines) - MAX_COMMENT_LINES
        result.ignored.append(
            f"{over} comment lines over the limit of {MAX_COMMENT_LINES} left out"
        )
        comment = "\n".join(lines[:MAX_COMMENT_LINES])
    # the comment goes to every player: a command line typed in it must not show a password
    result.comment = grammar.mask_passwords(comment, words, commands=commands, guess=False)

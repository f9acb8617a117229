"""From the raw bytes of an incoming mail to the command lines and the comment it holds.

``parse_message`` never raises: whatever a mail looks like (broken MIME, unknown charsets,
HTML only, no headers at all) it returns a :class:`ParsedMail` with what could be read and a
note in ``ignored`` about what was left out.  ``mask_passwords`` hides the password words of
command lines in any text (error mails, logs, the operator's ``mail show``).

Example::

    >>> p = parse_message(b"From: a@example.org\\nSubject: ploy move 101 alice pw e4-e5\\n\\nHi!\\n")
    >>> p.commands, p.comment
    (['ploy move 101 alice pw e4-e5'], 'Hi!')
"""

from __future__ import annotations

import base64
import binascii
import codecs
import email
import email.header
import email.utils
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from email import errors, policy
from email.message import Message
from html.parser import HTMLParser

from pbmserv.mail.lines import DEFAULT_VERBS, clean_command, read_body

DEFAULT_COMMAND_WORDS: frozenset[str] = frozenset(
    {
        "ploy",
        "pylon",
        "plotto",
        "polis",
        "pbmserv",
        "signup",
        "change",
        "signoff",
        "list",
        "help",
        "vacation",
        "tournament",
    }
)
"""Words that start a command line; the dispatcher passes the registry's names instead."""

MAX_COMMANDS = 10
MAX_COMMENT_LINES = 200
MAX_REFERENCES = 20
MASK = "********"

_REPLY_PREFIX = re.compile(r"^\s*(?:(?:re|fwd?|aw|wg|sv|vs|antw)\s*(?:\[\d+\])?\s*:\s*)+", re.I)
_MSGID = re.compile(r"<[\x21-\x3b\x3d\x3f-\x7e]{1,250}>")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_BLANKS = re.compile(r"[ \t\u00a0\u2000-\u200b\u3000]+")


@dataclass
class ParsedMail:
    """What one incoming mail says, ready for the dispatcher.

    ``sender`` is the address to answer (Reply-To, else From, else the envelope sender) or None
    when none is usable.  ``commands`` are the command lines (the subject first when it is
    one), at most ``max_commands``.  ``comment`` is the rest of the body without signature and
    quoted history: it is shown under the board.  ``ignored`` holds human-readable notes about
    what was left out; ``not_understood`` the lines that look like a command but are none
    (reported to the sender, never part of the comment).  ``is_automatic`` mails (bounces, vacation replies, lists, our own mail)
    must never be answered; ``automatic_reason`` says why.  ``text`` is the whole decoded body
    (for quoting in error mails, after :func:`mask_passwords`); ``headers`` the decoded
    From/To/Cc/Date/Subject for the same purpose.  ``references`` is the thread to continue:
    the mail's References (or In-Reply-To) ids, without its own Message-ID.
    """

    sender: str | None = None
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
    not_understood: list[str] = field(default_factory=list)
    text: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)

    @property
    def raw_headers(self) -> list[tuple[str, str]]:
        """Alias of ``headers`` (the headers shown when the mail is quoted)."""
        return self.headers


# ----------------------------------------------------------------------------- passwords

# verb -> indexes (relative to the word before the verb, i.e. the game word) of password words
_GAME_VERBS_BOARD_USER_PW = frozenset(
    {
        "move",
        "board",
        "queue",
        "qmove",
        "resign",
        "resig",
        "swap",
        "chat",
        "submit",
        "confirm",
        "subscribe",
        "sub",
        "unsubscribe",
        "unsub",
        "notify",
        "notifications",
        "mvoe",
        "qboard",
        "boardq",
        "moveq",
    }
)


_ACCOUNT_WORDS = frozenset(
    {"signup", "signoff", "vacation", "accept", "reject", "limit", "seek", "notifications"}
    | {"message", "broadcast"}
)


def _password_slots(words: list[str], i: int, command_words: Collection[str]) -> list[int]:
    """Indexes of password words for a command starting at ``words[i]`` (lower-cased, bare).

    | shape                                       | masked          |
    |---------------------------------------------|-----------------|
    | ``<game> move/resign/swap/... B U PW ...``  | 5th word        |
    | ``signup U PW ...``, ``signoff U PW``,      | 3rd word        |
    | ``vacation/accept/reject/limit/seek U PW``  |                 |
    | ``tournament join/withdraw NAME U PW``      | 5th word        |
    | ``change password U OLD NEW``               | 4th and 5th     |
    | ``change address U PW ...``                 | 4th word        |
    | ``<game> showas U PW BOARD``                | 4th word        |
    | ``message/broadcast/notifications U PW``    | 3rd word        |

    A game word the caller does not know still counts when the board word is a number.
    """
    word = words[i]
    n = len(words)
    if word in ("signup", "signoff") or (
        word in _ACCOUNT_WORDS and not any(words[:i])  # common words: only at a line's start
    ):
        return [i + 2] if i + 2 < n else []
    if (
        word == "tournament"
        and i + 1 < n
        and words[i + 1] in ("join", "withdraw", "create", "start")
    ):
        return [i + 4] if i + 4 < n else []
    if word == "change" and i + 1 < n:
        if words[i + 1] == "password":
            return [j for j in (i + 3, i + 4) if j < n]
        if words[i + 1] == "address":
            return [i + 3] if i + 3 < n else []
        return []
    if i + 3 < n and words[i + 1] == "showas" and word in command_words:  # GAME showas U PW B
        return [i + 3]
    if i + 4 < n and words[i + 1] in _GAME_VERBS_BOARD_USER_PW:
        known = word in command_words
        if known or re.fullmatch(r"\d+(?:#\d+)?", words[i + 2]):
            return [i + 4]
    return []


def _bare(token: str) -> str:
    return token.lstrip(">*|:").rstrip(":,;").lower()


def command_passwords(line: str, command_words: Collection[str] | None = None) -> list[str]:
    """The password words of one command line (exactly as typed)."""
    words_cmd = {w.lower() for w in (command_words or DEFAULT_COMMAND_WORDS)}
    tokens = line.split()
    bare = [_bare(t) for t in tokens]
    found = []
    for i in range(len(tokens)):
        for j in _password_slots(bare, i, words_cmd):
            found.append(tokens[j])
    return found


def command_credentials(
    line: str, command_words: Collection[str] | None = None
) -> list[tuple[str, str]]:
    """(userid, password) pairs a command line may authenticate with: each password word and
    the word before it (for ``change password U OLD NEW`` the second pair is a harmless guess)."""
    words_cmd = {w.lower() for w in (command_words or DEFAULT_COMMAND_WORDS)}
    tokens = line.split()
    bare = [_bare(t) for t in tokens]
    return [
        (bare[j - 1], tokens[j])
        for i in range(len(tokens))
        for j in _password_slots(bare, i, words_cmd)
        if j > 0
    ]


def mask_passwords(
    text: str,
    command_words: Collection[str] | None = None,
    *,
    commands: Iterable[str] = (),
) -> str:
    """Replace the password words of every command line in ``text`` with ``********``.

    Works on any line shape: quoted (``> ploy move ...``), in a header (``Subject: Re: ploy
    move ...``), or in the middle of a sentence.  Passwords found in ``commands`` (the mail's
    command lines) are also masked wherever else they appear as a whole word.  Blanks and the
    rest of each line are kept as they were.

    >>> mask_passwords("> ploy move 101 alice s3cret e4-e5")
    '> ploy move 101 alice ******** e4-e5'
    >>> mask_passwords("change password alice old1 new2")
    'change password alice ******** ********'
    """
    words_cmd = {w.lower() for w in (command_words or DEFAULT_COMMAND_WORDS)}
    extra = {pw for line in commands for pw in command_passwords(line, words_cmd) if len(pw) >= 3}
    out = []
    for line in text.split("\n"):
        spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", line)]
        if not spans:
            out.append(line)
            continue
        bare = [_bare(line[a:b]) for a, b in spans]
        hide: set[int] = set()
        for i in range(len(spans)):
            hide.update(_password_slots(bare, i, words_cmd))
        for k, (a, b) in enumerate(spans):
            if line[a:b] in extra:
                hide.add(k)
        for k in sorted(hide, reverse=True):
            a, b = spans[k]
            line = line[:a] + MASK + line[b:]
        out.append(line)
    return "\n".join(out)


# ----------------------------------------------------------------------------- decoding


def decode_bytes(data: bytes, charset: str | None = None) -> str:
    """Bytes to text: the declared charset, else UTF-8, else Latin-1 (which never fails).

    UTF-8 with a few broken bytes stays UTF-8 (with U+FFFD for the broken ones) when it has at
    least as many good non-ASCII characters as broken bytes; otherwise it is Latin-1.
    """
    if charset:
        try:
            codecs.lookup(charset)
            return data.decode(charset)
        except (LookupError, UnicodeError, ValueError, TypeError):
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    lenient = data.decode("utf-8", "replace")
    bad = lenient.count("\ufffd")
    good = sum(1 for c in lenient if ord(c) > 127) - bad
    if good and good >= bad:
        return lenient
    return data.decode("latin-1")


_SURROGATES = re.compile(r"[\udc80-\udcff]+")


def unsurrogate(text: str) -> str:
    """Undeclared 8-bit bytes that the ``email`` package kept as surrogate escapes, decoded."""
    return _SURROGATES.sub(lambda m: decode_bytes(bytes(ord(c) - 0xDC00 for c in m.group())), text)


class _HtmlToText(HTMLParser):
    """Plain text from HTML: scripts and styles dropped, blocks on lines, quotes marked."""

    BLOCKS = frozenset(
        {
            "p",
            "div",
            "br",
            "tr",
            "li",
            "ul",
            "ol",
            "table",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "pre",
            "hr",
            "dt",
            "dd",
            "section",
            "article",
            "header",
            "footer",
        }  # fmt: skip
    )
    SKIP = frozenset({"script", "style", "head", "title", "template", "noscript"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skip += 1
        elif tag == "blockquote":
            self.parts.append("\n\x00+\n")
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "blockquote":
            self.parts.append("\n\x00-\n")
        elif tag in self.BLOCKS and tag != "br":
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(re.sub(r"\s+", " ", data))

    def text(self) -> str:
        depth = 0
        lines: list[str] = []
        for raw in "".join(self.parts).split("\n"):
            if raw == "\x00+":
                depth += 1
                continue
            if raw == "\x00-":
                depth = max(0, depth - 1)
                continue
            line = _BLANKS.sub(" ", raw).strip()
            if line and depth:
                line = "> " * depth + line
            if line or (lines and lines[-1]):
                lines.append(line)
        return "\n".join(lines).strip("\n")


def html_to_text(html: str) -> str:
    """Readable plain text from an HTML body (stdlib only)."""
    parser = _HtmlToText()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # noqa: BLE001 - html.parser is lenient, but never fail a mail on it
        return re.sub(r"<[^>]*>", " ", html)
    return parser.text()


_BASE64_DEFECTS = (
    errors.InvalidBase64PaddingDefect,
    errors.InvalidBase64CharactersDefect,
    errors.InvalidBase64LengthDefect,
)


def _lenient_base64(text: str) -> bytes | None:
    """Base64 with the damage of truncated mail repaired (missing padding, a stray tail)."""
    data = re.sub(r"[^A-Za-z0-9+/]", "", text)
    data = data[: len(data) - (len(data) % 4 == 1)]
    try:
        return base64.b64decode(data + "=" * (-len(data) % 4))
    except (binascii.Error, ValueError):
        return None


def _part_text(part: Message, notes: list[str]) -> str:
    try:
        payload = part.get_payload(decode=True)
    except Exception:  # noqa: BLE001
        payload = None
    try:
        cte = str(part.get("Content-Transfer-Encoding", "")).strip().lower()
        if cte == "base64" and (
            payload is None or any(isinstance(d, _BASE64_DEFECTS) for d in part.defects)
        ):
            encoded = part.get_payload()
            repaired = _lenient_base64(encoded) if isinstance(encoded, str) else None
            if repaired is not None:
                payload = repaired
                notes.append("a damaged base64 part was read as far as possible")
    except Exception:  # noqa: BLE001
        pass
    if payload is None:
        raw = part.get_payload()
        if isinstance(raw, str):
            payload = raw.encode("utf-8", "surrogateescape")
        else:
            return ""
    if not isinstance(payload, bytes):
        return ""
    try:
        charset = part.get_content_charset()
    except Exception:  # noqa: BLE001
        charset = None
    return decode_bytes(payload, charset)


def _filename(part: Message) -> str | None:
    try:
        name = part.get_filename()
    except Exception:  # noqa: BLE001
        return None
    return str(name) if name else None


def _is_attachment(part: Message) -> bool:
    try:
        disposition = part.get_content_disposition()
    except Exception:  # noqa: BLE001
        disposition = None
    return disposition == "attachment" or (disposition != "inline" and bool(_filename(part)))


def _collect(part: Message, texts: list[str], notes: list[str], depth: int = 0) -> None:
    """Append the readable text parts of ``part`` to ``texts``; note what is left out."""
    ctype = part.get_content_type()
    if depth > 20:
        notes.append("MIME parts nested too deep ignored")
        return
    if part.is_multipart():
        children = [c for c in (part.get_payload() or []) if isinstance(c, Message)]
        if ctype == "multipart/alternative" and children:
            chosen = _choose_alternative(children)
            _collect(chosen, texts, notes, depth + 1)
            return
        for child in children:
            _collect(child, texts, notes, depth + 1)
        return
    if ctype.startswith("multipart/"):  # no boundary, or none found: its text is all we have
        notes.append("a broken multipart mail is read as plain text")
        texts.append(_part_text(part, notes))
        return
    if ctype.startswith("message/"):
        notes.append(f"attached message ({ctype}) ignored")
        return
    if _is_attachment(part) or ctype not in ("text/plain", "text/html"):
        name = _filename(part) or ctype
        notes.append(f"attachment {name} ignored")
        return
    text = _part_text(part, notes)
    if ctype == "text/html":
        text = html_to_text(text)
        notes.append("HTML part converted to text")
    texts.append(text)


def _choose_alternative(children: list[Message]) -> Message:
    for wanted in ("text/plain", "text/html"):
        for child in children:
            if child.get_content_type() == wanted and not _is_attachment(child):
                return child
    return children[-1]


# ----------------------------------------------------------------------------- headers


def _header(msg: Message, name: str) -> str:
    """A header's decoded value ('' if missing); never raises on malformed headers."""
    try:
        value = msg.get(name)
        if value is None:
            return ""
        text = _BLANKS.sub(" ", str(value).replace("\r", " ").replace("\n", " ")).strip()
        if "\ufffd" not in text:
            return unsurrogate(text)
    except Exception:  # noqa: BLE001
        pass
    try:
        for key, raw in msg.raw_items():  # type: ignore[attr-defined]
            if key.lower() == name.lower():
                chunks = email.header.decode_header(str(raw))
                text = "".join(
                    decode_bytes(c, cs) if isinstance(c, bytes) else c for c, cs in chunks
                )
                return unsurrogate(" ".join(text.split()))
    except Exception:  # noqa: BLE001
        pass
    return ""


def _raw_header(msg: Message, name: str) -> str:
    try:
        for key, raw in msg.raw_items():  # type: ignore[attr-defined]
            if key.lower() == name.lower():
                return " ".join(str(raw).split())
    except Exception:  # noqa: BLE001
        pass
    return ""


def _usable(addr: str) -> str | None:
    addr = addr.strip().strip("<>").strip()
    if not addr or " " in addr or addr.count("@") != 1 or any(c in addr for c in "\r\n\t,;<>"):
        return None
    local, domain = addr.split("@")
    if not local or not domain or domain.startswith(".") or domain.endswith("."):
        return None
    return addr


def _addresses(value: str) -> list[tuple[str, str]]:
    if not value:
        return []
    try:
        return [(n, a) for n, a in email.utils.getaddresses([value]) if a]
    except Exception:  # noqa: BLE001
        return []


# ----------------------------------------------------------------------------- body


def is_command(line: str, command_words: Collection[str]) -> bool:
    """Whether a line's first word is a command word (case-insensitive, ``**`` skipped)."""
    words = [w for w in line.split() if w != "**"]
    return bool(words) and words[0].lower() in command_words


def subject_command(subject: str, command_words: Collection[str]) -> str | None:
    """The command in a subject, or None: ``Re:``/``Fwd:``... prefixes and ``**`` dropped.

    Our own reply subjects (``Ploy Board 101 alice``, ``Ploy Board 101 Error``) are not
    commands, so replying to a board mail with the command in the body just works.
    """
    line = clean_command(subject)
    while True:
        shorter = clean_command(_REPLY_PREFIX.sub("", line).removeprefix("**"))
        if shorter == line:
            break
        line = shorter
    if not is_command(line, command_words):
        return None
    words = line.lower().split()
    if len(words) <= 4 and len(words) >= 3 and words[1] == "board" and words[2].isdigit():
        return None
    return line


# ----------------------------------------------------------------------------- automatic mail


def _automatic(
    msg: Message | None, sender: str | None, envelope_from: str | None, servers: set[str]
) -> str | None:
    if envelope_from is not None and envelope_from.strip() in ("", "<>"):
        return "empty envelope sender (a bounce)"
    for who in (envelope_from or "", sender or ""):
        local = who.strip("<>").split("@")[0].lower()
        if local in ("mailer-daemon", "postmaster"):
            return f"sent by {local}"
    if msg is None:
        return None
    envelope = (envelope_from or "").strip("<> ").lower()
    if (sender and sender.lower() in servers) or envelope in servers:
        return "sent by this server"
    from_addrs = {a.lower() for _, a in _addresses(_header(msg, "From"))}
    if from_addrs & servers:
        return "sent by this server"
    for _, a in _addresses(_header(msg, "From")):
        if a.split("@")[0].lower() in ("mailer-daemon", "postmaster"):
            return "sent by " + a.split("@")[0].lower()
    if _header(msg, "X-Pbmserv-Server"):
        return "a pbmserv mail (X-Pbmserv-Server)"
    try:
        types = {p.get_content_type() for p in msg.walk()}
    except Exception:  # noqa: BLE001
        types = {msg.get_content_type()}
    if "multipart/report" in types or "message/delivery-status" in types:
        return "a delivery status report"
    auto = _header(msg, "Auto-Submitted").split(";")[0].strip().lower()
    if auto and auto != "no":
        return f"Auto-Submitted: {auto}"
    precedence = _header(msg, "Precedence").lower()
    if precedence in ("bulk", "list", "junk"):
        return f"Precedence: {precedence}"
    for name in ("List-Id", "List-Unsubscribe"):
        if _header(msg, name):
            return f"a mailing list mail ({name})"
    for name in ("X-Autoreply", "X-Autorespond", "X-Autoresponder"):
        value = _header(msg, name).lower()
        if value and value not in ("no", "false", "0"):
            return f"an automatic reply ({name})"
    return None


# ----------------------------------------------------------------------------- the parser


def parse_message(
    raw: bytes,
    envelope_from: str | None = None,
    *,
    command_words: Collection[str] = DEFAULT_COMMAND_WORDS,
    max_commands: int = MAX_COMMANDS,
    server_addresses: Iterable[str] = (),
    command_verbs: Collection[str] = DEFAULT_VERBS,
) -> ParsedMail:
    """Read one mail; never raises.  See :class:`ParsedMail` for the fields.

    ``envelope_from`` is the SMTP ``MAIL FROM`` ('' or '<>' for bounces; None when unknown).
    ``command_words`` are the words that start a command line (game names, aliases, account
    commands), compared case-insensitively; ``command_verbs`` the words that may follow one
    (a line in the middle of prose is a command only with one of them).  ``server_addresses`` are our own addresses: mail
    from them is automatic.
    """
    words = {w.lower() for w in command_words}
    servers = {a.strip("<>").lower() for a in server_addresses if a}
    result = ParsedMail()
    if isinstance(raw, str):  # be kind to callers
        raw = raw.encode("utf-8", "surrogateescape")
    msg: Message | None
    try:
        msg = email.message_from_bytes(raw, policy=policy.default)
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
            _collect(msg, texts, result.ignored)
        except Exception:  # noqa: BLE001
            texts = []
            msg_body = _fallback_body(raw)
            texts.append(msg_body)
            result.ignored.append("the MIME structure could not be read; the mail is read as text")
    else:
        texts.append(_fallback_body(raw))
        result.ignored.append("the mail could not be parsed; it is read as plain text")
    if result.sender is None and envelope_from:
        result.sender = _usable(envelope_from)
    text = "\n\n".join(t for t in texts if t.strip())
    text = _CONTROL.sub("", unsurrogate(text).replace("\r\n", "\n").replace("\r", "\n"))
    result.text = text
    try:
        reason = _automatic(msg, result.sender, envelope_from, servers)
    except Exception:  # noqa: BLE001
        reason = None
    result.is_automatic = reason is not None
    result.automatic_reason = reason
    _read_commands(result, text, words, max_commands, command_verbs)
    _make_clean(result)
    return result


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
    from_value = _header(msg, "From")
    from_list = _addresses(from_value)
    if from_list:
        result.sender_name = from_list[0][0]
    for name, address in [*_addresses(_header(msg, "Reply-To")), *from_list]:
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
        value = _header(msg, name)
        if value:
            result.headers.append((name, value))


def _read_commands(
    result: ParsedMail, text: str, words: set[str], max_commands: int, verbs: Collection[str]
) -> None:
    commands: list[str] = []
    line = subject_command(result.subject, words) if result.subject else None
    if line:
        commands.append(line)
        result.subject_is_command = True
    body = read_body(text, words, verbs)
    commands += body.commands
    comment = body.comment
    result.not_understood = body.not_understood
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
    result.comment = mask_passwords(comment, words, commands=commands)

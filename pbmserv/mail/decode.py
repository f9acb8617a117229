"""Decoding incoming mail: bytes to text in any charset, HTML to text, the readable MIME parts.

Never raises on broken input: a damaged part is read as far as possible and a note says so.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from email import errors
from email.message import Message

from pbmserv.mail.flowed import unflow
from pbmserv.mail.htmltext import html_to_text

NOT_CHARSETS = frozenset({"punycode", "idna", "unicode-escape", "raw-unicode-escape", "undefined"})
"""Python's codecs that no mail is written in, whatever a part declares: punycode's and idna's
decoders take time growing with the square of the text (400 KB declared 'charset=punycode'
held the worker for 6 seconds, a mail's 10 MB would take hours); a declared one is ignored."""


def decode_bytes(data: bytes, charset: str | None = None) -> str:
    """Bytes to text: the declared charset, else UTF-8, else Latin-1 (which never fails).

    UTF-8 with a few broken bytes stays UTF-8 (with U+FFFD for the broken ones) when it has at
    least as many good non-ASCII characters as broken bytes; otherwise it is Latin-1.
    """
    if charset:
        try:
            if codecs.lookup(charset).name not in NOT_CHARSETS:
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
    text = decode_bytes(payload, charset)
    try:
        flowed = str(part.get_param("format", "")).lower() == "flowed"
        delsp = str(part.get_param("delsp", "")).lower() == "yes"
    except Exception:  # noqa: BLE001
        flowed = delsp = False
    if flowed and part.get_content_type() == "text/plain":  # (its soft line breaks joined)
        text = unflow(text, delsp)
    return text


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


# At most this many MIME parts of a mail are looked at (a mail program's mail has a handful;
# a hostile one of 1 MB held 15,000 empty attachments: 4 s of the worker's time, and an answer
# of one "attachment ... ignored" line each, cut at its size limit before anything else)
MAX_PARTS = 100
_LONE_CR = re.compile(rb"\r(?!\n)")


def parts_read(raw: bytes, text_lines: int) -> bytes:
    """``raw`` as the MIME parser is given it: up to its boundary line number ``2 * MAX_PARTS
    + 2`` (past it a mail is past its :data:`MAX_PARTS`: a part has its boundary line, a
    multipart its closing one), so that what is read is not cut; the parser's time grows with
    the parts (1 MB of empty parts: 1.8 s, against 0.04 s for 1 MB of text).

    Only the lines of a boundary that a Content-Type field declares count: an HTML mail's
    style may hold thousands of lines starting with ``--`` (CSS custom properties), and
    counting them cut the mail's text and commands.  Where a boundary is declared in a form
    not read here (RFC 2231's ``boundary*``, or more than :data:`MAX_PARTS` of them), every
    line starting with ``--`` counts, up to ``text_lines + 2 * MAX_PARTS + 1`` (each is a
    line of text, or a part's).

    A CR alone ends a line for the parser (``email.feedparser``) as LF does, and is made one
    here: the counts of lines (these, and :func:`header_lines_cut`'s) read LF, and a mail
    whose lines ended in CR alone went to the parser whole (150,000 empty parts: 1.2 s)."""
    raw = _LONE_CR.sub(b"\n", raw)
    boundaries = _declared_boundaries(raw)
    if boundaries is None:
        end = 0
        for _ in range(text_lines + 2 * MAX_PARTS + 1):
            end = raw.find(b"\n--", end) + 1
            if not end:
                return raw
        return raw[:end]
    if not boundaries:
        return raw
    names = b"|".join(re.escape(b) for b in sorted(boundaries, key=len, reverse=True))
    lines = re.compile(rb"^--(?:" + names + rb")(?:--)?[ \t]*\r?$", re.M)
    for count, line in enumerate(lines.finditer(raw), 1):
        if count > 2 * MAX_PARTS + 1:
            return raw[: line.start()]
    return raw


# a Content-Type field with its folded lines (a part's too), and the boundaries it declares: a
# parameter named boundary (not 'x-boundary', whose value the parser does not take for it)
_CONTENT_TYPE = re.compile(rb"^content-type:[^\n]*(?:\n[ \t][^\n]*)*", re.I | re.M)
_DECLARED = re.compile(rb'(?:^|[;\s])boundary\s*=\s*(?:"([^"]*)"|([^\s;"]+))', re.I)
_UNREAD = re.compile(rb"boundary\s*\*|\\", re.I)  # (RFC 2231's form, a quoted pair)


def _declared_boundaries(raw: bytes) -> set[bytes] | None:
    """The boundaries the Content-Type fields in ``raw`` declare, or None when one is declared
    in a form not read here, or there are more than :data:`MAX_PARTS` of them.  Each boundary
    parameter of a field counts: the first one found was the value of 'x-boundary' in
    ``x-boundary="z"; boundary="b"``, and the lines of 'b', the parser's boundary, were not
    counted (150,000 empty parts went to the parser: 1.2 s a megabyte, against 0.1)."""
    found: set[bytes] = set()
    for field in _CONTENT_TYPE.finditer(raw):
        value = field.group().replace(b"\r", b"").replace(b"\n", b"")
        if b"boundary" not in value.lower():
            continue
        declared = [m.group(1) or m.group(2) or b"" for m in _DECLARED.finditer(value)]
        if not declared or _UNREAD.search(value):
            return None
        found.update(boundary.rstrip() for boundary in declared)
        if len(found) > MAX_PARTS:
            return None
    return found


MAX_HEADER_LINES = 1000  # of a mail's header: a long chain of Received lines has 200
MAX_PART_HEADER_LINES = 100  # of a part's (a part has a few)
MAX_PARTS_HEADER_LINES = 2000  # of all the parts' (a thousand '--' lines of 100 each: 0.8 s)
# a line the parser reads as part of a header (email.feedparser's headerRE): a header ends at
# the first other line, blank or not
_HEADER_LINE = re.compile(rb"From |[\x21-\x39\x3b-\x7e]*:|[\t ]")
# a multipart's boundary parameter, quoted or not (RFC 2046: at most 70 characters)
_BOUNDARY = re.compile(rb'boundary\s*=\s*(?:"([^"\r\n]{1,70})"|([^\s";]{1,70}))', re.IGNORECASE)


def _is_boundary(line: bytes, boundaries: set[bytes]) -> bool:
    """Whether ``line`` is a ``--boundary`` (or closing ``--boundary--``) line of one of
    ``boundaries``."""
    name = line.rstrip(b"\r\n \t")[2:]
    return name in boundaries or (name.endswith(b"--") and name[:-2] in boundaries)


def header_part(raw: bytes) -> bytes:
    """A mail's header lines as far as the parser reads them (:data:`MAX_HEADER_LINES`; a mail
    with more is automatic and runs nothing), for its inbox key and Date: its first 64 KB
    were read, so a replay with 70 KB of header lines added at its top had no Message-ID nor
    Date, and ran again."""
    lines = _LINE_BREAK.split(raw, MAX_HEADER_LINES)[:MAX_HEADER_LINES]  # (a lone CR is one)
    end = next((n for n, line in enumerate(lines) if not line), len(lines))
    return b"\n".join(lines[:end]) + b"\n\n"


_LINE_BREAK = re.compile(rb"\r\n|\r|\n")  # (as email.feedparser reads them)


def text_part(raw: bytes) -> bytes:
    """What follows a mail's header (its first empty line, however far down: a replay with
    header lines added at its top has the same text), for its inbox key, as DKIM's "relaxed"
    canonicalization reads it (RFC 6376, 3.4.4), and more: its line breaks written as LF, blanks
    at either end of a line dropped and runs of them made one space, trailing empty lines
    dropped.  A
    relay that writes line breaks its own way passes on the same mail, and a replay whose text
    differs only so (which DKIM still verifies) is the same mail.

    >>> text_part(b"From: a@x.example\\r\\n\\r\\nhi  \\t you\\rthere \\r\\n\\r\\n")
    b'hi you\\nthere'
    """
    found = [at for pair in (b"\n\n", b"\n\r", b"\r\r") if (at := raw.find(pair)) >= 0]
    if not found:  # (an empty line is one of these three, and each of these is one)
        return b""
    start = min(found) + 2
    start += raw[start - 1 : start + 1] == b"\r\n"  # (the empty line ends in CRLF)
    text = raw[start:].replace(b"\r\n", b"\n").replace(b"\r", b"\n").replace(b"\t", b" ")
    text = _SPACES.sub(b" ", text).replace(b" \n", b"\n").replace(b"\n ", b"\n")
    return text.strip(b" ").rstrip(b"\n")  # (each step over the whole text: a line at a time
    # took 3 s for a mail of 6 million empty lines)


_SPACES = re.compile(rb"  +")


def header_lines_cut(raw: bytes) -> tuple[bytes, bool, bool]:
    """``raw`` with at most :data:`MAX_HEADER_LINES` lines in its header,
    :data:`MAX_PART_HEADER_LINES` in the header that follows a boundary line that a header
    declared (a part's) or the
    header of a ``message/*`` part (a mail inside), :data:`MAX_PARTS_HEADER_LINES` in those
    of all its parts, and whether the mail's header and whether a part's was cut.

    The parser takes a few microseconds for each header line, and every header looked up goes
    through them all: a million short header lines (7 MB) held the worker for 7 seconds, a
    part's header of as many for 4.  A header ends at its first line that is no header line
    (as ``email.feedparser`` reads them), blank or not."""
    lines = raw.split(b"\n")
    if len(lines) <= MAX_PART_HEADER_LINES:
        return raw, False, False
    kept: list[bytes] = []
    cut = [False, False]  # the mail's header, a part's
    block, run, limit = 0, 0, MAX_HEADER_LINES  # (block 0: the mail's header, 1: a part's)
    in_parts = 0  # the header lines of the parts kept so far
    field = inner = False  # in a Content-Type field; one that says message/*
    # the boundaries the headers declared: only a '--' line of one of them starts a part, with
    # a part's header below it (below any other '--' line, a text's own, nothing is cut)
    boundaries: set[bytes] = set()
    for line in lines:
        if limit and line.strip(b"\r") and _HEADER_LINE.match(line):
            run += 1
            in_parts += block
            if run > limit or in_parts > MAX_PARTS_HEADER_LINES:
                cut[block] = True
                continue
            if line[:1] not in (b" ", b"\t"):
                field = line[:13].lower() == b"content-type:"
            inner = inner or (field and b"message/" in line.lower())
            if field and (declared := _BOUNDARY.search(line)):
                boundaries.add(declared.group(1) or declared.group(2))
        elif limit and inner:  # a mail inside the mail: its header follows
            block, run, limit, inner = 1, 0, MAX_PART_HEADER_LINES, False
        else:
            limit = 0  # the header has ended: no limit until the next boundary
        kept.append(line)
        if boundaries and line.startswith(b"--") and _is_boundary(line, boundaries):
            block, run, limit, inner = 1, 0, MAX_PART_HEADER_LINES, False
    return (b"\n".join(kept) if any(cut) else raw), cut[0], cut[1]


def collect_text(part: Message, texts: list[str], notes: list[str], depth: int = 0) -> None:
    """Append the readable text parts of ``part`` to ``texts``; note what is left out.

    A mail inside the mail (``message/rfc822``: a forwarded mail, attached or inline; any
    ``message/*``) is never read: its command lines would run as the sender's and its text
    would go to the other players as his comment.  An HTML part is read only when the mail has
    no plain text part with text in it: mail programs that write HTML put the same text in a
    plain part, and reading both would run every command twice.
    """
    found: list[tuple[str, str]] = []
    seen = [0]
    _readable_parts(part, found, notes, depth, seen)
    if seen[0] > MAX_PARTS:
        notes.append(f"the parts of the mail after its first {MAX_PARTS} ignored")
    plain = any(kind == "text/plain" and text.strip() for kind, text in found)
    for kind, text in found:
        if kind == "text/html":
            if plain:
                notes.append("an HTML part ignored (the mail has a plain text part)")
                continue
            text = html_to_text(text)
            notes.append("HTML part converted to text")
        texts.append(text)


def _readable_parts(
    part: Message, found: list[tuple[str, str]], notes: list[str], depth: int, seen: list[int]
) -> None:
    """The text parts a reader sees, in order, as (``text/plain`` or ``text/html``, text);
    ``seen`` counts the parts looked at, and none is past :data:`MAX_PARTS`."""
    seen[0] += 1
    if seen[0] > MAX_PARTS:
        return
    ctype = part.get_content_type()
    if depth > 20:
        notes.append("MIME parts nested too deep ignored")
        return
    if ctype.startswith("message/"):  # before multipart: its parsed mail is its one child
        notes.append(f"attached message ({ctype}) ignored")
        return
    if part.is_multipart():
        children = [c for c in (part.get_payload() or []) if isinstance(c, Message)]
        if ctype == "multipart/alternative" and children:
            children = [_choose_alternative(children)]
        for child in children:
            if seen[0] > MAX_PARTS:
                return
            _readable_parts(child, found, notes, depth + 1, seen)
        return
    if ctype.startswith("multipart/"):  # no boundary, or none found: its text is all we have
        notes.append("a broken multipart mail is read as plain text")
        found.append(("text/plain", _part_text(part, notes)))
        return
    if _is_attachment(part) or ctype not in ("text/plain", "text/html"):
        name = _filename(part) or ctype
        notes.append(f"attachment {name} ignored")
        return
    found.append((ctype, _part_text(part, notes)))


def _choose_alternative(children: list[Message]) -> Message:
    """The plain text alternative, unless it is empty: then the HTML one (an HTML-only
    complaint under ``Re: confirm CODE`` with an empty plain part confirmed the code)."""
    for wanted in ("text/plain", "text/html"):
        for child in children:
            if child.get_content_type() != wanted or _is_attachment(child):
                continue
            payload = child.get_payload(decode=True)
            if wanted == "text/plain" and isinstance(payload, bytes) and not payload.strip():
                continue
            return child
    return children[-1]

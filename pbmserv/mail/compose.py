"""Outgoing mails: UTF-8 text, threaded, marked as automatic (RFC 3834).

Every mail is ``multipart/alternative``: the plain text first (what third-party tools parse),
then the same text as HTML in one ``<pre>`` block in a monospaced font, so that phone mail apps,
which show plain text in a proportional font, keep the boards' columns.

``Precedence: bulk`` is deliberately not set: providers file such mail away, and players must
see their board mails.  ``X-Pbmserv-Server`` lets our own parser recognise (and never answer)
mail we sent.
"""

from __future__ import annotations

import random
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime
from email import quoprimime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from functools import lru_cache
from html import escape

from pbmserv.clock import system_clock
from pbmserv.mail.policy import POLICY

MAX_REFERENCES = 20


@dataclass
class OutgoingMail:
    """One mail to one recipient, before it gets headers of the server."""

    to: str
    subject: str
    body: str
    in_reply_to: str | None = None
    references: list[str] = field(default_factory=list)
    attachments: list[tuple[str, str, bytes]] = field(default_factory=list)  # name, type, data


def _one_line(value: str) -> str:
    """Header values never carry CR/LF (header injection) nor runs of blanks."""
    return " ".join(value.replace("\r", " ").replace("\n", " ").split())


def _threading_id(token: str) -> bool:
    """Whether a Message-ID of another's mail may go into our threading headers: not one
    holding ``=?`` (``<=?utf-8?b?...?=@x>`` is a valid Message-ID, and the ``email`` package
    decodes the encoded word in it: the line breaks and headers it encodes were written into
    our answer, a ``Bcc:`` or a whole body of the forger's)."""
    return "=?" not in token


def _in_reply_to(mail: OutgoingMail) -> str | None:
    """The In-Reply-To value, or None (see :func:`_threading_id`)."""
    value = _one_line(mail.in_reply_to or "")
    return value if value and _threading_id(value) else None


def _references(mail: OutgoingMail) -> list[str]:
    """The References tokens: the mail's references, then the one it answers; once each, the
    newest :data:`MAX_REFERENCES` (see :func:`_threading_id`)."""
    refs: list[str] = []
    for ref in [*mail.references, *([mail.in_reply_to] if mail.in_reply_to else [])]:
        for token in ref.split():
            if token not in refs and _threading_id(token):
                refs.append(token)
    return refs[-MAX_REFERENCES:]


def _set_text(msg: EmailMessage, name: str, value: str) -> None:
    """``msg[name] = value`` on one line, whatever encoded words the value holds: the package
    decodes them (``=?utf-8?b?...?=`` may encode CR LF and a ``Bcc:``), and a value that
    decodes to a line break is written with its ``=?`` broken up, as typed."""
    msg[name] = value = _one_line(value)
    if "\r" in str(msg[name]) or "\n" in str(msg[name]):
        del msg[name]
        msg[name] = value.replace("=?", "= ?")


def _plain_body(mail: OutgoingMail) -> tuple[str, str]:
    """The text with LF line ends and a final one, and its transfer encoding: 7bit when it is
    ASCII with lines short enough for SMTP, quoted-printable otherwise."""
    body = mail.body.replace("\r\n", "\n").replace("\r", "\n")
    if not body.endswith("\n"):
        body += "\n"
    plain = body.isascii() and all(len(line) <= 998 for line in body.split("\n"))
    return body, "7bit" if plain else "quoted-printable"


def build_message(
    mail: OutgoingMail,
    *,
    from_addr: str,
    server_id: str,
    domain: str,
    now: datetime | None = None,
) -> EmailMessage:
    """The complete message for ``mail``: From/To/Subject/Date/Message-ID, threading headers,
    ``Auto-Submitted: auto-replied``, ``X-Pbmserv-Server: <server_id>``; UTF-8 text/plain,
    7bit when the body is ASCII with short lines, quoted-printable otherwise.
    """
    msg = EmailMessage(policy=POLICY)
    msg["From"] = _one_line(from_addr)
    msg["To"] = _one_line(mail.to)
    _set_text(msg, "Subject", mail.subject)
    msg["Date"] = format_datetime(now or system_clock())
    msg["Message-ID"] = make_msgid(domain=domain or None)
    if in_reply_to := _in_reply_to(mail):
        msg["In-Reply-To"] = in_reply_to
    refs = _references(mail)
    if refs:
        msg["References"] = " ".join(refs)
    msg["Auto-Submitted"] = "auto-replied"
    _set_text(msg, "X-Pbmserv-Server", server_id)
    body, cte = _plain_body(mail)
    msg.set_content(body, charset="utf-8", cte=cte)
    msg.add_alternative(html_body(body), subtype="html", charset="utf-8", cte="quoted-printable")
    for name, mime, data in mail.attachments:  # the message becomes multipart/mixed
        maintype, _, subtype = mime.partition("/")
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return msg


@dataclass(frozen=True)
class FlatMessage:
    """A finished message as the sinks take it: its bytes (LF line ends, as the ``email``
    package writes them) and its envelope."""

    message_id: str
    sender: str
    to: str
    data: bytes


def prepare_message(
    mail: OutgoingMail,
    *,
    from_addr: str,
    server_id: str,
    domain: str,
    now: datetime,
    message_id: str | None = None,
    fold: bool,
) -> FlatMessage | EmailMessage:
    """The message of :func:`build_message`, for the sender: written straight to bytes when
    every header is a short plain ASCII line and nothing is attached (the usual answer and
    board mail; the ``email`` package's header objects cost most of a mail's CPU), else built
    by :func:`build_message`.  The bytes are those the ``email`` package writes for the same
    message (``tests/test_mail_compose.py`` checks it with hypothesis): ``fold`` as smtplib
    writes it (headers folded at 78 columns), else as :mod:`mailbox` does (never folded).
    ``message_id``: an operator's retry keeps the mail's Message-ID, so receivers can tell."""
    flat = None if message_id else _flat(mail, from_addr, server_id, domain, now, fold)
    if flat is not None:
        return flat
    message = build_message(mail, from_addr=from_addr, server_id=server_id, domain=domain, now=now)
    if message_id:
        del message["Message-ID"]
        message["Message-ID"] = message_id
    return message


_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_HOST = r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*"
_ADDR_SPEC = re.compile(rf"{_ATOM}(?:\.{_ATOM})*@{_HOST}")
_MSG_ID = re.compile(rf"<{_ATOM}(?:\.{_ATOM})*@{_HOST}>")
_TEXT = re.compile(r"[!-~]+(?: [!-~]+)*")  # printable ASCII words, one blank between them
MAX_HEADER_LINE = 78  # the policy's max_line_length: longer lines the package would fold


def _flat(
    mail: OutgoingMail, from_addr: str, server_id: str, domain: str, now: datetime, fold: bool
) -> FlatMessage | None:
    """:func:`prepare_message`'s fast path, or None where only the ``email`` package knows
    the exact output (folding, encoded words, display names, attachments)."""
    if mail.attachments:
        return None
    sender, to = _one_line(from_addr), _one_line(mail.to)
    if not (_ADDR_SPEC.fullmatch(sender) and _ADDR_SPEC.fullmatch(to)):
        return None
    refs = _references(mail)
    before = [  # the headers before the Message-ID, in build_message's order; then those after
        ("From", sender),
        ("To", to),
        ("Subject", _one_line(mail.subject)),
        ("Date", format_datetime(now)),
    ]
    in_reply_to = _in_reply_to(mail)
    after = [("In-Reply-To", in_reply_to)] if in_reply_to else []
    if refs:
        after.append(("References", " ".join(refs)))
    after += [("Auto-Submitted", "auto-replied"), ("X-Pbmserv-Server", _one_line(server_id))]
    if not all(_plain_header(name, value, fold) for name, value in [*before, *after]):
        return None
    message_id = make_msgid(domain=domain or None)  # drawn once we know it will be used
    if not (_MSG_ID.fullmatch(message_id) and _plain_header("Message-ID", message_id, fold)):
        return None
    headers = [*before, ("Message-ID", message_id), *after]
    body, cte = _plain_body(mail)
    parts = [
        _text_part("plain", body, cte, mime_version=False),
        _text_part("html", html_body(body), "quoted-printable", mime_version=True),
    ]
    boundary = _boundary("\n".join(parts))
    lines = [f"{name}: {value}\n" for name, value in headers]
    lines.append("MIME-Version: 1.0\n")
    fold_at = "\n " if fold else " "  # the line is longer than 78 columns with any boundary
    lines.append(f'Content-Type: multipart/alternative;{fold_at}boundary="{boundary}"\n\n')
    lines.append(f"--{boundary}\n{parts[0]}\n--{boundary}\n{parts[1]}\n--{boundary}--\n")
    return FlatMessage(message_id, sender, to, "".join(lines).encode("ascii"))


def _plain_header(name: str, value: str, fold: bool) -> bool:
    """Whether the package writes ``name: value`` as it stands: printable ASCII words, no
    encoded word, and short enough not to be folded when the sink folds."""
    return bool(
        _TEXT.fullmatch(value)
        and "=?" not in value
        and (not fold or len(name) + 2 + len(value) <= MAX_HEADER_LINE)
    )


def message_id_of(message: FlatMessage | EmailMessage) -> str:
    """The Message-ID of either form of a finished message."""
    if isinstance(message, FlatMessage):
        return message.message_id
    return str(message.get("Message-ID", ""))


def _text_part(subtype: str, text: str, cte: str, *, mime_version: bool) -> str:
    """One ``text/*`` part as the ``email`` package writes it (its ``set_content``: lines
    split as bytes are, quoted-printable by the package's own encoder)."""
    body = b"\n".join(text.encode("utf-8").splitlines()) + b"\n"  # LF alone from here on
    payload = body.decode("ascii") if cte == "7bit" else _quoted_printable(body.decode("latin-1"))
    head = f'Content-Type: text/{subtype}; charset="utf-8"\nContent-Transfer-Encoding: {cte}\n'
    if mime_version:  # the package adds it to the part that add_alternative makes
        head += "MIME-Version: 1.0\n"
    return head + "\n" + payload


def _quoted_printable(text: str) -> str:
    """``quoprimime.body_encode(text, 78)`` a line at a time: it encodes each line on its own,
    and most lines (the HTML frame, a board's rows) come again from mail to mail."""
    return "\n".join(_quoted_printable_line(line) for line in text.split("\n"))


@lru_cache(maxsize=4096)
def _quoted_printable_line(line: str) -> str:
    return quoprimime.body_encode(line, MAX_HEADER_LINE)


_BOUNDARY_DIGITS = len(repr(sys.maxsize - 1))  # as email.generator pads the token


def _boundary(text: str) -> str:
    """A boundary made as ``email.generator`` makes one (the same random draw), and kept out of
    ``text`` the same way."""
    token = random.randrange(sys.maxsize)
    boundary = "=" * 15 + f"{token:0{_BOUNDARY_DIGITS}d}" + "=="
    candidate, counter = boundary, 0
    while f"--{candidate}" in text and re.search(
        "^--" + re.escape(candidate) + "(--)?$", text, re.MULTILINE
    ):
        candidate = f"{boundary}.{counter}"
        counter += 1
    return candidate


HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>@media (max-width: 600px) {{ pre.pbm {{ font-size: 2.5vw !important; }} }}</style>
</head><body style="margin: 8px;">
<pre class="pbm" style="font-family: Menlo, Consolas, 'DejaVu Sans Mono', 'Liberation Mono', \
monospace; font-size: 13px; line-height: 1.25; white-space: pre-wrap; overflow-x: auto; \
margin: 0;">{text}</pre>
</body></html>
"""


def html_body(text: str) -> str:
    """The HTML alternative of a plain-text body: the text, escaped, in one ``<pre>`` block
    (2.5vw keeps a 62-column board, the Ploy drawing, on a phone's screen; longer lines of text wrap)."""
    return HTML.format(text=escape(text.rstrip("\n"), quote=False))

"""Outgoing mails: UTF-8 text, threaded, marked as automatic (RFC 3834).

Every mail is ``multipart/alternative``: the plain text first (what third-party tools parse),
then the same text as HTML in one ``<pre>`` block in a monospaced font, so that phone mail apps,
which show plain text in a proportional font, keep the boards' columns.

``Precedence: bulk`` is deliberately not set: providers file such mail away, and players must
see their board mails.  ``X-Pbmserv-Server`` lets our own parser recognise (and never answer)
mail we sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from html import escape

from pbmserv.clock import system_clock
from pbmserv.commands.grammar import password_mask
from pbmserv.mail.parse import ParsedMail
from pbmserv.mail.policy import POLICY

MAX_REFERENCES = 20
MAX_QUOTED_LINES = 60


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
    msg["Subject"] = _one_line(mail.subject)
    msg["Date"] = format_datetime(now or system_clock())
    msg["Message-ID"] = make_msgid(domain=domain or None)
    if mail.in_reply_to:
        msg["In-Reply-To"] = _one_line(mail.in_reply_to)
    refs: list[str] = []
    for ref in [*mail.references, *([mail.in_reply_to] if mail.in_reply_to else [])]:
        for token in ref.split():
            if token not in refs:
                refs.append(token)
    if refs:
        msg["References"] = " ".join(refs[-MAX_REFERENCES:])
    msg["Auto-Submitted"] = "auto-replied"
    msg["X-Pbmserv-Server"] = _one_line(server_id)
    body = mail.body.replace("\r\n", "\n").replace("\r", "\n")
    if not body.endswith("\n"):
        body += "\n"
    plain = body.isascii() and all(len(line) <= 998 for line in body.split("\n"))
    msg.set_content(body, charset="utf-8", cte="7bit" if plain else "quoted-printable")
    msg.add_alternative(html_body(body), subtype="html", charset="utf-8", cte="quoted-printable")
    for name, mime, data in mail.attachments:  # the message becomes multipart/mixed
        maintype, _, subtype = mime.partition("/")
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return msg


HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>@media (max-width: 600px) {{ pre.pbm {{ font-size: 2.6vw !important; }} }}</style>
</head><body style="margin: 8px;">
<pre class="pbm" style="font-family: Menlo, Consolas, 'DejaVu Sans Mono', 'Liberation Mono', \
monospace; font-size: 13px; line-height: 1.25; white-space: pre-wrap; overflow-x: auto; \
margin: 0;">{text}</pre>
</body></html>
"""


def html_body(text: str) -> str:
    """The HTML alternative of a plain-text body: the text, escaped, in one ``<pre>`` block
    (2.6vw keeps a 61-column board on a phone's screen; longer lines of text wrap)."""
    return HTML.format(text=escape(text.rstrip("\n"), quote=False))


def quote_original(
    parsed: ParsedMail,
    raw_text: str | None = None,
    *,
    max_lines: int = MAX_QUOTED_LINES,
) -> str:
    """The original mail quoted for an error answer (headers, then ``> `` lines), passwords
    masked.  ``raw_text`` defaults to the decoded body ``parsed.text``.
    """
    text = parsed.text if raw_text is None else raw_text
    mask = password_mask(commands=parsed.commands)
    lines = [
        f"{name}: {mask(value)}"
        for name, value in parsed.headers
        if name in ("From", "Date", "Subject")
    ]
    body = mask(text.replace("\r\n", "\n")).rstrip("\n").split("\n")
    quoted = ["> " + line if line else ">" for line in body[:max_lines]]
    if len(body) > max_lines:
        quoted.append(f"> [... {len(body) - max_lines} more lines not shown]")
    head = "\n".join("> " + line for line in lines)
    return (head + "\n>\n" if head else "") + "\n".join(quoted) + "\n"

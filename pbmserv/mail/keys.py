"""The inbox's key of a mail (:func:`dedup_key`): what makes a later mail a repeated delivery
of one stored (or deleted, its key kept: :mod:`pbmserv.mail.replay`), and the keys the same
mail had before, under which the mails stored then are found."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from email.parser import BytesHeaderParser
from email.policy import compat32

from pbmserv.mail import srs
from pbmserv.mail.decode import header_part, text_part
from pbmserv.mail.replay import earliest_date


def dedup_key(raw: bytes, mail_from: str) -> str:
    """The key that makes a later mail a repeated delivery of this one, whatever its envelope
    sender (``mail_from``: a relay's duplicate, an SRS forwarder's resend, or the same mail
    sent again by whoever kept a copy, under an envelope of his own that SPF passes).  With a
    Message-ID, that Message-ID with a hash of the mail's From, Subject, Date and text: a
    Message-ID alone was global, so anyone who sent a guessed or leaked one first had its
    owner's mail dropped, and one with the envelope sender let a captured mail run again under
    another envelope.  A forger now needs the mail's text and Subject (which hold its
    password), and with them he has the mail itself.  Without a Message-ID, the hash alone
    (it was one of the bytes, with the trace lines each relay writes above).  Of several
    Message-IDs, Subjects or Dates (RFC 5322 allows one), the lowest: a replay with a new one
    written above its own (DKIM still verifies, it signs the lowest) is a repeat.

    >>> mail = b"From: a@x.example\\nMessage-ID: <1@x.example>\\n\\nhi\\n"
    >>> dedup_key(mail, "a@x.example") == dedup_key(b"Received: x\\n" + mail, "m@evil.example")
    True
    >>> dedup_key(mail, "a@x.example") == dedup_key(mail.replace(b"hi", b"ho"), "a@x.example")
    False
    """
    return keys_of(raw, mail_from).key


@dataclass(frozen=True)
class Keys:
    """A mail's :func:`dedup_key`, the keys the same mail had before, under which mails
    stored (or deleted) before are found, and its Date."""

    key: str
    before: str  # Message-ID, envelope sender (srs.for_key) and From; or a hash of the bytes
    legacy: str | None  # before migration 0010: the Message-ID alone
    dated: datetime | None


def keys_of(raw: bytes, mail_from: str) -> Keys:
    """:func:`dedup_key` and the keys before it."""
    message_id, senders, dated, lowest = "", "", None, {"subject": "", "date": ""}
    try:
        headers = BytesHeaderParser(policy=compat32).parsebytes(header_part(raw), headersonly=True)
        dated = earliest_date([str(value) for value in headers.get_all("Date") or []])
        ids = [str(value).strip() for value in headers.get_all("Message-ID") or []]
        message_id = next((i for i in reversed(ids) if i), "")  # (the lowest: see above)
        senders = " ".join(  # (every From: a mail with two is no one's, and runs nothing)
            " ".join(str(value).split())
            for name, value in headers.raw_items()
            if name.lower() == "from"
        )
        for name, value in headers.raw_items():  # (the lowest Subject and Date)
            if name.lower() in lowest:
                lowest[name.lower()] = " ".join(str(value).split())
    except Exception:  # noqa: BLE001 - a header we cannot read is no Message-ID
        message_id = ""
    mine = hashlib.sha256()
    for value in (senders, lowest["subject"], lowest["date"]):
        mine.update(value.encode("utf-8", "surrogateescape") + b"\n")
    mine.update(text_part(raw))
    if not message_id:
        bytes_key = "sha256:" + hashlib.sha256(raw).hexdigest()
        return Keys("sha256:" + mine.hexdigest(), bytes_key, None, dated)
    mid = message_id[:900]
    who = f"{srs.for_key(mail_from or '')}\n{senders}".encode("utf-8", "surrogateescape")
    before = f"from:{hashlib.sha256(who).hexdigest()[:32]} mid:{mid}"
    return Keys(f"from:{mine.hexdigest()[:32]} mid:{mid}", before, LEGACY_PREFIX + mid, dated)


LEGACY_PREFIX = "mid:"
"""The keys stored before migration 0010: the Message-ID alone.  Such a row still stands for a
repeat of a later mail with its Message-ID, but only from the envelope sender the row has (its
From header was not kept in full, so it cannot be compared).  Rows go after
``inbox_retention_days``, their keys kept for any sender (the envelope is not kept with a key);
the downgrade of 0010 writes these keys back."""

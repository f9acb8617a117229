"""How large a mail may be: ``max_message_bytes`` counted as the mail host in front counts.

Postfix's ``message_size_limit`` set to ``max_message_bytes`` (deploy/postfix.md) must let
nothing through that pbmserv then refuses: Postfix would bounce it, to a sender that is often
forged.  Postfix counts a line end as one byte; on the LMTP or SMTP wire it is two, and a line
that starts with a dot takes one more, so a mail of short lines that Postfix took under its
limit came up to twice as large to the listener (aiosmtpd counts the wire), and Postfix's
Received header came on top; ``mail inject`` counted Return-Path and Delivered-To against it.
"""

from __future__ import annotations

ADDED_ON_THE_WAY = 32_768
"""Bytes of headers the mail host adds to a mail it took under its size limit before it hands
it over (Received, Return-Path, Delivered-To, Authentication-Results, DKIM and ARC)."""


def mail_size(raw: bytes) -> int:
    """The size of mail ``raw`` as Postfix counts it: a line end is one byte."""
    return len(raw) - raw.count(b"\r\n")


def too_large(raw: bytes, max_message_bytes: int) -> bool:
    """Whether mail ``raw`` is over ``max_message_bytes`` (and the headers added on the way)."""
    return mail_size(raw) > max_message_bytes + ADDED_ON_THE_WAY


def wire_limit(max_message_bytes: int) -> int:
    """What the SMTP or LMTP session may carry of a mail under the limit: every line end two
    bytes, every line that starts with a dot one more (at most twice its size)."""
    return 2 * (max_message_bytes + ADDED_ON_THE_WAY)

"""Whom a mail names in its address headers: read from their raw, undecoded values (an encoded
word in a display name can never turn into an address), one mailbox or none."""

from __future__ import annotations

import email.header
import email.utils
import re
from email import errors
from email.headerregistry import Address as MailAddress
from email.message import Message

from pbmserv.domain import addresses as domain_addresses
from pbmserv.mail.decode import decode_bytes, unsurrogate
from pbmserv.mail.policy import PARSED_VALUE_CHARS, POLICY

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def raw_header(msg: Message, name: str) -> str:
    try:
        for key, raw in msg.raw_items():  # type: ignore[attr-defined]
            if key.lower() == name.lower():
                return " ".join(str(raw).split())
    except Exception:  # noqa: BLE001
        pass
    return ""


def usable(addr: str) -> str | None:
    """``addr`` if it is exactly one addr-spec with a domain (checked by the standard library's
    ``email.headerregistry`` parser), else None.  One that is not ASCII (RFC 6532: written in
    UTF-8, which the parser kept as surrogate escapes) is given in its one form
    (:func:`pbmserv.domain.addresses.canonical`); bytes that are no UTF-8 make none."""
    addr = addr.strip().strip("<>").strip()
    if not addr.isascii():
        text = _utf8(addr)
        return domain_addresses.canonical(text) if text and _SPECIALS.isdisjoint(text) else None
    if not addr or addr.count("@") != 1 or not _SPECIALS.isdisjoint(addr):
        return None
    try:
        parsed = MailAddress(addr_spec=addr)
    except (ValueError, IndexError, TypeError, errors.HeaderParseError):
        return None
    if not parsed.username or not parsed.domain or parsed.domain.startswith("["):
        return None
    return parsed.addr_spec


_SPECIALS = frozenset('\r\n\t ,;<>"=?')


def _utf8(text: str) -> str | None:
    """``text`` with the surrogate escapes of its 8-bit bytes read as UTF-8, or None when they
    are no UTF-8 (an address is never guessed in another charset)."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8")
    except UnicodeError:
        return None


def not_one(msg: Message, name: str) -> str | None:
    """Why the address header ``name`` names no single mailbox, or None: the header more than
    once, several addresses, or a group (``grp: a@x, b@y;``, which the list parser reads as its
    plain members).  RFC 5322 allows one From and one Reply-To: of two, a forger writes the
    victim's first, and none can be told to be the writer's."""
    try:
        fields = sum(key.lower() == name.lower() for key in msg)
    except Exception:  # noqa: BLE001 - unreadable: judged by its first field alone
        fields = 1
    if fields > 1:
        return f"the mail has {fields} {name} headers"
    value = raw_header(msg, name)[:PARSED_VALUE_CHARS]
    if not value:
        return None
    count = len([a for _, a in email.utils.getaddresses([value]) if a])
    try:
        groups = POLICY.header_factory(name, value).groups
    except Exception:  # noqa: BLE001 - unreadable: judged by the list parser alone
        groups = ()
    if any(group.display_name is not None for group in groups):
        return f"the {name} header is a group of addresses"
    count = max(count, sum(len(group.addresses) for group in groups))
    return f"the {name} header names {count} addresses" if count > 1 else None


def display_name(name: str) -> str:
    """A display name decoded for showing only (never read as an address)."""
    try:
        chunks = email.header.decode_header(name[:PARSED_VALUE_CHARS])  # (quadratic)
        text = "".join(decode_bytes(c, cs) if isinstance(c, bytes) else c for c, cs in chunks)
    except Exception:  # noqa: BLE001
        text = name
    return " ".join(_CONTROL.sub(" ", unsurrogate(text)).split())[:100]


def addresses(msg: Message, name: str) -> list[tuple[str, str]]:
    """(display name, address) pairs of an address header, read from its raw, undecoded value:
    an encoded word in a display name can never turn into an address."""
    value = raw_header(msg, name)[:PARSED_VALUE_CHARS]
    if not value:
        return []
    try:
        pairs = email.utils.getaddresses([value])
    except Exception:  # noqa: BLE001
        return []
    return [(display_name(n), a) for n, a in pairs if a]

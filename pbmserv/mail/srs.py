"""Envelope senders rewritten by a forwarder with the Sender Rewriting Scheme (SRS).

A forwarder that rewrites the envelope sender of a mail it passes on writes it anew each time
(a new hash, and a new timestamp each day):

- ``SRS0=HHHH=TT=orig.example=alice@fwd.example``: alice@orig.example, forwarded once by
  fwd.example;
- ``SRS1=HHHH=fwd1.example==HHHH=TT=orig.example=alice@fwd2.example``: the same, forwarded
  by fwd1.example and then by fwd2.example (which keeps fwd1's SRS0 address and hashes it).

The inbox keyed a mail by its envelope sender, so a resend through the same forwarder got a
new key and ran again (and a copy resent under any other envelope, too); its key is now the
mail's own (:func:`pbmserv.mail.inbox.dedup_key`).  :func:`for_key` gives the envelope part
of the key it had before, under which the mails stored (and keys kept) then are found: the
address such an envelope stands for, its hashes and timestamp dropped, *with* the forwarders'
domains.  The hash is not checked here: only the forwarder knows its secret.
"""

from __future__ import annotations

import re

_SRS0 = re.compile(r"srs0[=+-](?P<rest>.+)", re.IGNORECASE)
_SRS1 = re.compile(r"srs1[=+-][^=]*=(?P<first>[^=]+)=[=+-](?P<rest>.+)", re.IGNORECASE)


def for_key(envelope: str) -> str:
    """The envelope sender as the inbox key takes it: an SRS address (see above) as the
    address it stands for and the forwarders it came through; any other address unchanged.

    >>> for_key("SRS0=HHHH=TT=orig.example=alice@fwd.example")
    'alice@orig.example (SRS: fwd.example)'
    >>> for_key("srs1+GGGG=fwd1.example==HHHH=TT=orig.example=alice@fwd2.example")
    'alice@orig.example (SRS: fwd1.example fwd2.example)'
    >>> for_key("alice@orig.example"), for_key("SRS0=broken@fwd.example")
    ('alice@orig.example', 'SRS0=broken@fwd.example')
    """
    address = envelope.strip()
    local, at, domain = address.rpartition("@")
    if not at:
        return address
    forwarders = [domain.lower()]
    nested = _SRS1.fullmatch(local)
    if nested is not None:
        forwarders.insert(0, nested["first"].lower())
        local = "SRS0=" + nested["rest"]
    plain = _SRS0.fullmatch(local)
    if plain is None:
        return address
    parts = plain["rest"].split("=", 3)  # hash, timestamp, original domain, original local part
    if len(parts) < 4 or not parts[2] or not parts[3]:
        return address
    return f"{parts[3]}@{parts[2].lower()} (SRS: {' '.join(forwarders)})"

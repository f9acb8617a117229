"""Mail addresses in one form, internationalised ones (RFC 6531/6532) included.

An address is kept, compared and counted in one form: its local part in Unicode NFC,
lower-cased; its domain as IDNA A-labels (``xn--...``), lower-cased.  ``Jörg@Bücher.example``,
``jörg@xn--bcher-kva.example`` and ``JÖRG@BÜCHER.EXAMPLE`` (composed or not) are one mailbox,
``jörg@xn--bcher-kva.example``: one account's address, one cap.  An ASCII address keeps the form
it always had (lower-cased), and a domain in A-labels is what goes to the relay, so that only a
local part that is not ASCII needs SMTPUTF8 (:func:`needs_smtputf8`).

A local part may hold letters of any script, never what cannot be seen or told apart from a
blank: control and format characters (zero-width spaces, direction marks), blanks, private use
and unassigned code points, and the other characters that show as nothing (:data:`INVISIBLE`:
the combining grapheme joiner, variation selectors, Hangul fillers, the blank Braille
pattern), though they are marks or letters (``alice\\u200b@example.org`` or
``alice\\u034f@example.org`` would pass for Alice's address).

>>> canonical("Jörg@Bücher.Example")
'jörg@xn--bcher-kva.example'
>>> canonical("用户@例子.中国")
'用户@xn--fsqu00a.xn--fiqs8s'
>>> canonical("alice\\u200b@example.org") is None, canonical("a@b@example.org") is None
(True, True)

Where an address is shown to a person (:func:`shown`), its domain is written in Unicode, as
its player wrote it: ``jörg@bücher.example``; the headers of our mail keep the one form.
>>> shown("jörg@xn--bcher-kva.example"), shown("alice@xn--pple-43d.example")
('jörg@bücher.example', 'alice@xn--pple-43d.example')
>>> shown(canonical("bob@аррӏе.example")), shown(canonical("bob@пример.рф"))
('bob@xn--80ak6aa92e.example', 'bob@пример.рф')
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import idna

# a host name in A-labels: letters, digits and hyphens; the top label letters, or an A-label
_DOMAIN_RE = re.compile(
    r"^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$|^localhost$"
)
_UNSEEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})
# Characters that show as nothing though no format character (those are all unseen too): the
# soft hyphen, the zero-width (non-)joiners, the combining grapheme joiner, Mongolian and
# other variation selectors, Hangul fillers.  (Also what a comment's passwords are read
# through: pbmserv.commands.secret_words.)
INVISIBLE = frozenset(
    "\u00ad\u200c\u200d\u034f\u115f\u1160\u180b\u180c\u180d\u180f\u3164\uffa0"
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)
_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_LOCAL = 64  # octets of a local part (RFC 5321)
# octets of an address (RFC 5321's path of 256 with its brackets): a longer one is no mailbox,
# and no column of the store (320 characters) may be given one (PostgreSQL refuses it)
MAX_ADDRESS = 254


@lru_cache(maxsize=1024)
def canonical(text: str) -> str | None:
    """The one form of the addr-spec ``text`` is (see the module's text); None unless it is
    exactly one addr-spec with a host name for a domain: no lists, no display names, no
    quoted local parts, no address literals."""
    from email.errors import HeaderParseError  # lazy: the mail header parser is large
    from email.headerregistry import Address as MailAddress  # lazy: as above

    text = unicodedata.normalize("NFC", text.strip())
    if not text.isascii() and _SURROGATE.search(text):  # bytes that were no UTF-8
        return None
    local, at, domain = text.rpartition("@")
    if not at or not local or '"' in local or len(local.encode("utf-8")) > MAX_LOCAL:
        return None
    if "\ufffd" in local or any(not c.isascii() and _unseen(c) for c in local):
        return None
    host = a_labels(domain)
    if host is None or not _DOMAIN_RE.match(host):
        return None
    # the structure is checked by the standard library's parser, which takes ASCII local
    # parts only: each other character stands for a letter (RFC 6531's atext)
    shape = "".join(c if c.isascii() else "a" for c in local)
    try:
        parsed = MailAddress(addr_spec=f"{shape}@{host}")
    except (ValueError, IndexError, TypeError, HeaderParseError):
        return None
    if parsed.username != shape or parsed.domain != host:
        return None
    local = unicodedata.normalize("NFC", local.lower())
    address = f"{local}@{host}"
    return address if len(address.encode("utf-8")) <= MAX_ADDRESS else None


def _unseen(char: str) -> bool:
    """Whether ``char`` cannot be seen in an address, or looks like a blank."""
    return char in INVISIBLE or char == "\u2800" or unicodedata.category(char) in _UNSEEN


def a_labels(domain: str) -> str | None:
    """``domain`` in lower-case A-labels, or None when it is no valid internationalised name
    (IDNA 2008 with the UTS 46 mapping, as browsers and mail programs read names)."""
    domain = domain.strip()
    if domain.isascii():
        return domain.lower()
    try:
        return idna.encode(domain, uts46=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError, ValueError):
        return None


def needs_smtputf8(address: str) -> bool:
    """Whether mail to ``address`` (in its one form) needs the relay's SMTPUTF8."""
    return not address.isascii()


@lru_cache(maxsize=1024)
def shown(address: str) -> str:
    """``address`` (in its one form) as a person reads it: its domain in Unicode (U-labels).

    A label that mixes scripts stays in A-labels (``xn--pple-43d`` for 'аpple' with a
    Cyrillic 'а'): such names are a phishing trick, and IDNA 2008 lets them through; as
    ``xn--`` the odd one shows.  Japanese, Chinese and Korean labels mix scripts as their
    writing does (UTS 39's highly restrictive sets), and are shown.  So does a label written
    wholly in Cyrillic letters that look Latin ('аррӏе', all Cyrillic, reads 'apple': a
    whole-script confusable), unless its top-level domain is Cyrillic (.рф), where a reader
    expects Cyrillic."""
    local, at, domain = address.rpartition("@")
    if not at or "xn--" not in domain:
        return address
    try:
        labels = [idna.decode(x) if x.startswith("xn--") else x for x in domain.split(".")]
    except (idna.IDNAError, UnicodeError, ValueError):
        return address
    cyrillic_top = any(_script(char) == "CYRILLIC" for char in labels[-1])
    if any(_mixed_scripts(x) or (_latin_alike(x) and not cyrillic_top) for x in labels):
        return address
    return f"{local}@{'.'.join(labels)}"


def listed(addresses: list[str]) -> str:
    """``addresses`` as a person reads them, in a line."""
    return ", ".join(shown(address) for address in addresses)


# the scripts one label may mix (UTS 39's highly restrictive level): Japanese, Chinese, Korean
_WRITINGS = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)


# Cyrillic letters that a reader takes for the Latin ones they look like (a c d e h i j l o p q
# s w x y v w b n r): a label of these alone passes for a Latin name.  Letters that only half
# look Latin (к, м, т, в) are not among them, so that most Russian words show as written.
_LATIN_ALIKE = frozenset("асԁеһіјӏорԛѕԝхуѵѡьпг")


def _script(char: str) -> str:
    """The script of a letter, by the first word of its Unicode name ('' if none)."""
    return unicodedata.name(char, "").split(" ")[0]


def _latin_alike(label: str) -> bool:
    """Whether the letters of ``label`` are all Cyrillic ones that look Latin (UTS 39's
    whole-script confusables, for the letters of :data:`_LATIN_ALIKE`)."""
    letters = [char for char in label if unicodedata.category(char).startswith("L")]
    return bool(letters) and all(char in _LATIN_ALIKE for char in letters)


def _mixed_scripts(label: str) -> bool:
    """Whether the letters of ``label`` are of several scripts that no writing mixes (a
    letter's script is the first word of its Unicode name; digits, hyphens, marks and the
    signs shared by scripts count for none)."""
    scripts = set()
    for char in label:
        if not unicodedata.category(char).startswith("L"):
            continue
        script = _script(char)
        if script in ("MODIFIER", "KATAKANA-HIRAGANA", ""):
            continue
        scripts.add("HAN" if script == "CJK" else script)
    return len(scripts) > 1 and not any(scripts <= writing for writing in _WRITINGS)

"""Passwords as they may stand in a mail's prose, found to be masked.

A player who writes his password into a comment writes it as it comes: in another case, next
to punctuation (``(Secret1),``, ``pw=secret1``), or as his phone or keyboard spells it, with
full-width letters (``ｓｅｃｒｅｔ１``) or invisible soft hyphens and zero-width joiners
inside it (pasted from a word processor).  Each of those reads as the password to whoever gets
the comment, so each is masked; a password inside a longer word of letters and digits is
another word and stays.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# Characters that show as nothing inside a word: the soft hyphen, the combining grapheme
# joiner, the zero-width (non-)joiners, the invisible operators and the variation selectors.
# (Zero-width spaces separate words, see grammar.plain_blanks: a mail's text has plain
# spaces for them.)
INVISIBLE = frozenset(
    "\u00ad\u034f\u200c\u200d" + "".join(map(chr, [*range(0x2061, 0x2065), *range(0xFE00, 0xFE10)]))
)


def secrets_pattern(secrets: Iterable[str]) -> re.Pattern[str] | None:
    """The passwords as they may stand in prose: in any case, and joined to punctuation or
    other text, though not inside a longer word of letters and digits (None: no password)."""
    # (one that reads as nothing, "\u00ad" typed as a userid, matched between any two
    # blanks or signs: the whole answer and the mail's kept copy were strewn with masks)
    words = sorted({w for s in secrets if (w := _folded(s)[0]).strip()}, key=len, reverse=True)
    if not words:
        return None
    either = "|".join(re.escape(w) for w in words)
    return re.compile(rf"(?<![^\W_])(?:{either})(?![^\W_])", re.IGNORECASE)


def mask_secrets(pattern: re.Pattern[str], line: str, mask: str) -> str:
    """``line`` with each password ``pattern`` finds replaced by ``mask``, however spelled."""
    if line.isascii():
        return pattern.sub(mask, line)
    folded, origin = _folded(line)
    spans = [(origin[m.start()], origin[m.end() - 1] + 1) for m in pattern.finditer(folded)]
    for start, end in reversed(spans):
        line = line[:start] + mask + line[end:]
    return line


def _folded(text: str) -> tuple[str, list[int]]:
    """``text`` as it reads (NFKC, so full-width letters are plain ones, invisible characters
    dropped), and for each of its characters the index in ``text`` it comes from."""
    out: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char in INVISIBLE:
            continue
        plain = unicodedata.normalize("NFKC", char) if not char.isascii() else char
        out.append(plain)
        origin.extend([index] * len(plain))
    return "".join(out), origin

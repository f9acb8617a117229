"""Passwords as they may stand in a mail's prose, found to be masked.

A player who writes his password into a comment writes it as it comes: in another case, next
to punctuation (``(Secret1),``, ``pw=secret1``), or as his phone or keyboard spells it, with
full-width letters (``ｓｅｃｒｅｔ１``), accents typed as combining marks, or invisible soft
hyphens, zero-width joiners or direction marks inside it (pasted from a word processor).  Each of those reads as the password to whoever gets
the comment, so each is masked; a password inside a longer word of letters and digits is
another word and stays.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from pbmserv.domain.addresses import INVISIBLE

# Characters that show as nothing inside a word: every format character (the soft hyphen,
# the zero-width (non-)joiners, direction marks and isolates, the word joiner...), and the
# other default-ignorable ones (INVISIBLE, which an address may not hold either): the
# combining grapheme joiner, variation selectors, Hangul fillers.  (Zero-width spaces separate
# words, see grammar.plain_blanks: a mail's text has plain spaces for them.)


PLAIN, UNSEEN, MARK = 0, 1, 2


@lru_cache(maxsize=8192)
def _kind(char: str) -> int:
    """Whether ``char`` shows as nothing (UNSEEN), is a combining mark (MARK), or neither."""
    if char in INVISIBLE or unicodedata.category(char) == "Cf":
        return UNSEEN
    return MARK if unicodedata.category(char)[0] == "M" else PLAIN


@lru_cache(maxsize=8192)
def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


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
    folded, starts, ends = _folded(line)
    spans = [(starts[m.start()], ends[m.end() - 1]) for m in pattern.finditer(folded)]
    for start, end in reversed(spans):
        line = line[:start] + mask + line[end:]
    return line


def _folded(text: str) -> tuple[str, list[int], list[int]]:
    """``text`` as it reads (NFKC, so full-width letters are plain ones and an accent typed as
    a combining mark is the accented letter; invisible characters dropped), and for each of
    its characters where in ``text`` the character it comes from starts and ends (a letter
    with its combining marks is one)."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    kinds = [PLAIN if char.isascii() else _kind(char) for char in text]
    index, size = 0, len(text)
    while index < size:
        if kinds[index] == UNSEEN:
            index += 1
            continue
        end = index + 1
        while end < size and kinds[end] != PLAIN:  # its combining marks (and unseen ones)
            end += 1
        char = text[index]
        if end == index + 1:
            plain = char if char.isascii() else _nfkc(char)
        else:
            marks = "".join(
                c
                for c, k in zip(text[index + 1 : end], kinds[index + 1 : end], strict=True)
                if k == MARK
            )
            plain = _nfkc(char + marks)
        out.append(plain)
        starts.extend([index] * len(plain))
        ends.extend([end] * len(plain))
        index = end
    return "".join(out), starts, ends

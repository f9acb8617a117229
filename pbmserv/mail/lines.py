"""Which lines of a mail body are commands, which only look like one, and which are comment.

Commands are found in the unquoted text anywhere above the signature, also below a quoted
mail (a reply that quotes first).  At the top of the text, and at the top of each block that
follows a quote, any line starting with a command word is a command (the classic servers'
rule).  Further down, inside the player's prose, a line must look unmistakably like one: a
command word followed by a known verb or by a board number.  A line that nearly is a command
(``plois shwo 102``, or ``move 101 bob pw e2`` without its game word) is neither run nor shown
to anyone as a comment: it is reported to the sender.

The mail replied to is never read when a mail program pastes it unquoted below the reply
(after "On ... wrote:" with no ``>`` below it, or under Outlook's "From: ... Sent: ..."
block): it is our own mail, and its lines (a code mail's ``confirm CODE``, a reset mail's
``password new``) are no answer of the sender's.  A phone's signature ("Sent from my
iPhone") is neither command nor comment.

>>> b = read_body("Hi!\\n\\npolis move 101 bob pw e2\\nplois shwo 102\\n", {"polis"}, {"move"})
>>> b.commands, b.not_understood, b.comment
(['polis move 101 bob pw e2'], ['plois shwo 102'], 'Hi!')
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection
from dataclasses import dataclass, field

from pbmserv.commands.grammar import split_words
from pbmserv.commands.spelling import closest
from pbmserv.games import all_games
from pbmserv.numbers import whole_number

DEFAULT_VERBS: frozenset[str] = frozenset(
    {"move", "board", "challenge", "show", "games", "history", "preview", "help", "swap"}
    | {"resign", "queue", "submit", "confirm", "subscribe", "unsubscribe", "notify", "chat"}
    | {"export", "showas", "mvoe", "qboard", "boardq", "moveq", "password", "address"}
    | {"notifications", "message", "broadcast"}
)
"""Words that follow a command word in a command line; the worker passes the registry's."""

MAX_WORDS_OF_A_COMMAND = 16
NEEDS_VERB = frozenset({"all"})  # command words that are common words: only with a verb
FIRST_BOARD = 101  # boards are numbered from 101: ``Move 12 was a blunder`` is prose

_SIGNATURE = re.compile(r"^(?:--|-- |__+)\s*$")
_ORIGINAL = re.compile(
    r"^\s*(?:-{2,}\s*(?:original message|ursprüngliche nachricht|forwarded message)\s*-{2,}"
    r"|_{5,})\s*$",
    re.I,
)
_ATTRIBUTION = re.compile(
    r"^\s*(?:on\b.*\bwrote|am\b.*\bschrieb\b.*|le\b.*\ba écrit)\s*:\s*$", re.I
)
_ATTRIBUTION_END = re.compile(r"(?:\bwrote|\bschrieb\b.*|a écrit)\s*:\s*$", re.I)
# the lines a board mail asks its reader to send back (pbmserv.render.board_mail.reply_line:
# a move, a swap, an answer to a proposal), still unfilled: a mail client that pastes the
# original below a reply without quoting it would otherwise have them run, and count a
# wrong password against the player
_REPLY_TEMPLATE = re.compile(
    r"\sPASSWORD\s+(?:<move>(?:#\d+)?|swap#\d+|(?:accept|reject)(?:#\d+)?)\s*$"
    r"|^\s*password\s+new\s.*\sNEWPASSWORD\s*$"  # a reset mail's line, its new password unset
)
MAX_ATTRIBUTION = 300
# the header block above an unquoted original (Outlook's): "From: ..." then "Sent: ..."
_HEADER_FROM = re.compile(r"^\s*(?:from|von|de)\s*:\s*\S", re.I)
_HEADER_NEXT = re.compile(r"^\s*(?:sent|date|gesendet|datum|envoyé)\s*:\s*\S", re.I)
HEADER_BLOCK = 3  # lines after "From:" in which "Sent:" or "Date:" is looked for
# a phone's signature, without "-- " above it
_PHONE_SIGNATURE = re.compile(
    r"^\s*(?:sent from (?:my )?[\w .-]{1,30}|get outlook for [\w .-]{1,30}"
    r"|von meinem [\w .-]{1,30} gesendet|envoyé de mon [\w .-]{1,30})\s*$",
    re.I,
)


LEFT_OUT = "[a line not understood: left out]"
# a game parameter or server option (``-classic``, ``--forfeittime=10``): a line of them alone
# below a command line is its tail, cut off by a line break, and is reported, never a comment
_OPTION = re.compile(r"--?[A-Za-z][\w-]*(?:=\S*)?")


def _is_option(word: str) -> bool:
    """Whether ``word`` reads as a parameter or option: ``--anything``, ``-name=value``, or
    a flag one of the games has (``-partnership``); a signature such as ``-Alice`` does not."""
    if not _OPTION.fullmatch(word):
        return False
    return word.startswith("--") or "=" in word or word[1:].lower() in _game_flags()


@functools.cache
def _game_flags() -> frozenset[str]:
    """The flags of every game (loaded only when a line might be a command's cut-off tail)."""
    return frozenset(p.name for game in all_games() for p in game.params if p.is_flag)


@dataclass
class BodyLines:
    """The three kinds of lines of one mail body (quotes and signature left out).

    Lines not understood past the limit of :func:`read_body` are counted in
    ``not_understood_over``, and ``text`` is the text read with :data:`LEFT_OUT` in their
    place: nothing later (the answer, the quote of the mail, its kept copy) masks them one by
    one, or lists them."""

    commands: list[str] = field(default_factory=list)
    not_understood: list[str] = field(default_factory=list)
    comment: str = ""
    not_understood_over: int = 0
    text: str = ""


def _words(line: str) -> list[str]:
    """The words of a line, split as the masking splits them (one rule:
    :func:`pbmserv.commands.grammar.split_words`)."""
    return [w for w in split_words(line) if w != "**"]


def clean_command(line: str) -> str:
    """A command line as the dispatcher gets it: single blanks, no ``**`` markers."""
    return " ".join(_words(line))


def attribution_span(lines: list[str], i: int) -> int:
    """How many lines the attribution ("On ... wrote:") at ``lines[i]`` takes: 0, 1 or 2."""
    line = lines[i]
    if len(line) > MAX_ATTRIBUTION:  # also keeps the regular expressions linear
        return 0
    if _ATTRIBUTION.match(line):
        return 1
    # Gmail folds long attributions: "On ..., Alice <" / "alice@example.org> wrote:"
    if (
        line.strip().lower().startswith(("on ", "am ", "le "))
        and i + 1 < len(lines)
        and len(lines[i + 1]) <= MAX_ATTRIBUTION
        and _ATTRIBUTION_END.search(lines[i + 1])
    ):
        return 2
    return 0


def _kind(
    words: list[str], top: bool, command_words: Collection[str], verbs: Collection[str]
) -> str:
    """'command', 'unclear' or 'text' for the words of one unquoted line."""
    if not words or _REPLY_TEMPLATE.search(" ".join(words)):
        return "text"
    first = words[0].lower()
    # a long line is prose, unless it opens the body with a command word (a signup with a
    # list of addresses must get its answer, not "no command found")
    if len(words) > MAX_WORDS_OF_A_COMMAND and not (top and first in command_words):
        return "text"
    numbered = any(c.isdigit() for w in words[1:] for c in w)
    if first in command_words:
        if first in NEEDS_VERB and (len(words) < 2 or words[1].lower() not in verbs):
            return "text"  # "All the best!" is no command
        if top or (len(words) > 1 and (words[1].lower() in verbs or numbered)):
            return "command"
        return "text"
    if len(words) > 1 and numbered and closest(first, command_words) is not None:
        return "unclear"
    if top and first in verbs and len(words) > 2 and (whole_number(words[1]) or 0) >= FIRST_BOARD:
        return "unclear"  # the game word forgotten: ``move 101 alice PASSWORD a7-a6`` (where
        # commands stand: in prose, "Move 123 was a blunder" is a comment)
    return "text"


def line_kind(line: str, command_words: Collection[str], verbs: Collection[str]) -> str:
    """'command', 'unclear' or 'text' for a line read alone (a Subject), as the top of a body."""
    return _kind(_words(line), True, {w.lower() for w in command_words}, {v.lower() for v in verbs})


def read_body(
    text: str,
    command_words: Collection[str],
    verbs: Collection[str] = DEFAULT_VERBS,
    *,
    max_not_understood: int | None = None,
) -> BodyLines:
    """Sort the lines of ``text`` (see the module's docstring); the comment is tidied.  At
    most ``max_not_understood`` lines not understood are kept, the rest only counted (see
    :class:`BodyLines`)."""
    words_cmd = frozenset(w.lower() for w in command_words)
    verbs_l = {v.lower() for v in verbs}
    lines = text.split("\n")
    out = BodyLines()
    comment: list[str] = []
    top = True
    after_command = False  # the line above is a command line
    i = 0
    while i < len(lines):
        line = lines[i]
        if _SIGNATURE.match(line) or (len(line) <= MAX_ATTRIBUTION and _ORIGINAL.match(line)):
            break
        span = attribution_span(lines, i)
        if (span and not _quoted_below(lines, i + span)) or _header_block(lines, i):
            break  # the mail replied to, pasted unquoted
        if len(line) <= MAX_ATTRIBUTION and _PHONE_SIGNATURE.match(line):
            i += 1
            continue
        if span or line.lstrip().startswith(">"):
            top, after_command = True, False  # the block below a quote starts afresh
            i += span or 1
            continue
        words = _words(line)
        kind = _kind(words, top, words_cmd, verbs_l)
        if kind == "text" and after_command and words and all(map(_is_option, words)):
            kind = "unclear"  # the tail of the command line above, cut off by a line break
        after_command = kind == "command"
        if kind == "command":
            out.commands.append(clean_command(line))
        elif kind == "unclear":
            if max_not_understood is None or len(out.not_understood) < max_not_understood:
                out.not_understood.append(clean_command(line))
            else:
                out.not_understood_over += 1
                lines[i] = LEFT_OUT
        else:
            comment.append(line)
            top = top and not line.strip()
        i += 1
    out.comment = _tidy(comment)
    out.text = "\n".join(lines) if out.not_understood_over else text
    return out


def _quoted_below(lines: list[str], i: int) -> bool:
    """Whether the first line with text from ``lines[i]`` on is quoted (``>``), or there is
    none: an attribution above it introduces a quote, not a pasted copy."""
    for line in lines[i:]:
        if line.strip():
            return line.lstrip().startswith(">")
    return True


def _header_block(lines: list[str], i: int) -> bool:
    """Whether ``lines[i]`` starts the header block a mail program puts above the mail
    replied to: "From: ..." and, within the next lines, "Sent: ..." or "Date: ..."."""
    if len(lines[i]) > MAX_ATTRIBUTION or not _HEADER_FROM.match(lines[i]):
        return False
    return any(
        len(line) <= MAX_ATTRIBUTION and _HEADER_NEXT.match(line)
        for line in lines[i + 1 : i + 1 + HEADER_BLOCK]
    )


def _tidy(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        line = line.rstrip()
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)

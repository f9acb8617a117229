"""The command grammar read from the declarations: what starts a command line, where its
passwords sit, and how to hide them.

:func:`mask_passwords` finds command lines in any text (quoted with ``>``, in a header like
``Subject: Re: ploy move ...``, in a sentence) and replaces their password words with
``********``, binding each line to its declaration exactly as the command itself would
(:func:`pbmserv.commands.spec.bind`).  Quoted passwords (``"my secret"``) are one word, as the
dispatcher splits them.  A misspelt command word (``polis mvoe``, ``sigunp``,
``change pasword``) is read as the command it is closest to, so its password is hidden too.

>>> mask_passwords("> ploy move 101 alice s3cret e4-e5")
'> ploy move 101 alice ******** e4-e5'
>>> mask_passwords('polis move 101 alice "my secret" a7-a6')
'polis move 101 alice ******** a7-a6'
>>> mask_passwords("sigunp carol s3cret")
'sigunp carol ********'
"""

from __future__ import annotations

import difflib
import hashlib
import re
import shlex
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import lru_cache

from pbmserv.commands import registry
from pbmserv.commands.spec import Command, Group, Kind, bind
from pbmserv.games import all_games, game_names

MASK = "********"
CUTOFF = 0.75  # how close a misspelt command word must be to a command's name
_BOARD_WORD = re.compile(r"\d+(?:#\d+)?")
_QUOTED_WORD = re.compile(r"""(?:"[^"]*"|'[^']*'|[^\s"'])+""")


@lru_cache(maxsize=1)
def game_words() -> frozenset[str]:
    """Every game name and alias."""
    return frozenset(w.lower() for g in all_games() for w in (g.name, *g.aliases)) | frozenset(
        game_names()
    )


def command_words() -> set[str]:
    """The words that start a command line: every top-level command, group, game and alias."""
    return {w.lower() for w in registry.top_words()} | set(game_words())


def suggest(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to a misspelt ``word``, if one is close enough."""
    if len(word) < 3:
        return None
    found = difflib.get_close_matches(word.lower(), list(choices), n=1, cutoff=CUTOFF)
    return found[0] if found else None


def _close_top_word(word: str) -> str | None:
    """The top-level command word closest to a misspelt ``word``.  Every line's first word
    asks, so the answers are remembered; a word twice as long as the longest command word
    cannot be close (difflib's ratio stays under 2/3), and is neither compared nor kept."""
    if len(word) >= 2 * _longest_top_word():
        return None
    return _close_short_top_word(word)


@lru_cache(maxsize=4096)
def _close_short_top_word(word: str) -> str | None:
    return suggest(word, [w for w in registry.top_words() if w != registry.PREFIX])


@lru_cache(maxsize=1)
def _top_word_set() -> frozenset[str]:
    return frozenset(registry.top_words())


@lru_cache(maxsize=1)
def _longest_top_word() -> int:
    return max(map(len, _top_word_set()))


def _may_hold_command(bare: Sequence[str], games: Collection[str], guess: bool) -> bool:
    """Whether :func:`resolve` could find a command anywhere in a line's (bare) words: false
    when none of its ways can start (a game or top-level word, a misspelt first word, a board
    number after two words).  Most lines of a mail are prose and headers: they stop here."""
    top = _top_word_set()
    if any(w in games or w in top for w in bare):
        return True
    if any(_BOARD_WORD.fullmatch(w) for w in bare[2:]):
        return True
    first = next((w for w in bare if w), "")
    return guess and _close_top_word(first) is not None


def _in_group(group: Group, word: str, guess: bool) -> Command | None:
    found = group.find(word)
    if found is None and guess:
        close = suggest(word, group.words())
        found = group.find(close) if close else None
    return found


def resolve(
    bare: Sequence[str],
    i: int,
    games: Collection[str],
    *,
    guess: bool,
    line_start: bool,
) -> tuple[Command, int] | None:
    """The command a line starting at ``bare[i]`` (lower-cased words) is, and the index of its
    first argument; None when it is none.

    Game words count anywhere, everyday words (``accept``, ``help``) only at a line's start; an
    unknown first word followed by a game command and a board number is a game we do not know
    by that name (``hex move 5 ...``).  With ``guess``, misspelt command words count.
    """
    n = len(bare)
    if i >= n:  # (an empty line)
        return None
    word = bare[i]
    if word == registry.PREFIX and i + 1 < n:
        return resolve(bare, i + 1, games, guess=guess, line_start=line_start)
    if word in games:
        if i + 1 < n and (command := _in_group(registry.GAME, bare[i + 1], guess)) is not None:
            return command, i + 2
        return None
    found = registry.top(word)
    if found is None and guess and line_start:
        close = _close_top_word(word)
        found = registry.top(close) if close else None
    if isinstance(found, Group):
        if i + 1 < n and (command := _in_group(found, bare[i + 1], guess and line_start)):
            return command, i + 2
        return None
    if found is not None:
        return (found, i + 1) if line_start or not found.plain_word else None
    if i + 2 < n and _BOARD_WORD.fullmatch(bare[i + 2]):
        command = _in_group(registry.GAME, bare[i + 1], guess and line_start)
        if command is not None and command.args and command.args[0].kind is Kind.BOARD:
            return command, i + 2
    return None


MAX_ARGS = 40  # words after a command word that can hold its passwords


def password_slots(
    words: Sequence[str],
    i: int,
    games: Collection[str] | None = None,
    *,
    guess: bool = True,
    line_start: bool = True,
    bare: Sequence[str] | None = None,
) -> list[int]:
    """Indexes of the password words of a command starting at ``words[i]``."""
    bare = [_bare(w) for w in words] if bare is None else bare
    found = resolve(
        bare, i, game_words() if games is None else games, guess=guess, line_start=line_start
    )
    if found is None:
        return []
    command, first = found
    if not command.password_args:
        return []
    bound = bind(command, list(words[first : first + MAX_ARGS]), lenient=True)
    return [first + k for a in command.password_args for k in bound.positions.get(a.name, [])]


def passwords(words: Sequence[str]) -> list[str]:
    """The password words of a command line already split into words (misspelt or not)."""
    return [words[j] for j in password_slots(words, 0)]


def _bare(token: str) -> str:
    return token.lstrip(">*|:").rstrip(":,;").lower()


def _spans(line: str) -> list[tuple[int, int]]:
    """The words of a line as the dispatcher splits them: quotes hold blanks when they pair."""
    if '"' not in line and "'" not in line:
        return [(m.start(), m.end()) for m in re.finditer(r"\S+", line)]
    try:
        shlex.split(line)
    except ValueError:
        return [(m.start(), m.end()) for m in re.finditer(r"\S+", line)]
    return [(m.start(), m.end()) for m in _QUOTED_WORD.finditer(line)]


def _unquote(token: str) -> str:
    if '"' not in token and "'" not in token and "\\" not in token:
        return token
    try:
        parts = shlex.split(token)
    except ValueError:
        return token
    return " ".join(parts) if parts else token


class _SlotMemo:
    """The password indexes of the lines read lately.  A mail's command line is read five or
    six times (its credentials, its record, its answer, its comment's mask), and binding it to
    its declaration each time was a tenth of the mail's processing.  Lines are kept by a
    digest, never as text: a line holds a password."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._slots: OrderedDict[tuple[bytes, frozenset[str], bool], frozenset[int]] = OrderedDict()
        self._lock = threading.Lock()  # one memo for every thread of the process

    def get(self, tokens: list[str], games: frozenset[str], guess: bool) -> frozenset[int]:
        line = "\n".join(tokens).encode("utf-8", "surrogatepass")  # (a mail's stray bytes)
        digest = hashlib.blake2b(line, digest_size=16).digest()
        key = (digest, games, guess)
        with self._lock:
            found = self._slots.get(key)
            if found is not None:
                self._slots.move_to_end(key)
                return found
        found = frozenset(_read_slots(tokens, games, guess))
        with self._lock:
            self._slots[key] = found
            if len(self._slots) > self._size:
                self._slots.popitem(last=False)
        return found


_MEMO = _SlotMemo(256)


def _line_slots(tokens: list[str], games: frozenset[str], guess: bool) -> frozenset[int]:
    """Password indexes of every command that starts somewhere in one line's tokens."""
    return _MEMO.get(tokens, games, guess)


def _read_slots(tokens: list[str], games: Collection[str], guess: bool) -> set[int]:
    bare = [_bare(t) for t in tokens]
    if not _may_hold_command(bare, games, guess):
        return set()
    words = [_unquote(t) for t in tokens]
    hide: set[int] = set()
    line_start = True
    for i in range(len(tokens)):
        if not bare[i]:
            continue
        hide.update(password_slots(words, i, games, guess=guess, line_start=line_start, bare=bare))
        line_start = False
    return hide


def _games(command_words: Collection[str] | None) -> frozenset[str]:
    """Game words: the registry's, plus any other word the caller names (a game it knows)."""
    extra = {w.lower() for w in command_words or ()} - _top_word_set()
    return game_words() | extra


def command_passwords(line: str, command_words: Collection[str] | None = None) -> list[str]:
    """The password words of one command line (unquoted)."""
    spans = _spans(line)
    tokens = [line[a:b] for a, b in spans]
    return [_unquote(tokens[j]) for j in sorted(_line_slots(tokens, _games(command_words), True))]


def command_credentials(
    line: str, command_words: Collection[str] | None = None
) -> list[tuple[str, str]]:
    """(userid, password) pairs a command line may authenticate with: each password word and
    the word before it (for ``change password U OLD NEW`` the second pair is a harmless guess)."""
    spans = _spans(line)
    tokens = [line[a:b] for a, b in spans]
    slots = sorted(_line_slots(tokens, _games(command_words), True))
    return [(_bare(tokens[j - 1]), _unquote(tokens[j])) for j in slots if j > 0]


def mask_passwords(
    text: str,
    command_words: Collection[str] | None = None,
    *,
    commands: Iterable[str] = (),
    guess: bool = True,
) -> str:
    """Replace the password words of every command line in ``text`` with ``********``.

    Passwords found in ``commands`` (a mail's command lines) are also masked wherever else
    they appear.  Blanks and the rest of each line are kept as they were.  ``guess`` also reads
    misspelt command words at a line's start; turn it off for text that others read (a
    comment), where an everyday word must not be taken for a command.
    """
    return password_mask(command_words, commands=commands, guess=guess)(text)


def password_mask(
    command_words: Collection[str] | None = None,
    *,
    commands: Iterable[str] = (),
    guess: bool = True,
) -> Callable[[str], str]:
    """:func:`mask_passwords` for many texts of one mail: its command lines are read once."""
    games = _games(command_words)
    known = {pw for line in commands for pw in command_passwords(line, command_words)}
    extra = sorted((pw for pw in known if len(pw) >= 3), key=len, reverse=True)
    return lambda text: _masked(text, games, extra, guess)


def _masked(text: str, games: frozenset[str], extra: list[str], guess: bool) -> str:
    out = []
    for line in text.split("\n"):
        spans = _spans(line)
        if not spans:
            out.append(line)
            continue
        tokens = [line[a:b] for a, b in spans]
        hide = set(_line_slots(tokens, games, guess))
        for k, token in enumerate(tokens):
            if token in extra or _unquote(token) in extra:
                hide.add(k)
        for k in sorted(hide, reverse=True):
            a, b = spans[k]
            line = line[:a] + MASK + line[b:]
        for secret in extra:  # a password with blanks, written without quotes
            if " " in secret:
                line = line.replace(secret, MASK)
        out.append(line)
    return "\n".join(out)

"""The command grammar read from the declarations: what starts a command line, where its
passwords sit, and how to hide them.

:func:`mask_passwords` finds command lines in any text (quoted with ``>``, in a header like
``Subject: Re: ploy move ...``, in a sentence) and replaces their password words with
``********``, binding each line to its declaration exactly as the command itself would
(:func:`pbmserv.commands.spec.bind`).  Quoted passwords (``"my secret"``) are one word, as the
dispatcher splits them.  A misspelt command word (``polis mvoe``, ``sigunp``,
``change pasword``) is read as the command it is closest to, so its password is hidden too.
Option words are read as the command's click parser reads them (``--`` dropped), and where a
player may have meant them otherwise, every reading is masked (see
:func:`pbmserv.commands.spec.password_positions`).  Words are separated by one rule
(:func:`split_words`), the same for the lines run and the lines masked.

>>> mask_passwords("> ploy move 101 alice s3cret e4-e5")
'> ploy move 101 alice ******** e4-e5'
>>> mask_passwords('polis move 101 alice "my secret" a7-a6')
'polis move 101 alice ******** a7-a6'
>>> mask_passwords("sigunp carol s3cret")
'sigunp carol ********'
"""

from __future__ import annotations

import hashlib
import re
import shlex
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

from pbmserv.commands import registry
from pbmserv.commands.dispatch import REFUSED, USAGE, Answer, Request
from pbmserv.commands.secret_words import mask_secrets, secrets_pattern
from pbmserv.commands.spec import (
    Command,
    Group,
    Kind,
    bind_as_run,
    is_option,
    password_positions,
    reordered_positions,
)
from pbmserv.commands.spelling import meant, suggest
from pbmserv.domain.accounts import MIN_PASSWORD
from pbmserv.games import all_games, game_names
from pbmserv.render import subjects

MASK = "********"
_BOARD_WORD = re.compile(r"\d+(?:#\d+)?")
# What separates words: every blank (Python's \s, what str.split() splits on) and the
# zero-width characters that mail clients and pasted text put between words.  A mail's text
# is given plain spaces for them once, when it is read (pbmserv.mail.parse); the masking
# splits on the same set, so that text not read that way is masked alike.
_INVISIBLE = "\u180e\u200b\u2060\ufeff"
_ODD_BLANK = re.compile(rf"[^\S\t\n ]|[{_INVISIBLE}]")
_PLAIN_WORD = re.compile(rf"[^\s{_INVISIBLE}]+")
_QUOTED_WORD = re.compile(rf"""(?:"[^"]*"|'[^']*'|[^\s"'{_INVISIBLE}])+""")


def plain_blanks(text: str) -> str:
    r"""``text`` with a plain space for every blank but tabs and line breaks (no-break and
    ideographic spaces, zero-width spaces...), character for character: the one rule for what
    separates words, applied once to a mail's text so that what runs and what is masked split
    a line alike.

    >>> plain_blanks("notifications\u200bbob\u00a0pw\tevery")
    'notifications bob pw\tevery'
    """
    return _ODD_BLANK.sub(" ", text)


def split_words(line: str) -> list[str]:
    """The words of a line, split by the one rule (:func:`plain_blanks`)."""
    return _PLAIN_WORD.findall(line)


@lru_cache(maxsize=1)
def game_words() -> frozenset[str]:
    """Every game name and alias."""
    return frozenset(w.lower() for g in all_games() for w in (g.name, *g.aliases)) | frozenset(
        game_names()
    )


def command_words() -> set[str]:
    """The words that start a command line: every top-level command, group, game and alias."""
    return set(_command_word_set())


@lru_cache(maxsize=1)
def _command_word_set() -> frozenset[str]:
    return frozenset(w.lower() for w in registry.top_words()) | game_words()


def _close_top_word(word: str) -> str | None:
    """The top-level command word closest to a misspelt ``word`` (every line's first word
    asks: :func:`pbmserv.commands.spelling.closest` remembers the answers)."""
    return suggest(word, _top_choices())


@lru_cache(maxsize=1)
def _top_choices() -> frozenset[str]:
    return frozenset(w for w in registry.top_words() if w != registry.PREFIX)


@lru_cache(maxsize=1)
def _top_word_set() -> frozenset[str]:
    return frozenset(registry.top_words())


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
    by that name (``hex move 5 ...``).  With ``guess``, misspelt command words count.  Option
    words between command words are passed over (:func:`_next_words`).
    """
    n = len(bare)
    if i >= n:  # (an empty line)
        return None
    word = bare[i]
    if word == registry.PREFIX and i + 1 < n:
        for j in _next_words(bare, i + 1):
            after = resolve(bare, j, games, guess=guess, line_start=line_start)
            if after is not None:
                return after
        return None
    if word in games:
        return _sub_command(registry.GAME, bare, i + 1, guess)
    found = registry.top(word)
    if found is None and guess and line_start:
        close = _close_top_word(word)
        found = registry.top(close) if close else None
    if isinstance(found, Group):
        return _sub_command(found, bare, i + 1, guess and line_start)
    if found is not None:
        return (found, i + 1) if line_start or not found.plain_word else None
    for j in _next_words(bare, i + 1):
        command = _in_group(registry.GAME, bare[j], guess and line_start)
        if command is None or not command.args or command.args[0].kind is not Kind.BOARD:
            continue
        if any(_BOARD_WORD.fullmatch(bare[k]) for k in _next_words(bare, j + 1)):
            return command, j + 1
    return None


def _next_words(bare: Sequence[str], i: int) -> list[int]:
    """Where the word after a command word may stand: at ``bare[i]``, or past option words.
    Click's groups drop a ``--`` there and refuse any other option; a line that holds one is
    masked as if it were not there, with or without a value."""
    out: list[int] = []
    for j in range(i, len(bare)):
        if is_option(bare[j]):
            continue
        out.append(j)
        before = bare[j - 1] if j > i else ""
        if not is_option(before) or before == "--" or "=" in before:
            break  # (else bare[j] may be the value of the option before it)
    return out


def _sub_command(
    group: Group, bare: Sequence[str], i: int, guess: bool
) -> tuple[Command, int] | None:
    for j in _next_words(bare, i):
        command = _in_group(group, bare[j], guess)
        if command is not None:
            return command, j + 1
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
    """Indexes of the words of a command starting at ``words[i]`` that may be its passwords:
    where a run binds them, and where the player may have meant them
    (:func:`pbmserv.commands.spec.password_positions`)."""
    return _slots_at(words, i, games, guess=guess, line_start=line_start, bare=bare)[0]


def _slots_at(
    words: Sequence[str],
    i: int,
    games: Collection[str] | None,
    *,
    guess: bool,
    line_start: bool,
    bare: Sequence[str] | None,
) -> tuple[list[int], list[int]]:
    """The indexes of a command's words that may be its passwords, and those its run logs in
    with (a subset: :func:`command_credentials` checks no more passwords than the run does)."""
    bare = [_bare(w) for w in words] if bare is None else bare
    found = resolve(
        bare, i, game_words() if games is None else games, guess=guess, line_start=line_start
    )
    if found is None or not found[0].password_args:
        return [], []
    command, first = found
    window = words[first : first + MAX_ARGS]
    run = bind_as_run(command, window).positions
    logins = [first + k for a in command.password_args for k in run.get(a.name, [])]
    may = password_positions(command, window)
    if may is None:  # too many ways to read it: every word may be one
        return list(range(first, len(words))), logins
    return sorted(
        first + k for k in may | reordered_positions(command, window, MIN_PASSWORD)
    ), logins


def passwords(words: Sequence[str]) -> list[str]:
    """The password words of a command line already split into words (misspelt or not)."""
    return [words[j] for j in password_slots(words, 0)]


def _bare(token: str) -> str:
    return token.lstrip(">*|:").rstrip(":,;").lower()


def _spans(line: str) -> list[tuple[int, int]]:
    """The words of a line as the dispatcher splits them: quotes hold blanks when they pair."""
    if '"' not in line and "'" not in line:
        return [(m.start(), m.end()) for m in _PLAIN_WORD.finditer(line)]
    try:
        shlex.split(line)
    except ValueError:
        return [(m.start(), m.end()) for m in _PLAIN_WORD.finditer(line)]
    return [(m.start(), m.end()) for m in _QUOTED_WORD.finditer(line)]


def _unquote(token: str) -> str:
    if '"' not in token and "'" not in token and "\\" not in token:
        return token
    try:
        parts = shlex.split(token)
    except ValueError:
        return token
    return " ".join(parts) if parts else token


class _Slots(NamedTuple):
    """Where the passwords of one line's commands may be, and where their runs read them."""

    hide: frozenset[int]
    logins: frozenset[int]


class _SlotMemo:
    """The password indexes of the lines read lately.  A mail's command line is read five or
    six times (its credentials, its record, its answer, its comment's mask), and binding it to
    its declaration each time was a tenth of the mail's processing.  Lines are kept by a
    digest, never as text: a line holds a password."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._slots: OrderedDict[tuple[bytes, frozenset[str], bool], _Slots] = OrderedDict()
        self._lock = threading.Lock()  # one memo for every thread of the process

    def get(self, tokens: list[str], games: frozenset[str], guess: bool) -> _Slots:
        line = "\n".join(tokens).encode("utf-8", "surrogatepass")  # (a mail's stray bytes)
        digest = hashlib.blake2b(line, digest_size=16).digest()
        key = (digest, games, guess)
        with self._lock:
            found = self._slots.get(key)
            if found is not None:
                self._slots.move_to_end(key)
                return found
        found = _read_slots(tokens, games, guess)
        with self._lock:
            self._slots[key] = found
            if len(self._slots) > self._size:
                self._slots.popitem(last=False)
        return found


_MEMO = _SlotMemo(256)


def _line_slots(tokens: list[str], games: frozenset[str], guess: bool) -> _Slots:
    """Password indexes of every command that starts somewhere in one line's tokens."""
    return _MEMO.get(tokens, games, guess)


def _read_slots(tokens: list[str], games: Collection[str], guess: bool) -> _Slots:
    bare = [_bare(t) for t in tokens]
    if not _may_hold_command(bare, games, guess):
        return _Slots(frozenset(), frozenset())
    words = [_unquote(t) for t in tokens]
    hide: set[int] = set()
    logins: set[int] = set()
    line_start = True
    for i in range(len(tokens)):
        if not bare[i]:
            continue
        may, run = _slots_at(words, i, games, guess=guess, line_start=line_start, bare=bare)
        hide.update(may)
        logins.update(run)
        line_start = False
    return _Slots(frozenset(hide), frozenset(logins))


def _unread_slots(tokens: list[str], games: frozenset[str]) -> set[int]:
    """The words to mask in a line that looks like a command but was not run (see
    :func:`mask_unread`)."""
    hide = set(_line_slots(tokens, games, True).hide)  # the rule of every other line
    bare = [_bare(t) for t in tokens]
    # the first word, past a subject's reply prefixes (``Re:``, ``AW:``, ``回复:``)
    first = next(
        (k for k, w in enumerate(bare) if w and not subjects.is_reply_prefix(tokens[k])), None
    )
    if first is None:
        return hide
    found = resolve(bare, first, games, guess=True, line_start=True)
    if found is not None:  # (one that takes none too: a password typed by habit, see above)
        keep = {k for k in range(first, found[1]) if bare[k] and not is_option(bare[k])}
    elif bare[first] in _command_word_set() or suggest(bare[first], _command_word_set()):
        keep = {first}  # and a game's command word after it (``plois shwo 102``)
        after = bare[first + 1] if first + 1 < len(bare) else ""
        if after and (_in_group(registry.GAME, after, True) or meant(after, registry.GAME.words())):
            keep.add(first + 1)  # (``ploy hist``, a command word begun)
    elif _in_group(registry.GAME, bare[first], False):
        keep = {first}  # a game's command word, its game word forgotten (``move 101 ...``)
    else:
        keep = set()
    if found is None:  # (no mail command: the operator's words are no secret, see there)
        keep |= _operator_words(bare, first)
    keep |= set(range(first))  # (the reply prefixes)
    keep |= {k for k, token in enumerate(tokens) if len(_unquote(token)) < MIN_PASSWORD}
    return hide | (set(range(len(tokens))) - keep)


def _operator_words(bare: Sequence[str], first: int) -> set[int]:
    """The words of an operator's command (``pbmserv robot list``) that start a line, each
    where that command has it (``robot`` first or after ``pbmserv``, ``list`` after ``robot``):
    none takes a password, and a password that is such a word stands there only on a line
    that no mail command reads; the words after them stay masked."""
    at = first + 1 if bare[first] == registry.PREFIX else first
    words = registry.OPERATOR
    kept: set[int] = set()
    while at < len(bare) and bare[at] in words:
        kept.add(at)
        words = words[bare[at]]
        at += 1
    return kept


def _games(command_words: Collection[str] | None) -> frozenset[str]:
    """Game words: the registry's, plus any other word the caller names (a game it knows)."""
    extra = {w.lower() for w in command_words or ()} - _top_word_set()
    return game_words() | extra


def command_passwords(line: str, command_words: Collection[str] | None = None) -> list[str]:
    """The words of one command line that may be its passwords (unquoted)."""
    spans = _spans(line)
    tokens = [line[a:b] for a, b in spans]
    hide = _line_slots(tokens, _games(command_words), True).hide
    return [_unquote(tokens[j]) for j in sorted(hide)]


def command_credentials(
    line: str, command_words: Collection[str] | None = None
) -> list[tuple[str, str]]:
    """(userid, password) pairs a command line may authenticate with: each password word its
    run reads and the word before it (for ``change password U OLD NEW`` the second pair is a
    harmless guess)."""
    spans = _spans(line)
    tokens = [line[a:b] for a, b in spans]
    slots = sorted(_line_slots(tokens, _games(command_words), True).logins)
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


def mask_unread(line: str, command_words: Collection[str] | None = None) -> str:
    """A line that looks like a command but was not run (a mistyped one), as its sender may
    be shown it.  No login said where its password is, and a forgotten userid or a word out
    of place puts it anywhere: so besides the words :func:`mask_passwords` masks, every word
    is masked but those that cannot be a password: the words read as the command (else the
    first word, when it is close to a command word, and a game's command word after it) and
    words shorter than any password.  So is a line read as a command that takes no password:
    a player may have typed his userid and password after it by habit ('polis show 101 bob
    PASSWORD' was answered "'bob' is not a board number" above the line as typed).

    >>> mask_unread("plois mvoe 101 Sekrit77 a7-a6")
    'plois mvoe 101 ******** ********'
    >>> mask_unread("plois shwo 102")
    'plois shwo 102'
    """
    return password_mask(command_words, unread=[line])(line)


def usage_secrets(words: Sequence[str], command_words: Collection[str] | None = None) -> set[str]:
    """The words of a command line (split) that its usage error must not show: those
    :func:`mask_unread` masks, since a line refused as usage was not read as its command, but
    its first word, which the run took for a command word (``No such command 'shwo'``)."""
    tokens = [shlex.quote(word) if word else "''" for word in words]
    hidden = _unread_slots(tokens, _games(command_words)) - {0}  # (run as the command's word)
    return {words[k] for k in hidden}


def read_for_passwords(line: str, req: Request, answers: Iterable[Answer]) -> bool:
    """Whether a command line that ran (``req``, its ``answers``) was read for its passwords:
    only then does masking it by its declaration hide them all.  Not when it was refused as
    usage (not read as its command: ``polis move alice PASSWORD e2``), when its login was
    refused or a word of it named no player (it may have been misread: ``polis move 101 alice
    alice PASSWORD``, ``polis history 101 bob PASSWORD``), nor when it was refused and its
    command takes no password (one typed by habit: ``polis show 999 bob PASSWORD``).  Its
    password may then stand anywhere: it is masked as a line not understood."""
    statuses = {answer.status for answer in answers}
    if USAGE in statuses or req.login_refused or req.secret_words:
        return False
    return REFUSED not in statuses or bool(command_passwords(line))


def _line_key(line: str) -> str:
    """A line as the mail parser gives its commands and lines not understood: its words,
    single spaces, no ``**`` markers."""
    return " ".join(word for word in split_words(line) if word != "**")


class PasswordMask:
    """:func:`mask_passwords` for the texts of one mail: its command lines are read once, the
    lines it did not understand are masked as :func:`mask_unread` shows them, and words its
    commands found out to be secret are masked too once :meth:`hide` is told them."""

    def __init__(
        self, games: frozenset[str], known: Iterable[str], guess: bool, unread: Iterable[str]
    ) -> None:
        self._games = games
        self._guess = guess
        self._extra = sorted({pw for pw in known if len(pw) >= 3}, key=len, reverse=True)
        self._unread = frozenset(_line_key(line) for line in unread)

    def hide(self, words: Iterable[str]) -> None:
        """Mask ``words`` wherever they stand as a word, however short: a userid that names
        no account may be the password of a line whose userid was forgotten."""
        added = {w for w in words if w} - set(self._extra)
        self._extra = sorted([*self._extra, *added], key=len, reverse=True)

    def __call__(self, text: str) -> str:
        return _masked(text, self._games, self._extra, self._guess, self._unread)

    def misread(self, line: str) -> None:
        """A command line not read for its passwords (:func:`read_for_passwords`): where its
        password stands is not known (``polis move alice PASSWORD e2``, the board forgotten),
        so it is masked from now on as a line not understood (the usage errors themselves are
        masked so by the runner, :func:`usage_secrets`)."""
        self._unread = self._unread | {_line_key(line)}


def password_mask(
    command_words: Collection[str] | None = None,
    *,
    commands: Iterable[str] = (),
    guess: bool = True,
    unread: Iterable[str] = (),
) -> PasswordMask:
    """:func:`mask_passwords` for many texts of one mail: its command lines are read once;
    ``unread`` are its lines not understood (masked as :func:`mask_unread` shows them)."""
    known = [pw for line in commands for pw in command_passwords(line, command_words)]
    return PasswordMask(_games(command_words), known, guess, unread)


def _masked(
    text: str,
    games: frozenset[str],
    extra: list[str],
    guess: bool,
    unread: frozenset[str] = frozenset(),
) -> str:
    secrets = secrets_pattern(extra)
    out = []
    for line in text.split("\n"):
        spans = _spans(line)
        if not spans:
            out.append(line)
            continue
        tokens = [line[a:b] for a, b in spans]
        if unread and _line_key(line) in unread:
            hide = _unread_slots(tokens, games)
        else:
            hide = set(_line_slots(tokens, games, guess).hide)
        hide.update(k for k, token in enumerate(tokens) if _unquote(token) in extra)
        for k in sorted(hide, reverse=True):
            a, b = spans[k]
            line = line[:a] + MASK + line[b:]
        if secrets is not None:  # (and a password with blanks, written without quotes)
            line = mask_secrets(secrets, line, MASK)
        out.append(line)
    return "\n".join(out)

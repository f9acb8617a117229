"""Command declarations: each command is declared once, and everything else reads it.

A :class:`Command` has a name, aliases, a help line and its arguments with their kinds.  From
the declarations come the click commands and their usage text (:mod:`pbmserv.commands.tree`),
the binding of the words of a command line to arguments (:func:`bind`, used by the click
callbacks), ``help``, the mail parser's "is this a command line?" and password masking
(:mod:`pbmserv.commands.grammar`).  Nothing else knows where a password sits.

Arguments are bound in order from the words that are not options:

- ``BOARD``: a board number, ``101#5`` (the board at move 5); tournament board names
  (``t3r2b5``) are turned into numbers before binding.
- ``USERID``: one word.
- ``PASSWORD``: one word, never echoed.  From a shell, ``PBMSERV_PASSWORD`` stands for it (the
  word is then not taken, unless it is that password or the ``PASSWORD`` of the lines our
  mails give: typed or pasted all the same, it is no move) and a terminal asks for a missing
  one.  An optional password is bound exactly when the optional userid before it is.
- ``MOVE``: the remaining words joined (``a7 - a6`` is ``a7-a6``).
- ``TEXT``: one word, or with ``many`` all remaining words.
- ``OPTIONS``: every ``-param[=value]`` and ``--option[=value]`` word, wherever it stands
  (``--name value`` too for the names in ``takes_value``).

Before binding, click's parser drops the first ``--`` of the arguments (:func:`click_args`);
nothing else of them is taken or changed (they are raw, see ``pbmserv.commands.tree.RAW``).
:func:`password_positions` says where a line's passwords may be: where a run binds them, and
where they would be had the player meant his option words otherwise (the masking hides both).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import itertools
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from pbmserv.domain.accounts import PLACEHOLDER

if TYPE_CHECKING:
    from pbmserv.commands.dispatch import Request
    from pbmserv.games.base import Game, Param


class Kind(enum.Enum):
    BOARD = "board"
    USERID = "userid"
    PASSWORD = "password"
    MOVE = "move"
    TEXT = "text"
    OPTIONS = "options"


def players_words(game: Game) -> str:
    """A challenge's players as the game seats them: ``USERID1 USERID2`` (Polis),
    ``USERID1 USERID2 [USERID3 USERID4]`` (Ploy: 2 or 4), ``USERID1 USERID2 [USERID3
    [USERID4]]`` (2 to 4)."""
    counts = sorted(game.players)
    more = ""
    for low, high in reversed(list(zip(counts, counts[1:], strict=False))):
        ids = " ".join(f"USERID{i}" for i in range(low + 1, high + 1))
        more = f"[{ids}{' ' + more if more else ''}]"
    needed = " ".join(f"USERID{i}" for i in range(1, counts[0] + 1))
    return f"{needed} {more}".rstrip()


def _param_word(param: Param) -> str:
    return f"-{param.name}" if param.is_flag else f"-{param.name}=N"


def _param_help(param: Param) -> str:
    """A game parameter's help with its default and range (``6; 3 to 9``)."""
    if param.is_flag:
        return param.help
    bounds = (
        f"; {param.minimum} to {param.maximum}"
        if param.minimum is not None and param.maximum is not None
        else ""
    )
    return f"{param.help} (default {param.default}{bounds})"


@dataclass(frozen=True)
class Arg:
    """One argument of a command."""

    name: str
    kind: Kind
    optional: bool = False
    many: bool = False  # TEXT: every remaining word
    metavar: str = ""  # in the usage; default: the name in capitals
    takes_value: tuple[str, ...] = ()  # OPTIONS: option names that may take the next word
    from_shell: bool = True  # PASSWORD: PBMSERV_PASSWORD or a prompt may stand for it
    meanings: tuple[tuple[str, str], ...] = ()  # OPTIONS: each option word and what it does
    game_params: bool = False  # OPTIONS: the game's own -PARAM words are among them
    players: bool = False  # TEXT: a challenge's userids, as many as the game seats

    def usage(self, game: Game | None = None) -> str:
        """The argument in a usage line; where the game is known, its own player counts and
        parameters (``USERID1 USERID2 [USERID3 [USERID4]]``, ``[-size=N] [--OPTION=V]``)."""
        if game is not None and self.players:
            return players_words(game)
        if game is not None and self.game_params:
            return " ".join([*(f"[{_param_word(p)}]" for p in game.params), "[--OPTION=V]"])
        if self.metavar:
            return self.metavar
        text = self.name.upper() + ("..." if self.many else "")
        return f"[{text}]" if self.optional else text


@dataclass(frozen=True)
class Command:
    """A command as the player sees it, and the function that carries it out."""

    name: str
    handler: Callable[[Call], None]
    help: str
    args: tuple[Arg, ...] = ()
    aliases: tuple[str, ...] = ()  # other names, listed in the help
    plain_word: bool = False  # also an everyday word: a command only at a line's start
    typos: tuple[str, ...] = ()  # misspellings that work as the command, never advertised
    # other orders of the arguments (by name) a line may use, read when the declared order
    # would take a word that is no board for its BOARD (``showas USERID PASSWORD BOARD``)
    orders: tuple[tuple[str, ...], ...] = ()
    # it carries a comment to the other players: a mail's text below its command lines, a
    # shell's ``-m TEXT`` (:func:`take_comment`)
    comment: bool = False
    # words after its arguments say something (``confirm CODE no``: a complaint); a shell's
    # line has no others (:func:`left_over`)
    extra_words: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        """Every word that names the command: its name, aliases and typos."""
        return (self.name, *self.aliases, *self.typos)

    def usage(self, prefix: str = "", game: Game | None = None) -> str:
        words = [w for w in (prefix, self.name, *(a.usage(game) for a in self.args)) if w]
        return " ".join(words)

    def metavar(self, game: Game | None = None) -> str:
        return " ".join(a.usage(game) for a in self.args)

    def option_lines(self, game: Game | None = None) -> list[tuple[str, str]]:
        """Each option word the command takes and what it does: ``--help`` lists them (click
        knows none of them, since options are read with the words, as a mail writes them)."""
        lines: list[tuple[str, str]] = []
        for arg in self.args:
            if arg.game_params and game is not None:
                lines += [(_param_word(p), _param_help(p)) for p in game.params]
            lines += list(arg.meanings)
        return lines

    @property
    def password_args(self) -> list[Arg]:
        return [a for a in self.args if a.kind is Kind.PASSWORD]


@dataclass(frozen=True)
class Group:
    """Commands under a common first word (``change``, ``tournament``, each game)."""

    name: str
    help: str
    commands: tuple[Command, ...]
    aliases: dict[str, str] = field(default_factory=dict)

    def find(self, word: str) -> Command | None:
        """The command named (or aliased) ``word``, case-insensitively."""
        word = self.aliases.get(word.lower(), word.lower())
        for command in self.commands:
            if word in command.names:
                return command
        return None

    def words(self) -> list[str]:
        return [w for c in self.commands for w in c.names] + list(self.aliases)


@dataclass
class Bound:
    """The arguments of one command line, by name; ``positions`` says which word each came
    from (the index in the words given to :func:`bind`, None when it came from elsewhere)."""

    values: dict[str, Any] = field(default_factory=dict)
    positions: dict[str, list[int]] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)


@dataclass
class Call:
    """One command being carried out: who asks, the bound arguments, the game if any."""

    req: Request
    ctx: click.Context
    command: Command
    args: Bound
    game: Any = None  # pbmserv.games.base.Game for the commands of a game
    usage: str = ""


class Missing(click.UsageError):
    """A required argument is missing (exit status 2)."""


def is_option(word: str) -> bool:
    return word.startswith("-") and len(word) > 1


# a board number (``101``, ``101#5``) or a tournament board's name (``t3r2b5``)
_BOARD_LIKE = re.compile(r"(?:\d+|t\d+r\d+b\d+)(?:#\d+)?", re.IGNORECASE)


def looks_like_board(word: str) -> bool:
    return _BOARD_LIKE.fullmatch(word) is not None


def _in_order(command: Command, words: Sequence[str]) -> Command:
    """``command`` with its arguments in the order the line uses: the declared one, else the
    first of its other ``orders`` whose BOARD gets a word that looks like a board."""
    if not command.orders:
        return command
    plain = [w for w in words if not is_option(w)]
    by_name = {a.name: a for a in command.args}
    for order in ((a.name for a in command.args), *command.orders):
        args = tuple(by_name[name] for name in order)
        at = [a.kind for a in args if a.kind is not Kind.OPTIONS].index(Kind.BOARD)
        if at < len(plain) and looks_like_board(plain[at]):
            return dataclasses.replace(command, args=args, orders=())
    return command


def bind(
    command: Command,
    words: Sequence[str],
    *,
    usage: str = "",
    password: Callable[[str], str] | None = None,
    env_password: str | None = None,
    lenient: bool = False,
) -> Bound:
    """Bind ``words`` to the arguments of ``command`` (see the module's rules).

    ``password(userid)`` is asked for a password that is missing (None: it is an error);
    ``env_password`` stands for every password word.  ``lenient`` stops at the first missing
    argument instead of raising (the masking binds whatever a line holds).
    """
    usage = usage or command.usage()
    command = _in_order(command, words)
    bound = Bound()
    options_arg = next((a for a in command.args if a.kind is Kind.OPTIONS), None)
    rest: list[tuple[int, str]] = []
    options: list[tuple[int, str]] = []
    items = list(enumerate(words))
    i = 0
    while i < len(items):
        index, word = items[i]
        if options_arg is not None and is_option(word):
            options.append((index, word))
            name, sep, _ = word.lstrip("-").partition("=")
            if not sep and name.lower() in options_arg.takes_value and i + 1 < len(items):
                i += 1
                options.append(items[i])
        else:
            rest.append((index, word))
        i += 1
    userid = ""
    skipped_userid = False
    for arg in command.args:
        if arg.kind is Kind.OPTIONS:
            bound.values[arg.name] = [w for _, w in options]
            bound.positions[arg.name] = [i for i, _ in options]
            continue
        if arg.kind is Kind.MOVE or (arg.kind is Kind.TEXT and arg.many):
            take, rest = rest, []
            joined = [w for _, w in take]
            bound.values[arg.name] = "".join(joined) if arg.kind is Kind.MOVE else joined
            bound.positions[arg.name] = [i for i, _ in take]
            continue
        if arg.kind is Kind.PASSWORD:
            if arg.optional and skipped_userid:
                continue
            if env_password is not None and arg.from_shell:
                bound.values[arg.name] = env_password
                bound.positions[arg.name] = []
                if rest and rest[0][1] in (env_password, PLACEHOLDER):  # typed all the same
                    bound.positions[arg.name] = [rest.pop(0)[0]]
            elif rest:
                index, word = rest.pop(0)
                bound.values[arg.name] = word
                bound.positions[arg.name] = [index]
            elif lenient:
                break
            elif password is not None and arg.from_shell:
                bound.values[arg.name] = password(userid)
                bound.positions[arg.name] = []
            elif arg.from_shell:
                raise Missing(f"the password of {userid} is missing")
            else:
                raise Missing(f"not enough arguments; usage: {usage}")
            continue
        if not rest:
            if arg.optional:
                skipped_userid = skipped_userid or arg.kind is Kind.USERID
                continue
            if lenient:
                break
            raise Missing(f"not enough arguments; usage: {usage}")
        index, word = rest.pop(0)
        bound.values[arg.name] = word
        bound.positions[arg.name] = [index]
        if arg.kind is Kind.USERID:
            userid = word
    bound.values["_extra"] = [w for _, w in rest]
    return bound


def left_over(command: Command, bound: Bound, env_password: str | None) -> None:
    """Refuse the words a shell's line has after its arguments.  A mail's line may run on
    into prose, but a shell's is typed as it is meant: a word left over is a mistake
    (``--coment TEXT`` resigned without its comment; with PBMSERV_PASSWORD set, ``change
    password alice OLD NEW`` set the password to OLD and dropped NEW), never to be dropped."""
    extra = bound.values.get("_extra") or []
    if not extra or command.extra_words:
        return
    words = " ".join(extra)
    message = f"'{words}' is more than the command takes"
    if env_password is not None and any(a.from_shell for a in command.password_args):
        message += " (PBMSERV_PASSWORD gives the password: leave it out of the line)"
    raise click.UsageError(message + "; nothing was done")


COMMENT_OPTIONS = ("-m", "--comment")  # a shell's comment: -m TEXT, --comment[=]TEXT


def take_comment(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """The words of a shell's line without its comment options, and their texts.  A shell has
    no mail body: ``-m TEXT`` or ``--comment TEXT`` (``-m=TEXT`` too) stands for it, as
    ``git commit -m`` does; each is a comment's line.  (``-m`` is shorter than any password;
    a password ``--comment`` is given by PBMSERV_PASSWORD or the prompt.)"""
    rest: list[str] = []
    texts: list[str] = []
    items = iter(words)
    for word in items:
        name, sep, value = word.partition("=")
        if name.lower() not in COMMENT_OPTIONS:
            rest.append(word)
        elif sep:
            texts.append(value)
        else:
            text = next(items, None)
            if text is None:
                raise click.UsageError("a comment option needs its text after it")
            texts.append(text)
    return rest, texts


# ----------------------------------------------------------------------------- where passwords sit


def click_args(words: Sequence[str]) -> list[int]:
    """Indexes of the words click hands to a command's callback: every word but the first
    ``--``, which its parser takes for the end of the options (the arguments are raw, so
    nothing else is taken or changed; ``tests/test_grammar.py`` holds this to click itself)."""
    cut = next((i for i, word in enumerate(words) if word == "--"), -1)
    return [i for i in range(len(words)) if i != cut]


def bind_as_run(command: Command, words: Sequence[str]) -> Bound:
    """The (lenient) binding a run of ``command`` makes of its argument ``words``, positions
    indexing ``words``: what the login of the line checks."""
    kept = click_args(words)
    bound = bind(command, [words[k] for k in kept], lenient=True)
    bound.positions = {name: [kept[p] for p in at] for name, at in bound.positions.items()}
    return bound


MAX_READINGS = 128  # ways of reading a line's option words that are tried, at most


def password_positions(command: Command, words: Sequence[str]) -> set[int] | None:
    """Indexes of the argument ``words`` of ``command`` that may be a password; None when
    the ways to read them are too many to try (then any word may be one).

    A run binds the words one way (:func:`bind_as_run`), but the player may have meant an
    option word otherwise: ``--foo`` in ``move 101 alice --foo secret1`` as an option, or
    ``--foo bar`` as an option and its value where no ``--foo`` is declared.  Masking must
    hide the password wherever the player put it, so every reading counts: each option word
    skipped alone (unless declared to take a value and written without ``=``), skipped with
    the next word as its value (unless written with ``=``), or kept as a plain word (a
    password may start with ``-``; a declared option only after ``--``); every ``--`` dropped.
    When in doubt, more words are masked, never fewer.
    """
    names = [a.name for a in command.password_args]
    run = bind_as_run(command, words)
    found = {k for name in names for k in run.positions.get(name, [])}
    if not any(is_option(word) for word in words):
        return found
    plain_args = tuple(a for a in command.args if a.kind is not Kind.OPTIONS)
    reach = 1 + max(i for i, a in enumerate(plain_args) if a.kind is Kind.PASSWORD)
    readings = _readings(words, _takes_value(command), reach)
    if readings is None:
        return None
    plain = dataclasses.replace(command, args=plain_args)
    for kept in readings:
        bound = bind(plain, [words[k] for k in kept], lenient=True)
        found.update(kept[p] for name in names for p in bound.positions.get(name, []))
    return found


@functools.cache  # (asked for each command line of every mail masked; commands are fixed)
def reorderings(command: Command) -> tuple[Command, ...]:
    """``command`` with its board, userid, password and the one-word arguments after its
    password in any other order that keeps each userid before its password: the orders a
    player may type (``limit alice 3 PASSWORD``,
    ``showas 104 alice PASSWORD`` where the classic order put the board last)."""
    if not command.password_args:
        return ()
    last = max(i for i, a in enumerate(command.args) if a.kind is Kind.PASSWORD)
    single = [  # (a word named before the userid, a tournament's name, stays where it is)
        i
        for i, a in enumerate(command.args)
        if a.kind in (Kind.BOARD, Kind.USERID, Kind.PASSWORD)
        or (a.kind is Kind.TEXT and not a.many and i > last)
    ]
    if len(single) > 5:
        return ()
    out = []
    for perm in itertools.permutations(single):
        kinds = [command.args[i].kind for i in perm]
        userid_late = Kind.USERID in kinds and kinds.index(Kind.USERID) > kinds.index(Kind.PASSWORD)
        if perm == tuple(single) or userid_late:
            continue
        args = list(command.args)
        for slot, i in zip(single, perm, strict=True):
            args[slot] = command.args[i]
        out.append(dataclasses.replace(command, args=tuple(args), orders=()))
    return tuple(out)


def reordered_positions(command: Command, words: Sequence[str], shortest: int) -> set[int]:
    """Where the passwords are in the other orders a player may type the arguments in
    (:func:`reorderings`): a word of ``shortest`` characters or more, in a password's place
    of an order whose board (if it takes one) is a board number, unless it is a word the
    usage names (``digest``)."""
    found: set[int] = set()
    for other in reorderings(command):
        bound = bind_as_run(other, words)
        board = next((a.name for a in other.args if a.kind is Kind.BOARD), None)
        at = bound.positions.get(board, []) if board else [0]
        if not at or (board and not all(looks_like_board(words[k]) for k in at)):
            continue
        for arg in other.password_args:
            found.update(bound.positions.get(arg.name, []))
    choices = {  # the words a usage names (``[every | digest | once | default]``)
        w for a in command.args if a.kind is Kind.TEXT for w in re.findall(r"\w+", a.metavar)
    }
    return {k for k in found if len(words[k]) >= shortest and words[k].lower() not in choices}


def _takes_value(command: Command) -> frozenset[str]:
    return frozenset(n for a in command.args if a.kind is Kind.OPTIONS for n in a.takes_value)


def _readings(
    words: Sequence[str], values: Collection[str], reach: int
) -> set[tuple[int, ...]] | None:
    """The indexes of the first ``reach`` words left for the arguments (the passwords are
    among them), one tuple per way of reading the option words before them (see
    :func:`password_positions`); None past :data:`MAX_READINGS`."""
    out: set[tuple[int, ...]] = set()
    seen: set[tuple[int, tuple[int, ...], bool]] = set()
    pending: list[tuple[int, tuple[int, ...], bool]] = [(0, (), False)]
    while pending:
        i, kept, dashes = pending.pop()
        while i < len(words) and len(kept) < reach and not is_option(words[i]):
            kept, i = (*kept, i), i + 1
        if i == len(words) or len(kept) == reach:
            out.add(kept)
            continue
        word = words[i]
        name, sep, _ = word.lstrip("-").partition("=")
        declared = name.lower() in values
        ways = []
        if word == "--":
            ways.append((i + 1, kept, True))
        else:
            if sep or not declared:
                ways.append((i + 1, kept, dashes))  # an option alone
            if not sep:
                ways.append((min(i + 2, len(words)), kept, dashes))  # an option and its value
            if dashes or not declared:
                ways.append((i + 1, (*kept, i), dashes))  # a plain word
        for way in ways:
            if way not in seen:
                seen.add(way)
                pending.append(way)
        if len(seen) > MAX_READINGS:
            return None
    return out

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
  word is then not taken) and a terminal asks for a missing one.  An optional password is
  bound exactly when the optional userid before it is.
- ``MOVE``: the remaining words joined (``a7 - a6`` is ``a7-a6``).
- ``TEXT``: one word, or with ``many`` all remaining words.
- ``OPTIONS``: every ``-param[=value]`` and ``--option[=value]`` word, wherever it stands
  (``--name value`` too for the names in ``takes_value``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from pbmserv.commands.dispatch import Request


class Kind(enum.Enum):
    BOARD = "board"
    USERID = "userid"
    PASSWORD = "password"
    MOVE = "move"
    TEXT = "text"
    OPTIONS = "options"


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

    def usage(self) -> str:
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

    @property
    def names(self) -> tuple[str, ...]:
        """Every word that names the command: its name, aliases and typos."""
        return (self.name, *self.aliases, *self.typos)

    def usage(self, prefix: str = "") -> str:
        words = [w for w in (prefix, self.name, *(a.usage() for a in self.args)) if w]
        return " ".join(words)

    def metavar(self) -> str:
        return " ".join(a.usage() for a in self.args)

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

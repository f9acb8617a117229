"""Every declared command in one tree: the top level, its groups, and the commands of a game.

The commands of a game are the same for every game (``ploy move ...``, ``polis move ...``);
the games themselves come from :mod:`pbmserv.games`.  The ``help`` commands live here because
their text lists the tree: the usage and help line of every command, from its declaration.
"""

from __future__ import annotations

import difflib
import textwrap
from collections.abc import Iterable

from pbmserv.commands import (
    accounts,
    classic,
    community,
    games,
    notifications,
    preferences,
    records,
    security,
    tournament,
)
from pbmserv.commands.dispatch import Refused, answer
from pbmserv.commands.spec import Arg, Call, Command, Group, Kind
from pbmserv.games import all_games, get_game
from pbmserv.games.base import Game
from pbmserv.render import subjects
from pbmserv.render.templates import hint, render

WIDTH = 74  # help lines are indented by two blanks in a mail of 76 columns


def help_lines(
    commands: Iterable[Command], prefix: str = "", game: Game | None = None
) -> list[str]:
    """Usage (with aliases, not typos) and the help line of each command, wrapped for a mail;
    with ``game``, the usage of its own players and parameters."""
    lines: list[str] = []
    for command in commands:
        usage = command.usage(prefix, game)
        text = command.help
        if command.aliases:
            text += f" Also: {', '.join(command.aliases)}."
        lines += textwrap.wrap(usage, WIDTH, subsequent_indent="    ", break_on_hyphens=False)
        lines += textwrap.wrap(text, WIDTH, initial_indent="    ", subsequent_indent="    ")
        for word, meaning in command.option_lines():  # (a game's -PARAMs: in its rules)
            lines += textwrap.wrap(
                f"{word}: {meaning}", WIDTH, initial_indent="      ", subsequent_indent="        "
            )
    return lines


def game_help(name: str, channel: str = "mail") -> str:
    """A game's rules, then its commands; ``channel``: the answer's (where to read more)."""
    lines = help_lines(GAME.commands, name, get_game(name))
    commands = render("help/commands.txt", game=name, lines=lines, channel=channel)
    return render(f"help/{name}.txt") + "\n" + commands


def command_help(word: str, channel: str = "mail") -> str | None:
    """The usage and help line of the commands ``word`` names (a top command, a group, a
    command of every game), or None: ``help challenge`` as classic servers answered it."""
    word = word.lower()
    lines: list[str] = []
    found = top(word)
    if isinstance(found, Group):
        lines += help_lines(found.commands, found.name)
    elif found is not None:
        lines += help_lines([found])
    mine = [c for c in GAME.commands if word in c.names and c.name != "help"]
    if mine:
        games = ", ".join(g.name for g in all_games())
        lines += [""] if lines else []
        lines += help_lines(mine, "GAME")
        lines += ["", *textwrap.wrap(f"GAME is one of: {games} (the same in every game).", WIDTH)]
        lines += textwrap.wrap(hint("help GAME", channel), WIDTH)
    return "\n".join(lines) + "\n" if lines else None


def help_command(call: Call) -> None:
    name = call.args.get("game")
    if name:
        try:
            game = get_game(name)
        except KeyError:
            text = command_help(name, call.req.channel)
            if text is None:
                raise unknown_topic(name, call.req.channel) from None
            answer(call.ctx, subjects.server("help"), text)
            return
        answer(
            call.ctx,
            subjects.game(game.display_name, "help"),
            game_help(game.name, call.req.channel),
        )
        return
    text = render(
        "help/pbmserv.txt",
        games=", ".join(g.name for g in all_games()),
        accounts=help_lines(TOP, ""),
        change=help_lines(GROUPS["change"].commands, "change"),
        password=help_lines(GROUPS["password"].commands, "password"),
        game=help_lines(GAME.commands, "GAME"),
        tournament=help_lines(GROUPS["tournament"].commands, "tournament"),
        stale_days=call.req.settings.stale_mail_days,
        channel=call.req.channel,
    )
    answer(call.ctx, subjects.server("help"), text)


def unknown_topic(name: str, channel: str = "mail") -> Refused:
    """``help NAME`` where NAME is no game nor command: say so, and name the closest one
    (difflib)."""
    games = [g.name for g in all_games()]
    words = [*games, *GROUPS, *(c.name for c in (*TOP, *GAME.commands))]
    close = difflib.get_close_matches(name.lower(), words, n=1, cutoff=0.6)
    said = "pbmserv help" if channel == "shell" else "help"
    meant = f" Did you mean '{said} {close[0]}'?" if close else ""
    return Refused(
        f"there is no help on '{name}'.{meant}",
        body=hint("help topics", channel, games=", ".join(games)).rstrip("\n"),
    )


def game_help_command(call: Call) -> None:
    text = game_help(call.game.name, call.req.channel)
    answer(call.ctx, subjects.game(call.game.display_name, "help"), text)


HELP = Command(
    "help",
    help_command,
    "The server's help, one game's rules and commands, or one command's usage.",
    (Arg("game", Kind.TEXT, optional=True, metavar="[GAME|COMMAND]"),),
    plain_word=True,
    extra_words=True,  # 'help polis move': the game's help, as before (help changes nothing)
)
TOP: tuple[Command, ...] = (
    *accounts.COMMANDS,
    *security.COMMANDS,
    HELP,
    *preferences.COMMANDS,
    *notifications.TOP_COMMANDS,
    *classic.TOP_COMMANDS,
)
GROUPS: dict[str, Group] = {
    g.name: g for g in (accounts.CHANGE, security.PASSWORD, tournament.GROUP)
}
GAME = Group(
    "GAME",
    "The commands of every game.",
    (
        *games.COMMANDS,
        *community.COMMANDS,
        *records.COMMANDS,
        *notifications.GAME_COMMANDS,
        *classic.GAME_COMMANDS,
        Command(
            "help", game_help_command, "The rules of the game and its commands.", extra_words=True
        ),
    ),
)
PREFIX = "pbmserv"  # a line may start with it: ``pbmserv signup ...``

OperatorWords = dict[str, "OperatorWords"]
#: The operator's commands, word by word (``mail outbox list``): the shell adds them
#: (``pbmserv.cli``), a mail never reaches them, and none of them takes a password, so a mail
#: that names one is told so, its words shown as typed (``tests/test_architecture.py`` holds
#: this to the shell's commands).
OPERATOR: OperatorWords = {
    "db": {"current": {}, "upgrade": {}, "downgrade": {}},
    "mail": {
        "list": {},
        "show": {},
        "retry": {},
        "inject": {},
        "outbox": {"list": {}, "show": {}, "retry": {}},
    },
    "status": {},
    "serve": {},
    "tick": {},
    "robot": {"add": {}, "list": {}, "level": {}, "run": {}, "join": {}, "withdraw": {}},
}


_TOP_BY_WORD: dict[str, Command | Group] = {
    **GROUPS,
    **{w: c for c in reversed(TOP) for w in reversed(c.names)},  # the first command wins
}  # a dict, not a scan: every word of every line of a mail is looked up when passwords are masked
_TOP_WORDS = (PREFIX, *(w for c in TOP for w in c.names), *GROUPS)


def top(word: str) -> Command | Group | None:
    """The top-level command or group named ``word`` (case-insensitive), else None."""
    return _TOP_BY_WORD.get(word.lower())


def top_words() -> list[str]:
    """Every word that starts a command line except the game names."""
    return list(_TOP_WORDS)


_GAME_WORDS = frozenset(w for c in GAME.commands for w in c.names) - {w.lower() for w in _TOP_WORDS}


def game_command(word: str) -> bool:
    """Whether ``word`` names a command of the games and nothing at the top level: a line
    that starts with it has forgotten its game (``move 101 ...``, ``games alice``)."""
    return word.lower() in _GAME_WORDS


def _check_unique() -> None:
    """A name declared twice is an error (as Mailman's command registry has it)."""
    for commands in (TOP, *(g.commands for g in GROUPS.values()), GAME.commands):
        words = [w for c in commands for w in c.names]
        twice = {w for w in words if words.count(w) > 1}
        if twice:
            raise ValueError(f"commands declared twice: {', '.join(sorted(twice))}")
    clash = set(GROUPS) & {w for c in TOP for w in c.names}
    if clash:
        raise ValueError(f"commands declared twice: {', '.join(sorted(clash))}")


_check_unique()

"""Every declared command in one tree: the top level, its groups, and the commands of a game.

The commands of a game are the same for every game (``ploy move ...``, ``polis move ...``);
the games themselves come from :mod:`pbmserv.games`.
"""

from __future__ import annotations

from pbmserv.commands import accounts, community, games, preferences, tournament
from pbmserv.commands.spec import Command, Group

TOP: tuple[Command, ...] = (*accounts.COMMANDS, *preferences.COMMANDS)
GROUPS: dict[str, Group] = {g.name: g for g in (accounts.CHANGE, tournament.GROUP)}
GAME = Group(
    "GAME",
    "The commands of every game.",
    (*games.COMMANDS, *community.COMMANDS),
)
PREFIX = "pbmserv"  # a line may start with it: ``pbmserv signup ...``


def top(word: str) -> Command | Group | None:
    """The top-level command or group named ``word`` (case-insensitive), else None."""
    word = word.lower()
    for command in TOP:
        if word == command.name or word in command.aliases:
            return command
    return GROUPS.get(word)


def top_words() -> list[str]:
    """Every word that starts a command line except the game names."""
    return [PREFIX, *(w for c in TOP for w in (c.name, *c.aliases)), *GROUPS]


def _check_unique() -> None:
    """A name declared twice is an error (as Mailman's command registry has it)."""
    for commands in (TOP, *(g.commands for g in GROUPS.values()), GAME.commands):
        words = [w for c in commands for w in (c.name, *c.aliases)]
        twice = {w for w in words if words.count(w) > 1}
        if twice:
            raise ValueError(f"commands declared twice: {', '.join(sorted(twice))}")
    clash = set(GROUPS) & {w for c in TOP for w in (c.name, *c.aliases)}
    if clash:
        raise ValueError(f"commands declared twice: {', '.join(sorted(clash))}")


_check_unique()

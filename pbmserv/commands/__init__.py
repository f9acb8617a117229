"""The commands a pbmserv user knows, as one click group shared by the shell and mail.

``commands`` holds the account commands (``signup``, ``change``, ``signoff``, ``list``, ``help``)
and one sub-group per game (``pylon challenge ...``, ``plotto move ...``).  Arguments are taken
raw (pbmserv syntax: ``-param[=value]`` and ``--option=value`` are not click options) and parsed
here, so the same line means the same thing in a shell and in a mail subject.
"""

from __future__ import annotations

import click

from pbmserv.commands.accounts import register_account_commands
from pbmserv.commands.community import add_game_commands, register_community_commands
from pbmserv.commands.games import game_group
from pbmserv.games import all_games


class AliasGroup(click.Group):
    """A group that also knows its commands by the classic abbreviations."""

    def __init__(
        self, *args: object, aliases: dict[str, str] | None = None, **kwargs: object
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.aliases: dict[str, str] = dict(aliases or {})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        name = cmd_name.lower()
        return super().get_command(ctx, self.aliases.get(name, name))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, cmd, rest = super().resolve_command(ctx, args)
        return (cmd.name if cmd else name), cmd, rest


def build_commands() -> click.Group:
    group = AliasGroup(
        "pbmserv",
        help="Commands of the pbmserv game server (the same by mail and from a shell).",
        aliases={"sub": "subscribe", "unsub": "unsubscribe"},
    )
    register_account_commands(group)
    register_community_commands(group)
    for game in all_games():
        sub = game_group(game, AliasGroup)
        add_game_commands(game, sub)
        group.add_command(sub)
        for alias in game.aliases:
            group.aliases[alias.lower()] = game.name
    return group


commands = build_commands()

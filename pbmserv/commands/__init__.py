"""The commands a pbmserv user knows, as one click group shared by the shell and mail.

``commands`` holds the account commands (``signup``, ``change``, ``signoff``, ``list``, ``help``)
and one sub-group per game (``pylon challenge ...``, ``plotto move ...``).  Arguments are taken
raw (pbmserv syntax: ``-param[=value]`` and ``--option=value`` are not click options) and parsed
here, so the same line means the same thing in a shell and in a mail subject.
"""

from __future__ import annotations

import click

from pbmserv.commands.accounts import register_account_commands
from pbmserv.commands.classic import add_classic_commands, register_classic_commands
from pbmserv.commands.community import add_game_commands, register_community_commands
from pbmserv.commands.games import game_group
from pbmserv.commands.notifications import (
    add_notification_commands,
    register_notification_commands,
)
from pbmserv.commands.records import add_record_commands
from pbmserv.commands.tournament import tournament_group
from pbmserv.games import game_names, get_game


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


BOARD_FIRST = frozenset(
    {"move", "swap", "resign", "show", "preview", "queue", "submit", "confirm", "export"}
    | {"subscribe", "unsubscribe", "notify", "chat", "notifications"}
)


class GameGroup(AliasGroup):
    """A game's group: a tournament board name (``t3r2b5``, also ``t3r2b5#7``) stands for its
    board number: every board argument of ``show``, the first argument of the other commands
    that name a board (:data:`BOARD_FIRST`)."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is not None and rest and name in BOARD_FIRST:
            rest = _board_names(ctx, self.name or "", rest, every=name == "show")
        return name, cmd, rest


def _board_names(ctx: click.Context, game: str, words: list[str], *, every: bool) -> list[str]:
    from pbmserv import tournaments
    from pbmserv.dispatch import Refused, request

    out = list(words)
    for i, word in enumerate(out if every else out[:1]):
        name, sep, at = word.partition("#")
        if not tournaments.BOARD_NAME.fullmatch(name):
            continue
        with request(ctx).sessions() as session:
            number = tournaments.resolve_board(session, game, name)
        if number is None:
            raise Refused(f"there is no {game} board {name.lower()}")
        out[i] = f"{number}{sep}{at}"
    return out


class RootGroup(AliasGroup):
    """The top level: account and community commands, and one group per game, built on first
    use so that a command for one game imports only that game's engine."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(game_names()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        name = self.aliases.get(cmd_name.lower(), cmd_name.lower())
        if not name.isidentifier():
            return None
        try:
            game = get_game(name)
        except KeyError:
            return None
        if game.name in self.commands:  # an alias of a game built before
            return self.commands[game.name]
        sub = game_group(game, GameGroup)
        add_game_commands(game, sub)
        add_record_commands(game, sub)
        add_notification_commands(game, sub)
        add_classic_commands(game, sub)
        self.add_command(sub)
        return sub


def build_commands() -> click.Group:
    group = RootGroup(
        "pbmserv",
        help="Commands of the pbmserv game server (the same by mail and from a shell).",
        aliases={"sub": "subscribe", "unsub": "unsubscribe"},
    )
    register_account_commands(group)
    register_community_commands(group)
    register_notification_commands(group)
    register_classic_commands(group)
    group.add_command(tournament_group(AliasGroup))
    return group


commands = build_commands()

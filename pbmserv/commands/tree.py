"""The click group of the command set, built from the declarations of the registry.

Arguments are taken raw (pbmserv syntax: ``-param[=value]`` and ``--option=value`` are not
click options) and bound to the declared arguments by :func:`pbmserv.commands.spec.bind`, so
the same line means the same thing in a shell and in a mail subject.  A game's group is built
on first use, so that a command for one game imports only that game's engine.
"""

from __future__ import annotations

import shlex
from typing import Any

import click

from pbmserv.commands import grammar, registry, spelling
from pbmserv.commands.dispatch import Channel, NoSuchCommand, Refused, request
from pbmserv.commands.spec import (
    Bound,
    Call,
    Command,
    Group,
    Kind,
    bind,
    left_over,
    take_comment,
)
from pbmserv.domain import tournaments
from pbmserv.games import game_names, get_game
from pbmserv.games.base import Game

RAW = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": ["--help"]}


class AliasGroup(click.Group):
    """A group that also knows its commands by their aliases, and suggests the closest
    command for a misspelt one."""

    def __init__(self, *args: Any, aliases: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.aliases: dict[str, str] = dict(aliases or {})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        name = cmd_name.lower()
        return super().get_command(ctx, self.aliases.get(name, name))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and self.get_command(ctx, args[0]) is None and not args[0].startswith("-"):
            close = spelling.meant(args[0], [*self.list_commands(ctx), *self.aliases])
            hint = usage = ""
            if close:
                meant_name = self.aliases.get(close, close)
                hint = f" Did you mean '{meant_name}'?"
                meant = self.get_command(ctx, meant_name)
                if meant is not None and not isinstance(meant, click.Group):
                    path = " ".join(ctx.command_path.split()[1:] + [meant_name])
                    usage = f"{path} {meant.params[0].metavar or ''}".rstrip()
            raise NoSuchCommand(f"No such command '{args[0]}'.{hint}", ctx, usage)
        name, cmd, rest = super().resolve_command(ctx, args)
        return (cmd.name if cmd else name), cmd, rest


class GameGroup(AliasGroup):
    """A game's group: a tournament board name (``t3r2b5``, also ``t3r2b5#7``) stands for its
    board number wherever a declared argument is a board (every word of ``show``)."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, cmd, rest = super().resolve_command(ctx, args)
        spec = registry.GAME.find(name or "")
        if cmd is not None and rest and spec is not None:
            if spec.name == "show":
                rest = _board_names(ctx, self.name or "", rest, every=True)
            elif spec.args and spec.args[0].kind is Kind.BOARD:
                rest = _board_names(ctx, self.name or "", rest, every=False)
        return name, cmd, rest


def _board_names(ctx: click.Context, game: str, words: list[str], *, every: bool) -> list[str]:
    out = list(words)
    for i, word in enumerate(out if every else out[:1]):
        name, sep, at = word.partition("#")
        if not tournaments.BOARD_NAME.fullmatch(name):
            continue
        with request(ctx).sessions() as session:
            found = tournaments.named_board(session, name)
        if found is None or found[0] != game:
            raise Refused(_no_such_board(game, name.lower(), found))
        out[i] = f"{found[1]}{sep}{at}"
    return out


def _no_such_board(game: str, name: str, found: tuple[str, int] | None) -> str:
    """The refusal of a tournament board name that names no board of ``game``; one of
    another game's says which (the mails name them alike: ``t2r1b1``)."""
    text = f"there is no {get_game(game).display_name} board {name}"
    if found is None:
        return text
    other = get_game(found[0])
    return f"{text}: {name} is {other.display_name} board {found[1]}"


def click_command(spec: Command, prefix: str, game: Game | None = None) -> click.Command:
    """The click command of a declaration: its usage and help come from the declaration."""
    usage = spec.usage(prefix, game)

    @click.pass_context
    def callback(ctx: click.Context, args: tuple[str, ...]) -> None:
        req = request(ctx)
        prompt = req.prompt
        words, said = list(args), list[str]()
        if spec.comment and req.channel is Channel.shell:  # (by mail: the mail's text)
            words, said = take_comment(words)
        bound = bind(
            spec,
            words,
            usage=usage,
            password=(lambda userid: prompt(f"Password for {userid}")) if prompt else None,
            env_password=req.env_password,
        )
        if req.channel is Channel.shell:
            left_over(spec, bound, req.env_password)
        if said:
            req.comment = _masked_comment(ctx, said, words, spec, bound)
        spec.handler(Call(req, ctx, spec, bound, game, usage))

    params: list[click.Parameter] = [
        click.Argument(["args"], nargs=-1, type=click.UNPROCESSED, metavar=spec.metavar(game))
    ]
    options = spec.option_lines(game) + (COMMENT_LINES if spec.comment else [])
    epilog = None
    if options:  # "\b": click keeps the lines as they are
        width = max(len(word) for word, _ in options) + 2
        lines = [f"  {word:<{width}}{meaning}" for word, meaning in options]
        epilog = "\b\nOptions among the arguments:\n" + "\n".join(lines)
    return click.Command(
        spec.name,
        callback=callback,
        params=params,
        context_settings=RAW,
        help=spec.help,
        epilog=epilog,
    )


COMMENT_LINES = [  # (a shell's: by mail, the text below the command lines is the comment)
    ("-m TEXT", "from a shell: a comment the others read under the board"),
    ("--comment TEXT", "the same as -m TEXT"),
]


def _masked_comment(
    ctx: click.Context, texts: list[str], words: list[str], spec: Command, bound: Bound
) -> str:
    """A shell's comment as a mail's is sent (:mod:`pbmserv.mail.parse`): every password of
    its command line masked, however it is spelt, and the password PBMSERV_PASSWORD or the
    prompt gave too."""
    path = ctx.command_path.split()[1:]  # (the program's name, the game's for its script)
    typed = any(bound.positions.get(a.name) for a in spec.password_args)
    line = shlex.join([*path, *words])  # (with PBMSERV_PASSWORD it holds no password)
    mask = grammar.password_mask(commands=[line] if typed else [], guess=False)
    mask.hide(bound.values[a.name] for a in spec.password_args if bound.values.get(a.name))
    return mask("\n".join(texts))


def _group(
    group: Group, cls: type[AliasGroup], prefix: str, game: Game | None = None
) -> click.Group:
    aliases = {a: c.name for c in group.commands for a in c.names[1:]} | group.aliases
    built = cls(group.name, help=group.help, aliases=aliases)
    for spec in group.commands:
        built.add_command(click_command(spec, prefix, game))
    return built


def game_group(game: Game) -> click.Group:
    group = Group(game.name, f"{game.display_name}: {game.summary}", registry.GAME.commands)
    return _group(group, GameGroup, game.name, game)


#: The operator's command words: the shell adds their commands (``pbmserv.cli``), a mail
#: never reaches them.
SHELL_ONLY = frozenset(registry.OPERATOR)


class RootGroup(AliasGroup):
    """The top level: account commands, the groups, and one group per game."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0].lower() in SHELL_ONLY and self.get_command(ctx, args[0]) is None:
            raise NoSuchCommand(  # (by mail: 'pbmserv robot list' as the README shows it)
                f"'{args[0].lower()}' is an operator command: it runs only in a shell on the "
                "server, never by mail.",
                ctx,
            )
        return super().resolve_command(ctx, args)

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
        sub = game_group(game)
        self.add_command(sub)
        return sub


def build_commands() -> click.Group:
    top = Group(
        "pbmserv",
        "Commands of the pbmserv game server (the same by mail and from a shell).",
        registry.TOP,
    )
    group = _group(top, RootGroup, "")
    for sub in registry.GROUPS.values():
        group.add_command(_group(sub, AliasGroup, sub.name))
    return group

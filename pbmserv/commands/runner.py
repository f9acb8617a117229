"""Run one command line through the click group, for every channel; every outcome is an answer.

A mail worker or the shell calls :func:`run` without caring what went wrong: refusals, usage
errors and ``--help`` all become :class:`~pbmserv.commands.dispatch.Answer` objects.  No error
answer ever carries a password of the line, even of a misspelt command (see
:func:`pbmserv.commands.grammar.passwords`).
"""

from __future__ import annotations

import io
import re
import shlex
from collections.abc import Sequence
from contextlib import redirect_stdout

import click

from pbmserv.commands import grammar, registry
from pbmserv.commands.dispatch import (
    USAGE,
    Answer,
    NoSuchCommand,
    Refused,
    Request,
    error_subject,
)
from pbmserv.games import get_game
from pbmserv.numbers import whole_number
from pbmserv.render import subjects
from pbmserv.render.templates import render, usage_line


def split(line: str) -> list[str]:
    """Split a command line into words; ``**`` markers are dropped, quotes are honoured."""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    return [w for w in words if w != "**"]


def about(words: Sequence[str]) -> str:
    """What a command line is about, for the subject of its error or help answer: ``Polis
    Board 101`` when the line names a board, ``Polis`` for other game commands, ``Tournament``
    for the tournament commands (as their refusals: ``Tournament spring Error``; the name is
    left out, a word that may be a password), ``pbmserv`` for the rest."""
    if words and words[0].lower() == "pbmserv":
        words = words[1:]
    if words and words[0].lower() == "tournament":
        return "Tournament"
    if words:
        try:
            name = get_game(words[0]).display_name
        except KeyError:
            return "pbmserv"
        number = words[2].partition("#")[0] if len(words) > 2 else ""
        board = whole_number(number)
        if board is not None and words[1].lower() not in ("challenge", "chall", "games"):
            return subjects.board(name, board)
        return name
    return "pbmserv"


def failed(words: Sequence[str]) -> str:
    """The subject of an error about the line ``words`` (:func:`about`, then ``Error``)."""
    return error_subject(about(words))


def as_typed(path: str, channel: str) -> str:
    """A command path (``pbmserv polis show``, ``polis polis show``) as the player types it:
    by mail without the program's name, from a game script without the doubled game word."""
    words = path.split()
    if len(words) > 1 and (channel == "mail" or words[0].lower() == words[1].lower()):
        return " ".join(words[1:])
    return path


def usage_error(exc: click.UsageError, channel: str) -> tuple[str, str]:
    """The message of a usage error and what follows it: the usage of the command (of the one
    meant, for a misspelt word) as the player types it (:func:`as_typed`), on a line of its
    own (a usage the message quotes moves there), and where to read more: ``--help`` in a
    shell; by mail the help a mail can ask for (:func:`mail_help`), and none of click's words
    for a shell (``Usage: ploy [OPTIONS] COMMAND [ARGS]...``, ``See 'ploy --help'``)."""
    message, ctx = exc.format_message(), exc.ctx
    message, said, quoted = message.partition("usage: ")  # "not enough arguments; usage: ..."
    message = message.rstrip("; ") or ("wrong arguments" if said else "")
    if ctx is None:
        return message, f"Usage: {quoted}" if said else ""
    path = ctx.command_path
    shown = as_typed(path, channel)
    usage = ctx.get_usage().replace(path, shown, 1)
    mail = channel == "mail"
    if said and mail:  # the declared usage, as typed by mail
        usage = f"Usage: {quoted}"
    elif isinstance(exc, NoSuchCommand) and exc.usage:
        usage = f"Usage: {exc.usage}"
    elif mail and isinstance(ctx.command, click.Group):  # its help lists its commands
        usage = ""
        if isinstance(exc, _NO_ARGS):  # click's text is the group's --help
            message = f"a command word is missing after '{shown}'"
    elif mail:
        usage = usage.replace(" [OPTIONS]", "", 1)  # --help, a shell's option
    more = mail_help(ctx) if mail else f"See '{shown} --help'."
    wrapped = usage_line(usage)
    return message, "\n".join(x for x in (wrapped, more) if x)


# click >= 8.2 raises it for a group given no command (8.1 printed the group's help)
_NO_ARGS: tuple[type[click.UsageError], ...] = tuple(
    getattr(click.exceptions, name)
    for name in ("NoArgsIsHelpError",)
    if hasattr(click.exceptions, name)
)


def mail_help(ctx: click.Context) -> str:
    """How to get help by mail about the command of ``ctx``: its game's help, or the server's."""
    here: click.Context | None = ctx
    while here is not None:
        try:
            game = get_game(here.info_name or "")
        except KeyError:
            here = here.parent
            continue
        return f"Send '{game.name} help' for the rules and commands of {game.display_name}."
    return "Send 'help' for the commands of this server."


def help_as_typed(printed: str, channel: str) -> str:
    """``--help`` output whose usage line (``Usage: PATH [OPTIONS] ...``) shows the command
    as typed (:func:`as_typed`)."""
    first, sep, rest = printed.partition("\n")
    words = first.split(" ")
    if words[0] != "Usage:":
        return printed
    end = next((i for i, w in enumerate(words) if w.startswith("[")), len(words))
    path = " ".join(words[1:end])
    return " ".join(["Usage:", as_typed(path, channel), *words[end:]]) + sep + rest


class _NoCommand(click.UsageError):
    """Never raised: click before 8.2 prints a group's help itself when it gets no command."""


NO_COMMAND: type[click.UsageError] = getattr(click.exceptions, "NoArgsIsHelpError", _NoCommand)
"""What click raises for a group given no command; its message is the group's help."""


def run(
    group: click.Group, words: Sequence[str], req: Request, prog_name: str = "pbmserv"
) -> list[Answer]:
    """Run one command line through ``group``; every outcome becomes an answer.

    A line may start with the program's name, as the shell's lines do (``pbmserv signup ...``
    mailed as it is written in the README): the name is skipped, as the mail parser and the
    password masking skip it (:func:`pbmserv.commands.grammar.resolve`); alone, it asks for
    the help."""
    typed = list(words)  # (what is masked: the word after the name may be a password)
    if words and words[0].lower() == registry.PREFIX:
        words = words[1:] or ["help"]
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            group.main(args=list(words), prog_name=prog_name, standalone_mode=False, obj=req)
    except Refused as exc:
        req.answers.append(
            Answer(
                exc.subject or failed(words),
                _error_body(exc.message, exc.body),
                exc.status,
                board=exc.board,
                summary=f"Error: {exc.message}",
            )
        )
    except NO_COMMAND as exc:  # a group alone (`polis`, `pbmserv`): its help, as click does
        if req.channel == "mail":  # (no shell usage by mail: what is missing, and help)
            message, hint = usage_error(exc, req.channel)
            req.answers.append(Answer(failed(words), _error_body(message, hint), USAGE))
        else:
            help_text = help_as_typed(exc.format_message() + "\n", req.channel)
            req.answers.append(Answer(subjects.help_about(about(words)), help_text, USAGE))
    except click.UsageError as exc:
        message, hint = usage_error(exc, req.channel)
        req.answers.append(Answer(failed(words), _error_body(message, hint), USAGE))
    except click.ClickException as exc:
        req.answers.append(Answer(failed(words), _error_body(exc.format_message()), USAGE))
    except click.exceptions.Exit:
        pass
    except click.Abort:
        req.answers.append(Answer(failed(words), "Aborted.\n", USAGE))
    printed = out.getvalue()
    if printed:  # --help output
        subject = subjects.help_about(about(words))
        req.answers.append(Answer(subject, help_as_typed(printed, req.channel)))
    if not req.answers:
        req.answers.append(Answer(failed(words), "Nothing to do.\n", USAGE))
    _hide_passwords(req.answers, typed, by_mail=req.channel == "mail")
    return req.answers


def _hide_passwords(answers: list[Answer], words: Sequence[str], *, by_mail: bool) -> None:
    """Usage errors never show a password of the line, whatever the error quotes of it.  By
    mail, where answers are mailed and kept, no word that may be one: the line was not read as
    its command, so its password may stand anywhere (``polis move pw-bob 101 bob e2``:
    "'pw-bob' is not a board number"); the shell's user sees his own line, with the
    operator's commands that no mail can run.

    (Refusals are not touched: they quote moves and userids, and a password may be an everyday
    word such as "wrong" that the refusal "wrong password" must keep.)  ``words`` are the line
    as typed, with its ``pbmserv``: the run takes the word after it for a command word, but a
    password may stand there too ('pbmserv PASSWORD' was answered "No such command
    'PASSWORD'")."""
    if not any(item.status == USAGE for item in answers):
        return  # (and the grammar, which loads every engine, is not needed)
    read = grammar.usage_secrets(words) if by_mail else grammar.passwords(words)
    secrets = sorted({p for p in read if p}, key=len, reverse=True)
    if not secrets:
        return
    pattern = re.compile("|".join(rf"(?<!\w){re.escape(p)}(?!\w)" for p in secrets))
    for item in answers:
        if item.status == USAGE:
            item.subject = pattern.sub(grammar.MASK, item.subject)
            theirs, ours = _split_usage(item.body)
            item.body = pattern.sub(grammar.MASK, theirs) + ours


def _split_usage(body: str) -> tuple[str, str]:
    """A usage error's text before our usage line, and from it on: only the first quotes the
    player's words (the usage's own words, ``once`` of ``[every | digest | once]``, are ours
    and never masked)."""
    found = re.search(r"^Usage: ", body, re.MULTILINE)
    return (body, "") if found is None else (body[: found.start()], body[found.start() :])


def _error_body(message: str, extra: str = "") -> str:
    return render("mail/error.txt.j2", message=message, extra=extra.rstrip())

"""The one command dispatcher behind both channels, the shell and mail.

A command line (already split into words) runs through the click group of
:mod:`pbmserv.commands` with a :class:`Request` as the context object.  Commands never print:
they return :class:`Answer` objects for the sender and put notifications for everybody else in
the outbox.  :func:`run` turns every failure into an answer with an exit status
(0 done, 1 refused by the rules or authentication, 2 usage error), so a mail worker can call it
without caring what went wrong.
"""

from __future__ import annotations

import io
import shlex
from collections.abc import Callable, Sequence
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import click
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.clock import system_clock
from pbmserv.config import Settings

DONE, REFUSED, USAGE = 0, 1, 2


@dataclass
class Answer:
    """The answer to the sender of one command."""

    subject: str
    body: str
    status: int = DONE
    board: str | None = None  # "polis 101" when the body draws that board (drawn once a mail)
    summary: str = ""  # one line on what the command did, when the board is drawn elsewhere


@dataclass
class Request:
    """Who asks, through which channel, and when (time is injectable for tests)."""

    settings: Settings
    sessions: sessionmaker[Session]
    channel: str = "shell"  # "shell" or "mail"
    sender: str | None = None  # the mail address of the sender (mail channel)
    now: datetime = field(default_factory=system_clock)
    comment: str = ""  # free text from the mail body, shown under the board
    source: str = ""  # where a move came from (Message-ID, "shell")
    env_password: str | None = None  # shell: PBMSERV_PASSWORD, never on the command line
    prompt: Callable[[str], str] | None = None  # shell: asks for a missing password
    answers: list[Answer] = field(default_factory=list)

    @property
    def trusted(self) -> bool:
        """The shell is the local operator; mail must prove who it comes from."""
        return self.channel == "shell"


class Refused(click.ClickException):
    """A command the rules, the board's state or authentication refuse (exit status 1)."""

    exit_code = REFUSED

    def __init__(
        self, message: str, *, subject: str | None = None, body: str = "", board: str | None = None
    ) -> None:
        super().__init__(message)
        self.subject = subject
        self.body = body
        self.board = board


def answer(
    ctx: click.Context,
    subject: str,
    body: str,
    status: int = DONE,
    *,
    board: str | None = None,
    summary: str = "",
) -> Answer:
    """Hand an answer to the channel (every command calls this instead of printing)."""
    item = Answer(subject, body, status, board, summary)
    request(ctx).answers.append(item)
    return item


def request(ctx: click.Context) -> Request:
    obj = ctx.find_root().obj
    assert isinstance(obj, Request), "commands run only through pbmserv.dispatch.run"
    return obj


def split(line: str) -> list[str]:
    """Split a command line into words; ``**`` markers are dropped, quotes are honoured."""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    return [w for w in words if w != "**"]


def error_subject(words: Sequence[str]) -> str:
    """One scheme for every error: ``Polis Board 101 error`` when the line names a board,
    ``Polis error`` for other game commands, ``pbmserv error`` for the rest."""
    from pbmserv.games import get_game

    if words:
        try:
            name = get_game(words[0]).display_name
        except KeyError:
            return "pbmserv error"
        number = words[2].partition("#")[0] if len(words) > 2 else ""
        if number.isdigit() and words[1].lower() not in ("challenge", "chall", "games"):
            return f"{name} Board {int(number)} error"
        return f"{name} error"
    return "pbmserv error"


def usage_hint(ctx: click.Context, channel: str) -> str:
    """The usage of a command as the player types it: by mail without the program's name,
    from a game script (``polis show``) without the doubled game word."""
    path = ctx.command_path
    words = path.split()
    if len(words) > 1 and (channel == "mail" or words[0] == words[1]):
        shown = " ".join(words[1:])
        return ctx.get_usage().replace(path, shown, 1) + f"\nSee '{shown} --help'."
    return ctx.get_usage() + f"\nSee '{path} --help'."


def run(
    group: click.Group, words: Sequence[str], req: Request, prog_name: str = "pbmserv"
) -> list[Answer]:
    """Run one command line through ``group``; every outcome becomes an answer."""
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            group.main(args=list(words), prog_name=prog_name, standalone_mode=False, obj=req)
    except Refused as exc:
        req.answers.append(
            Answer(
                exc.subject or error_subject(words),
                _error_body(exc.message, exc.body),
                REFUSED,
                board=exc.board,
                summary=f"Error: {exc.message}",
            )
        )
    except click.UsageError as exc:
        hint = ""
        if exc.ctx is not None:
            hint = usage_hint(exc.ctx, req.channel)
        req.answers.append(
            Answer(error_subject(words), _error_body(exc.format_message(), hint), USAGE)
        )
    except click.ClickException as exc:
        req.answers.append(Answer(error_subject(words), _error_body(exc.format_message()), USAGE))
    except click.exceptions.Exit:
        pass
    except click.Abort:
        req.answers.append(Answer(error_subject(words), "Aborted.\n", USAGE))
    printed = out.getvalue()
    if printed:  # --help output
        req.answers.append(Answer(f"{error_subject(words).replace(' error', '')} help", printed))
    if not req.answers:
        req.answers.append(Answer(error_subject(words), "Nothing to do.\n", USAGE))
    return req.answers


def _error_body(message: str, extra: str = "") -> str:
    from pbmserv.render import render

    return render("mail/error.txt.j2", message=message, extra=extra.rstrip())


def with_request(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: pass the Request as the first argument of a command callback."""

    @click.pass_context
    def wrapper(ctx: click.Context, *args: Any, **kwargs: Any) -> Any:
        return fn(request(ctx), ctx, *args, **kwargs)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper

"""What every command works with: the :class:`Request` (who asks, through which channel,
when), the :class:`Answer` it hands back, and :class:`Refused`.

Commands never print: they return answers for the sender (:func:`answer`) and put
notifications for everybody else in the outbox.  :mod:`pbmserv.commands.runner` runs a command
line and turns every failure into an answer with an exit status (0 done, 1 refused by the rules
or authentication, 2 usage error).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import click
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.clock import system_clock
from pbmserv.config import Settings
from pbmserv.render import subjects

DONE, REFUSED, USAGE = 0, 1, 2


class Channel(enum.StrEnum):
    """Where a command comes from."""

    shell = "shell"  # the local operator's shell: trusted
    mail = "mail"  # must prove who it comes from
    robot = "robot"  # the server's own robot players


@dataclass
class Answer:
    """The answer to the sender of one command."""

    subject: str
    body: str
    status: int = DONE
    board: str | None = None  # "Polis board 101" when the body draws that board (once a mail)
    summary: str = ""  # one line on what the command did, when the board is drawn elsewhere


@dataclass
class Mail:
    """What the command lines of one mail share: a cap "per mail" is counted here, since
    each line gets a :class:`Request` of its own."""

    addresses: set[str] = field(default_factory=set)  # given by its signup / change address
    # its body says something of its own besides the Subject's line (text, other lines;
    # quotes and signature are not its own): a code in its Subject is then no yes
    says_more: bool = False
    # the accounts whose unlock code the mail carries: its logins skip the hold on their own
    # address (pbmserv.domain.owner_hold); read from the whole mail before any line runs
    unlocked: set[int] = field(default_factory=set)
    # its answer carries a new unlock code: it is mailed even past the daily caps (a forger
    # who spent them first would keep the code from the owner); one code per hold at most
    unlock_code: bool = False
    # the mail worker's: the boards its lines finished, whose follow-up (a tournament's next
    # round, pbmserv.domain.moves.follow_up) it runs once it has queued the answer, which must
    # come first; None elsewhere: a command runs it once it has queued its mails
    finished: list[int] | None = None
    # its answer carries a code already: the answer's subject holds that first code alone, so
    # a later line's code is confirmed by its line only (pbmserv.domain.confirmation)
    coded: bool = False


@dataclass
class Request:
    """Who asks, through which channel, and when (time is injectable for tests)."""

    settings: Settings
    sessions: sessionmaker[Session]
    channel: Channel = Channel.shell
    sender: str | None = None  # the mail address of the sender (mail channel)
    now: datetime = field(default_factory=system_clock)
    comment: str = ""  # free text from the mail body, shown under the board
    source: str = ""  # where a move came from (Message-ID, "shell")
    env_password: str | None = None  # shell: PBMSERV_PASSWORD, never on the command line
    prompt: Callable[[str], str] | None = None  # shell: asks for a missing password
    answers: list[Answer] = field(default_factory=list)
    # set by a right password given from that account's confirmed address: such a command is
    # never capped (see pbmserv.domain.limits)
    owner_verified: bool = False
    # the caller's transaction holds every command (the mail worker's, one per mail): a block
    # that is never rolled back on its own, such as a login's, needs no savepoint there
    in_transaction: bool = False
    # the mail this line is one of (a line of its own, from the shell)
    mail: Mail = field(default_factory=Mail)
    # the line is the mail's Subject (a reply keeps our subject, ``confirm CODE``, there)
    from_subject: bool = False
    # words of the line found out to be secret while it ran: a userid that names no account
    # may be the password of a line whose userid was forgotten (the mail worker masks them in
    # the answer and in the mail's kept copy)
    secret_words: list[str] = field(default_factory=list)
    # a login of the line was refused (unknown userid, wrong password, held off): its words
    # may stand out of place (``polis move 101 alice alice PASSWORD``), so where its password
    # stands is not known (the mail worker masks it as a line not understood)
    login_refused: bool = False

    def __post_init__(self) -> None:
        self.channel = Channel(self.channel)

    @property
    def trusted(self) -> bool:
        """The shell is the local operator; mail must prove who it comes from."""
        return self.channel is Channel.shell


def error_subject(about: str) -> str:
    """The subject of every error answer: ``Polis Board 101 Error``, ``Polis Error``,
    ``pbmserv Error`` (the classic servers' ``<Game> Board <n> Error``, one spelling for all)."""
    return subjects.error(about)


class Refused(click.ClickException):
    """A command the rules, the board's state or authentication refuse (exit status 1); one
    refused for the words of its line (a misspelt option) is a usage error (``status`` 2)."""

    exit_code = REFUSED

    def __init__(
        self,
        message: str,
        *,
        subject: str | None = None,
        body: str = "",
        board: str | None = None,
        status: int = REFUSED,
    ) -> None:
        super().__init__(message)
        self.subject = subject
        self.body = body
        self.board = board
        self.status = status


class NoSuchCommand(click.UsageError):
    """A word that names no command (exit status 2); ``usage``: that of the command it is
    closest to, as typed, when one is close."""

    def __init__(self, message: str, ctx: click.Context, usage: str = "") -> None:
        super().__init__(message, ctx)
        self.usage = usage


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
    assert isinstance(obj, Request), "commands run only through pbmserv.commands.runner.run"
    return obj

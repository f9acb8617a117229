"""The commands a pbmserv user knows, the same by mail and from a shell.

Each command is declared once (:mod:`pbmserv.commands.spec`): the account commands
(:mod:`~pbmserv.commands.accounts`, :mod:`~pbmserv.commands.preferences`), the ``tournament``
group, and the commands of every game (:mod:`~pbmserv.commands.games`,
:mod:`~pbmserv.commands.community`), collected in :mod:`~pbmserv.commands.registry`.  The click
group (:mod:`~pbmserv.commands.tree`), the grammar the mail parser and the masking use
(:mod:`~pbmserv.commands.grammar`) and the runner (:mod:`~pbmserv.commands.runner`) read them.
"""

from __future__ import annotations

from pbmserv.commands.dispatch import Answer, Channel, Mail, Refused, Request, answer, request
from pbmserv.commands.runner import run, split
from pbmserv.commands.tree import build_commands

__all__ = [
    "Answer",
    "Channel",
    "Mail",
    "Refused",
    "Request",
    "answer",
    "build_commands",
    "commands",
    "request",
    "run",
    "split",
]

commands = build_commands()

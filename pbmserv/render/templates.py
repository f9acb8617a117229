"""Jinja2 rendering of boards and mail texts (plain text: no HTML autoescaping).

Jinja2 is imported on the first render only, and the compiled templates are kept in Jinja's
bytecode cache (a private directory of the user's temporary directory), so that a shell
command does not parse and compile its templates again each time.
"""

from __future__ import annotations

import textwrap
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pbmserv.games.base import Position
from pbmserv.resources import templates_dir

if TYPE_CHECKING:
    import jinja2

WIDTH = 76  # the width of a mail's text: 78 columns less room for a quoting "> "


def usage_line(usage: str) -> str:
    """A command's usage on one line while it fits a mail line (78 columns), else wrapped
    with a hanging indent: a usage cut like prose reads as two commands."""
    if len(usage) <= WIDTH + 2:
        return usage
    return textwrap.fill(
        usage, WIDTH, subsequent_indent="    ", break_on_hyphens=False, break_long_words=False
    )


def fill(text: str, width: int = WIDTH) -> str:
    """Each line of ``text`` wrapped to ``width``, its continuation lines indented as it is
    (and quoted as it is: a player's comment may quote a mail with "> "); words are never
    broken (a token longer than the line stays whole).

    >>> print(fill("  Reminder: the board is forfeited on 2026-11-28 12:33 UTC.", 40))
      Reminder: the board is forfeited on
      2026-11-28 12:33 UTC.
    >>> print(fill("> You wrote that the opening was a mistake, and so it was.", 30))
    > You wrote that the opening
    > was a mistake, and so it
    > was.
    """
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip(" \t>"))]
        out.append(
            textwrap.fill(
                line,
                width,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    return "\n".join(out)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    import jinja2  # lazy: a command that renders nothing does not load Jinja

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=jinja2.FileSystemBytecodeCache(),
    )
    env.filters["fill"] = fill  # prose lines of a mail: {{ line | fill }}
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def render_board(position: Position, *, over: bool = False) -> str:
    """The ASCII drawing of ``position`` from ``templates/boards/<game>.txt.j2``; ``over``
    (a finished board) drops the to-move markers, whatever the engine's last seat was."""
    context = {**position.board_context(), "over": over}
    text = render(f"boards/{position.game.name}.txt.j2", **context)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def hint(what: str, channel: str, **context: Any) -> str:
    """Where to read more (``what``: "help", "game help", ...), as the answer's ``channel``
    says it: a mail sends a line ('help'), a shell runs one ('pbmserv help')."""
    return render("mail/hint.txt.j2", what=what, channel=channel, **context)

"""Jinja2 rendering of boards and mail texts (plain text: no HTML autoescaping).

Jinja2 is imported on the first render only, and the compiled templates are kept in Jinja's
bytecode cache (a private directory of the user's temporary directory), so that a shell
command does not parse and compile its templates again each time.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pbmserv.games.base import Position
from pbmserv.resources import templates_dir

if TYPE_CHECKING:
    import jinja2


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    import jinja2  # lazy: a command that renders nothing does not load Jinja

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=jinja2.FileSystemBytecodeCache(),
    )


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def render_board(position: Position, *, over: bool = False) -> str:
    """The ASCII drawing of ``position`` from ``templates/boards/<game>.txt.j2``; ``over``
    (a finished board) drops the to-move markers, whatever the engine's last seat was."""
    context = {**position.board_context(), "over": over}
    text = render(f"boards/{position.game.name}.txt.j2", **context)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"

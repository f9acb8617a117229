"""SVG drawings of positions, one module per game, from the engines' own data.

A drawing is a tree of :class:`Shape` values (tag, attributes, text, a tooltip title); the page
template turns it into inline SVG with Jinja's autoescaping, so no text reaches the page raw.
Colours live in the static style sheet (classes), never in inline styles.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module

from pbmserv.games.base import Position

Number = int | float


@dataclass
class Shape:
    tag: str
    attrs: dict[str, str | Number] = field(default_factory=dict)
    text: str = ""
    title: str = ""
    children: list[Shape] = field(default_factory=list)


@dataclass
class Drawing:
    width: Number
    height: Number
    label: str  # what the picture shows, for screen readers and tests
    shapes: list[Shape]


def rect(x: Number, y: Number, w: Number, h: Number, cls: str, **attrs: str | Number) -> Shape:
    return Shape("rect", {"x": x, "y": y, "width": w, "height": h, "class": cls, **attrs})


def circle(cx: Number, cy: Number, r: Number, cls: str) -> Shape:
    return Shape("circle", {"cx": _r(cx), "cy": _r(cy), "r": _r(r), "class": cls})


def line(x1: Number, y1: Number, x2: Number, y2: Number, cls: str) -> Shape:
    return Shape("line", {"x1": _r(x1), "y1": _r(y1), "x2": _r(x2), "y2": _r(y2), "class": cls})


def polygon(points: list[tuple[Number, Number]], cls: str) -> Shape:
    return Shape(
        "polygon", {"points": " ".join(f"{_r(x)},{_r(y)}" for x, y in points), "class": cls}
    )


def text(x: Number, y: Number, value: str, cls: str) -> Shape:
    return Shape("text", {"x": _r(x), "y": _r(y), "class": cls}, text=value)


def group(cls: str, children: list[Shape], title: str = "", **data: str) -> Shape:
    attrs: dict[str, str | Number] = {"class": cls}
    attrs.update({f"data-{k}": v for k, v in data.items()})
    return Shape("g", attrs, title=title, children=children)


def _r(value: Number) -> Number:
    return round(value, 1) if isinstance(value, float) else value


DRAWERS = {"ploy": "ploy", "pylon": "pylon", "plotto": "plotto", "polis": "polis"}


def draw(position: Position, *, over: bool = False) -> Drawing | None:
    """The drawing of ``position``, or None for a game without one (the text board remains);
    ``over`` (a board ended off the board: a draw agreed, a withdrawal) marks no place to play
    next, whatever the engine's position still allows."""
    module = DRAWERS.get(position.game.name)
    if module is None:
        return None
    drawer: Callable[..., Drawing] = import_module(f"{__name__}.{module}").draw
    return drawer(position, over=over)

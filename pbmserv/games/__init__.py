"""The registry of games.  Each engine module in this package defines ``GAME = Game(...)``.

Modules are discovered once, on first use, so that adding a game is adding a module; a name or
alias used twice is an error at load time, not a silent override.
"""

from __future__ import annotations

import importlib
import pkgutil

from pbmserv.games.base import Game

_REGISTRY: dict[str, Game] = {}
_GAMES: list[Game] = []


def register(game: Game) -> None:
    """Add ``game`` under its name and aliases; a duplicate raises ValueError."""
    for key in (game.name, *game.aliases):
        key = key.lower()
        if key in _REGISTRY:
            raise ValueError(f"game name {key!r} registered twice ({_REGISTRY[key]!r}, {game!r})")
    for key in (game.name, *game.aliases):
        _REGISTRY[key.lower()] = game
    _GAMES.append(game)


def _load() -> None:
    if _GAMES:
        return
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        game = getattr(module, "GAME", None)
        if isinstance(game, Game):
            register(game)


def get_game(name: str) -> Game:
    """The game called ``name`` (or one of its aliases); KeyError names the known games."""
    _load()
    try:
        return _REGISTRY[name.lower()]
    except KeyError:
        known = ", ".join(g.name for g in all_games())
        raise KeyError(f"unknown game {name!r}; known games: {known}") from None


def all_games() -> list[Game]:
    """Every registered game, sorted by name."""
    _load()
    return sorted(_GAMES, key=lambda g: g.name)

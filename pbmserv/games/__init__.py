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
_LOADED = False


def register(game: Game) -> None:
    """Add ``game`` under its name and aliases; a duplicate raises ValueError."""
    for key in (game.name, *game.aliases):
        key = key.lower()
        if key in _REGISTRY:
            raise ValueError(f"game name {key!r} registered twice ({_REGISTRY[key]!r}, {game!r})")
    for key in (game.name, *game.aliases):
        _REGISTRY[key.lower()] = game
    _GAMES.append(game)


def _module_names() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.iter_modules(__path__)
        if not info.name.startswith("_") and info.name != "base"
    )


def _import(module_name: str) -> None:
    module = importlib.import_module(f"{__name__}.{module_name}")
    game = getattr(module, "GAME", None)
    if isinstance(game, Game) and game not in _GAMES:
        register(game)


def _load() -> None:
    global _LOADED
    if _LOADED:
        return
    for name in _module_names():
        _import(name)
    _LOADED = True


def game_names() -> list[str]:
    """The names of every game, without importing the engines (a module is named after its
    game), so that a command for one game does not pay for building another's tables."""
    return sorted(set(_module_names()) | {g.name for g in _GAMES})


def get_game(name: str) -> Game:
    """The game called ``name`` (or one of its aliases); KeyError names the known games."""
    key = name.lower()
    if key not in _REGISTRY and key in _module_names():
        _import(key)  # only this engine
    if key not in _REGISTRY:
        _load()  # maybe an alias
    try:
        return _REGISTRY[key]
    except KeyError:
        known = ", ".join(g.name for g in all_games())
        raise KeyError(f"unknown game {name!r}; known games: {known}") from None


def all_games() -> list[Game]:
    """Every registered game, sorted by name."""
    _load()
    return sorted(_GAMES, key=lambda g: g.name)

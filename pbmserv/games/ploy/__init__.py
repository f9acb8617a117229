"""Ploy (Frank Thibault, 3M 1970): the game's registration; the engine is in
:mod:`pbmserv.games.ploy.position`, its tables in :mod:`pbmserv.games.ploy.tables`."""

from __future__ import annotations

from pbmserv.games.base import Game, Param
from pbmserv.games.ploy.position import ABSORBED, IN, OUT, PloyPosition
from pbmserv.games.ploy.tables import (
    COLOURS,
    KIND_NAMES,
    NAMES,
    ROT,
    SHIELD,
    SQUARE,
    dirs_of,
    initial_board,
    mask_of,
)

__all__ = [
    "ABSORBED",
    "COLOURS",
    "GAME",
    "IN",
    "KIND_NAMES",
    "NAMES",
    "OUT",
    "ROT",
    "SHIELD",
    "SQUARE",
    "PloyPosition",
    "dirs_of",
    "initial_board",
    "mask_of",
]

GAME = Game(
    "ploy",
    "Ploy",
    PloyPosition,
    players=(2, 4),
    params=(
        Param(
            "partnership",
            "four players in two teams, green+yellow against red+blue",
        ),
        Param(
            "classic",
            "the German box rules: turns of one 45 degree step, a bare commander is removed, "
            "partners play on to their last piece",
        ),
        Param("relaxed", "only the capture of his commander eliminates a player"),
    ),
    summary="capture the commander with pieces that move and turn along their flags",
)

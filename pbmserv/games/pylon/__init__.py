"""Pylon (Cameron Browne, 2006): the game's registration; the engine and the readings of the
rules it keeps are in :mod:`pbmserv.games.pylon.position`, its tables in
:mod:`pbmserv.games.pylon.tables`, the board drawing in :mod:`pbmserv.games.pylon.drawing`."""

from __future__ import annotations

from pbmserv.games.pylon.position import GAME, PylonPosition
from pbmserv.games.pylon.tables import EMPTY, SYMBOLS, Geometry, geometry, pyramid

__all__ = ["EMPTY", "GAME", "SYMBOLS", "Geometry", "PylonPosition", "geometry", "pyramid"]

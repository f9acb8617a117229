"""Robot players: users marked as robots, whose moves the server computes and plays.

* :mod:`pbmserv.robots.search`: one alpha-beta search (iterative deepening, MTD(f) or PVS, a
  transposition table, move ordering, quiescence; paranoid with more than two players), and
  a probe of one line of replies for the games where one opponent can hand the game to
  another (Plotto's three and four players) and, three rounds deep, for Pylon's three and four
  players;
* :mod:`pbmserv.robots.ploy`, ``polis``, ``pylon``, ``plotto``: each game's evaluation and move
  ordering (any other game is played through the engine contract alone, with a neutral
  evaluation, so a new game gets a legal, if weak, robot for free);
* :mod:`pbmserv.robots.service`: finding boards where a robot is to move and playing its move
  through :func:`pbmserv.domain.boards.play_move`, with the same mails as a human move.

A level is a budget per move: ``easy``/``normal``/``strong`` are node budgets (reproducible
play) capped in time, ``expert`` a time budget; ``nodes=N`` and ``seconds=S`` give any budget.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from pbmserv.games.base import SWAP, Position
from pbmserv.robots.search import Adapter, Budget, SearchResult, search

LEVELS: dict[str, Budget] = {
    "easy": Budget(nodes=800, depth=2, seconds=2.0),
    "normal": Budget(nodes=5_000, seconds=5.0),
    "strong": Budget(nodes=40_000, seconds=15.0),
    "expert": Budget(seconds=20.0),
}
"""Node budgets make play reproducible; the seconds are each level's time budget, a cap that a
node budget reaches first on any ordinary machine."""
DEFAULT_LEVEL = "normal"
MAX_SECONDS = 60.0
"""The longest a robot may think about one move: its turns are played one after another, so
``seconds=1e9`` held every other robot, and a shell command asking for its reply, for ever."""
MAX_NODES = 10_000_000  # (a node budget is capped by MAX_SECONDS too, as the levels are)
ADAPTERS = {
    "ploy": "pbmserv.robots.ploy:PloyAdapter",
    "polis": "pbmserv.robots.polis:PolisAdapter",
    "pylon": "pbmserv.robots.pylon:PylonAdapter",
    "plotto": "pbmserv.robots.plotto:PlottoAdapter",
}


def budget_of(level: str) -> Budget:
    """The budget a level names (``easy``, ..., ``nodes=N``, ``seconds=S``); ValueError if none."""
    level = level.strip().lower()
    if level in LEVELS:
        return LEVELS[level]
    key, sep, value = level.partition("=")
    try:
        if sep and key == "nodes" and 0 < int(value) <= MAX_NODES:
            return Budget(nodes=int(value), seconds=MAX_SECONDS)
        if sep and key == "seconds" and 0 < float(value) <= MAX_SECONDS:  # (nan is neither)
            return Budget(seconds=float(value))
    except ValueError:
        pass
    names = ", ".join(LEVELS)
    raise ValueError(
        f"unknown robot level {level!r}; levels: {names}, nodes=N (up to {MAX_NODES:,}), "
        f"seconds=S (up to {MAX_SECONDS:g})"
    )


def adapter_for(game_name: str) -> Adapter[Any]:
    """The search adapter of a game (the contract-only default for games without one)."""
    path = ADAPTERS.get(game_name)
    if path is None:
        return Adapter[Any]()
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)()


def choose_move(
    position: Position, budget: Budget, stop: Callable[[], bool] | None = None
) -> SearchResult:
    """The robot's move in ``position`` (its seat is the one to move), as a search result;
    :class:`~pbmserv.robots.search.Stopped` as soon as ``stop()`` is true.

    With the pie rule available, the robot swaps when the search says the seat to move stands
    worse than the first player (swapping takes over the first player's side as it stands).
    """
    adapter = adapter_for(position.game.name)
    result = search(position, adapter, budget, stop=stop)
    if position.swap_available() and result.score < 0:
        return SearchResult(SWAP, -result.score, result.depth, result.nodes, result.seconds)
    return result


def accepts_draw(
    position: Position, seat: int, budget: Budget, stop: Callable[[], bool] | None = None
) -> bool:
    """Whether the robot in ``seat`` accepts a draw: only when its side stands worse by more
    than its game's ``draw_margin`` (the tempo and a shallow search's noise make an even
    position look a little worse for the side not to move), the line of its rule of avoiding a
    repeated position when it is not worse: an even or better position is no reason.

    With two sides it thinks as about a move, within ``budget``: the search's value, turned
    round when the opponent is to move.  With three or four its static value against the best
    placed opponent's (each seat's own evaluation: the paranoid or probing searches value a
    line from the mover's side only, and their values are not centred on an even game).
    :class:`~pbmserv.robots.search.Stopped` when ``stop()`` turns true meanwhile."""
    adapter = adapter_for(position.game.name)
    team = adapter.team(position, seat)
    infos = position.seats()
    teams = {adapter.team(position, s) for s, info in enumerate(infos) if info.in_play}
    if len(teams) == 2:
        value = search(position, adapter, budget, stop=stop).score
        if adapter.mover_team(position) != team:
            value = -value
    else:
        values = adapter.evaluate_seats(position)
        rivals = [
            values[s]
            for s, info in enumerate(infos)
            if info.in_play and adapter.team(position, s) != team
        ]
        value = values[seat] - max(rivals)
    return value < -adapter.draw_margin

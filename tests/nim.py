"""A tiny test-only game (Nim: take 1-3 from a pile, taking the last wins) for server tests
that must not depend on one real engine's rules.  Registered by conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pbmserv.games.base import (
    PASS,
    Game,
    IllegalMove,
    Outcome,
    Param,
    Position,
    SeatInfo,
    UnreadableMove,
)

TEMPLATE = "Pile: {{ pile }}{% if frozen %} (frozen: pass){% endif %}\n"


class NimPosition(Position):
    def __init__(self, players: int, params: dict[str, Any]) -> None:
        super().__init__(players, params)
        self.pile = int(params["pile"])
        self.turn = 0
        self.winner: int | None = None
        self.frozen = 0  # plies for which every player must pass (tests the forced pass)

    @property
    def to_move(self) -> int | None:
        return None if self.outcome() else self.turn

    def seats(self) -> tuple[SeatInfo, ...]:
        return tuple(
            SeatInfo(str(i + 1), str(i + 1), in_play=i not in self.resigned)
            for i in range(self.num_seats)
        )

    def _generate(self) -> Iterator[Any]:
        if self.frozen:
            yield PASS
            return
        yield from range(1, min(3, self.pile) + 1)

    def _parse(self, text: str) -> Any:
        if not text.isdigit():
            raise UnreadableMove(f"'{text}' is not a number of stones")
        n = int(text)
        if self.frozen or not 1 <= n <= min(3, self.pile):
            raise IllegalMove(f"you may take 1 to {min(3, self.pile)} stones, not {n}")
        return n

    def _format(self, move: Any) -> str:
        return str(move)

    def _advance(self) -> None:
        for _ in range(self.num_seats):
            self.turn = (self.turn + 1) % self.num_seats
            if self.turn not in self.resigned:
                return

    def _apply(self, move: Any) -> None:
        if move == PASS:
            self.frozen -= 1
        else:
            self.pile -= move
            if self.pile == 0:
                self.winner = self.turn
                return
            if self.pile == 13 and self.params.get("freeze"):
                self.frozen = 1
        self._advance()

    def _resign(self, seat: int) -> None:
        self._advance()

    def outcome(self) -> Outcome | None:
        if self.winner is not None:
            return Outcome((self.winner,), "took the last stone")
        return self.last_team_standing()

    def _state(self) -> Any:
        return [self.pile, self.turn, self.winner, self.frozen]

    def _load_state(self, state: Any) -> None:
        self.pile, self.turn, self.winner, self.frozen = state

    def board_context(self) -> dict[str, Any]:
        return {"pile": self.pile, "frozen": self.frozen}


GAME = Game(
    "nim",
    "Nim",
    NimPosition,
    players=(2, 3),
    params=(
        Param("pile", "stones in the pile", 15, 1, 99),
        Param("freeze", "a forced pass when 13 stones are left (for tests)"),
    ),
    summary="test game: take 1-3 stones, the last stone wins",
)

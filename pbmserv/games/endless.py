"""The endless-game rulings of Ploy and Polis (DECISIONS.md, "Endless games"): repetitions
and moves without a capture, and the board mail's warnings that name what to avoid."""

from __future__ import annotations

from typing import Any

REPEATS_TO_DRAW = 3
QUIET_MOVES_TO_DRAW = 100
QUIET_WARNING = 10
REPETITION_REASON = (
    "drawn by repetition: the same position a third time with the same player to move"
)
QUIET_REASON = f"drawn: {QUIET_MOVES_TO_DRAW} moves in a row without a capture"


class DrawWatch:
    """The endless-game rulings (DECISIONS.md, "Endless games"): the third occurrence of a
    position with the same player to move, or 100 moves in a row without a capture, draw.

    Positions are remembered by an integer key from the engine (equal positions, equal keys;
    ``hash`` of a tuple of ints is the same in every process), each with the move number
    (ply) after which it occurred, so that a warning can say which position to avoid.  A
    capture cannot be undone, so the positions before it can never occur again: the record
    starts afresh at each capture and holds at most 100 keys.  The record is immutable
    (tuples), so copying a position is free.
    """

    __slots__ = ("keys", "plies", "quiet")

    def __init__(
        self, key: int, keys: tuple[int, ...] = (), quiet: int = 0, plies: tuple[int, ...] = ()
    ) -> None:
        self.keys: tuple[int, ...] = keys or (key,)
        self.quiet = quiet
        self.plies: tuple[int, ...] = (
            plies if len(plies) == len(self.keys) else (0,) * len(self.keys)
        )

    @classmethod
    def at(cls, key: int, ply: int) -> DrawWatch:
        """A fresh record whose first position occurred after move ``ply``."""
        return cls(key, (key,), 0, (ply,))

    def record(self, key: int, captured: bool, ply: int = 0) -> str | None:
        """Note the position after move ``ply``; the reason for a draw if the rulings end the
        game (``ply`` only names the position in warnings: it decides nothing)."""
        if captured:
            self.keys, self.quiet, self.plies = (key,), 0, (ply,)
            return None
        self.quiet += 1
        self.keys = (*self.keys, key)
        self.plies = (*self.plies, ply)
        if self.keys.count(key) >= REPEATS_TO_DRAW:
            return REPETITION_REASON
        if self.quiet >= QUIET_MOVES_TO_DRAW:
            return QUIET_REASON
        return None

    def repeats(self, key: int) -> int:
        """How often the position ``key`` has occurred since the last capture."""
        return self.keys.count(key)

    def current_repeats(self) -> int:
        """How often the latest position recorded has occurred (itself included)."""
        return self.keys.count(self.keys[-1])

    def warnings(self) -> list[str]:
        """What the board mail says when the next repetition or the next 10 moves would draw:
        which positions (by the latest move after which each occurred) not to bring back."""
        out = []
        last: dict[int, int] = {}  # key -> the latest ply it occurred after
        for key, ply in zip(self.keys, self.plies, strict=True):
            last[key] = ply
        twice = sorted(last[k] for k in last if self.keys.count(k) >= REPEATS_TO_DRAW - 1)
        if twice:
            out.append(_repetition_warning(twice, self.plies[-1]))
        left = QUIET_MOVES_TO_DRAW - self.quiet
        if left <= QUIET_WARNING:
            moves = "move" if left == 1 else "moves"
            out.append(
                f"{self.quiet} moves without a capture: the game is drawn unless there is a "
                f"capture within the next {left} {moves}."
            )
        return out

    def state(self) -> list[Any]:
        return [list(self.keys), self.quiet, list(self.plies)]

    @classmethod
    def load(cls, state: Any, key: int, ply: int = 0) -> DrawWatch:
        """Restore :meth:`state`; a position saved before the rulings starts a fresh record,
        one saved before the plies were kept takes its keys as the latest moves up to ``ply``
        (the current one)."""
        if not state:
            return cls.at(key, ply)
        keys = tuple(state[0])
        plies = tuple(state[2]) if len(state) > 2 else tuple(range(ply - len(keys) + 1, ply + 1))
        return cls(key, keys, state[1], plies)

    def copy(self) -> DrawWatch:
        return DrawWatch(0, self.keys, self.quiet, self.plies)


def _repetition_warning(plies: list[int], now: int) -> str:
    """``The position after move 37 has occurred twice ...``: the positions (by the latest
    move after which each occurred; ``now`` is the latest move) whose next occurrence draws."""

    def name(ply: int) -> str:
        if ply == now:
            return "the position now" if ply == 0 else f"the position now (after move {ply})"
        return "the starting position" if ply == 0 else f"the position after move {ply}"

    if len(plies) == 1:
        what = name(plies[0])
        return (
            f"{what[0].upper()}{what[1:]} has occurred twice: if it occurs again with the same"
            " player to move, the game is drawn."
        )
    names = [name(p) for p in plies]
    listed = ", ".join(names[:-1]) + f" and {names[-1]}"
    return (
        f"{listed[0].upper()}{listed[1:]} have each occurred twice: if one of them occurs again"
        " with the same player to move, the game is drawn."
    )

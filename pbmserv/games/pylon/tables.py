"""Pylon's tables: the points of a board size on the doubled grid, their neighbours, links and
supports, computed once per size; the seats' symbols; the size of a full pyramid."""

from __future__ import annotations

from functools import cache

SYMBOLS = ("o", "x", "v", "z")
EMPTY = -1


class Geometry:
    """Tables for one board size, computed once: points are ints ordered by level, row, column."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.grid = 2 * n - 1
        self.level: list[int] = []
        self.cell: list[tuple[int, int]] = []  # 0-based (column, row) on the doubled grid
        index: dict[tuple[int, int, int], int] = {}
        for lv in range(n):
            for j in range(n - lv):
                for i in range(n - lv):
                    index[lv, i, j] = len(self.level)
                    self.level.append(lv)
                    self.cell.append((2 * i + lv, 2 * j + lv))
        self.size = len(self.level)
        self.at: dict[tuple[int, int], list[int]] = {}  # cell -> its points, lowest level first
        for p, c in enumerate(self.cell):
            self.at.setdefault(c, []).append(p)
        self.below: list[tuple[int, ...]] = []
        self.above: list[tuple[int, ...]] = [() for _ in range(self.size)]
        self.nbrs: list[tuple[int, ...]] = []
        self.links: list[tuple[tuple[int, int, int], ...]] = []  # (neighbour, over1, over2)
        self.over2: list[int] = []
        ups: list[list[int]] = [[] for _ in range(self.size)]
        for (lv, i, j), p in index.items():
            if lv:
                sup = tuple(index[lv - 1, i + di, j + dj] for dj in (0, 1) for di in (0, 1))
            else:
                sup = ()
            self.below.append(sup)
            for s in sup:
                ups[s].append(p)
            nb, ln = [], []
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                q = index.get((lv, i + di, j + dj))
                if q is None:
                    continue
                nb.append(q)
                # the level-(lv+1) pair whose link crosses the middle of p-q
                if di:
                    lo = min(i, i + di)
                    u, v = index.get((lv + 1, lo, j - 1)), index.get((lv + 1, lo, j))
                else:
                    lo = min(j, j + dj)
                    u, v = index.get((lv + 1, i - 1, lo)), index.get((lv + 1, i, lo))
                if u is None or v is None:
                    u = v = -1
                ln.append((q, u, v))
            self.nbrs.append(tuple(nb))
            self.links.append(tuple(ln))
            self.over2.append(index.get((lv + 2, i - 1, j - 1), -1))
        self.above = [tuple(u) for u in ups]
        # the points stacked on p and those p rests on: one tuple, for the group's flood fill
        self.vertical = [self.above[p] + self.below[p] for p in range(self.size)]
        self.names = [f"{chr(97 + c)}{r + 1}" for c, r in self.cell]

    def point(self, level: int, i: int, j: int) -> int:
        """The point index of level-``level`` point (i, j); KeyError-free lookup for tests."""
        for p in self.at.get((2 * i + level, 2 * j + level), ()):
            if self.level[p] == level:
                return p
        raise ValueError(f"no level-{level} point ({i}, {j}) on size {self.n}")


@cache
def geometry(n: int) -> Geometry:
    """The shared tables for size ``n`` (built on first use)."""
    return Geometry(n)


def pyramid(n: int) -> int:
    """Pieces in a full pyramid of size n: n(n+1)(2n+1)/6."""
    return n * (n + 1) * (2 * n + 1) // 6

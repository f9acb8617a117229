"""Pylon for the robots: key, ordering and an evaluation by marbles and group safety.

The game ends when nobody can place and the most marbles (buried ones included) wins, so the
count of marbles is the score itself.  A capture takes no marble away: the captor fills every
point resting on the captured group, and those marbles are what changes hands.  So a group's
danger is what its capture would give (the points its captor would fill), not its size.

Evaluation (100 = one marble), from one team's view:

* marbles: mine minus the strongest opponent's (with three or four players the paranoid
  search would otherwise fear the sum of all opponents);
* group safety (:func:`safety`): every group with a single freedom on some level is in atari.
  A placement there by an enemy captures it when that placement is legal (no suicide: a
  one-point eye is safe) and gains what it fills.  The side to move takes its best capture or
  saves its biggest group in atari (when extending there leaves it two freedoms), whichever
  ends better once the opponent has answered (a small static exchange); a group of a seat not
  to move is lost to the seats moving before it (less its owner's chance to save it when only
  one capture can come first); a group with two freedoms is at risk too (a fraction of what
  it would give) when two enemies move before its owner, or when an enemy can fill both;
* the side to move gets half a marble (it places the next one).

With three or four players the robot probes (:class:`pbmserv.robots.search.ProbeSearcher`),
at every level, three rounds deep: each of its moves is followed by the reply every other seat
likes best by this evaluation, then its own statically best move, and so on for three rounds;
a line is worth the least of its values at the ends of the rounds.  Within ``easy``'s depth a
full-width search sees only the next seat's reply; at ``normal`` the paranoid search (every
seat against the robot) lost far more often (below); a probe of one round misses the capture
that its own next move walks into.  A bigger budget probes more of the robot's moves, best
static value first.

Measured for issue 19 (``bench/robots.py --fixed``, score against the greedy and the random
player).  ``easy``, 200 games each: with three players one round 60% and 93%, three rounds 84%
and 87%; with four the paranoid search 20% and 85%, three rounds 79% and 75%.  The greedy
player is beaten far more often and the random player less often: three rounds predict the
greedy replies exactly and the random player's captures not at all.  Tuning (60 games each,
seeds 0-59, greedy and random, four players): one round 59% and 75%, two rounds 70% and 78%,
five 82% and 68%.  A line valued at its end rather than at its worst round end lost to the
random player far more (three rounds: 76% with three players, 58% with four), since it counts
on every seat keeping to the predicted replies.  ``normal``, against greedy: the paranoid search
58% with three players (60 games), the probe 94% (102 games) and with four 86% (120 games), at
5 s of CPU per game instead of 12-21 s; against random 84% with three players (300 games).
``strong`` against greedy 92% and 84% (60 and 120 games), against ``normal`` with three players
50% (96 games): probing more of its moves does not make it stronger.

Captures are where marbles change hands in bulk, so the move ordering tries points in contact
with enemy marbles and on higher levels first; a capture shows up in the search as a jump in
the count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pbmserv.games.base import PASS, Move
from pbmserv.games.pylon import EMPTY, PylonPosition
from pbmserv.robots.search import Adapter

MARBLE = 100
TEMPO = 50
EXCHANGE = 60  # per marble of the mover's static exchange (its captures, its groups in atari)
LOST = 60  # per marble filled by the capture of a group in atari of a seat not to move
AT_RISK = 30  # per marble fillable on a group with two freedoms that enemies can fill in turn


@dataclass
class Group:
    """A group of one owner: its marbles and its freedoms level by level."""

    owner: int
    members: set[int]
    freedoms: dict[int, set[int]]


def groups(pos: PylonPosition) -> list[Group]:
    """Every visible group on the board with its freedoms per level."""
    board, geo, valid = pos.board, pos.geo, pos.valid
    level, nbrs = geo.level, geo.nbrs
    out: list[Group] = []
    seen: set[int] = set()
    for p, owner in enumerate(board):
        if owner == EMPTY or p in seen:
            continue
        members = pos.group(p)
        seen |= members
        freedoms: dict[int, set[int]] = {}
        for m in members:
            free = freedoms.setdefault(level[m], set())
            for q in nbrs[m]:
                if q in valid:
                    free.add(q)
        out.append(Group(owner, members, freedoms))
    return out


def _empty_valid(b: list[int], below: Sequence[tuple[int, ...]], q: int) -> bool:
    return b[q] == EMPTY and all(b[s] != EMPTY for s in below[q])


def place(pos: PylonPosition, p: int, seat: int) -> tuple[list[int], int] | None:
    """``seat`` placing at ``p`` as the rules do it, on a scratch board: (the board after, the
    number of points its captures fill), or None when it is suicide."""
    placed = pos.place_on_copy(p, seat)
    return None if placed is None else (placed[0], len(placed[1]))


def fillable(pos: PylonPosition, group: Group, free: set[int]) -> int:
    """Points a capture of ``group`` would fill, estimated: the empty points resting on it
    whose supports are all full once its freedoms ``free`` are."""
    board, below, above = pos.board, pos.geo.below, pos.geo.above
    cand = {a for m in group.members for a in above[m] if board[a] == EMPTY}
    return sum(1 for a in cand if all(board[s] != EMPTY or s in free for s in below[a]))


def safety(pos: PylonPosition) -> list[int]:
    """Per seat, the marbles (times 100) its groups' safety is worth: the mover's static
    exchange, the others' groups in atari (and at risk) as losses."""
    n = pos.num_seats
    mover = pos.turn
    out = [0] * n
    if mover is None:
        return out
    live = [s for s in range(n) if s not in pos.resigned]
    # the seats moving before each seat's next turn (the mover first)
    order = [(mover + k) % n for k in range(n)]
    order = [s for s in order if s in live]
    before = {s: order.index(s) for s in order}
    captures: list[int] = []  # what the mover's captures would fill
    threats: list[tuple[int, bool]] = []  # the mover's groups in atari: (loss, savable)
    nxt = order[1] if len(order) > 1 else mover
    for g in groups(pos):
        s = g.owner
        if s not in before:
            continue
        for lv, free in g.freedoms.items():
            if len(free) == 1:
                (q,) = free
                attacker = nxt if s == mover else mover
                if s != mover and attacker == s:
                    continue
                if attacker == mover:
                    filled = pos.placement(q)  # what place() would say, without a board
                    gain = None if filled is None else len(filled)
                else:
                    found = place(pos, q, attacker)
                    gain = None if found is None else found[1]
                if gain is None:
                    # suicide for that attacker (an eye): later seats may differ; assume safe
                    continue
                if s == mover:
                    saved = place(pos, q, s)
                    savable = saved is not None and len(_freedoms(pos, saved[0], q, lv)) >= 2
                    threats.append((gain + 1, savable))
                else:
                    captures.append(gain)
                    if before[s] >= 2 or n == 2:
                        out[s] -= LOST * gain
                break
            if len(free) == 2:
                # two freedoms: at risk when two enemies move before its owner, and with two
                # players when the next enemy can fill both (no eye among them)
                if s != mover and before[s] >= 2 and n > 2:
                    out[s] -= AT_RISK * fillable(pos, g, free)
                    break
                if n == 2 or s == mover:
                    attacker = nxt if s == mover else mover
                    if attacker == mover:
                        fills_both = all(pos.placement(q) is not None for q in free)
                    else:
                        fills_both = all(place(pos, q, attacker) is not None for q in free)
                    if fills_both:
                        out[s] -= AT_RISK * fillable(pos, g, free)
                        break
    if captures or threats:
        best = max(captures, default=0)
        threats.sort(reverse=True)
        t1 = threats[0][0] if threats else 0
        t2 = threats[1][0] if len(threats) > 1 else 0
        net = best - t1
        if threats and threats[0][1]:
            net = max(net, -t2)
        out[mover] += EXCHANGE * net
    return out


def _freedoms(pos: PylonPosition, b: list[int], p: int, lv: int) -> set[int]:
    """The level-``lv`` freedoms of the group of ``p`` on board ``b``."""
    geo = pos.geo
    return {
        q
        for m in pos.group(p, b)
        if geo.level[m] == lv
        for q in geo.nbrs[m]
        if _empty_valid(b, geo.below, q)
    }


def standing(value: Sequence[int], pos: PylonPosition, seat: int) -> int:
    """``seat``'s value less the strongest other seat's still playing."""
    others = [value[s] for s in range(pos.num_seats) if s != seat and s not in pos.resigned]
    return value[seat] - max(others, default=0)


class PylonAdapter(Adapter[PylonPosition]):
    draw_margin = 150  # a marble and a half down, not the tempo (half a marble)
    driver = "pvs"
    # probed three rounds deep with three or four seats, at every level: see the module
    # docstring for the measurements (issue 19)
    multiplayer = "probe"
    probe_rounds = 3

    def key(self, pos: PylonPosition) -> Any:
        return (tuple(pos.board), pos.turn)

    def moves(self, pos: PylonPosition) -> Sequence[Move]:
        return pos.move_list()

    def team(self, pos: PylonPosition, seat: int) -> Any:
        return seat

    def values(self, pos: PylonPosition) -> list[int]:
        """Per seat, its marbles, group safety and tempo (100 = one marble)."""
        counts = [0] * pos.num_seats
        for c in pos.board:
            if c != EMPTY:
                counts[c] += 1
        safe = safety(pos)
        mover = pos.turn
        return [
            counts[s] * MARBLE + safe[s] + (TEMPO if s == mover else 0)
            for s in range(pos.num_seats)
        ]

    def evaluate(self, pos: PylonPosition, team: Any) -> int:
        return standing(self.values(pos), pos, team)

    def evaluate_seats(self, pos: PylonPosition) -> list[int]:
        """Every seat's :meth:`evaluate` from one safety count (the probe's vectors)."""
        value = self.values(pos)
        return [standing(value, pos, s) for s in range(pos.num_seats)]

    def hint(self, pos: PylonPosition, move: Any) -> int:
        if move == PASS:
            return 0
        geo = pos.geo
        board = pos.board
        seat = pos.turn
        contact = sum(1 for q in geo.nbrs[move] if board[q] not in (EMPTY, seat))
        return 2 * geo.level[move] + contact

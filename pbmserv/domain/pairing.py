"""Tournament rules without a database: pairing (round robin, Swiss, knockout) and standings.

Pure functions of the players, their scores and the games so far; :mod:`pbmserv.domain.tournaments`
plays them out on ordinary boards.  The rules are described there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pbmserv.store.models import GameResult, Tournament, TournamentFormat, TournamentGame

WIN, LOSS, DRAW, BYE = GameResult.win, GameResult.loss, GameResult.draw, GameResult.bye


# ----------------------------------------------------------------------------- pure pairing


def circle_rounds(players: Sequence[int], double: bool = False) -> list[list[tuple[int, int]]]:
    """Round-robin rounds by the circle method; a pair with -1 is a bye (sitting out).

    >>> circle_rounds([1, 2, 3, 4])
    [[(1, 4), (2, 3)], [(3, 1), (4, 2)], [(1, 2), (3, 4)]]
    """
    ring = list(players) + ([-1] if len(players) % 2 else [])
    n = len(ring)
    rounds: list[list[tuple[int, int]]] = []
    firsts = {p: 0 for p in ring}
    seconds = {p: 0 for p in ring}
    last: dict[int, str] = {}
    for r in range(n - 1):
        rest = ring[1:]
        shift = r % len(rest)
        rest = rest[len(rest) - shift :] + rest[: len(rest) - shift]
        arranged = [ring[0], *rest]
        pairs = []
        for i in range(n // 2):
            a, b = arranged[i], arranged[n - 1 - i]
            if b == -1 or a == -1:
                pairs.append((a, b) if b == -1 else (b, a))
                continue
            first, second = _seat_order(a, b, firsts, seconds, last)
            firsts[first] += 1
            seconds[second] += 1
            last[first], last[second] = "first", "second"
            pairs.append((first, second))
        rounds.append(pairs)
    if double:
        rounds += [[(b, a) if b != -1 else (a, b) for a, b in pairs] for pairs in rounds]
    return rounds


def _seat_order(
    a: int, b: int, firsts: dict[int, int], seconds: dict[int, int], last: dict[int, str]
) -> tuple[int, int]:
    """``a`` is the higher-ranked player; the returned pair is (first seat, second seat)."""
    balance_a, balance_b = firsts[a] - seconds[a], firsts[b] - seconds[b]
    if balance_a != balance_b:
        return (a, b) if balance_a < balance_b else (b, a)
    if last.get(a) != last.get(b):
        return (a, b) if last.get(b) == "first" or last.get(a) == "second" else (b, a)
    return a, b


@dataclass
class SwissInput:
    """What Swiss pairing needs, players ranked best first."""

    ranked: list[int]
    scores: dict[int, float]
    met: set[frozenset[int]] = field(default_factory=set)
    colours: dict[int, list[str]] = field(default_factory=dict)  # "first"/"second" per game
    had_bye: set[int] = field(default_factory=set)


def swiss_pairs(data: SwissInput) -> tuple[list[tuple[int, int]], int | None, bool]:
    """Pairs (first seat, second seat) best board first, the bye, and whether rematches were
    needed."""
    import networkx as nx  # lazy: networkx takes a third of a second to import

    ranked = list(data.ranked)
    bye = None
    if len(ranked) % 2:
        bye = next((p for p in reversed(ranked) if p not in data.had_bye), ranked[-1])
        ranked.remove(bye)
    rank = {p: i for i, p in enumerate(ranked)}
    groups: dict[float, list[int]] = {}
    for p in ranked:
        groups.setdefault(data.scores.get(p, 0.0), []).append(p)

    def balance(p: int) -> int:
        seq = data.colours.get(p, [])
        return seq.count("first") - seq.count("second")

    def preference(p: int) -> tuple[str | None, bool]:
        """The wanted seat and whether the wish is strong (unequal counts so far)."""
        b = balance(p)
        if b:
            return ("second" if b > 0 else "first"), True
        seq = data.colours.get(p, [])
        if seq:
            return ("second" if seq[-1] == "first" else "first"), False
        return None, False

    def cost(a: int, b: int) -> int:
        sa, sb = data.scores.get(a, 0.0), data.scores.get(b, 0.0)
        diff = round(abs(sa - sb) * 2)
        (pa, strong_a), (pb, strong_b) = preference(a), preference(b)
        clash = 0
        if pa is not None and pa == pb:
            clash = 2 if strong_a and strong_b else 1
        if sa == sb:  # top half against bottom half, the top boards first
            group = groups[sa]
            i, j = sorted((group.index(a), group.index(b)))
            dutch = abs(j - i - len(group) // 2) * (len(group) - i)
        else:  # the lowest of the higher group floats down to the highest of the lower one
            high, low = (a, b) if sa > sb else (b, a)
            upper, lower = groups[max(sa, sb)], groups[min(sa, sb)]
            dutch = (len(upper) - 1 - upper.index(high)) + lower.index(low)
        return diff * diff * 10**10 + clash * 10**7 + dutch

    def match(allow_rematch: bool) -> set[tuple[int, int]]:
        graph = nx.Graph()
        graph.add_nodes_from(ranked)
        for i, a in enumerate(ranked):
            for b in ranked[i + 1 :]:
                rematch = frozenset((a, b)) in data.met
                if rematch and not allow_rematch:
                    continue
                graph.add_edge(a, b, weight=10**15 - cost(a, b) - (10**14 if rematch else 0))
        return nx.max_weight_matching(graph, maxcardinality=True)

    matching = match(False)
    rematches = len(matching) * 2 < len(ranked)
    if rematches:
        matching = match(True)
    pairs = sorted(
        (tuple(sorted(pair, key=rank.__getitem__)) for pair in matching),
        key=lambda pair: rank[pair[0]],
    )
    seated = []
    for number, (a, b) in enumerate(pairs, start=1):
        seated.append(_swiss_seats(a, b, number, balance, data.colours))
    return seated, bye, rematches


def _swiss_seats(
    a: int, b: int, number: int, balance: Callable[[int], int], colours: dict[int, list[str]]
) -> tuple[int, int]:
    """Seats for higher-ranked ``a`` and ``b``: the lower first-seat balance moves first; then
    the one who was second last time; then ``a`` gets the opposite of his last seat; with no
    history, ``a`` moves first on odd boards."""
    ba, bb = balance(a), balance(b)
    if ba != bb:
        return (a, b) if ba < bb else (b, a)
    seq_a, seq_b = colours.get(a) or [], colours.get(b) or []
    la = seq_a[-1] if seq_a else None
    lb = seq_b[-1] if seq_b else None
    if la != lb and la is not None and lb is not None:
        return (a, b) if la == "second" else (b, a)
    if la is not None:
        return (a, b) if la == "second" else (b, a)
    return (a, b) if number % 2 else (b, a)


def bracket(size: int) -> list[int]:
    """Seed order of a knockout bracket: ``bracket(8) == [1, 8, 4, 5, 2, 7, 3, 6]``."""
    order = [1]
    while len(order) < size:
        total = 2 * len(order) + 1
        order = [x for seed in order for x in (seed, total - seed)]
    return order


# ----------------------------------------------------------------------------- standings


@dataclass
class Standing:
    user_id: int
    userid: str
    seed: int
    score: float = 0.0
    buchholz: float = 0.0
    berger: float = 0.0
    played: int = 0
    status: str = ""  # "withdrawn", "out in round N" (knockout), "" otherwise
    rank: int = 0


def points(result: GameResult | None, tournament: Tournament) -> tuple[float, float] | None:
    """(first, second) points of a result, None while the game runs."""
    if result == WIN:
        return 1.0, 0.0
    if result == LOSS:
        return 0.0, 1.0
    if result == DRAW:
        return 0.5, 0.5
    if result == BYE:
        return (1.0 if tournament.format != TournamentFormat.roundrobin else 0.0), 0.0
    return None


def standings(tournament: Tournament) -> list[Standing]:
    """The players in standing order with score, Buchholz and Sonneborn-Berger.

    A knockout ranks by the round a player went out in (those still in first), then score,
    then seed: Buchholz and Sonneborn-Berger weigh the opponents of a round robin or a Swiss,
    and mean nothing among players who met different opponents in a bracket."""
    table = {
        p.user_id: Standing(
            p.user_id, p.user.userid, p.seed or 0, status="withdrawn" if p.withdrawn else ""
        )
        for p in tournament.players
    }
    results: list[tuple[int, int, float]] = []  # (player, opponent, his points)
    for row in tournament.games:
        got = points(row.result, tournament)
        if got is None:
            continue
        table[row.first_id].score += got[0]
        if row.second_id is None:
            continue
        table[row.second_id].score += got[1]
        results += [(row.first_id, row.second_id, got[0]), (row.second_id, row.first_id, got[1])]
    for player, opponent, share in results:
        table[player].played += 1
        table[player].buchholz += table[opponent].score
        table[player].berger += share * table[opponent].score
    if tournament.format == TournamentFormat.knockout:  # who went out later ranks higher
        out_in = eliminated(tournament)
        for user_id, round_ in out_in.items():
            if not table[user_id].status:
                table[user_id].status = f"out in round {round_}"
        ordered = sorted(
            table.values(), key=lambda s: (-out_in.get(s.user_id, 10**6), -s.score, s.seed)
        )
    else:
        ordered = sorted(table.values(), key=lambda s: (-s.score, -s.buchholz, -s.berger, s.seed))
    for i, s in enumerate(ordered, start=1):
        s.rank = i
    return ordered


def eliminated(tournament: Tournament) -> dict[int, int]:
    """Knockout: the round in which each player went out: beaten (a withdrawn player loses a
    match not decided on the board), or, withdrawn with no match lost, the round he would
    have played next."""
    out: dict[int, int] = {}
    for round_ in range(1, tournament.current_round + 1):
        for pair, winner in knockout_winners(tournament, round_).items():
            out.update((loser, round_) for loser in pair if winner is not None and loser != winner)
    last: dict[int, int] = {}
    for row in tournament.games:
        for user_id in (row.first_id, row.second_id):
            if user_id is not None:
                last[user_id] = max(last.get(user_id, 0), row.round)
    for p in tournament.players:
        if p.withdrawn and p.user_id not in out:
            out[p.user_id] = last.get(p.user_id, 0) + 1
    return out


def knockout_winners(tournament: Tournament, round_: int) -> dict[frozenset[int], int | None]:
    """The winner of each match of a knockout round (None while it is undecided): the
    winner of a game, the higher seed after two draws (the game and its replay), the other
    player when one withdrew before it was decided on the board."""
    matches: dict[frozenset[int], list[TournamentGame]] = {}
    for row in tournament.games:
        if row.round == round_ and row.second_id is not None:
            matches.setdefault(frozenset((row.first_id, row.second_id)), []).append(row)
    seeds = {p.user_id: p.seed or 0 for p in tournament.players}
    withdrawn = {p.user_id for p in tournament.players if p.withdrawn}
    out: dict[frozenset[int], int | None] = {}
    for key, rows in matches.items():
        winner = None
        for row in rows:
            if row.result == WIN:
                winner = row.first_id
            elif row.result == LOSS:
                winner = row.second_id
        staying = [p for p in key if p not in withdrawn]
        if winner is None and all(r.result is not None for r in rows):
            if len(staying) == 1:
                winner = staying[0]
            elif len(rows) >= 2:
                winner = min(key, key=seeds.__getitem__)
        out[key] = winner
    return out


def knockout_slots(tournament: Tournament, round_: int) -> list[int | None]:
    """The bracket entering ``round_``: a user id per slot in bracket order, None where
    nobody is (a seed beyond the field, a match that nobody came out of: both players
    withdrew).  A slot's player may have withdrawn since he reached it; the pairing passes
    him over, and the other player of his pair of slots advances."""
    seeds = {p.seed: p.user_id for p in tournament.players if p.seed}
    size = 2 ** math.ceil(math.log2(max(2, len(seeds))))
    slots = [seeds.get(seed) for seed in bracket(size)]
    withdrawn = {p.user_id for p in tournament.players if p.withdrawn}
    for played in range(1, round_):
        won = knockout_winners(tournament, played)
        ahead: list[int | None] = []
        for a, b in zip(slots[::2], slots[1::2], strict=True):
            if a is not None and b is not None and frozenset((a, b)) in won:
                ahead.append(won[frozenset((a, b))])
                continue
            staying = [p for p in (a, b) if p is not None and p not in withdrawn]
            ahead.append(staying[0] if len(staying) == 1 else None)
        slots = ahead
    return slots

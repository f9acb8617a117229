"""Three- and four-player Plotto robots search with max-n: hand-checked positions where the
paranoid search sees only losses, and the threat count that tells an unstoppable threat.

Plotto coordinates are doubled (x, y): a column is (x, y), (x, y + 2), ...; a cell is
playable once it touches two pieces; a piece may not touch its own number.
"""

from __future__ import annotations

import pytest

from pbmserv.games.plotto import PlottoPosition, cell_of, line_seats
from pbmserv.robots import LEVELS, Budget, adapter_for, choose_move
from pbmserv.robots.plotto import DOUBLE, THREAT, PlottoAdapter, threat_cells
from pbmserv.robots.search import WIN, MaxnSearcher, Searcher

BUDGET = Budget(nodes=20_000)


def two_threats() -> PlottoPosition:
    """Three players, seat 0 (number 1) to move.  Seat 1 (number 2) threatens 2 on (0, 6) in
    column 0 (2 1 4 _); seat 2 (number 3) threatens 3 on (6, 6) in column 6 (3 1 4 _).

    Seat 0 must block (0, 6), with a 1 (the 2 would complete seat 1's line, the 3 and 4 touch
    their own numbers): seat 1 then blocks (6, 6) rather than lose to seat 2.  Any other move
    loses to seat 1 at once.  A paranoid search lets seat 1 play 3 on (6, 6) for seat 2 and
    sees every move lost.
    """
    pieces = {(0, 0): 2, (0, 2): 1, (0, 4): 4, (1, 5): 3}
    pieces |= {(6, 0): 3, (6, 2): 1, (6, 4): 4, (7, 5): 1}
    return PlottoPosition.from_pieces(pieces, players=3, turn=0)


def test_two_threats_position_is_what_the_docstring_says():
    pos = two_threats()
    some, every = threat_cells(pos)
    assert some == [set(), {cell_of(0, 6)}, {cell_of(6, 6)}]
    assert every == [set(), set(), set()]
    blocks = [m for m in pos.move_list() if m // 8 == cell_of(0, 6)]
    assert [m % 8 for m in blocks] == [1, 2]
    assert line_seats(pos.board, cell_of(0, 6), 2, 3, False) == {1}


def test_paranoid_search_sees_the_two_threats_position_as_lost():
    pos = two_threats()
    result = Searcher(PlottoAdapter(), BUDGET).run(pos)
    assert result.score <= -WIN + 10


@pytest.mark.parametrize("level", ["easy", "normal", "strong"])
def test_max_n_blocks_the_next_seat_and_leaves_the_other_threat_to_it(level):
    pos = two_threats()
    result = choose_move(pos, LEVELS[level])
    assert result.move == cell_of(0, 6) * 8 + 1, pos.format_move(result.move)
    assert result.score > -DOUBLE  # not lost (the paranoid search's verdict)


def test_max_n_serves_plotto_and_four_player_ploy_stays_paranoid():
    assert adapter_for("plotto").multiplayer == "maxn"
    assert adapter_for("ploy").multiplayer == "paranoid"
    searcher = MaxnSearcher(PlottoAdapter(), Budget(nodes=500))
    assert searcher.run(two_threats()).move is not None
    assert searcher.vectors and not searcher.table


def test_a_gap_is_a_threat_nobody_can_block():
    # four players, column 0 reads 1 2 _ 1: both numbers allowed in the gap (3 and 4) complete
    # seat 0's line, so the three seats moving before seat 0 cannot stop it
    pos = PlottoPosition.from_pieces({(0, 0): 1, (0, 2): 2, (0, 6): 1}, players=4, turn=1)
    some, every = threat_cells(pos)
    assert some[0] == every[0] == {cell_of(0, 4)}
    gap = PlottoAdapter().evaluate_seats(pos)
    assert gap[0] == max(gap)
    # one blockable threat at the end of a line is worth one threat, no more
    end = PlottoPosition.from_pieces({(0, 0): 1, (0, 2): 2, (0, 4): 3, (1, 5): 4}, 4, turn=1)
    some, every = threat_cells(end)
    assert some[0] == {cell_of(0, 6)} and not every[0]
    blockable = PlottoAdapter().evaluate_seats(end)
    assert gap[0] > 3 * THREAT > blockable[0]

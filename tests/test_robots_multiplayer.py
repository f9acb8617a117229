"""Three- and four-player Plotto robots probe one line of replies: hand-checked positions where
the paranoid search sees only losses, the threat count that tells an unstoppable threat, and the
lines short of a piece that the seats in between open.

Plotto coordinates are doubled (x, y): a column is (x, y), (x, y + 2), ...; a cell is
playable once it touches two pieces; a piece may not touch its own number.
"""

from __future__ import annotations

import pytest

from pbmserv.games.plotto import PlottoPosition, cell_of, line_seats
from pbmserv.robots import LEVELS, Budget, adapter_for, choose_move
from pbmserv.robots.plotto import DOUBLE, THREAT, PlottoAdapter, prospects, threat_cells
from pbmserv.robots.search import WIN, ProbeSearcher, Searcher, search

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
def test_every_level_blocks_the_next_seat_and_leaves_the_other_threat_to_it(level):
    pos = two_threats()
    result = choose_move(pos, LEVELS[level])
    assert result.move == cell_of(0, 6) * 8 + 1, pos.format_move(result.move)
    assert result.score > -DOUBLE  # not lost (the paranoid search's verdict)


@pytest.mark.parametrize("level", ["easy", "normal", "strong"])
@pytest.mark.parametrize("players", [3, 4])
def test_every_level_probes_plotto_with_three_or_four_players(level, players):
    assert adapter_for("plotto").multiplayer == "probe"
    assert adapter_for("ploy").multiplayer == "paranoid"
    pos = PlottoPosition.from_pieces({(0, 0): 1, (0, 2): 2, (1, 1): 3}, players, turn=1)
    found = search(pos, PlottoAdapter(), LEVELS[level])
    probe = ProbeSearcher(PlottoAdapter(), LEVELS[level]).run(pos)
    assert (found.move, found.depth, found.pv) == (probe.move, players, [probe.move])


def test_two_player_plotto_keeps_the_alpha_beta_search():
    pos = PlottoPosition.from_pieces({(0, 0): 1, (0, 2): 2, (1, 1): 3}, 2, turn=1)
    found = search(pos, PlottoAdapter(), Budget(nodes=2_000))
    alpha_beta = Searcher(PlottoAdapter(), Budget(nodes=2_000)).run(pos)
    assert (found.move, found.score, found.pv) == (alpha_beta.move, alpha_beta.score, alpha_beta.pv)
    assert found.depth > 2


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


def test_lines_short_of_one_piece_on_an_unplayable_cell_are_latent_and_of_two_open():
    # four players, column 0 reads 1 2 3 from (0, 0) down; every other axis crosses it once
    pos = PlottoPosition.from_pieces({(0, 0): 1, (0, 2): 2, (0, 4): 3}, players=4, turn=0)
    assert cell_of(0, -2) not in pos.open and cell_of(0, 6) not in pos.open
    latent, open_ = prospects(pos)
    # _ 1 2 3 needs a 3 on (0, -2) for seat 2, 1 2 3 _ a 1 on (0, 6) for seat 0; _ _ 1 2 and
    # 2 3 _ _ need two more pieces for seat 1
    assert latent == [1, 0, 1, 0]
    assert open_ == [0, 2, 0, 0]
    # a 1 next to (0, 6) forbids a 1 there: seat 0's latent line is gone
    pos = PlottoPosition.from_pieces({(0, 0): 1, (0, 2): 2, (0, 4): 3, (1, 5): 1}, 4, turn=0)
    assert prospects(pos)[0][0] == 0 and prospects(pos)[0][2] == 1


def opening() -> PlottoPosition:
    """Four players, seat 1 (number 2) to move.  A 1 on (0, 4) makes column 0 read 3 2 1 from
    (0, 0) down: seat 0's latent line _ 3 2 1, whose cell (0, -2) the seats between open."""
    pieces = {(0, 0): 3, (-1, 1): 1, (0, 2): 2, (-1, 3): 3, (1, 1): 1}
    return PlottoPosition.from_pieces(pieces, players=4, turn=1)


def greedy_line_winners(pos: PlottoPosition, robot: int) -> tuple[int, ...]:
    """Who has won when every other seat has played its statically best move (ties: the worst
    for the robot) until the robot is to move again; () if nobody."""
    adapter = PlottoAdapter()

    def vector(pos: PlottoPosition) -> list[int]:
        outcome = pos.outcome()
        if outcome is None:
            return adapter.evaluate_seats(pos)
        return [WIN if s in outcome.winners else -WIN for s in range(pos.num_seats)]

    while pos.to_move is not None and pos.to_move != robot:
        mover = pos.to_move
        children = [adapter.play(pos, move) for move in pos.move_list()]
        ranked = [(vector(child), child) for child in children]
        pos = max(ranked, key=lambda r: (r[0][mover], -r[0][robot]))[1]
    outcome = pos.outcome()
    return outcome.winners if outcome is not None else ()


def test_the_easy_robot_of_four_leaves_no_line_for_the_seats_after_the_next():
    pos = opening()
    gift = cell_of(0, 4) * 8 + 1
    assert greedy_line_winners(PlottoAdapter().play(pos, gift), robot=1) == (0,)
    result = choose_move(pos, LEVELS["easy"])
    assert result.move != gift
    assert greedy_line_winners(PlottoAdapter().play(pos, result.move), robot=1) == ()

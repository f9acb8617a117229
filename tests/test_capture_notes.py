"""Every capture is named in the board mail, by a note of the move that made it: a mail may
report several moves (a move and the queued or robot reply), while a drawing shows one."""

from __future__ import annotations

import random

import pytest

from pbmserv.games import get_game
from pbmserv.games.ploy.tables import KIND_NAMES
from pbmserv.games.polis import square_name


@pytest.mark.parametrize(("game", "players"), [("polis", 2), ("ploy", 2), ("ploy", 4)])
def test_capture_reports_what_the_move_takes(game: str, players: int) -> None:
    """``capture`` tells what the move then takes, and never changes the game."""
    for seed in range(12):
        rnd = random.Random(seed)
        position = get_game(game).new(players)
        while not position.is_over() and position.ply < 120:
            move = rnd.choice(list(position.legal_moves()))
            before = position.serialize()
            capture, text = position.capture(move), position.format_move(move)
            assert position.serialize() == before
            position.play(move)
            if game == "polis":
                taken = [] if capture is None else [p for ps in capture.taken.values() for p in ps]
                assert sorted(taken) == sorted(map(square_name, position.last_captured))
            else:
                assert (capture is not None) == ("x" in text), text


def test_polis_mail_names_a_capture_followed_by_a_queued_reply(shell) -> None:
    """alice's e5-f4 captures her own dog on e3 (bob's dogs hop around it); bob's queued
    reply is played at once, so the drawing's "Previous move" is bob's: the note still
    names alice's capture."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.play("polis", ["f7-f6", "c2-d3"])
    position = get_game("polis").replay(2, {}, ["f7-f6", "c2-d3", "e5-f4"])
    reply = position.format_move(next(iter(position.legal_moves())))
    shell.ok(f"polis queue 101 bob pw-bob {reply}")
    answer = shell.ok("polis move 101 alice pw-alice e5-f4")
    assert "Move 3 (e5-f4, alice) captures alice's blue dog at e3.\n" in answer.body
    assert f"Previous move: {reply}.\n" in answer.body


def test_ploy_mail_names_the_piece_taken(shell) -> None:
    shell.signup("alice", "bob")
    shell.ok("ploy challenge alice bob")
    position = get_game("ploy").new(2)
    rnd = random.Random(1)
    while True:  # random moves up to the first capture
        moves = list(position.legal_moves())
        hits = [m for m in moves if position.capture(m) is not None]
        move = hits[0] if hits else rnd.choice(moves)
        text, capture = position.format_move(move), position.capture(move)
        answer = shell.play("ploy", [text])
        position.play(move)
        if capture is not None:
            break
    [(army, (point,))] = capture.taken.items()
    owner = ("alice", "bob")[army]
    colour = ("green", "red")[army]
    note = f"captures {owner}'s {colour} {capture.pieces} at {point}."
    assert note in answer.body
    assert capture.pieces in KIND_NAMES

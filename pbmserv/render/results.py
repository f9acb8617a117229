"""How a finished game ended, in the words every channel uses: the result line of the board
mail and the web board page, the status of the game lists (``games``, ``history``, the web
lists) and the text record.

A draw is among the players still in (DECISIONS.md, "Endless games"): when some were out
before it (resigned, forfeited, eliminated), the words name who drew and who was out, so that
no list shows the draw as a tie of everybody or as a win.  A draw of every player reads as it
always did: a tie.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pbmserv.games.base import Position
from pbmserv.store.models import Board, BoardStatus


def names(userids: Sequence[str]) -> str:
    """``alice``, ``alice and bob``, ``alice, bob and carol``."""
    if len(userids) <= 1:
        return "".join(userids)
    return ", ".join(userids[:-1]) + " and " + userids[-1]


def _userids(board: Board, seats: Sequence[int]) -> list[str]:
    """The userids of ``seats``, each once (a user may hold more than one seat)."""
    out: list[str] = []
    for seat in seats:
        userid = board.seats[seat].user.userid
        if userid not in out:
            out.append(userid)
    return out


def winners(board: Board) -> list[str]:
    """The userids of the winners of a finished game (empty for a draw)."""
    return _userids(board, [w for w in board.winners or [] if w < len(board.seats)])


def draw_sides(board: Board) -> tuple[list[str], list[str]] | None:
    """For a draw among some of the players only: who drew, and who was out before it (and
    lost); None for a game won, not over, or drawn by every player (a tie)."""
    if board.status is not BoardStatus.finished or board.winners:
        return None
    drawn = _userids(board, board.drawn_seats())
    out = [u for u in _userids(board, range(len(board.seats))) if u not in drawn]
    return (drawn, out) if drawn and out else None


def drawn_words(drawn: Sequence[str], out: Sequence[str]) -> str:
    """``drawn between carol and dave (alice and bob were out)``."""
    among = "between" if len(drawn) == 2 else "among"
    were = "was" if len(out) == 1 else "were"
    return f"drawn {among} {names(drawn)} ({names(out)} {were} out)"


def ending(board: Board, tie: str = "Game was a tie.") -> str:
    """The sentence that says how a finished game ended: ``Game won by alice.``, ``tie``
    for a draw of every player, ``Game drawn between carol and dave (alice was out).``"""
    sides = draw_sides(board)
    if sides is not None:
        return f"Game {drawn_words(*sides)}."
    won = winners(board)
    return f"Game won by {names(won)}." if won else tie


def short_result(board: Board, joiner: str = " and ") -> str:
    """The status of a finished game in a list: ``won by alice and bob``, ``tie``, ``drawn by
    carol and dave`` (the players still in; the others lost); ``joiner`` joins the names."""
    sides = draw_sides(board)
    if sides is not None:
        return "drawn by " + joiner.join(sides[0])
    won = winners(board)
    return "won by " + joiner.join(won) if won else "tie"


def named_reason(reason: str, seats: Sequence[tuple[str, str]]) -> str:
    """An engine's reason for the end with the players named, as the board mail names them
    (``bob resigned.``): each seat's label (``seats``: its label and its player's userid, in
    seat order) becomes the player's userid, "red resigned" reads "bob resigned"; where the
    label describes a thing ("the red chariot", "player 1"), the userid follows it in
    brackets: "the red (bob) chariot reached rank 8"."""
    names_of = {label.lower(): userid for label, userid in seats if label}
    if not names_of:
        return reason
    either = "|".join(re.escape(label) for label in sorted(names_of, key=len, reverse=True))
    found = re.compile(rf"(?<![\w-])(the |player )?({either})(?![\w-])", re.IGNORECASE)

    def name(match: re.Match[str]) -> str:
        userid = names_of[match[2].lower()]
        return f"{match[0]} ({userid})" if match[1] else userid

    return found.sub(name, reason)


def named_result(board: Board, position: Position) -> str:
    """The board's result in words, its players named: the engine's reason names seats ("red
    resigned"), which every channel writes as the board mail's notes name them, by their
    players ("bob resigned"); a result decided off the board (a draw agreed, a withdrawal)
    names its players already.  ``position`` is the board's current position."""
    outcome = position.outcome()
    if not board.result or outcome is None or outcome.reason != board.result:
        return board.result or ""
    infos = position.seats()
    return named_reason(board.result, [(infos[s.index].label, s.user.userid) for s in board.seats])

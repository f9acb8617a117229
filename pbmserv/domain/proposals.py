"""Draw and undo proposals: making one, the answers to it, and what it does when it passes.

The rules, which the help texts and the README tell the players:

- Proposals are numbered per board (#1, #2, ...) and one is open at a time: a second one is
  refused while the first waits, with the lines that answer the open one.  A reject (the
  proposer's own withdraws it) or any move closes it.
- Only the players still in the game propose and answer; a proposal passes when all of them
  have accepted it.  ``accept#N`` and ``reject#N`` answer proposal N only, so an answer
  written for a proposal that has since been closed never counts for the next one.  The bare
  classic words are taken only on a board that has had no other proposal, where they cannot
  be meant for another one.
- An undo takes back the newest move a player sent and the entries it set off (forced
  passes, queued moves of the others, robots' replies); the mails name each of them.  It never takes back an
  entry that put a player out of the game (a resignation, a forfeit, an elimination): a
  player who is out stays out, so such an undo is refused when it is proposed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pbmserv.domain.boards import (
    BoardError,
    finish_draw,
    open_proposals,
    play_entry,
    replay,
    seats_of,
    take_back,
    wrong_number,
)
from pbmserv.games.base import Position
from pbmserv.render.board_mail import OpenVote
from pbmserv.store.models import Board, BoardStatus, MoveRecord, Proposal, ProposalKind, User

PROPOSALS = {"propose": ProposalKind.draw, "undo": ProposalKind.undo}
ANSWERS = ("accept", "reject")


def vote(
    session: Session,
    board: Board,
    position: Position,
    user: User,
    word: str,
    now: datetime,
    number: int | None = None,
) -> tuple[str, Position]:
    """``propose`` (a draw), ``undo``, ``accept`` or ``reject``; returns a status note for
    the mails and the position.  ``number`` is the ``#N`` of the word: for an answer the
    proposal it answers, for a proposal the move due (the guard of moves: the player may
    have put the word in the place of ``<move>`` in the line his mail gave him)."""
    if board.status is not BoardStatus.active:
        raise BoardError("the game is over")
    voters = _voters(board, position)
    if user.id not in voters:
        raise BoardError(
            f"{user.userid} is out of the game on board {board.number}: only the players "
            "still in it propose and answer proposals"
        )
    current = next(iter(open_proposals(session, board)), None)
    if word in PROPOSALS:
        if number is not None and number != position.ply + 1:
            raise BoardError(wrong_number(number, position.ply + 1))
        return _propose(session, board, user, PROPOSALS[word], current, now), position
    proposal = _answered(session, board, current, number)
    label = f"proposal #{number_of(session, proposal)}"
    what = describe(board, proposal)
    if word == "reject":
        proposal.open = False
        return f"{user.userid} rejects {label}: {what}. It is closed.", position
    if user.id in _accepted(board, proposal):
        raise BoardError(f"{user.userid} has already accepted {label}: {what}")
    proposal.accepted_seats = sorted(set(proposal.accepted_seats) | set(seats_of(board, user)))
    if not voters <= _accepted(board, proposal):
        return f"{user.userid} accepts {label}: {what}.", position
    proposal.open = False
    board.last_move_at = now
    if proposal.kind == ProposalKind.draw:
        finish_draw(session, board, position, "draw agreed", now)
        return f"{user.userid} accepts {label}. The game is drawn by agreement.", position
    span = undo_span(board)
    done = entries_text(board, span)
    position = take_back(board, len(span))
    verb = "is" if len(span) == 1 else "are"
    return (
        f"{user.userid} accepts {label}. {done[0].upper()}{done[1:]} {verb} taken back.",
        position,
    )


def _propose(
    session: Session,
    board: Board,
    user: User,
    kind: ProposalKind,
    current: Proposal | None,
    now: datetime,
) -> str:
    """Open a new proposal, unless one is open (it is never replaced in silence)."""
    if current is not None:
        n = number_of(session, current)
        raise BoardError(
            f"proposal #{n} is open ({describe(board, current)}): it must be accepted or "
            f"rejected before another is made (accept#{n} or reject#{n}; a reject by its "
            "proposer withdraws it)"
        )
    if kind == ProposalKind.undo:
        undo_span(board)  # refused now, not once everybody has accepted
    proposal = Proposal(
        board_id=board.id,
        kind=kind,
        ply=len(board.moves),
        accepted_seats=seats_of(board, user),
        open=True,
        at=now,
    )
    session.add(proposal)
    session.flush()
    what = describe(board, proposal)
    return f"Proposal #{number_of(session, proposal)}: {user.userid} proposes {what}."


def _answered(
    session: Session, board: Board, current: Proposal | None, number: int | None
) -> Proposal:
    """The open proposal an answer is for: the one its ``#N`` names, or (no ``#N``) the
    board's first and only one."""
    if current is None:
        closed = "" if number is None else f"proposal #{number} is not open, and "
        raise BoardError(f"{closed}there is no open proposal to accept or reject")
    n = number_of(session, current)
    open_one = f"the open one is #{n}: {describe(board, current)}"
    if number is None and n > 1:
        raise BoardError(
            "this board has had more than one proposal, so say which one you answer "
            f"({open_one}): accept#{n} or reject#{n}"
        )
    if number is not None and number != n:
        raise BoardError(
            f"proposal #{number} is not open ({open_one}); an answer counts only for the "
            "proposal it names"
        )
    return current


def number_of(session: Session, proposal: Proposal) -> int:
    """The proposal's number on its board: #1, #2, ... in the order they were made (rows
    are never deleted but with their board)."""
    earlier = select(func.count(Proposal.id)).where(
        Proposal.board_id == proposal.board_id, Proposal.id <= proposal.id
    )
    return session.scalar(earlier) or 1


def describe(board: Board, proposal: Proposal) -> str:
    """What a proposal does, in words: "a draw", "to take back move 5 (a1, bob)".  (The
    record has not changed since it was made: any move closes it.)"""
    if proposal.kind == ProposalKind.draw:
        return "a draw"
    moves = board.moves[: proposal.ply]
    return "to take back " + entries_text(board, moves[len(moves) - _undo_length(moves) :])


def _undo_length(moves: Sequence[MoveRecord]) -> int:
    """How many of the newest entries an undo takes back: the newest move a player sent
    and the entries after it that it set off, automatic ones and robots' replies (0: no
    player has moved).  A robot replies at once, so without its reply the undo would take
    back the robot's move, which the robot would only play again."""
    for back, entry in enumerate(reversed(moves), start=1):
        if not entry.auto and entry.source != "robot":
            return back
    return 0


def undo_span(board: Board) -> list[MoveRecord]:
    """The entries an undo takes back now; refused when there is none, or when one of them
    put a player out of the game."""
    moves = board.moves
    count = _undo_length(moves)
    if count == 0:
        raise BoardError("there is no move to take back")
    span = list(moves[len(moves) - count :])
    position = replay(board, len(moves) - count)
    for entry in span:
        before = _in_game(position)
        play_entry(position, entry.text)
        gone = sorted(before - _in_game(position))
        if gone:
            users = " and ".join(board.seats[s].user.userid for s in gone)
            raise BoardError(
                "an undo takes back the newest move a player sent and what followed it "
                f"({entries_text(board, span)}), but move {_entry_text(board, entry)} put "
                f"{users} out of the game; a player who is out stays out, so these moves "
                "cannot be taken back"
            )
    return span


def entries_text(board: Board, entries: Sequence[MoveRecord]) -> str:
    """ "move 5 (a1, bob)", "moves 5 (a1, bob) and 6 (d4, carol, queued)"."""
    names = [_entry_text(board, e) for e in entries]
    if len(names) == 1:
        return f"move {names[0]}"
    return "moves " + ", ".join(names[:-1]) + f" and {names[-1]}"


def _entry_text(board: Board, entry: MoveRecord) -> str:
    """ "5 (a1, bob)"; an automatic entry says how it came ("queued", "forced")."""
    users = {s.user_id: s.user.userid for s in board.seats}
    who = users.get(entry.user_id) if entry.user_id is not None else None
    who = who or board.seats[entry.seat].user.userid
    how = f", {entry.source}" if entry.auto and entry.source in ("queued", "forced") else ""
    return f"{entry.ply} ({entry.text}, {who}{how})"


def _in_game(position: Position) -> set[int]:
    return set(position.live_seats()) - position.resigned


def _voters(board: Board, position: Position) -> set[int]:
    """The users whose votes a proposal needs: every player still in the game."""
    return {board.seats[position.controller(s)].user_id for s in _in_game(position)}


def _accepted(board: Board, proposal: Proposal) -> set[int]:
    return {board.seats[s].user_id for s in proposal.accepted_seats if s < len(board.seats)}


def open_vote(session: Session, board: Board, position: Position) -> OpenVote | None:
    """The open proposal of ``board``, who has accepted it and who has still to answer it,
    for the mails about it (None when no proposal is open)."""
    if board.status is not BoardStatus.active:
        return None
    proposal = next(iter(open_proposals(session, board)), None)
    if proposal is None:
        return None
    voters, accepted = _voters(board, position), _accepted(board, proposal)
    users = list({s.user_id: s.user for s in board.seats}.values())  # seat order, once each
    return OpenVote(
        proposal.kind.value,
        frozenset(voters - accepted),
        number=number_of(session, proposal),
        what=describe(board, proposal),
        accepted=tuple(u.userid for u in users if u.id in accepted & voters),
        waiting_names=tuple(u.userid for u in users if u.id in voters - accepted),
    )

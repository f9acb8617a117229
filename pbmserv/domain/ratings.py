"""Elo ratings per game type, as the classic servers kept them.

Every player starts at 1600 and is *established* after 20 rated games (before that the rating is
*provisional*; both use K = 32).  In a game of more than two players each player is rated
against the average rating of the others: expected score ``1 / (1 + 10 ** ((avg - own) / 400))``,
actual score 1 for a win (every winner of a team scores 1), 0.5 for a tie, 0 for a loss; the
new rating is ``own + K * (actual - expected)``, all from the ratings before the game.  A board
started with ``--unrated`` changes nothing.  :func:`rate_board` runs once, when a board finishes.

A draw is among the players still in (DECISIONS.md, "Endless games"): each of them draws with
the others still in and beats those already out, and scores the mean of that (0.5 when nobody
was out, as in a tie; 1 when one player was left, as in a win); those out lost, and score 0 as
the losers of a won game do.  They count as tied and lost games.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pbmserv.store.models import Board, BoardStatus, Rating, Seat, User

START = 1600.0
K = 32.0
ESTABLISHED_AFTER = 20
INACTIVE_DAYS = 180


def expected(own: float, others: list[float]) -> float:
    """The expected score of a player rated ``own`` against the average of ``others``."""
    average = sum(others) / len(others)
    return 1.0 / (1.0 + 10.0 ** ((average - own) / 400.0))


def new_ratings(ratings: list[float], scores: list[float]) -> list[float]:
    """The ratings after one game; ``scores`` are 1 (win), 0.5 (tie), 0 (loss) or the share
    of a draw among some of the players (see the module)."""
    out = []
    for i, own in enumerate(ratings):
        others = ratings[:i] + ratings[i + 1 :]
        out.append(own + K * (scores[i] - expected(own, others)))
    return out


def board_scores(board: Board, users: list[User]) -> tuple[list[float], bool]:
    """Each user's score in the finished ``board``, and whether it was drawn (a draw gives
    those still in a share by the module's rule, and those out 0)."""
    if board.winners:
        won = {board.seats[w].user.id for w in board.winners}
        return [1.0 if u.id in won else 0.0 for u in users], False
    drawn = {board.seats[s].user.id for s in board.drawn_seats()}
    share = (0.5 * (len(drawn) - 1) + len(users) - len(drawn)) / (len(users) - 1)
    return [share if u.id in drawn else 0.0 for u in users], True


def rating_of(session: Session, user: User, game: str) -> Rating:
    row = session.scalar(select(Rating).where(Rating.user_id == user.id, Rating.game == game))
    if row is None:
        row = Rating(user=user, game=game, rating=START, games=0, won=0, lost=0, tied=0)
        session.add(row)
    return row


def rate_board(session: Session | None, board: Board, now: datetime) -> None:
    """Rate a finished board once; the changes are kept on the board for its mails."""
    if session is None or board.status is not BoardStatus.finished:
        return
    if board.rating_changes is not None or board.options.get("unrated"):
        return
    users: list[User] = []
    for seat in board.seats:
        if all(u.id != seat.user.id for u in users):
            users.append(seat.user)
    if len(users) < 2:
        return
    scores, tied = board_scores(board, users)
    with session.no_autoflush:
        rows = [rating_of(session, u, board.game) for u in users]
    before = [r.rating for r in rows]
    after = new_ratings(before, scores)
    changes = []
    for user, row, score, old, new in zip(users, rows, scores, before, after, strict=True):
        row.rating = new
        row.games += 1
        row.won += score == 1.0 and not tied
        row.lost += score == 0.0
        row.tied += tied and score > 0.0
        row.last_game_at = now
        changes.append([user.userid, round(old), round(new)])
    board.rating_changes = changes


@dataclass
class Standing:
    userid: str
    rating: int
    won: int
    lost: int
    tied: int
    active: int
    limit: int | None
    seeking: int


def standings(
    session: Session, game: str, now: datetime
) -> tuple[list[Standing], list[Standing], list[Standing]]:
    """Established, provisional and inactive players of ``game``, best rating first.

    Players seeking games (``seek``) who have no rated game yet are listed as provisional.
    """
    active_counts = dict(
        session.execute(
            select(Seat.user_id, func.count(func.distinct(Board.id)))
            .join(Board, Board.id == Seat.board_id)
            .where(Board.game == game, Board.status == BoardStatus.active)
            .group_by(Seat.user_id)
        ).all()
    )
    rows = list(session.scalars(select(Rating).where(Rating.game == game)))
    rated = {r.user_id for r in rows}
    seekers = session.scalars(select(User).where(User.seeking > 0)).all()
    cutoff = now - timedelta(days=INACTIVE_DAYS)
    established, provisional, inactive = [], [], []
    entries = [(r.user, r) for r in rows] + [(u, None) for u in seekers if u.id not in rated]
    for user, row in entries:
        if user.closed:
            continue  # closed accounts
        item = Standing(
            user.userid,
            round(row.rating if row else START),
            row.won if row else 0,
            row.lost if row else 0,
            row.tied if row else 0,
            active_counts.get(user.id, 0),
            user.game_limit,
            user.seeking,
        )
        if row is not None and row.last_game_at is not None and row.last_game_at < cutoff:
            inactive.append(item)
        elif row is not None and row.games >= ESTABLISHED_AFTER:
            established.append(item)
        else:
            provisional.append(item)
    for group in (established, provisional, inactive):
        group.sort(key=lambda s: (-s.rating, s.userid))
    return established, provisional, inactive

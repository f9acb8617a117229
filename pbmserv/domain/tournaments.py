"""Tournaments: pairing (round robin, Swiss, knockout), standings, and the service that plays
them out on ordinary boards.

- Two-player games only (any registered game that two can play).
- A tournament has a number (its id): board ``t3r2b5`` is tournament 3, round 2, board 5.  Its
  boards are ordinary boards of the game with the options ``nagtime=1``, ``forfeittime=7`` and
  ``tournament=<board name>`` (shown in the board mail heading).
- Seeds are fixed at the start: rating in the game (1600 without one), then order of joining.
- A finished board's result counts at once (:func:`record_result`, called from
  :mod:`pbmserv.domain.moves` for every finished board).  When it was the last game of its
  round, :func:`advance` (which the caller runs after the board's mails) pairs the next round,
  creates its boards, and every player gets the pairings and standings; after the last round
  the final standings.
- Scores: win 1, draw 1/2, loss 0; a Swiss or knockout bye scores 1, a round-robin bye
  (sitting out) 0.  Standings: score, then Buchholz (sum of the opponents' scores), then
  Sonneborn-Berger (the scores of beaten opponents plus half those of drawn ones), then seed;
  a knockout's: the round a player went out in (those still in first), then score, then seed.
- Round robin: the circle method (seed 1 fixed, the others rotate); ``--double`` plays the whole
  cycle again with seats swapped.  Seats: the player with fewer first seats so far moves first;
  on equal counts the one who was second in his last game; otherwise the higher seed.
- Swiss: a maximum-weight matching (networkx) over all pairs that have not met yet, weighted so
  that, in this order, score differences are smallest, colour (first-seat) preferences are kept,
  and inside a score group the top half meets the bottom half (1-5, 2-6, ... in an 8-group);
  a player floating down is the lowest of his group and meets the highest he can below.  An
  odd count gives a bye to the lowest-ranked player without one.  If no pairing without
  rematches exists, rematches are allowed (and said so).
- Knockout: a seeded bracket (1-8, 4-5, 2-7, 3-6 for eight; byes to the top seeds when the count
  is not a power of two); winners advance, the higher seed moves first.  A tie is replayed once
  with seats swapped; if the replay is also a tie the higher seed advances.  The last player
  left wins.
- A player who withdraws is paired no more.  His running games end at once as his losses
  (:mod:`pbmserv.domain.withdrawals`); in a knockout the player he would have met advances
  (and he ranks below those still in), in a round robin his later games are forfeit wins of
  his opponents (rows with no board), so that each opponent scores against him.
- An entry whose account is closed (before signoff took its player out of his tournaments)
  is left out: dropped at the start, withdrawn before a later round is paired; the answer
  and the round's mail name it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbmserv.domain import boards, notify
from pbmserv.domain.pairing import (
    BYE,
    DRAW,
    LOSS,
    WIN,
    SwissInput,
    circle_rounds,
    knockout_slots,
    knockout_winners,
    standings,
    swiss_pairs,
)
from pbmserv.domain.tournament_text import board_name, describe, round_text, your_round
from pbmserv.games import get_game
from pbmserv.numbers import whole_number
from pbmserv.render import subjects
from pbmserv.render.links import tournament_link
from pbmserv.render.templates import fill, render
from pbmserv.store.models import (
    Board,
    BoardStatus,
    Rating,
    Tournament,
    TournamentFormat,
    TournamentGame,
    TournamentPlayer,
    TournamentStatus,
    User,
)

FORMATS = tuple(f.value for f in TournamentFormat)
Said = tuple[str, str] | None  # who wrote a comment, and its text
MAX_NAME = 32  # the column's width
MAX_SWISS_ROUNDS = 20
"""The most rounds ``--rounds`` may ask for: a Swiss of more rounds needs more players than
play by mail, and each round may take a week (the forfeit time)."""
ROUNDS_TAKEN = f"rounds, 1 to {MAX_SWISS_ROUNDS}"
NAG_DAYS = 1.0
FORFEIT_DAYS = 7.0
BOARD_NAME = re.compile(r"t(\d+)r(\d+)b(\d+)", re.I)


class TournamentError(Exception):
    """A tournament request the rules refuse; the message is for the sender."""


# ----------------------------------------------------------------------------- the service


def find(session: Session, name: str) -> Tournament:
    """A tournament by name, or by number as ``t3``."""
    query = select(Tournament).where(Tournament.name == name.lower())
    tournament = session.scalar(query)
    number = whole_number(name[1:]) if name[:1].lower() == "t" else None
    if tournament is None and number is not None:  # (a bigger number overflowed the store)
        tournament = session.get(Tournament, number)
    if tournament is None:
        raise TournamentError(f"there is no tournament '{name}'")
    return tournament


def named_board(session: Session, name: str) -> tuple[str, int] | None:
    """The game and number of the board a tournament board name (``t3r2b5``) names, of any
    game, else None."""
    m = BOARD_NAME.fullmatch(name)
    if m is None:
        return None
    t, r, b = (whole_number(x) for x in m.groups())
    if t is None or r is None or b is None:  # beyond any real one (it overflowed the store)
        return None
    row = session.scalar(
        select(TournamentGame).where(
            TournamentGame.tournament_id == t,
            TournamentGame.round == r,
            TournamentGame.number == b,
        )
    )
    if row is None or row.board is None:
        return None
    return row.board.game, row.board.number


def create(
    session: Session,
    name: str,
    game_name: str,
    params: dict[str, bool | int],
    fmt: str,
    rounds: int | None,
    double: bool,
    by: str,
    now: datetime,
) -> Tournament:
    _check_name(name)
    if session.scalar(select(Tournament).where(Tournament.name == name)) is not None:
        raise TournamentError(f"there is already a tournament '{name}'")
    if fmt not in FORMATS:
        raise TournamentError(f"--format must be one of {', '.join(FORMATS)}, not '{fmt}'")
    if rounds is not None and fmt != TournamentFormat.swiss:
        raise TournamentError("--rounds is for Swiss tournaments only")
    if rounds is not None and not 1 <= rounds <= MAX_SWISS_ROUNDS:
        raise TournamentError(f"--rounds takes {ROUNDS_TAKEN}, not {rounds}")
    if double and fmt != TournamentFormat.roundrobin:
        raise TournamentError("--double is for round-robin tournaments only")
    game = get_game(game_name)
    game.check_players(2, params)  # PlayersError: tournaments are for two-player games
    tournament = Tournament(
        name=name,
        game=game.name,
        params=params,
        format=TournamentFormat(fmt),
        rounds=rounds,
        double=double,
        status=TournamentStatus.open,
        current_round=0,
        created=now,
        created_by=by,
    )
    session.add(tournament)
    session.flush()
    return tournament


def _check_name(name: str) -> None:
    """Refuse a name that does not fit the column, or that reads as a tournament's number
    (``t3``) or a tournament board's name (``t3r2b5``): ``show t3r2b5`` and the pages would
    find the other."""
    if len(name) > MAX_NAME:
        raise TournamentError(
            f"a tournament name has at most {MAX_NAME} characters, not {len(name)}"
        )
    if not re.fullmatch(r"[a-z][a-z0-9_-]*", name):
        raise TournamentError(
            f"'{name}' is not a tournament name (a letter, then letters, digits, - or _)"
        )
    if re.fullmatch(r"t\d+", name):
        raise TournamentError(
            f"'{name}' reads as tournament number {name[1:]}: a tournament name may not "
            "have the form t<number>"
        )
    if (board := BOARD_NAME.fullmatch(name)) is not None:
        raise TournamentError(
            f"'{name}' reads as board {board[3]} of round {board[2]} of tournament "
            f"t{board[1]}: a tournament name may not have the form t<number>r<number>b<number>"
        )


def check_round(tournament: Tournament, round_: int) -> None:
    """Refuse a round that the tournament does not have (a later round of a running one is
    only not paired yet): its rounds are known from the start (a Swiss's ``--rounds`` from
    its creation); a finished one had the rounds it played."""
    last = tournament.rounds
    if tournament.status == TournamentStatus.finished:
        last = tournament.current_round
    if round_ < 1 or (last is not None and round_ > last):
        rounds = f"{last} round{'' if last == 1 else 's'}"  # (a duel's round robin has one)
        has = "rounds count from 1" if last is None else f"{tournament.name} has {rounds}"
        if tournament.status == TournamentStatus.finished:
            has = f"{tournament.name} was over after {rounds}"
        raise TournamentError(f"there is no round {round_}: {has}")


def join(session: Session, tournament: Tournament, user: User, now: datetime) -> None:
    if tournament.status != TournamentStatus.open:
        raise TournamentError(f"tournament {tournament.name} has started; joining is closed")
    if any(p.user_id == user.id for p in tournament.players):
        raise TournamentError(f"{user.userid} has already joined tournament {tournament.name}")
    tournament.players.append(TournamentPlayer(user=user, joined=now, withdrawn=False))
    session.flush()


def cancel(
    session: Session, tournament: Tournament, now: datetime, sender: str | None, said: Said = None
) -> list[str]:
    """Remove a tournament that has not started (one that cannot start kept its name taken
    for ever); its players are told by mail (not ``sender``, who has the answer), with what
    the administrator wrote (``said``: who, and the text).  Returns their userids."""
    _lock(session, tournament)  # a start at the same moment: one of them waits, then sees
    if tournament.status != TournamentStatus.open:
        raise TournamentError(
            f"tournament {tournament.name} has started: only a tournament that has not "
            "started can be cancelled"
        )
    users = [p.user for p in tournament.players]
    why = (
        "An administrator has cancelled this tournament before it started: your entry is "
        "void, and no game of it is played."
    )
    heading = describe(tournament).replace(f" (t{tournament.id})", "")  # (SQLite reuses it)
    body = render("mail/text.txt.j2", lines=[heading, fill(why)])
    if said is not None:
        body += render("mail/comment.txt.j2", userid=said[0], text=said[1])
    subject = subjects.tournament(tournament.name, "cancelled")
    session.delete(tournament)
    session.flush()
    notify.mail_users(session, users, subject, body, now, skip_address=sender)
    return [u.userid for u in users]


def _lock(session: Session, tournament: Tournament) -> None:
    """Hold the tournament's row (PostgreSQL) for a change of its state: a cancel and a start
    at the same moment must not both see it open.  (SQLite writes one at a time.)"""
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        session.refresh(tournament, with_for_update=True)


def start(session: Session, tournament: Tournament, now: datetime) -> list[str]:
    """Seed the players and pair round 1; the notes for the answer and the round's mail
    (who was left out)."""
    _lock(session, tournament)
    if tournament.status != TournamentStatus.open:
        raise TournamentError(f"tournament {tournament.name} has already started")
    closed = _closed(tournament)
    for player in closed:  # (signoff leaves now; an account closed before it did not)
        tournament.players.remove(player)
    notes = [_left_out(closed)] if closed else []
    players = [p for p in tournament.players if not p.withdrawn]
    if len(players) < 2:
        why = f" ({notes[0][:-1]})" if notes else ""
        raise TournamentError(f"tournament {tournament.name} needs at least two players{why}")
    ratings = dict(
        session.execute(
            select(Rating.user_id, Rating.rating).where(
                Rating.game == tournament.game, Rating.user_id.in_([p.user_id for p in players])
            )
        ).all()
    )
    players.sort(key=lambda p: (-ratings.get(p.user_id, 1600.0), p.id))
    for seed, player in enumerate(players, start=1):
        player.seed = seed
    n = len(players)
    if tournament.format == TournamentFormat.roundrobin:
        tournament.rounds = (n if n % 2 else n - 1) * (2 if tournament.double else 1)
    elif tournament.format == TournamentFormat.swiss:
        if tournament.rounds is None:
            tournament.rounds = min(max(1, math.ceil(math.log2(n))), n - 1 if n % 2 == 0 else n)
        if tournament.rounds > (n - 1 if n % 2 == 0 else n):
            raise TournamentError(
                f"{tournament.rounds} Swiss rounds without rematches need more than {n} players"
            )
    else:
        tournament.rounds = max(1, math.ceil(math.log2(n)))
    tournament.status = TournamentStatus.running
    tournament.started_at = now
    _next_round(session, tournament, now, notes)
    return notes


def _closed(tournament: Tournament) -> list[TournamentPlayer]:
    """The entries still in whose account is closed: they get no mail and cannot move, so
    pairing them left the opponent a week's wait for the forfeit."""
    return [p for p in tournament.players if not p.withdrawn and p.user.closed]


def _left_out(players: Sequence[TournamentPlayer]) -> str:
    """The note that names the closed accounts left out of the pairing."""
    userids = [p.user.userid for p in players]
    if len(userids) == 1:
        return f"{userids[0]} is left out: the account is closed."
    return f"{', '.join(userids[:-1])} and {userids[-1]} are left out: their accounts are closed."


def record_result(session: Session, board: Board) -> None:
    """Record the result of a finished tournament board, at once (standings and pairings read
    it).  What it sets off waits for :func:`advance`, which the caller runs once it has queued
    the board's own mails."""
    row = _row_of(session, board)
    if row is None or row.result is not None:
        return
    tournament = row.tournament
    _lock(session, tournament)
    winners = {board.seats[w].user_id for w in board.winners or []}
    if not winners or len(winners) > 1:
        row.result = DRAW
    else:
        row.result = WIN if row.first_id in winners else LOSS
    session.flush()


def advance(session: Session, board: Board, now: datetime) -> None:
    """When the finished ``board`` was the last game of its tournament's round: a knockout's
    replays, the next round or the final standings, with their mails.  Run after the mails of
    the board (the outbox is sent in order: a player read his next round's board before the
    end of the game that decided it); nothing when the round goes on or has been taken care of
    already."""
    row = _row_of(session, board)
    if row is None or row.tournament.status != TournamentStatus.running:
        return
    _lock(session, row.tournament)
    _advance_if_done(session, row.tournament, now)


def _row_of(session: Session, board: Board) -> TournamentGame | None:
    """The tournament game of ``board``, if it is a finished tournament board."""
    if board.status is not BoardStatus.finished or not board.options.get("tournament"):
        return None
    return session.scalar(select(TournamentGame).where(TournamentGame.board_id == board.id))


def _advance_if_done(session: Session, tournament: Tournament, now: datetime) -> None:
    current = [g for g in tournament.games if g.round == tournament.current_round]
    if any(g.result is None for g in current):
        return
    if tournament.format == TournamentFormat.knockout and _replays(session, tournament, now):
        return
    notes = []
    if not _over(tournament) and (closed := _closed(tournament)):  # not paired: withdrawn
        for player in closed:
            player.withdrawn = True
        notes.append(_left_out(closed))
    if _over(tournament):
        tournament.status = TournamentStatus.finished
        tournament.finished_at = now
        _round_mail(session, tournament, now, final=True, notes=notes)
        return
    _next_round(session, tournament, now, notes)


def _over(tournament: Tournament) -> bool:
    active = {p.user_id for p in tournament.players if not p.withdrawn}
    if tournament.format == TournamentFormat.knockout:  # the last player left has won
        ahead = knockout_slots(tournament, tournament.current_round + 1)
        return len([p for p in ahead if p in active]) <= 1
    return tournament.current_round >= (tournament.rounds or 0) or len(active) < 2


def _replays(session: Session, tournament: Tournament, now: datetime) -> bool:
    """Knockout: a replay (seats swapped) for every match of the round tied once, unless a
    player withdrew (the other advances); True if any."""
    round_ = tournament.current_round
    rows = [g for g in tournament.games if g.round == round_]
    number = len(rows)
    players = {p.user_id: p for p in tournament.players}
    notes: list[str] = []
    for pair, winner in knockout_winners(tournament, round_).items():
        games = [g for g in rows if g.second_id is not None and {g.first_id, g.second_id} == pair]
        if winner is None and len(games) == 1 and games[0].result == DRAW:
            number += 1
            game = games[0]
            assert game.second_id is not None
            swapped = (game.second_id, game.first_id)
            _make_board(session, tournament, round_, number, swapped, now)
            first, second = players[game.first_id], players[game.second_id]
            higher = min((first, second), key=lambda p: p.seed or 0)
            notes.append(
                f"{first.user.userid} and {second.user.userid} drew "
                f"{board_name(tournament.id, round_, game.number)}: they play again with the "
                f"seats swapped ({board_name(tournament.id, round_, number)}); if that is "
                f"drawn too, {higher.user.userid}, the higher seed, goes on."
            )
    if number > len(rows):
        _round_mail(session, tournament, now, replay=True, notes=notes)
        return True
    return False


def _next_round(
    session: Session, tournament: Tournament, now: datetime, said: Sequence[str] = ()
) -> None:
    """Pair the next round and mail it, ``said`` on top of its notes.  A withdrawn player is
    never paired again: Swiss and knockout pass him over (in knockout the player he would
    have met advances), and his games of a round robin's fixed schedule are scored as
    forfeit wins of his opponents."""
    tournament.current_round += 1
    round_ = tournament.current_round
    notes = list(said)
    withdrawn = {p.user_id for p in tournament.players if p.withdrawn}
    by_seed = {p.seed: p.user_id for p in tournament.players}
    pairs: list[tuple[int, int | None]] = []
    forfeits: list[tuple[int, int]] = []  # (first, second) of games not played
    if tournament.format == TournamentFormat.roundrobin:
        schedule = circle_rounds(sorted(p.seed or 0 for p in tournament.players), tournament.double)
        for a, b in schedule[round_ - 1]:
            first, second = by_seed[a], None if b == -1 else by_seed[b]
            if first in withdrawn and (second is None or second in withdrawn):
                continue
            if second in withdrawn or first in withdrawn:
                assert second is not None
                forfeits.append((first, second))
            else:
                pairs.append((first, second))
    elif tournament.format == TournamentFormat.swiss:
        table = standings(tournament)
        ranked = [s.user_id for s in table if s.status != "withdrawn"]
        data = SwissInput(ranked, {s.user_id: s.score for s in table})
        for row in tournament.games:
            if row.second_id is None:
                data.had_bye.add(row.first_id)
                continue
            data.met.add(frozenset((row.first_id, row.second_id)))
            data.colours.setdefault(row.first_id, []).append("first")
            data.colours.setdefault(row.second_id, []).append("second")
        seated, bye, rematches = swiss_pairs(data)
        pairs = list(seated)
        if bye is not None:
            pairs.append((bye, None))
        if rematches:
            notes.append("No pairing without rematches was possible; some players meet again.")
    else:
        seeds = {p.user_id: p.seed or 0 for p in tournament.players}
        slots = [None if p in withdrawn else p for p in knockout_slots(tournament, round_)]
        for upper, lower in zip(slots[::2], slots[1::2], strict=True):
            group = sorted((p for p in (upper, lower) if p is not None), key=seeds.__getitem__)
            if group:
                pairs.append((group[0], group[1] if len(group) == 2 else None))
    for number, pair in enumerate(pairs, start=1):
        _make_board(session, tournament, round_, number, pair, now)
    names = {p.user_id: p.user.userid for p in tournament.players}
    for number, (first, second) in enumerate(forfeits, start=len(pairs) + 1):
        result = WIN if second in withdrawn else LOSS
        tournament.games.append(
            TournamentGame(
                round=round_, number=number, first_id=first, second_id=second, result=result
            )
        )
        winner, loser = (first, second) if result == WIN else (second, first)
        notes.append(f"{names[winner]} wins by forfeit: {names[loser]} has withdrawn.")
    session.flush()
    _round_mail(session, tournament, now, notes=notes)
    # a round of byes only (or games ended at once) goes straight on
    if all(g.result is not None for g in tournament.games if g.round == round_):
        _advance_if_done(session, tournament, now)


def _make_board(
    session: Session,
    tournament: Tournament,
    round_: int,
    number: int,
    pair: tuple[int, int | None],
    now: datetime,
) -> TournamentGame:
    first, second = pair
    row = TournamentGame(round=round_, number=number, first_id=first, second_id=second)
    tournament.games.append(row)
    if second is None:
        row.result = BYE
        session.flush()
        return row
    name = board_name(tournament.id, round_, number)
    users = [u for u in (session.get(User, first), session.get(User, second)) if u is not None]
    options: dict[str, object] = {
        "nagtime": NAG_DAYS,
        "forfeittime": FORFEIT_DAYS,
        "tournament": name,
    }
    board, position = boards.create_board(
        session, get_game(tournament.game), users, dict(tournament.params), options, now
    )
    row.board = board
    session.flush()
    note = f"Tournament {tournament.name}, round {round_}: this is board {name}."
    notify.board_mail(session, board, position, [note], now, new=True)
    return row


# ----------------------------------------------------------------------------- mail


def _round_mail(
    session: Session,
    tournament: Tournament,
    now: datetime,
    *,
    final: bool = False,
    replay: bool = False,
    notes: Sequence[str] = (),
) -> None:
    round_ = tournament.current_round
    if final:
        subject = subjects.tournament(tournament.name, "final standings")
    elif replay:
        subject = subjects.ROUND_REPLAYS(name=tournament.name, count=round_)
    else:
        subject = subjects.ROUND(name=tournament.name, count=round_)
    body = round_text(tournament, [] if final else [round_], notes)
    link = tournament_link(tournament)
    if link:
        body += f"\nOn the web: {link}\n"
    for player in tournament.players:  # each with his own game on top
        if player.withdrawn:
            continue
        yours = "" if final else your_round(tournament, round_, player.user_id)
        text = f"{fill(yours)}\n\n{body}" if yours else body
        notify.mail_users(session, [player.user], subject, text, now)

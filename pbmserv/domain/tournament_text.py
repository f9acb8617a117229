"""What tournaments say: the heading, the state, the pairings and standings of the answers
to ``tournament`` commands, of the round mails (:mod:`pbmserv.domain.tournaments` sends
them) and of the web pages, and the names of tournament boards (``t3r2b5``)."""

from __future__ import annotations

from collections.abc import Sequence

from pbmserv.domain import mailmodes
from pbmserv.domain.pairing import DRAW, LOSS, WIN, standings
from pbmserv.games import get_game
from pbmserv.render.templates import fill, render
from pbmserv.store.models import Board, Tournament, TournamentFormat, TournamentStatus


def board_name(tournament_id: int, round_: int, number: int) -> str:
    return f"t{tournament_id}r{round_}b{number}"


def pairing_rows(tournament: Tournament, round_: int) -> list[tuple[str, str, str, str, str]]:
    """(board name, game board number, first, second, result) of one round."""
    names = {p.user_id: p.user.userid for p in tournament.players}
    rows = []
    for g in tournament.games:
        if g.round != round_:
            continue
        if g.second_id is None:
            rows.append(("-", "-", names[g.first_id], "(bye)", "bye"))
            continue
        result = str(g.result or ("" if g.board is None else "playing"))
        result = {str(WIN): "1-0", str(LOSS): "0-1", str(DRAW): "1/2-1/2"}.get(result, result)
        if g.board is None:  # a round robin's game of a withdrawn player: never played
            rows.append(("-", "-", names[g.first_id], names[g.second_id], f"{result} forfeit"))
            continue
        name = board_name(tournament.id, g.round, g.number)
        first, second = names[g.first_id], names[g.second_id]
        rows.append((name, str(g.board.number), first, second, result))
    return rows


def your_round(tournament: Tournament, round_: int, user_id: int) -> str:
    """What round ``round_`` holds for one player, for the top of his round mail (the table
    below is everybody's): his board and opponent, or his bye; '' when he has no game in it
    (out of a knockout) or his game is over.  His last game of the round counts: a knockout's
    replays mail named the drawn board (over) to the players who replay it, and told those
    whose match was decided that its board would come."""
    names = {p.user_id: p.user.userid for p in tournament.players}
    his = [
        g for g in tournament.games if g.round == round_ and user_id in (g.first_id, g.second_id)
    ]
    for g in sorted(his, key=lambda g: g.number)[-1:]:
        if g.board is not None and g.result is not None:  # decided before this mail
            return ""
        if g.second_id is None:
            gets = {
                TournamentFormat.swiss: "it scores 1",
                TournamentFormat.knockout: "you go on to the next round",
            }.get(tournament.format, "it scores nothing")
            return f"You have a bye in round {round_}: {gets}."
        if g.board is None:  # a forfeit of a withdrawn player's, with no board
            return f"Your game in round {round_} is not played: its result is a forfeit."
        opponent = names[g.second_id if g.first_id == user_id else g.first_id]
        order = "first" if g.first_id == user_id else "second"
        name = board_name(tournament.id, g.round, g.number)
        game = get_game(tournament.game).display_name
        return (
            f"Your game in round {round_}: {name} ({game} board {g.board.number}) against "
            f"{opponent}; you play {order}. {_board_comes(g.board, user_id)}"
        )
    return ""


def _board_comes(board: Board, user_id: int) -> str:
    """When the player gets the new board's mail: his notifications mode may hold it back (a
    digest player's comes with his digest, a "once" player's when it is his turn)."""
    seat = next((s for s in board.seats if s.user_id == user_id), None)
    mode = "every" if seat is None else mailmodes.mode_of(seat)
    if mode == "digest":
        return "Its board comes with your daily digest (your notifications: 'digest')."
    if mode == "once" and board.to_move_id != user_id:
        return "Its board comes when it is your turn (your notifications: 'once')."
    return "Its board comes in a mail of its own."


def describe(tournament: Tournament) -> str:
    game = get_game(tournament.game)
    params = " ".join(game.format_params(tournament.params))
    fmt = {"roundrobin": "round robin", "swiss": "Swiss", "knockout": "knockout"}[tournament.format]
    if tournament.double:
        fmt = "double round robin"
    count = tournament.rounds
    rounds = f", {count} round{'' if count == 1 else 's'}" if count else ""
    extra = f" {params}" if params else ""
    return f"Tournament {tournament.name} (t{tournament.id}): {game.display_name}{extra}, {fmt}{rounds}"


def standings_text(tournament: Tournament) -> str:
    """The heading, the state and the standings (``standings``, ``join``, ``withdraw``)."""
    return round_text(tournament, [], [])


def pairings_text(tournament: Tournament, rounds: Sequence[int], notes: Sequence[str] = ()) -> str:
    """The heading, the state and the pairings of ``rounds`` (``pairings``, ``start``, with
    its ``notes``)."""
    return round_text(tournament, rounds, notes, with_standings=False)


def round_text(
    tournament: Tournament,
    rounds: Sequence[int],
    notes: Sequence[str],
    *,
    with_standings: bool = True,
) -> str:
    """The text of a round's mail (``notes`` on top: forfeits, rematches), of the final
    standings (no ``rounds``), and of the answers above."""
    return render(
        "mail/tournament.txt.j2",
        heading=describe(tournament),
        status=status_line(tournament),
        standings=standings(tournament) if with_standings else [],
        knockout=tournament.format == TournamentFormat.knockout,
        bye_scores=tournament.format != TournamentFormat.roundrobin,
        rounds=[(r, pairing_rows(tournament, r)) for r in rounds],
        notes=[fill(note) for note in notes],  # (a replay's note ran to 130 columns)
    )


def winner(tournament: Tournament) -> str | None:
    """The userid of the winner of a finished tournament: the first of the standings who
    did not withdraw (a withdrawn leader keeps his place by score, but does not win it); in
    a knockout the last player left; none when nobody is left."""
    rows = standings(tournament)
    if tournament.format == TournamentFormat.knockout:
        return None if rows[0].status else rows[0].userid  # withdrawn, or out
    first = next((row for row in rows if row.status != "withdrawn"), None)
    return None if first is None else first.userid


def status_line(tournament: Tournament) -> str:
    if tournament.status == TournamentStatus.open:
        names = ", ".join(p.user.userid for p in tournament.players) or "nobody yet"
        return f"Open for entries; joined: {names}."
    if tournament.status == TournamentStatus.finished:
        won = winner(tournament)
        if won is None:
            return "Finished. Nobody is left to win it: the last players withdrew."
        return f"Finished. {won} wins tournament {tournament.name}."
    return f"Round {tournament.current_round} of {tournament.rounds} is being played."

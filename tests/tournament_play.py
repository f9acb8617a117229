"""Helpers of the tournament tests: boards by name, pairings, results played out with the
test game Nim (-pile=1: the first player wins by taking the stone; the second wins when the
first resigns or forfeits; a draw is proposed and accepted), standings and mails."""

from __future__ import annotations

from sqlalchemy import select

from pbmserv.domain import tournaments
from pbmserv.store.models import TournamentGame, User


def board_of(shell, name: str) -> tuple[int, str, str]:
    """Board number and the userids in seat order of tournament board ``name``."""
    t, r, b = (int(x) for x in tournaments.BOARD_NAME.fullmatch(name).groups())
    with shell.sessions() as s:
        row = s.scalar(
            select(TournamentGame).where(
                TournamentGame.tournament_id == t,
                TournamentGame.round == r,
                TournamentGame.number == b,
            )
        )
        assert row is not None and row.board is not None, name
        return row.board.number, row.board.seats[0].user.userid, row.board.seats[1].user.userid


def pairings(shell, tid: int, round_: int) -> list[tuple[str, str]]:
    with shell.sessions() as s:
        rows = s.scalars(
            select(TournamentGame)
            .where(TournamentGame.tournament_id == tid, TournamentGame.round == round_)
            .order_by(TournamentGame.number)
        )
        names = {u.id: u.userid for u in s.scalars(select(User))}
        return [(names[g.first_id], names[g.second_id] if g.second_id else "") for g in rows]


def play(shell, name: str, result: str) -> None:
    """``first``: the first player wins; ``second``: the first resigns; ``draw``: agreed."""
    number, first, second = board_of(shell, name)
    if result == "first":
        shell.ok(f"nim move {name} {first} pw-{first} 1")
    elif result == "second":
        shell.ok(f"nim resign {name} {first} pw-{first}")
    else:
        shell.ok(f"nim move {name} {first} pw-{first} propose")
        shell.ok(f"nim move {number} {second} pw-{second} accept")


def table(shell, name: str) -> list[tuple[str, float, float, float]]:
    with shell.sessions() as s:
        t = tournaments.find(s, name)
        return [(x.userid, x.score, x.buchholz, x.berger) for x in tournaments.standings(t)]


def mails(shell, subject: str) -> list[str]:
    return sorted(m.recipient for m in shell.outbox() if m.subject == subject)


def started(shell, name: str, options: str, users: tuple[str, ...]) -> None:
    """Sign ``users`` up, create tournament ``name`` of Nim with ``options``, join them all
    (in that order: their seeds, all rated alike) and start it."""
    shell.signup(*users)
    shell.ok(f"tournament create {name} --game nim {options}")
    for userid in users:
        shell.ok(f"tournament join {name} {userid} pw-{userid}")
    shell.ok(f"tournament start {name}")

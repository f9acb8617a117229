"""The operator's ``robot`` commands (shell only): add, list, level, run; join, withdraw (a
tournament: a robot has no password for ``tournament join|withdraw``)."""

from __future__ import annotations

import click
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.cli.failures import DATAERR
from pbmserv.cli.store import played_elsewhere, require_store
from pbmserv.commands.dispatch import DONE, Refused, answer, request
from pbmserv.domain import accounts, moves, tournament_text, tournaments, withdrawals
from pbmserv.games import get_game
from pbmserv.render import subjects
from pbmserv.render.templates import render
from pbmserv.store.lock import holding
from pbmserv.store.models import Robot, Tournament, User


def _sessions(ctx: click.Context, *, create: bool = False) -> sessionmaker[Session]:
    """The store's sessions; only ``create`` makes a new store (:mod:`pbmserv.cli.store`)."""
    req = request(ctx)
    if not create:
        require_store(req.settings)
    return req.sessions


def _text(lines: list[str]) -> str:
    return render("mail/text.txt.j2", lines=lines)


@click.group("robot", help="Robot players: users whose moves the server computes.")
def robot_group() -> None:
    pass


@robot_group.command("add", help="Create robot NAME for GAME (it accepts challenges at once).")
@click.argument("name")
@click.option("--game", "game", required=True, help="The game it plays (ploy, polis, ...).")
@click.option(
    "--level",
    default=None,
    help="easy, normal (default), strong, expert (20 s a move), nodes=N or seconds=S.",
)
@click.pass_context
def robot_add(ctx: click.Context, name: str, game: str, level: str | None) -> None:
    from pbmserv.robots import DEFAULT_LEVEL  # lazy: the robots load for robot commands only
    from pbmserv.robots.service import add_robot  # lazy: as above

    req = request(ctx)
    with _sessions(ctx, create=True)() as session, session.begin():
        try:
            user = add_robot(session, name, game, level or DEFAULT_LEVEL, req.now)
        except (ValueError, KeyError) as exc:  # (str() of a KeyError quotes its message)
            raise Refused(str(exc.args[0]) if exc.args else str(exc)) from None
        userid = user.userid
    answer(
        ctx,
        "pbmserv robot add",
        f"Robot {userid} plays {game.lower()} at level {level or DEFAULT_LEVEL}; "
        "challenge it like any player.\n",
    )


@robot_group.command("list", help="Every robot with its game and level.")
@click.pass_context
def robot_list(ctx: click.Context) -> None:
    with _sessions(ctx)() as session:
        rows = [
            f"{r.user.userid:<20} {r.game:<10} {r.level}"
            for r in session.scalars(select(Robot).order_by(Robot.game, Robot.user_id))
        ]
    answer(ctx, "pbmserv robot list", _text(rows or ["There are no robots."]))


@robot_group.command("level", help="Change the level of robot NAME.")
@click.argument("name")
@click.argument("level")
@click.pass_context
def robot_level(ctx: click.Context, name: str, level: str) -> None:
    from pbmserv.robots import budget_of  # lazy: the robots load for robot commands only

    try:
        budget_of(level)
    except ValueError as exc:
        raise Refused(str(exc)) from None
    with _sessions(ctx)() as session, session.begin():
        user = accounts.find_user(session, name)
        robot = session.get(Robot, user.id) if user else None
        if robot is None:
            raise Refused(f"there is no robot '{accounts.normalise_userid(name)}'")
        robot.level = level.strip().lower()
        userid = robot.user.userid
    answer(ctx, "pbmserv robot level", f"Robot {userid} now plays at level {level}.\n")


@robot_group.command("run", help="Play every pending robot move once (for cron and the shell).")
@click.option("--until-idle", is_flag=True, help="Repeat until no robot is to move.")
@click.pass_context
def robot_run(ctx: click.Context, until_idle: bool) -> None:
    """For cron where no server runs: it holds the store's clocks lock while it plays, and
    plays nothing where a server (or another run) holds it, as the two searched the same
    moves and played them twice."""
    from pbmserv.robots.service import run_pending, run_until_idle  # lazy: robot commands only

    req = request(ctx)
    runner = run_until_idle if until_idle else run_pending
    sessions = _sessions(ctx)
    # held for the whole run, every pass of --until-idle
    with holding(req.settings.url, "robot run") as held:
        if not held:
            answer(ctx, "pbmserv robot run", played_elsewhere(req.settings.url))
            return
        done = runner(sessions, req.settings, lambda: req.now)
    lines = [
        f"{d.game} {d.number}: "
        + (
            d.text  # (an answer to a proposal names its robot)
            if d.vote
            else f"{d.userid} "
            + (f"played {d.text} (depth {d.depth}, {d.nodes} nodes)" if d.played else d.text)
        )
        for d in done
    ]
    # a damaged board is skipped and the others played; the status tells cron's mail and
    # scripts that the store needs a look (sysexits' "data error", as for a damaged store)
    damaged = any(d.unreadable for d in done)
    answer(
        ctx,
        "pbmserv robot run",
        _text(lines or ["No robot is to move."]),
        status=DATAERR if damaged else DONE,
    )


def _robot(session: Session, name: str) -> User:
    """The user of robot ``name``; refused when there is none."""
    user = accounts.find_user(session, name)
    if user is None or session.get(Robot, user.id) is None:
        raise Refused(f"there is no robot '{accounts.normalise_userid(name)}'")
    return user


def _tournament(session: Session, name: str) -> Tournament:
    try:
        return tournaments.find(session, name)
    except tournaments.TournamentError as exc:
        raise Refused(str(exc)) from None


@robot_group.command("join", help="Enter robot NAME in TOURNAMENT before it starts.")
@click.argument("name")
@click.argument("tournament")
@click.pass_context
def robot_join(ctx: click.Context, name: str, tournament: str) -> None:
    """A robot has no password, so 'tournament join' could never take it: the operator, who
    adds the robots, enters them (to fill a field, or to make an odd count even)."""
    req = request(ctx)
    with _sessions(ctx)() as session, session.begin():
        user, entered = _robot(session, name), _tournament(session, tournament)
        robot = session.get(Robot, user.id)
        assert robot is not None
        if robot.game != entered.game:  # it plays its own game only
            plays, of = get_game(robot.game).display_name, get_game(entered.game).display_name
            raise Refused(
                f"robot {user.userid} plays {plays}, and tournament {entered.name} is of {of}"
            )
        try:
            tournaments.join(session, entered, user, req.now)
        except tournaments.TournamentError as exc:
            raise Refused(str(exc)) from None
        body = f"{user.userid} has joined.\n\n" + tournament_text.standings_text(entered)
    answer(ctx, subjects.tournament(entered.name, "joined"), body)


@robot_group.command(
    "withdraw", help="Take robot NAME out of TOURNAMENT; its running games end as losses."
)
@click.argument("name")
@click.argument("tournament")
@click.pass_context
def robot_withdraw(ctx: click.Context, name: str, tournament: str) -> None:
    """As 'tournament withdraw' for a robot, which has no password to give: the clock never
    forfeits a robot, so one that cannot play on held its tournament up for ever."""
    req = request(ctx)
    with _sessions(ctx)() as session, session.begin():
        user, entered = _robot(session, name), _tournament(session, tournament)
        try:
            left = withdrawals.withdraw(session, entered, user, req.now)
        except tournaments.TournamentError as exc:
            raise Refused(str(exc)) from None
        for board in left.ended:  # once their mails are queued: the next round comes after
            moves.follow_up(session, board, req.now)
        body = _text(left.notes) + "\n" + tournament_text.standings_text(entered)
    answer(ctx, subjects.tournament(entered.name, "withdrawn"), body)

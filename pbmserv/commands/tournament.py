"""The ``tournament`` commands, the same by mail and from a shell.

Players: ``join``, ``withdraw`` (with userid and password), ``standings``, ``pairings``,
``list``.  Administrators: ``create``, ``start`` and ``cancel``: from the shell (the local
operator) with no credentials, by mail with the userid and password of a user named in
``Settings.admins``::

    tournament create NAME [USERID PASSWORD] --game=G [-param[=v]] --format=F [--rounds=N] [--double]
    tournament start NAME [USERID PASSWORD]
    tournament cancel NAME [USERID PASSWORD]
"""

from __future__ import annotations

import click
from sqlalchemy import select
from sqlalchemy.orm import Session

from pbmserv.commands.common import admin, call_login, follow_up, text, whole_number
from pbmserv.commands.dispatch import Refused, answer
from pbmserv.commands.spec import Arg, Call, Command, Group, Kind
from pbmserv.domain import accounts, tournament_text, tournaments, withdrawals
from pbmserv.games import get_game
from pbmserv.games.base import ParamError, PlayersError
from pbmserv.render import subjects
from pbmserv.store.models import Tournament, User

SUBJECT = "Tournament"


def _refused(message: str, name: str = "") -> Refused:
    return Refused(message, subject=subjects.error(f"{SUBJECT} {name}".rstrip()))


def _admin(call: Call) -> str:
    return admin(call, refused=_refused)


def create(call: Call) -> None:
    req, ctx, usage, words = call.req, call.ctx, call.usage, call.args["options"]
    params: list[str] = []
    options: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--"):
            key, sep, value = word[2:].partition("=")
            key = key.lower()
            if key == "double":
                value = "yes"
            elif key in ("game", "format", "rounds"):
                if not sep:
                    if i + 1 >= len(words):
                        raise click.UsageError(f"--{key} needs a value; usage: {usage}")
                    i += 1
                    value = words[i]
            else:
                raise click.UsageError(f"unknown option '{word}'; usage: {usage}")
            if key in options:  # which one was meant? never silently the last
                raise click.UsageError(f"--{key} is given more than once; usage: {usage}")
            options[key] = value
        else:
            params.append(word)
        i += 1
    if "game" not in options or "format" not in options:
        raise click.UsageError(f"--game and --format are required; usage: {usage}")
    by = _admin(call)
    name = call.args["name"].lower()
    try:
        game = get_game(options["game"])
    except KeyError:
        raise _refused(f"there is no game '{options['game']}'") from None
    try:
        values = game.parse_params(params)
        rounds = whole_number(options["rounds"]) if "rounds" in options else None
    except ParamError as exc:
        raise _refused(str(exc)) from None
    if "rounds" in options and rounds is None:
        raise _refused(f"--rounds needs a whole number of {tournaments.ROUNDS_TAKEN}")
    with req.sessions() as session, session.begin():
        try:
            tournament = tournaments.create(
                session,
                name,
                game.name,
                values,
                options["format"].lower(),
                rounds,
                "double" in options,
                by,
                req.now,
            )
        except (tournaments.TournamentError, PlayersError) as exc:
            raise _refused(str(exc), name) from None
        body = tournament_text.standings_text(tournament)
        body += f"\nJoin with: tournament join {tournament.name} USERID PASSWORD\n"
    answer(ctx, subjects.tournament(name, "created"), body)


def start(call: Call) -> None:
    req, ctx = call.req, call.ctx
    _admin(call)
    with req.sessions() as session, session.begin():
        tournament = _find(session, call.args["name"])
        try:
            notes = tournaments.start(session, tournament, req.now)
        except tournaments.TournamentError as exc:
            raise _refused(str(exc), tournament.name) from None
        body = tournament_text.pairings_text(tournament, [tournament.current_round], notes)
    answer(ctx, subjects.ROUND(name=tournament.name, count=1), body)


def cancel(call: Call) -> None:
    req, ctx = call.req, call.ctx
    who = _admin(call)
    said = (who, req.comment.strip()) if req.comment.strip() else None  # (the reason, by mail)
    with req.sessions() as session, session.begin():
        tournament = _find(session, call.args["name"])
        name, heading = tournament.name, tournament_text.describe(tournament)
        try:
            told = tournaments.cancel(session, tournament, req.now, req.sender, said)
        except tournaments.TournamentError as exc:
            raise _refused(str(exc), name) from None
    players = f"A mail tells its players: {', '.join(told)}." if told else "Nobody had joined."
    body = text([heading, f"It is cancelled and removed; its name is free again. {players}"])
    answer(ctx, subjects.tournament(name, "cancelled"), body)


def join(call: Call) -> None:
    req, ctx = call.req, call.ctx
    name, user_id = call.args["name"], call_login(call)
    with req.sessions() as session, session.begin():
        tournament = _find(session, name)
        user = session.get(User, user_id)
        assert user is not None
        if not req.trusted and not accounts.confirmed_addresses(user):
            # a player in a tournament is never removed: an account that never confirmed an
            # address would hold its userid for ever
            raise _refused(
                f"{user.userid} joins by mail once an address of the account is confirmed "
                "(with the code mailed to it)",
                tournament.name,
            )
        try:
            tournaments.join(session, tournament, user, req.now)
        except tournaments.TournamentError as exc:
            raise _refused(str(exc), tournament.name) from None
        body = f"{user.userid} has joined.\n\n" + tournament_text.standings_text(tournament)
    answer(ctx, subjects.tournament(tournament.name, "joined"), body)


def withdraw(call: Call) -> None:
    req, ctx = call.req, call.ctx
    name, user_id = call.args["name"], call_login(call)
    with req.sessions() as session, session.begin():
        tournament = _find(session, name)
        user = session.get(User, user_id)
        assert user is not None
        try:
            left = withdrawals.withdraw(session, tournament, user, req.now, req.comment)
        except tournaments.TournamentError as exc:
            raise _refused(str(exc), tournament.name) from None
        body = text(left.notes) + "\n" + tournament_text.standings_text(tournament)
        for board in left.ended:  # (by mail, after the answer: the next round comes after)
            follow_up(call, session, board)
    answer(ctx, subjects.tournament(tournament.name, "withdrawn"), body)


def standings(call: Call) -> None:
    req, ctx = call.req, call.ctx
    with req.sessions() as session:
        tournament = _find(session, call.args["name"])
        body = tournament_text.standings_text(tournament)
    answer(ctx, subjects.tournament(tournament.name, "standings"), body)


def pairings(call: Call) -> None:
    req, ctx, usage = call.req, call.ctx, call.usage
    with req.sessions() as session:
        tournament = _find(session, call.args["name"])
        which = (call.args.get("round") or "").lower()
        if which == "all":
            rounds = list(range(1, tournament.current_round + 1))
        elif which:
            round_number = whole_number(which)
            if round_number is None:
                raise click.UsageError(f"'{which}' is not a round number; usage: {usage}")
            try:
                tournaments.check_round(tournament, round_number)
            except tournaments.TournamentError as exc:
                raise _refused(str(exc), tournament.name) from None
            rounds = [round_number]
        else:
            rounds = [tournament.current_round] if tournament.current_round else []
        body = tournament_text.pairings_text(tournament, rounds)
    answer(ctx, subjects.tournament(tournament.name, "pairings"), body)


def _players(count: int) -> str:
    return f"{count} player{'' if count == 1 else 's'}"


def list_tournaments(call: Call) -> None:
    req, ctx = call.req, call.ctx
    with req.sessions() as session:
        rows = list(session.scalars(select(Tournament).order_by(Tournament.id)))
        lines = [
            f"{tournament_text.describe(t)}: {t.status}, {_players(len(t.players))}" for t in rows
        ] or ["There are no tournaments."]
    answer(ctx, subjects.TOURNAMENTS(), "\n".join(lines) + "\n")


def _find(session: Session, name: str) -> Tournament:
    try:
        return tournaments.find(session, name)
    except tournaments.TournamentError as exc:
        raise _refused(str(exc)) from None


NAME = Arg("name", Kind.TEXT)
ADMIN = (
    Arg("userid", Kind.USERID, optional=True, metavar="[USERID"),
    Arg("password", Kind.PASSWORD, optional=True, metavar="PASSWORD]"),
)
PLAYER = (NAME, Arg("userid", Kind.USERID), Arg("password", Kind.PASSWORD))

CREATE_OPTIONS = (
    ("--game=G", "the game played (two-player games only)"),
    ("-PARAM[=V]", "the game's parameters, as in its challenge"),
    ("--format=F", "roundrobin, swiss or knockout"),
    ("--rounds=N", f"Swiss only: {tournaments.ROUNDS_TAKEN} (default: log2 of the players)"),
    ("--double", "round robin only: every pairing plays twice, each side once"),
)

GROUP = Group(
    "tournament",
    "Tournaments: round robin, Swiss and knockout, two-player games only.",
    (
        Command(
            "create",
            create,
            "Create a tournament (administrators).",
            (
                NAME,
                *ADMIN,
                Arg(
                    "options",
                    Kind.OPTIONS,
                    metavar="--game=G [-PARAM] --format=F [--rounds=N] [--double]",
                    takes_value=("game", "format", "rounds"),
                    meanings=CREATE_OPTIONS,
                ),
            ),
        ),
        Command("start", start, "Seed the players and pair round 1 (admins).", (NAME, *ADMIN)),
        Command(
            "cancel",
            cancel,
            "Remove a tournament that has not started (admins).",
            (NAME, *ADMIN),
            comment=True,
        ),
        Command("join", join, "Enter a tournament before it starts.", PLAYER),
        Command(
            "withdraw", withdraw, "Leave; your running games end as losses.", PLAYER, comment=True
        ),
        Command(
            "standings",
            standings,
            "Scores and tie-breaks (a knockout: the round each player went out in).",
            (NAME,),
            aliases=("stand",),
        ),
        Command(
            "pairings",
            pairings,
            "The boards of a round.",
            (NAME, Arg("round", Kind.TEXT, optional=True, metavar="[ROUND|all]")),
            aliases=("pair",),
        ),
        Command("list", list_tournaments, "Every tournament and its state."),
    ),
)

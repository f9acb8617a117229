"""The ``tournament`` commands, the same by mail and from a shell.

Players: ``join``, ``withdraw`` (with userid and password), ``standings``, ``pairings``,
``list``.  Administrators: ``create`` and ``start``: from the shell (the local operator) with no
credentials, by mail with the userid and password of a user named in ``Settings.admins``::

    tournament create NAME [USERID PASSWORD] --game=G [-param[=v]] --format=F [--rounds=N] [--double]
    tournament start NAME [USERID PASSWORD]
"""

from __future__ import annotations

from collections.abc import Callable

import click
from sqlalchemy import select

from pbmserv.commands.common import RAW, login, need, raw_args, take_password
from pbmserv.commands.dispatch import Refused, Request, answer, request
from pbmserv.domain import accounts, tournaments
from pbmserv.games import get_game
from pbmserv.games.base import ParamError, PlayersError
from pbmserv.store.models import Tournament, User

SUBJECT = "Tournament"


def _refused(message: str, name: str = "") -> Refused:
    return Refused(message, subject=f"{SUBJECT} {name} error".replace("  ", " "))


def _admin(req: Request, positional: list[str], usage: str) -> str:
    """Who acts as administrator: the shell operator, or an authenticated admin by mail."""
    if req.trusted and len(positional) == 1:
        return "operator"
    need(positional, 2, usage)
    userid = positional[1]
    password = take_password(req, positional, 2, userid)
    login(req, userid, password)
    admins = {accounts.normalise_userid(a) for a in req.settings.admins}
    if accounts.normalise_userid(userid) not in admins:
        raise _refused(f"only an administrator may do this, and {userid} is not one")
    return accounts.normalise_userid(userid)


def _player(req: Request, words: list[str], usage: str) -> tuple[str, int]:
    need(words, 2, usage)
    name, userid = words[0], words[1]
    password = take_password(req, words, 2, userid)
    return name, login(req, userid, password)


def create(req: Request, ctx: click.Context, words: list[str]) -> None:
    usage = (
        "tournament create NAME [USERID PASSWORD] --game=GAME [-PARAM[=V]] "
        "--format=roundrobin|swiss|knockout [--rounds=N] [--double]"
    )
    positional: list[str] = []
    params: list[str] = []
    options: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--"):
            key, sep, value = word[2:].partition("=")
            key = key.lower()
            if key == "double":
                options[key] = "yes"
            elif key in ("game", "format", "rounds"):
                if not sep:
                    if i + 1 >= len(words):
                        raise click.UsageError(f"--{key} needs a value; usage: {usage}")
                    i += 1
                    value = words[i]
                options[key] = value
            else:
                raise click.UsageError(f"unknown option '{word}'; usage: {usage}")
        elif word.startswith("-") and len(word) > 1:
            params.append(word)
        else:
            positional.append(word)
        i += 1
    need(positional, 1, usage)
    if "game" not in options or "format" not in options:
        raise click.UsageError(f"--game and --format are required; usage: {usage}")
    by = _admin(req, positional, usage)
    name = positional[0].lower()
    try:
        game = get_game(options["game"])
    except KeyError:
        raise _refused(f"there is no game '{options['game']}'") from None
    try:
        values = game.parse_params(params)
        rounds = int(options["rounds"]) if "rounds" in options else None
    except ParamError as exc:
        raise _refused(str(exc)) from None
    except ValueError:
        raise _refused("--rounds needs a whole number") from None
    if rounds is not None and rounds < 1:
        raise _refused("--rounds needs at least 1")
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
        body = tournaments.standings_text(tournament)
        body += f"\nJoin with: tournament join {tournament.name} USERID PASSWORD\n"
    answer(ctx, f"{SUBJECT} {name} created", body)


def start(req: Request, ctx: click.Context, words: list[str]) -> None:
    usage = "tournament start NAME [USERID PASSWORD]"
    need(words, 1, usage)
    _admin(req, words, usage)
    with req.sessions() as session, session.begin():
        tournament = _find(session, words[0])
        try:
            tournaments.start(session, tournament, req.now)
        except tournaments.TournamentError as exc:
            raise _refused(str(exc), tournament.name) from None
        body = tournaments.pairings_text(tournament, [tournament.current_round])
    answer(ctx, f"{SUBJECT} {tournament.name} round 1", body)


def join(req: Request, ctx: click.Context, words: list[str]) -> None:
    name, user_id = _player(req, words, "tournament join NAME USERID PASSWORD")
    with req.sessions() as session, session.begin():
        tournament = _find(session, name)
        user = session.get(User, user_id)
        assert user is not None
        try:
            tournaments.join(session, tournament, user, req.now)
        except tournaments.TournamentError as exc:
            raise _refused(str(exc), tournament.name) from None
        body = f"{user.userid} has joined.\n\n" + tournaments.standings_text(tournament)
    answer(ctx, f"{SUBJECT} {tournament.name} joined", body)


def withdraw(req: Request, ctx: click.Context, words: list[str]) -> None:
    name, user_id = _player(req, words, "tournament withdraw NAME USERID PASSWORD")
    with req.sessions() as session, session.begin():
        tournament = _find(session, name)
        user = session.get(User, user_id)
        assert user is not None
        try:
            notes = tournaments.withdraw(session, tournament, user, req.now)
        except tournaments.TournamentError as exc:
            raise _refused(str(exc), tournament.name) from None
        body = "\n".join(notes) + "\n\n" + tournaments.standings_text(tournament)
    answer(ctx, f"{SUBJECT} {tournament.name} withdrawn", body)


def standings(req: Request, ctx: click.Context, words: list[str]) -> None:
    need(words, 1, "tournament standings NAME")
    with req.sessions() as session:
        tournament = _find(session, words[0])
        body = tournaments.standings_text(tournament)
    answer(ctx, f"{SUBJECT} {tournament.name} standings", body)


def pairings(req: Request, ctx: click.Context, words: list[str]) -> None:
    usage = "tournament pairings NAME [ROUND|all]"
    need(words, 1, usage)
    with req.sessions() as session:
        tournament = _find(session, words[0])
        which = words[1].lower() if len(words) > 1 else ""
        if which == "all":
            rounds = list(range(1, tournament.current_round + 1))
        elif which:
            if not which.isdigit():
                raise click.UsageError(f"'{which}' is not a round number; usage: {usage}")
            rounds = [int(which)]
        else:
            rounds = [tournament.current_round] if tournament.current_round else []
        body = tournaments.pairings_text(tournament, rounds)
    answer(ctx, f"{SUBJECT} {tournament.name} pairings", body)


def list_tournaments(req: Request, ctx: click.Context, words: list[str]) -> None:
    with req.sessions() as session:
        rows = list(session.scalars(select(Tournament).order_by(Tournament.id)))
        lines = [
            f"{tournaments.describe(t)}: {t.status}, {len(t.players)} players" for t in rows
        ] or ["There are no tournaments."]
    answer(ctx, "Tournaments", "\n".join(lines) + "\n")


def _find(session, name: str) -> Tournament:  # type: ignore[no-untyped-def]
    try:
        return tournaments.find(session, name)
    except tournaments.TournamentError as exc:
        raise _refused(str(exc)) from None


COMMANDS: list[tuple[str, Callable[..., None], str, str]] = [
    (
        "create",
        create,
        "NAME [USERID PASSWORD] --game=G [-PARAM] --format=F [--rounds=N] [--double]",
        "Create a tournament (administrators).",
    ),
    ("start", start, "NAME [USERID PASSWORD]", "Seed the players and pair round 1 (admins)."),
    ("join", join, "NAME USERID PASSWORD", "Enter a tournament before it starts."),
    ("withdraw", withdraw, "NAME USERID PASSWORD", "Leave; running games are resigned."),
    ("standings", standings, "NAME", "Score, Buchholz, Sonneborn-Berger."),
    ("pairings", pairings, "NAME [ROUND|all]", "The boards of a round."),
    ("list", list_tournaments, "", "Every tournament and its state."),
]


def tournament_group(group_class: type[click.Group]) -> click.Group:
    group = group_class(
        "tournament",
        help="Tournaments: round robin, Swiss and knockout, two-player games only.",
        aliases={"stand": "standings", "pair": "pairings"},  # type: ignore[call-arg]
    )
    for name, fn, metavar, help_text in COMMANDS:
        group.add_command(_make(name, fn, metavar, help_text))
    return group


def _make(name: str, fn: Callable[..., None], metavar: str, help_text: str) -> click.Command:
    @click.pass_context
    def callback(ctx: click.Context, args: tuple[str, ...]) -> None:
        fn(request(ctx), ctx, list(args))

    return click.Command(
        name, callback=callback, params=[raw_args(metavar)], context_settings=RAW, help=help_text
    )

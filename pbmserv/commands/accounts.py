"""Account commands: signup, change password/address, signoff; and the server-wide list/help."""

from __future__ import annotations

from collections.abc import Callable

import click
from sqlalchemy import select

from pbmserv.commands.common import login, need, raw_command, take_password
from pbmserv.commands.dispatch import Refused, Request, answer, with_request
from pbmserv.domain import accounts
from pbmserv.games import all_games, get_game
from pbmserv.render.templates import render
from pbmserv.store.models import Board, BoardStatus, Seat, User


def _check_new_password(password: str) -> None:
    if len(password) < accounts.MIN_PASSWORD:
        raise Refused(f"a password needs at least {accounts.MIN_PASSWORD} characters")


def _addresses(req: Request, words: list[str]) -> list[str]:
    given = words or ([req.sender] if req.sender else [])
    problems = [p for p in (accounts.check_address(a) for a in given) if p]
    if problems:
        raise Refused("; ".join(problems))
    return [a.lower() for a in given]


@with_request
def signup(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """signup USERID PASSWORD [ADDRESS...]: register a new player.

    By mail the sender's address is registered when no address is given.
    """
    words = list(args)
    need(words, 1, "signup USERID PASSWORD [ADDRESS...]")
    userid = accounts.normalise_userid(words.pop(0))
    password = take_password(req, words, 0, userid)
    problem = accounts.check_userid(userid)
    if problem:
        raise Refused(problem)
    _check_new_password(password)
    addresses = _addresses(req, words)
    with req.sessions() as session, session.begin():
        if accounts.find_user(session, userid):
            raise Refused(f"the userid '{userid}' is taken; choose another")
        accounts.create_user(session, req.settings, userid, password, addresses, req.now)
    lines = [f"Welcome, {userid}: you are signed up."]
    lines += [f"Mail goes to {a}." for a in addresses] or ["No mail address is registered."]
    lines += ["", "Send 'help' for the list of commands and games."]
    answer(ctx, "pbmserv signup", render("mail/text.txt.j2", lines=lines))


@with_request
def change_password(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """change password USERID OLD NEW: set a new password."""
    words = list(args)
    need(words, 1, "change password USERID OLD NEW")
    userid = words.pop(0)
    old = take_password(req, words, 0, userid)
    need(words, 1, "change password USERID OLD NEW")
    new = words.pop(0)
    _check_new_password(new)
    user_id = login(req, userid, old)
    with req.sessions() as session, session.begin():
        user = session.get(User, user_id)
        assert user is not None
        accounts.set_password(user, req.settings, new)
    answer(
        ctx,
        "pbmserv change password",
        f"The password of {accounts.normalise_userid(userid)} is changed.\n",
    )


@with_request
def change_address(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """change address USERID PASSWORD [ADDRESS...]: replace the registered mail addresses."""
    words = list(args)
    need(words, 1, "change address USERID PASSWORD [ADDRESS...]")
    userid = words.pop(0)
    password = take_password(req, words, 0, userid)
    addresses = _addresses(req, words)
    user_id = login(req, userid, password)
    with req.sessions() as session, session.begin():
        user = session.get(User, user_id)
        assert user is not None
        user.addresses.clear()
        session.flush()
        user.addresses.extend(accounts.Address(address=a) for a in addresses)
    lines = [f"The addresses of {accounts.normalise_userid(userid)} are now:"] + [
        f"  {a}" for a in addresses
    ]
    answer(ctx, "pbmserv change address", render("mail/text.txt.j2", lines=lines))


@with_request
def signoff(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """signoff USERID PASSWORD: close an account (no active games allowed)."""
    words = list(args)
    need(words, 1, "signoff USERID PASSWORD")
    userid = words.pop(0)
    password = take_password(req, words, 0, userid)
    user_id = login(req, userid, password)
    with req.sessions() as session, session.begin():
        active = session.scalars(
            select(Board)
            .join(Seat)
            .where(Seat.user_id == user_id, Board.status == BoardStatus.active)
        ).all()
        if active:
            names = ", ".join(f"{get_game(b.game).display_name} {b.number}" for b in active)
            raise Refused(f"finish or resign your active games first: {names}")
        user = session.get(User, user_id)
        assert user is not None
        user.addresses.clear()
        user.password_hash = "!closed"  # no password verifies; the userid stays reserved
        user.accepts_challenges = False
    answer(ctx, "pbmserv signoff", f"The account {user.userid} is closed. Goodbye.\n")


@with_request
def list_games(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """list [GAME...]: the games this server runs, or the boards of the games named."""
    if args:
        from pbmserv.commands.games import games_table

        for name in args:
            try:
                game = get_game(name)
            except KeyError as exc:
                raise Refused(str(exc.args[0])) from None
            answer(ctx, f"List of {game.display_name} games", games_table(req, game, []))
        return
    lines = ["Games on this server:", ""]
    for game in all_games():
        players = "-".join(map(str, (game.min_players, game.max_players)))
        if game.min_players == game.max_players:
            players = str(game.min_players)
        lines.append(f"  {game.name:<8} {players:>4} players  {game.summary}")
    lines += ["", "Send '<game> help' for the rules and commands of one game."]
    answer(ctx, "List of games", render("mail/text.txt.j2", lines=lines))


@with_request
def help_command(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """help [GAME]: the server's help, or one game's rules and commands."""
    if args:
        try:
            game = get_game(args[0])
        except KeyError:
            pass
        else:
            answer(ctx, f"{game.display_name} help", game_help(game.name))
            return
    games = ", ".join(g.name for g in all_games())
    answer(ctx, "pbmserv help", render("help/pbmserv.txt", games=games))


def game_help(name: str) -> str:
    return render(f"help/{name}.txt") + "\n" + render("help/commands.txt", game=name)


def register_account_commands(group: click.Group) -> None:
    def add(name: str, fn: Callable[..., None], metavar: str) -> click.Command:
        return raw_command(name, fn, metavar, (fn.__doc__ or "").strip())

    group.add_command(add("signup", signup, "USERID PASSWORD [ADDRESS...]"))
    group.add_command(add("signoff", signoff, "USERID PASSWORD"))
    group.add_command(add("list", list_games, "[GAME...]"))
    group.add_command(add("help", help_command, "[GAME]"))
    change = click.Group("change", help="Change the password or the addresses of an account.")
    change.add_command(add("password", change_password, "USERID OLD NEW"))
    change.add_command(add("address", change_address, "USERID PASSWORD [ADDRESS...]"))
    group.add_command(change)

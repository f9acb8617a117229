"""Account commands: signup, change password/address, signoff; and the server-wide list/help."""

from __future__ import annotations

import click
from sqlalchemy import select

from pbmserv.commands.common import at_most, call_login, login
from pbmserv.commands.common import text as _text
from pbmserv.commands.dispatch import Refused, Request, answer
from pbmserv.commands.listing import games_table
from pbmserv.commands.spec import Arg, Call, Command, Group, Kind
from pbmserv.domain import accounts, confirmation, tokens, withdrawals
from pbmserv.domain.addresses import listed, shown
from pbmserv.games import all_games, get_game
from pbmserv.render import subjects
from pbmserv.render.templates import hint
from pbmserv.store.db import sqlite_file
from pbmserv.store.models import Board, BoardStatus, Robot, Seat, User
from pbmserv.store.outage import missing_database, unavailable


def _check_new_password(password: str) -> None:
    if problem := accounts.new_password_problem(password):
        raise Refused(problem)


def _addresses(req: Request, words: list[str]) -> list[str]:
    """The addresses a signup or change address line gives (by mail: the sender's when none).

    By mail they count against ``max_signup_addresses`` together with those of the mail's
    earlier lines (counted by :func:`_given` once a line is done): the cap is per mail, or ten
    lines of one mail would have us mail thirty strangers.
    """
    given = words or ([req.sender] if req.sender else [])
    cap = req.settings.max_signup_addresses
    if not req.trusted and len(given) > cap:  # (before any of them is read)
        raise Refused(f"give at most {cap} addresses by mail")
    problems = [p for p in (accounts.check_address(a) for a in given) if p]
    if problems:
        raise Refused("; ".join(problems))
    parsed = [accounts.parse_address(a) for a in given]
    addresses = list(dict.fromkeys(a for a in parsed if a))
    earlier = req.mail.addresses
    if not req.trusted and len(earlier | set(addresses)) > cap:
        raise Refused(
            f"give at most {cap} addresses by mail, in all the signup and change address "
            f"lines of one mail together; this mail gave {len(earlier)} already (send the "
            "rest in another mail)"
        )
    return addresses


def _given(req: Request, addresses: list[str]) -> None:
    """Count the addresses of a line that was done against the mail's cap."""
    req.mail.addresses.update(addresses)


def _capped(addresses: list[str]) -> str:
    return (
        f"No mail could be sent to {listed(addresses)} today: an address gets only so many "
        "mails from us a day (UTC)"
    )


def _confirmation_answer(
    req: Request, ctx: click.Context, done: confirmation.Confirmations, lines: list[str]
) -> None:
    """Answer a mail that gave new addresses: the sender's own confirmation mail when the
    sender is one of them (so it gets one mail, not two), else a note.

    Only a code of the same account holds a new one back, so "still waiting" tells the
    account's holder (who gave its password to change the addresses; a new account has no
    earlier code) about his own earlier request, never that someone else signed up with the
    address.  A capped address is said to be one: the truth, and no news about accounts."""
    if done.waiting:
        lines += [
            "",
            "A confirmation mail sent earlier to "
            + listed(done.waiting)
            + " is still waiting; nothing new was sent there.",
        ]
    if done.capped:
        lines += ["", _capped(done.capped) + "; try again tomorrow with 'change address'."]
    if done.own is not None:
        req.mail.coded = True
        answer(ctx, done.own.subject, done.own.body + "\n" + _text(lines))
    else:
        answer(ctx, subjects.server("confirmation"), _text(lines))


def signup(call: Call) -> None:
    """Register a new player; by mail the sender's address when no address is given.  By mail,
    an account none of whose addresses can be mailed a code today is not made: it would hold
    the userid for days with no way to confirm it."""
    req, ctx = call.req, call.ctx
    userid = accounts.normalise_userid(call.args["userid"])
    password = call.args["password"]
    problem = accounts.check_userid(userid)
    if problem:
        raise Refused(problem)
    if not req.trusted and accounts.is_admin(req.settings, userid):  # rights come with it
        raise Refused(
            f"the userid '{userid}' is reserved: the operator signs it up; choose another"
        )
    _check_new_password(password)
    addresses = _addresses(req, call.args["addresses"])
    with req.sessions() as session, session.begin():
        if accounts.find_user(session, userid):
            raise Refused(f"the userid '{userid}' is taken; choose another")
        user = accounts.create_user(
            session, req.settings, userid, password, addresses, req.now, confirmed=req.trusted
        )
        if not req.trusted:
            done = confirmation.mail_confirmations(
                session,
                req.settings,
                user,
                addresses,
                req.now,
                sender=req.sender,
                by_reply=not req.mail.coded,
            )
            if len(done.capped) == len(addresses):  # rolls the account back
                raise Refused(_capped(done.capped) + "; sign up again tomorrow")
    _given(req, addresses)
    if not req.trusted:
        lines = [
            f"The player {userid} is signed up. Each address given gets one mail with a code "
            "and nothing else until it is confirmed. Until one is, nobody can challenge "
            f"{userid}, and without one the account is removed after "
            f"{req.settings.unconfirmed_account_days} days.",
            "",
            "Addresses: " + listed(addresses),
        ]
        _confirmation_answer(req, ctx, done, lines)
        return
    lines = [f"Welcome, {userid}: you are signed up."]
    lines += [f"Mail goes to {shown(a)}." for a in addresses] or ["No mail address is registered."]
    lines += ["", hint("help", req.channel).rstrip("\n")]
    answer(ctx, subjects.server("signup"), _text(lines))


def change_password(call: Call) -> None:
    req, ctx = call.req, call.ctx
    userid, old, new = call.args["userid"], call.args["password"], call.args["new"]
    _check_new_password(new)
    user_id = login(req, userid, old)
    with req.sessions() as session, session.begin():
        user = session.get(User, user_id)
        assert user is not None
        accounts.set_password(user, req.settings, new)
    answer(
        ctx,
        subjects.server("change password"),
        f"The password of {accounts.normalise_userid(userid)} is changed.\n",
    )


def change_address(call: Call) -> None:
    req, ctx = call.req, call.ctx
    userid = call.args["userid"]
    addresses = _addresses(req, call.args["addresses"])
    if not addresses:  # the shell has no sender: an empty line would remove every address
        raise click.UsageError(f"give the new addresses; usage: {call.usage}")
    user_id = call_login(call)
    done = confirmation.Confirmations()
    with req.sessions() as session, session.begin():
        user = session.get(User, user_id)
        assert user is not None
        known = set(accounts.confirmed_addresses(user))
        new = [a for a in addresses if not (req.trusted or a in known)]
        # by mail, a new address replaces the old ones only once it is confirmed: until then
        # mail still goes to the confirmed addresses
        kept = [a for a in known if a not in addresses] if new else []
        user.addresses.clear()
        session.flush()
        user.addresses.extend(
            accounts.Address(address=a, confirmed=a not in new) for a in [*addresses, *kept]
        )
        session.flush()
        confirmation.restate(session, user, addresses, req.now)
        if new:
            done = confirmation.mail_confirmations(
                session,
                req.settings,
                user,
                new,
                req.now,
                sender=req.sender,
                replace=addresses,
                by_reply=not req.mail.coded,
            )
            if done.refused:  # rolls the change back
                raise Refused(
                    f"{listed(done.refused)} refused the mail of {user.userid} (with "
                    "'refuse CODE'): nothing is sent there for this account; give another address"
                )
    _given(req, addresses)
    name = accounts.normalise_userid(userid)
    if not new:
        lines = [f"The addresses of {name} are now:", *[f"  {shown(a)}" for a in addresses]]
        answer(ctx, subjects.server("change address"), _text(lines))
        return
    lines = [
        f"The addresses of {name} will be: " + listed(addresses),
        "Waiting for confirmation: " + listed(new),
    ]
    if kept:
        lines.append("Until one is confirmed, mail still goes to: " + listed(kept))
    _confirmation_answer(req, ctx, done, lines)


def signoff(call: Call) -> None:
    req, ctx = call.req, call.ctx
    user_id = call_login(call)
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
        left = withdrawals.leave_all(session, user, req.now)
        user.addresses.clear()
        user.password_hash = User.CLOSED_MARK + "closed"  # no password verifies; userid kept
        tokens.withdraw_all(session, user_id)  # a reset code mailed before would reopen it
        user.accepts_challenges = False
    lines = [*left, f"The account {user.userid} is closed. Goodbye."]
    answer(ctx, subjects.server("signoff"), _text(lines))


def list_games(call: Call) -> None:
    ctx, args = call.ctx, call.args["games"]
    at_most(args, "games")
    if args:
        try:
            named = list(dict.fromkeys(get_game(name) for name in args))
        except KeyError as exc:
            raise Refused(str(exc.args[0])) from None
        # one answer, each table under its game's name: by mail the answers of one line
        # share a mail, and an unlabelled table read as the last game's
        parts = [f"{g.display_name} games:\n\n" + games_table(call, g, []) for g in named]
        one = len(named) == 1
        subject = subjects.GAME_LIST(game=named[0].display_name) if one else subjects.GAMES_LIST()
        answer(ctx, subject, "\n".join(parts))
        return
    lines = ["Games on this server:", ""]
    robots, unread = _robots(call.req)
    for game in all_games():
        players = "-".join(map(str, (game.min_players, game.max_players)))
        if game.min_players == game.max_players:
            players = str(game.min_players)
        lines.append(f"  {game.name:<8} {players:>4} players")
        lines.append(f"      {game.summary}")  # (wrapped, indented alike)
        if robots.get(game.name):
            lines.append(f"      robots to challenge: {', '.join(robots[game.name])}")
    if unread:
        lines += ["", f"(The robots are not listed: {unread}.)"]
    lines += ["", hint("game help", call.req.channel).rstrip("\n")]
    answer(ctx, subjects.GAMES_LIST(), _text(lines))


def _robots(req: Request) -> tuple[dict[str, list[str]], str]:
    """Each game's robots, 'polibot (normal)': a player by mail had no way to find them (only
    the operator's 'pbmserv robot list' named them).  When the store cannot be read, none,
    and why: the list of games needs no store, and is still given."""
    found: dict[str, list[str]] = {}
    path = sqlite_file(req.settings.url)
    if path is not None and not path.exists():  # (no store: no robots, and none is made)
        return found, ""
    try:
        with req.sessions() as session:
            rows = session.execute(
                select(Robot.game, User.userid, Robot.level)
                .join(User, User.id == Robot.user_id)
                .order_by(User.userid)
            ).all()
    except Exception as exc:
        if missing_database(exc):  # (no outage: "cannot be read now" had it waited for)
            return found, (
                "the database that database_url names does not exist; create it "
                "(deploy/README.md), then run `pbmserv db upgrade`"
            )
        if unavailable(exc):
            return found, "the store cannot be read now"
        raise
    for game, userid, level in rows:
        found.setdefault(game, []).append(f"{userid} ({level})")
    return found, ""


USERID = Arg("userid", Kind.USERID)
PASSWORD = Arg("password", Kind.PASSWORD)
ADDRESSES = Arg("addresses", Kind.TEXT, many=True, metavar="[ADDRESS...]")

COMMANDS: tuple[Command, ...] = (
    Command(
        "signup",
        signup,
        "Register a new player (by mail: the sender's address when none is given).",
        (USERID, PASSWORD, ADDRESSES),
    ),
    Command(
        "signoff",
        signoff,
        "Close an account (no active games allowed).",
        (USERID, PASSWORD),
    ),
    Command(
        "list",
        list_games,
        "The games this server runs, or the boards of the games named.",
        (Arg("games", Kind.TEXT, many=True, metavar="[GAME...]"),),
        plain_word=True,
    ),
)

CHANGE = Group(
    "change",
    "Change the password or the addresses of an account.",
    (
        Command(
            "password",
            change_password,
            "Set a new password.",
            (
                USERID,
                Arg("password", Kind.PASSWORD, metavar="OLD"),
                Arg("new", Kind.PASSWORD, metavar="NEW", from_shell=False),
            ),
        ),
        Command(
            "address",
            change_address,
            "Replace the registered mail addresses.",
            (USERID, PASSWORD, ADDRESSES),
        ),
    ),
)

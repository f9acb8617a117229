"""The commands behind the mailed codes: ``confirm CODE``, ``password reset`` and
``password new``.

Codes come from :mod:`pbmserv.confirmation` (address and challenge confirmation, password
reset) and are checked by :mod:`pbmserv.tokens` (hashed, expiring, one use).
"""

from __future__ import annotations

from collections.abc import Callable

import click
from sqlalchemy import delete

from pbmserv import accounts, confirmation, tokens
from pbmserv.commands.common import need, raw_command
from pbmserv.dispatch import Refused, Request, answer, with_request
from pbmserv.games import get_game
from pbmserv.store.models import AuthFailure, TokenKind, User


@with_request
def confirm(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """confirm CODE: confirm an address or a challenge with the code mailed to you.

    Replying to the confirmation mail (keeping its subject) does the same.
    """
    words = list(args)
    need(words, 1, "confirm CODE")
    challenge: tuple[str, list[str], int] | None = None
    with req.sessions() as session, session.begin():
        try:
            token = tokens.redeem(session, words[0], req.now)
        except tokens.TokenError as exc:
            raise Refused(f"cannot confirm: {exc}") from None
        user = session.get(User, token.user_id)
        assert user is not None
        if token.kind is TokenKind.address:
            if confirmation.confirm_address(session, token) is None:
                raise Refused(f"{token.address} is no longer an address of {user.userid}")
            message = f"{token.address} is confirmed: mail for {user.userid} goes there now.\n"
        elif token.kind is TokenKind.challenge:
            if not req.trusted and not accounts.is_owner_address(user, req.sender):
                raise Refused(f"a challenge is confirmed from a confirmed address of {user.userid}")
            challenge = (token.payload["game"], list(token.payload["words"]), user.id)
        else:
            raise Refused(
                "this code resets a password: send 'password new USERID CODE NEWPASSWORD'"
            )
    if challenge is None:
        answer(ctx, "pbmserv confirm", message)
        return
    from pbmserv.commands.games import challenge as create_challenge

    game_name, challenge_words, user_id = challenge
    create_challenge(get_game(game_name), req, ctx, challenge_words, confirmed_by=user_id)


@with_request
def password_reset(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """password reset USERID: mail a code to the account's confirmed addresses."""
    words = list(args)
    need(words, 1, "password reset USERID")
    userid = accounts.normalise_userid(words[0])
    with req.sessions() as session, session.begin():
        user = accounts.find_user(session, userid)
        if user is not None and not user.password_hash.startswith("!"):
            confirmation.reset_mails(session, req.settings, user, req.now)
    answer(
        ctx,
        "pbmserv password reset",
        f"If {userid} has a confirmed address, a code has been mailed there (one code at a "
        f"time; it works once, for {req.settings.token_hours} hours). Then send\n"
        f"  password new {userid} CODE NEWPASSWORD\n",
    )


@with_request
def password_new(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """password new USERID CODE NEWPASSWORD: set a new password with a mailed code."""
    words = list(args)
    need(words, 3, "password new USERID CODE NEWPASSWORD")
    userid, code, new = accounts.normalise_userid(words[0]), words[1], words[2]
    if len(new) < accounts.MIN_PASSWORD:
        raise Refused(f"a password needs at least {accounts.MIN_PASSWORD} characters")
    with req.sessions() as session, session.begin():
        user = accounts.find_user(session, userid)
        try:
            token = tokens.redeem(session, code, req.now, TokenKind.reset)
        except tokens.TokenError as exc:
            raise Refused(f"cannot set the password: {exc}") from None
        if user is None or token.user_id != user.id:
            raise Refused("cannot set the password: this code is unknown")
        accounts.set_password(user, req.settings, new)
        session.execute(
            delete(AuthFailure).where(AuthFailure.key.in_([f"user:{userid}", f"owner:{userid}"]))
        )
    answer(ctx, "pbmserv password new", f"The password of {userid} is changed.\n")


def register_security_commands(group: click.Group) -> None:
    def add(name: str, fn: Callable[..., None], metavar: str) -> click.Command:
        return raw_command(name, fn, metavar, (fn.__doc__ or "").strip())

    group.add_command(add("confirm", confirm, "CODE"))
    password = click.Group("password", help="Reset a forgotten password by mail.")
    password.add_command(add("reset", password_reset, "USERID"))
    password.add_command(add("new", password_new, "USERID CODE NEWPASSWORD"))
    group.add_command(password)

"""The commands behind the mailed codes: ``confirm CODE``, ``password reset`` and
``password new``.

Codes come from :mod:`pbmserv.domain.confirmation` (address and challenge confirmation,
password reset) and are checked by :mod:`pbmserv.domain.tokens` (hashed, expiring, one use).
A code is declared as a password argument, so it is masked wherever a line is quoted.
"""

from __future__ import annotations

from sqlalchemy import delete

from pbmserv.commands.dispatch import Refused, answer
from pbmserv.commands.games import create_challenge
from pbmserv.commands.spec import Arg, Call, Command, Group, Kind
from pbmserv.domain import accounts, confirmation, tokens
from pbmserv.games import get_game
from pbmserv.render.templates import fill
from pbmserv.store.models import AuthFailure, TokenKind, User


def confirm(call: Call) -> None:
    """Confirm an address or a challenge with the code mailed for it."""
    req, ctx = call.req, call.ctx
    challenge: tuple[str, list[str], list[str], int] | None = None
    with req.sessions() as session, session.begin():
        try:
            token = tokens.redeem(session, call.args["code"], req.now)
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
            payload = token.payload
            challenge = (payload["game"], payload["players"], payload["options"], user.id)
        else:
            raise Refused(
                "this code resets a password: send 'password new USERID CODE NEWPASSWORD'"
            )
    if challenge is None:
        answer(ctx, "pbmserv confirm", message)
        return
    game, players, options, user_id = challenge
    create_challenge(get_game(game), req, ctx, players, options, confirmed_by=user_id)


def password_reset(call: Call) -> None:
    """Mail a code for a new password to the account's confirmed addresses.

    The answer is the same whether the account exists, has a confirmed address, got a new code
    or has one waiting (it goes to whoever asks); only a cap that stopped every mail is said,
    since saying "mailed" then would be false and the owner would wait for nothing."""
    req = call.req
    userid = accounts.normalise_userid(call.args["userid"])
    done = confirmation.Reset.nowhere
    with req.sessions() as session, session.begin():
        user = accounts.find_user(session, userid)
        if user is not None and not user.password_hash.startswith("!"):
            done = confirmation.reset_mails(session, req.settings, user, req.now)
    if done is confirmation.Reset.capped:
        raise Refused(
            f"no mail could be sent to the addresses of {userid} today: an address gets only "
            "so many mails from us a day (UTC); ask again tomorrow"
        )
    answer(
        call.ctx,
        "pbmserv password reset",
        fill(
            f"If {userid} has a confirmed address, a code has been mailed there (one code at "
            "a time: while a code mailed earlier works, no new one is sent; a code works once, "
            f"for {req.settings.token_hours} hours). Then send"
        )
        + f"\n  password new {userid} CODE NEWPASSWORD\n",
    )


def password_new(call: Call) -> None:
    """Set a new password with a code from 'password reset'."""
    req = call.req
    userid = accounts.normalise_userid(call.args["userid"])
    new = call.args["new"]
    if len(new) < accounts.MIN_PASSWORD:
        raise Refused(f"a password needs at least {accounts.MIN_PASSWORD} characters")
    with req.sessions() as session, session.begin():
        user = accounts.find_user(session, userid)
        try:
            token = tokens.redeem(session, call.args["code"], req.now, TokenKind.reset)
        except tokens.TokenError as exc:
            raise Refused(f"cannot set the password: {exc}") from None
        if user is None or token.user_id != user.id:
            raise Refused("cannot set the password: this code is unknown")
        accounts.set_password(user, req.settings, new)
        session.execute(
            delete(AuthFailure).where(AuthFailure.key.in_([f"user:{userid}", f"owner:{userid}"]))
        )
    answer(call.ctx, "pbmserv password new", f"The password of {userid} is changed.\n")


CODE = Arg("code", Kind.PASSWORD, from_shell=False)

COMMANDS: tuple[Command, ...] = (
    Command(
        "confirm",
        confirm,
        "Confirm an address or a challenge with the code mailed for it (or reply to that mail).",
        (CODE,),
    ),
)

PASSWORD = Group(
    "password",
    "Reset a forgotten password by mail.",
    (
        Command(
            "reset",
            password_reset,
            "Mail a code for a new password to the account's confirmed addresses.",
            (Arg("userid", Kind.USERID),),
        ),
        Command(
            "new",
            password_new,
            "Set a new password with the code (it works once).",
            (
                Arg("userid", Kind.USERID),
                CODE,
                Arg("new", Kind.PASSWORD, metavar="NEWPASSWORD", from_shell=False),
            ),
        ),
    ),
)

"""The commands behind the mailed codes: ``confirm CODE``, ``refuse CODE``, ``unlock CODE``,
``password reset`` and ``password new``.

Codes come from :mod:`pbmserv.domain.confirmation` (address and challenge confirmation,
password reset) and are checked by :mod:`pbmserv.domain.tokens` (hashed, expiring, one use).
A code is declared as a password argument, so it is masked wherever a line is quoted.

A reply to a code mail keeps ``confirm CODE`` in its Subject; it is a yes only when it says
nothing of its own, and a confirm line only when nothing follows its code ("Re: confirm
CODE - NO, STOP" is a complaint, wherever it is written).  Whoever got a code he never asked
for answers it too, and "I never signed up, STOP" once confirmed a forged sign-up.  Such a
reply confirms nothing and is told the two lines to send: ``refuse CODE`` and ``confirm CODE``
(a line of the body is a yes).
"""

from __future__ import annotations

from sqlalchemy import delete
from sqlalchemy.orm import Session

from pbmserv.commands.dispatch import Refused, Request, answer
from pbmserv.commands.games import create_challenge
from pbmserv.commands.spec import Arg, Call, Command, Group, Kind
from pbmserv.domain import accounts, confirmation, tokens
from pbmserv.domain.addresses import shown
from pbmserv.games import get_game
from pbmserv.render import subjects
from pbmserv.render.templates import fill, hint
from pbmserv.store.models import AuthFailure, Token, TokenKind, User

RESET_CODE = "this code resets a password: send 'password new USERID CODE NEWPASSWORD'"
UNLOCK_CODE = "this code unlocks the logins of a mail: put the line 'unlock CODE' in it"


def _usable(session: Session, code: str, req: Request, doing: str) -> Token:
    """The code's token, not yet used; refused as the code cannot be used.  A full stop
    after the code ends the writer's sentence (``confirm CODE.``): codes have none."""
    try:
        return tokens.check(session, code.rstrip("."), req.now)
    except tokens.TokenError as exc:
        raise Refused(f"cannot {doing}: {exc}") from None


def _no_yes(req: Request, code: str, why: str) -> Refused:
    """The answer to a confirm line that says more than the code (``why``): nothing is
    confirmed, and the lines to send are given (the refusal first: a copy of this answer
    pasted back unquoted refuses before it could confirm)."""
    hours = req.settings.token_hours
    return Refused(
        f"nothing was confirmed: {why}, and such a line is not taken for a yes.",
        subject=subjects.NOTHING_CONFIRMED(),
        body=fill(
            "If you did not ask for the mail with this code, send the line below (the code "
            "is withdrawn, and an account that gave your address never mails it again), or "
            f"do nothing: the code expires in {hours} hours and nothing more is sent."
        )
        + f"\n  refuse {code}\n\n"
        + "If you did ask for it, send the line\n"
        + f"  confirm {code}\n",
    )


def confirm(call: Call) -> None:
    """Confirm an address or a challenge with the code mailed for it: a line of its own, or
    a reply that says nothing but its Subject (see the module's docstring)."""
    req, ctx = call.req, call.ctx
    code = call.args["code"]
    challenge: tuple[str, list[str], list[str], int, str] | None = None
    with req.sessions() as session, session.begin():
        token = _usable(session, code, req, "confirm")
        if token.kind is TokenKind.reset:
            raise Refused(RESET_CODE)
        if token.kind is TokenKind.unlock:
            raise Refused(UNLOCK_CODE)
        if call.args.get("_extra"):  # "confirm CODE - NO, STOP": a complaint, no yes
            raise _no_yes(req, code, "your line has words of its own after the code")
        if req.from_subject and req.mail.says_more:
            why = "your mail says something of its own besides the code in its subject"
            raise _no_yes(req, code, why)
        token.used_at = req.now
        user = session.get(User, token.user_id)
        assert user is not None
        if token.kind is TokenKind.address:
            first = not any(a.confirmed for a in user.addresses)  # a new player's
            if confirmation.confirm_address(session, token) is None:
                raise Refused(f"{shown(token.address)} is no longer an address of {user.userid}")
            message = (
                f"{shown(token.address)} is confirmed: mail for {user.userid} goes there now.\n"
            )
            # a new player's first confirmation (which the shell's signup says at once): he
            # may play now, and how to begin (he was told nothing more)
            message += hint("welcome", req.channel, userid=user.userid) if first else ""
        elif token.kind is TokenKind.challenge:
            if not req.trusted and not accounts.is_owner_address(user, req.sender):
                raise Refused(f"a challenge is confirmed from a confirmed address of {user.userid}")
            payload = token.payload
            said = payload.get("comment") or ""  # (none in a code made before it was kept)
            challenge = (payload["game"], payload["players"], payload["options"], user.id, said)
    if challenge is None:
        answer(ctx, subjects.server("confirm"), message)
        return
    game, players, options, user_id, said = challenge
    create_challenge(get_game(game), req, ctx, players, options, confirmed_by=user_id, comment=said)


def refuse(call: Call) -> None:
    """Withdraw a code that was mailed to you unasked.  For an address, the account that gave
    it never mails it again.  Anyone who holds the code may: it was mailed only to the
    address it is for (a challenge's, to the challenger's), never to whoever asked for it."""
    req = call.req
    with req.sessions() as session, session.begin():
        token = _usable(session, call.args["code"], req, "refuse")
        token.used_at = req.now
        confirmation.refuse(session, token, req.now)
        user = session.get(User, token.user_id)
        assert user is not None
        if token.kind is TokenKind.address:
            done = (
                f"{shown(token.address)} is not confirmed for {user.userid}, and {user.userid} "
                "will never have mail sent there again."
            )
        elif token.kind is TokenKind.challenge:
            payload = token.payload
            line = " ".join([payload["game"], "challenge", *payload["players"]])
            done = f"the challenge '{line}' will not start."
        elif token.kind is TokenKind.unlock:
            done = f"it no longer lets mail through the hold on {user.userid}'s address."
        else:
            done = f"the password of {user.userid} stays as it is."
    answer(call.ctx, subjects.server("refuse"), fill(f"The code is withdrawn: {done}") + "\n")


def unlock(call: Call) -> None:
    """Say whether the unlock code works.  Its work is done before the mail's lines run (the
    worker reads every ``unlock`` line first): the mail's logins for its account skip the hold
    on the account's own address, wherever the line stands; the code is not used up."""
    req = call.req
    with req.sessions() as session:
        try:
            token = tokens.check(session, call.args["code"], req.now, TokenKind.unlock)
        except tokens.TokenError as exc:
            raise Refused(f"cannot unlock: {exc}") from None
        user = session.get(User, token.user_id)
        assert user is not None
        userid, until = user.userid, token.expires.strftime("%Y-%m-%d %H:%M")
    answer(
        call.ctx,
        subjects.server("unlock"),
        fill(
            f"The unlock code works until {until} UTC: the logins for {userid} in a mail that "
            "carries it are not held off (the password is still checked)."
        )
        + "\n",
    )


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
        if user is not None and not user.closed:
            done = confirmation.reset_mails(session, req.settings, user, req.now)
    if done is confirmation.Reset.capped:
        raise Refused(
            f"no mail could be sent to the addresses of {userid} today: an address gets only "
            "so many mails from us a day (UTC); ask again tomorrow"
        )
    answer(
        call.ctx,
        subjects.server("password reset"),
        hint("password new", req.channel, userid=userid, hours=req.settings.token_hours),
    )


def password_new(call: Call) -> None:
    """Set a new password with a code from 'password reset'."""
    req = call.req
    userid = accounts.normalise_userid(call.args["userid"])
    new = call.args["new"]
    if problem := accounts.new_password_problem(new):
        raise Refused(problem)
    with req.sessions() as session, session.begin():
        user = accounts.find_user(session, userid)
        try:
            token = tokens.redeem(session, call.args["code"], req.now, TokenKind.reset)
        except tokens.TokenError as exc:
            raise Refused(f"cannot set the password: {exc}") from None
        if user is None or token.user_id != user.id:
            raise Refused("cannot set the password: this code is unknown")
        if user.closed:  # closed: no password opens it
            raise Refused(f"cannot set the password: the account {userid} is closed")
        accounts.set_password(user, req.settings, new)
        session.execute(
            delete(AuthFailure).where(AuthFailure.key.in_([f"user:{userid}", f"owner:{userid}"]))
        )
    answer(call.ctx, subjects.server("password new"), f"The password of {userid} is changed.\n")


CODE = Arg("code", Kind.PASSWORD, from_shell=False)

COMMANDS: tuple[Command, ...] = (
    Command(
        "confirm",
        confirm,
        "Confirm an address or a challenge with the code mailed for it (or reply to that mail).",
        (CODE,),
        extra_words=True,  # a complaint (confirm's docstring)
    ),
    Command(
        "refuse",
        refuse,
        "Withdraw a code mailed to you that you did not ask for; an account that gave your "
        "address never mails it again.",
        (CODE,),
        plain_word=True,
    ),
    Command(
        "unlock",
        unlock,
        "Let this mail's logins through the hold on your own address (put the code our "
        "refusal mailed you anywhere in the mail).",
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

"""Helpers shared by the command modules: logging in, board numbers, boards, answers."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from contextlib import nullcontext

import click
from sqlalchemy.orm import Session

from pbmserv.commands.dispatch import Refused, Request, answer, error_subject
from pbmserv.commands.spec import Call
from pbmserv.domain import boards, deadlines, moves, notify, owner_hold, players
from pbmserv.domain.accounts import (
    AuthError,
    OwnerHeld,
    UnknownUserid,
    WrongPassword,
    authenticate,
    confirmed_addresses,
    is_admin,
    normalise_userid,
)
from pbmserv.games.base import Game, MoveError, Position, UnreadableMove
from pbmserv.numbers import whole_number
from pbmserv.render import subjects
from pbmserv.render.board_mail import (
    OpenVote,
    board_key,
    board_mail_body,
    ending_told,
    game_name,
    reply_line,
    turn_line,
)
from pbmserv.render.templates import fill, hint, render, render_board
from pbmserv.store import records
from pbmserv.store.models import Board, User

# What one command line may name or draw: boards (``show 101 102``), players (``games alice
# bob``), games (``list polis ploy``).  A board drawn with its moves is 3-10 KB of answer and
# a few milliseconds of work, a player one query: ``show`` with 2,000 boards took 5 s and
# mailed 14 MB to whatever address the mail's From gave.  Classic servers showed a handful.
MAX_NAMED = 10
# moves one ``preview`` plays (longer than most whole games)
MAX_PREVIEW_MOVES = 500


def at_most(words: list[str], what: str, most: int = MAX_NAMED) -> None:
    """Refuse a command line that names more than ``most`` of ``what`` (``boards``) before
    any of them is looked at."""
    if len(words) > most:
        raise Refused(f"a command takes at most {most} {what}, this one names {len(words)}")


def login(req: Request, userid: str, password: str) -> int:
    """Check a password in a transaction of its own (so failures are counted even when the
    command is refused); returns the user's id.  Inside the mail worker's transaction the
    block is already kept when the command is refused: it needs no savepoint of its own.
    A userid that names no account is kept in ``req.secret_words``: a player who forgot his
    userid put his password in its place.  A refusal by the hold on the account's own
    address gives the owner his unlock code (:mod:`pbmserv.domain.owner_hold`)."""
    error: AuthError | None = None
    note = ""
    user_id = 0
    with req.sessions() as session, nullcontext() if req.in_transaction else session.begin():
        try:
            who = authenticate(
                session,
                req.settings,
                userid,
                password,
                sender=req.sender,
                now=req.now,
                unlocked=req.mail.unlocked,
            )
            user_id = who.user_id
            if who.owner:
                req.owner_verified = True
        except OwnerHeld as exc:
            error = exc
            note, new = owner_hold.code_note(session, exc.user_id, exc.userid, exc.since, req.now)
            req.mail.unlock_code = req.mail.unlock_code or new
        except WrongPassword as exc:
            error = exc  # leave the block normally so that the failure count is kept
            note = forgotten(exc.userid, req.channel)
        except AuthError as exc:
            error = exc
    if isinstance(error, UnknownUserid):
        req.secret_words.append(userid)
    if error is not None:
        req.login_refused = True
        raise Refused(str(error), body=note)
    return user_id


def forgotten(userid: str, channel: str = "mail") -> str:
    """What a player whose password is refused can do: it may be mistyped (a newcomer was
    told "wrong password" and no more), or forgotten, and the reset is by mail.  The code goes
    to the account's confirmed addresses only, so whoever reads this learns nothing new."""
    return hint("forgotten", channel, userid=userid)


def no_player(req: Request, userid: str, position: int) -> str:
    """The refusal of a userid that names no account, which never repeats it: a player used
    to the classic servers types his password after his userid where a command takes none
    (``polis games dora PASSWORD``).  The word is kept in ``req.secret_words``, so that the
    answer's quotes and the mail's kept copy mask it too."""
    req.secret_words.append(userid)
    ordinal = {1: "1st", 2: "2nd", 3: "3rd"}.get(position, f"{position}th")
    return (
        f"the {ordinal} userid given names no player (it is not repeated here, in case it "
        "is a password)"
    )


def call_login(call: Call) -> int:
    """Log in with the command's ``userid`` and ``password`` arguments."""
    return login(call.req, call.args["userid"], call.args["password"])


def parse_board_number(text: str) -> tuple[int, int | None]:
    """``101`` or ``101#5`` (the board at move 5)."""
    number, sep, at = text.partition("#")
    board, ply = whole_number(number), whole_number(at) if sep else None
    if board is None or (sep and ply is None):
        raise click.UsageError(f"'{text}' is not a board number")
    return board, ply


def board_arg(call: Call) -> int:
    """The number of the command's ``board`` argument (a ``#K`` suffix is ignored)."""
    return parse_board_number(call.args["board"])[0]


def text(lines: Iterable[str]) -> str:
    """Lines of our own words, each wrapped to the mail's width (:func:`fill`; a player's
    text, such as a message, is rendered as it is written)."""
    return render("mail/text.txt.j2", lines=[fill(line) for line in lines])


def preview_body(
    what: str, start: int, played: list[str], position: Position, *, note: str = ""
) -> str:
    """The answer to a preview of ``what`` (``Plotto board 101``) from move ``start``: the
    moves tried, numbered as they would be, ``note`` (whose move it was), the board after them
    and how the game would end."""
    if played:
        head = f"Preview of {what}: " + " ".join(
            f"{start + i}. {m}" for i, m in enumerate(played, 1)
        )
    else:
        head = f"Preview of {what} after move {start}: no moves"
    lines = [head, *([fill(note)] if note else []), "Nothing is stored."]
    body = text(lines) + "\n" + render_board(position)
    return body + would_end(position)


def would_end(position: Position) -> str:
    """How the game would end in ``position`` (a preview, a submitted move): why, and who
    would win, by colour ('' while it goes on)."""
    outcome = position.outcome()
    if outcome is None:
        return ""
    infos = position.seats()
    won = [  # (Plotto's seats are numbers)
        f"player {label}" if label.isdigit() else label
        for label in (infos[seat].label for seat in outcome.winners)
    ]
    result = f"won by {' and '.join(won)}" if won else "a draw"
    return "\n" + fill(f"The game would end: {outcome.reason}; {result}.") + "\n"


def user(session: Session, user_id: int) -> User:
    found = session.get(User, user_id)
    assert found is not None
    return found


def load_board(session: Session, game: Game, number: int, *, lock: bool = False) -> Board:
    try:
        return boards.find_board(session, game, number, for_update=lock)
    except boards.BoardError as exc:
        subject = error_subject(subjects.board(game.display_name, number))
        raise Refused(str(exc), subject=subject) from None


def check_move_number(board: Board, at: int | None) -> None:
    """Refuse ``BOARD#K`` (show, preview) when the board has not reached move ``K``."""
    count = len(board.moves)
    if at is not None and not 0 <= at <= count:
        moves = "1 move" if count == 1 else f"{count} moves"
        raise Refused(f"board {board.number} has {moves}; there is no move {at}")


def move_error(exc: MoveError, text: str, lead: str = "illegal move") -> str:
    """Why the move ``text`` is refused, naming it once: ``illegal move 'b2': <why>``.

    An engine's message names the move it was given (``b2: ...``, ``'zz' is not a Ploy
    move``, ``d5-d4 is illegal: ...``): that name is left out after the lead, and a message
    that starts with the move in another way (``e9 is full``) is the whole answer.

    >>> move_error(MoveError("'zz' is not a Ploy move: write e4-d5"), "zz")
    "illegal move 'zz': not a Ploy move: write e4-d5"
    """
    message = str(exc)
    low, move = message.lower(), "".join(text.split()).lower()
    if not move:
        return f"{lead}: {message}"
    reasons = (f"{move}: ", f"'{move}': ", f"{move} is illegal: ")  # the reason follows
    negations = (f"'{move}' is ", f"{move} is ")  # "is not a Ploy move": "not ..." follows
    said = next((n for n in reasons if low.startswith(n)), None) or next(
        (n for n in negations if low.startswith(n + "not ")), None
    )
    if said is not None:
        return f"{lead} '{text}': {message[len(said) :]}"
    if lead == "illegal move" and low.startswith((f"{move} ", f"'{move}' ")):
        return message
    return f"{lead} '{text}': {message}"


def board_error(
    board: Board,
    position: Position,
    message: str,
    tail: str = "",
    lead: str = "The board is unchanged:",
) -> Refused:
    """An error about a board: the message, then ``lead`` and the board in ``position`` (and
    ``tail``: the line to send back, when the sender is the player to move).  A preview,
    which never changes the board, leads with what the position is instead."""
    due = deadlines.due(board, position)
    body = f"{lead}\n\n" + board_mail_body(board, position, due=due) + tail
    subject = error_subject(subjects.board(game_name(board), board.number))
    return Refused(message, subject=subject, body=body, board=board_key(board))


def reader_tail(
    req: Request,
    board: Board,
    position: Position,
    actor: User | None = None,
    vote: OpenVote | None = None,
) -> str:
    """The reply lines for the answer to the sender: on the shell (the operator plays every
    seat) for the player to move, or a note that a robot is; by mail for the actor, or the
    player of the sender's address (his move when he is to move, his answer to the open
    proposal ``vote`` when it waits for one)."""
    mover = board.user_to_move(position)
    if req.trusted:
        if mover is None:
            return ""
        if mover.robot is not None:  # nobody sends its move: it is played for it
            return "\n" + fill(  # (the shell plays the reply to its own move: it follows)
                f"{mover.userid} is a robot: its moves are played for it, its reply to a move "
                "made here at once, the others by a running server or `pbmserv robot run`."
            )
        return reply_line(board, position, mover, vote, req.channel)
    sender = req.sender.lower() if req.sender else None

    def reads(user: User) -> bool:
        return _has_address(user, sender) or (actor is not None and actor.id == user.id)

    if mover is not None and reads(mover):
        return reply_line(board, position, mover, vote, req.channel)
    reader = next((seat.user for seat in board.seats if reads(seat.user)), None)
    return reply_line(board, position, reader, vote, req.channel)


def sender_player(req: Request, board: Board) -> User | None:
    """The player of ``board`` whose address a mail came from (None on the shell, or for
    anybody else's address)."""
    if req.trusted or not req.sender:
        return None
    sender = req.sender.lower()
    return next((s.user for s in board.seats if _has_address(s.user, sender)), None)


def _has_address(user: User, address: str | None) -> bool:
    """Whether ``address`` (lower case) is one of ``user``'s (a board's players' addresses
    come with it)."""
    return address is not None and any(a.address == address for a in user.addresses)


def preview_stop(
    word: str, exc: MoveError, position: Position, mover: str = "", *, not_his: bool = False
) -> str:
    """Why a preview stops at the move ``word``.  A preview plays its moves in turn from the
    player to move, each judged as that player's move ("no piece of yours on h2"), so the
    answer names him (``mover``: his userid), and tells a sender whose move it is not
    (``not_his``) just that."""
    seat = position.to_move
    if seat is None or isinstance(exc, UnreadableMove):  # over, or no move in any position
        return f"preview stops at '{word}': {exc}"
    label = position.seats()[seat].label
    turn = f"it is {label}'s ({mover}'s) move" if mover else f"it is {label}'s move"
    if not_his:
        return (
            f"preview stops at '{word}': {turn} in this position, not yours; a preview shows "
            f"the position after the move of the player to move (put {label}'s move first to "
            "see yours after it)"
        )
    return (
        f"preview stops at '{word}': {turn} in this position (a preview plays its moves in "
        f"turn, from the player to move), and for {label}: {exc}"
    )


def summary(
    board: Board, position: Position, notes: list[str], newest: records.Entry | None = None
) -> str:
    """One line on what a command did to a board, for a mail whose answer draws it later
    (``newest``: the record's newest entry, when the caller has it at hand)."""
    if newest is None:
        newest = records.newest_move(board)
    last = f"Last move: {newest.ply}. {newest.text}." if newest else ""
    turn = turn_line(board, position, told=ending_told(board, notes, newest))
    return " ".join(x for x in [*notes, last, turn] if x)


def announce(
    call: Call,
    session: Session,
    board: Board,
    position: Position,
    notes: list[str],
    actor: User | None,
    *,
    new: bool = False,
    newest: records.Entry | None = None,
    said: str | None = None,
    vote: OpenVote | None = None,
    out: Collection[int] = (),
) -> None:
    """The board mail to the sender, and the same mail to every other player and spectator
    (``newest``: the record's newest entry, when the caller has it at hand).

    ``said``: the comment of a command that is not a move (a proposal, a vote, a decline),
    shown with the board as a move's is; ``vote``: the open proposal, whose players still to
    answer get the lines for it; ``out``: the players the command put out of the game
    (:attr:`pbmserv.domain.boards.Played.out`)."""
    comments = None
    if said is not None:
        comments = [(actor.userid, said.strip())] if actor and said.strip() else []
    subject, body = notify.board_mail(
        session,
        board,
        position,
        notes,
        call.req.now,
        actor=actor,
        sender=call.req.sender,
        new=new,
        with_comment=True,
        said=comments,
        vote=vote,
        out=out,
    )
    body += reader_tail(call.req, board, position, actor, vote)
    if actor is not None and actor.id in out and actor.id in players.gone_users(board, position):
        body += notify.gone_note(board)  # (his resignation: the answer is his mail of it)
    answer(
        call.ctx,
        subject,
        body,
        board=board_key(board),
        summary=summary(board, position, notes, newest),
    )


def follow_up(call: Call, session: Session, board: Board) -> None:
    """What the command's finished ``board`` sets off, run once the command has queued the
    board's mails (:func:`pbmserv.domain.moves.follow_up`: a tournament's next round).  The
    mail worker queues the answer to the sender once every line of the mail has run, and
    runs the follow-ups after it (:attr:`pbmserv.commands.dispatch.Mail.finished`): the mover,
    too, reads how his game ended before his next round's board."""
    finished = call.req.mail.finished
    if finished is not None:
        finished.append(board.id)
    else:
        moves.follow_up(session, board, call.req.now)


def queued_comment(comment: str) -> str:
    """What the answer to a queued move or resignation says of the comment sent with it."""
    if not comment.strip():
        return ""
    return " Your comment waits with it and is mailed to the others when it is played."


def not_sent(what: str, refused: dict[str, str]) -> str:
    """Whom ``what`` (a player's own text) did not reach, and why: the daily caps of
    :func:`pbmserv.domain.notify.player_text`."""
    return (
        f"{what} was not sent to {', '.join(refused)}: {'; '.join(refused.values())}. A "
        "player's text goes to one address only so often a day; try again tomorrow (UTC)."
    )


def admin(call: Call, *, refused: Callable[[str], Refused] = Refused) -> str:
    """Who acts as administrator: the shell operator, or an authenticated admin by mail.

    The rights come with the userid named in the config, so by mail the account must also
    have a confirmed address: one made by mail (before its userid was named, or before mail
    signups of admins' userids were refused) proves nothing until its address is confirmed."""
    req, userid = call.req, call.args.get("userid")
    if req.trusted and userid is None:
        return "operator"
    if userid is None:  # by mail (a shell needs none): refused, not a usage error, whose
        # answer would mask every word of the line as a possible password
        usage = call.usage.replace("[USERID PASSWORD]", "USERID PASSWORD")
        raise refused(f"by mail this needs an administrator's userid and password: {usage}")
    user_id = login(req, userid, call.args["password"])
    if not is_admin(req.settings, userid):
        raise refused(f"only an administrator may do this, and {userid} is not one")
    if req.trusted:
        return normalise_userid(userid)
    with req.sessions() as session:
        user = session.get(User, user_id)
        if user is None or not confirmed_addresses(user):
            raise refused(
                f"{userid} acts as an administrator by mail only once an address of the "
                "account is confirmed"
            )
    return normalise_userid(userid)

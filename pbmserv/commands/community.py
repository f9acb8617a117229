"""The community commands of a game: spectators, chat, queued and two-step moves, standings.

Who gets which board mail is :func:`pbmserv.domain.notify.audience`: every player and every
``subscribe`` spectator gets every board mail; a ``notify`` spectator only the mail that ends
the game.
"""

from __future__ import annotations

import click

from pbmserv.commands import classic, games
from pbmserv.commands.common import (
    board_arg,
    board_error,
    call_login,
    load_board,
    move_error,
    not_sent,
    queued_comment,
    would_end,
)
from pbmserv.commands.common import text as _text
from pbmserv.commands.common import user as _user
from pbmserv.commands.dispatch import Refused, answer
from pbmserv.commands.spec import Arg, Call, Command, Kind
from pbmserv.domain import boards, deadlines, notify, players, ratings
from pbmserv.games.base import MoveError, UnreadableMove
from pbmserv.render import subjects
from pbmserv.render.board_mail import board_mail_body
from pbmserv.render.results import names
from pbmserv.render.templates import hint, render, render_board
from pbmserv.store.models import BoardStatus, Subscription, SubscriptionKind, User

# ----------------------------------------------------------------------------- spectators


def _subscribe(call: Call, kind: SubscriptionKind) -> None:
    game, req = call.game, call.req
    word = "subscribe" if kind == SubscriptionKind.all else "notify"
    number, user_id = board_arg(call), call_login(call)
    with req.sessions() as session, session.begin():
        board = load_board(session, game, number)
        user = _user(session, user_id)
        if board.status is not BoardStatus.active:
            raise Refused(f"{game.display_name} board {number} is over")
        position = boards.position_of(board)
        if boards.seats_of(board, user) and user.id not in players.gone_users(board, position):
            raise Refused(f"{user.userid} plays on board {number} and gets its mail anyway")
        found = next((s for s in board.subscriptions if s.user_id == user.id), None)
        already = found is not None and found.kind is kind
        if found is None:
            board.subscriptions.append(Subscription(user=user, kind=kind))
        else:
            found.kind = kind
        session.flush()
        what = "every mail" if kind == SubscriptionKind.all else "the result only"
        when = "already gets" if already else "now gets"
        lines = [f"{user.userid} {when} {what} of {game.display_name} board {number}."]
        due = deadlines.due(board, position)
        body = _text(lines) + "\n" + board_mail_body(board, position, due=due)
    answer(call.ctx, subjects.board(game.display_name, number, word), body)


def subscribe(call: Call) -> None:
    if call.args["board"].lower() == "all":
        classic.subscribe_all(call)
        return
    _subscribe(call, SubscriptionKind.all)


def notify_command(call: Call) -> None:
    _subscribe(call, SubscriptionKind.result)


def unsubscribe(call: Call) -> None:
    game, req = call.game, call.req
    number, user_id = board_arg(call), call_login(call)
    with req.sessions() as session, session.begin():
        board = load_board(session, game, number)
        found = next((s for s in board.subscriptions if s.user_id == user_id), None)
        user = _user(session, user_id)
        if found is None:
            raise Refused(f"{user.userid} is not subscribed to board {number}")
        board.subscriptions.remove(found)
    answer(
        call.ctx,
        subjects.board(game.display_name, number, "unsubscribe"),
        f"{user.userid} gets no more mail of {game.display_name} board {number}.\n",
    )


# ----------------------------------------------------------------------------- chat


def chat(call: Call) -> None:
    game, req = call.game, call.req
    number, user_id = board_arg(call), call_login(call)
    said = (" ".join(call.args["text"]) or req.comment).strip()
    if not said:
        raise Refused("nothing to say: write the message in the mail body (or after the password)")
    with req.sessions() as session, session.begin():
        board = load_board(session, game, number)
        user = _user(session, user_id)
        players = [s.user for s in board.seats]
        if all(u.id != user.id for u in players + [s.user for s in board.subscriptions]):
            raise Refused(f"only the players and spectators of board {number} may chat there")
        # a spectator who asked for the result only ('notify') gets no chat
        listeners = players + [
            s.user for s in board.subscriptions if s.kind is SubscriptionKind.all
        ]
        subject = subjects.board(game.display_name, number, "Chat")
        body = render("mail/chat.txt.j2", userid=user.userid, text=said, number=number, game=game)
        seen: list[User] = []
        for u in listeners:
            if all(s.id != u.id for s in seen):
                seen.append(u)

        def reply(reader: User) -> str:  # each reader's own line to answer with, as a message's
            return f"\nAnswer: {game.name} chat {number} {reader.userid} PASSWORD\n"

        sent = notify.player_text(
            session,
            req.settings,
            user,
            seen,
            subject,
            body,
            req.now,
            capped=not req.trusted,
            skip_address=req.sender,
            tail=reply,
        )
        if sent.refused and not sent.mails:
            raise Refused(not_sent("your chat line", sent.refused))
        got = sent.reached  # (not robots, nor players with no address to mail)
    if got:  # the sender's copy says who read it
        body += "\n" + _text([f"Sent to {names(got)}."])
    if sent.refused:
        body += "\n" + not_sent("It", sent.refused) + "\n"
    answer(call.ctx, subject, body)


# ----------------------------------------------------------------------------- queue, submit


def queue(call: Call) -> None:
    game, req, usage = call.game, call.req, call.usage
    number, user_id = board_arg(call), call_login(call)
    text = call.args["move"]
    if not text:
        raise click.UsageError(f"the move is missing; usage: {usage}")
    if len(text) > 64:
        raise Refused("a queued move has at most 64 characters")
    with req.sessions() as session, session.begin():
        board = load_board(session, game, number, lock=True)
        user = _user(session, user_id)
        position = boards.position_of(board)
        seats = [board.seats[i] for i in boards.seats_of(board, user)]
        if not seats:
            raise Refused(f"{user.userid} does not play on board {number}")
        if board.status is not BoardStatus.active:
            raise Refused(f"{game.display_name} board {number} is over")
        mover = boards.user_to_move(board, position)
        play_now = mover is not None and mover.id == user.id
        out = players.out_of_play(board, position, user)
        if out is not None and not play_now:  # no turn of his own would play it
            raise Refused(out)
        lines: list[str] = []
        where = f"on {game.display_name} board {number}"
        if text.lower() == "cancel":
            move = next((seat.queued_move for seat in seats if seat.queued_move), None)
            said = any(seat.queued_move_comment or seat.queued_resign_comment for seat in seats)
            resigned = boards.queue_move(board, user, None)
            lines.append(_cancelled(where, move, resigned, said))
            if req.comment.strip():
                lines.append("The comment of this line goes to nobody.")
        elif not play_now:
            copy = game.position_class.deserialize(position.serialize())
            try:
                copy.parse_move(text)
            except UnreadableMove as exc:
                raise Refused(move_error(exc, text, "cannot queue")) from None
            except MoveError:
                # judged for the player to move now, not for this one ("no piece of yours"):
                # its legality is known when his turn comes, and reported then if it is not
                pass
            waits = queued_comment(req.comment)
            if text.lower() == "resign":
                move = boards.queue_resign(board, user, req.comment)
                instead = "" if move is None else f" It replaces your queued move {move}."
                lines.append(
                    f"Your resignation {where} is queued: it takes effect on your turn."
                    f"{instead}{waits}"
                )
            else:
                try:  # the move the player saw, in words that still name it on his turn
                    stored = copy.queue_text(text)
                except MoveError as exc:
                    raise Refused(move_error(exc, text, "cannot queue")) from None
                resigned = boards.queue_move(board, user, stored, req.comment)
                kept = (
                    "" if stored == text else f" as {stored} (the same move, whatever comes first)"
                )
                instead = " It replaces your queued resignation." if resigned else ""
                lines.append(
                    f"Your move {text} {where} is queued{kept}: it is played on your turn."
                    f"{instead}{waits}"
                )
    if play_now and text.lower() != "cancel":
        if text.lower() == "resign":
            games.resign(call, number, user_id)
        else:
            games.play(call, number, user_id, text, None)
        return
    answer(call.ctx, subjects.board(game.display_name, number, "queue"), _text(lines))


def _cancelled(where: str, move: str | None, resigned: bool, said: bool) -> str:
    """The answer to ``queue cancel``: what it dropped (a queued move, a queued resignation,
    the comment waiting with it), or that nothing was queued."""
    dropped = ["your queued resignation"] if resigned else []
    dropped += [f"your queued move {move}"] if move else []
    if not dropped:
        return f"You have nothing queued {where}: nothing is cancelled."
    verb = "are" if len(dropped) > 1 else "is"
    what = " and ".join(dropped)
    comment = ", and the comment queued with it." if said else "."
    return f"{what[0].upper()}{what[1:]} {where} {verb} cancelled{comment}"


def submit(call: Call) -> None:
    game, req, usage = call.game, call.req, call.usage
    number, user_id = board_arg(call), call_login(call)
    text = call.args["move"]
    if not text:
        raise click.UsageError(f"the move is missing; usage: {usage}")
    with req.sessions() as session, session.begin():
        board = load_board(session, game, number, lock=True)
        user = _user(session, user_id)
        position = boards.position_of(board)
        mover = boards.user_to_move(board, position)
        if mover is None or mover.id != user.id:
            raise board_error(board, position, players.not_your_turn(board, position, user))
        copy = game.position_class.deserialize(position.serialize())
        try:
            move = copy.parse_move(text)
        except MoveError as exc:
            raise board_error(board, position, move_error(exc, text)) from None
        shown = copy.format_move(move)
        copy.play(move)
        ply = len(board.moves) + 1
        for seat in boards.seats_of(board, user):
            board.seats[seat].submitted_move = f"{text}#{ply}"
        line = f"{game.name} confirm {number} {user.userid} PASSWORD"
        lines = [
            f"Your move {shown} (move {ply}) on {game.display_name} board {number} is stored "
            "but not played.",
            hint("submit", req.channel, line=line).rstrip("\n"),
            "The board after the move:",
        ]
        body = _text(lines) + "\n" + render_board(copy) + would_end(copy)
    answer(call.ctx, subjects.board(game.display_name, number, "Submitted"), body)


def confirm(call: Call) -> None:
    game, req = call.game, call.req
    number, user_id = board_arg(call), call_login(call)
    with req.sessions() as session, session.begin():
        board = load_board(session, game, number, lock=True)
        user = _user(session, user_id)
        pending = [board.seats[i] for i in boards.seats_of(board, user)]
        found = next((s.submitted_move for s in pending if s.submitted_move), None)
        if found is None:
            raise Refused(f"{user.userid} has no submitted move on board {number}")
        for seat in pending:
            seat.submitted_move = None
    text, _, ply = found.rpartition("#")
    games.play(call, number, user_id, text, int(ply))


# ----------------------------------------------------------------------------- standings


def standings(call: Call) -> None:
    game, req = call.game, call.req
    with req.sessions() as session:
        established, provisional, inactive = ratings.standings(session, game.name, req.now)
    body = render(
        "mail/standings.txt.j2",
        game=game.display_name,
        sections=[
            (f"Established players ({ratings.ESTABLISHED_AFTER} or more rated games)", established),
            ("Provisional players", provisional),
            (f"Inactive players (no finished game in {ratings.INACTIVE_DAYS} days)", inactive),
        ],
    )
    answer(call.ctx, subjects.game(game.display_name, "Standings"), body)


PLAYER = (Arg("board", Kind.BOARD), Arg("userid", Kind.USERID), Arg("password", Kind.PASSWORD))

COMMANDS: tuple[Command, ...] = (
    Command(
        "subscribe",
        subscribe,
        "Spectate: get every mail of the board (BOARD 'all': every active board).",
        PLAYER,
        aliases=("sub",),
    ),
    Command(
        "unsubscribe",
        unsubscribe,
        "Stop spectating the board.",
        PLAYER,
        aliases=("unsub",),
    ),
    Command("notify", notify_command, "Get only the final mail of the board.", PLAYER),
    Command(
        "chat",
        chat,
        "Send TEXT to the players and spectators (players and spectators only); by mail "
        "the mail body may hold it.",
        (*PLAYER, Arg("text", Kind.TEXT, many=True, metavar="[TEXT...]")),
    ),
    Command(
        "queue",
        queue,
        "A move played automatically when your turn comes.",
        (*PLAYER, Arg("move", Kind.MOVE, metavar="MOVE|cancel")),
        aliases=("qmove",),
        typos=("qboard", "boardq", "moveq"),
        comment=True,
    ),
    Command(
        "submit",
        submit,
        "Store a move and mail back the board after it; 'confirm' plays it.",
        (*PLAYER, Arg("move", Kind.MOVE)),
    ),
    Command("confirm", confirm, "Play the move stored by 'submit'.", PLAYER, comment=True),
    Command(
        "standings",
        standings,
        "Ratings: established, provisional and inactive players.",
        aliases=("ratings",),
    ),
)

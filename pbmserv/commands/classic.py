"""The classic server's commands that players relied on: ``message``, ``broadcast``,
``GAME showas``, ``all show``, ``GAME preview new``, ``GAME subscribe all``, and the misspelling
aliases (``mvoe``, ``qboard``, ``boardq``, ``moveq``)."""

from __future__ import annotations

import click
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from pbmserv import accounts, boards
from pbmserv.commands.common import login, need, parse_board_number, raw_command, take_password
from pbmserv.dispatch import Refused, Request, answer, request
from pbmserv.games.base import Game, MoveError, ParamError
from pbmserv.outbox import mail_users
from pbmserv.render import render, render_board
from pbmserv.store.models import Board, BoardStatus, Seat, Subscription, User
from pbmserv.views import board_mail_body, board_subject, reply_line

MISSPELLINGS = {"mvoe": "move", "qboard": "queue", "boardq": "queue", "moveq": "queue"}
MAX_MESSAGE_RECIPIENTS = 10
SEPARATOR = "\n" + "=" * 72 + "\n\n"


def _text(lines: list[str]) -> str:
    return render("mail/text.txt.j2", lines=lines)


def _login(req: Request, words: list[str], usage: str) -> tuple[str, int]:
    need(words, 1, usage)
    userid = words.pop(0)
    password = take_password(req, words, 0, userid)
    return userid, login(req, userid, password)


# ----------------------------------------------------------------------------- message, broadcast


def _shares_a_board(session: Session, a: int, b: int) -> bool:
    mine = select(Seat.board_id).where(Seat.user_id == a)
    return (
        session.scalar(select(Seat.id).where(Seat.user_id == b, Seat.board_id.in_(mine)))
        is not None
    )


def _message_text(req: Request, words: list[str]) -> tuple[list[str], str]:
    """The other words, and the text: ``--text=...`` (a shell), else the mail body."""
    texts = [w.partition("=")[2] for w in words if w.lower().startswith("--text=")]
    rest = [w for w in words if not w.lower().startswith("--text=")]
    return rest, (" ".join(texts) or req.comment).strip()


def message(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """message USERID PASSWORD TO...: the mail body to players you share a board with."""
    usage = "message USERID PASSWORD TO... [--text=TEXT] (else the text is the mail body)"
    words = list(args)
    _, user_id = _login(req, words, usage)
    targets, text = _message_text(req, words)
    if not targets:
        raise click.UsageError(f"whom to? usage: {usage}")
    if not text:
        raise Refused("nothing to say: write the message in the mail body")
    if len(targets) > MAX_MESSAGE_RECIPIENTS:
        raise Refused(f"at most {MAX_MESSAGE_RECIPIENTS} recipients a message")
    with req.sessions() as session, session.begin():
        sender = session.get(User, user_id)
        assert sender is not None
        users = []
        for name in targets:
            user = accounts.find_user(session, name)
            if user is None:
                raise Refused(f"there is no player '{accounts.normalise_userid(name)}'")
            if not req.trusted and not _shares_a_board(session, user_id, user.id):
                raise Refused(
                    f"{sender.userid} and {user.userid} share no board: messages go only to "
                    "players you play (or played) with"
                )
            users.append(user)
        body = _text(
            [
                f"{sender.userid} writes:",
                "",
                text,
                "",
                f"Answer: message USERID PASSWORD {sender.userid}",
            ]
        )
        mail_users(
            session, users, f"pbmserv message from {sender.userid}", body, req.now, skip=sender
        )
        names = ", ".join(u.userid for u in users)
    answer(ctx, "pbmserv message", _text([f"Your message went to {names}:", "", text]))


def broadcast(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """broadcast [USERID PASSWORD]: the mail body to every player (administrators only)."""
    from pbmserv.commands.tournament import _admin

    usage = "broadcast [USERID PASSWORD] [--text=TEXT] (else the text is the mail body)"
    words, text = _message_text(req, list(args))
    admin = _admin(req, ["broadcast", *words], usage)
    if not text:
        raise Refused("nothing to say: write the message in the mail body")
    with req.sessions() as session, session.begin():
        users = [
            u
            for u in session.scalars(select(User).options(selectinload(User.addresses)))
            if not u.password_hash.startswith("!")
        ]
        body = _text([f"A message to every player of this server (from {admin}):", "", text])
        count = mail_users(session, users, "pbmserv broadcast", body, req.now)
    answer(ctx, "pbmserv broadcast", f"The message went to {count} addresses.\n")


# ----------------------------------------------------------------------------- all show


def all_show(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    """all show USERID [next|active]: the boards of a player in every game."""
    usage = "all show USERID [next|active]"
    words = list(args)
    if not words or words[0].lower() != "show" or len(words) < 2:
        raise click.UsageError(f"usage: {usage}")
    which = words[2].lower() if len(words) > 2 else "active"
    if which not in ("next", "active"):
        raise click.UsageError(f"'{words[2]}' is not next or active; usage: {usage}")
    with req.sessions() as session:
        user = accounts.find_user(session, words[1])
        if user is None:
            raise Refused(f"there is no player '{accounts.normalise_userid(words[1])}'")
        query = (
            select(Board)
            .where(Board.status == BoardStatus.active)
            .where(Board.id.in_(select(Seat.board_id).where(Seat.user_id == user.id)))
            .order_by(Board.game, Board.number)
        )
        parts = []
        for board in session.scalars(query):
            position = boards.position_of(board)
            mover = boards.user_to_move(board, position)
            if which == "next" and (mover is None or mover.id != user.id):
                continue
            parts.append(board_mail_body(board, position))
        userid = user.userid
    if not parts:
        answer(ctx, f"pbmserv boards of {userid}", f"{userid} has no {which} boards.\n")
        return
    head = f"{len(parts)} {which} board{'s' if len(parts) != 1 else ''} of {userid}.\n\n"
    answer(ctx, f"pbmserv boards of {userid}", head + SEPARATOR.join(parts))


# ----------------------------------------------------------------------------- game commands


def showas(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    """GAME showas USERID PASSWORD BOARD: the board from that player's seat."""
    usage = f"{game.name} showas USERID PASSWORD BOARD"
    userid, user_id = _login(req, words, usage)
    need(words, 1, usage)
    number, _ = parse_board_number(words[0])
    with req.sessions() as session:
        try:
            board = boards.find_board(session, game, number)
        except boards.BoardError as exc:
            raise Refused(str(exc)) from None
        seats = [s for s in board.seats if s.user_id == user_id]
        if not seats:
            raise Refused(f"{userid} does not play on {game.display_name} board {number}")
        user = seats[0].user
        position = boards.position_of(board)
        private = []
        for seat in seats:
            label = position.seats()[seat.index].label
            if seat.queued_move:
                private.append(f"Your queued move ({label}): {seat.queued_move}")
            if seat.queued_resign:
                private.append(f"Your resignation ({label}) is queued.")
            if seat.submitted_move:
                private.append(
                    f"Your submitted move ({label}), waiting for confirm: {seat.submitted_move}"
                )
        body = board_mail_body(board, position, all_moves=True, comment_ply=len(board.moves))
        if private:
            body += "\nOnly for you:\n" + "".join(f"  {line}\n" for line in private)
        body += reply_line(board, position, user)
        subject = board_subject(board, position)
    answer(ctx, subject, body, board=f"{game.display_name} board {number}", summary="Board shown.")


def preview(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    """GAME preview new [-PARAM[=V]] MOVE...: moves from the start of a new game."""
    from pbmserv.commands.games import preview as board_preview

    if not words or words[0].lower() != "new":
        board_preview(game, req, ctx, words)
        return
    params_words = [w for w in words[1:] if w.startswith("-")]
    moves = [w for w in words[1:] if not w.startswith("-")]
    try:
        params = game.parse_params(params_words)
    except ParamError as exc:
        raise Refused(f"preview of a new game: {exc}") from None
    position = game.new(game.min_players, params)
    played = []
    for text in moves:
        try:
            value = position.parse_move(text)
        except MoveError as exc:
            raise Refused(f"preview stops at '{text}': {exc}") from None
        played.append(position.format_move(value))
        position.play(value)
    lines = [
        f"Preview of a new {game.display_name} game ({game.min_players} players): "
        + (" ".join(played) or "no moves"),
        "Nothing is stored.",
    ]
    answer(ctx, f"{game.display_name} Preview", _text(lines) + "\n" + render_board(position))


def subscribe(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    """GAME subscribe all USERID PASSWORD: spectate every active board of the game."""
    from pbmserv.commands.community import subscribe as board_subscribe

    if not words or words[0].lower() != "all":
        board_subscribe(game, req, ctx, words)
        return
    usage = f"{game.name} subscribe all USERID PASSWORD"
    rest = words[1:]
    userid, user_id = _login(req, rest, usage)
    with req.sessions() as session, session.begin():
        query = select(Board).where(Board.game == game.name, Board.status == BoardStatus.active)
        added = []
        for board in session.scalars(query.order_by(Board.number)):
            if any(s.user_id == user_id for s in board.seats):
                continue
            found = next((s for s in board.subscriptions if s.user_id == user_id), None)
            if found is None:
                board.subscriptions.append(Subscription(user_id=user_id, kind="all"))
            elif found.kind != "all":
                found.kind = "all"
            else:
                continue
            added.append(str(board.number))
    what = ", ".join(added) if added else "none (no other active boards)"
    answer(
        ctx,
        f"{game.display_name} subscribe all",
        f"{userid} now gets every mail of these {game.display_name} boards: {what}.\n",
    )


GAME_COMMANDS = [
    (
        "showas",
        showas,
        "USERID PASSWORD BOARD",
        "The board from your seat, with what only you see.",
    ),
    (
        "preview",
        preview,
        "BOARD[#K]|new [-PARAM] MOVE...",
        "Hypothetical moves; nothing is stored.",
    ),
    (
        "subscribe",
        subscribe,
        "BOARD|all USERID PASSWORD",
        "Spectate a board (all: every active one).",
    ),
]


def add_classic_commands(game: Game, group: click.Group) -> None:
    from pbmserv.commands.games import _make

    for name, fn, metavar, help_text in GAME_COMMANDS:
        group.add_command(_make(game, name, fn, metavar, help_text))
    group.aliases.update(MISSPELLINGS)  # type: ignore[attr-defined]


def register_classic_commands(group: click.Group) -> None:
    for name, fn, metavar, help_text in (
        (
            "message",
            message,
            "USERID PASSWORD TO...",
            "The mail body to players you share a board with.",
        ),
        (
            "broadcast",
            broadcast,
            "[USERID PASSWORD]",
            "The mail body to every player (administrators).",
        ),
        ("all", all_show, "show USERID [next|active]", "Your boards in every game."),
    ):

        def make(fn=fn):  # type: ignore[no-untyped-def]
            @click.pass_context
            def callback(ctx: click.Context, args: tuple[str, ...]) -> None:
                fn(request(ctx), ctx, args)

            return callback

        group.add_command(raw_command(name, make(), metavar, help_text))

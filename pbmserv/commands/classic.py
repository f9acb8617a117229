"""The classic server's commands that players relied on: ``message``, ``broadcast``,
``all show``, ``GAME showas``, and the helpers behind ``GAME preview new`` and
``GAME subscribe all`` (the misspellings ``mvoe``, ``qboard``, ``boardq``, ``moveq`` are
declared as the ``typos`` of the commands they stand for: they work, the help lists none)."""

from __future__ import annotations

import click
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from pbmserv.commands.common import (
    MAX_NAMED,
    MAX_PREVIEW_MOVES,
    admin,
    at_most,
    board_arg,
    call_login,
    load_board,
    no_player,
    not_sent,
    preview_body,
    preview_stop,
)
from pbmserv.commands.common import text as _text
from pbmserv.commands.dispatch import Refused, Request, answer
from pbmserv.commands.spec import Arg, Call, Command, Kind
from pbmserv.domain import accounts, boards, deadlines, notify
from pbmserv.games.base import Game, MoveError, ParamError, PlayersError
from pbmserv.numbers import whole_number
from pbmserv.render import subjects
from pbmserv.render.board_mail import board_key, board_mail_body, board_subject, reply_line
from pbmserv.render.results import names
from pbmserv.render.templates import fill, render
from pbmserv.store.models import (
    Board,
    BoardStatus,
    Robot,
    Seat,
    Subscription,
    SubscriptionKind,
    User,
)

MAX_MESSAGE_RECIPIENTS = MAX_NAMED
SEPARATOR = "\n" + "=" * 72 + "\n\n"


# ----------------------------------------------------------------------------- message, broadcast


def _shares_a_board(session: Session, a: int, b: int) -> bool:
    """Whether ``a`` and ``b`` play on one unfinished board: a game once played together is
    no lasting licence to mail each other."""
    mine = (
        select(Seat.board_id)
        .join(Board, Board.id == Seat.board_id)
        .where(Seat.user_id == a, Board.status == BoardStatus.active)
    )
    query = select(Seat.id).where(Seat.user_id == b, Seat.board_id.in_(mine))
    return session.scalar(query) is not None


def _message_text(req: Request, words: list[str]) -> tuple[list[str], str]:
    """The other words, and the text: ``--text=...`` or ``--text ...`` (a shell), else the
    mail body.  ``--text`` takes the next word as click's options do, so that the userid and
    password after it are read where the player put them (and masked there)."""
    texts: list[str] = []
    rest: list[str] = []
    items = iter(words)
    for word in items:
        name, sep, value = word.partition("=")
        if name.startswith("-") and name.lstrip("-").lower() == "text":  # as bind reads it
            texts.append(value if sep else next(items, ""))
        else:
            rest.append(word)
    return rest, (" ".join(texts) or req.comment).strip()


def message(call: Call) -> None:
    """message USERID PASSWORD TO...: the mail body to players you share an unfinished board
    with, within the daily caps on a player's text to others."""
    req = call.req
    user_id = call_login(call)
    targets, text = _message_text(req, [*call.args["to"], *call.args["options"]])
    if not targets:
        raise click.UsageError(f"whom to? usage: {call.usage}")
    if not text:  # (a shell has no mail body)
        where = "give it with --text=TEXT" if req.trusted else "write it in the mail body"
        raise Refused(f"nothing to say: {where} (the words after the password name whom to)")
    if len(targets) > MAX_MESSAGE_RECIPIENTS:
        raise Refused(f"at most {MAX_MESSAGE_RECIPIENTS} recipients a message")
    with req.sessions() as session, session.begin():
        sender = session.get(User, user_id)
        assert sender is not None
        users = []
        for position, name in enumerate(targets, 1):
            user = accounts.find_user(session, name)
            if user is None:  # (words meant as the text read as userids: say where it goes)
                raise Refused(
                    no_player(req, name, position) + ": the words after the password are the "
                    "userids to write to; the message itself goes in the mail body or "
                    "--text=TEXT"
                )
            if not req.trusted and not _shares_a_board(session, user_id, user.id):
                raise Refused(
                    f"{sender.userid} and {user.userid} share no unfinished board: messages "
                    "go only to players you are playing with"
                )
            users.append(user)
        lines = [f"{sender.userid} writes:", "", fill(text), ""]
        author = sender.userid

        def reply(user: User) -> str:  # each recipient's own line to answer with
            return f"Answer: message {user.userid} PASSWORD {author}\n"

        subject = subjects.MESSAGE_FROM(userid=sender.userid)
        sent = notify.player_text(
            session,
            req.settings,
            sender,
            users,
            subject,
            _verbatim(lines),
            req.now,
            capped=not req.trusted,
            tail=reply,
        )
        refused = sent.refused
        ids = [u.id for u in users]
        robot_ids = set(session.scalars(select(Robot.user_id).where(Robot.user_id.in_(ids))))
        robots = [u.userid for u in users if u.id in robot_ids]  # (they get no mail)
        if robots and len(robots) == len(users):
            raise Refused(f"{names(robots)}: {ROBOTS_READ_NOTHING}")
        if refused and not sent.mails:
            raise Refused(not_sent("your message", refused))
        reached = [u.userid for u in users if u.userid not in refused and u.userid not in robots]
    head = [f"Your message went to {', '.join(reached)}:", "", text]
    if refused:
        head += ["", not_sent("It", refused)]
    if robots:
        head += ["", f"Not to {names(robots)}: {ROBOTS_READ_NOTHING}"]
    answer(call.ctx, subjects.server("message"), _verbatim(head))


ROBOTS_READ_NOTHING = "robots read no messages (they have no mail)."


def _verbatim(lines: list[str]) -> str:
    """Lines with a player's message among them: nothing is wrapped."""
    return render("mail/text.txt.j2", lines=lines)


def _admin(call: Call) -> str:
    return admin(call)


def broadcast(call: Call) -> None:
    """broadcast [USERID PASSWORD]: the mail body to every player (administrators only)."""
    req = call.req
    _, text = _message_text(req, call.args["options"])
    admin = _admin(call)
    if not text:
        raise Refused("nothing to say: write the message in the mail body")
    with req.sessions() as session, session.begin():
        query = select(User).options(selectinload(User.addresses))
        users = [u for u in session.scalars(query) if not u.closed]
        lines = [f"A message to every player of this server (from {admin}):", "", text]
        count = notify.mail_users(
            session, users, subjects.server("broadcast"), _verbatim(lines), req.now
        )
    answer(call.ctx, subjects.server("broadcast"), f"The message went to {count} addresses.\n")


# ----------------------------------------------------------------------------- all show


def all_show(call: Call) -> None:
    """all show USERID [next|active]: the boards of a player in every game."""
    req, usage = call.req, call.usage
    if call.args["what"].lower() != "show":  # (the word itself: maybe a misplaced password)
        raise click.UsageError(f"'all' has one command, show; usage: {usage}")
    which = (call.args.get("which") or "active").lower()
    if which not in ("next", "active"):
        raise click.UsageError(f"'{which}' is not next or active; usage: {usage}")
    with req.sessions() as session:
        user = accounts.find_user(session, call.args["userid"])
        if user is None:
            raise Refused(no_player(req, call.args["userid"], 1))
        query = (
            select(Board)
            .where(Board.status == BoardStatus.active)
            .where(Board.id.in_(select(Seat.board_id).where(Seat.user_id == user.id)))
            .order_by(Board.game, Board.number)
        )
        parts: list[str] = []
        found = 0
        for board in session.scalars(query):
            position = boards.position_of(board)
            mover = board.user_to_move(position)
            if which == "next" and (mover is None or mover.id != user.id):
                continue
            found += 1
            if len(parts) < MAX_NAMED:  # (a command draws at most so many)
                parts.append(board_mail_body(board, position, due=deadlines.due(board, position)))
        userid = user.userid
    subject = subjects.BOARDS_OF(userid=userid)
    if not parts:
        answer(call.ctx, subject, f"{userid} has no {which} boards.\n")
        return
    head = f"{found} {which} board{'s' if found != 1 else ''} of {userid}.\n"
    if found > len(parts):
        head += f"The first {len(parts)} are drawn: a command draws at most {MAX_NAMED}.\n"
    answer(call.ctx, subject, head + "\n" + SEPARATOR.join(parts))


# ----------------------------------------------------------------------------- game commands


def showas(call: Call) -> None:
    """GAME showas BOARD USERID PASSWORD (or the classic USERID PASSWORD BOARD): the board
    from that player's seat."""
    game, userid = call.game, call.args["userid"]
    user_id, number = call_login(call), board_arg(call)
    with call.req.sessions() as session:
        board = load_board(session, game, number)
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
                private.append(f"Your submitted move ({label}): {seat.submitted_move}")
        due = deadlines.due(board, position)
        body = board_mail_body(board, position, all_moves=True, with_comment=True, due=due)
        if private:
            body += "\nOnly for you:\n" + "".join(f"  {line}\n" for line in private)
        body += reply_line(board, position, user, channel=call.req.channel)
        subject, key = board_subject(board, position), board_key(board)
    answer(call.ctx, subject, body, board=key, summary=f"{key} shown.")


def preview_new(call: Call) -> None:
    """GAME preview new [-players=N] [-PARAM[=V]] MOVE...: moves from the start of a new game,
    of the fewest players its parameters allow unless ``-players=N`` says how many."""
    game, words = call.game, call.args["moves"]
    count_words = [w for w in words if _players_word(w)]
    params_words = [w for w in words if w.startswith("-") and not _players_word(w)]
    moves = [w for w in words if not w.startswith("-")]
    at_most(moves, "moves", MAX_PREVIEW_MOVES)
    try:
        params = game.parse_params(params_words)
    except ParamError as exc:
        raise Refused(f"preview of a new game: {exc}") from None
    if count_words:
        players = _players_count(game, count_words, params)
    else:
        players = _fewest_players(game, params)
    position = game.new(players, params)
    played = []
    for text in moves:
        try:
            value = position.parse_move(text)
        except MoveError as exc:
            raise Refused(preview_stop(text, exc, position)) from None
        played.append(position.format_move(value))
        position.play(value)
    what = f"a new {game.display_name} game ({players} players)"
    answer(
        call.ctx,
        subjects.game(game.display_name, "Preview"),
        preview_body(what, 0, played, position),
    )


PLAYERS_WORD = "-players"


def _players_word(word: str) -> bool:
    """Whether ``word`` says how many play a previewed new game (``-players=3``)."""
    return word.partition("=")[0].lower() == PLAYERS_WORD


def _players_count(game: Game, words: list[str], params: dict[str, bool | int]) -> int:
    """The number of players ``-players=N`` gives, checked against the game and ``params``
    (a game's own counts, as a challenge checks them)."""
    values = {w.partition("=")[2] for w in words}
    if len(values) > 1:
        raise Refused("preview of a new game: give -players=N once")
    count = whole_number(values.pop())
    if count is None:
        raise Refused(
            "preview of a new game: -players needs a number: -players=N, N being "
            + game.player_counts
        )
    try:
        game.check_players(count, {**game.defaults(), **params})
    except PlayersError as exc:
        raise Refused(f"preview of a new game: {exc}") from None
    return count


def _fewest_players(game: Game, params: dict[str, bool | int]) -> int:
    """The fewest players a new game with ``params`` is for (``ploy preview new -partnership``
    needs four: with two it failed as a bug, exit 70)."""
    full = {**game.defaults(), **params}
    problems: list[str] = []
    for count in game.players:
        try:
            game.check_players(count, full)
        except PlayersError as exc:
            problems += [str(exc)] if str(exc) not in problems else []
            continue
        return count
    raise Refused(f"preview of a new game: {'; '.join(problems)}")


def subscribe_all(call: Call) -> None:
    """GAME subscribe all USERID PASSWORD: spectate every active board of the game."""
    game, req, userid = call.game, call.req, call.args["userid"]
    user_id = call_login(call)
    with req.sessions() as session, session.begin():
        query = select(Board).where(Board.game == game.name, Board.status == BoardStatus.active)
        added, already = [], []
        for board in session.scalars(query.order_by(Board.number)):
            if any(s.user_id == user_id for s in board.seats):
                continue
            found = next((s for s in board.subscriptions if s.user_id == user_id), None)
            if found is None:
                board.subscriptions.append(Subscription(user_id=user_id, kind=SubscriptionKind.all))
            elif found.kind != SubscriptionKind.all:
                found.kind = SubscriptionKind.all
            else:
                already.append(str(board.number))
                continue
            added.append(str(board.number))
    name = game.display_name
    what = ", ".join(added) if added else "none (no other active boards)"
    lines = [f"{userid} now gets every mail of these {name} boards: {what}."]
    if already:  # (subscribed before: nothing new)
        lines = lines if added else []
        lines.append(f"{userid} already gets every mail of {name} boards {', '.join(already)}.")
    answer(call.ctx, subjects.game(name, "subscribe all"), _text(lines))


TEXT_OPTION = ("text",)
TOP_COMMANDS: tuple[Command, ...] = (
    Command(
        "message",
        message,
        "The mail body (or --text=TEXT) to players you share an unfinished board with.",
        (
            Arg("userid", Kind.USERID),
            Arg("password", Kind.PASSWORD),
            Arg("to", Kind.TEXT, many=True, metavar="TO..."),
            Arg("options", Kind.OPTIONS, metavar="[--text=TEXT]", takes_value=TEXT_OPTION),
        ),
        plain_word=True,
    ),
    Command(
        "broadcast",
        broadcast,
        "The mail body (or --text=TEXT) to every player (administrators only).",
        (
            Arg("userid", Kind.USERID, optional=True),
            Arg("password", Kind.PASSWORD, optional=True),
            Arg("options", Kind.OPTIONS, metavar="[--text=TEXT]", takes_value=TEXT_OPTION),
        ),
        plain_word=True,
    ),
    Command(
        "all",
        all_show,
        "The boards of a player in every game (next: where he is to move).",
        (
            Arg("what", Kind.TEXT, metavar="show"),
            Arg("userid", Kind.USERID),
            Arg("which", Kind.TEXT, optional=True, metavar="[next|active]"),
        ),
        plain_word=True,
    ),
)
GAME_COMMANDS: tuple[Command, ...] = (
    Command(
        "showas",
        showas,
        "The board from your seat, with what only you see (queued and submitted moves).",
        (Arg("board", Kind.BOARD), Arg("userid", Kind.USERID), Arg("password", Kind.PASSWORD)),
        orders=(("userid", "password", "board"),),  # the classic servers' order
    ),
)

"""The community commands: spectators, chat, queued and two-step moves, standings, and the
account settings about challenges and time (accept, reject, limit, seek, vacation).

Who gets which board mail (:func:`audience`): every player and every ``subscribe`` spectator
gets every board mail; a ``notify`` spectator only the mail that ends the game.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import click
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pbmserv import boards, clocks, ratings
from pbmserv.commands.common import (
    login,
    need,
    notify_users,
    parse_board_number,
    raw_command,
    take_password,
)
from pbmserv.dispatch import Refused, Request, answer, with_request
from pbmserv.games.base import Game, MoveError, UnreadableMove
from pbmserv.render import render, render_board
from pbmserv.store.models import Board, BoardStatus, Seat, Subscription, User
from pbmserv.views import board_mail_body

GAME_ALIASES = {
    "sub": "subscribe",
    "unsub": "unsubscribe",
    "qmove": "queue",
    "ratings": "standings",
}


# ----------------------------------------------------------------------------- fan-out


def audience(board: Board) -> list[User]:
    """Everybody who gets this board's mail now: players, spectators, and at the end the
    result-only spectators."""
    users: list[User] = []
    finished = board.status is not BoardStatus.active
    for user in [s.user for s in board.seats] + [
        s.user for s in board.subscriptions if s.kind == "all" or finished
    ]:
        if all(u.id != user.id for u in users):
            users.append(user)
    return users


# ----------------------------------------------------------------------------- challenge limits


def active_games(session: Session, user: User) -> int:
    return (
        session.scalar(
            select(func.count(func.distinct(Board.id)))
            .join(Seat, Seat.board_id == Board.id)
            .where(Seat.user_id == user.id, Board.status == BoardStatus.active)
        )
        or 0
    )


def over_limit(session: Session, user: User) -> str | None:
    """Why ``user`` cannot take one more game (his ``limit``), or None."""
    if user.game_limit is None:
        return None
    count = active_games(session, user)
    if count >= user.game_limit:
        return f"{user.userid} has {count} active games and takes at most {user.game_limit}"
    return None


def after_challenge(users: list[User]) -> None:
    """A new game counts against what each player is seeking."""
    for user in users:
        if user.seeking:
            user.seeking -= 1


# ----------------------------------------------------------------------------- helpers


def _board_login(
    game: Game, req: Request, words: list[str], usage: str
) -> tuple[int, int, list[str]]:
    need(words, 2, usage)
    number, _ = parse_board_number(words.pop(0))
    userid = words.pop(0)
    password = take_password(req, words, 0, userid)
    return number, login(req, userid, password), words


def _load(session: Session, game: Game, number: int, *, lock: bool = False) -> Board:
    from pbmserv.commands.games import _load_board

    return _load_board(session, game, number, lock=lock)


def _user(session: Session, user_id: int) -> User:
    user = session.get(User, user_id)
    assert user is not None
    return user


def _text(lines: list[str]) -> str:
    return render("mail/text.txt.j2", lines=lines)


# ----------------------------------------------------------------------------- spectators


def _subscribe(game: Game, req: Request, ctx: click.Context, words: list[str], kind: str) -> None:
    word = "subscribe" if kind == "all" else "notify"
    number, user_id, _ = _board_login(game, req, words, f"{game.name} {word} BOARD USERID PASSWORD")
    with req.sessions() as session, session.begin():
        board = _load(session, game, number)
        user = _user(session, user_id)
        if boards.seats_of(board, user):
            raise Refused(f"{user.userid} plays on board {number} and gets its mail anyway")
        if board.status is not BoardStatus.active:
            raise Refused(f"{game.display_name} board {number} is over")
        found = next((s for s in board.subscriptions if s.user_id == user.id), None)
        if found is None:
            board.subscriptions.append(Subscription(user=user, kind=kind))
        else:
            found.kind = kind
        session.flush()
        what = "every mail" if kind == "all" else "the result only"
        lines = [f"{user.userid} now gets {what} of {game.display_name} board {number}."]
        body = _text(lines) + "\n" + board_mail_body(board, boards.position_of(board))
    answer(ctx, f"{game.display_name} Board {number} {word}", body)


def subscribe(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    _subscribe(game, req, ctx, words, "all")


def notify(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    _subscribe(game, req, ctx, words, "result")


def unsubscribe(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    usage = f"{game.name} unsubscribe BOARD USERID PASSWORD"
    number, user_id, _ = _board_login(game, req, words, usage)
    with req.sessions() as session, session.begin():
        board = _load(session, game, number)
        found = next((s for s in board.subscriptions if s.user_id == user_id), None)
        user = _user(session, user_id)
        if found is None:
            raise Refused(f"{user.userid} is not subscribed to board {number}")
        board.subscriptions.remove(found)
    answer(
        ctx,
        f"{game.display_name} Board {number} unsubscribe",
        f"{user.userid} gets no more mail of {game.display_name} board {number}.\n",
    )


# ----------------------------------------------------------------------------- chat


def chat(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    number, user_id, rest = _board_login(
        game, req, words, f"{game.name} chat BOARD USERID PASSWORD [TEXT...]"
    )
    text = (" ".join(rest) or req.comment).strip()
    if not text:
        raise Refused("nothing to say: write the message in the mail body (or after the password)")
    with req.sessions() as session, session.begin():
        board = _load(session, game, number)
        user = _user(session, user_id)
        listeners = [
            u for u in [s.user for s in board.seats] + [s.user for s in board.subscriptions]
        ]
        if all(u.id != user.id for u in listeners):
            raise Refused(f"only the players and spectators of board {number} may chat there")
        subject = f"{game.display_name} Board {number} Chat"
        body = render("mail/chat.txt.j2", userid=user.userid, text=text, number=number, game=game)
        seen: list[User] = []
        for u in listeners:
            if all(s.id != u.id for s in seen):
                seen.append(u)
        notify_users(session, req, seen, subject, body, skip=user)
    answer(ctx, subject, body)


# ----------------------------------------------------------------------------- queue, submit


def queue(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    usage = f"{game.name} queue BOARD USERID PASSWORD MOVE|cancel"
    number, user_id, rest = _board_login(game, req, words, usage)
    text = "".join(rest)
    if not text:
        raise click.UsageError(f"the move is missing; usage: {usage}")
    if len(text) > 64:
        raise Refused("a queued move has at most 64 characters")
    with req.sessions() as session, session.begin():
        board = _load(session, game, number, lock=True)
        user = _user(session, user_id)
        position = boards.position_of(board)
        seats = [board.seats[i] for i in boards.seats_of(board, user)]
        if not seats:
            raise Refused(f"{user.userid} does not play on board {number}")
        if board.status is not BoardStatus.active:
            raise Refused(f"{game.display_name} board {number} is over")
        mover = boards.user_to_move(board, position)
        play_now = mover is not None and mover.id == user.id
        lines: list[str] = []
        if text.lower() == "cancel":
            for seat in seats:
                seat.queued_move = None
            lines.append(f"The queued move of {user.userid} on board {number} is cancelled.")
        elif not play_now:
            copy = game.position_class.deserialize(position.serialize())
            try:
                copy.parse_move(text)
            except UnreadableMove as exc:
                raise Refused(f"cannot queue '{text}': {exc}") from None
            except MoveError as exc:
                lines.append(
                    f"Note: '{text}' is not legal in the current position ({exc}); "
                    "it is checked again when your turn comes."
                )
            if text.lower() == "resign":
                boards.queue_resign(board, user)
            else:
                for seat in seats:
                    seat.queued_move = text
            lines.insert(
                0,
                f"The move {text} of {user.userid} on {game.display_name} board {number} "
                "is queued: it is played when your turn comes.",
            )
    if play_now and text.lower() != "cancel":
        from pbmserv.commands.games import _play, resign

        if text.lower() == "resign":
            resign(game, req, ctx, number, user_id)
        else:
            _play(game, req, ctx, number, user_id, text, None)
        return
    answer(ctx, f"{game.display_name} Board {number} queue", _text(lines))


def submit(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    usage = f"{game.name} submit BOARD USERID PASSWORD MOVE"
    number, user_id, rest = _board_login(game, req, words, usage)
    text = "".join(rest)
    if not text:
        raise click.UsageError(f"the move is missing; usage: {usage}")
    from pbmserv.commands.games import _board_error

    with req.sessions() as session, session.begin():
        board = _load(session, game, number, lock=True)
        user = _user(session, user_id)
        position = boards.position_of(board)
        mover = boards.user_to_move(board, position)
        if mover is None or mover.id != user.id:
            who = mover.userid if mover else "nobody"
            raise _board_error(board, position, f"it is not your turn: {who} is to move")
        copy = game.position_class.deserialize(position.serialize())
        try:
            move = copy.parse_move(text)
        except MoveError as exc:
            raise _board_error(board, position, f"illegal move '{text}': {exc}") from None
        shown = copy.format_move(move)
        copy.play(move)
        ply = len(board.moves) + 1
        for seat in boards.seats_of(board, user):
            board.seats[seat].submitted_move = f"{text}#{ply}"
        lines = [
            f"Your move {shown} (move {ply}) on {game.display_name} board {number} is stored "
            "but not played.",
            f"To play it send: {game.name} confirm {number} {user.userid} PASSWORD",
            "The board after the move:",
        ]
        body = _text(lines) + "\n" + render_board(copy)
        outcome = copy.outcome()
        if outcome is not None:
            body += f"\nThe game would end: {outcome.reason}.\n"
    answer(ctx, f"{game.display_name} Board {number} Submitted", body)


def confirm(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    usage = f"{game.name} confirm BOARD USERID PASSWORD"
    number, user_id, _ = _board_login(game, req, words, usage)
    with req.sessions() as session, session.begin():
        board = _load(session, game, number, lock=True)
        user = _user(session, user_id)
        pending = [board.seats[i] for i in boards.seats_of(board, user)]
        found = next((s.submitted_move for s in pending if s.submitted_move), None)
        if found is None:
            raise Refused(f"{user.userid} has no submitted move on board {number}")
        for seat in pending:
            seat.submitted_move = None
    from pbmserv.commands.games import _play

    text, _, ply = found.rpartition("#")
    _play(game, req, ctx, number, user_id, text, int(ply))


# ----------------------------------------------------------------------------- standings


def standings(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
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
    answer(ctx, f"{game.display_name} Standings", body)


GAME_COMMANDS = [
    ("subscribe", subscribe, "BOARD USERID PASSWORD", "Spectate: get every mail of the board."),
    ("unsubscribe", unsubscribe, "BOARD USERID PASSWORD", "Stop spectating the board."),
    ("notify", notify, "BOARD USERID PASSWORD", "Get only the final mail of the board."),
    (
        "chat",
        chat,
        "BOARD USERID PASSWORD [TEXT...]",
        "Send the mail body to the players and spectators (players and spectators only).",
    ),
    (
        "queue",
        queue,
        "BOARD USERID PASSWORD MOVE|cancel",
        "A move played automatically when your turn comes.",
    ),
    (
        "submit",
        submit,
        "BOARD USERID PASSWORD MOVE",
        "Store a move and mail back the board after it; 'confirm' plays it.",
    ),
    ("confirm", confirm, "BOARD USERID PASSWORD", "Play the move stored by 'submit'."),
    ("standings", standings, "", "Ratings: established, provisional and inactive players."),
]


def add_game_commands(game: Game, group: click.Group) -> None:
    from pbmserv.commands.games import _make

    for name, fn, metavar, help_text in GAME_COMMANDS:
        group.add_command(_make(game, name, fn, metavar, help_text))
    group.aliases.update(GAME_ALIASES)  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- account settings


def _account(req: Request, args: tuple[str, ...], usage: str) -> tuple[int, list[str]]:
    words = list(args)
    need(words, 1, usage)
    userid = words.pop(0)
    password = take_password(req, words, 0, userid)
    return login(req, userid, password), words


def _accept(req: Request, ctx: click.Context, args: tuple[str, ...], accepts: bool) -> None:
    word = "accept" if accepts else "reject"
    user_id, _ = _account(req, args, f"{word} USERID PASSWORD")
    with req.sessions() as session, session.begin():
        user = _user(session, user_id)
        user.accepts_challenges = accepts
        if not accepts:
            user.seeking = 0
        userid = user.userid
    text = "accepts challenges" if accepts else "does not accept challenges any more"
    answer(ctx, f"pbmserv {word}", f"{userid} {text}.\n")


def accept_command(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    _accept(req, ctx, args, True)


def reject_command(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    _accept(req, ctx, args, False)


def _count(word: str, usage: str, *, none_ok: bool) -> int | None:
    if none_ok and word.lower() in ("none", "off", "0"):
        return None
    if not word.isdigit() or int(word) > 1000:
        raise click.UsageError(f"'{word}' is not a number of games; usage: {usage}")
    return int(word)


def limit_command(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    usage = "limit USERID PASSWORD N|none"
    user_id, words = _account(req, args, usage)
    need(words, 1, usage)
    limit = _count(words[0], usage, none_ok=True)
    with req.sessions() as session, session.begin():
        user = _user(session, user_id)
        user.game_limit = limit
        active = active_games(session, user)
        userid = user.userid
    text = f"at most {limit} active games" if limit is not None else "any number of games"
    answer(ctx, "pbmserv limit", f"{userid} takes {text} (now {active} active).\n")


def seek_command(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    usage = "seek USERID PASSWORD N"
    user_id, words = _account(req, args, usage)
    need(words, 1, usage)
    count = _count(words[0], usage, none_ok=False) or 0
    with req.sessions() as session, session.begin():
        user = _user(session, user_id)
        user.seeking = count
        if count:
            user.accepts_challenges = True
        userid = user.userid
    text = (
        f"{userid} seeks {count} more games: shown in the standings of every game; each new "
        "game counts one off."
        if count
        else f"{userid} seeks no games."
    )
    answer(ctx, "pbmserv seek", text + "\n")


def vacation_command(req: Request, ctx: click.Context, args: tuple[str, ...]) -> None:
    usage = "vacation USERID PASSWORD [DAYS|off]"
    user_id, words = _account(req, args, usage)
    now = req.now
    allowance = clocks.VACATION_DAYS_PER_YEAR
    with req.sessions() as session, session.begin():
        user = _user(session, user_id)
        current = clocks.on_vacation(user, now)
        if words:
            word = words[0].lower()
            if word != "off":
                try:
                    days = float(word)
                except ValueError:
                    days = 0.0
                if not 0 < days <= allowance:
                    raise click.UsageError(f"give 1 to {allowance} days or 'off'; usage: {usage}")
            if current:  # give back what is left of the running vacation
                assert user.vacation_until is not None
                left = (user.vacation_until - now).total_seconds() / clocks.DAY
                user.vacation_used = max(0.0, (user.vacation_used or 0.0) - left)
                user.vacation_until = now
            if word == "off" and not current:
                raise Refused(f"{user.userid} is not on vacation")
            if word != "off":
                if user.vacation_year != now.year:
                    user.vacation_year, user.vacation_used = now.year, 0.0
                if (user.vacation_used or 0.0) + days > allowance + 1e-9:
                    left = allowance - (user.vacation_used or 0.0)
                    raise Refused(
                        f"{user.userid} has {_days(left)} vacation days left in {now.year} "
                        f"(of {allowance})"
                    )
                user.vacation_used = (user.vacation_used or 0.0) + days
                user.vacation_until = now + timedelta(days=days)
        lines = [_vacation_status(user, now)]
    answer(ctx, "pbmserv vacation", _text(lines))


def _vacation_status(user: User, now: datetime) -> str:
    allowance = clocks.VACATION_DAYS_PER_YEAR
    used = (user.vacation_used or 0.0) if user.vacation_year == now.year else 0.0
    if clocks.on_vacation(user, now):
        assert user.vacation_until is not None
        state = f"{user.userid} is on vacation until {user.vacation_until:%Y-%m-%d %H:%M} UTC"
    elif clocks.protected(user, now):
        state = f"{user.userid} is back from vacation (no forfeits for {clocks.GRACE_DAYS} days)"
    else:
        state = f"{user.userid} is not on vacation"
    return f"{state}; {_days(used)} of {allowance} vacation days used in {now.year}."


def _days(value: float) -> str:
    """Vacation days to one decimal: what is given back after ``vacation off`` is a fraction."""
    return f"{max(0.0, round(value, 1)):g}"


AccountFn = Callable[[Request, click.Context, tuple[str, ...]], None]

ACCOUNT_COMMANDS: list[tuple[str, AccountFn, str, str]] = [
    ("accept", accept_command, "USERID PASSWORD", "Take challenges (the default)."),
    ("reject", reject_command, "USERID PASSWORD", "Take no challenges."),
    ("limit", limit_command, "USERID PASSWORD N|none", "Take at most N active games in all."),
    ("seek", seek_command, "USERID PASSWORD N", "Seek N more games (shown in the standings)."),
    (
        "vacation",
        vacation_command,
        "USERID PASSWORD [DAYS|off]",
        "No nags or forfeits for DAYS (42 a year; 2 days grace after).",
    ),
]


def register_community_commands(group: click.Group) -> None:
    for name, fn, metavar, help_text in ACCOUNT_COMMANDS:
        group.add_command(raw_command(name, with_request(fn), metavar, help_text))

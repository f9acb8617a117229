"""The commands of each game: challenge, move, swap, resign, show, games, history, preview, help."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from pbmserv import accounts, boards
from pbmserv.commands import community
from pbmserv.commands.common import (
    login,
    need,
    notify_users,
    parse_board_number,
    raw_command,
    reader_tail,
    take_password,
)
from pbmserv.dispatch import Refused, Request, answer, request
from pbmserv.games.base import Game, MoveError, ParamError, PlayersError, Position
from pbmserv.render import render, render_board
from pbmserv.store.models import Board, BoardStatus, Seat, User
from pbmserv.views import (
    board_key,
    board_mail_body,
    board_subject,
    game_name,
    reply_tail,
    turn_line,
)

OPTIONS = {
    "nagtime": "days without a move before a reminder",
    "forfeittime": "days without a move before the player to move forfeits",
    "totaltime": "days each player may use in all (a chess clock)",
    "unrated": "the game does not count for the ratings",
}
VOTE_WORDS = ("propose", "undo", "accept", "reject")


# ----------------------------------------------------------------------------- helpers


def _load_board(session: Session, game: Game, number: int, *, lock: bool = False) -> Board:
    try:
        return boards.find_board(session, game, number, for_update=lock)
    except boards.BoardError as exc:
        raise Refused(str(exc), subject=f"{game.display_name} Board {number} error") from None


def _board_error(board: Board, position: Position, message: str, tail: str = "") -> Refused:
    """An error about a board: the message, then the board as it stands (and ``tail``: the
    line to send back, when the sender is the player to move)."""
    body = "The board is unchanged:\n\n" + board_mail_body(board, position) + tail
    subject = f"{game_name(board)} Board {board.number} error"
    return Refused(message, subject=subject, body=body, board=board_key(board))


def _players(board: Board) -> list[User]:
    return [seat.user for seat in board.seats]


def _parse_options(tokens: list[str]) -> tuple[dict[str, Any], list[str]]:
    options: dict[str, Any] = {}
    problems = []
    for token in tokens:
        key, sep, value = token[2:].partition("=")
        key = key.lower()
        matches = [name for name in OPTIONS if name.startswith(key)] if key else []
        if len(matches) != 1:
            valid = ", ".join(f"--{n}" for n in OPTIONS)
            problems.append(f"unknown option '{token}'; valid options: {valid}")
            continue
        name = matches[0]
        if name == "unrated":
            options[name] = True
            continue
        try:
            days = float(value)
            if days <= 0:
                raise ValueError
        except ValueError:
            problems.append(f"--{name} needs a number of days, as in --{name}=7")
            continue
        options[name] = days
    return options, problems


# ----------------------------------------------------------------------------- challenge


def challenge(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    players = [w for w in words if not w.startswith("-")]
    params_tokens = [w for w in words if w.startswith("-") and not w.startswith("--")]
    option_tokens = [w for w in words if w.startswith("--")]
    problems: list[str] = []
    options, option_problems = _parse_options(option_tokens)
    problems += option_problems
    params: dict[str, bool | int] = game.defaults()
    try:
        params = game.parse_params(params_tokens)
    except ParamError as exc:
        problems.append(str(exc))
    userids = [accounts.normalise_userid(p) for p in players]
    if len(set(userids)) != len(userids):
        problems.append("a player is named twice")
    try:
        game.check_players(len(userids), params)
    except PlayersError as exc:
        problems.append(str(exc))
    with req.sessions() as session, session.begin():
        users = []
        for userid in userids:
            user = accounts.find_user(session, userid)
            if user is None or user.password_hash.startswith("!"):
                problems.append(f"there is no player '{userid}'")
            elif not user.accepts_challenges:
                problems.append(f"{userid} does not accept challenges")
            elif reason := community.over_limit(session, user):
                problems.append(reason)
            else:
                users.append(user)
        if not req.trusted and users:
            sender = (req.sender or "").lower()
            if not any(a.address == sender for u in users for a in u.addresses):
                problems.append(
                    "a challenge by mail must come from an address registered to one of the players"
                )
        if problems:
            raise Refused(
                "Invalid challenge: " + "; ".join(problems),
                subject=f"{game.display_name} error",
                body=f"Usage: {game.name} challenge USERID1 USERID2 ... [-param[=value]] [--option=value]\n"
                + "Parameters: "
                + (", ".join(p.describe() for p in game.params) or "none"),
            )
        board, position = boards.create_board(session, game, users, params, options, req.now)
        community.after_challenge(users)
        notes: list[str] = []
        boards.run_automatic(board, position, now=req.now, notes=notes)
        body = board_mail_body(board, position, notes=notes)
        subject = board_subject(board, position, new=True)
        tail = reply_tail(board, position)
        notify_users(session, req, users, subject, body, tail=tail, board=board)
        body += reader_tail(session, req, board, position)
        key, summary = board_key(board), f"New board: {turn_line(board, position)}"
    answer(ctx, subject, body, board=key, summary=summary)


# ----------------------------------------------------------------------------- move


def move(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    usage = f"{game.name} move BOARD USERID PASSWORD MOVE[#N]"
    need(words, 2, usage)
    number, _ = parse_board_number(words.pop(0))
    userid = words.pop(0)
    password = take_password(req, words, 0, userid)
    text = "".join(words)
    user_id = login(req, userid, password)
    if not text:  # `move BOARD USERID PASSWORD` alone mails the board
        _show_boards(game, req, ctx, [str(number)])
        return
    word = text.lower()
    if word == "resign":
        resign(game, req, ctx, number, user_id)
        return
    if word in VOTE_WORDS:
        _vote(game, req, ctx, number, user_id, word)
        return
    expected: int | None = None
    if "#" in text:
        text, _, n = text.rpartition("#")
        if n.isdigit():
            expected = int(n)
        else:
            text = text + "#" + n  # Ploy's own '#' (game over) suffix
    _play(game, req, ctx, number, user_id, text, expected)


def _play(
    game: Game,
    req: Request,
    ctx: click.Context,
    number: int,
    user_id: int,
    text: str,
    expected: int | None,
) -> None:
    with req.sessions() as session, session.begin():
        board = _load_board(session, game, number, lock=True)
        user = session.get(User, user_id)
        assert user is not None
        position = boards.position_of(board)
        try:
            played = boards.play_move(
                session,
                board,
                position,
                user,
                text,
                now=req.now,
                source=req.source,
                expected_ply=expected,
                comment=req.comment,
            )
        except MoveError as exc:
            tail = reader_tail(session, req, board, position, user)
            raise _board_error(board, position, f"illegal move '{text}': {exc}", tail) from None
        except boards.BoardError as exc:
            tail = reader_tail(session, req, board, position, user)
            raise _board_error(board, position, str(exc), tail) from None
        _announce(session, req, ctx, played.board, played.position, played.notes, user)


def _announce(
    session: Session,
    req: Request,
    ctx: click.Context,
    board: Board,
    position: Position,
    notes: list[str],
    actor: User | None,
    *,
    new: bool = False,
) -> None:
    """The board mail to the sender, and the same mail to every other player and spectator."""
    body = board_mail_body(board, position, notes=notes, comment_ply=len(board.moves))
    subject = board_subject(board, position, new=new)
    notify_users(
        session,
        req,
        community.audience(board),
        subject,
        body,
        skip=actor,
        tail=reply_tail(board, position),
        board=board,
    )
    answer(
        ctx,
        subject,
        body + reader_tail(session, req, board, position, actor),
        board=board_key(board),
        summary=_summary(board, position, notes),
    )


def _summary(board: Board, position: Position, notes: list[str]) -> str:
    """One line on what a command did to a board, for a mail whose answer draws it later."""
    last = f"Last move: {board.moves[-1].ply}. {board.moves[-1].text}." if board.moves else ""
    return " ".join(x for x in [*notes, last, turn_line(board, position)] if x)


def swap(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    need(words, 2, f"{game.name} swap BOARD USERID PASSWORD")
    number, _ = parse_board_number(words.pop(0))
    userid = words.pop(0)
    password = take_password(req, words, 0, userid)
    user_id = login(req, userid, password)
    _play(game, req, ctx, number, user_id, "swap", None)


def resign_command(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    need(words, 2, f"{game.name} resign BOARD USERID PASSWORD")
    number, _ = parse_board_number(words.pop(0))
    userid = words.pop(0)
    password = take_password(req, words, 0, userid)
    resign(game, req, ctx, number, login(req, userid, password))


def resign(game: Game, req: Request, ctx: click.Context, number: int, user_id: int) -> None:
    """Resign at once on your turn; out of turn it is queued.  Before your first move it declines."""
    with req.sessions() as session, session.begin():
        board = _load_board(session, game, number, lock=True)
        user = session.get(User, user_id)
        assert user is not None
        position = boards.position_of(board)
        seats = boards.seats_of(board, user)
        if board.status is not BoardStatus.active:
            raise _board_error(board, position, "the game is over")
        if not seats:
            raise _board_error(board, position, f"{user.userid} does not play on board {number}")
        if not board.options.get("tournament") and not any(
            boards.has_moved(board, s) for s in seats
        ):  # a tournament game cannot be declined: resigning it loses it
            note, new_position = boards.decline(session, board, user, req.now)
            others = _players(board)
            if new_position is None:
                body = render("mail/text.txt.j2", lines=[note])
                subject = f"{game.display_name} Board {number}"
                notify_users(session, req, others, subject, body, skip=user)
                answer(ctx, subject, body)
                return
            _announce(session, req, ctx, board, new_position, [note], user, new=True)
            return
        mover = boards.user_to_move(board, position)
        if mover is None or mover.id != user.id:
            boards.queue_resign(board, user)
            body = (
                f"Your resignation on {game.display_name} board {number} is queued: it takes "
                "effect when your turn comes.\n"
            )
            answer(
                ctx,
                f"{game.display_name} Board {number} {mover.userid if mover else ''}".rstrip(),
                body,
            )
            return
        played = boards.play_move(
            session,
            board,
            position,
            user,
            "resign",
            now=req.now,
            source=req.source,
            comment=req.comment,
        )
        _announce(session, req, ctx, played.board, played.position, played.notes, user)


def _vote(
    game: Game, req: Request, ctx: click.Context, number: int, user_id: int, word: str
) -> None:
    with req.sessions() as session, session.begin():
        board = _load_board(session, game, number, lock=True)
        user = session.get(User, user_id)
        assert user is not None
        position = boards.position_of(board)
        if not boards.seats_of(board, user):
            raise _board_error(board, position, f"{user.userid} does not play on board {number}")
        try:
            note, position = boards.vote(session, board, position, user, word, req.now)
        except boards.BoardError as exc:
            raise _board_error(board, position, str(exc)) from None
        _announce(session, req, ctx, board, position, [note], user)


# ----------------------------------------------------------------------------- show, games, history


def show(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    need(words, 1, f"{game.name} show BOARD[#K]... | USERID... [active|inactive|next]")
    if words[0][0].isdigit():
        _show_boards(game, req, ctx, words)
        return
    filters = [w.lower() for w in words if w.lower() in ("active", "inactive", "next")]
    userids = [w for w in words if w.lower() not in ("active", "inactive", "next")]
    with req.sessions() as session:
        found = _select_boards(session, game, userids, filters[0] if filters else "active")
        numbers = [str(b.number) for b in found]
    if not numbers:
        answer(ctx, f"{game.display_name} Boards", "No boards match.\n")
        return
    _show_boards(game, req, ctx, numbers)


def _show_boards(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    parts = []
    subjects = []
    key: str | None = None
    with req.sessions() as session:
        for word in words:
            number, at = parse_board_number(word)
            board = _load_board(session, game, number)
            if at is not None and not 0 <= at <= len(board.moves):
                raise Refused(f"board {number} has {len(board.moves)} moves; there is no move {at}")
            position = boards.position_of(board) if at is None else boards.replay(board, at)
            parts.append(
                board_mail_body(
                    board, position, all_moves=True, at_ply=at, comment_ply=len(board.moves)
                )
                + ("" if at is not None else reader_tail(session, req, board, position))
            )
            subjects.append(board_subject(board, position))
            key = board_key(board) if at is None else None
    sep = "\n" + "=" * 72 + "\n\n"
    if len(subjects) == 1:
        answer(ctx, subjects[0], parts[0], board=key, summary=f"{key} shown.")
    else:
        answer(ctx, f"{game.display_name} Boards", sep.join(parts))


def _select_boards(
    session: Session, game: Game, userids: list[str], which: str, finished: bool = False
) -> list[Board]:
    query = (
        select(Board)
        .where(Board.game == game.name)
        .options(selectinload(Board.seats).selectinload(Seat.user))
        .order_by(Board.number)
    )
    if finished or which == "inactive":
        query = query.where(Board.status == BoardStatus.finished)
    elif which in ("active", "next"):
        query = query.where(Board.status == BoardStatus.active)
    users = []
    for userid in userids:
        user = accounts.find_user(session, userid)
        if user is None:
            raise Refused(f"there is no player '{accounts.normalise_userid(userid)}'")
        users.append(user)
        query = query.where(Board.id.in_(select(Seat.board_id).where(Seat.user_id == user.id)))
    found = list(session.scalars(query).unique())
    if which == "next":
        ids = {u.id for u in users}
        found = [
            b
            for b in found
            if (mover := boards.user_to_move(b, boards.position_of(b))) is not None
            and (not ids or mover.id in ids)
        ]
    return found


def games_table(req: Request, game: Game, words: list[str], *, finished: bool = False) -> str:
    filters = [w.lower() for w in words if w.lower() in ("active", "inactive", "next", "all")]
    userids = [w for w in words if w.lower() not in ("active", "inactive", "next", "all")]
    which = filters[0] if filters else ("inactive" if finished else "all")
    with req.sessions() as session:
        rows = []
        for board in _select_boards(session, game, userids, which, finished):
            position = boards.position_of(board)
            if board.status is BoardStatus.active:
                mover = boards.user_to_move(board, position)
                status = f"{mover.userid} to move" if mover else "waiting"
            else:
                status = _short_result(board)
            rows.append(
                (
                    board.number,
                    len(board.moves) + 1,
                    " ".join(s.user.userid for s in board.seats),
                    status,
                )
            )
    return render("mail/games.txt.j2", game=game.display_name, rows=rows)


def _short_result(board: Board) -> str:
    if board.winners:
        return "won by " + ", ".join(board.seats[w].user.userid for w in board.winners)
    return "tie" if board.status is BoardStatus.finished else board.status.value


def games(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    answer(ctx, f"List of {game.display_name} games", games_table(req, game, words))


def history(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    answer(ctx, f"{game.display_name} History", games_table(req, game, words, finished=True))


def preview(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    need(words, 1, f"{game.name} preview BOARD[#K] MOVE...")
    number, at = parse_board_number(words.pop(0))
    with req.sessions() as session:
        board = _load_board(session, game, number)
        position = boards.position_of(board) if at is None else boards.replay(board, at)
        played = []
        for text in words:
            try:
                move_value = position.parse_move(text)
            except MoveError as exc:
                raise _board_error(board, position, f"preview stops at '{text}': {exc}") from None
            played.append(position.format_move(move_value))
            position.play(move_value)
        start = len(board.moves) if at is None else at
        lines = [
            f"Preview of {game.display_name} board {number} after move {start}: "
            + (" ".join(played) or "no moves")
        ]
        lines.append("Nothing is stored.")
        body = render("mail/text.txt.j2", lines=lines) + "\n" + render_board(position)
        if position.outcome() is not None:
            body += f"\nThe game would end: {position.outcome().reason}.\n"  # type: ignore[union-attr]
    answer(ctx, f"{game.display_name} Board {number} Preview", body)


def game_help_command(game: Game, req: Request, ctx: click.Context, words: list[str]) -> None:
    from pbmserv.commands.accounts import game_help

    answer(ctx, f"{game.display_name} help", game_help(game.name))


# ----------------------------------------------------------------------------- the group

COMMANDS: list[tuple[str, Callable[..., None], str, str]] = [
    (
        "challenge",
        challenge,
        "USERID1 USERID2 [..] [-PARAM[=V]] [--OPTION=V]",
        "Start a new game at once; the first player moves first.",
    ),
    (
        "move",
        move,
        "BOARD USERID PASSWORD [MOVE[#N]]",
        "Make a move (or pass, swap, resign, propose, undo, accept, reject); #N refuses it unless it is move N.",
    ),
    (
        "swap",
        swap,
        "BOARD USERID PASSWORD",
        "Use the pie rule: exchange seats with the first player (second move only).",
    ),
    (
        "resign",
        resign_command,
        "BOARD USERID PASSWORD",
        "Resign (queued when it is not your turn; declines the game before your first move).",
    ),
    (
        "show",
        show,
        "BOARD[#K]... | USERID... [active|inactive|next]",
        "Mail the full board(s), at move K if given.",
    ),
    (
        "games",
        games,
        "[USERID...] [active|inactive|next]",
        "List boards: number, move, players, status.",
    ),
    ("history", history, "[USERID...]", "List finished games."),
    (
        "preview",
        preview,
        "BOARD[#K] MOVE...",
        "Show the board after hypothetical moves; nothing is stored.",
    ),
    ("help", game_help_command, "", "The rules of the game and its commands."),
]
ALIASES = {"chall": "challenge", "board": "move", "prev": "preview", "resig": "resign"}


def game_group(game: Game, group_class: type[click.Group]) -> click.Group:
    group = group_class(
        game.name,
        help=f"{game.display_name}: {game.summary}",
        aliases=ALIASES,  # type: ignore[call-arg]
    )
    for name, fn, metavar, help_text in COMMANDS:
        group.add_command(_make(game, name, fn, metavar, help_text))
    return group


def _make(
    game: Game, name: str, fn: Callable[..., None], metavar: str, help_text: str
) -> click.Command:
    @click.pass_context
    def callback(ctx: click.Context, args: tuple[str, ...]) -> None:
        fn(game, request(ctx), ctx, list(args))

    return raw_command(name, callback, metavar, help_text)

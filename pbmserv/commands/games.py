"""The commands of each game: challenge, move, swap, resign, preview (show, games and history
are in :mod:`pbmserv.commands.listing`)."""

from __future__ import annotations

import difflib
from typing import Any

import click
from sqlalchemy.orm import Session

from pbmserv.commands import classic
from pbmserv.commands.common import (
    MAX_NAMED,
    MAX_PREVIEW_MOVES,
    announce,
    at_most,
    board_arg,
    board_error,
    call_login,
    check_move_number,
    follow_up,
    load_board,
    move_error,
    no_player,
    parse_board_number,
    preview_body,
    preview_stop,
    queued_comment,
    reader_tail,
    sender_player,
    text,
    user,
    whole_number,
)
from pbmserv.commands.dispatch import REFUSED, USAGE, Refused, Request, answer, error_subject
from pbmserv.commands.listing import games, history, show, show_boards
from pbmserv.commands.spec import Arg, Call, Command, Kind
from pbmserv.domain import accounts, boards, confirmation, deadlines, limits, moves, notify
from pbmserv.domain.addresses import shown
from pbmserv.domain.players import out_of_play
from pbmserv.domain.proposals import open_vote
from pbmserv.games import get_game
from pbmserv.games.base import Game, MoveError, ParamError, PlayersError, Position, name_some
from pbmserv.numbers import MAX_CLOCK_DAYS, MIN_CLOCK_DAYS, clock_days
from pbmserv.render import subjects
from pbmserv.render.board_mail import (
    board_key,
    board_mail_body,
    board_subject,
    reply_tail,
    turn_line,
)
from pbmserv.render.templates import fill, hint, usage_line
from pbmserv.store.models import Board, BoardStatus, User

OPTIONS = {
    "nagtime": "days without a move before a reminder",
    "forfeittime": "days without a move before the player to move forfeits",
    "totaltime": "days each player may use in all (a chess clock)",
    "unrated": "the game does not count for the ratings",
}
VOTE_WORDS = ("propose", "undo", "accept", "reject")
CHALLENGE_OPTIONS = tuple(
    (f"--{name}" if name == "unrated" else f"--{name}=DAYS", meaning)
    for name, meaning in OPTIONS.items()
)


# ----------------------------------------------------------------------------- helpers


def _parse_options(tokens: list[str]) -> tuple[dict[str, Any], list[str], list[str]]:
    """The ``--name=value`` options of a challenge, what is wrong with them (each problem said
    once, however often it is typed: a line of thousands gets a short answer), and the tokens
    that name no option."""
    options: dict[str, Any] = {}
    problems = []
    unknown: list[str] = []
    for token in tokens:
        key, sep, value = token[2:].partition("=")
        name = key.lower()
        if name not in OPTIONS:  # (a prefix is no option: '--nagtim=3' is a slip, said so)
            unknown.append(token)
            continue
        if name in options:  # (--nagtime=3 --nagtime=7 took the last in silence)
            twice = f"--{name} is given twice: give it once"
            if twice not in problems:
                problems.append(twice)
            continue
        if name == "unrated":
            options[name] = True
            continue
        days = clock_days(value)
        if days is None:
            span = f"from {MIN_CLOCK_DAYS:g} to {MAX_CLOCK_DAYS:g}"
            said = f"--{name} needs a number of days {span}, as in --{name}=7"
            if said not in problems:
                problems.append(said)
            continue
        options[name] = days
    if unknown:
        valid = ", ".join(f"--{n}" for n in OPTIONS)
        meant = _meant(unknown[:MAX_NAMED])
        problems.append(f"unknown {name_some('option', unknown)}{meant}; valid options: {valid}")
    return options, problems, unknown


def _closest_option(word: str) -> str | None:
    """The option ``word`` (its dashes and value dropped) is a slip of, if one is close."""
    key = word.lstrip("-").partition("=")[0].lower()
    if key in OPTIONS:
        return key
    found = difflib.get_close_matches(key, OPTIONS, n=1, cutoff=0.6) if key else []
    return found[0] if found else None


def _meant(tokens: list[str]) -> str:
    """'' or ' (did you mean --nagtime?)', as click says it of a misspelt option of its own."""
    names = dict.fromkeys(n for n in map(_closest_option, tokens) if n is not None)
    return f" (did you mean {' or '.join(f'--{n}' for n in names)}?)" if names else ""


def _unknown_params(game: Game, tokens: list[str]) -> list[str]:
    """The ``-name[=value]`` tokens that name no parameter of ``game`` (nor a prefix of one)."""
    keys = ((t, t.lstrip("-").partition("=")[0].lower()) for t in tokens)
    return [t for t, key in keys if not any(p.name.startswith(key) for p in game.params)]


def _options_as_parameters(game: Game, tokens: list[str]) -> str:
    """The problem of options written with one dash ('-nagtime=3'), or '' when none is."""
    slips = [t for t in _unknown_params(game, tokens[:MAX_NAMED]) if _closest_option(t)]
    return f"an option is written with two dashes{_meant(slips)}" if slips else ""


# ----------------------------------------------------------------------------- challenge


def _misspelt(req: Request, game: Game, params: list[str], unknown: list[str]) -> int:
    """In a shell a challenge with a misspelt option or parameter is a usage error, as click's
    unknown options are; by mail a refusal (a usage error's answer masks its line's words)."""
    misspelt = bool(unknown) or bool(_unknown_params(game, params))
    return USAGE if misspelt and req.channel == "shell" else REFUSED


def challenge(call: Call) -> None:
    create_challenge(call.game, call.req, call.ctx, call.args["players"], call.args["options"])


def create_challenge(
    game: Game,
    req: Request,
    ctx: click.Context,
    players: list[str],
    words: list[str],
    *,
    confirmed_by: int | None = None,
    comment: str | None = None,
) -> None:
    """Create a board; by mail only once the challenger has confirmed it.

    A challenge by mail must come from the confirmed address of one of the players (the
    challenger).  It then waits, mailing nobody but the challenger a code
    (:func:`pbmserv.domain.confirmation.challenge_mail`), its mail's comment kept with it;
    ``confirm CODE`` calls this again with ``confirmed_by`` and that ``comment`` set, and the
    board is created and mailed to the players, the comment under it as a move's is.
    """
    said = (req.comment if comment is None else comment).strip()
    at_most(players, "players")  # (before any of them is looked up)
    params_tokens = [w for w in words if not w.startswith("--")]
    option_tokens = [w for w in words if w.startswith("--")]
    problems: list[str] = []  # of the line's words: the answer shows the usage
    options, option_problems, unknown_options = _parse_options(option_tokens)
    problems += option_problems
    params: dict[str, bool | int] = game.defaults()
    try:
        params = game.parse_params(params_tokens)
    except ParamError as exc:
        problems.append(str(exc))
        if slips := _options_as_parameters(game, params_tokens):
            problems.append(slips)
    userids = [accounts.normalise_userid(p) for p in players]
    if len(set(userids)) != len(userids):
        problems.append("a player is named twice")
    try:
        game.check_players(len(userids), params)
    except PlayersError as exc:
        problems.append(str(exc))
    refusals: list[str] = []  # of the players named or the sender: no usage to show
    with req.sessions() as session, session.begin():
        users = []
        for nth, userid in enumerate(userids, 1):
            found = accounts.find_user(session, userid)
            if found is None or found.closed:
                refusals.append(no_player(req, players[nth - 1], nth))
            elif not found.accepts_challenges:
                refusals.append(f"{userid} does not accept challenges")
            elif accounts.awaiting_confirmation(found):
                refusals.append(f"{userid} has not confirmed an address yet")
            elif found.robot is not None and found.robot.game != game.name:
                theirs = get_game(found.robot.game).display_name
                refusals.append(f"{userid} is a robot that plays {theirs} only")
            elif reason := accounts.over_limit(session, found):
                refusals.append(reason)
            else:
                users.append(found)
        challenger = None
        if not req.trusted and confirmed_by is None and users:
            owners = [u for u in users if accounts.is_owner_address(u, req.sender)]
            challenger = owners[0] if owners else None
            if challenger is None:
                refusals.append(
                    "a challenge by mail must come from an address registered to one of the "
                    "players (and confirmed)"
                )
        if refusals and not problems:
            raise Refused(
                "Invalid challenge: " + "; ".join(refusals),
                subject=error_subject(game.display_name),
            )
        if problems:
            raise Refused(
                "Invalid challenge: " + "; ".join(problems + refusals),
                subject=error_subject(game.display_name),
                status=_misspelt(req, game, params_tokens, unknown_options),
                body=usage_line(f"Usage: {challenge_usage(game)}")
                + "\n"
                + text(
                    [
                        "Parameters:" + ("" if game.params else " none"),
                        *(f"  {p.describe()}" for p in game.params),
                    ]
                ),
            )
        if challenger is not None:
            if not limits.challenge_allowed(session, req.settings, challenger.userid, req.now):
                raise Refused(
                    f"{challenger.userid} has asked for {req.settings.max_challenges_per_day} "
                    "challenges by mail today; try again tomorrow (UTC)"
                )
            if not limits.recipient_allowed(session, req.settings, req.sender or "", req.now):
                raise Refused(  # (its code counts under the cap on mails to one address)
                    f"no code can be mailed to {shown(req.sender or '')} today: an address gets "
                    "only so many mails from us a day; try again tomorrow (UTC)"
                )
            mail = confirmation.challenge_mail(
                session,
                req.settings,
                challenger,
                game.name,
                players,
                words,
                req.now,
                said,
                by_reply=not req.mail.coded,
            )
            req.mail.coded = True
            answer(ctx, mail.subject, mail.body)
            return
        board, position = boards.create_board(session, game, users, params, options, req.now)
        accounts.after_challenge(users)
        notes: list[str] = []
        boards.run_automatic(board, position, now=req.now, notes=notes)
        writer = next((u for u in users if u.id == confirmed_by), users[0])
        body = board_mail_body(
            board,
            position,
            notes=notes,
            due=deadlines.due(board, position),
            said=[(writer.userid, said)] if said else None,
        )
        subject = board_subject(board, position, new=True)
        tail = reply_tail(board, position)
        notify.mail_users(
            session, users, subject, body, req.now, skip_address=req.sender, tail=tail, board=board
        )
        body += reader_tail(req, board, position)
        key, summary = board_key(board), f"New board: {turn_line(board, position)}"
    answer(ctx, subject, body, board=key, summary=summary)


# ----------------------------------------------------------------------------- move


def move(call: Call) -> None:
    number = board_arg(call)
    user_id = call_login(call)
    text = call.args["move"]
    if not text:  # `move BOARD USERID PASSWORD` alone mails the board
        show_boards(call, [str(number)])
        return
    word = text.lower()
    if word.partition("#")[0] == "<move>":  # the line of our mail, pasted unchanged
        raise Refused("replace <move> by your move (the game's help shows how moves are written)")
    if word == "resign":
        resign(call, number, user_id)
        return
    verb, _, tag = word.partition("#")  # accept#2: proposal 2; undo#7: while move 7 is due
    if verb in VOTE_WORDS and (not tag or whole_number(tag) is not None):
        _vote(call, number, user_id, verb, whole_number(tag) if tag else None)
        return
    expected: int | None = None
    if "#" in text:
        text, _, n = text.rpartition("#")
        expected = whole_number(n)
        if expected is None:
            text = text + "#" + n  # Ploy's own '#' (game over) suffix
    play(call, number, user_id, text, expected)


def play(call: Call, number: int, user_id: int, text: str, expected: int | None) -> None:
    """Play ``text`` for the user on board ``number`` and mail the board to everyone."""
    req = call.req
    with req.sessions() as session, session.begin():
        board = load_board(session, call.game, number, lock=True)
        mover = user(session, user_id)
        position = boards.position_of(board)
        try:
            played = moves.play(
                session,
                board,
                position,
                mover,
                text,
                now=req.now,
                source=req.source,
                expected_ply=expected,
                comment=req.comment,
            )
        except MoveError as exc:
            tail = reader_tail(req, board, position, mover)
            raise board_error(board, position, move_error(exc, text), tail) from None
        except boards.BoardError as exc:
            tail = reader_tail(req, board, position, mover)
            if isinstance(exc, boards.NotYourTurn):
                tail = _queue_hint(call.req, call.game, board, position, mover, text) + tail
            raise board_error(board, position, str(exc), tail) from None
        _announce_played(call, session, played, mover)
        follow_up(call, session, board)


NOT_QUEUED = frozenset({"swap", "pass", "propose", "undo"})  # (the move of one turn)


def _queue_hint(
    req: Request, game: Game, board: Board, position: Position, player: User, text: str
) -> str:
    """What a player who moved out of turn may do instead: queue the move, to be played when
    his turn comes (a newcomer was told only whose turn it was).  Not where the game cannot
    queue it (Plotto's letters change) nor for a player who is out of the game."""
    if text.lower() in NOT_QUEUED or out_of_play(board, position, player) is not None:
        return ""
    try:
        position.queue_text(text)
    except MoveError:
        return ""
    line = f"{game.name} queue {board.number} {player.userid} PASSWORD {text}"
    return hint("queue", req.channel, line=line)


def _announce_played(call: Call, session: Session, played: boards.Played, actor: User) -> None:
    """The answer and the board mails of a move or a resignation that was played."""
    announce(
        call,
        session,
        played.board,
        played.position,
        played.notes,
        actor,
        newest=played.newest,
        out=played.out,
    )


def swap(call: Call) -> None:
    number = board_arg(call)
    play(call, number, call_login(call), "swap", None)


def resign_command(call: Call) -> None:
    number = board_arg(call)
    resign(call, number, call_login(call))


def resign(call: Call, number: int, user_id: int) -> None:
    """Resign at once on your turn; out of turn it is queued.  Before your first move it declines."""
    game, req = call.game, call.req
    with req.sessions() as session, session.begin():
        board = load_board(session, game, number, lock=True)
        player = user(session, user_id)
        position = boards.position_of(board)
        seats = boards.seats_of(board, player)
        if board.status is not BoardStatus.active:
            raise board_error(board, position, "the game is over")
        if not seats:
            raise board_error(board, position, f"{player.userid} does not play on board {number}")
        if not board.options.get("tournament") and not any(
            boards.has_moved(board, s) for s in seats
        ):  # a tournament game cannot be declined: resigning it loses it
            note, new_position = boards.decline(session, board, player, req.now)
            if new_position is None:
                subject = subjects.board(game.display_name, number)
                others = [seat.user for seat in board.seats]
                said = req.comment.strip()
                stars = "*" * 72  # the comment's frame in a board mail
                written = ["", stars, f"{player.userid} writes:", "", fill(said), stars]
                lines = [fill(note), *(written if said else [])]
                body = notify.text_mail(
                    session, others, subject, lines, req.now, actor=player, sender=req.sender
                )
                answer(call.ctx, subject, body)
                return
            announce(call, session, board, new_position, [note], player, new=True, said=req.comment)
            return
        mover = boards.user_to_move(board, position)
        if mover is None or mover.id != player.id:
            move = boards.queue_resign(board, player, req.comment)
            instead = "" if move is None else f" It replaces your queued move {move}."
            body = text(
                [
                    f"Your resignation on {game.display_name} board {number} is queued: it "
                    f"takes effect on your turn.{instead}{queued_comment(req.comment)}"
                ]
            )
            answer(call.ctx, subjects.board(game.display_name, number, "queue"), body)
            return  # (the subject of the queue command's answer: no board in it)
        played = moves.play(
            session,
            board,
            position,
            player,
            "resign",
            now=req.now,
            source=req.source,
            comment=req.comment,
        )
        _announce_played(call, session, played, player)
        follow_up(call, session, board)


def _vote(call: Call, number: int, user_id: int, word: str, tag: int | None) -> None:
    req = call.req
    with req.sessions() as session, session.begin():
        board = load_board(session, call.game, number, lock=True)
        player = user(session, user_id)
        position = boards.position_of(board)
        if not boards.seats_of(board, player):
            raise board_error(board, position, f"{player.userid} does not play on board {number}")
        try:
            note, position = moves.vote(session, board, position, player, word, req.now, tag)
        except boards.BoardError as exc:  # with the lines for the open proposal, if any
            tail = reader_tail(req, board, position, player, open_vote(session, board, position))
            raise board_error(board, position, str(exc), tail) from None
        vote = open_vote(session, board, position)
        announce(call, session, board, position, [note], player, said=req.comment, vote=vote)
        follow_up(call, session, board)


# ----------------------------------------------------------------------------- show, games, history


def preview(call: Call) -> None:
    game = call.game
    if call.args["board"].lower() == "new":
        classic.preview_new(call)
        return
    number, at = parse_board_number(call.args["board"])
    at_most(call.args["moves"], "moves", MAX_PREVIEW_MOVES)
    with call.req.sessions() as session:
        board = load_board(session, game, number)
        check_move_number(board, at)  # (as 'show BOARD#K' does)
        position = boards.position_of(board) if at is None else boards.replay(board, at)
        played = []
        sender = sender_player(call.req, board)  # (by mail): whose move the sender thinks it is
        first, seat = boards.user_to_move(board, position), position.to_move
        label = "" if seat is None else position.seats()[seat].label
        for word in call.args["moves"]:
            mover = boards.user_to_move(board, position)
            try:
                move_value = position.parse_move(word)
            except MoveError as exc:
                other = sender is not None and mover is not None and sender.id != mover.id
                name = mover.userid if mover else ""
                raise board_error(
                    board,
                    position,
                    preview_stop(word, exc, position, name, not_his=other),
                    lead="The position where the preview stopped (a preview changes nothing):",
                ) from None
            played.append(position.format_move(move_value))
            position.play(move_value)
        start = len(board.moves) if at is None else at
        note = ""
        if played and sender is not None and first is not None and sender.id != first.id:
            note = (  # (a placement game takes any move as the mover's: say whose it is)
                f"It is {label}'s ({first.userid}'s) move in this position: the first move "
                f"is played for {label}, the others in turn."
            )
        what = f"{game.display_name} board {number}"
        body = preview_body(what, start, played, position, note=note)
    answer(call.ctx, subjects.board(game.display_name, number, "Preview"), body)


# ----------------------------------------------------------------------------- declarations


def challenge_usage(game: Game) -> str:
    """``polis challenge USERID1 USERID2 [-swap] [--OPTION=V]``: the one usage of a game's
    challenge, as its --help, its game's help and a refused challenge's answer give it."""
    return next(c for c in COMMANDS if c.name == "challenge").usage(game.name, game)


BOARD = Arg("board", Kind.BOARD)
USERID = Arg("userid", Kind.USERID)
PASSWORD = Arg("password", Kind.PASSWORD)
PLAYER = (BOARD, USERID, PASSWORD)

COMMANDS: tuple[Command, ...] = (
    Command(
        "challenge",
        challenge,
        "Start a new game at once; the first player moves first.",
        (
            Arg("players", Kind.TEXT, many=True, metavar="USERID1 USERID2 [..]", players=True),
            Arg(
                "options",
                Kind.OPTIONS,
                metavar="[-PARAM[=V]] [--OPTION=V]",
                meanings=CHALLENGE_OPTIONS,
                game_params=True,
            ),
        ),
        aliases=("chall",),
        comment=True,
    ),
    Command(
        "move",
        move,
        "Make a move (or pass, swap, resign, propose, undo, accept, reject); #N refuses it "
        "unless it is move N.",
        (*PLAYER, Arg("move", Kind.MOVE, optional=True, metavar="[MOVE[#N]]")),
        aliases=("board",),
        typos=("mvoe",),
        comment=True,
    ),
    Command(
        "swap",
        swap,
        "Use the pie rule: exchange seats with the first player (second move only).",
        PLAYER,
        comment=True,
    ),
    Command(
        "resign",
        resign_command,
        "Resign (queued when it is not your turn; declines the game before your first move).",
        PLAYER,
        aliases=("resig",),
        comment=True,
    ),
    Command(
        "show",
        show,
        "Mail the full board(s), at move K if given.",
        (
            Arg(
                "what",
                Kind.TEXT,
                many=True,
                metavar="BOARD[#K]... | USERID... [active|inactive|next]",
            ),
        ),
    ),
    Command(
        "games",
        games,
        "List boards: number, move, players, status.",
        (Arg("filters", Kind.TEXT, many=True, metavar="[USERID...] [active|inactive|next]"),),
    ),
    Command(
        "history",
        history,
        "List finished games.",
        (Arg("userids", Kind.TEXT, many=True, metavar="[USERID...]"),),
    ),
    Command(
        "preview",
        preview,
        "Show the board after hypothetical moves, played in turn from the player to move; "
        "nothing is stored. 'new': from the start of a new game with its -PARAMs, of the "
        "fewest players they allow unless -players=N says how many.",
        (
            Arg("board", Kind.BOARD, metavar="BOARD[#K]|new"),
            Arg("moves", Kind.TEXT, many=True, metavar="[-players=N] [-PARAM] MOVE..."),
        ),
        aliases=("prev",),
    ),
)

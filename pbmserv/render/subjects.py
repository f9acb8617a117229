"""The subjects of the mails we write, built and recognised in one place.

Players reply to our mails, and a reply keeps our Subject (``Re: List of Ploy games``).  Read
as a command line it ran nonsense ("unknown game 'of'", "No such command 'Error'", the whole
help mailed again), so the mail parser skips a reply's Subject that is one of ours
(:func:`ours`).  Every mailed subject is built by a :class:`Shape` of this module, and the
parser recognises exactly these shapes: a new subject is a new shape, never a drift between
what we write and what we skip.  ``confirm CODE`` is the one shape whose reply is meant to run
(a reply to a code mail confirms it).

>>> game("Ploy", "help"), ours("Ploy help"), ours("polis move 101 alice PW a7-a6")
('Ploy help', True, False)
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Literal, get_args

GameTopic = Literal["help", "Error", "Standings", "History", "Boards", "Preview", "subscribe all"]
ServerTopic = Literal[
    "help",
    "Error",
    "signup",
    "confirmation",
    "change address",
    "change password",
    "signoff",
    "accept",
    "reject",
    "limit",
    "seek",
    "vacation",
    "message",
    "broadcast",
    "confirm",
    "refuse",
    "unlock",
    "password reset",
    "password new",
    "notifications",
]
TournamentTopic = Literal[
    "created", "cancelled", "joined", "withdrawn", "standings", "pairings", "final standings"
]
SERVER = "pbmserv"
# The words after ``Board N`` that name what an answer is about, not the player to move.
BOARD_TOPICS = frozenset(
    w.casefold()
    for w in ("Error", "help", "record", "subscribe", "unsubscribe", "Chat", "queue")
    + ("Submitted", "Preview", "notifications")
)

# What each field of a shape matches: a word, a number, a few words (a server's name).
_FIELDS = {
    "game": r"\S+",
    "board": r"\d+",
    "count": r"\d+",
    "refused": r"\d+",
    "userid": r"\S+",
    "name": r"\S+",
    "code": r"\S+",
    "server": r"\S+(?: \S+){0,4}",
}


def _choice(topics: object) -> str:
    return "(?:" + "|".join(re.escape(str(t)) for t in get_args(topics)) + ")"


@dataclass(frozen=True)
class Shape:
    """One subject we write: ``text`` with ``{fields}``; a field marked ``?``
    (``{what?}``) may be empty.  ``command``: a reply to it is meant to run as a command."""

    text: str
    topics: dict[str, str] = field(default_factory=dict, compare=False)  # a field's regex
    command: bool = False
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        regex = ""
        for part in re.split(r"( ?\{\w+\??\})", self.text):
            found = re.fullmatch(r"( ?)\{(\w+)(\??)\}", part)
            if found is None:
                regex += re.escape(part)
                continue
            blank, name, optional = found.groups()
            inner = self.topics.get(name) or _FIELDS[name]
            regex += f"(?:{blank}{inner})?" if optional else f"{blank}{inner}"
        object.__setattr__(self, "pattern", re.compile(regex, re.I))

    def __call__(self, **values: object) -> str:
        """The subject with these values (an empty optional field leaves no blank)."""
        return " ".join(self.text.replace("?}", "}").format(**values).split())

    def matches(self, line: str) -> bool:
        """Whether ``line`` (blanks single) is a subject of this shape, in any case."""
        return self.pattern.fullmatch(line) is not None


# board mails and answers about one board: ``Ploy Board 101 alice``, ``... Error``, ``... queue``
BOARD = Shape("{game} Board {board} {what?}", {"what": r"\S+"})
NEW_BOARD = Shape("New {game} Board {board} {what?}", {"what": r"\S+"})
NAG = Shape("Nag: {game} Board {board} {userid}")
GAME = Shape("{game} {topic}", {"topic": _choice(GameTopic)})
ABOUT_SERVER = Shape(SERVER + " {topic}", {"topic": _choice(ServerTopic)})
MESSAGE_FROM = Shape(SERVER + " message from {userid}")
BOARDS_OF = Shape(SERVER + " boards of {userid}")
DIGEST = Shape(SERVER + " digest: {count} board{s?}", {"s": "s"})
ANSWERS = Shape(SERVER + ": answers to {count} commands")
ANSWERS_REFUSED = Shape(SERVER + ": answers to {count} commands ({refused} refused)")
NOTHING_CONFIRMED = Shape(SERVER + ": nothing confirmed")
LIMIT_REACHED = Shape(SERVER + ": answer limit reached")
GAME_LIST = Shape("List of {game} games")
GAMES_LIST = Shape("List of games")
TOURNAMENTS = Shape("Tournaments")
TOURNAMENT = Shape("Tournament {name} {topic}", {"topic": _choice(TournamentTopic)})
ROUND = Shape("Tournament {name} round {count}")
ROUND_REPLAYS = Shape("Tournament {name} round {count} replays")
ABOUT_ERROR = Shape("{game} Error")  # (also ``pbmserv Error``, ``Tournament Error``)
TOURNAMENT_ERROR = Shape("Tournament {name} Error")
PASSWORD_RESET = Shape("{server} password reset")
CONFIRM = Shape("confirm {code}", command=True)
"""A code mail's subject: a reply to it (the subject kept) is a ``confirm CODE`` line."""

SHAPES: tuple[Shape, ...] = tuple(v for v in dict(globals()).values() if isinstance(v, Shape))


def ours(line: str) -> bool:
    """Whether ``line`` (a Subject without its ``Re:``, blanks single) is one we write whose
    reply is not meant to run (every shape but ``confirm CODE``)."""
    return any(shape.matches(line) for shape in SHAPES if not shape.command)


def board(game_name: str, number: int, what: str = "") -> str:
    """``Ploy Board 101 alice`` (the player to move, or what the mail is about)."""
    return BOARD(game=game_name, board=number, what=what)


def game(game_name: str, topic: GameTopic) -> str:
    """``Ploy help``, ``Ploy Standings``: a game's answers not about one board."""
    return GAME(game=game_name, topic=topic)


def server(topic: ServerTopic) -> str:
    """``pbmserv signup``: the answers of the commands of no game."""
    return ABOUT_SERVER(topic=topic)


def tournament(name: str, topic: TournamentTopic) -> str:
    """``Tournament spring joined``."""
    return TOURNAMENT(name=name, topic=topic)


def error(about: str) -> str:
    """The subject of every error answer: ``Polis Board 101 Error``, ``Polis Error``,
    ``pbmserv Error``, ``Tournament spring Error`` (``about`` is one of these heads)."""
    return f"{about} Error"


def help_about(about: str) -> str:
    """The subject of a help answer: ``Polis help``, ``pbmserv help``, ``Polis Board 101 help``
    (``about`` as for :func:`error`)."""
    return f"{about} help"


def answers(count: int, refused: int) -> str:
    """The subject of the answer to a mail of several commands on different matters."""
    if refused:
        return ANSWERS_REFUSED(count=count, refused=refused)
    return ANSWERS(count=count)


# What mail programs put before a Subject they reply to or forward, in the languages they
# speak (Outlook, Thunderbird, Gmail, Apple Mail, Foxmail...): ``TR:`` (French), ``RV:``
# (Spanish), ``Odp:`` (Polish), ``回复:`` (Chinese).  A prefix not known here left our own
# Subject read as a command.  Compared in NFKC and casefolded, so ``Ｒｅ：`` is ``Re:``.
REPLY_WORDS = frozenset(
    ("re", "fw", "fwd", "aw", "wg", "sv", "vs", "vb", "vl", "antw", "doorst", "tr", "rv")
    + ("r", "rif", "i", "res", "enc", "odp", "pd", "ynt", "ilt", "i\u0307lt", "atb", "pārs")
    + ("απ", "σχετ", "πρθ", "отв", "пересл", "השב", "הועבר", "رد", "回复", "回覆")
    + ("答复", "转发", "轉寄", "返信", "転送", "답장", "전달")
)
_PREFIX = re.compile(r"\s*([^\s:：\[\]]{1,8})\s*(?:\[\d+\])?\s*[:：]")


def is_reply_prefix(word: str) -> bool:
    """Whether ``word`` (``Re:``, ``AW[2]:``, ``回复：``) is a reply or forward prefix."""
    found = _PREFIX.fullmatch(word)
    return found is not None and _reply_word(found[1])


def without_reply_prefixes(line: str) -> str:
    """``line`` without the reply and forward prefixes at its start (``Re: AW: TR: ...``)."""
    while (found := _PREFIX.match(line)) is not None and _reply_word(found[1]):
        line = line[found.end() :]
    return line.lstrip()


def _reply_word(word: str) -> bool:
    return unicodedata.normalize("NFKC", word).casefold() in REPLY_WORDS

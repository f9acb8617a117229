"""Declared commands: one declaration per command drives click, usage, help, the mail parser's
command words and password masking; no password ever appears in an answer, even for a
misspelt command word or a quoted password with blanks (shell and mail)."""

from __future__ import annotations

import difflib
from email.message import EmailMessage
from email.utils import format_datetime
from unittest.mock import patch

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from pbmserv.commands import Request, build_commands, grammar, registry, spelling
from pbmserv.commands.spec import Arg, Command, Kind, bind, click_args
from pbmserv.commands.tree import click_command
from pbmserv.games import get_game
from pbmserv.mail import inbox
from pbmserv.mail.lines import clean_command
from pbmserv.mail.worker import process_next
from pbmserv.store.models import AuthFailure, Inbox, Outbox

SECRET = "my secret"  # a password with a blank, given quoted


# ----------------------------------------------------------------------------- masking


@pytest.mark.parametrize(
    ("line", "masked"),
    [
        ('polis move 101 alice "my secret" a7-a6', "polis move 101 alice ******** a7-a6"),
        ("polis move 101 alice 'my secret' a7-a6", "polis move 101 alice ******** a7-a6"),
        ("polis moev 101 bob PW b2-b3", "polis moev 101 bob ******** b2-b3"),
        ("sigunp carol PW carol@example.org", "sigunp carol ******** carol@example.org"),
        ("change pasword bob OLD NEW", "change pasword bob ******** ********"),
        ("Subject: tournamnet join spring bob PW", "Subject: tournamnet join spring bob PW"),
        ("tournamnet join spring bob PW", "tournamnet join spring bob ********"),
        ("pbmserv vacaton bob PW 3", "pbmserv vacaton bob ******** 3"),
        ("polis show 101 102", "polis show 101 102"),
        ("I don't move 101 today", "I don't move 101 today"),  # an apostrophe: no quoting
    ],
)
def test_masking_reads_the_declarations(line: str, masked: str) -> None:
    assert grammar.mask_passwords(line) == masked


def test_comments_are_masked_exactly_not_by_guessing() -> None:
    """What other players read keeps its everyday words; known passwords go anywhere."""
    comment = "see you bob tomorrow\nsignup carol s3cret\nmy pin is my secret"
    masked = grammar.mask_passwords(
        comment, guess=False, commands=['polis move 101 alice "my secret" a7-a6']
    )
    assert masked == "see you bob tomorrow\nsignup carol ********\nmy pin is ********"


def test_a_line_of_no_words_holds_no_password() -> None:
    """(`pbmserv` alone: the grammar looked at the first of no words.)"""
    assert grammar.passwords([]) == [] and grammar.password_slots(["polis"], 1) == []


def test_passwords_and_credentials_of_quoted_and_misspelt_lines() -> None:
    assert grammar.command_passwords('polis move 101 alice "my secret" a7-a6') == [SECRET]
    assert grammar.command_credentials('polis move 101 alice "my secret" a7') == [("alice", SECRET)]
    assert grammar.passwords(["change", "pasword", "bob", "old1", "new2"]) == ["old1", "new2"]
    assert grammar.passwords(["polis", "moev", "101", "bob", "pw", "b2-b3"]) == ["pw"]


def _misspelt(word: str, cut: int) -> str:
    """``word`` with one letter dropped (a typo the masking must still read)."""
    cut %= max(len(word), 1)
    return word[:cut] + word[cut + 1 :]


_DECLARED = sorted(
    set(registry.top_words())
    | {w for g in (registry.GAME, *registry.GROUPS.values()) for w in g.words()}
    | set(grammar.game_words())
)
_WORD = st.one_of(
    st.sampled_from(_DECLARED),
    st.builds(_misspelt, st.sampled_from(_DECLARED), st.integers(0, 12)),
    st.sampled_from(["101", "101#5", "7", "alice", "bob", "PW", '"my secret"', "'a b'", "a7-a6"]),
    st.sampled_from(["I", "don't", "today", "Subject:", ">", "Re:", "move,", "Show:", "hex", ""]),
    st.text("abcdeimnoprstvw>:,;\"'", max_size=8),
)
_ARGS = st.lists(st.sampled_from(["bob", "PW", "101", "OLD", "NEW", "x@example.org"]), max_size=4)
_TYPO_LINE = st.builds(  # a misspelt command word that starts a line (quoted or not), arguments
    lambda quote, word, cut, rest: " ".join([*quote, _misspelt(word, cut), *rest]),
    st.sampled_from([[], [">"], ["> >"]]),
    st.sampled_from(registry.top_words()),
    st.integers(0, 12),
    _ARGS,
)
_UNKNOWN_GAME_LINE = st.builds(  # a game we do not know by that name: ``hex move 5 bob PW``
    lambda game, command, board, rest: " ".join([game, command, board, *rest]),
    st.sampled_from(["hex", "chess", "I", "we"]),
    st.sampled_from(registry.GAME.words()),
    st.sampled_from(["5", "101", "101#2", "x"]),
    _ARGS,
)
_LINE = st.one_of(st.lists(_WORD, max_size=9).map(" ".join), _TYPO_LINE, _UNKNOWN_GAME_LINE)
_LINES = st.lists(_LINE, min_size=1, max_size=4).map("\n".join)


@settings(max_examples=400, deadline=None)
@given(text=_LINES, guess=st.booleans())
def test_the_quick_test_for_command_lines_never_changes_a_mask(text: str, guess: bool) -> None:
    """Lines that cannot hold a command skip the word-by-word reading (most lines of a mail);
    the masks are exactly those of reading every word."""
    known = ['polis move 101 alice "my secret" a7-a6']
    with patch.object(grammar, "_MEMO", grammar._SlotMemo(256)):  # each reads every line
        fast = grammar.mask_passwords(text, guess=guess, commands=known)
    with (
        patch.object(grammar, "_may_hold_command", lambda *_: True),
        patch.object(grammar, "_MEMO", grammar._SlotMemo(256)),
    ):
        assert fast == grammar.mask_passwords(text, guess=guess, commands=known)


def test_lines_read_lately_are_remembered_by_a_digest_never_as_text() -> None:
    """A mail's command line is read several times and bound once; the memo holds no password
    and no more lines than its size, and gives what reading the line again gives."""
    memo = grammar._SlotMemo(4)
    lines = [f"polis move 101 alice s3cret-{i} a7-a6" for i in range(6)]
    with patch.object(grammar, "_MEMO", memo):
        first = [grammar.mask_passwords(line) for line in lines]
        assert [grammar.mask_passwords(line) for line in lines] == first
        assert grammar.mask_passwords(lines[-1], guess=False) == first[-1]
    assert first[0] == "polis move 101 alice ******** a7-a6"
    stray = "polis move 101 alice s3cret\udcff a7-a6"  # a byte no charset decoded
    assert grammar.mask_passwords(stray) == first[0]
    kept = repr(memo._slots)
    assert len(memo._slots) == 4 and "s3cret" not in kept and "alice" not in kept


def test_long_words_are_never_remembered() -> None:
    """The misspelt-command look-up remembers the words it was asked about, but only words
    short enough to be close to a command word (a mail of huge words cannot fill the memory),
    and only by a digest: the word may be a password."""
    memo = spelling._Closest(16)
    with patch.object(spelling, "_CLOSEST", memo):
        grammar.mask_passwords("\n".join(f"{'x' * 100_000}{i} bob PW" for i in range(50)))
        assert len(memo) == 0
        assert grammar.mask_passwords("sigunp carol Sekrit77") == "sigunp carol ********"
        assert len(memo) == 1 and "sigunp" not in repr(memo._found)
        for i in range(40):
            spelling.suggest(f"word{i}", ["show", "move"])
        assert len(memo) == 16


def test_a_misspelt_word_is_looked_up_once() -> None:
    """Every line that looks like a command asks for the command word closest to its words,
    at each of the places that read or mask it: a mail of 70,000 such lines took a minute of
    difflib.  The answers are remembered, and a word far too long is never compared."""
    memo = spelling._Closest(64)
    with (
        patch.object(spelling, "_CLOSEST", memo),
        patch.object(spelling.difflib, "get_close_matches", wraps=difflib.get_close_matches) as spy,
    ):
        for _ in range(100):
            assert spelling.suggest("plois", ["ploy", "polis"]) == "polis"
        assert spy.call_count == 1
        assert spelling.suggest("x" * 9, ["ploy", "show"]) is None  # 9 > 4 * 5/3: not compared
        assert spy.call_count == 1
        assert spelling.suggest("x" * 6, ["ploy", "show"]) is None  # 6 <= 4 * 5/3: compared
        assert spy.call_count == 2


@pytest.mark.parametrize(
    ("line", "masked"),
    [  # as a run binds it: ``--text`` takes a value, click drops the first ``--``
        ("message --text hi carol Zq9-pw bob", "message --text hi carol ******** bob"),
        ("broadcast --text hello admin Zq9-pw", "broadcast --text hello admin ********"),
        ("polis move 101 -- alice Zq9-pw a7-a6", "polis move 101 -- alice ******** a7-a6"),
        ("polis -- move 101 alice Zq9-pw a7-a6", "polis -- move 101 alice ******** a7-a6"),
        ("pbmserv -- signup carol Zq9-pw", "pbmserv -- signup carol ******** "),
        # in doubt, more: what the run binds (``--foo``) and what the player may have meant
        ("polis move 101 alice --foo Zq9-pw a7", "polis move 101 alice ******** ******** ********"),
        ("ploy resign 102 --x carol Zq9-pw", "ploy resign 102 --x ******** ********"),
        ("polis --foo move 101 alice Zq9-pw a7-a6", "polis --foo move 101 alice ******** a7-a6"),
        ("message alice -Zq9pw bob", "message alice ******** ********"),
        # options after the password change nothing
        (
            "tournament create spring admin Zq9-pw --game polis --double -size=5",
            "tournament create spring admin ******** --game polis --double -size=5",
        ),
    ],
)
def test_option_words_are_read_as_click_reads_them_and_in_doubt_masked(line, masked) -> None:
    assert grammar.mask_passwords(line.strip()) == masked.strip()
    assert grammar.mask_passwords(line.strip(), guess=False) == masked.strip()


_CLICK_WORDS = st.lists(
    st.sampled_from(["a", "b7", "--", "-x", "--foo", "--foo=1", "-", "---", "-x=--", "-s=5"]),
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(words=_CLICK_WORDS)
def test_the_masking_drops_the_words_click_drops(words: list[str]) -> None:
    """:func:`click_args`, which the masking binds with, is what a command's click parser
    hands its callback (the command built from a declaration, as every command is)."""
    got: list[list[str]] = []
    spec = Command(
        "x", lambda call: got.append(call.args["rest"]), "", (Arg("rest", Kind.TEXT, many=True),)
    )
    req = Request(settings=None, sessions=None)  # type: ignore[arg-type]
    click_command(spec, "").main(list(words), standalone_mode=False, obj=req)
    assert got == [[words[k] for k in click_args(words)]]


def _password_commands() -> list[tuple[tuple[str, ...], Command]]:
    """Every declared command that takes a password, with the words that call it."""
    games = ("polis", "ploy", "pylon", "plotto")
    out = [((w,), c) for c in registry.TOP for w in (c.name, *c.aliases)]
    out += [
        ((g.name, w), c)
        for g in registry.GROUPS.values()
        for c in g.commands
        for w in (c.name, *c.aliases)
    ]
    out += [
        ((game, w), c)
        for game in games
        for c in registry.GAME.commands
        for w in (c.name, *c.aliases)
    ]
    return [(words, c) for words, c in out if c.password_args]


def _arg_words(arg: Arg, password: str) -> st.SearchStrategy[list[str]]:
    """Words a player gives for one declared argument."""
    if arg.kind is Kind.PASSWORD:
        return st.just([password])
    if arg.kind is Kind.MOVE:
        return st.sampled_from([[], ["a7-a6"], ["a7", "-", "a6"], ["e2#4"]])
    if arg.kind is Kind.TEXT and arg.many:
        return st.lists(st.sampled_from(["bob", "carol", "every"]), max_size=2)
    by_kind = {Kind.BOARD: ["101", "101#3"], Kind.USERID: ["alice"], Kind.TEXT: ["spring", "3"]}
    return st.sampled_from([[w] for w in by_kind.get(arg.kind, [])] or [[]])


_OPTIONS = st.sampled_from(  # option words as players put them, some with a value
    [["--foo"], ["-x"], ["--foo=bar"], ["-size=5"], ["--text=hi"], ["--text", "hi"]]
    + [["--game", "polis"], ["--bar", "value"], ["-q", "7"], ["--"], ["--double"]]
)
_SEPARATORS = st.sampled_from([" ", "  ", "\t", "\u00a0", "\u3000", "\u200b", " \u200b ", "\ufeff"])


@st.composite
def _command_lines(draw: st.DrawFn) -> tuple[str, str]:
    """A command line built from a declaration, options put anywhere among its arguments (and
    those click's groups take or refuse between its command words), words separated by any
    blank; and its password, a distinctive random word."""
    head, command = draw(st.sampled_from(_password_commands()))
    password = draw(st.from_regex(r"Zq9[a-z0-9]{6}", fullmatch=True))
    chunks = [draw(_arg_words(arg, password)) for arg in command.args]
    for _ in range(draw(st.integers(0, 4))):  # between arguments (and option words)
        at = draw(st.integers(0, len(chunks)))
        chunks[at:at] = [draw(_OPTIONS)]
    args = [word for chunk in chunks for word in chunk]
    words = list(head)
    if len(words) == 2 and draw(st.booleans()):
        words[1:1] = draw(st.sampled_from([["--"], ["--foo"], ["-x=1"]]))
    if draw(st.booleans()):
        words = ["pbmserv", *words]
    words += args
    blanks = [draw(_SEPARATORS) for _ in words[1:]]
    line = words[0] + "".join(blank + word for blank, word in zip(blanks, words[1:], strict=True))
    return draw(st.sampled_from(["", "> "])) + line, password


@settings(max_examples=500, deadline=None)
@given(case=_command_lines(), guess=st.booleans())
def test_no_option_or_blank_ever_uncovers_the_password(case: tuple[str, str], guess: bool) -> None:
    """Whatever option words a command line holds, wherever they stand, and whatever blanks
    separate its words, the masked text never holds its password."""
    line, password = case
    assert password not in grammar.mask_passwords(line, guess=guess), line


def test_words_are_split_by_one_rule() -> None:
    """The mail parser reads a line's words as the masking does: a zero-width space between
    words separates them for both (the line runs, so its password must be masked)."""
    line = "notifications\u200bbob\u200bZq9-pw\u2060every\ufeff\u00a0"
    assert clean_command(line) == "notifications bob Zq9-pw every"
    assert grammar.split_words(line) == ["notifications", "bob", "Zq9-pw", "every"]
    assert grammar.plain_blanks(line) == "notifications bob Zq9-pw every  "
    masked = grammar.mask_passwords(line)
    assert "Zq9-pw" not in masked
    assert masked == "notifications\u200bbob\u200b********\u2060every\ufeff\u00a0"


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("plois mvoe 101 alice Sekrit77 a7-a6", "plois mvoe 101 ******** ******** ********"),
        ("singup zed Sekrit88", "singup zed ********"),
        ("chnage pasword alice Sekrit99 newpw123", "chnage pasword ******** ******** ********"),
        # a forgotten userid, a password after the move: never run, so no word is trusted
        ("plois mvoe 101 Sekrit77 a7-a6", "plois mvoe 101 ******** ********"),
        ("plois mvoe 101 alice a7-a6 Sekrit77", "plois mvoe 101 ******** ******** ********"),
        # a line the rule cannot read: the first word and words too short for a password
        ("plois xyz 101 alice Sekrit77", "plois xyz 101 ******** ********"),
        ("polsi mvoe Sekrit77 101 a7", "polsi mvoe ******** 101 a7"),
        ("plois shwo 102", "plois shwo 102"),  # read as a command without a password
    ],
)
def test_a_line_not_understood_shows_no_word_that_could_be_a_password(line, shown) -> None:
    assert grammar.mask_unread(line) == shown
    mask = grammar.password_mask(unread=[line])  # the mail's kept copy: the same rule
    assert mask(f"Hi!\n{line}\nplois mvoe 102 bob Sekrit77 a7-a6") == (
        f"Hi!\n{shown}\nplois mvoe 102 bob ******** a7-a6"
    )


def test_a_top_level_word_finds_its_command_in_any_case() -> None:
    for command in registry.TOP:
        for word in (command.name, *command.aliases):
            assert registry.top(word) is command
            assert registry.top(word.upper()) is command
    for name, group in registry.GROUPS.items():
        assert registry.top(name) is group
    assert registry.top("move") is None and registry.top("") is None


# ----------------------------------------------------------------------------- declarations


def _walk() -> list[tuple[str, Command]]:
    out = [("", c) for c in registry.TOP]
    out += [(g.name, c) for g in registry.GROUPS.values() for c in g.commands]
    return out + [("polis", c) for c in registry.GAME.commands]


def test_every_declaration_is_a_click_command_with_its_usage_and_help() -> None:
    root = build_commands()
    ctx = click.Context(root, info_name="pbmserv")
    for prefix, spec in _walk():
        group = root.get_command(ctx, prefix) if prefix else root
        assert isinstance(group, click.Group)
        command = group.get_command(ctx, spec.name)
        assert command is not None, spec.name
        assert command.help == spec.help
        game = get_game(prefix) if prefix == "polis" else None  # (its own players, params)
        assert command.params[0].metavar == spec.metavar(game)
        for alias in spec.aliases:
            assert group.get_command(ctx, alias) is command


def test_mail_command_words_are_the_declared_words() -> None:
    words = grammar.command_words()
    for _prefix, spec in _walk():
        if not _prefix:
            assert {spec.name, *spec.aliases} <= words
    assert {"change", "tournament", "pbmserv", "polis", "ploy", "pylon", "plotto"} <= words


def test_binding_follows_the_kinds() -> None:
    spec = Command(
        "x",
        lambda call: None,
        "",
        (
            Arg("board", Kind.BOARD),
            Arg("userid", Kind.USERID),
            Arg("password", Kind.PASSWORD),
            Arg("options", Kind.OPTIONS, takes_value=("game",)),
            Arg("move", Kind.MOVE),
        ),
    )
    bound = bind(spec, ["101", "bob", "pw", "--game", "polis", "a7", "-", "a6", "-size=5"])
    assert (bound["board"], bound["userid"], bound["password"]) == ("101", "bob", "pw")
    assert bound["options"] == ["--game", "polis", "-size=5"]
    assert bound["move"] == "a7-a6" and bound.positions["password"] == [2]
    env = bind(spec, ["101", "bob", "a7-a6"], env_password="from-env")
    assert (env["password"], env["move"]) == ("from-env", "a7-a6")
    with pytest.raises(click.UsageError, match="the password of bob is missing"):
        bind(spec, ["101", "bob"])
    with pytest.raises(click.UsageError, match="not enough arguments; usage: x BOARD"):
        bind(spec, ["101"])


def test_a_name_declared_twice_is_an_error(monkeypatch) -> None:
    twice = (*registry.TOP, registry.TOP[0])
    monkeypatch.setattr(registry, "TOP", twice)
    with pytest.raises(ValueError, match="declared twice"):
        registry._check_unique()


# ----------------------------------------------------------------------------- the shell


def _answers(result) -> list:
    return result if isinstance(result, list) else [result]


def _no_secret(answers, *secrets: str) -> None:
    for item in answers:
        for secret in secrets:
            assert secret not in item.subject and secret not in item.body, (secret, item.body)


def test_a_quoted_password_with_blanks_works_and_is_never_shown(shell) -> None:
    shell.ok(f'signup alice "{SECRET}" alice@example.org')
    shell.signup("bob")
    shell.ok("polis challenge alice bob")
    result = shell(f'polis move 101 alice "{SECRET}" a7-a6')
    assert result.status == 0, result.body
    _no_secret([result], SECRET, "secret")
    refused = shell(f'polis move 101 alice "{SECRET}" a7-a9')
    assert refused.status == 1
    _no_secret([refused], SECRET, "secret")
    for mail in shell.outbox():
        assert "secret" not in mail.body


@pytest.mark.parametrize(
    ("line", "secrets", "hint"),
    [
        ("polis moev 101 bob pw-bob b2-b3", ["pw-bob"], "Did you mean 'move'?"),
        ("sigunp carol pw-carol carol@example.org", ["pw-carol"], "Did you mean 'signup'?"),
        ("change pasword bob pw-bob newpass1", ["pw-bob", "newpass1"], "Did you mean 'password'?"),
        ("polis moev 101 bob", [], "Did you mean 'move'?"),
    ],
)
def test_a_misspelt_command_helps_and_never_shows_the_password(shell, line, secrets, hint):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    answers = _answers(shell(line))
    assert answers[0].status == 2
    assert hint in answers[0].body
    _no_secret(answers, *secrets)


# ----------------------------------------------------------------------------- mail


def _mail(shell, subject: str, body: str = "") -> list[Outbox]:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "bob@example.org", "pbmserv@example.org", subject
    msg["Message-ID"] = f"<{abs(hash(subject + body))}@client.example>"
    msg["Date"] = format_datetime(shell.clock.now)
    msg.set_content(body or "\n")
    with shell.sessions() as session:
        before = session.scalar(select(Outbox.id).order_by(Outbox.id.desc()).limit(1)) or 0
    inbox.store(
        shell.sessions, msg.as_bytes(), "bob@example.org", ["pbmserv@example.org"], shell.clock.now
    )
    assert process_next(shell.sessions, shell.settings, lambda: shell.clock.now) is not None
    with shell.sessions() as session:
        return list(session.scalars(select(Outbox).where(Outbox.id > before)))


@pytest.mark.parametrize(
    ("subject", "body", "secrets", "hint"),
    [
        ("polis moev 101 bob pw-bob b2-b3", "", ["pw-bob"], "Did you mean 'move'?"),
        ("sigunp carol pw-carol", "", ["pw-carol"], "Did you mean 'signup'?"),
        ("hello", "change pasword bob pw-bob newpass1", ["pw-bob", "newpass1"], ""),
        ("polis move 101 bob 'my secret' b2-b3", "", [SECRET, "secret"], ""),
        ("polis show 101", "polis moev 101 bob pw-bob b2-b3\nsigunp x pw-x", ["pw-bob"], ""),
    ],
)
def test_mail_answers_never_show_a_password(shell, subject, body, secrets, hint):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    mails = _mail(shell, subject, body)
    assert mails
    for mail in mails:
        for secret in secrets:
            assert secret not in mail.subject and secret not in mail.body, (secret, mail.body)
    if hint:
        assert any(hint in m.body for m in mails), mails[0].body


def _kept(shell) -> str:
    """The kept copy of the mail processed last (its raw bytes are dropped)."""
    with shell.sessions() as session:
        raw = session.scalar(select(Inbox.raw).order_by(Inbox.id.desc()).limit(1))
    assert raw is not None and b"X-Pbmserv-Masked" in raw
    return raw.decode()


def _nowhere(shell, mails: list[Outbox], *secrets: str) -> None:
    """No secret in the answers, in the outbox, in the mail's kept copy, in any key, in any
    case (a userid is lower-cased)."""
    kept = _kept(shell).lower()
    with shell.sessions() as session:
        keys = " ".join(session.scalars(select(AuthFailure.key))).lower()
        outbox = [(m.subject + m.body).lower() for m in session.scalars(select(Outbox))]
    for secret in (s.lower() for s in secrets):
        for mail in mails:
            assert secret not in (mail.subject + mail.body).lower(), (secret, mail.body)
        assert all(secret not in text for text in outbox), secret
        assert secret not in kept, (secret, kept)
        assert secret not in keys, (secret, keys)


@pytest.mark.parametrize(
    ("subject", "body", "shown"),
    [  # (bob's password is pw-bob: mistakes that put it where no reading of the line expects)
        ("plois mvoe 101 pw-bob b2-b3", "", "Your subject was: plois mvoe 101 ******** *****"),
        ("Re: move 101 bob pw-bob b2-b3", "", "Your subject was: Re: move 101 bob ******** ***"),
        ("hello", "move 101 bob pw-bob b2-b3", "  move 101 bob ******** *****\n"),
        ("polis show 101", "move 101 bob pw-bob b2-b3", "  move 101 bob ******** *****\n"),
        ("Re: polis move bob pw-bob b2-b3", "", "  polis move bob ******** *****\n"),
        ("polis 101 bob pw-bob b2-b3", "", "  polis 101 bob ******** *****\n"),
        ("polis move pw-bob 101 bob b2-b3", "", "  polis move ******** 101 ******** *****\n"),
        ("polis resign bob pw-bob", "", "  polis resign bob ********\n"),
        ("polis queue bob pw-bob b2-b3", "", "  polis queue bob ******** *****\n"),
        ("Re: Polis Board 101 bob", "polis move bob pw-bob b2-b3", "  polis move bob ********"),
    ],
)
def test_a_line_not_read_as_its_command_shows_no_word_that_may_be_its_password(
    shell, subject, body, shown
):
    """A line refused as usage (the board forgotten, words out of place), a subject that only
    looks like a command, a game command without its game word: where the password stands is
    not known, so the line is masked as a line not understood in the answer (its error
    message too) and in the kept copy.  Each of these showed pw-bob."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    [answer] = _mail(shell, subject, body)
    assert shown.replace("*", "") in answer.body.replace("*", ""), answer.body
    _nowhere(shell, [answer], "pw-bob")


@pytest.mark.parametrize("subject", ["hello", "polis show 101"])
def test_lines_not_understood_are_shown_without_their_passwords(shell, subject):
    """The answer lists them as the mail's kept copy masks them, by one rule; a line never
    run shows no word that could be its password (here a forgotten userid)."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    body = (
        "plois mvoe 101 alice Sekrit77 a7-a6\nsingup zed Sekrit88\n"
        "chnage pasword alice Sekrit99 newpw123\nplois mvoe 101 Sekrit66 a7-a6\n"
    )
    mails = _mail(shell, subject, body)
    _nowhere(shell, mails, "Sekrit77", "Sekrit88", "Sekrit99", "newpw123", "Sekrit66")
    [answer] = [m for m in mails if m.recipient == "bob@example.org"]
    shown = answer.body.split("Lines not understood")[1]
    for line in (
        "plois mvoe 101 ******** ******** ********",
        "singup zed ********",
        "chnage pasword ******** ******** ********",
        "plois mvoe 101 ******** ********",
    ):
        assert f"\n  {line}\n" in shown and f"\n{line}\n" in _kept(shell), line


def test_an_unknown_userid_is_neither_repeated_nor_stored(shell):
    """A forgotten userid puts the password in its place: the answer says the userid is
    unknown without the word, masks both slots, and the failure counts under the sender."""
    shell.signup("alice", "bob")
    [answer] = _mail(shell, "ploy move 102 Zq9-secret3 e2-e3")
    assert "Error: unknown userid" in answer.body
    assert "Your command was:\n  ploy move 102 ******** ********\n" in answer.body
    _nowhere(shell, [answer], "Zq9-secret3")
    with shell.sessions() as session:
        assert list(session.scalars(select(AuthFailure.key))) == ["sender:bob@example.org"]
    refused = shell("polis move 101 Zq9-secret4 a7-a6")  # the shell: no sender, no key
    assert refused.status == 1 and "unknown userid" in refused.body
    assert "Zq9-secret4" not in refused.body
    with shell.sessions() as session:
        assert list(session.scalars(select(AuthFailure.key))) == ["sender:bob@example.org"]


@pytest.mark.parametrize(
    "line",
    [
        "message --text hi carol Zq9-secret3 bob",
        "polis move 101 alice --foo Zq9-secret1 a7",
        "ploy resign 102 --x carol Zq9-secret3",
        "broadcast --text hello admin Zq9-secret5",
        "polis move 101 -- alice Zq9-secret1 a7-a6",
        "pbmserv -- polis move 101 alice Zq9-secret1 a7-a6",
    ],
)
def test_option_words_never_uncover_a_password_of_a_mail(shell, line):
    shell.signup("alice", "bob", "carol")
    shell.ok("polis challenge alice bob")
    mails = _mail(shell, line)
    assert mails
    _nowhere(shell, mails, "Zq9-secret")


def test_a_zero_width_space_separates_words_for_the_run_and_for_the_mask(shell):
    """The line runs (its words split at U+200B), so its password is masked in the kept copy
    and the answer as well."""
    shell.signup("alice", "bob")
    [answer] = _mail(shell, "hello", "notifications\u200bbob\u200bpw-bob\u200bdigest\n")
    assert answer.subject == "pbmserv notifications" and "digest" in answer.body, answer.body
    _nowhere(shell, [answer], "pw-bob")
    assert "notifications bob ******** digest" in _kept(shell)


@pytest.mark.slow
def test_the_console_scripts_never_print_a_password(tmp_path) -> None:
    """The real shell: a quoted password with a blank and misspelt commands, in subprocesses."""
    from test_shell import pbmserv

    data = tmp_path / "data"
    assert pbmserv("signup", "alice", SECRET, "alice@example.org", data=data).returncode == 0
    assert pbmserv("signup", "bob", "pw-bob", "bob@example.org", data=data).returncode == 0
    assert pbmserv("challenge", "alice", "bob", data=data, script="polis").returncode == 0
    moved = pbmserv("move", "101", "alice", SECRET, "a7-a6", data=data, script="polis")
    assert moved.returncode == 0, moved.stderr
    runs = [
        moved,
        pbmserv("moev", "101", "bob", "pw-bob", "b2-b3", data=data, script="polis"),
        pbmserv("sigunp", "carol", "pw-carol", data=data),
        pbmserv("change", "pasword", "bob", "pw-bob", "newpass1", data=data),
    ]
    assert [r.returncode for r in runs] == [0, 2, 2, 2]
    assert "Did you mean 'move'?" in runs[1].stderr
    for run in runs:
        for secret in ("secret", "pw-bob", "pw-carol", "newpass1"):
            assert secret not in run.stdout + run.stderr, (secret, run.stdout, run.stderr)

"""Passwords typed where the classic habit puts them are never repeated nor kept in clear:
in the answer to a mail, in the other players' board mails and in the mail's kept copy."""

from __future__ import annotations

import itertools
from email.utils import format_datetime

from sqlalchemy import select

from pbmserv.commands.grammar import mask_passwords
from pbmserv.store.models import Comment, Inbox

_IDS = itertools.count(1)


def mail(shell, settings, sessions, clock, sender, subject, body=""):
    """Mail ``subject`` and ``body`` through the worker: (the mails it queued, the kept copy)."""
    from pbmserv.mail import inbox
    from pbmserv.mail.worker import process_next

    raw = (
        f"From: {sender}\r\nTo: pbmserv@example.org\r\nSubject: {subject}\r\n"
        f"Date: {format_datetime(clock.now)}\r\n"
        f"Message-ID: <m{next(_IDS)}@example.org>\r\n\r\n{body}"
    ).encode()
    before = len(shell.outbox())
    inbox.store(sessions, raw, sender, ["pbmserv@example.org"], clock.now)
    while process_next(sessions, settings, lambda: clock.now) is not None:
        pass
    with sessions() as s:
        kept = s.scalars(select(Inbox.raw).order_by(Inbox.id.desc())).first()
    return shell.outbox()[before:], kept.decode()


def everything(out, kept) -> str:
    return "\n".join([*(f"{m.subject}\n{m.body}" for m in out), kept])


# ----------------------------------------------------------------------------- no such player


def test_a_password_after_the_userid_of_a_command_that_takes_none_is_not_repeated(
    shell, settings, sessions, clock
):
    shell.signup("dora", "bob", "richard")
    shell.ok("polis challenge dora bob")
    for line in (
        "polis games dora doraPW77",
        "polis history dora doraPW77",
        "polis show dora doraPW77",
        "all show doraPW77",
        "polis challenge richard bob rpw12345",
    ):
        out, kept = mail(shell, settings, sessions, clock, "dora@example.org", line)
        text = everything(out, kept)
        assert out and "names no player" in out[0].body, line
        assert "pw77" not in text.lower() and "rpw12345" not in text, line


def test_a_password_out_of_place_in_a_refused_login_is_not_repeated(
    shell, settings, sessions, clock
):
    """A login refused (the userid typed twice, split in two, a word forgotten): the password
    stood where the move goes, and was repeated in the answer and kept in clear."""
    shell.ok("signup dora doraPW77 dora@example.org")
    shell.signup("bob")
    shell.ok("polis challenge dora bob")
    for line in (
        "polis move 101 dora dora doraPW77",
        "polis move 101 do ra doraPW77 a7-a6",
        "polis move 101 dora a7-a6 doraPW77",
        "polis queue 101 dora bob doraPW77 a7-a6",
    ):
        out, kept = mail(shell, settings, sessions, clock, "dora@example.org", "hello", line)
        text = everything(out, kept)
        assert out and "Error" in out[0].subject, line
        assert "pw77" not in text.lower(), (line, text)


# ----------------------------------------------------------------------------- argument orders


def test_showas_takes_the_board_first_like_every_board_command(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    first = shell.ok("polis showas 101 alice pw-alice").body
    classic = shell.ok("polis showas alice pw-alice 101").body
    assert first == classic
    assert shell("polis showas 101 alice wrongpw").status == 1


def test_every_order_a_player_may_type_is_masked():
    for line, masked in (
        ("ploy showas 104 alice secret1", "ploy showas 104 alice ********"),
        ("ploy showas alice secret1 104", "ploy showas alice ******** 104"),
        ("limit alice 3 secret1", "limit alice ******** ********"),
        ("limit alice secret1 3", "limit alice ******** 3"),
        ("notifications alice once secret1", "notifications alice ******** ********"),
        ("polis move 101 alice secret1 e2-e3", "polis move 101 alice ******** e2-e3"),
    ):
        assert mask_passwords(line) == masked, line


# ----------------------------------------------------------------------------- comments


def move_with_comment(
    shell, settings, sessions, clock, body: str, password: str = "pw-alice"
) -> tuple[str, str]:
    """alice (with ``password``) moves by mail with ``body`` below the line: everything sent
    and kept of it, and the comment the board keeps."""
    shell.ok(f"signup alice {password} alice@example.org")
    shell.signup("bob")
    shell.ok("polis challenge alice bob")
    out, kept = mail(
        shell,
        settings,
        sessions,
        clock,
        "alice@example.org",
        f"polis move 101 alice {password} a7-a6",
        body,
    )
    with sessions() as s:
        comments = " ".join(s.scalars(select(Comment.text)))
    return everything(out, kept) + comments, comments


def test_a_password_in_a_comment_is_masked_whatever_its_punctuation_and_case(
    shell, settings, sessions, clock
):
    body = "My password is pw-alice, don't tell. (pw-alice) 'pw-alice' PW-ALICE pw-alice.\n"
    text, comments = move_with_comment(shell, settings, sessions, clock, body)
    assert "don't tell" in comments
    assert "pw-alice" not in text.lower(), text


def test_the_punctuation_around_a_password_in_prose_stays():
    from pbmserv.commands.grammar import password_mask

    mask = password_mask(commands=["polis move 101 alice Secret1 a7-a6"], guess=False)
    assert mask("It is (SECRET1), 'secret1'.") == "It is (********), '********'."
    joined = "secret1's pw=secret1 alice/secret1 xsecret1 secret12"  # (not inside a word)
    assert mask(joined) == "********'s pw=******** alice/******** xsecret1 secret12"


def test_a_password_spelled_with_invisible_or_full_width_characters_is_masked(
    shell, settings, sessions, clock
):
    """A soft hyphen or a zero-width joiner inside the password (pasted from a word
    processor), or a phone's full-width letters, read as the password to its reader; they
    went to the opponent and the kept copy as they were."""
    import unicodedata

    spellings = [
        "pw\u00ad-alice",
        "pw-al\u200dice",
        "\uff50\uff57\uff0d\uff41\uff4c\uff49\uff43\uff45",
    ]
    body = "Do not tell: " + ", ".join(spellings) + ". Bye\n"
    text, comments = move_with_comment(shell, settings, sessions, clock, body)
    assert "Do not tell: ********, ********, ********. Bye" in comments
    read = unicodedata.normalize("NFKC", text)
    assert "pw-alice" not in "".join(c for c in read if c not in "\u00ad\u200d").lower()


def test_a_secret_word_that_reads_as_nothing_masks_nothing(shell, settings, sessions, clock):
    """A soft hyphen typed as the userid is an unknown userid, so a secret word: folded to
    nothing, it matched between any two blanks or signs, and the answer and the mail's kept
    copy were strewn with masks ('Hi,******** ********(bob)')."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    body = "polis move 101 \u00ad pw-alice a7-a6\n\nHi, (bob) -- see you.\n"
    out, kept = mail(shell, settings, sessions, clock, "alice@example.org", "hello", body)
    assert "unknown userid" in out[0].body
    assert "> Hi, (bob) -- see you." in out[0].body
    assert "Hi, (bob) -- see you." in kept and "pw-alice" not in everything(out, kept)


def test_a_spelled_password_inside_a_longer_word_stays():
    from pbmserv.commands.grammar import password_mask

    mask = password_mask(commands=["polis move 101 alice Secret1 a7-a6"], guess=False)
    assert (
        mask("x\uff53ecret1 se\u00adcret1s \uff33ECRET\uff11!")
        == "x\uff53ecret1 se\u00adcret1s ********!"
    )
    for invisible in ("\u034f", "\u2062", "\ufe0f"):  # (and the other invisible ones)
        assert mask(f"it is sec{invisible}ret1.") == "it is ********."


def test_a_password_with_accents_or_marks_that_show_as_nothing_is_masked(
    shell, settings, sessions, clock
):
    """An accent typed as a combining mark (macOS and some phones write 'e' and U+0301, where
    the command line had 'é', or the other way round), or a direction mark, isolate, word
    joiner, combining grapheme joiner or variation selector inside the password, reads as the
    password: it went to the opponent and the kept copy as it was."""
    from pbmserv.commands.grammar import password_mask

    decomposed = "cafe\u0301-alice"
    spellings = [
        decomposed,
        "caf\u200eé-alice",
        "café\u2066-alice",
        "ca\u034ffé-alice",
        "café-al\ufe0fice",
    ]
    body = "Do not tell: " + ", ".join(spellings) + ". Bye\n"
    text, comments = move_with_comment(shell, settings, sessions, clock, body, "café-alice")
    assert "Do not tell: ********, ********, ********, ********, ********. Bye" in comments
    assert not [spelled for spelled in spellings if spelled in text]
    mask = password_mask(commands=[f"polis move 101 alice {decomposed} a7-a6"], guess=False)
    assert mask("It is CAFÉ-alice, not cafés-alice.") == "It is ********, not cafés-alice."


# ----------------------------------------------------------------------------- usage text


def test_the_usage_in_an_error_is_ours_and_never_masked(shell, settings, sessions, clock):
    shell.signup("alice")
    out, kept = mail(
        shell,
        settings,
        sessions,
        clock,
        "alice@example.org",
        "polis notifications alice secret1 101 once",
    )
    assert "digest | once | default]" in out[0].body, out[0].body
    assert "secret1" not in everything(out, kept)


def test_a_command_word_begun_is_shown_and_completed(shell, settings, sessions, clock):
    shell.signup("alice")
    out, kept = mail(shell, settings, sessions, clock, "alice@example.org", "ploy hist")
    assert "No such command 'hist'. Did you mean 'history'?" in out[0].body, out[0].body
    assert "Your command was:\n  ploy hist\n" in out[0].body and "Subject: ploy hist" in kept
    assert "Usage: ploy history" in shell("ploy hist").body


# ----------------------------------------------------------------------------- pasted lines


def test_the_placeholders_of_our_line_are_explained_and_count_as_no_failure(shell, sessions):
    from pbmserv.store.models import AuthFailure

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice a7-a6")
    for _ in range(12):
        pasted = shell(
            "polis move 101 bob PASSWORD b2-b3#2", channel="mail", sender="x@example.org"
        )
        assert "replace it by your password" in " ".join(pasted.body.split()), pasted.body
    with sessions() as s:
        assert s.scalars(select(AuthFailure)).all() == []
    unfilled = shell("polis move 101 bob pw-bob <move>#2", channel="mail", sender="bob@example.org")
    assert "replace <move> by your move" in unfilled.body
    shell.ok("polis move 101 bob pw-bob b2-b3#2", channel="mail", sender="bob@example.org")
    assert "PASSWORD is the word" in shell("signup carol PASSWORD").body


def test_an_account_made_with_the_password_password_still_logs_in(shell, settings, sessions):
    """The word was refused as a password only later: such an account is not locked out."""
    from pbmserv.domain.accounts import hasher
    from pbmserv.store.models import User

    shell.signup("alice", "bob")
    with sessions() as s, s.begin():
        bob = s.scalars(select(User).where(User.userid == "bob")).one()
        bob.password_hash = hasher(settings).hash("PASSWORD")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice a7-a6")
    shell.ok("polis move 101 bob PASSWORD b2-b3#2", channel="mail", sender="bob@example.org")
    shell.ok("change password bob PASSWORD pw-bob-new")


# ----------------------------------------------------------------------------- quotes


SPAM = "".join(f"BUY CHEAP PILLS at http://spam.example/{i}\n" for i in range(60))


def test_an_error_to_a_stranger_quotes_none_of_his_text(shell, settings, sessions, clock):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    for subject in ("polis show 999", "BUY CHEAP PILLS"):
        out, _ = mail(shell, settings, sessions, clock, "victim@example.net", subject, SPAM)
        assert out and "PILLS" not in out[0].body and "PILLS" not in out[0].subject, subject
    out, _ = mail(shell, settings, sessions, clock, "victim@example.net", "polis shwo 101", SPAM)
    assert "polis shwo 101" in out[0].body  # what helps him fix it
    spam = "Halp BUY CHEAP PILLS at http://spam.example/"  # a command word's look-alike first
    out, _ = mail(shell, settings, sessions, clock, "victim@example.net", spam, SPAM)
    assert "Halp BUY ..." in out[0].body and "PILLS" not in out[0].body


def test_an_error_to_a_player_quotes_a_few_lines(shell, settings, sessions, clock):
    from pbmserv.mail.reply import QUOTED_LINES

    shell.signup("alice", "bob")
    out, _ = mail(shell, settings, sessions, clock, "alice@example.org", "polis show 999", SPAM)
    assert out[0].body.count("> BUY CHEAP PILLS") == QUOTED_LINES <= 10
    assert f"[{60 - QUOTED_LINES} more lines not quoted]" in out[0].body


# ----------------------------------------------------------------------------- operator words


def test_an_operator_command_by_mail_is_echoed_as_typed(shell, settings, sessions, clock):
    """'Your command was: pbmserv ******** ********' hid the words of 'pbmserv robot list', as
    if they might be passwords: no mail runs an operator command and none takes a password,
    so its words are shown as typed; what follows them (a robot's name) stays masked."""
    shell.signup("alice")
    for line, echoed in [
        ("pbmserv robot list", "pbmserv robot list"),
        ("Pbmserv mail outbox list", "Pbmserv mail outbox list"),
        ("pbmserv status", "pbmserv status"),
        ("pbmserv robot add polibot --game polis", "pbmserv robot add ******** ********"),
        ("pbmserv robot join polibot spring-cup", "pbmserv robot join ******** ********"),
        ("pbmserv robot withdraw polibot spring-cup", "pbmserv robot withdraw ******** ********"),
    ]:
        out, kept = mail(shell, settings, sessions, clock, "alice@example.org", line)
        assert "is an operator command: it runs only in a shell" in out[0].body, line
        assert f"Your command was:\n  {echoed}" in out[0].body, out[0].body
    assert "polibot" not in everything(out, kept)


def test_a_password_that_is_an_operator_word_stays_masked(shell, settings, sessions, clock):
    """A player whose password is an operator's word ('upgrade', 'list') and who writes it
    out of place: it is masked wherever it stands but as the operator command's own word
    right after the one before it; a mail whose command line shows it masks it everywhere."""
    shell.ok("signup dora upgrade dora@example.org")
    shell.ok("signup bob pw-bob bob@example.org")
    shell.ok("polis challenge dora bob")
    for line in (
        "pbmserv robot upgrade",
        "pbmserv robot dora upgrade",
        "pbmserv mail list upgrade",
    ):
        out, kept = mail(shell, settings, sessions, clock, "dora@example.org", line)
        assert "is an operator command" in out[0].body, line
        assert "upgrade" not in everything(out, kept), line
    body = "polis move 101 dora upgrade d7-e6\npbmserv db upgrade\n"
    out, kept = mail(shell, settings, sessions, clock, "dora@example.org", "moves", body)
    answer = next(m.body for m in out if m.recipient == "dora@example.org")
    assert "1. d7-e6" in answer and "2. pbmserv db ********" in answer, answer
    assert "upgrade" not in everything(out, kept)


def test_a_password_typed_right_after_pbmserv_is_not_named_in_the_error(
    shell, settings, sessions, clock
):
    """'pbmserv PASSWORD' (the command word forgotten) was answered "No such command
    'PASSWORD'" below 'Your command was: pbmserv ********': the word after 'pbmserv' was
    taken for the command's word and never masked.  It is named only when it cannot be a
    password (a misspelt command word)."""
    shell.signup("alice")
    for subject, body in [("pbmserv pw-alice", ""), ("moves", "pbmserv Sekr1tpass\n")]:
        out, kept = mail(shell, settings, sessions, clock, "alice@example.org", subject, body)
        assert "No such command '********'." in out[0].body, out[0].body
        text = everything(out, kept)
        assert "pw-alice" not in text and "Sekr1tpass" not in text, text
    out, _ = mail(shell, settings, sessions, clock, "alice@example.org", "pbmserv sigunp")
    assert "No such command 'sigunp'. Did you mean 'signup'?" in out[0].body, out[0].body


def test_a_subject_that_reads_as_no_command_is_shown_and_kept_masked(
    shell, settings, sessions, clock
):
    """A mail with no command line had its Subject repeated as typed ('Your subject was: robot
    dora upgrade') and kept so, where a line not understood is masked word by word: a player
    who forgot the command word ('alice pw-alice') or wrote an operator's line without
    'pbmserv' got his password back and left it at rest.  Such a Subject is now shown and
    kept as a line not understood is; one of our own subjects stays as it is."""
    shell.ok("signup dora upgrade dora@example.org")
    shell.signup("alice")
    for sender, subject, shown in [
        ("dora@example.org", "robot dora upgrade", "robot ******** ********"),
        ("alice@example.org", "alice pw-alice", "******** ********"),
        ("alice@example.org", "pw-alice", "********"),
    ]:
        out, kept = mail(shell, settings, sessions, clock, sender, subject, "Hi!\n")
        assert "Error: no command found in your mail." in out[0].body, out[0].body
        assert f"Your subject was: {shown}\n" in out[0].body, out[0].body
        text = everything(out, kept)
        assert "upgrade" not in text and "pw-alice" not in text, text
    subject = "Re: Polis Board 101 alice"
    out, kept = mail(shell, settings, sessions, clock, "alice@example.org", subject, "Hi!\n")
    assert f"Your subject was: {subject}\n" in out[0].body and subject in kept


def test_a_password_typed_after_a_command_that_takes_none_is_not_repeated(
    shell, settings, sessions, clock
):
    """'polis show 101 bob PASSWORD' (the userid and password typed by habit) was answered
    "'PASSWORD' is not a board number" above the line as typed, and kept so: a usage error of
    a command that takes no password was masked as if its line were read, and none is."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    for line, error in [
        ("polis show 101 pw-bob", "Error: '********' is not a board number"),
        ("polis show 101 bob pw-bob", "Error: 'bob' is not a board number"),
        ("all show bob pw-bob", "Error: '********' is not next or active"),
    ]:
        out, kept = mail(shell, settings, sessions, clock, "bob@example.org", line)
        assert out[0].body.startswith(error), out[0].body
        assert "pw-bob" not in everything(out, kept), line


def test_a_password_after_a_refused_command_that_takes_none_is_not_kept(
    shell, settings, sessions, clock
):
    """'polis show 999 bob PASSWORD' (no board 999) was refused above the line as typed, and
    the mail kept so for the retention: a refusal quotes the line as read, but a command that
    takes no password was not read for one that is typed there by habit."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    out, kept = mail(shell, settings, sessions, clock, "bob@example.org", "polis show 999 pw-bob")
    assert out[0].body.startswith("Error: there is no Polis board 999"), out[0].body
    assert "pw-bob" not in everything(out, kept)


def test_a_line_with_a_word_that_names_no_player_is_quoted_masked_throughout(
    shell, settings, sessions, clock
):
    """'polis history 101 bob PASSWORD' was refused for its first word ("names no player",
    not repeated in case it is a password) and quoted with that word masked and the password
    after it as typed: such a line was not read as meant, so its password may stand
    anywhere, and it is masked as a line not understood is."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    for line in ("polis history 101 bob pw-bob", "polis games 101 bob pw-bob"):
        out, kept = mail(shell, settings, sessions, clock, "bob@example.org", line)
        assert "names no player" in out[0].body, out[0].body
        assert "pw-bob" not in everything(out, kept), everything(out, kept)


# ------------------------------------------------------------------ the rule of the lines read


def test_a_line_is_read_for_its_passwords_unless_its_run_says_otherwise() -> None:
    """The one rule of which refused lines are masked as lines not understood
    (:func:`grammar.read_for_passwords`): a usage error, a refused login, a word that names no
    player, and a refused command that takes no password each say that the line's password
    may stand anywhere; a good command's line (and one refused for its move, its login
    accepted) was read for its passwords, and is masked by its declaration alone."""
    from pbmserv.commands import Answer, Request, grammar
    from pbmserv.commands.dispatch import DONE, REFUSED, USAGE

    def read(line, status=DONE, *, login_refused=False, secret_words=()):
        req = Request(settings=None, sessions=None)  # type: ignore[arg-type]
        req.login_refused, req.secret_words = login_refused, list(secret_words)
        return grammar.read_for_passwords(line, req, [Answer("subject", "body", status)])

    # a good command's line, with a password or with none, and a move refused after its login
    assert read("polis move 101 alice PASSWORD a7-a6")
    assert read("polis show 101")
    assert read("polis move 101 alice PASSWORD z9-z9", REFUSED)
    # refused as usage: not read as its command (the board forgotten)
    assert not read("polis move alice PASSWORD e2", USAGE)
    # its login refused: maybe misread (the userid typed twice)
    assert not read("polis move 101 alice alice PASSWORD", REFUSED, login_refused=True)
    # a word that names no player (maybe the password), however the command ended
    assert not read("polis history 101 bob PASSWORD", REFUSED, secret_words=["bob"])
    assert not read("polis move 101 alice PASSWORD a7-a6", secret_words=["alice"])
    # a refused command that takes no password: one typed after it by habit
    assert not read("polis show 999 bob PASSWORD", REFUSED)

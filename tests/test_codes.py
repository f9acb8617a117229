"""One-use codes by mail: a code exists only once its mail is queued, another account's code
for the same address blocks nobody, and a sent mail leaves no code in the outbox (the store's
side of tests/test_abuse.py's at-rest test: the retention and the migration)."""

from __future__ import annotations

from datetime import timedelta
from email.utils import format_datetime, make_msgid

import pytest
from sqlalchemy import func, select

from pbmserv.domain import limits, tokens
from pbmserv.domain.housekeeping import housekeeping
from pbmserv.mail import inbox, worker
from pbmserv.store.models import Address, Outbox, OutboxStatus, Token, TokenKind, User


def mail(shell, sender: str, subject: str, body: str = "") -> None:
    """``sender`` (or someone forging it) mails ``subject`` and ``body``; the worker processes
    it at once, on the test's clock, caps and all."""
    raw = (
        f"From: {sender}\nTo: {shell.settings.server_address}\nSubject: {subject}\n"
        f"Date: {format_datetime(shell.clock.now)}\n"
        f"Message-ID: {make_msgid(domain='client.example')}\n\n{body}\n"
    ).encode()
    inbox.store(shell.sessions, raw, sender, [shell.settings.server_address], shell.clock.now)
    worker.process_batch(shell.sessions, shell.settings, lambda: shell.clock.now)


def mails_to(shell, address: str) -> list[Outbox]:
    return [row for row in shell.outbox() if row.recipient == address]


def codes(shell, kind: TokenKind) -> int:
    with shell.sessions() as s:
        return s.scalar(select(func.count()).select_from(Token).where(Token.kind == kind)) or 0


def test_a_code_for_another_account_does_not_hold_back_the_owners(shell):
    """mallory signs 'squat' up with dave's address: dave still gets a code for his own
    account, and is told nothing about 'squat'.  Only the holder of an account hears that
    its own earlier code is still waiting."""
    mail(shell, "mallory@evil.example", "signup squat pw1234 dave@example.org")
    mail(shell, "dave@example.org", "signup dave pw3456")
    squat, dave = mails_to(shell, "dave@example.org")
    assert squat.subject.startswith("confirm ") and "player\n'squat'" in squat.body
    assert dave.subject.startswith("confirm ") and "player\n'dave'" in dave.body
    assert "waiting" not in dave.body
    mail(shell, "dave@example.org", f"Re: {dave.subject}")
    with shell.sessions() as s:
        confirmed = s.execute(select(User.userid, Address.confirmed).join(Address)).all()
    assert sorted(confirmed) == [("dave", True), ("squat", False)]
    for _ in range(2):  # the holder asks twice: the second time his own code is waiting
        mail(shell, "dave@example.org", "change address dave pw3456 dave@example.net")
    first, second = mails_to(shell, "dave@example.org")[-2:]
    assert "still waiting" not in first.body
    assert "sent earlier to dave@example.net is still waiting" in second.body
    assert len(mails_to(shell, "dave@example.net")) == 1


def test_a_reset_code_is_made_only_when_its_mail_is_queued(shell):
    """Carol's address has had its codes for the day (codes to other accounts naming it): a
    reset then makes no code (one would stand for a waiting code and hold back the next
    request) and says so; the next day the reset mails a code."""
    shell.settings.max_mails_per_recipient_per_day = 3
    shell.signup("carol")
    with shell.sessions() as s, s.begin():
        for _ in range(3):
            limits.bump(s, "rcpt:carol@example.org", shell.clock.now)
    mail(shell, "carol@example.org", "password reset carol")
    mail(shell, "mallory@evil.example", "password reset carol")
    [told] = mails_to(shell, "carol@example.org")  # (her own address: her answers' own cap)
    assert "no mail could be sent to the addresses of carol today" in told.body
    assert codes(shell, TokenKind.reset) == 0
    [refused] = mails_to(shell, "mallory@evil.example")
    assert "no mail could be sent to the addresses of carol today" in refused.body
    assert "a code has been mailed" not in refused.body
    shell.clock.advance(days=1)
    mail(shell, "carol@example.org", "password reset carol")
    reset, answer = mails_to(shell, "carol@example.org")[-2:]
    assert reset.subject == "pbmserv password reset" and "password new carol " in reset.body
    assert "a code has been mailed there" in answer.body
    assert codes(shell, TokenKind.reset) == 1


def test_a_code_only_an_unsent_answer_would_carry_is_not_made(shell):
    """dave's own address is over its caps: his signup (whose answer would carry his code)
    makes no account and no code, so the next day he signs up as before; a challenge code
    whose answer is not sent is withdrawn."""
    shell.settings.max_mails_per_recipient_per_day = 3
    for _ in range(3):
        mail(shell, "dave@example.org", "help")  # forged
    mail(shell, "dave@example.org", "signup dave pw3456")
    with shell.sessions() as s:
        assert s.scalar(select(func.count()).select_from(User)) == 0
    assert codes(shell, TokenKind.address) == 0
    shell.clock.advance(days=1)
    mail(shell, "dave@example.org", "signup dave pw3456")
    assert mails_to(shell, "dave@example.org")[-1].subject.startswith("confirm ")
    assert codes(shell, TokenKind.address) == 1
    shell.signup("alice", "bob")
    shell.settings.max_answers_per_day = 3
    for _ in range(3):
        mail(shell, "alice@example.org", "help")  # forged, up to alice's cap
    mail(shell, "alice@example.org", "polis challenge alice bob")  # answered by a code
    assert codes(shell, TokenKind.challenge) == 0  # withdrawn with its answer


def test_sent_mails_are_dropped_and_their_records_kept_as_long_as_processed_mails(shell):
    from pbmserv.mail.deliver import MaildirSink
    from pbmserv.mail.sender import deliver_pending

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    sink = MaildirSink(shell.settings.maildir_path)
    assert deliver_pending(shell.sessions, shell.settings, sink, shell.clock.now) == 2
    shell.clock.advance(days=1)
    shell("password reset bob", channel="mail", sender="mallory@evil.example")  # not sent yet
    days = shell.settings.inbox_retention_days
    lines = housekeeping(shell.sessions, shell.settings, shell.clock.now + timedelta(days=days))
    assert f"Sent mails' records deleted (older than {days} days): 2" in lines
    [waiting] = shell.outbox()
    assert waiting.status is OutboxStatus.pending and "password new bob " in waiting.body


def test_migration_0009_drops_the_texts_of_mails_sent_before(shell):
    from pbmserv.store import migrate

    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    engine = shell.sessions.kw["bind"]
    migrate.downgrade(engine, "0008")
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "UPDATE outbox SET status = 'sent', subject = 'confirm SECRETCODE1234567', "
            "body = 'confirm SECRETCODE1234567 ü' WHERE id = 1"
        )
    migrate.upgrade(engine)
    first, second = shell.outbox()
    assert (first.subject, first.body, first.dropped_bytes) == ("confirm ********", "", 28)
    assert second.status is OutboxStatus.pending and second.dropped_bytes is None
    assert second.body and second.subject == "New Polis Board 101 alice"


# ----------------------------------------------------------------------------- replies to codes


def code_of(row: Outbox) -> str:
    return row.subject.removeprefix("confirm ")


def confirmed(shell, userid: str) -> list[tuple[str, bool]]:
    with shell.sessions() as s:
        query = select(Address.address, Address.confirmed).join(User).where(User.userid == userid)
        return sorted(s.execute(query).all())


def flat(row: Outbox) -> str:
    return " ".join(row.body.split())


COMPLAINTS = [  # replies that say something of their own: none is a yes
    "I never signed up, STOP",
    "I never signed up\n\nOn Mon, pbmserv <pbmserv@example.net> wrote:\n> Somebody asked",
    # the code mail pasted back unquoted, its confirm line and all
    "who is this?\n\nOn Mon, pbmserv wrote:\n\nTo confirm, send the line\n  confirm {code}\n",
    "no!\n\nFrom: pbmserv <pbmserv@example.net>\nSent: Monday\n\n  confirm {code}\n",
    "help",  # a command line of its own
    "sigunp 101 x",  # a line not understood
]


def test_a_reply_with_words_of_its_own_confirms_nothing(shell):
    """mallory signs up with victim's address; victim answers the code mail: "I never signed
    up, STOP" once confirmed it.  Now no reply that says anything of its own is a yes; each
    is answered with the lines that refuse and confirm, and the code still works."""
    shell.settings.max_stranger_answers_per_day = 10  # (each complaint is answered)
    victim = "victim2@elsewhere.example"
    mail(shell, "mallory@evil.example", f"signup mallory2 pw-mallory-12 {victim}")
    [code_mail] = mails_to(shell, victim)
    code = code_of(code_mail)
    assert "If you did not ask for this, ignore this mail or send\n'refuse " in code_mail.body
    for body in COMPLAINTS:
        mail(shell, victim, f"Re: {code_mail.subject}", body.format(code=code))
        answer = mails_to(shell, victim)[-1]
        assert "nothing was confirmed: your mail says something of its own" in flat(answer)
        assert f"\n  refuse {code}\n" in answer.body and f"\n  confirm {code}\n" in answer.body
        assert confirmed(shell, "mallory2") == [(victim, False)], body
    assert "pbmserv: nothing confirmed" in {row.subject for row in mails_to(shell, victim)}
    assert codes(shell, TokenKind.address) == 1  # (still to be used, or refused)
    mail(shell, victim, f"Re: {code_mail.subject}", "> Somebody asked\n\n-- \nVictor")
    assert confirmed(shell, "mallory2") == [(victim, True)]  # quoted text and signature only


def test_an_html_complaint_beside_an_empty_plain_part_confirms_nothing(shell):
    """multipart/alternative with an empty text/plain part and the complaint in HTML: the
    empty plain part was read, a bare reply, and confirmed the code."""
    victim = "victim3@elsewhere.example"
    mail(shell, "mallory@evil.example", f"signup mallory3 pw-mallory-13 {victim}")
    [code_mail] = mails_to(shell, victim)
    raw = (
        f"From: {victim}\nTo: {shell.settings.server_address}\nSubject: Re: {code_mail.subject}\n"
        f"Date: {format_datetime(shell.clock.now)}\n"
        f"Message-ID: {make_msgid(domain='client.example')}\nMIME-Version: 1.0\n"
        'Content-Type: multipart/alternative; boundary="b"\n\n'
        "--b\nContent-Type: text/plain; charset=utf-8\n\n\n"
        "--b\nContent-Type: text/html; charset=utf-8\n\n"
        "<p>I never signed up for this. STOP mailing me.</p>\n--b--\n"
    ).encode()
    inbox.store(shell.sessions, raw, victim, [shell.settings.server_address], shell.clock.now)
    worker.process_batch(shell.sessions, shell.settings, lambda: shell.clock.now)
    assert confirmed(shell, "mallory3") == [(victim, False)]
    assert "nothing was confirmed" in flat(mails_to(shell, victim)[-1])


def test_a_line_of_its_own_or_a_bare_reply_confirms(shell):
    """The yes: ``confirm CODE`` as a line of the body (whatever else the mail says), or a
    reply with nothing of its own but a phone's signature."""
    mail(shell, "dave@example.org", "signup dave pw3456")
    mail(shell, "erin@example.org", "signup erin pw3456")
    dave, erin = mails_to(shell, "dave@example.org")[0], mails_to(shell, "erin@example.org")[0]
    mail(shell, "dave@example.org", "Re: hello", f"Yes, that was me.\n\nconfirm {code_of(dave)}")
    mail(shell, "erin@example.org", f"Re: {erin.subject}", "\nSent from my iPhone\n\n> Somebody")
    assert confirmed(shell, "dave") == [("dave@example.org", True)]
    assert confirmed(shell, "erin") == [("erin@example.org", True)]


def test_refuse_withdraws_the_code_and_the_account_never_mails_the_address_again(shell):
    victim = "victim2@elsewhere.example"
    mail(shell, "mallory@evil.example", f"signup mallory2 pw-mallory-12 {victim}")
    code = code_of(mails_to(shell, victim)[0])
    mail(shell, victim, "hi", f"refuse {code}")
    answer = mails_to(shell, victim)[-1]
    assert answer.subject == "pbmserv refuse"
    assert f"The code is withdrawn: {victim} is not confirmed for mallory2, and mallory2" in (
        flat(answer)
    )
    mail(shell, victim, f"confirm {code}")
    assert "cannot confirm: this code has been used already" in mails_to(shell, victim)[-1].body
    assert confirmed(shell, "mallory2") == [(victim, False)]
    sent = len(mails_to(shell, victim))
    for _ in range(2):  # the forger asks again, for the same account
        mail(shell, "mallory@evil.example", f"change address mallory2 pw-mallory-12 {victim}")
    assert len(mails_to(shell, victim)) == sent  # nothing more
    refused = flat(mails_to(shell, "mallory@evil.example")[-1])
    assert f"{victim} refused the mail of mallory2" in refused
    assert confirmed(shell, "mallory2") == [(victim, False)]  # the change rolled back
    # another account is another sender: one code mail each, as for any address
    mail(shell, "mallory@evil.example", f"signup mallory3 pw-mallory-12 {victim}")
    assert len(mails_to(shell, victim)) == sent + 1
    # an account that never confirmed an address is still removed in time
    shell.clock.advance(days=shell.settings.unconfirmed_account_days + 1)
    housekeeping(shell.sessions, shell.settings, shell.clock.now)
    with shell.sessions() as s:
        assert list(s.scalars(select(User.userid))) == []


def test_a_forged_challenge_is_not_confirmed_by_its_victims_complaint(shell):
    """mallory forges alice's From: "polis challenge alice bob".  alice's answer to the code
    mail once started the game; now it starts nothing, and 'refuse' withdraws the challenge."""
    shell.signup("alice", "bob")
    mail(shell, "alice@example.org", "polis challenge alice bob")  # forged
    code_mail = mails_to(shell, "alice@example.org")[-1]
    mail(shell, "alice@example.org", f"Re: {code_mail.subject}", "I challenged nobody!")
    assert "nothing was confirmed" in mails_to(shell, "alice@example.org")[-1].body
    assert codes(shell, TokenKind.challenge) == 1
    mail(shell, "alice@example.org", f"refuse {code_of(code_mail)}")
    answer = flat(mails_to(shell, "alice@example.org")[-1])
    assert "The code is withdrawn: the challenge 'polis challenge alice bob' will not start." in (
        answer
    )
    mail(shell, "alice@example.org", f"Re: {code_mail.subject}")
    assert "this code has been used already" in mails_to(shell, "alice@example.org")[-1].body
    assert mails_to(shell, "bob@example.org") == []


def test_a_reply_to_a_reset_mail_changes_nothing_and_its_code_can_be_refused(shell):
    """A reset code works only in 'password new' with a new password.  A reply to its mail
    that pastes it back unquoted holds that line with NEWPASSWORD unset: no command (it once
    set the password "NEWPASSWORD").  'refuse' withdraws the code."""
    shell.signup("carol")
    mail(shell, "mallory@evil.example", "password reset carol")
    reset = mails_to(shell, "carol@example.org")[-1]
    code = reset.body.split("password new carol ")[1].split()[0]
    assert f"If it was not you, ignore this mail or send\n'refuse {code}'" in reset.body
    pasted = "I did not ask!\n\n" + reset.body  # no attribution, nothing quoted
    mail(shell, "carol@example.org", f"Re: {reset.subject}", pasted)
    shell.ok("change password carol pw-carol pw-carol-2")  # the old password still holds
    mail(shell, "carol@example.org", "hi", f"refuse {code}")
    assert "the password of carol stays as it is" in flat(mails_to(shell, "carol@example.org")[-1])
    mail(shell, "carol@example.org", f"password new carol {code} Pw-new-123")
    assert "this code has been used already" in mails_to(shell, "carol@example.org")[-1].body


@pytest.mark.parametrize("after", ["- NO, STOP", "NO", "no thanks"])
def test_a_confirm_line_with_words_after_its_code_confirms_nothing(shell, after):
    """A forged sign-up's victim replies with an empty body and 'Re: confirm CODE - NO, STOP':
    the words after the code were dropped and the address confirmed.  Now such a line, in the
    Subject, the body or the shell, is a complaint: nothing is confirmed, and the code still
    works for a plain yes."""
    shell.settings.max_stranger_answers_per_day = 10
    victim = "vic1@example.com"
    mail(shell, "forger@evil.example", f"signup fx0 forgepw {victim}")
    [code_mail] = mails_to(shell, victim)
    code = code_of(code_mail)
    mail(shell, victim, f"Re: {code_mail.subject} {after}")
    mail(shell, victim, "hello", f"confirm {code} {after}")
    for answer in mails_to(shell, victim)[1:]:
        assert "nothing was confirmed: your line has words of its own after" in flat(answer)
        assert f"\n  refuse {code}\n" in answer.body and f"\n  confirm {code}\n" in answer.body
    refused = shell(f"confirm {code} {after}")
    assert refused.status == 1 and "nothing was confirmed" in refused.body
    assert confirmed(shell, "fx0") == [(victim, False)]
    mail(shell, victim, f"Re: {code_mail.subject}")
    assert confirmed(shell, "fx0") == [(victim, True)]


def test_a_full_stop_after_the_code_is_the_end_of_a_sentence(shell):
    """'Re: confirm CODE.' answered that the code was unknown."""
    mail(shell, "fx@example.org", "signup fx0 pw-fx0-1")
    code = code_of(mails_to(shell, "fx@example.org")[-1])
    mail(shell, "fx@example.org", f"Re: confirm {code}.")
    assert confirmed(shell, "fx0") == [("fx@example.org", True)]


def test_a_confirm_line_below_prose_is_read_whatever_the_code(shell):
    """Below prose a line is a command only with a number in it: a code of letters alone (one
    in 28) was read as prose, and "Yes, that was me. / confirm CODE" confirmed nothing."""
    from pbmserv.commands import build_commands
    from pbmserv.domain.tokens import new_code
    from pbmserv.mail.parse import parse_message

    build_commands()
    for _ in range(300):
        line = f"confirm {new_code()}"
        raw = f"From: a@example.org\nSubject: Re: hello\n\nYes, that was me.\n\n{line}\n"
        assert parse_message(raw.encode()).commands == [line]


def test_a_reset_code_from_before_signoff_does_not_reopen_the_account(shell):
    """'password reset erin', then 'signoff erin PW': the code mailed before still set a new
    password and erin played again.  signoff withdraws the account's codes, and 'password
    new' refuses a closed account whatever code it is given."""
    shell.signup("erin", "bob")
    mail(shell, "mallory@evil.example", "password reset erin")
    code = mails_to(shell, "erin@example.org")[-1].body.split("password new erin ")[1].split()[0]
    shell.ok("signoff erin pw-erin")
    assert codes(shell, TokenKind.reset) == 0
    refused = shell(f"password new erin {code} pw-erin-new", channel="mail", sender="x@example.org")
    assert refused.status == 1 and "cannot set the password" in refused.body
    assert shell("polis challenge erin bob pw-erin-new").status == 1
    with shell.sessions() as s, s.begin():  # a code that outlived the signoff, however
        erin = s.scalar(select(User).where(User.userid == "erin"))
        code = tokens.issue(s, TokenKind.reset, user_id=erin.id, now=shell.clock.now, hours=48)
    refused = shell(f"password new erin {code} pw-erin-new")
    assert refused.status == 1 and "the account erin is closed" in refused.body
    with shell.sessions() as s:
        assert s.scalar(select(User.password_hash).where(User.userid == "erin")) == "!closed"


def test_an_old_code_applies_the_latest_change_of_addresses(shell):
    """frank asks for frank2 (code T1), goes back to frank, then asks for both: the answer
    says T1 is still waiting, and T1 once applied its own request (frank2 alone) and deleted
    frank.  A waiting code now applies the latest request, by mail or from the shell."""
    shell.signup("frank")
    change = "change address frank pw-frank"
    mail(shell, "frank@example.org", f"{change} frank2@example.org")
    [t1] = mails_to(shell, "frank2@example.org")
    mail(shell, "frank@example.org", f"{change} frank@example.org")
    mail(shell, "frank@example.org", f"{change} frank@example.org frank2@example.org")
    assert "is still waiting" in mails_to(shell, "frank@example.org")[-1].body
    mail(shell, "frank2@example.org", f"confirm {code_of(t1)}")
    assert confirmed(shell, "frank") == [("frank2@example.org", True), ("frank@example.org", True)]
    shell.signup("gina")  # the shell's change confirms at once; a code mailed before keeps it
    mail(shell, "gina@example.org", "change address gina pw-gina gina2@example.org")
    [t2] = mails_to(shell, "gina2@example.org")
    shell.ok("change address gina pw-gina gina@example.org gina2@example.org")
    mail(shell, "gina2@example.org", f"confirm {code_of(t2)}")
    assert confirmed(shell, "gina") == [("gina2@example.org", True), ("gina@example.org", True)]


def test_codes_to_a_players_confirmed_address_count_under_its_daily_cap(shell):
    """60 sign-ups forged from alice's confirmed address sent her 47 codes in a day (only the
    cap on her answers stopped them) and made 47 throw-away accounts.  Codes count under
    max_mails_per_recipient_per_day whoever gets them; her answers keep their own cap."""
    shell.settings.max_mails_per_recipient_per_day = 3
    shell.signup("alice", "bob")
    for i in range(5):
        mail(shell, "alice@example.org", f"signup squat{i} pass{i}xx")
    answers = mails_to(shell, "alice@example.org")
    assert [a.subject.startswith("confirm ") for a in answers] == [True] * 3 + [False] * 2
    assert "No mail could be sent to alice@example.org today" in flat(answers[-1])
    assert codes(shell, TokenKind.address) == 3
    with shell.sessions() as s:
        assert s.scalar(select(func.count()).select_from(User)) == 2 + 3
    mail(shell, "alice@example.org", "polis challenge alice bob")  # a code too
    assert "no code can be mailed to alice@example.org today" in flat(
        mails_to(shell, "alice@example.org")[-1]
    )
    assert codes(shell, TokenKind.challenge) == 0
    mail(shell, "alice@example.org", "help")  # her answers are not capped by it
    assert mails_to(shell, "alice@example.org")[-1].subject == "pbmserv help"


def test_plus_addresses_share_the_caps_of_their_mailbox(shell):
    """8 mails each from target+0..7@example.com all got answers: each +tag had caps of its
    own.  The caps now count the mailbox (+detail dropped); answers still go to the address
    written."""
    shell.settings.max_stranger_answers_per_day = 3
    shell.settings.max_mails_per_recipient_per_day = 4
    for i in range(8):
        mail(shell, f"target+{i}@example.com", "help")
    sent = [row.recipient for row in shell.outbox()]
    assert sent == [f"target+{i}@example.com" for i in range(4)]  # 3 answers and the notice
    for i in range(4):  # codes to the same mailbox: its cap is spent
        mail(shell, "mallory@evil.example", f"signup squat{i} pw-squat target+x{i}@example.com")
    assert len(shell.outbox()) == 4 + 4  # (mallory's answers, no code)
    assert codes(shell, TokenKind.address) == 0
    spellings = ["victim", "v.ictim", "vi.c.tim", "victim+x"]  # one Gmail mailbox
    for local in spellings:
        mail(shell, f"{local}@gmail.com", "help")
    mail(shell, "Vic.tim@googlemail.com", "help")
    gmail = [r.recipient for r in shell.outbox() if "mail.com" in r.recipient]
    assert len(gmail) == 4, gmail  # 3 answers and the notice


def test_the_comment_of_a_challenge_by_mail_reaches_the_players_once_confirmed(shell):
    """The body of a challenge mail waits with the challenge (passwords masked, as in any
    comment) and goes to the players under the new board as "alice writes:"."""
    shell.signup("alice", "bob", "carol")
    body = "Good luck all\nmy old line: polis move 101 alice pw-alice a7-a6"
    mail(shell, "alice@example.org", "pylon challenge alice bob carol -size=3", body)
    code_mail = mails_to(shell, "alice@example.org")[-1]
    assert "This comment waits with it and goes to the players with the board:" in code_mail.body
    assert "\n  | Good luck all\n" in code_mail.body  # (he confirms what he sees)
    with shell.sessions() as s:
        assert "pw-alice" not in str(s.scalar(select(Token.payload)))
    mail(shell, "alice@example.org", f"Re: {code_mail.subject}")
    for address in ("bob@example.org", "carol@example.org"):
        new = mails_to(shell, address)[-1]
        assert new.subject.startswith("New Pylon Board 101")
        assert "alice writes:\n\nGood luck all\n" in new.body
        assert "pw-alice" not in new.body


def test_an_account_that_confirmed_no_address_cannot_be_seated(shell):
    """mallory signs 'squat' up with dave's address, which dave never confirms, and her
    accomplice challenges it: a seat would keep the account (and its userid) for ever, so the
    challenge is refused, by mail and in the shell, and the account is removed in time."""
    shell.signup("alice")
    mail(shell, "mallory@evil.example", "signup squat pw1234 dave@example.org")
    mail(shell, "alice@example.org", "polis challenge alice squat")
    answer = mails_to(shell, "alice@example.org")[-1]
    assert "squat has not confirmed an address yet" in answer.body
    assert codes(shell, TokenKind.challenge) == 0
    result = shell("polis challenge alice squat")
    assert result.status == 1 and "squat has not confirmed an address yet" in result.body
    shell.clock.advance(days=shell.settings.unconfirmed_account_days + 1)
    housekeeping(shell.sessions, shell.settings, shell.clock.now)
    with shell.sessions() as s:
        assert list(s.scalars(select(User.userid))) == ["alice"]


def test_each_code_of_an_answer_says_how_a_reply_confirms_it(shell):
    """alice challenges at two games in one mail: one answer carries both codes, its subject
    the first one only.  Each section told her to reply to the mail, and her reply started
    one game of the two.  Now every section that says a reply confirms it is started by the
    reply, and the other says to send its line, which starts it."""
    shell.signup("alice", "bob", "carol")
    body = "ploy challenge alice bob\npolis challenge alice carol\nsignup alice2 pw-alice2-x"
    mail(shell, "alice@example.org", "", body)
    answer = mails_to(shell, "alice@example.org")[-1]
    sections = answer.body.split("=" * 72)[2::2]  # the sections' texts, under their headings
    assert len(sections) == 3 and answer.subject == f"confirm {code_of_section(sections[0])}"
    told_to_reply = [s for s in sections if "reply to this mail (keep" in flat_text(s)]
    assert told_to_reply == sections[:1]
    for later in sections[1:]:
        assert "a reply to this mail confirms only the code in its subject" in flat_text(later)
    mail(shell, "alice@example.org", f"Re: {answer.subject}", "> Your mail held 3 command")
    assert [row.subject for row in mails_to(shell, "bob@example.org")] == [
        "New Ploy Board 101 alice"
    ]
    assert mails_to(shell, "carol@example.org") == []
    assert confirmed(shell, "alice2") == [("alice@example.org", False)]
    for section in sections[1:]:
        mail(shell, "alice@example.org", f"confirm {code_of_section(section)}")
    assert mails_to(shell, "carol@example.org")[-1].subject == "New Polis Board 101 alice"
    assert confirmed(shell, "alice2") == [("alice@example.org", True)]


def code_of_section(text: str) -> str:
    return text.split("\n  confirm ", 1)[1].split("\n", 1)[0]


def flat_text(text: str) -> str:
    return " ".join(text.split())


def test_a_wrong_password_says_how_to_set_a_new_one(shell):
    """dora mistypes her password (they are case-sensitive): the refusal said "wrong
    password" and no more.  It now says so and gives the line that mails her a reset code,
    which she sends as it stands; her code then sets a new password."""
    shell.signup("dora")
    mail(shell, "dora@example.org", "vacation dora PW-DORA 3")
    refusal = mails_to(shell, "dora@example.org")[-1]
    assert "wrong password for 'dora'" in refusal.body
    assert "Passwords are case-sensitive." in refusal.body
    line = refusal.body.split("send the line\n", 1)[1].split("\n", 1)[0].strip()
    assert line == "password reset dora"
    mail(shell, "dora@example.org", f"Re: {refusal.subject}", f"{line}\n\n> {refusal.body}")
    reset = next(r for r in mails_to(shell, "dora@example.org") if "password new dora" in r.body)
    code = reset.body.split("password new dora ")[1].split()[0]
    mail(shell, "dora@example.org", f"password new dora {code} Pw-dora-new")
    shell.ok("vacation dora Pw-dora-new 3")


def test_a_new_players_first_confirmation_says_how_to_begin(shell):
    """erin signs up by mail and confirms: the answer said where her mail goes, and no
    more.  It now welcomes her and names 'list' and 'help', which answer her; a later
    confirmation (a change of address) says where mail goes only."""
    mail(shell, "erin@example.org", "signup erin pw-erin-1")
    mail(shell, "erin@example.org", f"Re: {mails_to(shell, 'erin@example.org')[-1].subject}")
    done = mails_to(shell, "erin@example.org")[-1]
    assert done.body.startswith("erin@example.org is confirmed: mail for erin goes there")
    assert "Welcome, erin: you can play now. Send 'list' for the games" in done.body
    for line in ("list", "help"):  # (the words she is given answer her)
        mail(shell, "erin@example.org", line)
        assert "Error" not in mails_to(shell, "erin@example.org")[-1].subject
    mail(shell, "erin@example.org", "change address erin pw-erin-1 erin@example.net")
    mail(shell, "erin@example.net", f"Re: {mails_to(shell, 'erin@example.net')[-1].subject}")
    moved = mails_to(shell, "erin@example.net")[-1]
    assert "is confirmed" in moved.body and "Welcome" not in moved.body


def test_a_reply_that_adds_the_other_codes_lines_confirms_them_all(shell):
    """The answer to two challenges says to reply for the first code and to send the line of
    the second: alice does both in one mail, a reply with the second's line in its body.
    That line counted as words of her own, and the reply confirmed nothing for the first.
    Bare confirm lines are a yes: both games start.  Prose beside them still is no yes."""
    shell.signup("alice", "bob", "carol")
    mail(shell, "alice@example.org", "", "ploy challenge alice bob\npolis challenge alice carol")
    answer = mails_to(shell, "alice@example.org")[-1]
    second = code_of_section(answer.body.split("=" * 72)[4])
    assert second != code_of(answer)
    mail(shell, "alice@example.org", f"Re: {answer.subject}", f"confirm {second}\n\n> Your mail")
    assert [r.subject for r in mails_to(shell, "bob@example.org")] == ["New Ploy Board 101 alice"]
    assert [r.subject for r in mails_to(shell, "carol@example.org")] == [
        "New Polis Board 101 alice"
    ]
    mail(shell, "alice@example.org", "", "pylon challenge alice bob\nplotto challenge alice carol")
    answer = mails_to(shell, "alice@example.org")[-1]
    second = code_of_section(answer.body.split("=" * 72)[4])
    mail(shell, "alice@example.org", f"Re: {answer.subject}", f"confirm {second}\nNo, stop!")
    assert "nothing was confirmed" in flat(mails_to(shell, "alice@example.org")[-1])
    assert not any("Pylon" in row.subject for row in mails_to(shell, "bob@example.org"))

"""One-use codes by mail: a code exists only once its mail is queued, another account's code
for the same address blocks nobody, and a sent mail leaves no code in the outbox (the store's
side of tests/test_abuse.py's at-rest test: the retention and the migration)."""

from __future__ import annotations

from datetime import timedelta
from email.utils import make_msgid

from sqlalchemy import func, select

from pbmserv.domain import limits
from pbmserv.domain.housekeeping import housekeeping
from pbmserv.mail import inbox, worker
from pbmserv.store.models import Address, Outbox, OutboxStatus, Token, TokenKind, User


def mail(shell, sender: str, subject: str) -> None:
    """``sender`` (or someone forging it) mails ``subject``; the worker processes it at once,
    on the test's clock, caps and all."""
    raw = (
        f"From: {sender}\nTo: {shell.settings.server_address}\nSubject: {subject}\n"
        f"Message-ID: {make_msgid(domain='client.example')}\n\nhi\n"
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

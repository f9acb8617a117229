"""What the server's log says of each mail: one line per mail processed and per mail sent, so
that an operator can follow a player's mail from Postfix's log into pbmserv's, with no word
of the mail's text (its passwords) in it."""

from __future__ import annotations

from pbmserv.mail import worker
from pbmserv.mail.sender import deliver_pending, make_sink
from pbmserv.store.models import InboxStatus

DATE = b"Date: Sun, 01 Nov 2026 11:59:00 +0000\r\n"  # (the clock's, a minute before)
SIGNUP = DATE + (
    b"From: alice@example.org\r\nTo: pbmserv@example.org\r\nMessage-ID: <m1@example.org>\r\n"
    b"Subject: signup alice secret1\r\n\r\nhelp\r\n"
)
VACATION_REPLY = DATE + (
    b"From: bob@example.org\r\nTo: pbmserv@example.org\r\nMessage-ID: <m2@example.org>\r\n"
    b"Auto-Submitted: auto-replied\r\nSubject: Away\r\n\r\nI am away.\r\n"
)
FORGED_ID = DATE + (  # a Message-ID with a control character (a terminal's escape) is no Message-ID
    b"From: carol@example.org\r\nTo: pbmserv@example.org\r\n"
    b"Message-ID: <x\x1b[2Jforged@example.org>\r\nSubject: help\r\n\r\n"
)


def test_each_mail_processed_and_sent_is_one_line_of_the_log(
    operator, settings, sessions, clock, tmp_path, caplog
):
    """The server logged failures only: a day of play left the journal empty, and a player's
    "I sent a move and heard nothing" could not be followed from Postfix's log into pbmserv."""
    for index, raw in enumerate((SIGNUP, VACATION_REPLY, FORGED_ID)):
        mail = tmp_path / f"{index}.eml"
        mail.write_bytes(raw)
        assert operator("mail", "inject", "--no-process", str(mail))[0] == 0
    with caplog.at_level("INFO", logger="pbmserv.mail"):
        done = worker.process_batch(sessions, settings, lambda: clock.now)
        assert [outcome.status for outcome in done] == [
            InboxStatus.done,
            InboxStatus.ignored,
            InboxStatus.done,
        ]
        processed = [r.getMessage() for r in caplog.records]
        caplog.clear()
        assert deliver_pending(sessions, settings, make_sink(settings), clock.now) == 2
        sent = [r.getMessage() for r in caplog.records]
    assert processed == [
        "mail 1 <m1@example.org> from alice@example.org: done, 2 command lines, 1 answer",
        "mail 2 <m2@example.org> from bob@example.org: ignored, not answered: "
        "Auto-Submitted: auto-replied",
        "mail 3 (no Message-ID) from carol@example.org: done, 1 command line, 1 answer",
    ]
    assert len(sent) == 2, sent
    for line, recipient in zip(sent, ("alice@example.org", "carol@example.org"), strict=True):
        assert line.startswith("outbox mail ") and f" to {recipient} sent: <" in line, line
    assert not any("secret1" in line for line in processed + sent)

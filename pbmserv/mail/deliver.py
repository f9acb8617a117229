"""The outbound side: a Maildir for local use, an SMTP relay for a real server, and backoff.

Both sinks have the same method, ``send(message) -> str``, for an ``EmailMessage`` or the
sender's :class:`~pbmserv.mail.compose.FlatMessage` (written as the sink itself would write
the message: ``folds_headers`` says how); failures are raised as :class:`TemporaryFailure`
(retry later) or :class:`PermanentFailure` (give up, record it).
"""

from __future__ import annotations

import mailbox
import os
import smtplib
import ssl
from datetime import datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import IO, Any

from pbmserv.files import PRIVATE_FILE, private_dir
from pbmserv.mail.compose import FlatMessage, message_id_of

RETRY_MINUTES: tuple[int, ...] = (1, 5, 15, 60, 180, 360, 720, 720, 720)
"""Waits after attempt 1, 2, ...; after the last one (about 46 hours in all) we give up."""


class DeliveryError(Exception):
    """A mail could not be handed over."""


class TemporaryFailure(DeliveryError):
    """Retry later: connection problems, 4xx answers, a misconfigured relay."""


class PermanentFailure(DeliveryError):
    """Do not retry: a 5xx answer, the recipient refused."""


def next_attempt(attempts: int, now: datetime) -> datetime | None:
    """When to try again after ``attempts`` failed attempts; None: give up for good.

    >>> from datetime import datetime
    >>> next_attempt(1, datetime(2026, 1, 1))
    datetime.datetime(2026, 1, 1, 0, 1)
    >>> next_attempt(len(RETRY_MINUTES) + 1, datetime(2026, 1, 1)) is None
    True
    """
    if attempts <= 0:
        return now
    if attempts > len(RETRY_MINUTES):
        return None
    return now + timedelta(minutes=RETRY_MINUTES[attempts - 1])


class PrivateMaildir(mailbox.Maildir):
    """A Maildir whose mails are readable by their owner only (mode 0600, see pbmserv.files),
    whatever the umask: ``mailbox`` creates them 0666 less the umask."""

    def _create_tmp(self) -> IO[Any]:  # mailbox's one hook where a new mail's file is made
        made = super()._create_tmp()  # type: ignore[misc]
        os.fchmod(made.fileno(), PRIVATE_FILE)  # before a byte of the mail is written
        return made


class MaildirSink:
    """Delivers into a Maildir (created if missing): ``make run`` users read answers at once."""

    folds_headers = False  # mailbox writes every header on one line

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def send(self, message: EmailMessage | FlatMessage) -> str:
        """Store ``message`` in ``new/``; returns the Maildir key."""
        try:
            private_dir(self.path.parent)  # (mailbox makes the Maildir's own folders 0700)
            box = PrivateMaildir(self.path, create=True)
            if isinstance(message, FlatMessage):
                return box.add(message.data)
            if not str(message.get("To", "")).isascii():  # RFC 6532: the address in UTF-8
                utf8 = message.policy.clone(utf8=True)  # type: ignore[call-arg]
                return box.add(message.as_bytes(policy=utf8))
            return box.add(message)
        except OSError as exc:  # disk full, permissions: may be fixed by the operator
            raise TemporaryFailure(f"Maildir {self.path}: {exc}") from exc

    deliver = send

    def __enter__(self) -> MaildirSink:  # as SmtpRelay's; a Maildir keeps no connection
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class SmtpRelay:
    """Hands mail to an SMTP relay with smtplib: one connection per mail, or per group of mails
    inside ``with relay:``."""

    folds_headers = True  # smtplib folds headers at the policy's 78 columns

    def __init__(
        self,
        host: str,
        port: int = 25,
        *,
        starttls: bool = False,
        username: str | None = None,
        password: str | None = None,
        timeout: float = 60.0,
        envelope_from: str | None = None,
        local_hostname: str | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.starttls = starttls
        self.username = username
        self.password = password
        self.timeout = timeout
        self.envelope_from = envelope_from
        self.local_hostname = local_hostname
        self._smtp: smtplib.SMTP | None = None  # the kept connection, inside ``with``
        self._keep = False

    def __enter__(self) -> SmtpRelay:
        """Keep one connection for every mail sent until ``__exit__`` (the sender's group)."""
        self._keep = True
        return self

    def __exit__(self, *exc: object) -> None:
        self._keep = False
        self._close()

    def send(self, message: EmailMessage | FlatMessage) -> str:
        """Send ``message`` to its To/Cc recipients; returns its Message-ID."""
        try:
            refused = self._transmit(message)
        except smtplib.SMTPRecipientsRefused as exc:
            codes = [code for code, _ in exc.recipients.values()]
            text = "; ".join(
                f"{rcpt}: {code} {_text(msg)}" for rcpt, (code, msg) in exc.recipients.items()
            )
            if codes and all(code >= 500 for code in codes):
                raise PermanentFailure(f"recipient refused: {text}") from exc
            raise TemporaryFailure(f"recipient deferred: {text}") from exc
        except (smtplib.SMTPAuthenticationError, smtplib.SMTPNotSupportedError) as exc:
            # the relay's configuration, not the mail: keep it for when the operator fixes it
            raise TemporaryFailure(f"relay {self.host}:{self.port}: {exc}") from exc
        except smtplib.SMTPResponseException as exc:
            text = f"relay {self.host}:{self.port} answered {exc.smtp_code} {_text(exc.smtp_error)}"
            if 500 <= exc.smtp_code < 600:
                raise PermanentFailure(text) from exc
            raise TemporaryFailure(text) from exc
        except (TimeoutError, smtplib.SMTPException, OSError, ssl.SSLError) as exc:
            raise TemporaryFailure(f"relay {self.host}:{self.port}: {exc!r}") from exc
        finally:
            if not self._keep:
                self._close()
        if refused:  # some recipients accepted, some not: the refused ones will not change
            text = "; ".join(f"{r}: {c} {_text(m)}" for r, (c, m) in refused.items())
            raise PermanentFailure(f"recipient refused: {text}")
        return message_id_of(message)

    deliver = send

    def _transmit(self, message: EmailMessage | FlatMessage) -> dict[str, tuple[int, bytes]]:
        """One mail over the kept connection (or a new one); a kept connection that the relay
        has dropped meanwhile is opened again once.  Any failure drops the connection."""
        reused = self._smtp is not None
        try:
            try:
                return self._hand(self._open(), message)
            except smtplib.SMTPServerDisconnected:
                if not reused:
                    raise
                self._close(polite=False)
                return self._hand(self._open(), message)
        except BaseException:
            self._close(polite=False)
            raise

    def _hand(
        self, smtp: smtplib.SMTP, message: EmailMessage | FlatMessage
    ) -> dict[str, tuple[int, bytes]]:
        to = message.to if isinstance(message, FlatMessage) else str(message.get("To", ""))
        if not to.isascii() and not smtp.has_extn("smtputf8"):
            # (smtplib's SMTPNotSupportedError would read as the relay's configuration, to be
            # retried for two days: this mail will not go through this relay)
            raise PermanentFailure(
                f"relay {self.host}:{self.port} does not offer SMTPUTF8, which mail to {to} "
                "needs (its address is not ASCII)"
            )
        if isinstance(message, FlatMessage):  # as send_message would: CRLF, From as sender
            data = message.data.replace(b"\n", b"\r\n")
            return smtp.sendmail(self.envelope_from or message.sender, [message.to], data)
        return smtp.send_message(message, from_addr=self.envelope_from)

    def _open(self) -> smtplib.SMTP:
        if self._smtp is None:
            smtp = smtplib.SMTP(
                self.host, self.port, timeout=self.timeout, local_hostname=self.local_hostname
            )
            try:
                smtp.ehlo_or_helo_if_needed()
                if self.starttls:
                    smtp.starttls(context=ssl.create_default_context())
                    smtp.ehlo()
                if self.username:
                    smtp.login(self.username, self.password or "")
            except BaseException:
                smtp.close()
                raise
            self._smtp = smtp
        return self._smtp

    def _close(self, *, polite: bool = True) -> None:
        smtp, self._smtp = self._smtp, None
        if smtp is None:
            return
        try:
            if polite:
                smtp.quit()
        except (smtplib.SMTPException, OSError):
            pass
        finally:
            smtp.close()


def _text(value: bytes | str) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)

"""The aiosmtpd handler: refuse unknown recipients early, answer 250 only once the mail is stored.

The handler knows nothing about the store: ``store_message(raw, envelope)`` is handed in and
must have written the mail durably when it returns.  Any exception becomes a 451 so the
sending server retries; a traceback never reaches the client.  Size is limited by aiosmtpd's
``data_size_limit`` (552).  ``make_controller`` builds an SMTP or LMTP listener.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.lmtp import LMTP
from aiosmtpd.smtp import SMTP

from pbmserv.clock import Clock, system_clock

log = logging.getLogger("pbmserv.listener")

TEMPORARY = "451 4.3.0 Temporary failure, please retry"
ACCEPTED = "250 Message accepted"
UNKNOWN_RECIPIENT = "550 5.1.1 <{}>: no such recipient here"
TOO_MANY_RECIPIENTS = "452 4.5.3 Too many recipients"


@dataclass(frozen=True)
class EnvelopeInfo:
    """The SMTP envelope of one received mail ('' as ``mail_from`` for the null sender)."""

    mail_from: str
    rcpt_tos: tuple[str, ...]
    peer: str
    received_at: datetime


StoreMessage = Callable[[bytes, EnvelopeInfo], Awaitable[None] | None]


def _peer(session: Any) -> str:
    peer = getattr(session, "peer", None)
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"{peer[0]}:{peer[1]}"
    return str(peer or "")


class InboundHandler:
    """aiosmtpd handler.

    ``store_message`` may be a coroutine function (awaited on the listener's loop) or a plain
    function (run in the default executor, so a slow database does not stall other sessions;
    if it returns an awaitable, that is awaited too).  ``accept_recipient(address)`` decides
    which RCPT TO addresses exist.
    """

    def __init__(
        self,
        store_message: StoreMessage,
        accept_recipient: Callable[[str], bool],
        *,
        max_recipients: int = 20,
        clock: Clock = system_clock,
    ) -> None:
        self.store_message = store_message
        self.accept_recipient = accept_recipient
        self.max_recipients = max_recipients
        self.clock = clock

    async def handle_RCPT(
        self, server: SMTP, session: Any, envelope: Any, address: str, rcpt_options: list[str]
    ) -> str:
        if len(envelope.rcpt_tos) >= self.max_recipients:
            return TOO_MANY_RECIPIENTS
        try:
            known = self.accept_recipient(address)
        except Exception:  # noqa: BLE001
            log.exception("accept_recipient(%r) failed", address)
            return TEMPORARY
        if not known:
            log.info("refused recipient %r from %s", address, _peer(session))
            return UNKNOWN_RECIPIENT.format(address.replace(">", ""))
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(rcpt_options)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: SMTP, session: Any, envelope: Any) -> str:
        status = await self._store(session, envelope)
        if isinstance(server, LMTP):  # LMTP: one answer per accepted recipient (RFC 2033)
            return "\r\n".join([status] * max(1, len(envelope.rcpt_tos)))
        return status

    async def _store(self, session: Any, envelope: Any) -> str:
        try:
            raw = envelope.original_content
            if raw is None:
                content = envelope.content
                raw = (
                    content.encode("utf-8", "surrogateescape")
                    if isinstance(content, str)
                    else content
                )
            info = EnvelopeInfo(
                mail_from=(envelope.mail_from or "").strip().removeprefix("<>"),
                rcpt_tos=tuple(envelope.rcpt_tos),
                peer=_peer(session),
                received_at=self.clock(),
            )
            if inspect.iscoroutinefunction(self.store_message):
                await self.store_message(raw, info)
            else:
                loop = asyncio.get_running_loop()
                result = await loop.run_in_executor(None, self.store_message, raw, info)
                if inspect.isawaitable(result):
                    await result
        except Exception:  # noqa: BLE001 - the client must retry, never see a traceback
            log.exception("storing a mail from %s failed", _peer(session))
            return TEMPORARY
        return ACCEPTED

    async def handle_exception(self, error: Exception) -> str:
        log.error("SMTP session error: %r", error)
        return TEMPORARY


class LMTPController(Controller):
    """A threaded controller speaking LMTP (for Postfix ``lmtp:`` transports)."""

    def factory(self) -> SMTP:
        return LMTP(self.handler, **self.SMTP_kwargs)


def make_controller(
    handler: InboundHandler,
    host: str,
    port: int,
    *,
    lmtp: bool = False,
    data_size_limit: int = 10_000_000,
    timeout: float = 300,
    hostname: str | None = None,
    ready_timeout: float = 5.0,
) -> Controller:
    """A started-on-demand aiosmtpd controller (call ``start()``/``stop()``)."""
    cls = LMTPController if lmtp else Controller
    return cls(
        handler,
        hostname=host,
        port=port,
        ready_timeout=ready_timeout,
        server_hostname=hostname,
        data_size_limit=data_size_limit,
        timeout=timeout,
        enable_SMTPUTF8=True,
    )

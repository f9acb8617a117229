"""The aiosmtpd handler: refuse unknown recipients early, answer 250 only once the mail is stored.

The handler knows nothing about the store: ``store_message(raw, envelope)`` is handed in and
must have written the mail durably when it returns.  Any exception becomes a 451 so the
sending server retries; a traceback never reaches the client, and a failing streak is logged
once (:class:`pbmserv.store.outage.Outage`).  ``make_controller`` builds an SMTP or LMTP
listener.

Size (552): ``max_message_bytes`` is counted as the mail host in front counts it
(:mod:`pbmserv.mail.size`), so aiosmtpd's ``data_size_limit``, which counts the wire, is
:func:`pbmserv.mail.size.wire_limit` of it and the handler checks the mail's size itself.

The listener shares the process, and its file descriptors, with the web pages and the store, so
it keeps at most ``max_connections`` sessions open (a new one past that is answered 421 and
closed, as SMTP servers do): 1,100 idle connections under ``ulimit -n 1024`` left the process
no descriptor, and asyncio's accept loop logged a traceback for every failed ``accept()``
(107,198 of them, 47 MB, in 6 seconds).  Should descriptors run out all the same, a failing
accept is one warning per streak (:mod:`pbmserv.listening`).  A session idle for ``timeout``
seconds (aiosmtpd restarts the timer on each valid command only) is closed.
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
from pbmserv.listening import AcceptFailures, Refusals
from pbmserv.mail.size import too_large
from pbmserv.store.outage import Outage

log = logging.getLogger("pbmserv.listener")

TEMPORARY = "451 4.3.0 Temporary failure, please retry"
ACCEPTED = "250 Message accepted"
UNKNOWN_RECIPIENT = "550 5.1.1 <{}>: no such recipient here"
TOO_MANY_RECIPIENTS = "452 4.5.3 Too many recipients"
BUSY = b"421 4.7.0 Too many connections, try again later\r\n"
TOO_LARGE = "552 5.3.4 Message too big"


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


def _utf8(text: str) -> str:
    """An envelope address as text that can be stored and sent: aiosmtpd keeps bytes that are
    no UTF-8 as surrogate escapes, which no database takes (the mail was answered 451 at each
    attempt, as if the store were away) and no answer can hold (a 451 and a logged error for
    the RCPT); they are written ``\\xff``, which makes no usable address."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


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
        max_message_bytes: int | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self.store_message = store_message
        self.max_message_bytes = max_message_bytes
        self.accept_recipient = accept_recipient
        self.max_recipients = max_recipients
        self.clock = clock
        # a database that is away or full: one warning a streak (a traceback each mail wrote
        # 228 lines for 3 mails)
        self.outage = Outage("listener", log, meanwhile="answering 451 meanwhile")

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
            return UNKNOWN_RECIPIENT.format(_utf8(address).replace(">", ""))
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
            if self.max_message_bytes is not None and too_large(raw, self.max_message_bytes):
                return TOO_LARGE
            info = EnvelopeInfo(
                mail_from=_utf8((envelope.mail_from or "").strip().removeprefix("<>")),
                rcpt_tos=tuple(_utf8(rcpt) for rcpt in envelope.rcpt_tos),
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
        except Exception as exc:  # noqa: BLE001 - the client must retry, never see a traceback
            self.outage.failed(exc)
            return TEMPORARY
        self.outage.worked()
        return ACCEPTED

    async def handle_exception(self, error: Exception) -> str:
        log.error("SMTP session error: %r", error)
        return TEMPORARY


class Gate:
    """The sessions a listener has open, shared by its protocols (all on the listener's
    loop), the refusals at the cap (logged at most once a minute) and the streak of failed
    accepts (:mod:`pbmserv.listening`)."""

    def __init__(self, max_connections: int, max_per_host: int | None = None) -> None:
        self.max_connections = max_connections
        self.max_per_host = max_per_host or max_connections
        self.open = 0
        self.hosts: dict[str, int] = {}  # the sessions open per client address
        self.refusals = Refusals(log)
        self.accepts = AcceptFailures(log, "the listener")

    def enter(self, host: str = "") -> bool:
        """Whether a new connection from ``host`` may have a session (then it counts until it
        leaves): at most ``max_connections`` in all, and ``max_per_host`` from one address, so
        that one client holding sessions open cannot shut every other sender out."""
        self.accepts.accepted()
        from_host = self.hosts.get(host, 0)
        if self.open >= self.max_connections or from_host >= self.max_per_host:
            self.refusals.refused(
                "%d SMTP connections refused (421): %d are open, %d from %s "
                "(smtp_max_connections, smtp_max_connections_per_host)",
                self.open,
                from_host,
                host or "?",
            )
            return False
        self.open += 1
        self.hosts[host] = from_host + 1
        return True

    def leave(self, host: str = "") -> None:
        self.open -= 1
        left = self.hosts.get(host, 1) - 1
        if left > 0:
            self.hosts[host] = left
        else:
            self.hosts.pop(host, None)


class _Capped(SMTP):
    """A session that counts against its listener's :class:`Gate`: past the cap the client
    gets a 421 and the connection is closed before any session starts."""

    gate: Gate
    _counted = False
    _host = ""  # the client's address, as counted

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self._counted:  # (STARTTLS would come here again)
            super().connection_made(transport)
            return
        peer = transport.get_extra_info("peername")
        self._host = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if not self.gate.enter(self._host):
            assert isinstance(transport, asyncio.WriteTransport)
            transport.write(BUSY)
            transport.close()  # (after the buffered 421 is written)
            return
        self._counted = True
        super().connection_made(transport)

    def connection_lost(self, error: Exception | None) -> None:
        if not self._counted:  # refused: aiosmtpd has no session to end
            return
        self._counted = False
        self.gate.leave(self._host)
        super().connection_lost(error)


class _CappedSMTP(_Capped):
    pass


class _CappedLMTP(_Capped, LMTP):
    pass


class Listener(Controller):
    """A threaded aiosmtpd controller speaking SMTP, or LMTP (for Postfix ``lmtp:``
    transports), with at most ``gate.max_connections`` sessions open."""

    def __init__(self, handler: InboundHandler, *, lmtp: bool, gate: Gate, **kwargs: Any) -> None:
        super().__init__(handler, **kwargs)
        self.lmtp, self.gate = lmtp, gate
        self.loop.set_exception_handler(gate.accepts.loop_exception)

    def factory(self) -> SMTP:
        session = (_CappedLMTP if self.lmtp else _CappedSMTP)(self.handler, **self.SMTP_kwargs)
        session.gate = self.gate
        return session

    def stop(self, no_assert: bool = False) -> None:
        """Stop, then log the refusals the last minute has not logged yet."""
        super().stop(no_assert)
        self.gate.refusals.flush()


def make_controller(
    handler: InboundHandler,
    host: str,
    port: int,
    *,
    lmtp: bool = False,
    data_size_limit: int = 10_000_000,
    timeout: float = 300,
    max_connections: int = 100,
    max_per_host: int | None = None,
    hostname: str | None = None,
    ready_timeout: float = 5.0,
) -> Listener:
    """A started-on-demand aiosmtpd controller (call ``start()``/``stop()``)."""
    return Listener(
        handler,
        lmtp=lmtp,
        gate=Gate(max_connections, max_per_host),
        hostname=host,
        port=port,
        ready_timeout=ready_timeout,
        server_hostname=hostname,
        data_size_limit=data_size_limit,
        timeout=timeout,
        enable_SMTPUTF8=True,
    )

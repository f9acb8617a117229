"""The pages under uvicorn in a thread of ``pbmserv serve`` (its own event loop), so one
process holds listener, worker, sender, clocks, robots and the web view.

Because the web view shares the process (and its file descriptors) with the mail gateway, a
client must not hold its connections for ever.  uvicorn has no timeout for a request's head:
``timeout_keep_alive`` runs only after a response, and every byte received stops it, so a
socket that sent nothing, or a header line now and then, stayed open for good (300 at once
in a test).  :class:`GuardedH11Protocol` adds that timeout (``web_request_timeout``) and a cap
on open connections (``web_max_connections``: more are closed at once; uvicorn's own
``limit_concurrency`` only answers 503 to a request, and so never frees a silent socket).
Should descriptors run out all the same, a failing accept is one warning per streak, as for
the SMTP listener (:mod:`pbmserv.listening`): asyncio logged a traceback for each, 2,038 in
6 seconds, and the full pipe to the log stopped the pages.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Callable
from datetime import datetime

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from pbmserv.config import Settings
from pbmserv.listening import AcceptFailures, Refusals
from pbmserv.web.app import create_app

log = logging.getLogger("pbmserv.web")
START_SECONDS = 10.0


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request: a connection that has not
    sent a whole request head ``request_timeout`` seconds after it opened (or after its last
    response) is closed; and with more than ``max_connections`` open, a new one is closed at
    once (logged at most once a minute).  A request the application is answering is never
    cut."""

    request_timeout = 10.0
    max_connections = 100
    refusals = Refusals(log)
    accepts = AcceptFailures(log, "the web server")
    _deadline: asyncio.TimerHandle | None = None

    @classmethod
    def with_limits(
        cls,
        request_timeout: float,
        max_connections: int,
        refusals: Refusals,
        accepts: AcceptFailures,
    ) -> type[H11Protocol]:
        """The protocol class for one server's settings and log (uvicorn makes one instance a
        connection, from the class alone)."""
        limits = {
            "request_timeout": request_timeout,
            "max_connections": max_connections,
            "refusals": refusals,
            "accepts": accepts,
        }
        return type(cls.__name__, (cls,), limits)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.accepts.accepted()
        if len(self.connections) > self.max_connections:
            self.refusals.refused(
                "%d web connections closed at once: %d are open (web_max_connections)",
                self.max_connections,
            )
            transport.close()
            return
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request's head has the same time

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        answering = self.cycle is not None and not self.cycle.response_complete
        if not answering and not self.transport.is_closing():
            self.transport.close()


class WebServer:
    """``start()`` returns once the port is bound (or raises); ``stop()`` ends the thread."""

    def __init__(self, settings: Settings, clock: Callable[[], datetime]) -> None:
        self.refusals = Refusals(log)
        self.accepts = AcceptFailures(log, "the web server")
        config = uvicorn.Config(
            create_app(settings, clock),
            host=settings.listen_host,
            port=settings.web_port,
            http=GuardedH11Protocol.with_limits(
                settings.web_request_timeout,
                settings.web_max_connections,
                self.refusals,
                self.accepts,
            ),
            ws="none",  # the pages use no WebSocket: an upgrade is no way around the limits
            loop="asyncio",  # (our own asyncio.run: the loop whose exception handler is ours)
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
        )
        self.address = (settings.listen_host, settings.web_port)
        self.server = uvicorn.Server(config)
        self.socket: socket.socket | None = None
        self.thread = threading.Thread(target=self._run, name="pbmserv-web", daemon=True)

    @property
    def port(self) -> int:
        """The bound port (useful with ``web_port = 0``)."""
        assert self.socket is not None
        return int(self.socket.getsockname()[1])

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        """uvicorn's loop with our exception handler: a failed accept is not a traceback."""
        asyncio.get_running_loop().set_exception_handler(self.accepts.loop_exception)
        await self.server.serve(sockets=[self.socket] if self.socket else None)

    def start(self) -> None:
        """Bind here, in the caller's thread, so a taken port is an OSError the CLI reports."""
        host, port = self.address
        try:
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            self.socket = socket.create_server((host, port), family=family)
        except OSError as exc:
            raise OSError(exc.errno, f"web port {port}: {exc.strerror or exc}") from None
        self.thread.start()
        ready = threading.Event()
        waited = 0.0
        while not self.server.started and self.thread.is_alive() and waited < START_SECONDS:
            ready.wait(0.02)
            waited += 0.02
        if not self.server.started:
            self.stop()
            raise RuntimeError(f"the web pages did not start on {host}:{port} (see the log)")

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(timeout=30)
        if self.socket is not None:
            self.socket.close()
        self.refusals.flush()  # (those of the last minute, not logged yet)

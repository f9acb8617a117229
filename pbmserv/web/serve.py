"""The pages under uvicorn in a thread of ``pbmserv serve`` (its own event loop), so one
process holds listener, worker, sender, clocks, robots and the web view."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from datetime import datetime

import uvicorn

from pbmserv.config import Settings
from pbmserv.web.app import create_app

log = logging.getLogger("pbmserv.web")
START_SECONDS = 10.0


class WebServer:
    """``start()`` returns once the port is bound (or raises); ``stop()`` ends the thread."""

    def __init__(self, settings: Settings, clock: Callable[[], datetime]) -> None:
        config = uvicorn.Config(
            create_app(settings, clock),
            host=settings.listen_host,
            port=settings.web_port,
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
        self.server.run(sockets=[self.socket] if self.socket else None)

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

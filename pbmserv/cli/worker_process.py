"""The worker in a process of its own, beside ``pbmserv serve``'s listener and sender.

Why: threads of one interpreter take turns (the GIL).  With the listener, the sender and the
worker as threads of one process, every message the sender builds is time the worker waits, and
a busy server drains its queue slower than one core allows.  A process of its own gives the
worker a core (GNU Mailman's runners are processes for the same reason).

The server and its worker talk over the worker's pipes:

* stdin: first a line with the settings as JSON (the clock continues the server's); after it
  each byte means "mail was stored, look now"; end of file means the server is gone (stopped,
  or killed with ``kill -9``): the worker finishes the batch in hand, commits it and exits.
* stdout: one byte after each batch that processed mail, so that the server's sender and robots
  look at once.

A worker that dies is started again; the mails it had claimed are released (its pid is dead)
and processed exactly once, as after any crash.

The worker runs the very code of its server: ``python -m`` would put the working directory
first on its path, and a working directory that holds another checkout of pbmserv would give
the worker that code instead (see :func:`worker_command`).

``pbmserv serve`` starts the worker; nobody starts it by hand.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from pbmserv.cli.signals import StopSignals
from pbmserv.clock import Clock
from pbmserv.commands import grammar
from pbmserv.config import Settings
from pbmserv.mail import inbox_queue
from pbmserv.mail.worker import run_worker
from pbmserv.render.links import attach
from pbmserv.store.db import session_factory

log = logging.getLogger("pbmserv.worker")
RESTART_SECONDS = 1.0  # a worker that died is started again after this pause
STOP_SECONDS = 30.0  # how long a stopping server waits for its worker's last batch


def settings_line(settings: Settings, clock: Clock) -> bytes:
    """The settings as one line of JSON for the worker; a test clock (``now``) goes on from
    the server's reading, so both processes stay on the same calendar."""
    values: dict[str, Any] = {}
    for item in fields(Settings):
        value = getattr(settings, item.name)
        values[item.name] = str(value) if isinstance(value, Path) else value
    if settings.now:
        values["now"] = clock().isoformat()
    return json.dumps(values).encode() + b"\n"


def settings_from_line(line: bytes) -> Settings:
    if not line.strip():
        raise SystemExit("pbmserv worker: no settings on stdin (it is started by pbmserv serve)")
    return Settings(**json.loads(line))


class WorkerProcess:
    """The server's side: start the worker, wake it, hear it, start it again if it dies."""

    def __init__(self, settings: Settings, clock: Clock, on_done: Callable[[], None]) -> None:
        self.settings, self.clock, self.on_done = settings, clock, on_done
        self.lock = threading.Lock()  # the process being replaced while a wake-up writes
        self.process: subprocess.Popen[bytes] | None = None
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.restarts = 0

    def start(self) -> None:
        self.process = self._spawn()
        self.thread = threading.Thread(target=self._supervise, name="pbmserv-worker", daemon=True)
        self.thread.start()

    def wake(self) -> None:
        """Tell the worker that mail is waiting (never blocks: it also polls)."""
        with self.lock:
            if self.process is None or self.process.stdin is None:
                return
            # full: it is busy anyway; closed or dead: the supervisor starts another
            with contextlib.suppress(OSError, ValueError):
                os.write(self.process.stdin.fileno(), b"w")

    def close(self) -> None:
        """Tell the worker to stop (it finishes the batch in hand): close its stdin."""
        self.stopping.set()
        with self.lock:
            if self.process is not None and self.process.stdin is not None:
                self.process.stdin.close()

    def stop(self, timeout: float = STOP_SECONDS) -> None:
        """Close the worker's stdin and wait for it to finish its batch: ``timeout`` seconds
        in all (the process, then the thread that watches it), then it is killed."""
        deadline = time.monotonic() + timeout
        self.close()
        process = self.process
        if process is not None:
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                log.error("the worker did not stop in %.0f s: killed", timeout)
                process.kill()
                process.wait()
        if self.thread is not None:
            self.thread.join(max(0.0, deadline - time.monotonic()))

    def _spawn(self) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            worker_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert process.stdin is not None
        process.stdin.write(settings_line(self.settings, self.clock))
        process.stdin.flush()
        os.set_blocking(process.stdin.fileno(), False)
        log.info("worker process %d started", process.pid)
        return process

    def _supervise(self) -> None:
        """Hear the worker's "done" bytes; when it ends unasked, start another."""
        while True:
            process = self.process
            assert process is not None and process.stdout is not None
            while os.read(process.stdout.fileno(), 64):
                self.on_done()
            code = process.wait()
            process.stdout.close()
            # A stop signal to the whole process group (systemd's stop, Ctrl-C, timeout) ends
            # the worker a moment before the server sets ``stopping``: wait before speaking
            # (an ERROR "starting another" was logged at every stop of the service)
            if self.stopping.wait(RESTART_SECONDS):
                return
            log.error("worker process %d ended (%s); starting another", process.pid, code)
            inbox_queue.release_dead_claims(session_factory(self.settings.url))
            with self.lock:
                if self.stopping.is_set():
                    return
                if process.stdin is not None:
                    process.stdin.close()
                self.process = self._spawn()
                self.restarts += 1


def worker_command() -> list[str]:
    """The command line of a worker that imports this server's own pbmserv: ``-P`` keeps the
    working directory off its path, and the directory this package came from is looked in
    first, only while pbmserv itself is imported."""
    root = str(Path(__file__).resolve().parents[2])
    code = (
        f"import sys; sys.path.insert(0, {root!r}); "
        "import pbmserv.cli.worker_process as worker; sys.path.pop(0); worker.main()"
    )
    return [sys.executable, "-P", "-c", code]


def ready(settings: Settings) -> sessionmaker[Session]:
    """The worker's sessions, with what every mail needs loaded beforehand (the games' engines,
    the page links), and all of it set aside from the garbage collector (``gc.freeze``).

    Why: a worker lives for days, and so do its modules, tables and engines.  A full collection
    walks every object alive that is not frozen: without this, each took 45-70 ms, a pause that
    every mail in the queue waited through (``bench/mail.py --returning``, steady 100 mails/s).
    Frozen objects are never collected, so only what lives as long as the process is frozen:
    what is loaded now, and (:func:`main`) what the first batch loads (its statements compiled,
    its templates).
    """
    sessions = session_factory(settings.url)
    attach(sessions, settings)  # board mails link to the pages
    grammar.command_words()  # every game's engine loads now, not while the first mail waits
    set_aside()
    return sessions


def set_aside() -> None:
    """Collect the garbage, then freeze what is left (it lives as long as the process)."""
    gc.collect()
    gc.freeze()


def main() -> None:
    """The worker's side: process mail until the server closes our stdin."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the group: the server stops us
    stopping, work = threading.Event(), threading.Event()
    stops = StopSignals([signal.SIGTERM])  # (no Event set in a handler: see cli.signals)

    def stop_on_signal() -> None:
        stops.wait()
        stopping.set()
        work.set()

    threading.Thread(target=stop_on_signal, name="pbmserv-signals", daemon=True).start()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    settings = settings_from_line(sys.stdin.buffer.readline())
    done_pipe = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # anything printed goes to the log, never into the "done" bytes

    def listen() -> None:
        while os.read(0, 512):
            work.set()
        stopping.set()  # end of file: the server stopped, or died
        work.set()

    warm = threading.Event()

    def done() -> None:
        if not warm.is_set():  # the first batch compiled the statements every batch reuses
            warm.set()
            set_aside()
        try:
            done_pipe.write(b"d")
        except OSError:  # the server is gone: stop after this batch
            stopping.set()

    sessions = ready(settings)
    threading.Thread(target=listen, name="pbmserv-wake", daemon=True).start()
    run_worker(sessions, settings, settings.clock, stopping=stopping, work=work, on_done=done)


if __name__ == "__main__":
    main()

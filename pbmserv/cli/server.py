"""``pbmserv serve``: the listener, the worker, the sender, the clocks, the robots and the web
pages in one process (the composition root: it sits above every channel).

The listener (aiosmtpd, in its own thread and event loop) only stores mail durably and wakes
the worker; the worker (a process of its own under ``pbmserv serve``, see
:mod:`pbmserv.cli.worker_process`, else a thread) and the sender poll their queues and sleep on
an event in between.  SIGTERM/SIGINT stop them cleanly: the listener first, so nothing new
arrives, then the worker and the threads finish the mail they are on.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from pbmserv.cli.signals import StopSignals
from pbmserv.cli.store import shown_store
from pbmserv.cli.worker_process import STOP_SECONDS, WorkerProcess
from pbmserv.clock import Clock
from pbmserv.config import Settings
from pbmserv.domain import accounts
from pbmserv.domain.clocks import tick
from pbmserv.domain.housekeeping import housekeeping
from pbmserv.mail import inbox, inbox_queue
from pbmserv.mail.deliver import MaildirSink, SmtpRelay
from pbmserv.mail.listener import InboundHandler, make_controller
from pbmserv.mail.sender import deliver_pending, make_sink
from pbmserv.mail.size import wire_limit
from pbmserv.mail.worker import run_worker
from pbmserv.render.links import attach
from pbmserv.robots.service import Unreadable, run_pending
from pbmserv.store.db import session_factory
from pbmserv.store.lock import ClocksLock
from pbmserv.store.outage import Outage
from pbmserv.web.serve import WebServer

log = logging.getLogger("pbmserv.server")
POLL_SECONDS = 1.0  # how often the sender looks for mail when nothing woke it
SEND_GAP_SECONDS = 0.05  # at least this long between two rounds of the sender (see below)
CLOCK_SECONDS = 300.0  # how often the clocks are checked (nags, forfeits)
# a pass gives games of robots only this long, then looks again for humans waiting
ROBOTS_ONLY_SECONDS = 2.0
ROBOT_POLL_SECONDS = 5.0  # how often the robots look for a turn when no move woke them
ROBOT_GAP_SECONDS = 0.5  # at least this long between two looks that found nothing to play
STANDBY_SECONDS = 30.0  # how often a server whose store's clocks run elsewhere looks again
THREADS_STOP_SECONDS = 30.0  # how long a stopping server waits for its threads, all together
STOP_SECONDS_AT_MOST = STOP_SECONDS + THREADS_STOP_SECONDS
"""The longest a stop waits: its workers' last batches, then its threads (a mail being sent).
deploy/pbmserv.service's TimeoutStopSec allows more: systemd killed a server still finishing
(after 30 s), and a mail it was sending then goes again once its lease ends."""


def _one_form(address: str) -> str:
    """An address in its one form (:mod:`pbmserv.domain.addresses`), else only lower-cased."""
    return accounts.parse_address(address) or address.strip().lower()


class Server:
    """The running parts of a server; ``start()`` and ``stop()`` are for tests and the CLI."""

    def __init__(
        self,
        settings: Settings,
        *,
        listen: bool = True,
        clock: Clock | None = None,
        worker_processes: int = 0,
        robots_and_clocks: bool = True,
    ) -> None:
        """``worker_processes``: that many workers in processes of their own (see
        :mod:`pbmserv.cli.worker_process`), on the settings' clock; 0: one worker thread here,
        on ``clock`` (tests that move the time themselves).  ``robots_and_clocks``: also run
        the robots and the clocks, which one process of a deployment does (every extra
        process searched every robot move again, to throw it away)."""
        if worker_processes and clock is not None:
            raise ValueError("worker processes keep the settings' clock: pass no clock")
        self.settings = settings
        self.listen = listen
        self.robots_and_clocks = robots_and_clocks
        self.clock = clock or settings.clock
        self.sessions = session_factory(settings.url)
        self.intake = inbox.GroupStore(self.sessions)
        self.stopping = threading.Event()
        self.work = threading.Event()
        self.outgoing = threading.Event()
        self.robots = threading.Event()  # a move was played: a robot may be to move
        self.unreadable = Unreadable()  # robot boards whose position cannot be read: skipped
        self.threads: list[threading.Thread] = []
        self.clocks_lock = ClocksLock(settings.url)  # one process per store runs them
        self.standby = False  # another process runs the clocks and the robots of the store
        self._charge = threading.Lock()  # (the clock and robot loops both ask _in_charge)
        self._generation = 0  # of the clock and robot loops: one more at each lost lock
        self.controller: Any = None
        self.web: Any = None  # pbmserv.web.serve.WebServer while the pages are served
        self.workers = [
            WorkerProcess(settings, self.clock, self._mail_processed)
            for _ in range(max(0, worker_processes))
        ]
        attach(self.sessions, settings)  # board mails link to the pages

    # ----- the listener's callback

    async def store_message(self, raw: bytes, envelope: Any) -> None:
        delivery = inbox.Delivery(
            raw, envelope.mail_from or "", list(envelope.rcpt_tos), self.clock()
        )
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.intake.store, delivery)
        self.work.set()
        for worker in self.workers:
            worker.wake()

    def accept_recipient(self, address: str) -> bool:
        """Whether ``RCPT TO:<address>`` is ours, compared in one form: a client with SMTPUTF8
        may write our domain in Unicode (``pbm@bücher.example`` for the configured
        ``pbm@xn--bcher-kva.example``, or the other way round), which was refused 550."""
        wanted = {_one_form(a) for a in self.settings.accept_recipients}
        return _one_form(address.strip("<>")) in wanted

    # ----- loops

    def _worker_loop(self) -> None:
        run_worker(
            self.sessions,
            self.settings,
            self.clock,
            stopping=self.stopping,
            work=self.work,
            on_done=self._mail_processed,
        )

    def _mail_processed(self) -> None:
        """The worker (thread or process) processed mail: answers to send, robots may move."""
        self.outgoing.set()
        self.robots.set()

    def _sender_loop(self) -> None:
        """Send the outbox in rounds: at once when woken after a quiet spell, and while mail
        pours in, one round per ``SEND_GAP_SECONDS`` for every batch processed meanwhile.  A
        round takes the write lock to claim its mails and again to mark them sent; a round
        after each of the worker's batches (about 50 a second at 100 mails a second) made the
        worker and the listener wait for that lock.  After the stop, one last round sends what
        the workers' last batches queued (they finished before ``stopping`` was set)."""
        sink = make_sink(self.settings)
        outage = Outage("sender", log)
        while not self.stopping.is_set():
            pause = self._send_round(sink, outage)
            if pause:  # the round failed: the next one after the back-off, whatever wakes us
                self.stopping.wait(pause)
                continue
            self.stopping.wait(SEND_GAP_SECONDS)
            self.outgoing.wait(POLL_SECONDS)
            self.outgoing.clear()
        self._send_round(sink, outage)

    def _send_round(self, sink: MaildirSink | SmtpRelay, outage: Outage) -> float:
        """One round; the back-off to wait after it (0 when it worked)."""
        try:
            deliver_pending(self.sessions, self.settings, sink, self.clock())
        except Exception as exc:  # noqa: BLE001
            return outage.failed(exc)
        outage.worked()
        return 0.0

    def _clock_loop(self) -> None:
        """The clocks and the housekeeping every ``CLOCK_SECONDS``; after a failure, sooner."""
        outage, generation = Outage("clocks", log), self._generation
        while not self.stopping.is_set() and self._in_charge(generation):
            pause = 0.0
            for job in (tick, housekeeping):
                try:  # apart: one failing must not stop the other
                    job(self.sessions, self.settings, self.clock())
                except Exception as exc:  # noqa: BLE001
                    pause = outage.failed(exc)
            if not pause:
                outage.worked()
            self.outgoing.set()
            self.stopping.wait(min(pause, CLOCK_SECONDS) if pause else CLOCK_SECONDS)

    def _robot_loop(self) -> None:
        """Robots think here, never in the worker or the listener; mails go out as for humans.
        A board that cannot be read is skipped until its row changes (``self.unreadable``)."""
        outage, generation = Outage("robots", log), self._generation
        while not self.stopping.is_set() and self._in_charge(generation):
            try:
                done = run_pending(
                    self.sessions,
                    self.settings,
                    self.clock,
                    stop=self.stopping.is_set,
                    unreadable=self.unreadable,
                    robots_only_seconds=ROBOTS_ONLY_SECONDS,
                )
            except Exception as exc:  # noqa: BLE001
                self.stopping.wait(outage.failed(exc))
                continue
            outage.worked()
            if any(d.played for d in done):
                self.outgoing.set()
                continue
            # While mail pours in, every batch wakes the robots: a look per gap serves them all
            # (a robot's first reply after a quiet spell is not delayed).
            self.stopping.wait(ROBOT_GAP_SECONDS)
            self.robots.wait(ROBOT_POLL_SECONDS)
            self.robots.clear()

    # ----- lifecycle

    def start(self) -> None:
        """Bind the ports first: a port that is taken stops the start before any worker
        process, clock tick or robot has run (the listener only stores mail meanwhile)."""
        if self.listen:
            self._bind()
        released = inbox_queue.release_dead_claims(self.sessions)
        if released:
            log.warning("%d mails of a crashed worker are queued again", released)
        self._check_admins()
        loops = [(self._sender_loop, "sender")]
        if self.robots_and_clocks:
            if self.clocks_lock.acquire_within():
                loops += self._clocks_and_robots()
            else:
                self.standby = True
                log.warning(
                    "another pbmserv process runs the clocks and the robots of this store "
                    "(%s): this one runs without them, and takes them over once that one stops",
                    self.clocks_lock.path or "PostgreSQL advisory lock",
                )
                loops.append((self._standby_loop, "standby"))
        for worker in self.workers:
            worker.start()
        if not self.workers:
            loops.insert(0, (self._worker_loop, "worker"))
        for target, name in loops:
            self._spawn(target, name)

    def _check_admins(self) -> None:
        """Say which administrators named in the config cannot act by mail (mail cannot sign
        up their userids: the operator makes their accounts), and from which addresses the
        others do (the operator knows his admins' addresses, and so tells a squatter's)."""
        with self.sessions() as session:
            problems, acting = accounts.admin_standing(session, self.settings)
        for problem in problems:
            log.warning("%s", problem)
        for name, addresses in acting.items():
            log.info("the administrator '%s' acts by mail from %s", name, ", ".join(addresses))

    def _in_charge(self, generation: int) -> bool:
        """Whether a clock or robot loop started in ``generation`` still runs: this process
        asks its lock every round (:meth:`ClocksLock.check`), and once it is lost says so once
        and waits as a standby; the loops of that generation end (one that slept through a
        take-over must not run beside the new ones)."""
        with self._charge:
            if self.standby or generation != self._generation:
                return False
            try:
                held = self.clocks_lock.check()
            except Exception:  # noqa: BLE001
                held = False
            if held:
                return True
            self.standby = True
            self._generation += 1
            log.warning(
                "this process lost the lock of the store's clocks and robots (the database "
                "connection that held it ended): it runs without them until it takes it again"
            )
            self._spawn(self._standby_loop, "standby")
            return False

    def _clocks_and_robots(self) -> list[tuple[Callable[[], None], str]]:
        return [(self._clock_loop, "clocks"), (self._robot_loop, "robots")]

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=f"pbmserv-{name}", daemon=True)
        thread.start()
        self.threads.append(thread)

    def _standby_loop(self) -> None:
        """Take the clocks and the robots over when the process that ran them has stopped."""
        outage = Outage("standby", log)
        while not self.stopping.wait(STANDBY_SECONDS):
            try:
                got = self.clocks_lock.acquire()
            except Exception as exc:  # noqa: BLE001
                outage.failed(exc)
                continue
            outage.worked()
            if got:
                log.warning("this process runs the clocks and the robots of the store now")
                self.standby = False
                for target, name in self._clocks_and_robots():
                    self._spawn(target, name)
                return

    def _bind(self) -> None:
        """Start the listener, then the web pages (OSError: a port is taken)."""
        handler = InboundHandler(
            store_message=self.store_message,
            accept_recipient=self.accept_recipient,
            max_recipients=self.settings.max_recipients,
            max_message_bytes=self.settings.max_message_bytes,
            clock=self.clock,
        )
        self.controller = make_controller(
            handler,
            self.settings.listen_host,
            self.settings.listen_port,
            lmtp=self.settings.lmtp,
            data_size_limit=wire_limit(self.settings.max_message_bytes),
            timeout=self.settings.smtp_timeout,
            max_connections=self.settings.smtp_max_connections,
            max_per_host=self.settings.smtp_max_connections_per_host,
        )
        self.controller.start()
        if self.settings.web_enabled:
            self.web = WebServer(self.settings, self.clock)
            self.web.start()

    def stop(self) -> None:
        if self.web is not None:
            self.web.stop()
            self.web = None
        if self.controller is not None:
            self.controller.stop()
            self.controller = None
        for worker in self.workers:
            worker.close()  # all at once: each finishes the batch in hand
        deadline = time.monotonic() + STOP_SECONDS
        for worker in self.workers:  # their last batches may still give the sender mail
            worker.stop(timeout=max(0.0, deadline - time.monotonic()))
        self.stopping.set()
        self.work.set()
        self.outgoing.set()
        self.robots.set()
        deadline = time.monotonic() + THREADS_STOP_SECONDS
        for thread in list(self.threads):
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        self.threads.clear()
        self.clocks_lock.release()


def run_server(
    settings: Settings,
    *,
    listen: bool = True,
    robots_and_clocks: bool | None = None,
    log: Callable[[str], None] = print,
) -> None:
    """Run until SIGTERM or SIGINT.  An extra process (``listen`` false) runs the robots and
    the clocks only when ``robots_and_clocks`` says so: the server that listens runs them."""
    if robots_and_clocks is None:
        robots_and_clocks = listen
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd logs every connection
    server = Server(
        settings,
        listen=listen,
        worker_processes=settings.workers if listen else 0,
        robots_and_clocks=robots_and_clocks,
    )
    stop = StopSignals()  # from now: a signal during the start-up stops the server once up
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    where = f"{settings.listen_host}:{settings.listen_port} ({'LMTP' if settings.lmtp else 'SMTP'})"
    what = "" if robots_and_clocks else " (no clocks, no robots: the listening server runs them)"
    if server.standby:
        what = " (no clocks, no robots: another server on this store runs them)"
    role = where if listen else "no port (worker and sender)"
    log(f"pbmserv serving on {role}{what}; store {shown_store(settings.url)}")
    if server.web is not None:
        log(f"web pages on http://{settings.listen_host}:{server.web.port}/")
    if settings.outbox == "maildir":
        log(f"answers are delivered to the Maildir {settings.maildir_path.resolve()}")
    stop.wait()
    log("pbmserv stopping ...")
    server.stop()

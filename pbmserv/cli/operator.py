"""The operator's shell commands: ``db``, ``mail``, ``status``, ``serve`` and ``robot``.

They exist only in the shell (:mod:`pbmserv.cli.main`); a mail can never reach them.  They are
plain click commands, not declarations: no password, no mail, no masking.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from typing import BinaryIO

import click
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.cli.db import db_group
from pbmserv.cli.failures import cannot_serve
from pbmserv.cli.robots import robot_group
from pbmserv.cli.store import open_store, played_elsewhere
from pbmserv.commands.dispatch import Refused, answer, request
from pbmserv.config import Settings
from pbmserv.domain import outgoing as out
from pbmserv.errors import TRACEBACK, stored_reason
from pbmserv.numbers import MAX_ROW_ID
from pbmserv.render.links import attach, base_url
from pbmserv.render.templates import fill, render
from pbmserv.store.lock import holder, holding
from pbmserv.store.models import Board, BoardStatus, Inbox, InboxStatus, Outbox, OutboxStatus

ROW_ID = click.IntRange(1, MAX_ROW_ID)  # a mail's id, as listed


def _settings(ctx: click.Context) -> Settings:
    return ctx.find_root().obj.settings


def _sessions(ctx: click.Context, *, create: bool = False) -> sessionmaker[Session]:
    """The store's sessions; only ``create`` makes a new store (:mod:`pbmserv.cli.store`)."""
    factory = open_store(_settings(ctx), create=create)
    attach(factory, _settings(ctx))
    return factory


def _text(lines: list[str]) -> str:
    return render("mail/text.txt.j2", lines=lines)


# ----------------------------------------------------------------------------- mail


@click.group(
    "mail",
    help="The inbox (list, show, retry, inject) and the outbox (mail outbox list|show|retry).",
)
def mail_group() -> None:
    pass


@mail_group.command("list", help="Mails in the inbox (default: all but the processed ones).")
@click.option("--all", "show_all", is_flag=True, help="Also list processed and ignored mails.")
@click.pass_context
def mail_list(ctx: click.Context, show_all: bool) -> None:
    with _sessions(ctx)() as session:
        query = select(Inbox).order_by(Inbox.id)
        if not show_all:
            query = query.where(Inbox.status.notin_([InboxStatus.done, InboxStatus.ignored]))
        rows = session.scalars(query).all()
        lines = [f"{'id':>6}  {'status':<10} {'tries':>5}  {'received':<16}  from / last error"]
        for row in rows:
            error = stored_reason(row.last_error)[:120]
            if _earlier(row):
                error = f"(an earlier attempt) {error}"
            again = f"(+{row.repeats} repeated)  " if row.repeats else ""
            lines.append(
                f"{row.id:>6}  {row.status.value:<10} {row.attempts:>5}  "
                f"{row.received:%Y-%m-%d %H:%M}  {row.mail_from or '<>'}  {again}{error}"
            )
    if len(lines) == 1:
        lines = ["The inbox has no mails waiting or set aside."]
    answer(ctx, "pbmserv mail list", _text(lines))


def _earlier(row: Inbox) -> bool:
    """Whether the error kept with a processed mail is an earlier attempt's: it failed, then
    worked (a note why it went unanswered is no error: it has no traceback)."""
    done = row.status in (InboxStatus.done, InboxStatus.ignored)
    return done and TRACEBACK in (row.last_error or "")


@mail_group.command("show", help="The raw mail ID and its processing record.")
@click.argument("message_id", type=ROW_ID)
@click.pass_context
def mail_show(ctx: click.Context, message_id: int) -> None:
    with _sessions(ctx)() as session:
        row = session.get(Inbox, message_id)
        if row is None:
            raise Refused(f"there is no mail {message_id} in the inbox")
        raw = row.raw.decode("utf-8", "replace")
        lines = [
            f"Mail {row.id}: {row.status.value}, {row.attempts} attempts",
            f"Envelope from: {row.mail_from or '<>'}; to: {row.rcpt_to}",
            f"Received: {row.received:%Y-%m-%d %H:%M:%S} UTC",
        ]
        if row.repeats:  # a re-delivery, or a forger who sent its Message-ID as its sender
            lines.append(f"Delivered again {row.repeats} times: not stored, not answered")
        if row.last_error:
            lines += [
                "Last error (of an earlier attempt):" if _earlier(row) else "Last error:",
                row.last_error.strip(),
            ]
        from pbmserv.commands.grammar import mask_passwords  # lazy: loads every engine

        lines += ["", mask_passwords(raw)]
    answer(ctx, "pbmserv mail show", _text(lines))


@mail_group.command("retry", help="Put mail ID, set aside after failing, back in the queue.")
@click.argument("message_id", type=ROW_ID)
@click.pass_context
def mail_retry(ctx: click.Context, message_id: int) -> None:
    from pbmserv.mail import inbox_queue  # lazy: the mail gateway, only for the mail commands

    was = inbox_queue.retry(_sessions(ctx), message_id)
    if was is None:
        raise Refused(f"there is no mail {message_id} in the inbox")
    if was is not InboxStatus.shunted:
        why = {
            InboxStatus.new: "it waits in the queue already",
            InboxStatus.processing: "a worker is processing it now",
            InboxStatus.done: "it was processed, and only a copy with its passwords masked is "
            "kept (run again, it would fail)",
            InboxStatus.ignored: "it was ignored as automatic mail (never answered)",
        }[was]
        raise Refused(
            f"mail {message_id} is {was.value}, not set aside: {why}; "
            "'pbmserv mail retry' queues only a mail set aside (shunted)"
        )
    answer(ctx, "pbmserv mail retry", f"Mail {message_id} is queued again.\n")


@mail_group.command("inject", help="Store a mail from FILE (or stdin) and process the queue.")
@click.argument("source", type=click.File("rb"), default="-")
@click.option("--sender", default="", help="The envelope sender (default: Return-Path or From).")
@click.option("--no-process", is_flag=True, help="Only store it; a running server processes it.")
@click.pass_context
def mail_inject(ctx: click.Context, source: BinaryIO, sender: str, no_process: bool) -> None:
    from email.parser import BytesHeaderParser  # lazy: the mail commands only
    from email.utils import parseaddr  # lazy: as above

    from pbmserv.mail import inbox  # lazy: the mail gateway, only for the mail commands
    from pbmserv.mail.size import too_large  # lazy: as above
    from pbmserv.mail.worker import process_batch  # lazy: as above

    raw = source.read()
    settings = _settings(ctx)
    if too_large(raw, settings.max_message_bytes):  # (as Postfix counts: see mail.size)
        raise Refused(f"the mail is larger than {settings.max_message_bytes} bytes")
    if not sender:  # no envelope: the sender is the address in From (Return-Path if any)
        headers = BytesHeaderParser().parsebytes(raw, headersonly=True)
        sender = parseaddr(str(headers.get("Return-Path") or headers.get("From") or ""))[1]
        if not sender:
            raise Refused("the mail names no sender: give --sender")
    # Bytes that are no UTF-8 (Postfix's ${sender} from a client without SMTPUTF8, read from
    # argv, or a From of raw bytes) are surrogate escapes, which the database refuses: the
    # mail failed as a bug (75) at each of Postfix's attempts.  Written '\xff', as the
    # listener keeps them: no usable address, so the mail is answered at its From.
    sender = sender.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    sessions = _sessions(ctx, create=True)  # (Postfix's first mail may come before the server)
    stored = inbox.store(sessions, raw, sender, [settings.server_address], settings.clock())
    note = f"Mail stored as {stored.id}." if stored.new else f"Mail already stored as {stored.id}."
    if stored.id is None:  # (its key is kept after it: a replay)
        note = "Mail already processed, and deleted since: not run again."
    if not no_process:
        while process_batch(sessions, settings, settings.clock):
            pass
        _deliver_now(settings, sessions)
    answer(ctx, "pbmserv mail inject", note + "\n")


@mail_group.group("outbox", help="Outgoing mail: list, show and retry.")
def outbox_group() -> None:
    pass


@outbox_group.command("list", help="Outgoing mails (default: all but the sent ones).")
@click.option("--all", "show_all", is_flag=True, help="Also list the mails sent.")
@click.pass_context
def outbox_list(ctx: click.Context, show_all: bool) -> None:
    with _sessions(ctx)() as session:
        lines = out.list_lines(session, show_all=show_all)
    answer(ctx, "pbmserv mail outbox list", _text(lines))


@outbox_group.command("show", help="One outgoing mail: its delivery record, headers and text.")
@click.argument("mail_id", type=ROW_ID)
@click.pass_context
def outbox_show(ctx: click.Context, mail_id: int) -> None:
    with _sessions(ctx)() as session:
        shown = out.show_lines(session, mail_id)
    if shown is None:
        raise Refused(f"there is no mail {mail_id} in the outbox")
    answer(ctx, "pbmserv mail outbox show", _text(shown))


@outbox_group.command("retry", help="Send mail ID (failed or stuck) again at once.")
@click.argument("mail_id", type=ROW_ID)
@click.option(
    "--force",
    is_flag=True,
    help="Also a mail a sender is sending now (its lease is live): for a sender known dead.",
)
@click.pass_context
def outbox_retry(ctx: click.Context, mail_id: int, force: bool) -> None:
    settings = _settings(ctx)
    now = settings.clock()
    lease = timedelta(minutes=settings.outbox_lease_minutes)
    with _sessions(ctx)() as session, session.begin():
        row = session.get(Outbox, mail_id, with_for_update=True)  # (a claim skips it now)
        if row is None:
            raise Refused(f"there is no mail {mail_id} in the outbox")
        if row.dropped_bytes is not None:
            raise Refused(f"mail {mail_id} was sent and its text dropped: it cannot go again")
        ends = row.claimed_at + lease if row.claimed_at is not None else None
        if row.status is OutboxStatus.sending and ends is not None and ends > now and not force:
            # queued again now, the live sender and the next one would both send it
            raise Refused(
                f"mail {mail_id} is being sent now by {row.claimed_by or 'a sender'} (claimed "
                f"at {row.claimed_at:%Y-%m-%d %H:%M:%S} UTC); its lease ends at "
                f"{ends:%Y-%m-%d %H:%M:%S} UTC, and if that sender died, the mail is sent "
                "again then by itself. If you know that sender is dead, "
                f"'pbmserv mail outbox retry --force {mail_id}' queues it now (it may then "
                "arrive twice)"
            )
        row.status, row.next_attempt, row.attempts = OutboxStatus.pending, now, 0
        row.claimed_at = row.claimed_by = None
    answer(ctx, "pbmserv mail outbox retry", f"Mail {mail_id} is queued to be sent again.\n")


def _deliver_now(settings: Settings, sessions: sessionmaker[Session]) -> int:
    """Send the mail that is due (no server may run to send it); how many went out."""
    from pbmserv.mail.sender import (  # lazy: smtplib and ssl, for delivery only
        deliver_pending,
        make_sink,
    )

    return deliver_pending(sessions, settings, make_sink(settings), settings.clock())


# ----------------------------------------------------------------------------- status


@click.command("status", help="Queue depths, failures and games in progress.")
@click.pass_context
def status(ctx: click.Context) -> None:
    with _sessions(ctx)() as session:
        inbox_counts = dict(
            session.execute(select(Inbox.status, func.count()).group_by(Inbox.status)).all()
        )
        outbox_counts = dict(
            session.execute(select(Outbox.status, func.count()).group_by(Outbox.status)).all()
        )
        repeats = session.scalar(select(func.coalesce(func.sum(Inbox.repeats), 0)))
        oldest = session.scalar(
            select(func.min(Inbox.received)).where(
                Inbox.status.in_([InboxStatus.new, InboxStatus.processing])
            )
        )
        boards = session.execute(
            select(Board.game, func.count())
            .where(Board.status == BoardStatus.active)
            .group_by(Board.game)
        ).all()
        delivery = out.delivery_lines(session, request(ctx).now)
    lines = ["Inbox:"]
    lines += [f"  {s.value:<10} {inbox_counts.get(s, 0)}" for s in InboxStatus]
    lines.append(
        f"  oldest unprocessed: {oldest:%Y-%m-%d %H:%M:%S} UTC"
        if oldest
        else "  oldest unprocessed: none"
    )
    lines.append(f"  repeated deliveries dropped: {repeats} (pbmserv mail list --all)")
    lines.append("Outbox:")
    lines += [f"  {s.value:<10} {outbox_counts.get(s, 0)}" for s in OutboxStatus]
    lines += delivery
    lines.append("Games in progress:")
    lines += [f"  {game:<10} {count}" for game, count in sorted(boards)] or ["  none"]
    lines.append(f"Clocks and robots: {PLAYED_BY.get(holder(_settings(ctx).url) or '', NOBODY)}")
    answer(ctx, "pbmserv status", _text(lines))


# Whether a server runs, and who plays the clocks and the robots (the clocks lock's holder):
# status said nothing of it, so a server that had stopped looked like a quiet one.
PLAYED_BY = {
    "serve": "played by a running server (pbmserv serve)",
    "tick": "a 'pbmserv tick' is running",
    "robot run": "a 'pbmserv robot run' is running",
}
NOBODY = "no server runs now ('pbmserv serve', or cron's tick and robot run, play them)"


# ----------------------------------------------------------------------------- tick


@click.command(
    "tick", help="Check the clocks once (nags, forfeits, clean-up), then send due mail (cron)."
)
@click.pass_context
def tick(ctx: click.Context) -> None:
    """Without a running server (Postfix's pipe), cron runs this: the nags and forfeits it
    queues, robots' moves and failed mails due again go out here, or with the next mail.  It
    holds the store's clocks lock throughout, and does nothing where a server holds it."""
    from pbmserv.domain.clocks import tick as check_clocks  # lazy: only for `tick`
    from pbmserv.domain.housekeeping import housekeeping  # lazy: only for `tick`

    now, sessions, settings = request(ctx).now, _sessions(ctx), _settings(ctx)
    with holding(settings.url, "tick") as held:
        if not held:
            answer(ctx, "pbmserv tick", played_elsewhere(settings.url))
            return
        with sessions() as session:
            before = out.newest_mail(session)
        report = check_clocks(sessions, settings, now)
        lines = report.lines(now) + housekeeping(sessions, settings, now)
        with sessions() as session:
            queued = out.newest_mail(session) > before
        sent = _deliver_now(settings, sessions)
    if sent:
        lines.append(f"Mails sent: {sent}")
    answer(ctx, "pbmserv tick", _text(lines + _link_warning(settings, queued)))


def _link_warning(settings: Settings, queued: bool) -> list[str]:
    """Board mails link to the pages by this process's settings: a tick from cron that does
    not read the server's config mails links to a port nobody serves.  Said only when this
    tick wrote mails (every quiet run from cron said it)."""
    if not queued or not settings.web_enabled or settings.web_base_url:
        return []
    return [
        fill(
            f"Warning: web_base_url is empty, so board mails link to {base_url(settings)} "
            "(listen_host and web_port as this process reads them); give tick the server's "
            "config file and environment, or set web_base_url."
        )
    ]


# ----------------------------------------------------------------------------- serve


@click.command("serve", help="Run the SMTP (or LMTP) listener, the worker and the sender.")
@click.option("--host", default=None, help="Listen address (default from the config).")
@click.option(
    "--port", type=click.IntRange(1, 65535), default=None, help="Listen port (default: config)."
)
@click.option("--lmtp", is_flag=True, default=None, help="Speak LMTP (behind Postfix).")
@click.option(
    "--no-listen",
    is_flag=True,
    help='Only the worker and the sender (extra workers; outbox = "smtp" on other hosts).',
)
@click.option(
    "--clocks-and-robots",
    is_flag=True,
    help="With --no-listen: run the clocks and the robots too (where no server listens).",
)
@click.pass_context
def serve(
    ctx: click.Context,
    host: str | None,
    port: int | None,
    lmtp: bool | None,
    no_listen: bool,
    clocks_and_robots: bool,
) -> None:
    from pbmserv.cli.server import run_server  # lazy: asyncio and threads, for serve only

    settings = _settings(ctx)
    _sessions(ctx, create=True)  # a new store says so now, not when the server stops
    if host:
        settings.listen_host = host
    if port is not None:
        settings.listen_port = port
    if lmtp:
        settings.lmtp = True
    try:
        run_server(
            settings,
            listen=not no_listen,
            robots_and_clocks=not no_listen or clocks_and_robots,
            log=lambda text: print(text, file=sys.stderr, flush=True),
        )
    except OSError as exc:  # the port is taken, the data directory is not writable, ...
        raise cannot_serve(exc, f"{settings.listen_host}:{settings.listen_port}") from None
    answer(ctx, "pbmserv serve", "pbmserv stopped.\n")


OPERATOR_COMMANDS: list[click.Command] = [db_group, mail_group, status, serve, tick, robot_group]

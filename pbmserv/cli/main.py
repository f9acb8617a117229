"""The shell: ``pbmserv ...`` and the per-game scripts ``ploy``, ``pylon``, ``plotto``, ``polis``.

Player commands run through the same dispatcher as mail (:mod:`pbmserv.commands`); the shell
adds the operator's commands (``db``, ``serve``, ``mail``, ``status``), which mail never reaches.
Global options come first: ``pbmserv [--config FILE] [--data-dir DIR] COMMAND ...``.
Exit status: 0 done, 1 refused by the rules or authentication, 2 usage error; a configuration
or a store that cannot be used has statuses of its own (:mod:`pbmserv.cli.failures`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from sqlalchemy import event
from sqlalchemy.orm import Session

from pbmserv.cli import failures
from pbmserv.cli.operator import OPERATOR_COMMANDS
from pbmserv.cli.store import open_store
from pbmserv.commands import Channel, Request, build_commands, run
from pbmserv.commands.dispatch import USAGE
from pbmserv.commands.tree import SHELL_ONLY
from pbmserv.config import Settings, SettingsError, load_settings
from pbmserv.games import game_names, get_game
from pbmserv.render.links import attach
from pbmserv.store.models import Board, Proposal


class LazySessions:
    """A session factory that opens (and migrates) the database only when first used.

    It notes the boards that its sessions wrote (``touched``): after a game command, only those
    can hold a robot turn that the command brought about.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._factory: Any = None
        self.touched: set[int] = set()
        self.newest_mail = 0  # the outbox's newest mail before the command: its own come after

    def __call__(self) -> Session:
        if self._factory is None:
            self._factory = open_store(self.settings, create=True)
            attach(self._factory, self.settings)
            from pbmserv.domain.outgoing import newest_mail  # lazy: the store is open now

            with self._factory() as session:
                self.newest_mail = newest_mail(session)
        session = self._factory()
        event.listen(session, "after_flush", self._note_boards)
        return session

    def _note_boards(self, session: Session, _context: Any) -> None:
        for item in (*session.new, *session.dirty):
            if isinstance(item, Board) and item.id is not None:
                self.touched.add(item.id)
            elif isinstance(item, Proposal):  # a robot may owe it an answer
                self.touched.add(item.board_id)


def shell_request(settings: Settings) -> Request:
    def prompt(text: str) -> str:
        if not sys.stdin.isatty():
            raise click.UsageError(f"{text.lower()} is missing (give it, or set PBMSERV_PASSWORD)")
        return click.prompt(text, hide_input=True, err=True)

    return Request(
        settings=settings,
        sessions=LazySessions(settings),  # type: ignore[arg-type]
        channel=Channel.shell,
        now=settings.clock(),
        source="shell",
        env_password=os.environ.get("PBMSERV_PASSWORD"),
        prompt=prompt,
    )


def build_cli() -> click.Group:
    group = build_commands()
    group.help = (
        "pbmserv: play-by-email game server.\n\n"
        "Global options (before the command): --config FILE, --data-dir DIR.\n\n"
        "A comment, which a mail writes below its command lines, is -m TEXT (or --comment "
        "TEXT) among the words of a command that sends one: move, swap, resign, queue, "
        "confirm, challenge, tournament withdraw and cancel.\n\n"
        "Exit status: 0 done, 1 refused, 2 usage error; 75 try again (the database is "
        "unreachable or busy), 78 the configuration or the store needs fixing, 65 the store "
        "is damaged, 70 a bug ('mail inject': 75 for all but 0 and 1)."
    )
    for command in OPERATOR_COMMANDS:
        group.add_command(command)
    return group


# ----------------------------------------------------------------------------- entry points


def _global_options(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    while argv and argv[0].startswith("--") and argv[0].split("=")[0] in ("--config", "--data-dir"):
        key, sep, value = argv.pop(0).partition("=")
        if not sep:
            if not argv:
                raise click.UsageError(f"{key} needs a value")
            value = argv.pop(0)
        options[key[2:]] = value
    return options, argv


def main(argv: Sequence[str] | None = None, prog_name: str = "pbmserv") -> int:
    """Run one command line from the shell; print the answer; return the exit status: 0 done,
    1 refused, 2 usage error, or a configuration or store failure's (:mod:`.failures`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        options, args = _global_options(args)
    except click.UsageError as exc:
        click.echo(f"Error: {exc.format_message()}", err=True)
        return USAGE
    inject = [word.lower() for word in args[:2]] == ["mail", "inject"]
    try:
        settings = load_settings(
            options.get("config"),
            data_dir=Path(options["data-dir"]) if "data-dir" in options else None,
        )
    except SettingsError as exc:  # an unreadable config file, a bad setting
        status = failures.report(exc, "")
    else:
        try:
            status = _command(settings, args, prog_name)
        except Exception as exc:  # noqa: BLE001 - one line (a bug: its traceback) and a status
            status = failures.report(exc, settings.url)
    return failures.for_inject(status) if inject else status


def _command(settings: Settings, args: list[str], prog_name: str) -> int:
    req = shell_request(settings)
    answers = run(build_cli(), args, req, prog_name=prog_name)
    status = max(a.status for a in answers)
    for item in answers:
        stream = sys.stderr if item.status else sys.stdout
        stream.write(item.body if item.body.endswith("\n") else item.body + "\n")
    if status == 0 and args and args[0].lower() in game_names():
        _robots_answer(req)
    if status == 0 and args and args[0].lower() not in OPERATOR_WORDS:
        _outbox_note(req)
    return status


OPERATOR_WORDS = SHELL_ONLY  # (the words of OPERATOR_COMMANDS)


def _outbox_note(req: Request) -> None:
    """Say which mails this command left in the outbox (no server may be running to send them)."""
    if getattr(req.sessions, "_factory", None) is None:  # the command never opened the store
        return
    from pbmserv.domain.outgoing import waiting_after  # lazy: only after a player command

    with req.sessions() as session:
        count = waiting_after(session, req.sessions.newest_mail)  # type: ignore[attr-defined]
    if count:
        from pbmserv.store.lock import holder  # lazy: only when mails wait

        noun, them = ("mail waits", "it") if count == 1 else ("mails wait", "them")
        who = {
            "serve": "the running server sends",
            "tick": "the next 'pbmserv tick' sends",  # (a running tick has sent its own)
            "robot run": "'pbmserv tick' (from cron) or 'pbmserv serve' sends",
        }.get(holder(req.settings.url) or "", "'pbmserv serve' sends")
        click.echo(
            f"pbmserv: {count} {noun} in the outbox: 'pbmserv mail outbox list' lists {them}, "
            f"{who} {them}.",
            err=True,
        )


def _robots_answer(req: Request) -> None:
    """Without a running server, a robot that a human's move has put to move answers once, and
    a robot asked by a proposal answers it.

    Only that one reply (each within its level's time budget): robot against robot, and robots
    on other boards, are played by the server or by ``pbmserv robot run`` from cron.
    """
    touched = getattr(req.sessions, "touched", None)
    if touched is not None and not touched:  # the command changed no board
        return
    from pbmserv.robots.service import (
        answer_human,  # lazy: robots load only after a game command
        next_up,  # lazy, as above
    )

    for done in answer_human(req.sessions, req.settings, lambda: req.now, req.now, touched):  # type: ignore[arg-type]
        if not (done.vote or done.played):
            continue
        board = f"{_game(done.game)} board {done.number}"
        # then who is to move: a human has his lines to send back, which end the answer (after
        # an accepted undo, the move due has changed)
        after = next_up(req.sessions, done.game, done.number)  # type: ignore[arg-type]
        if done.vote:
            print(f"Robot {done.userid} on {board}: {done.text}")
            if after:
                print(_sentence(after))
        else:
            said = f"Robot {done.userid} played {done.text} on {board}"
            print(_sentence(f"{said}; {after}" if after else said))


def _sentence(text: str) -> str:
    """``text`` with its full stop, unless it ends in the lines to send back."""
    return text if "\n" in text else f"{text}."


def _game(name: str) -> str:
    """A game's name as every answer writes it ("Polis")."""
    return get_game(name).display_name


if __name__ == "__main__":  # the installed scripts start in pbmserv.cli (see there)
    sys.exit(main())

"""Where the web pages live, for the links in board mails.

The base URL is deployment data like the From address: it comes from the settings, which the
channels hold.  Board mails are composed deep inside the domain layer (a tournament's next round
starts when a move ends the last game of a round), so the base URL travels with the session
factory (``Session.info``) instead of through every function on the way; so do the clocks'
default periods, for the reminder and forfeit dates a board mail shows.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session, object_session, sessionmaker

from pbmserv.config import Settings

INFO_KEY = "pbmserv.web_base_url"
CLOCK_KEY = "pbmserv.clock_days"  # (nag_days, forfeit_days) of the settings


def base_url(settings: Settings) -> str:
    """The pages' base URL without a trailing slash; empty when the pages are off."""
    if not settings.web_enabled:
        return ""
    if settings.web_base_url:
        return settings.web_base_url.rstrip("/")
    host = settings.listen_host
    if host in ("", "0.0.0.0", "::"):
        host = "localhost"
    elif ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{settings.web_port}"


def board_path(game: str, number: int) -> str:
    return f"/boards/{game}/{number}"


def tournament_path(name: str) -> str:
    return f"/tournaments/{name}"


def attach(sessions: Any, settings: Settings) -> None:
    """Let every session of ``sessions`` (a sessionmaker) know the base URL and the clocks'
    default periods."""
    if isinstance(sessions, sessionmaker):
        clock = (float(settings.nag_days), float(settings.forfeit_days))
        sessions.configure(info={INFO_KEY: base_url(settings), CLOCK_KEY: clock})


def board_link(board: Any) -> str:
    """The page of ``board`` (a stored Board), or "" when its session knows no base URL."""
    session: Session | None = object_session(board)
    base = session.info.get(INFO_KEY, "") if session is not None else ""
    return f"{base}{board_path(board.game, board.number)}" if base else ""


def tournament_link(tournament: Any) -> str:
    """The page of ``tournament`` (a stored Tournament), or "" when its session knows no base
    URL."""
    session: Session | None = object_session(tournament)
    base = session.info.get(INFO_KEY, "") if session is not None else ""
    return f"{base}{tournament_path(tournament.name)}" if base else ""

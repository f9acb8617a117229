"""The ASGI application (Starlette): read-only routes, a static style sheet, security headers.

Only GET and HEAD are routed (anything else is 405), every page reads in a rolled-back read-only
transaction, and the Content-Security-Policy allows no script at all and styles only from our
own style sheet, so the pages work, and must work, without JavaScript.

A database that cannot be used (gone, full) answers 503 with a short page and a Retry-After,
and is one warning a streak (:class:`pbmserv.store.outage.Outage`): it was a bare "Internal
Server Error" and a traceback for every request.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import datetime
from http import HTTPStatus
from typing import Any

import jinja2
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pbmserv.config import Settings
from pbmserv.resources import templates_dir
from pbmserv.store.outage import Outage, unavailable
from pbmserv.web import routes
from pbmserv.web.db import readonly_sessions

log = logging.getLogger("pbmserv.web")
RETRY_AFTER_SECONDS = 30  # what a 503 asks a client to wait
NO_PAGE = "There is no page at this address."  # a path no route takes, a static file not there
UNAVAILABLE = "The games cannot be shown just now: the database is unavailable. Try again soon."
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every response, error pages and static files included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                for key, value in SECURITY_HEADERS.items():
                    if key.lower().encode() not in present:
                        headers.append((key.lower().encode(), value.encode()))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


class StreakEnd:
    """Ends the pages' failing streak (one line) at the first page answered again; the
    static files read no database and say nothing about it."""

    def __init__(self, app: ASGIApp, outage: Outage) -> None:
        self.app, self.outage = app, outage

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or str(scope.get("path", "")).startswith("/static/"):
            await self.app(scope, receive, send)
            return

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 500:
                self.outage.worked()
            await send(message)

        await self.app(scope, receive, watch)


def environment() -> jinja2.Environment:
    """Jinja for HTML: autoescaping always on, undefined names are errors."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir() / "web")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


class Web:
    """What every page needs: settings, read-only sessions, the clock and the templates."""

    def __init__(
        self,
        settings: Settings,
        sessions: sessionmaker[Session],
        clock: Callable[[], datetime],
    ) -> None:
        self.settings = settings
        self.sessions = sessions
        self.clock = clock
        self.templates = Jinja2Templates(env=environment())

    def page(self, request: Request, name: str, status: int = 200, **context: Any) -> Response:
        """The page rendered; a 200 carries an ETag of its body and answers 304 to a request
        that holds it, so a browser revalidating (``no-cache``) gets no page it already has."""
        context.setdefault("server_name", self.settings.server_name)
        response = self.templates.TemplateResponse(request, name, context, status_code=status)
        return revalidated(request, response)


NO_CACHE = "no-cache"  # a page changes with every move: keep it, but ask before showing it


def revalidated(request: Request, response: Response) -> Response:
    """``response`` with ``Cache-Control: no-cache``, and for a 200 an ETag (a hash of the
    body); a 304 without a body when the request's If-None-Match names that ETag."""
    response.headers["Cache-Control"] = NO_CACHE
    if response.status_code != 200:
        return response
    etag = f'"{hashlib.sha256(response.body).hexdigest()[:32]}"'
    response.headers["ETag"] = etag
    held = {
        tag.strip().removeprefix("W/")
        for tag in request.headers.get("if-none-match", "").split(",")
    }
    if etag in held or "*" in held:
        return Response(status_code=304, headers={"ETag": etag, "Cache-Control": NO_CACHE})
    return response


def create_app(
    settings: Settings,
    clock: Callable[[], datetime],
    sessions: sessionmaker[Session] | None = None,
) -> ASGIApp:
    """The web application over ``settings``' database (read-only sessions unless given).

    ``clock`` gives the time for "waiting for" on board pages (the server's injectable clock).
    """

    web = Web(
        settings,
        sessions if sessions is not None else readonly_sessions(settings.url),
        clock,
    )

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:
            return Response("Method Not Allowed\n", 405, {"Allow": "GET, HEAD"})
        # Starlette's own 404 says only "Not Found": the page's heading says that already
        plain = exc.status_code == 404 and exc.detail == HTTPStatus.NOT_FOUND.phrase
        message = NO_PAGE if plain else exc.detail
        return web.page(
            request, "error.html.j2", exc.status_code, code=exc.status_code, message=message
        )

    outage = Outage("web pages", log, meanwhile="answering 503 meanwhile")

    async def database_error(request: Request, exc: Exception) -> Response:
        if not unavailable(exc):
            raise exc  # a bug: a 500, with its traceback in the log
        outage.failed(exc)
        response = web.page(request, "error.html.j2", 503, code=503, message=UNAVAILABLE)
        response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response

    app = Starlette(
        routes=[
            *routes.routes(web),
            Mount(
                "/static", StaticFiles(directory=templates_dir() / "web" / "static"), name="static"
            ),
        ],
        exception_handlers={
            HTTPException: http_error,
            DBAPIError: database_error,
            PoolTimeout: database_error,
        },
    )
    app.router.redirect_slashes = False  # routes.without_slash redirects, relative
    return SecurityHeaders(StreakEnd(app, outage))

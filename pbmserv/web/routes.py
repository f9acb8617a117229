"""The pages: home, game lists, a board (any ply), a player, tournaments.  GET/HEAD only.

Handlers are plain functions (Starlette runs them in its thread pool) that read in one
read-only transaction and render a template; anything unknown is a 404.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import quote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pbmserv.games import all_games
from pbmserv.numbers import whole_number
from pbmserv.render.templates import render_board
from pbmserv.web import queries
from pbmserv.web.db import reading
from pbmserv.web.draw import draw

if TYPE_CHECKING:  # the app imports the routes
    from pbmserv.web.app import Web


def routes(web: Web) -> list[Route]:
    def get(path: str, handler: Callable[[Web, Request], Response]) -> Route:
        def endpoint(request: Request) -> Response:
            try:
                return handler(web, request)
            except queries.NotFound as exc:
                raise HTTPException(404, str(exc)) from exc

        return Route(path, endpoint, methods=["GET"])  # HEAD comes with GET

    return [
        get("/", home),
        get("/games", games),
        get("/games/{game}", games),
        get("/boards/{game}/{number}", board),
        get("/players/{userid}", player),
        get("/tournaments", tournaments),
        get("/tournaments/{name}", tournament),
        get("/{path:path}/", without_slash),  # last: only what no route above took
    ]


def without_slash(web: Web, request: Request) -> Response:
    """``/players/alice/`` redirects to ``/players/alice``, relative: Starlette's own redirect
    was an absolute URL built from the request's Host header, which a client chooses.  The
    path is quoted and its leading slashes collapsed, so ``//host/`` or ``/\\host/`` cannot
    become a redirect to another host."""
    target = quote("/" + request.path_params["path"].strip("/"))
    query = request.scope.get("query_string", b"").decode("latin-1")
    return Response(status_code=307, headers={"Location": target + (f"?{query}" if query else "")})


def _number(text: str) -> int:
    number = whole_number(text)
    if number is None:
        raise queries.NotFound(f"{queries.shown_name(text)!r} is not a number.")
    return number


def home(web: Web, request: Request) -> Response:
    with reading(web.sessions) as session:
        active, finished = queries.board_lists(session, None)
        return web.page(
            request,
            "home.html.j2",
            games=all_games(),
            active=active[:20],
            finished=finished[:20],
            tournaments=queries.tournament_list(session)[:20],
        )


def games(web: Web, request: Request) -> Response:
    name = request.path_params.get("game")
    game = None if name is None else queries.game_or_404(name)
    with reading(web.sessions) as session:
        active, finished = queries.board_lists(session, game)
        return web.page(
            request, "games.html.j2", game=game, games=all_games(), active=active, finished=finished
        )


def board(web: Web, request: Request) -> Response:
    name = request.path_params["number"]
    if whole_number(name) is None and queries.BOARD_NAME.fullmatch(name):  # t2r1b3
        with reading(web.sessions) as session:
            target = queries.tournament_board_path(session, request.path_params["game"], name)
        query = request.scope.get("query_string", b"").decode("latin-1")
        return Response(
            status_code=307, headers={"Location": target + (f"?{query}" if query else "")}
        )
    number = _number(name)
    raw = request.query_params.get("ply")
    ply = None if raw is None or raw == "" else _number(raw)
    with reading(web.sessions) as session:
        page = queries.board_page(
            session, web.settings, request.path_params["game"], number, ply, web.clock()
        )
        return web.page(
            request,
            "board.html.j2",
            page=page,
            drawing=draw(page.position, over=page.over),
            legend=queries.board_legend(page),
            text_board=render_board(page.position, over=page.over),
        )


def player(web: Web, request: Request) -> Response:
    with reading(web.sessions) as session:
        page = queries.player_page(session, request.path_params["userid"])
        return web.page(request, "player.html.j2", page=page)


def tournaments(web: Web, request: Request) -> Response:
    with reading(web.sessions) as session:
        return web.page(
            request, "tournaments.html.j2", tournaments=queries.tournament_list(session)
        )


def tournament(web: Web, request: Request) -> Response:
    with reading(web.sessions) as session:
        page = queries.tournament_page(session, request.path_params["name"])
        return web.page(request, "tournament.html.j2", page=page)

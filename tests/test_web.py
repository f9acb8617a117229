"""The read-only web pages through Starlette's TestClient (and once through the real server):
what each page shows, links to any ply, 404s, security headers, escaping, no secrets, no writes,
and the link in every board mail."""

from __future__ import annotations

import random
import re
import socket
import subprocess
import sys
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest
from markupsafe import escape
from sqlalchemy import create_engine, select, text
from sqlalchemy.exc import DBAPIError, ProgrammingError
from sqlalchemy.orm import sessionmaker
from starlette.testclient import TestClient
from web_site import GAMES, HOSTILE, PLAYERS, build, more_tournaments, mover_and_moves, play

from pbmserv.config import Settings, load_settings
from pbmserv.domain import boards, clocks
from pbmserv.games import get_game
from pbmserv.render import links
from pbmserv.render.templates import render_board
from pbmserv.store.models import Board, Outbox, User
from pbmserv.web.app import create_app
from pbmserv.web.db import reading, readonly_sessions


@pytest.fixture
def site(shell, settings, clock):
    numbers = build(shell)
    client = TestClient(create_app(settings, lambda: clock.now))
    return numbers, client


def stored(sessions, game: str, number: int):
    s = sessions()
    board = s.scalar(select(Board).where(Board.game == game, Board.number == number))
    return s, board


class Links(HTMLParser):
    """The links of a page, and every tag and attribute name (to look for scripts and styles)."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self.tags.add(tag)
        for key, value in attrs:
            self.attributes.add(key)
            if key in ("href", "src", "action") and value:
                self.hrefs.append(value)


def crawl(client: TestClient, start: str = "/", limit: int = 400) -> dict[str, str]:
    """Every page reachable from ``start`` by links and ``?ply=`` steps, by path."""
    seen: dict[str, str] = {}
    todo = [start]
    while todo and len(seen) < limit:
        path = todo.pop()
        if path in seen:
            continue
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        seen[path] = response.text
        if not response.headers["content-type"].startswith("text/html"):
            continue
        parser = Links()
        parser.feed(response.text)
        for href in parser.hrefs:
            url = urlsplit(urljoin(path, href))
            if url.netloc:
                continue
            todo.append(url.path + (f"?{url.query}" if url.query else ""))
    return seen


# ----------------------------------------------------------------------------- board pages


def test_board_page_of_each_game(site, sessions):
    numbers, client = site
    legends = {
        "ploy": [
            "C</b> commander",
            "medium probe",
            "Flags: the strokes",
            "Turns: + counter",
            "the last player left wins",
        ],
        "pylon": [
            "Points: columns a-k, rows 1-11",
            "Marbles on the board: 6 of 91",
            "most marbles on the board wins",
        ],
        "plotto": [
            "A move is letter + number",
            "Numbers 3 and 4 are neutral",
            "A straight line of four or more pieces, whoever placed them, wins",
            "Valid moves:",
        ],
        "polis": ["b blue dog, B blue chariot", "Blue moves down the board to rank 1"],
    }
    for game in GAMES:
        page = client.get(f"/boards/{game}/{numbers[game]}")
        assert page.status_code == 200
        html = page.text
        s, board = stored(sessions, game, numbers[game])
        with s:
            position = boards.replay(board)
            mover = boards.user_to_move(board, position)
            assert mover is not None
            assert f"It is {mover.userid}&#39;s turn" in html
            # the drawing: one group per piece, as many as the engine has
            pieces = len(re.findall(r'<g class="(?:piece|marble) ', html))
            if game == "pylon":
                assert pieces == sum(1 for p in position.board if p != -1) == 6
            elif game == "plotto":
                assert pieces == len(position.board) == 6
            else:
                assert pieces == sum(1 for p in position.board if p)
            assert html.count("<svg") == 1 and 'aria-label="' in html
            # the same legend as the mail, and the mail's drawing itself
            for words in legends[game]:
                assert words in html, (game, words)
            assert _unescape(_between(html, '<pre class="mail-board">', "</pre>")) == render_board(
                position
            )
            # the move list links every ply; players link to their pages
            for record in board.moves:
                if record.ply != len(board.moves):
                    assert f'?ply={record.ply}">{record.text}</a>' in html
            for userid in ("alice", "bob"):
                assert f'href="/players/{userid}"' in html
            assert "Forfeit after" in html and "Waiting for" in html
            # the comment that came with move 2 is shown, escaped
            assert "with <a href=" in html and "move 2</a>" in html


def _between(html: str, start: str, end: str) -> str:
    return html.split(start, 1)[1].split(end, 1)[0]


def _unescape(text_: str) -> str:
    import html as html_module

    return html_module.unescape(text_)


def test_any_ply_by_links_and_by_the_slider_form(site, sessions):
    numbers, client = site
    number = numbers["ploy"]
    start = client.get(f"/boards/ploy/{number}?ply=0").text
    initial = get_game("ploy").new(2)
    assert len(re.findall(r'<g class="piece ', start)) == sum(1 for p in initial.board if p)
    assert "Position after move 0 of 6" in start
    assert 'rel="next"' in start and 'rel="prev"' not in start
    s, board = stored(sessions, "ploy", number)
    with s:
        for ply in range(0, 7):
            html = client.get(f"/boards/ploy/{number}", params={"ply": ply}).text
            position = boards.replay(board, ply)
            assert _unescape(_between(html, '<pre class="mail-board">', "</pre>")) == render_board(
                position
            )
            assert f'name="ply" min="0" max="6" value="{ply}"' in html
    # the form is a plain GET form with a submit button: no script needed
    form = _between(start, '<form method="get"', "</form>")
    assert f'action="/boards/ploy/{number}"' in form and '<button type="submit">' in form
    for bad in ("7", "-1", "x", "1e3", "99999999999", "²", "３"):
        assert client.get(f"/boards/ploy/{number}?ply={bad}").status_code == 404


def test_after_a_swap_each_move_is_under_the_player_who_made_it(shell, settings, clock):
    shell.signup("alice", "bob")
    shell.ok("pylon challenge alice bob")
    for line in ("alice pw-alice e5", "bob pw-bob swap", "alice pw-alice e1", "bob pw-bob e3"):
        shell.ok(f"pylon move 101 {line}")
    client = TestClient(create_app(settings, lambda: clock.now))
    moves = _between(client.get("/boards/pylon/101").text, '<table class="moves">', "</table>")
    here = "/boards/pylon/101?ply="
    # the first mover's column first, headed by the colour of each of her moves: her first
    # move placed an o, the swap gave her x
    assert "<th>alice (o, then x)</th><th>bob (o)</th>" in moves
    assert (  # each move numbered as the mails number it (the N of '#N'), not by rows
        f'<tr><td>1. <a href="{here}1">e5</a></td>'
        f'<td>2. <a href="{here}2">swap (bob takes over o)</a></td></tr>'
    ) in moves
    assert (
        f'<tr><td>3. <a href="{here}3">e1</a></td>'
        '<td>4. <strong aria-current="step">e3</strong></td></tr>'
    ) in moves


def test_unknown_things_answer_404(site):
    numbers, client = site
    for path in (
        "/boards/chess/101",
        "/boards/ploy/999",
        "/boards/ploy/abc",
        "/boards/ploy",
        "/players/nobody",
        "/tournaments/nope",
        "/tournaments/t99",
        "/tournaments/t²",
        "/tournaments/t99999999999999999999",
        "/boards/ploy/¹",  # int() fails on it though isdigit() takes it
        "/boards/ploy/١٠١",  # int() reads 101: one board, one address
        "/boards/ploy/１０１",
        "/games/nope",
        "/nothing",
        "/static/nothing.css",
    ):
        response = client.get(path)
        assert response.status_code == 404, path
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert "Not found" in client.get("/players/nobody").text


def test_a_404_cuts_a_long_name_it_quotes(site):
    """A 5,000-character name in the address was quoted whole on the 404 page (5 KB of it,
    over many screens): the page quotes its first 60 characters and '…'."""
    _, client = site
    long = "x" * 5000
    for path in (
        f"/players/{long}",
        f"/tournaments/{long}",
        f"/games/{long}",
        f"/boards/{long}/101",
        f"/boards/ploy/{long}",
        f"/boards/ploy/101?ply={long}",
    ):
        page = client.get(path)
        assert page.status_code == 404, path
        assert "x" * 61 not in page.text, path
        assert "x" * 60 + "…" in page.text, path
    short = client.get("/players/nobody")  # a name that fits is quoted as it is
    assert "There is no player &#39;nobody&#39;." in short.text


def test_move_links_are_underlined(site):
    """The moves of a board page were links told from their text by colour alone (the style
    sheet took their underline away), which a reader who does not see the colour misses
    (WCAG 1.4.1): no rule takes a link's underline away but the menu's."""
    numbers, client = site
    css = client.get("/static/web.css").text
    rules = re.findall(r"([^{}]+)\{([^}]*)\}", re.sub(r"/\*.*?\*/", "", css, flags=re.S))
    bare = [
        sel.strip()
        for sel, body in rules
        if re.search(r"text-decoration\s*:\s*none", body) and sel.strip() != "header nav a"
    ]
    assert bare == []
    page = client.get(f"/boards/ploy/{numbers['ploy']}?ply=0").text
    assert re.search(r'<table class="moves[^"]*">.*?<a href="[^"]*\?ply=1"', page, re.S)


def test_a_four_player_move_table_names_each_cell(shell, settings, clock):
    """A four-player Ploy's move table (a column for each player) scrolled sideways on a
    phone; each cell now carries its column's name, and on a narrow screen each row is a block
    of named cells, as the lists are (the browser test measures it)."""
    shell.signup("alice", "bob", "carol", "dave")
    shell.ok("ploy challenge alice bob carol dave")
    play(shell, "ploy", 101, 5)
    client = TestClient(create_app(settings, lambda: clock.now))
    page = client.get("/boards/ploy/101").text
    table = re.search(r'<table class="moves stacked">.*?</table>', page, re.S)
    assert table is not None
    heads = re.findall(r"<th>([^<]*)</th>", table.group(0))
    assert len(heads) == 4
    first = re.search(r"<tbody>\s*<tr>(.*?)</tr>", table.group(0), re.S)
    assert first is not None
    assert re.findall(r'<td data-label="([^"]*)">', first.group(1)) == heads
    css = client.get("/static/web.css").text
    assert "table.moves.stacked td[data-label]::before" in css


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Outage:
    """Sessions of the store, or while ``down`` of a PostgreSQL that refuses connections."""

    def __init__(self, settings) -> None:  # type: ignore[no-untyped-def]
        self.up = readonly_sessions(settings.url)
        dead = create_engine(f"postgresql+psycopg://pbmserv@127.0.0.1:{closed_port()}/pbmserv")
        self.gone = sessionmaker(bind=dead)
        self.down = False

    def __call__(self):  # type: ignore[no-untyped-def]
        return (self.gone if self.down else self.up)()


def test_a_database_outage_answers_503_and_warns_once(shell, settings, clock, caplog):
    """An unreachable database gave a bare 'Internal Server Error' and a traceback for every
    request: now a short page with a Retry-After, and one warning per streak."""
    build(shell)
    store = Outage(settings)
    client = TestClient(create_app(settings, lambda: clock.now, store))  # type: ignore[arg-type]
    assert client.get("/").status_code == 200
    store.down = True
    with caplog.at_level("INFO"):
        for path in ("/", "/boards/ploy/101", "/players/alice", "/", "/tournaments"):
            response = client.get(path)
            assert response.status_code == 503, path
            assert response.headers["retry-after"] == "30"
            assert response.headers["content-type"].startswith("text/html")
            assert "the database is unavailable" in response.text
            assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        assert client.get("/static/nothing.css").status_code == 404  # no page: no end
        store.down = False
        assert client.get("/players/alice").status_code == 200
        assert client.get("/").status_code == 200
    said = [r for r in caplog.records if r.name.startswith("pbmserv")]
    lines = [(r.levelname, r.getMessage()) for r in said]
    assert not any(r.exc_info for r in said), lines
    assert len(lines) == 2, lines
    assert lines[0][0] == "WARNING" and lines[0][1].startswith(
        "web pages: the database cannot be used (OperationalError: OperationalError: "
        "connection failed"
    )
    assert lines[0][1].endswith("answering 503 meanwhile (no more warnings until it works again)")
    assert lines[1] == ("WARNING", "web pages works again (after 5 failed tries)")


def test_a_bug_in_a_page_is_still_a_500_with_its_traceback(site, monkeypatch, caplog):
    from pbmserv.web import queries

    def broken(*args, **kwargs):
        raise ProgrammingError("SELECT", {}, Exception("no such column: boards.nope"))

    numbers, client = site
    monkeypatch.setattr(queries, "board_lists", broken)
    client = TestClient(client.app, raise_server_exceptions=False)
    assert client.get("/").status_code == 500


def test_lists_players_and_tournament(site, shell):
    numbers, client = site
    home = client.get("/").text
    games = client.get("/games").text
    for game, number in numbers.items():
        assert f'href="/boards/{game}/{number}"' in home
        assert f'href="/boards/{game}/{number}"' in games
    only_polis = client.get("/games/polis").text
    assert 'href="/boards/polis/' in only_polis and 'href="/boards/ploy/' not in only_polis
    # a finished game: ratings on the player page
    shell.ok(f"polis resign {numbers['polis']} alice pw-alice")
    alice = client.get("/players/alice").text
    # the game as every other page and mail writes it: Polis, not polis
    assert "Ratings" in alice and '<a href="/games/polis">Polis</a>' in alice
    assert "won by bob" in client.get("/players/bob").text
    assert 'href="/tournaments/spring"' in alice
    cup = client.get("/tournaments/spring").text
    assert client.get("/tournaments/t1").text == cup
    assert "Standings" in cup and "Round 1" in cup
    for userid in PLAYERS:
        assert f'href="/players/{userid}"' in cup
    assert cup.count('href="/boards/ploy/') == 2  # round 1: two boards
    assert "t1r1b1" in cup and "t1r1b2" in cup
    first = re.search(r'href="(/boards/ploy/\d+)">Ploy \d+</a> \(t1r1b1\)', cup)
    assert first is not None
    board_page = client.get(first.group(1)).text
    # named as its mails name it ("Tournament spring, round 1: this is board t1r1b1."), not t1
    assert 'Board t1r1b1 of <a href="/tournaments/spring">tournament spring</a>' in board_page
    assert "spring" in client.get("/tournaments").text


def _standings(html: str) -> tuple[list[str], list[list[str]]]:
    """The header cells and the rows' cells of a tournament page's standings table."""
    table = _between(html, '<table class="list standings">', "</table>")
    head = re.findall(r"<th>(.*?)</th>", _between(table, "<thead>", "</thead>"))
    rows = re.findall(r"<tr>(.*?)</tr>", _between(table, "<tbody>", "</tbody>"))
    return head, [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]


def test_standings_have_no_empty_column_and_a_knockout_no_buchholz(site, shell):
    """The standings had a seventh column with no heading (empty unless a player withdrew),
    and a knockout showed Buchholz and Berger, which it does not rank by."""
    numbers, client = site
    more_tournaments(shell)
    head, rows = _standings(client.get("/tournaments/spring").text)
    assert head == [  # the seed breaks the last ties: shown as in the mails' standings
        "#",
        "Player",
        "Seed",
        "Score",
        "Buchholz",
        '<abbr title="Sonneborn-Berger">S-B</abbr>',
        "Played",
    ]
    assert len(rows) == 4 and all(len(cells) == len(head) for cells in rows)
    assert sorted(cells[2] for cells in rows) == ["1", "2", "3", "4"]
    shell.ok("tournament withdraw spring dave pw-dave")
    page = client.get("/tournaments/spring").text
    head, rows = _standings(page)
    assert head[-1] == "Status" and all(len(cells) == len(head) for cells in rows)
    assert [cells[-1] for cells in rows].count("withdrawn") == 1
    assert "Ties are broken by Buchholz" in page
    for name in ("early", "cup"):  # open, then running
        page = client.get(f"/tournaments/{name}").text
        head, rows = _standings(page)
        assert head == ["#", "Player", "Seed", "Score", "Played"], name
        assert len(rows) == 4 and all(len(cells) == len(head) for cells in rows)
        assert "Buchholz" not in page and "Berger" not in page
        assert "ranked by the round they went out in" in page
    shell.ok("tournament withdraw cup dave pw-dave")
    head, rows = _standings(client.get("/tournaments/cup").text)
    assert head[-1] == "Status" and "withdrawn" in [cells[-1] for cells in rows]


# ----------------------------------------------------------------------------- safety


def test_security_headers_and_no_inline_script_or_style(site):
    numbers, client = site
    pages = crawl(client)
    assert len(pages) > 40
    for path, body in pages.items():
        if path.startswith("/static/"):
            continue
        parser = Links()
        parser.feed(body)
        assert not parser.tags & {"script", "style", "iframe", "object", "embed"}, path
        assert "style" not in parser.attributes, path
        assert not [a for a in parser.attributes if a.startswith("on")], path
        assert not [h for h in parser.hrefs if h.lower().startswith(("javascript:", "data:"))]
    for path in ("/", f"/boards/ploy/{numbers['ploy']}", "/static/web.css", "/nothing"):
        headers = client.get(path).headers
        csp = headers["content-security-policy"]
        assert "default-src 'none'" in csp and "style-src 'self'" in csp
        assert "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
        assert "script-src" not in csp  # falls back to default-src 'none': no script at all
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
    assert client.get("/static/web.css").headers["content-type"].startswith("text/css")


def test_a_trailing_slash_redirects_relative_whatever_the_host_header(site):
    """``/players/alice/`` answered 307 to ``http://<Host header>/players/alice``: a client
    chose the host the redirect pointed at."""
    numbers, client = site
    board = f"/boards/ploy/{numbers['ploy']}"
    for path, location in (
        ("/players/alice/", "/players/alice"),
        (f"{board}/?ply=1", f"{board}?ply=1"),
        ("/tournaments//", "/tournaments"),
        ("//evil.example/", "/evil.example"),  # never //host: another host
        ("/%5Cevil.example/", "/%5Cevil.example"),  # nor /\host, read as //host by browsers
    ):
        url = "http://testserver" + path  # (a bare //host would be read as a host)
        response = client.get(url, headers={"Host": "evil.example"}, follow_redirects=False)
        assert response.status_code == 307, path
        assert response.headers["location"] == location, path
        assert "evil.example/" not in response.headers["location"]
    assert client.get("/players/alice/").url.path == "/players/alice"  # and it arrives
    assert client.head("/players/alice/", follow_redirects=False).status_code == 307


def test_pages_are_revalidated_with_an_etag(site, shell):
    """The pages had no caching headers at all (the static files had ETag and 304): a browser
    could show a board as it was before the last move."""
    numbers, client = site
    board = f"/boards/ploy/{numbers['ploy']}"
    for path in ("/", board, "/players/alice", "/tournaments/spring"):
        first = client.get(path)
        assert first.headers["cache-control"] == "no-cache", path
        etag = first.headers["etag"]
        again = client.get(path, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b"", path
        assert again.headers["etag"] == etag and again.headers["cache-control"] == "no-cache"
        assert "frame-ancestors 'none'" in again.headers["content-security-policy"]
        assert client.get(path, headers={"If-None-Match": f'"x", W/{etag}'}).status_code == 304
        assert client.get(path, headers={"If-None-Match": '"other"'}).status_code == 200
    etag = client.get(board).headers["etag"]
    mover, moves = mover_and_moves(shell, "ploy", numbers["ploy"])
    shell.ok(f"ploy move {numbers['ploy']} {mover} pw-{mover} {moves[0]}")
    changed = client.get(board, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    missing = client.get("/players/nobody")
    assert missing.status_code == 404 and missing.headers["cache-control"] == "no-cache"
    assert "etag" not in missing.headers
    assert "etag" in client.get("/static/web.css").headers  # the static files keep theirs


def test_only_get_and_head(site):
    numbers, client = site
    path = f"/boards/ploy/{numbers['ploy']}"
    head = client.head(path)
    assert head.status_code == 200 and head.content == b""
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        response = client.request(method, path)
        assert response.status_code == 405, method
        assert response.headers["allow"] == "GET, HEAD"
    assert client.post("/static/web.css").status_code == 405


def test_user_text_is_escaped(site, sessions):
    numbers, client = site
    hostile_id = "<b>x\"'&y"
    with sessions() as s, s.begin():  # a userid the dispatcher would refuse, straight in the store
        s.execute(text("UPDATE users SET userid = :u WHERE userid = 'bob'"), {"u": hostile_id})
    pages = [client.get(f"/boards/{g}/{numbers[g]}").text for g in GAMES]
    pages += [client.get("/tournaments/spring").text, client.get("/").text]
    for html in pages:
        assert "<b>x" not in html and "<script>alert" not in html
        assert "<img src=x" not in html
        assert "&lt;b&gt;x&#34;&#39;&amp;y" in html
    board_page = pages[0]
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in board_page  # the comment
    assert str(escape(HOSTILE)) in board_page
    assert 'href="/players/%3Cb%3Ex%22%27%26y"' in board_page
    player = client.get("/players/%3Cb%3Ex%22%27%26y")
    assert player.status_code == 200 and "<h1>Player &lt;b&gt;x&#34;&#39;&amp;y</h1>" in player.text


def test_no_password_address_or_hash_on_any_page(site, shell):
    numbers, client = site
    shell.ok("signup eve pw-eve-secret eve.private@mail.example.net")
    pages = crawl(client)
    pages.update({"/players/eve": client.get("/players/eve").text})
    for path, body in pages.items():
        for secret in ("@example.org", "@mail.example.net", "pw-", "argon2", "$argon"):
            assert secret not in body, (path, secret)


def test_pages_never_write(site, sessions, settings):
    numbers, client = site
    with sessions() as s, s.begin():
        s.execute(text("UPDATE boards SET position_cache = NULL"))

    def snapshot() -> list[tuple]:
        with sessions() as s:
            rows = s.execute(text("SELECT id, version, position_cache, cache_ply FROM boards"))
            counts = [
                s.scalar(text(f"SELECT count(*) FROM {t}"))
                for t in ("users", "moves", "comments", "outbox", "ratings", "auth_failures")
            ]
            return [*rows.all(), tuple(counts)]

    before = snapshot()
    crawl(client)
    assert snapshot() == before
    # and the database itself refuses a write from the pages' sessions
    factory = readonly_sessions(settings.url)
    with pytest.raises(DBAPIError, match="read-?only"), reading(factory) as s:
        s.execute(text("UPDATE users SET seeking = 3"))
        s.flush()


def test_the_web_layer_does_not_import_commands_or_mail():
    code = (
        "import sys; import pbmserv.web.app, pbmserv.web.routes, pbmserv.web.serve, "
        "pbmserv.web.draw.ploy, pbmserv.web.draw.pylon, pbmserv.web.draw.plotto, "
        "pbmserv.web.draw.polis; "
        "bad = [m for m in sys.modules if m.startswith(('pbmserv.commands', 'pbmserv.mail', "
        "'pbmserv.cli'))]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------------------- mail links


def test_every_board_mail_links_to_its_page(shell, sessions, clock):
    numbers = build(shell)
    clock.advance(days=8)
    report = clocks.tick(shell.sessions, shell.settings, clock.now)
    assert report.nags  # reminders are board mails too
    board_mails = [m for m in shell.outbox() if re.search(r"Board \d+", m.subject)]
    subjects = {m.subject.split()[0] for m in board_mails}
    assert {"New", "Nag:", "Ploy", "Polis"} <= subjects
    for mail in board_mails:
        found = re.search(r"(\w+) Board (\d+)", mail.subject)
        assert found is not None
        game, number = found.groups()
        link = f"On the web: https://games.example.org/boards/{game.lower()}/{number}\n"
        # the link ends the board text; only the player to move's line to send back follows
        tail = mail.body[mail.body.index(link) + len(link) :] if link in mail.body else None
        assert tail == "" or (tail or "").startswith("\nYour move. Send back"), mail.subject
    # tournament boards (made deep in the domain layer) carry it as well
    assert any("t1r1b1" in m.body and "/boards/ploy/" in m.body for m in board_mails)
    assert numbers


def test_base_url_from_the_settings(monkeypatch):
    assert links.base_url(Settings()) == "http://127.0.0.1:8080"
    monkeypatch.setenv("PBMSERV_WEB_PORT", "9191")
    settings = load_settings()
    assert settings.web_port == 9191
    assert links.base_url(settings) == "http://127.0.0.1:9191"
    assert links.base_url(Settings(listen_host="0.0.0.0")) == "http://localhost:8080"
    assert links.base_url(Settings(listen_host="::1", web_port=81)) == "http://[::1]:81"
    assert links.base_url(Settings(web_base_url="https://x.example/")) == "https://x.example"
    assert links.base_url(Settings(web_enabled=False, web_base_url="https://x.example")) == ""


def test_no_link_when_the_pages_are_off(shell, settings, sessions):
    settings.web_enabled = False
    links.attach(sessions, settings)
    shell.signup("alice", "bob")
    mail = shell.ok("polis challenge alice bob")
    assert "On the web" not in mail.body
    play(shell, "polis", 101, 1)
    assert all("On the web" not in m.body for m in shell.outbox())


# ----------------------------------------------------------------------------- the real server


def test_serve_runs_the_pages_in_the_same_process(shell, settings, clock):
    import socket

    import httpx2

    from pbmserv.cli.server import Server

    build(shell)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        settings.listen_port = probe.getsockname()[1]
    server = Server(settings, clock=lambda: clock.now)
    server.start()
    try:
        assert server.web is not None and server.web.port > 0
        base = f"http://127.0.0.1:{server.web.port}"
        page = httpx2.get(f"{base}/boards/ploy/101", timeout=10)
        assert page.status_code == 200 and "<svg" in page.text
        assert page.headers["x-content-type-options"] == "nosniff"
        assert httpx2.post(f"{base}/boards/ploy/101", timeout=10).status_code == 405
        assert httpx2.get(f"{base}/players/nobody", timeout=10).status_code == 404
    finally:
        server.stop()
    with pytest.raises(httpx2.TransportError):
        httpx2.get(f"{base}/", timeout=2)


def test_no_connection_is_held_for_ever(shell, settings, clock):
    """The pages share the process and its file descriptors with the mail gateway, and uvicorn
    closed no connection that sent nothing, or a header line every 2 s: five were open after
    203 s, 300 at once.  A request's head has ``web_request_timeout`` seconds, and beyond
    ``web_max_connections`` a connection is closed at once; answers go on meanwhile."""
    import socket
    import time

    from pbmserv.web.serve import WebServer

    build(shell)
    settings.web_request_timeout, settings.web_max_connections = 1, 4
    web = WebServer(settings, lambda: clock.now)
    web.start()

    def closed_after(sock: socket.socket, drip: bytes = b"") -> float:
        """Seconds until the server closes ``sock`` (sending ``drip`` every 0.2 s)."""
        start = time.monotonic()
        sock.settimeout(0.2)
        while time.monotonic() - start < 10:
            try:
                if sock.recv(4096) == b"":
                    return time.monotonic() - start
            except TimeoutError:
                if drip:
                    sock.sendall(drip)
            except ConnectionResetError:
                return time.monotonic() - start
        return float("inf")

    def get(sock: socket.socket) -> bytes:
        """One whole response (its body too, or the next read would start inside it)."""
        sock.sendall(b"GET /players/alice HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, body = data.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 200"), head[:100]
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
        while len(body) < length:
            body += sock.recv(65536)
        return head

    try:
        address = ("127.0.0.1", web.port)
        with socket.create_connection(address) as silent:
            assert closed_after(silent) < 8  # (1 s, on a loaded machine)
        with socket.create_connection(address) as slow:
            slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            assert closed_after(slow, drip=b"X-a: b\r\n") < 8  # (1 s, on a loaded machine)
        with socket.create_connection(address) as reader:  # kept alive between requests...
            get(reader)
            time.sleep(0.5)
            get(reader)
            assert closed_after(reader) < 8  # ...as long as a head may take
    finally:
        web.stop()
    settings.web_request_timeout = 60  # the cap alone: a fifth connection is closed at once
    web = WebServer(settings, lambda: clock.now)
    web.start()
    try:
        address = ("127.0.0.1", web.port)
        held = [socket.create_connection(address) for _ in range(4)]
        try:
            with socket.create_connection(address) as over:
                assert closed_after(over) < 8  # (not the 60 s of a head)
        finally:
            for sock in held:
                sock.close()
        for _ in range(50):  # once the server has seen them closed, it answers again
            with socket.create_connection(address) as later:
                later.sendall(b"GET /players/alice HTTP/1.1\r\nHost: x\r\n\r\n")
                later.settimeout(10)
                if later.recv(65536).startswith(b"HTTP/1.1 200"):
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("no answer once the held connections were closed")
    finally:
        web.stop()


OUT_OF_DESCRIPTORS = """
import logging, resource, sys
from datetime import UTC, datetime
from pathlib import Path
from pbmserv.config import Settings
from pbmserv.web.serve import WebServer

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s %(message)s")
data = Path(sys.argv[2])
settings = Settings(
    data_dir=data,
    database_url=f"sqlite:///{data / 'store.sqlite3'}",
    listen_host="127.0.0.1",
    web_port=int(sys.argv[1]),
    web_max_connections=1000,
)
web = WebServer(settings, lambda: datetime(2026, 11, 1, 12, 0, tzinfo=UTC))
web.start()
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
print("ready", flush=True)
sys.stdin.readline()
web.stop()
"""


def test_running_out_of_descriptors_is_one_warning_and_the_pages_live_on(tmp_path):
    """asyncio logged a traceback for every failed accept() of the pages' loop (2,038 in 6
    seconds, and one for each of its retries left when the server stopped), until the full
    pipe to the log stopped the pages: now one warning a streak, as the SMTP listener does,
    and the pages answer again once descriptors are free."""
    import os
    import time
    import urllib.request

    from waiting import wait_until

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-c", OUT_OF_DESCRIPTORS, str(port), str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin and server.stdout and server.stderr

    def descriptors() -> int:
        return len(os.listdir(f"/proc/{server.pid}/fd"))

    held: list[socket.socket] = []
    try:
        assert server.stdout.readline() == b"ready\n"
        for _ in range(2):  # two streaks
            for _ in range(80):  # more than the 64 descriptors the server has
                held.append(socket.create_connection(("127.0.0.1", port), timeout=10))
            time.sleep(2.5)  # asyncio retries the accept every second
            for conn in held:
                conn.close()
            held.clear()
            wait_until(lambda: descriptors() < 32, "the server to close its side", seen=descriptors)
            time.sleep(1.0)  # (a connection with the streak's last retries belongs to it)
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/static/web.css", timeout=10
            ) as page:  # (read to its end: the page has its file open until then)
                assert page.status == 200 and page.read()
    finally:
        for conn in held:
            conn.close()
        _, err = server.communicate(b"stop\n", timeout=30)
    said = err.decode()
    assert "Traceback" not in said, said[:3000]
    lines = [line for line in said.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert [line.split(" (")[0] for line in lines] == [
        "WARNING pbmserv.web the web server cannot accept connections",
        "WARNING pbmserv.web the web server accepts connections again",
    ] * 2, "\n".join(lines)


def test_a_taken_web_port_is_an_os_error(settings, clock):
    import socket

    from pbmserv.web.serve import WebServer

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        settings.web_port = taken.getsockname()[1]
        with pytest.raises(OSError, match=f"web port {settings.web_port}"):
            WebServer(settings, lambda: clock.now).start()


def test_users_table_unchanged_by_a_hostile_lookup(site, sessions):
    numbers, client = site
    assert client.get("/players/alice' OR '1'='1").status_code == 404
    with sessions() as s:
        assert s.scalar(select(User).where(User.userid == "alice")) is not None
        assert s.scalar(select(Outbox).limit(1)) is not None


def test_a_game_without_a_drawing_still_has_its_page(shell, settings, clock):
    shell.signup("alice", "bob")
    shell.ok("nim challenge alice bob")
    client = TestClient(create_app(settings, lambda: clock.now))
    page = client.get("/boards/nim/101")
    assert page.status_code == 200
    assert "<svg" not in page.text and "The board as mailed" in page.text


def test_options_are_shown_as_written_in_the_mail_and_the_page_title(shell, settings, clock):
    """Days are stored as floats: ``--forfeittime=5`` showed as ``5.0``; 1.5 stays 1.5."""
    shell.signup("alice", "bob")
    mail = shell.ok("ploy challenge alice bob --forfeittime=5 --nagtime=1.5")
    assert "Summary of Ploy Board 101 (--forfeittime=5 --nagtime=1.5)\n" in mail.body
    client = TestClient(create_app(settings, lambda: clock.now))
    title = _between(client.get("/boards/ploy/101").text, "<title>", "</title>")
    assert "(--forfeittime=5 --nagtime=1.5)" in title


def test_a_flag_option_is_shown_as_written_in_the_mail_and_the_page_title(shell, settings, clock):
    """``--unrated`` is stored as True: both headings read ``(--unrated=True)``."""
    shell.signup("alice", "bob")
    mail = shell.ok("polis challenge alice bob --unrated --nagtime=2")
    assert "Summary of Polis Board 101 (--nagtime=2 --unrated)\n" in mail.body
    assert "=True" not in mail.body
    client = TestClient(create_app(settings, lambda: clock.now))
    html = client.get("/boards/polis/101").text
    assert _between(html, "<title>", "</title>").startswith(
        "Polis Board 101 (--nagtime=2 --unrated) - "
    )
    assert "<h1>Polis Board 101 (--nagtime=2 --unrated)</h1>" in html and "=True" not in html


@pytest.mark.parametrize("game", ["plotto", "pylon", "polis", "ploy"])
def test_a_board_drawn_by_agreement_shows_no_one_to_move(shell, settings, clock, game):
    """A board ended off the board (a draw agreed, a player who left the tournament) keeps an
    engine position with a seat to move: its page said "<- to move" in the legend and the
    mailed board, drew Pylon's rings and Plotto's open cells, and the last Plotto mail listed
    "Valid moves:" of a game that was over.  An earlier ply of it still shows its mover."""
    shell.signup("alice", "bob")
    shell.ok(f"{game} challenge alice bob")
    _, texts = mover_and_moves(shell, game, 101)
    shell.play(game, [texts[0]])
    _, texts = mover_and_moves(shell, game, 101)
    shell.play(game, [texts[0]])
    mover = shell.mover(game)
    shell.ok(f"{game} move 101 {mover} pw-{mover} propose")
    other = "bob" if mover == "alice" else "alice"
    mail = shell.ok(f"{game} move 101 {other} pw-{other} accept")
    assert "draw agreed" in mail.body and "to move" not in mail.body
    assert "Valid moves" not in mail.body and "a letter marks" not in mail.body
    client = TestClient(create_app(settings, lambda: clock.now))
    html = client.get("/boards/" + game + "/101").text
    assert "to move" not in html and "to-move" not in html and "Valid moves" not in html
    assert 'class="open"' not in html and "a letter marks" not in html
    earlier = client.get("/boards/" + game + "/101?ply=1").text
    assert "to move" in earlier


def test_a_tournament_board_name_leads_to_its_page(site, sessions):
    """Mails name a tournament's boards ``t1r1b1``, which work wherever a board number does;
    the page's address took only the number (``'t1r1b1' is not a number``)."""
    _, client = site
    with sessions() as s:
        board = s.scalar(select(Board).where(Board.options["tournament"].as_string() == "t1r1b1"))
        number = board.number
    for asked in ("/boards/ploy/t1r1b1", "/boards/Ploy/T1R1B1"):
        moved = client.get(asked + "?ply=0", follow_redirects=False)
        assert moved.status_code == 307
        assert moved.headers["location"] == f"/boards/ploy/{number}?ply=0"
    assert client.get("/boards/ploy/t1r1b1").status_code == 200
    other = client.get("/boards/polis/t1r1b1", follow_redirects=False)  # a Ploy board's name
    assert other.status_code == 307 and other.headers["location"] == f"/boards/ploy/{number}"
    assert client.get("/boards/polis/t1r1b1").status_code == 200
    assert client.get("/boards/ploy/t1r9b1").status_code == 404


def test_a_player_page_writes_the_games_as_every_other_page(shell, settings, clock):
    """The player page wrote 'polis' in its ratings and 'A robot: polis robot', where the
    lists, the board pages and the mails write 'Polis'."""
    from test_robots import operator_ok

    shell.signup("alice", "bob")
    operator_ok(shell, "robot add polibot --game polis --level easy")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice a7-a6")
    shell.ok("polis move 101 bob pw-bob b2-b3")
    shell.ok("polis resign 101 alice pw-alice")  # after the first round: rated, not declined
    client = TestClient(create_app(settings, lambda: clock.now))
    alice = client.get("/players/alice").text
    assert '<a href="/games/polis">Polis</a>' in alice and ">polis<" not in alice
    assert "A robot: Polis robot, level easy." in client.get("/players/polibot").text


def test_a_finished_plotto_page_does_not_explain_letters_it_no_longer_shows(shell, settings, clock):
    """A Plotto game won on the board: the mail's legend drops the letters (no cell is open),
    but the page's said "a letter marks a cell where the next piece may go" under a drawing
    with none."""
    shell.signup("alice", "bob")
    shell.ok("plotto challenge alice bob -tournament")
    rng = random.Random(11)
    while (mover := shell.mover("plotto")) is not None:
        _, texts = mover_and_moves(shell, "plotto", 101)
        shell.ok(f"plotto move 101 {mover} pw-{mover} {rng.choice(texts)}")
    mail = shell.ok("plotto show 101").body
    assert "Legend: a number is a piece. Figures" in mail and "a letter marks" not in mail
    client = TestClient(create_app(settings, lambda: clock.now))
    html = client.get("/boards/plotto/101").text
    assert "Game over:" in html and 'class="open"' not in html
    assert "a letter marks" not in html and "A number is a piece. Figures" in html
    assert "a letter marks" in client.get("/boards/plotto/101?ply=1").text


def test_a_removed_board_says_so_where_its_start_mail_leads(shell, settings, clock):
    """A board removed when a player declined it answered 'there is no Ploy board 101' in the
    shell and by mail, and 'no Ploy board 101' at the link of its start mail, while the game
    lists showed it as removed: its players were left to think the number wrong."""
    shell.signup("alice", "bob")
    shell.ok("ploy challenge alice bob")
    shell.ok("ploy resign 101 bob pw-bob")  # in the first round: declined, removed
    shown = shell("ploy show 101")
    assert shown.status == 1 and "Ploy board 101 was removed: a player declined" in " ".join(
        shown.body.split()
    )
    client = TestClient(create_app(settings, lambda: clock.now))
    page = client.get("/boards/ploy/101")
    assert page.status_code == 404 and "Ploy board 101 was removed" in page.text
    assert "there is no Ploy board 102" in shell("ploy show 102").body


def test_an_empty_standings_row_spans_its_columns(site, shell):
    """'Nobody has joined yet.' spans the table's columns: a knockout's spanned six of five
    (the Seed column, now in every format, was counted twice), an extra empty column."""
    numbers, client = site
    for name, fmt in (("ko", "knockout"), ("sw", "swiss --rounds 2"), ("rr", "roundrobin")):
        shell.ok(f"tournament create {name} --game ploy --format {fmt}")
        page = client.get(f"/tournaments/{name}").text
        head, _ = _standings(page)
        table = _between(page, '<table class="list standings">', "</table>")
        assert f'<td colspan="{len(head)}">Nobody has joined yet.</td>' in table, name


def test_an_account_awaiting_confirmation_has_no_page(site, shell):
    """A signup mailed under any userid (a forged From) showed a player page at once, as if
    that player had joined: until an address is confirmed the account is nobody's."""
    numbers, client = site
    shell.ok("signup frank pw-frank", channel="mail", sender="frank@example.net")
    pending = client.get("/players/frank")
    assert pending.status_code == 404
    assert pending.text.replace("frank", "nobody") == client.get("/players/nobody").text
    shell.ok("signup grace pw-grace grace@example.net")  # the shell's addresses are confirmed
    assert client.get("/players/grace").status_code == 200


def test_a_404_says_what_is_missing_in_a_sentence_and_where_to_look(site):
    """A mistyped address answered 'Not found' over 'Not Found' (or 'no player ...'), with
    nothing to go on: each 404 now says in a sentence what is not there, and links to the
    lists where it would be."""
    numbers, client = site
    expected = {
        "/nothing": "There is no page at this address.",
        "/static/nothing.css": "There is no page at this address.",
        "/players/nobody": "There is no player &#39;nobody&#39;.",
        "/boards/ploy/999": "There is no Ploy board 999.",
        "/boards/chess/101": "There is no game &#39;chess&#39; here.",
        "/tournaments/nope": "There is no tournament &#39;nope&#39;.",
        f"/boards/ploy/{numbers['ploy']}?ply=99": (
            f"Ploy board {numbers['ploy']} has no move 99: it has 6 moves."
        ),
    }
    for path, sentence in expected.items():
        response = client.get(path)
        assert response.status_code == 404, path
        assert f"<p>{sentence}</p>" in response.text, (path, response.text)
        assert "<title>Not found - " in response.text
        assert '<a href="/games">Games</a>, the tournaments under' in response.text


def test_each_page_title_says_what_the_page_is(site):
    """A player's page was titled 'alice - pbmserv' and headed 'alice', a tournament's
    'spring - pbmserv', and every position of a board had the board's title: a list of tabs
    or of bookmarks could not tell them apart."""
    numbers, client = site

    def title(path: str) -> str:
        return _between(client.get(path).text, "<title>", "</title>")

    assert title("/players/alice") == "Player alice - pbmserv"
    assert "<h1>Player alice</h1>" in client.get("/players/alice").text
    assert title("/tournaments/spring") == "Tournament spring - pbmserv"
    board = f"/boards/ploy/{numbers['ploy']}"
    assert title(board) == f"Ploy Board {numbers['ploy']} - pbmserv"
    assert title(f"{board}?ply=6") == f"Ploy Board {numbers['ploy']} - pbmserv"  # the newest
    assert title(f"{board}?ply=2") == f"Ploy Board {numbers['ploy']}, after move 2 - pbmserv"


def test_a_three_player_plotto_page_says_what_its_grey_pieces_are(shell, settings, clock):
    """With three players the 4s belong to nobody and are drawn grey, as the 3s and 4s of a
    two-player game are, but only the two-player legend said what grey means."""
    shell.signup("alice", "bob", "carol")
    shell.ok("plotto challenge alice bob carol")
    client = TestClient(create_app(settings, lambda: clock.now))
    for move in ("a4", "a1", "a2"):
        shell.ok(f"plotto move 101 {shell.mover('plotto')} pw-{shell.mover('plotto')} {move}")
    html = client.get("/boards/plotto/101").text
    assert 'class="piece num-4 neutral"' in html
    assert '<li><span class="swatch neutral"></span> Number 4 is neutral.</li>' in html


def test_before_a_swap_the_players_hold_the_seats_they_held_then(shell, settings, clock):
    """The players' table of a position before a swap showed the seats as they are now:
    after alice's first o and before bob swapped, it said 'o: bob (1 marble)' and 'x: alice
    to move', while alice had placed that o and bob was to move."""
    shell.signup("alice", "bob")
    shell.ok("pylon challenge alice bob")
    for line in ("alice pw-alice e5", "bob pw-bob swap", "alice pw-alice e1"):
        shell.ok(f"pylon move 101 {line}")
    client = TestClient(create_app(settings, lambda: clock.now))

    def rows(ply: int) -> list[str]:
        html = client.get(f"/boards/pylon/101?ply={ply}").text
        table = _between(html, '<table class="players">', "</table>")
        return [re.sub(r"<[^>]+>", "|", row) for row in re.findall(r"<tr class.*?</tr>", table)]

    for ply in (0, 1):  # alice holds o, bob x
        assert "|alice|" in rows(ply)[0] and "|bob|" in rows(ply)[1], (ply, rows(ply))
    assert "to move" in rows(1)[1] and "1 marble" in rows(1)[0]
    for ply in (2, 3):  # bob took over o, alice holds x
        assert "|bob|" in rows(ply)[0] and "|alice|" in rows(ply)[1], (ply, rows(ply))
    assert "to move" in rows(2)[1] and "to move" in rows(3)[0]


def test_the_dates_of_the_lists_say_their_time_zone(site):
    """A board page writes its times '2026-11-01 12:00 UTC', but the lists gave the day of
    the last move with no zone: in America the evening's move showed under tomorrow."""
    numbers, client = site
    for path in ("/", "/games", "/games/ploy", "/players/alice"):
        html = client.get(path).text
        assert "<th>Last move (UTC)</th>" in html, path
        assert 'data-label="Last move (UTC)">2026-11-01</td>' in html, path


def test_a_finished_board_says_who_resigned_by_name(shell, settings, clock):
    """The page's status read "Game won by bob. (blue resigned)": the engine's seat colour,
    where the board mail's notes name the player."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice a7-a6")
    shell.ok("polis move 101 bob pw-bob b2-b3")
    shell.ok("polis resign 101 alice pw-alice")
    client = TestClient(create_app(settings, lambda: clock.now))
    html = client.get("/boards/polis/101").text
    assert "Game won by bob. (alice resigned)" in html
    assert "blue resigned" not in html  # (the drawing's legend too)


def test_a_board_page_tells_of_an_open_proposal(shell, settings, clock):
    """Players voting on a draw or an undo read it in every mail, but the board's page said
    nothing of it: it now says what is proposed and who has still to answer, on the page of
    the position now (an earlier position's page is of then)."""
    shell.signup("alice", "bob")
    shell.ok("ploy challenge alice bob")
    shell.ok("ploy move 101 alice pw-alice f1+4")
    shell.ok("ploy move 101 bob pw-bob propose")
    client = TestClient(create_app(settings, lambda: clock.now))
    said = " ".join(client.get("/boards/ploy/101").text.split())
    assert "Proposal #1 is open: a draw. Accepted: bob. Still to answer: alice." in said
    assert "Proposal #1" not in client.get("/boards/ploy/101?ply=0").text
    shell.ok("ploy move 101 alice pw-alice reject#1")
    assert "Proposal #1" not in client.get("/boards/ploy/101").text

"""The board pages in a real browser: Debian's Chromium driven by Playwright (no JavaScript of
ours runs; the browser draws the inline SVG and applies the style sheet).

Screenshots are kept in the test's tmp dir and copied to tests/artifacts/ (ignored by git).
Without /usr/bin/chromium (or PBMSERV_CHROMIUM) or the playwright package the test is skipped
with the reason; `.ci/run` installs Chromium with apt.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from browser import launch
from sqlalchemy import select
from web_site import PLAYERS, build, more_tournaments, mover_and_moves, play

from pbmserv.domain import boards
from pbmserv.store.models import Board
from pbmserv.web.serve import WebServer

CHROMIUM = os.environ.get("PBMSERV_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).parent / "artifacts"

# what each drawing must show after the site's six moves, read from the engines
EXPECTED_LABELS = {
    "ploy": ["a", "i", "1", "9"],
    "pylon": ["a", "k", "1", "11"],
    "plotto": ["1"],
    "polis": ["a", "h", "1", "8"],
}

pytestmark = pytest.mark.slow  # a real browser: run first (tests/conftest.py)


def _browser_or_skip():  # type: ignore[no-untyped-def]
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(
            f"Chromium not found at {CHROMIUM}: install it with `apt-get install -y chromium` "
            "(or set PBMSERV_CHROMIUM) to run the browser test"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is missing: pip install -e '.[test]'")
    return sync_playwright


def _pieces(sessions, numbers: dict[str, int]) -> dict[str, int]:
    """Pieces (marbles) on each board, counted from the engines' positions."""
    counts = {}
    with sessions() as s:
        for game, number in numbers.items():
            board = s.scalar(select(Board).where(Board.game == game, Board.number == number))
            position = boards.replay(board)
            if game == "pylon":
                counts[game] = sum(1 for owner in position.board if owner != -1)
            elif game == "plotto":
                counts[game] = len(position.board)
            else:
                counts[game] = sum(1 for piece in position.board if piece)
    return counts


TITLES = {  # a tooltip each drawing must carry (the pieces' <title>)
    "ploy": "green commander on e1",
    "pylon": "marble on",
    "plotto": "piece ",
    "polis": "blue chariot on a8",
}


def test_board_pages_in_chromium(shell, settings, clock, sessions, tmp_path):
    sync_playwright = _browser_or_skip()
    numbers = build(shell)
    expected = _pieces(sessions, numbers)
    ARTIFACTS.mkdir(exist_ok=True)
    _serve_and_browse(
        settings,
        clock,
        lambda browser, base: _check_pages(browser, base, numbers, expected, tmp_path),
        sync_playwright,
    )


def _serve_and_browse(  # type: ignore[no-untyped-def]
    settings, clock, check, sync_playwright=None
) -> None:
    """Serve the pages on 127.0.0.1 (uvicorn, a free port) and hand ``check`` Chromium and
    the base URL."""
    sync_playwright = sync_playwright or _browser_or_skip()
    served = WebServer(settings, lambda: clock.now)
    served.start()
    try:
        with sync_playwright() as pw:
            browser = launch(pw, CHROMIUM)
            try:
                check(browser, f"http://127.0.0.1:{served.port}")
            finally:
                browser.close()
    finally:
        served.stop()


def _too_wide(page, base: str, paths: list[str]) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """The paths whose document is wider than the window, with their width."""
    width = page.viewport_size["width"]
    wide = {}
    for path in paths:
        response = page.goto(base + path)
        assert response is not None and response.status == 200, path
        scroll = page.evaluate("document.documentElement.scrollWidth")
        if scroll > width:
            wide[path] = scroll
    return wide


LONG_URL = "https://example.org/" + "a" * 280  # 300 characters, no space to break at


def test_a_long_comment_does_not_widen_the_board_page(shell, settings, clock):
    """A comment without spaces (a long URL) made the board page 2,372 px wide at any size."""
    shell.signup("alice", "bob")
    shell.ok("ploy challenge alice bob")
    mover, moves = mover_and_moves(shell, "ploy", 101)
    shell.ok(f"ploy move 101 {mover} pw-{mover} {moves[0]}", comment=LONG_URL)

    def check(browser, base: str) -> None:  # type: ignore[no-untyped-def]
        for width in (1280, 390):
            page = browser.new_page(
                viewport={"width": width, "height": 800}, java_script_enabled=False
            )
            assert _too_wide(page, base, ["/boards/ploy/101"]) == {}, width
            assert LONG_URL in page.locator(".comment pre").inner_text().replace("\n", "")
            page.close()

    _serve_and_browse(settings, clock, check)


def test_every_kind_of_page_fits_a_phone(shell, settings, clock):
    """At 390 px no page may be wider than the window (the header bar stopped at 390 while
    the tables ran past it): wide tables scroll inside their own box."""
    numbers = build(shell)
    more_tournaments(shell)
    paths = ["/", "/games", "/games/ploy", "/tournaments"]
    paths += [f"/boards/{game}/{number}" for game, number in numbers.items()]
    paths += [f"/boards/{game}/{number}?ply=1" for game, number in numbers.items()]
    paths += [f"/players/{userid}" for userid in PLAYERS]
    paths += ["/tournaments/spring", "/tournaments/summer", "/tournaments/cup"]
    paths += ["/tournaments/early"]

    def check(browser, base: str) -> None:  # type: ignore[no-untyped-def]
        page = browser.new_page(viewport={"width": 390, "height": 844}, java_script_enabled=False)
        assert _too_wide(page, base, paths) == {}
        page.screenshot(path=str(ARTIFACTS / "web-phone-tournament.png"))

    ARTIFACTS.mkdir(exist_ok=True)
    _serve_and_browse(settings, clock, check)


def _check_pages(browser, base, numbers, expected, tmp_path):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": 1280, "height": 1000}, java_script_enabled=False)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    for game, number in numbers.items():
        response = page.goto(f"{base}/boards/{game}/{number}")
        assert response is not None and response.status == 200
        svg = page.locator("svg.board-drawing")
        assert svg.count() == 1
        box = svg.bounding_box()
        assert box is not None and box["width"] > 200 and box["height"] > 150
        kind = "marble" if game == "pylon" else "piece"
        assert page.locator(f"svg g.{kind}").count() == expected[game], game
        labels = page.locator("svg text.coord").all_text_contents()
        for label in EXPECTED_LABELS[game]:
            assert label in labels, (game, label)
        titles = " | ".join(page.locator("svg g title").all_text_contents())
        assert TITLES[game] in titles, (game, titles[:200])
        # the style sheet was applied (a CSP or path mistake would leave the drawing black)
        background = page.locator("svg .board, svg .square, svg .hex").first
        fill = background.evaluate("e => getComputedStyle(e).fill")
        assert fill not in ("rgb(0, 0, 0)", "", "none"), fill
        assert "Legend" in page.locator("main").inner_text()
        shot = tmp_path / f"board-{game}.png"
        page.screenshot(path=str(shot))
        shutil.copy(shot, ARTIFACTS / shot.name)
        assert shot.stat().st_size > 10_000
    # the README's picture (docs/web-board.png is a copy): a Ploy board page, top part
    page.set_viewport_size({"width": 1200, "height": 760})
    page.goto(f"{base}/boards/ploy/{numbers['ploy']}")
    page.screenshot(path=str(ARTIFACTS / "web-board.png"))
    # any position without JavaScript: the range input's GET form, then a "next" link
    page.goto(f"{base}/boards/ploy/{numbers['ploy']}")
    page.locator("form.slider input[type=range]").fill("0")
    page.locator("form.slider button").click()
    assert page.url.endswith("?ply=0")
    assert "Position after move 0" in page.locator("p.status").inner_text()
    assert page.locator("svg g.piece").count() == 30  # the two-player set-up: 15 a side
    page.get_by_role("link", name="Move 1").first.click()
    assert page.url.endswith("?ply=1")
    assert not errors, errors


LONG_USERID = "averyveryverylonguseridofthirty2"  # 32 characters, as long as a userid may be


def test_no_list_scrolls_sideways_on_a_phone(shell, settings, clock):
    """At 375 px the lists of boards, ratings and standings ran past the right edge inside
    their boxes: the status of each board (whose turn, who won) and a knockout's status were
    only seen by scrolling sideways.  Each row is now a block of named cells that fits."""
    build(shell)
    more_tournaments(shell)
    shell.signup(LONG_USERID)
    shell.ok(f"ploy challenge alice {LONG_USERID}")
    paths = ["/", "/games", "/games/ploy", "/players/alice", f"/players/{LONG_USERID}"]
    paths += ["/tournaments/spring", "/tournaments/summer", "/tournaments/cup"]

    def check(browser, base: str) -> None:  # type: ignore[no-untyped-def]
        page = browser.new_page(viewport={"width": 375, "height": 800}, java_script_enabled=False)
        for path in paths:
            response = page.goto(base + path)
            assert response is not None and response.status == 200, path
            wide = page.evaluate(
                "() => [...document.querySelectorAll('table.list')]"
                ".map(t => t.closest('.wide'))"
                ".filter(box => box.scrollWidth > box.clientWidth)"
                ".map(box => box.querySelector('caption').innerText)"
            )
            assert wide == [], (path, wide)
            assert page.evaluate("document.documentElement.scrollWidth") <= 375, path
        page.goto(base + "/")  # the status of the first board is in the window
        status = page.locator("table.list tbody tr").first.locator("td").last
        assert status.inner_text() == "alice to move"
        box = status.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 375
        page.screenshot(path=str(ARTIFACTS / "web-phone-lists.png"))
        page.close()

    ARTIFACTS.mkdir(exist_ok=True)
    _serve_and_browse(settings, clock, check)


def _luminance(rgb: str) -> float:
    """The relative luminance (WCAG 2) of a computed colour, ``rgb(r, g, b)``."""
    channels = [int(c) / 255 for c in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(one: str, other: str) -> float:
    light, dark = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_text_can_be_read_against_what_is_behind_it(shell, settings, clock):
    """The names of players out of a game (#888 on the page, 3.4:1) and the white letters of
    Ploy's green pieces (3.4:1) were below the 4.5:1 that small text needs (WCAG AA)."""
    numbers = build(shell)
    mover, _ = mover_and_moves(shell, "ploy", numbers["ploy"])
    shell.ok(f"ploy resign {numbers['ploy']} {mover} pw-{mover}")

    def check(browser, base: str) -> None:  # type: ignore[no-untyped-def]
        page = browser.new_page(viewport={"width": 1280, "height": 900}, java_script_enabled=False)
        page.goto(f"{base}/boards/ploy/{numbers['ploy']}")
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        out = page.locator("tr.out td").first.evaluate("e => getComputedStyle(e).color")
        assert _contrast(out, background) >= 4.5, (out, background)
        for army in ("green", "red"):
            piece = page.locator(f"svg .army-{army}").first
            letter = piece.locator(".kind").evaluate("e => getComputedStyle(e).fill")
            disc = piece.locator(".disc").evaluate("e => getComputedStyle(e).fill")
            assert _contrast(letter, disc) >= 4.5, (army, letter, disc)
        page.close()

    _serve_and_browse(settings, clock, check)


def test_a_board_of_long_userids_fits_a_phone(shell, settings, clock):
    """Four players, two of them with 32-letter userids, and a time limit: the board page was
    528 px wide at 375 (the clock's 'Time used by ...' rows and the players' table kept the
    userids whole), so the whole page scrolled sideways."""
    other = "anotherveryverylonguseridof32chr"
    shell.signup(LONG_USERID, other, "carol", "dave")
    shell.ok(f"pylon challenge {LONG_USERID} {other} carol dave --totaltime=20")

    def check(browser, base: str) -> None:  # type: ignore[no-untyped-def]
        page = browser.new_page(viewport={"width": 375, "height": 800}, java_script_enabled=False)
        response = page.goto(f"{base}/boards/pylon/101")
        assert response is not None and response.status == 200
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        wide = page.evaluate(
            "() => [...document.querySelectorAll('.wide')]"
            ".filter(box => box.scrollWidth > box.clientWidth).map(box => box.innerText)"
        )
        assert wide == []
        for dd in page.locator("dl.clock dd").all():  # the dates and days wrap at spaces only
            assert len(dd.inner_text().split("\n")) <= 2, dd.inner_text()
        page.screenshot(path=str(ARTIFACTS / "web-phone-long-userids.png"), full_page=True)
        page.close()

    ARTIFACTS.mkdir(exist_ok=True)
    _serve_and_browse(settings, clock, check)


def test_a_four_player_move_table_fits_a_phone(shell, settings, clock):
    """A four-player Ploy's move table, a column for each player, was squeezed into 375 px:
    its header and its moves broke mid-word ('alice (gree / n)', 'i8- / 1'), or it ran past
    the right edge when a cell could not wrap.  Each row is now a block of named cells: every
    move on one line, in the window, underlined."""
    shell.signup("alice", "bob", "carol", LONG_USERID)
    shell.ok(f"ploy challenge alice bob carol {LONG_USERID}")
    assert len(play(shell, "ploy", 101, 60)) > 40  # moves numbered 10 and on: wider cells

    def check(browser, base: str) -> None:  # type: ignore[no-untyped-def]
        page = browser.new_page(viewport={"width": 375, "height": 800}, java_script_enabled=False)
        response = page.goto(f"{base}/boards/ploy/101?ply=3")
        assert response is not None and response.status == 200
        box = page.locator("table.moves").locator("xpath=..")
        assert box.evaluate("b => b.scrollWidth <= b.clientWidth"), box.evaluate(
            "b => [b.scrollWidth, b.clientWidth]"
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        broken = page.evaluate(
            "() => [...document.querySelectorAll('table.moves td a, table.moves td strong')]"
            ".filter(a => a.getClientRects().length > 1).map(a => a.innerText)"
        )
        assert broken == [], broken
        last = page.locator("table.moves td a").last  # a move link: in the window, underlined
        found = last.bounding_box()
        assert found is not None and found["x"] + found["width"] <= 375
        assert "underline" in last.evaluate("a => getComputedStyle(a).textDecorationLine")
        page.screenshot(path=str(ARTIFACTS / "web-phone-ploy-four.png"), full_page=True)
        page.close()

    ARTIFACTS.mkdir(exist_ok=True)
    _serve_and_browse(settings, clock, check)

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
from browser import browser_env
from sqlalchemy import select
from web_site import build

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
    served = WebServer(settings, lambda: clock.now)  # uvicorn on 127.0.0.1, a free port
    served.start()
    base = f"http://127.0.0.1:{served.port}"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM,
                args=["--no-sandbox", "--disable-dev-shm-usage"],
                env=browser_env(),
            )
            try:
                _check_pages(browser, base, numbers, expected, tmp_path)
            finally:
                browser.close()
    finally:
        served.stop()


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

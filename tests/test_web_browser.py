"""The board pages in a real browser: Debian's Chromium driven by Playwright (no JavaScript of
ours runs; the browser draws the inline SVG and applies the style sheet).

Screenshots are kept in the test's tmp dir and copied to tests/artifacts/ (ignored by git).
Without /usr/bin/chromium (or PBMSERV_CHROMIUM) or the playwright package the test is skipped
with the reason; `.ci/run` installs Chromium with apt.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest
import uvicorn
from web_site import build

from pbmserv.web.app import create_app

CHROMIUM = os.environ.get("PBMSERV_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).parent / "artifacts"

# what each drawing must show after the site's six moves, read from the engines
EXPECTED_LABELS = {
    "ploy": ["a", "i", "1", "9"],
    "pylon": ["a", "k", "1", "11"],
    "plotto": ["1"],
    "polis": ["a", "h", "1", "8"],
}


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


class Served:
    """The web application under uvicorn on 127.0.0.1 and a free port, in a thread."""

    def __init__(self, app) -> None:  # type: ignore[no-untyped-def]
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        for _ in range(500):
            if self.server.started:
                break
            threading.Event().wait(0.01)
        assert self.server.started
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def test_board_pages_in_chromium(shell, settings, clock, sessions, tmp_path):
    sync_playwright = _browser_or_skip()
    numbers = build(shell)
    from sqlalchemy import select

    from pbmserv import boards
    from pbmserv.store.models import Board

    expected = {}
    with sessions() as s:
        for game, number in numbers.items():
            board = s.scalar(select(Board).where(Board.game == game, Board.number == number))
            position = boards.replay(board)
            if game == "ploy" or game == "polis":
                expected[game] = sum(1 for p in position.board if p)
            elif game == "pylon":
                expected[game] = sum(1 for p in position.board if p != -1)
            else:
                expected[game] = len(position.board)
    ARTIFACTS.mkdir(exist_ok=True)
    with Served(create_app(settings, lambda: clock.now)) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        try:
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
                # the style sheet was applied (a CSP or path mistake would leave it unstyled)
                background = page.locator("svg .board, svg .square, svg .hex").first
                fill = background.evaluate("e => getComputedStyle(e).fill")
                assert fill not in ("rgb(0, 0, 0)", "", "none"), fill
                assert "Legend" in page.locator("main").inner_text()
                shot = tmp_path / f"board-{game}.png"
                page.screenshot(path=str(shot), full_page=False)
                shutil.copy(shot, ARTIFACTS / shot.name)
                assert shot.stat().st_size > 10_000
            # the slider works without JavaScript: a GET form submitted by its button
            page.goto(f"{base}/boards/ploy/{numbers['ploy']}")
            page.locator("form.slider input[type=range]").fill("2")
            page.locator("form.slider button").click()
            assert page.url.endswith("?ply=2")
            assert "Position after move 2" in page.locator("p.status").inner_text()
            page.get_by_role("link", name="Move 3").first.click()
            assert page.url.endswith("?ply=3")
            assert not errors, errors
        finally:
            browser.close()

"""The HTML part of a board mail as a phone mail app shows it: Debian's Chromium (Playwright) at
a phone's viewport.  The board must keep its columns (a monospaced font), fit the screen
without scrolling, and read exactly as the plain text.  The screenshot is kept in
tests/artifacts/mail-phone.png (ignored by git) for a person to look at."""

from __future__ import annotations

import shutil

import pytest
from browser import launch
from test_web_browser import ARTIFACTS, CHROMIUM, _browser_or_skip

from pbmserv.mail.compose import OutgoingMail, build_message

PHONE = {"width": 390, "height": 844}  # CSS pixels of a common phone

MEASURE = """([lines]) => {
  const pre = document.querySelector('pre');
  const style = getComputedStyle(pre);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = style.fontSize + ' ' + style.fontFamily;
  return {
    family: style.fontFamily,
    narrow: ctx.measureText('iiiiiiiiii').width,
    wide: ctx.measureText('MMMMMMMMMM').width,
    widest: Math.max(...lines.map(l => ctx.measureText(l).width)),
    room: document.documentElement.clientWidth - 16,
    text: pre.textContent,
  };
}"""

pytestmark = pytest.mark.slow  # a real browser: run first (tests/conftest.py)


def test_board_mail_html_on_a_phone(shell, tmp_path):
    sync_playwright = _browser_or_skip()
    shell.signup("carol", "dave", "player16", "spammer")
    mail = shell.ok("ploy challenge carol dave player16 spammer")
    msg = build_message(
        OutgoingMail("carol@example.org", mail.subject, mail.body),
        from_addr="pbmserv@example.org",
        server_id="test",
        domain="example.org",
    )
    html = msg.get_body(preferencelist=("html",)).get_content()
    lines = mail.body.splitlines()
    edges = [i for i, line in enumerate(lines) if line.split() == list("abcdefghi")]
    board_lines = lines[edges[0] : edges[1] + 1]  # the drawing, coordinates to coordinates
    assert len(board_lines) > 20
    with sync_playwright() as pw:
        browser = launch(pw, CHROMIUM)
        try:
            page = browser.new_page(viewport=PHONE, device_scale_factor=2, is_mobile=True)
            page.set_content(html)
            got = page.evaluate(MEASURE, [board_lines])
            shot = tmp_path / "mail-phone.png"
            page.screenshot(path=str(shot))
        finally:
            browser.close()
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(shot, ARTIFACTS / shot.name)
    assert "monospace" in got["family"]
    assert abs(got["narrow"] - got["wide"]) < 0.5, got  # a monospaced font was found
    assert got["widest"] <= got["room"], got  # the board fits a phone screen, no scrolling
    assert got["text"] == mail.body.rstrip("\n")  # escaped, unchanged, nothing lost
    assert shot.stat().st_size > 20_000

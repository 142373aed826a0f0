"""The live demo as its audience sees it: `agentx-tui --web` opened in a real browser (Debian's chromium,
driven by Playwright's Python package pointed at it; nothing downloads a browser of its own).

The page's terminal is xterm.js drawing on a canvas: its DOM holds no text. So what the run did is
read from the run itself (its `--record` file), and the picture is judged only as a picture: drawn (not
blank), in colour (NO_COLOR is set for the server and ignored by the page). The panes' titles at the
page's sizes are checked through Textual in tests/web/test_page_layout.py.

A screenshot is kept as a test artefact (in $AGENTX_TEST_ARTIFACTS, else the test's tmp dir):
docs/images/web-demo.png is one of them.
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.procs import wait_gone
from tests.web._run import figure_grows, generated, users, web_run

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
VIEWPORT = {"width": 1600, "height": 1000}  # a projector's 16:10: every pane on one screen
SMALL_VIEWPORT = {"width": 1280, "height": 720}  # Playwright's default page: the compact layout
TITLE = "agentx-tui · simulated h200/llama-3.1-8b · coding-agent"

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the `test` extra)")
if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(
        "chromium is not installed (scripts/setup-chromium.sh installs Debian's package)", allow_module_level=True
    )


def _chromium_args() -> list[str]:
    # This machine's network is closed: without the background-networking flags chromium's own
    # connections are refused, and as root it will not start without --no-sandbox.
    args = [
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    return [*args, "--no-sandbox"] if os.geteuid() == 0 else args


def _artefacts(tmp_path: Path) -> Path:
    where = Path(os.environ.get("AGENTX_TEST_ARTIFACTS") or tmp_path / "artefacts")
    where.mkdir(parents=True, exist_ok=True)
    return where


# Counts, in a blank page of the same browser, the screenshot's distinct colours and the share of
# pixels that are lit (away from the page's dark background) and of those that are saturated (colour,
# not grey): a picture judged as a picture.
_MEASURE = """async (data) => {
  const img = new Image();
  img.src = "data:image/png;base64," + data;
  await img.decode();
  const canvas = document.createElement("canvas");
  canvas.width = img.width; canvas.height = img.height;
  const ctx = canvas.getContext("2d");
  ctx.drawImage(img, 0, 0);
  const px = ctx.getImageData(0, 0, img.width, img.height).data;
  const colours = new Set();
  let lit = 0, saturated = 0;
  for (let i = 0; i < px.length; i += 4) {
    const r = px[i], g = px[i + 1], b = px[i + 2];
    colours.add((r >> 3) << 10 | (g >> 3) << 5 | (b >> 3));
    if (r + g + b > 180) lit++;
    if (Math.max(r, g, b) - Math.min(r, g, b) > 90) saturated++;
  }
  const n = px.length / 4;
  return {colours: colours.size, lit: lit / n, saturated: saturated / n};
}"""


def _measure(browser: Any, png: bytes) -> dict[str, float]:
    blank = browser.new_page()
    try:
        result: dict[str, float] = blank.evaluate(_MEASURE, base64.b64encode(png).decode())
        return result
    finally:
        blank.close()


def _drawn(measure: dict[str, float]) -> bool:
    return measure["colours"] > 40 and measure["lit"] > 0.02


def test_the_dashboard_in_chromium_draws_live_takes_a_key_and_leaves_nothing_behind(tmp_path: Path) -> None:
    artefacts = _artefacts(tmp_path)
    started = time.monotonic()
    with web_run(tmp_path, env={"NO_COLOR": "1"}) as run, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=_chromium_args())
        try:
            page = browser.new_page(viewport=VIEWPORT)
            sizes: list[str] = []
            page.on("websocket", lambda ws: sizes.append(ws.url.split("?", 1)[-1]))
            page.goto(run.url)
            assert page.title() == TITLE

            # The dashboard draws: the run ticks and its live figure grows, and the picture is drawn.
            snaps = run.wait_snapshots(figure_grows, "a live figure that grows", timeout_s=40)
            assert generated(snaps[-1]) > generated(snaps[0])
            deadline = time.monotonic() + 15
            while not _drawn(measure := _measure(browser, page.screenshot())):
                assert time.monotonic() < deadline, f"the page never drew the dashboard: {measure}"
                time.sleep(0.3)
            assert measure["saturated"] > 0.003, f"the page is not in colour (NO_COLOR must not reach it): {measure}"

            # A key pressed in the page changes the run: `+` adds a user. (After some history: the
            # screenshot kept is the README's, and a few seconds of charts look like nothing yet.)
            snaps = run.wait_snapshots(lambda s: len(s) >= 20, "10 s of run", timeout_s=30)
            assert users(snaps) == 2
            page.click("#terminal")  # the terminal takes keys once focused, as it does for a person
            page.keyboard.press("+")
            run.wait_snapshots(lambda s: users(s) == 3, "users 2 → 3 after `+`", timeout_s=15)
            time.sleep(1.5)  # the header shows it on the next redraw
            png = page.screenshot(path=str(artefacts / "web-demo.png"))
            assert _drawn(_measure(browser, png))

            # Resizing the page redraws the dashboard at the new size (the compact layout).
            page.set_viewport_size(SMALL_VIEWPORT)
            time.sleep(1.5)
            small = page.screenshot(path=str(artefacts / "web-demo-1280x720.png"))
            assert _drawn(_measure(browser, small))
            assert sizes and sizes[0].startswith("width=")

            # Closing the tab stops everything the page started; the server stays up.
            tree = run.tree()
            assert len(tree) >= 2, tree  # the page's run and its simulated server
            page.close()
            assert wait_gone(tree, 30) == set(), "processes the page started outlived it"
            assert run.proc.poll() is None
        finally:
            browser.close()

        run.proc.send_signal(signal.SIGTERM)
        assert run.proc.wait(timeout=30) == 143
        assert wait_gone(run.seen, 10) == set()
        output = run.proc.communicate()[0]
        assert "Traceback" not in output
    print(f"page size {sizes[0]}; screenshots in {artefacts}; {time.monotonic() - started:.1f} s")

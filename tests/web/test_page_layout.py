"""The dashboard at the sizes a page gives it (what textual-serve passes from the browser's window at the
page's default font): every pane's title on screen, and the header saying what runs. The browser test
cannot read this from the page (its terminal is a canvas); Textual can."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from agentx_tui.ui import AgentXApp
from agentx_tui.ui.header import RunHeader
from tests.ui._helpers import shown
from tests.ui.fakes import FakeLiveControls, FakeSource, make_snapshot


@pytest.fixture(autouse=True)
def clean_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As tests/ui/conftest.py: no user themes and colour allowed, whatever the developer's shell has.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("NO_COLOR", raising=False)


TITLES = ("GPU", "KV cache", "Prefix cache", "Throughput", "Cost", "Log", "Users")


def _screen_text(app: AgentXApp) -> str:
    svg = app.export_screenshot()
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")


@pytest.mark.parametrize(
    "size",
    [
        (142, 34),  # a 1280×720 page (Playwright's default)
        (177, 47),  # 1600×1000
        (213, 51),  # 1920×1080, a projector
    ],
)
async def test_every_pane_and_what_runs_is_on_the_page(size: tuple[int, int]) -> None:
    snaps = [make_snapshot(seq) for seq in range(1, 4)]
    app = AgentXApp(FakeSource(snaps), FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=size) as pilot:
        await shown(pilot, 3)
        text = _screen_text(app)
        for title in TITLES:
            assert re.search(rf"[¹²³⁴⁵⁶⁷] {title}", text), (title, size)
        header = str(app.query_one(RunHeader).render())
        run = snaps[-1].run
        for item in ("● running", run.target, run.workload):
            assert item in header, (item, size)

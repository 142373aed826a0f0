"""At 80×24, the smallest terminal the dashboard runs in: every pane is one key away and shows whole, and
the help (`?`) fits whole, whatever the run shows (a sweep, a fleet, tasks, a replay); and at 120×40."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.containers import VerticalScroll
from textual.pilot import Pilot

from agentx_tui.snapshot import Snapshot
from agentx_tui.ui import AgentXApp
from agentx_tui.ui.app import HELP_TEXT_WIDTH
from agentx_tui.ui.panes import PANES
from agentx_tui.ui.screens import HelpScreen
from tests.ui._helpers import pane, shown
from tests.ui.fakes import (
    FakeLiveControls,
    FakeReplayControls,
    FakeSource,
    make_fleet_snapshot,
    make_snapshot,
    make_sweep_snapshot,
    make_task_figures,
)

SnapCompare = Callable[..., bool]
LAST = 20


def everything(seq: int) -> Snapshot:
    """A tick that shows every pane there is: a sweep of a 64-replica fleet whose agents complete tasks."""
    sweep = make_sweep_snapshot(seq)
    snap = make_fleet_snapshot(seq).model_copy(update={"sweep": sweep.sweep, "client": sweep.client})
    return snap.model_copy(update={"tasks": make_task_figures(42)})


def app_of(kind: str) -> AgentXApp:
    tick = everything if kind in ("everything", "replay") else make_snapshot
    controls = FakeReplayControls() if kind == "replay" else FakeLiveControls()
    return AgentXApp(FakeSource([tick(seq) for seq in range(1, LAST + 1)]), controls, refresh_s=0.25)


@pytest.mark.parametrize("key", sorted(p.KEY for p in PANES))
async def test_every_digit_key_maximises_its_pane_whole_at_80x24(key: int) -> None:
    app = app_of("everything")
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, LAST)
        await pilot.press(str(key))
        await pilot.pause()
        maximised = pane(app, key)
        assert app.screen.maximized is maximised, f"key {key} did not maximise {maximised.TITLE}"
        region = maximised.region
        assert (region.x, region.y, region.right) == (0, 0, 80) and region.bottom <= 23  # the footer stays
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.maximized is None


@pytest.mark.parametrize("kind", ["plain", "everything", "replay"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_help_fits_whole(kind: str, size: tuple[int, int]) -> None:
    app = app_of(kind)
    async with app.run_test(size=size) as pilot:
        await shown(pilot, LAST)
        rows = app.key_help()
        assert all(len(text) <= HELP_TEXT_WIDTH for _, text in rows), [t for _, t in rows if len(t) > HELP_TEXT_WIDTH]
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        body = app.screen.query_one("#help-body", VerticalScroll)
        # Nothing to scroll to, nothing cut at either edge: every row is on screen, whole.
        assert body.max_scroll_y == 0 and body.max_scroll_x == 0
        assert body.region.bottom <= size[1] and body.region.right <= size[0]
        text = app.screen.query_one("#help-text").render().plain.split("\n")
        assert len(text) == len(rows) and all(len(row) <= body.content_region.width for row in text)


def test_the_help_names_every_pane_in_key_order() -> None:
    rows = " ".join(text for keys, text in AgentXApp.key_help(app_of("plain")) if keys or text[:1].isdigit())
    named = [f"{p.KEY} {p.TITLE}" for p in sorted(PANES, key=lambda p: p.KEY or 10)]
    assert [rows.index(name) for name in named] == sorted(rows.index(name) for name in named)
    assert "3 Prefix cache" in rows


async def open_help(pilot: Pilot[None]) -> None:
    await shown(pilot, LAST)
    await pilot.press("question_mark")
    await pilot.pause()


def test_help_whole_80x24(snap_compare: SnapCompare) -> None:
    """The longest help there is (a live sweep of a fleet with tasks), whole in 80×24."""
    assert snap_compare(app_of("everything"), terminal_size=(80, 24), run_before=open_help)


def test_help_120x40(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_of("plain"), terminal_size=(120, 40), run_before=open_help)

"""Whole-screen snapshot tests (pytest-textual-snapshot) from a fixed Snapshot stream.

Every figure, including elapsed time, comes from the fake stream, so the screens repeat exactly.
Update the stored SVGs after an intended change with `pytest tests/ui --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from agentx_tui.snapshot import NO_GPUS, AgentXRule, AgentXVerdict, CostReading
from agentx_tui.ui import AgentXApp
from tests.ui._helpers import shown
from tests.ui.fakes import SECRET, FakeLiveControls, FakeSource, make_snapshot

SnapCompare = Callable[..., bool]
LAST = 20


def stream(**kwargs: object) -> FakeSource:
    return FakeSource(
        [
            make_snapshot(seq, server_log=[f"INFO engine step {seq}"], events=_events(seq), **kwargs)  # type: ignore[arg-type]
            for seq in range(1, LAST + 1)
        ]
    )


def _events(seq: int) -> list[str]:
    # The app's own lines, as the runtime sends them, between the server's.
    return ["18:00:01 attach http://10.0.0.7:8000 ready; driving 12 users of coding-agent"] if seq == 1 else []


async def settle(pilot: Pilot[None]) -> None:
    await shown(pilot, LAST)


def live_app(**kwargs: object) -> AgentXApp:
    return AgentXApp(stream(**kwargs), FakeLiveControls(), refresh_s=0.25, secrets=[SECRET])


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_dashboard(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    assert snap_compare(live_app(), terminal_size=size, run_before=settle)


NOT_AGENTX_VALID = AgentXVerdict(
    rules=(
        AgentXRule(
            rule="point_length",
            state="broken",
            head="points shorter than 900 s",
            detail="the run's one point, --duration 20 s",
        ),
        AgentXRule(
            rule="kv_offload",
            state="unknown",
            head="KV offload unknown",
            detail="the attached server does not say whether it offloads KV to CPU memory",
        ),
    )
)
AGENTX_EVENT = (
    "18:00:01 not AgentX-valid: points shorter than 900 s: the run's one point, --duration 20 s; KV offload "
    "unknown: the attached server does not say whether it offloads KV to CPU memory"
)


def test_dashboard_not_agentx_valid_80x24(snap_compare: SnapCompare) -> None:
    """The header's shortest words at 80×24 (no line more), the reasons in full in the log."""
    snaps = [
        make_snapshot(seq, events=[*_events(seq), AGENTX_EVENT] if seq == 1 else []).model_copy(
            update={"agentx": NOT_AGENTX_VALID}
        )
        for seq in range(1, LAST + 1)
    ]
    app = AgentXApp(FakeSource(snaps), FakeLiveControls(), refresh_s=0.25)
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


# A sweep 23 s into its first point: nothing is broken, but nothing is measured either.
AGENTX_PENDING = AgentXVerdict(
    rules=(
        AgentXRule(
            rule="point_length",
            state="pending",
            head="points of at least 900 s",
            detail="the point at 32 users, 23 s of 1800 s (no point measured yet)",
        ),
        AgentXRule(
            rule="complete",
            state="pending",
            head="the run ran to its end",
            detail="still running: the point at 32 users, 23 s of 1800 s",
        ),
    )
)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_dashboard_agentx_pending(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """Pending is not valid: the header says "AgentX pending" (with what it waits for where it fits),
    never "AgentX ✓" or "AgentX-valid", at every width."""
    snaps = [make_snapshot(seq).model_copy(update={"agentx": AGENTX_PENDING}) for seq in range(1, LAST + 1)]
    app = AgentXApp(FakeSource(snaps), FakeLiveControls(), refresh_s=0.25)
    assert snap_compare(app, terminal_size=size, run_before=settle)


def test_dashboard_without_gpu_or_price(snap_compare: SnapCompare) -> None:
    app = live_app(gpus=0, price=False, cached_reported=False)
    assert snap_compare(app, terminal_size=(160, 48), run_before=settle)


def test_users_pane_maximised(snap_compare: SnapCompare) -> None:
    async def maximise(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("5")
        await pilot.pause()

    assert snap_compare(live_app(), terminal_size=(80, 24), run_before=maximise)


async def test_too_small_terminal_says_so() -> None:
    app = live_app()
    async with app.run_test(size=(70, 20)) as pilot:
        await settle(pilot)
        notice = app.query_one("#too-small", Static)
        assert notice.display and str(notice.render()) == "terminal too small: need 80×24, have 70×20"
        assert not app.query_one("#body").display
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert app.query_one("#body").display and not notice.display


async def test_no_gpu_status_and_missing_figures_show_n_a() -> None:
    app = live_app(gpus=0, price=False, cached_reported=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        assert "no NVIDIA GPU visible" in str(app.query_one("#gpu-figures", Static).render())
        assert "n/a — server omits cached_tokens" in str(app.query_one("#cache-figures", Static).render())
        cost = str(app.query_one("#cost-figures", Static).render())
        assert "--gpu-price" in cost and "press c" in cost
        # No large "n/a" meters: the pane says how to set a price instead.
        assert not any(meter.display for meter in app.query("#pane-cost .meter"))


async def test_a_price_without_a_gpu_count_says_once_that_every_dollar_figure_is_n_a() -> None:
    """The one price rule on screen: the price is shown, its source says why nothing is priced."""
    unpriced = CostReading(usd_per_gpu_hour=2.9, price_source=f"--gpu-price; {NO_GPUS}", mode="rental")
    snaps = [make_snapshot(seq).model_copy(update={"cost": unpriced}) for seq in range(1, LAST + 1)]
    app = AgentXApp(FakeSource(snaps), FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        cost = str(app.query_one("#cost-figures", Static).render())
        assert cost.count("GPU count unknown: every $ figure is n/a (pass --gpus N)") == 1
        assert "$2.90/GPU-h × n/a" in cost and "spent n/a" in cost

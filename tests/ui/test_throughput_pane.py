"""The throughput pane: who measured the figures and what a token cost the load client (its border),
tokens/s per user on the North Star and decode, and a timed replay that fell behind its schedule."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from agentx_tui.snapshot import ClientHealth, Figures, Snapshot
from agentx_tui.ui import AgentXApp
from agentx_tui.ui.panes.throughput import _behind_schedule, _cold_start, _per_user, _source
from tests.ui._helpers import pane, shown
from tests.ui.fakes import FakeLiveControls, FakeSource, make_snapshot

SnapCompare = Callable[..., bool]
LAST = 20


def test_the_border_says_the_clients_cost_in_the_words_that_fit() -> None:
    snap = make_snapshot()
    snap = snap.model_copy(update={"client_health": ClientHealth(cpu_us_per_token=18.4)})
    assert _source("client", snap, 80) == "measured by the client · 18.4 µs CPU/tok"
    assert _source("client", snap, 40) == "by the client, 18.4 µs CPU/tok"
    assert _source("client", snap, 20) == "measured by the client"
    assert _source("server", snap, 80) == "measured by the server"  # the client's cost is not the server's
    assert _source("none", snap, 80) == ""
    unknown = snap.model_copy(update={"client_health": ClientHealth()})  # no token streamed yet
    assert _source("client", unknown, 80) == "measured by the client"


# --- tokens/s per user: the North Star beside decode --------------------------------------------------


def test_per_user_names_the_north_star_and_decode_in_the_words_that_fit() -> None:
    assert _per_user(82.0, 140.0, 80).plain == "per user p90 82.0 E2E (North Star) · 140 decode tok/s"
    assert _per_user(82.0, 140.0, 40).plain == "per user p90 82.0 E2E · 140 decode tok/s"
    assert _per_user(82.0, 140.0, 36).plain == "per user p90 82.0 E2E · 140 decode"  # the 80×24 pane
    assert _per_user(82.0, 140.0, 20).plain == "per user p90 82.0 E2E 140 dec"
    assert _per_user(None, 140.0, 40).plain == "per user p90 n/a E2E · 140 decode tok/s"


# --- a timed replay behind its schedule ---------------------------------------------------------------


def _behind(needed: int | None = 48) -> Figures:
    return Figures(schedule_lag_p50_s=0.4, schedule_lag_p90_s=1.84, schedule_behind=True, schedule_users_needed=needed)


def test_behind_schedule_says_the_lag_and_how_many_users_would_keep_it() -> None:
    (one,) = _behind_schedule(_behind(), 80)
    assert one.plain == "behind schedule: lag p90 1.84 s · too few users: ~48 would keep it"
    two = _behind_schedule(_behind(), 36)
    assert [text.plain for text in two] == ["behind schedule: lag p90 1.84 s", "too few users: ~48 would keep it"]
    assert max(text.cell_length for text in two) <= 36
    (unknown,) = _behind_schedule(_behind(None), 80)
    assert unknown.plain == "behind schedule: lag p90 1.84 s · too few users"


def behind_schedule(seq: int) -> Snapshot:
    snap = make_snapshot(seq)
    assert snap.client is not None
    client = snap.client.model_copy(
        update={
            "run": snap.client.run.updated(
                schedule_lag_p50_s=0.41,
                schedule_lag_p90_s=1.84,
                schedule_lag_p99_s=3.2,
                schedule_behind=True,
                schedule_users_needed=48,
            )
        }
    )
    return snap.model_copy(update={"client": client})


async def test_the_warning_shows_only_while_the_replay_is_behind() -> None:
    snaps = [make_snapshot(1), behind_schedule(2)]
    source = FakeSource(snaps, manual=True)
    app = AgentXApp(source, FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=(160, 48)) as pilot:
        await shown(pilot, 1)
        figures = app.query_one("#tps-latency", Static)
        assert "behind schedule" not in str(figures.render())
        source.release()
        await shown(pilot, 2)
        assert "behind schedule: lag p90 1.84 s · too few users: ~48 would keep it" in str(figures.render())


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_throughput_behind_schedule(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    # The dashboard as it first opens: the throughput pane (4) is on screen at both sizes.
    app = AgentXApp(FakeSource([behind_schedule(seq) for seq in range(1, LAST + 1)]), FakeLiveControls())

    async def settle(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)

    assert snap_compare(app, terminal_size=size, run_before=settle)


def test_a_cold_start_says_the_run_s_ttft_p90_and_without_its_first_requests_in_the_words_that_fit() -> None:
    run = Figures(ttft_p90_s=0.898, ttft_p90_s_warm=0.142, cold_start_figures=["ttft_p90_s", "e2e_p90_s"])
    wide, narrow = _cold_start(run, 80), _cold_start(run, 36)
    assert wide.plain == "cold start: run TTFT p90 898 ms set by first requests (142 ms without)"
    assert narrow.plain == "cold: TTFT p90 898 ms, 142 ms warm" and narrow.cell_length <= 36
    other = _cold_start(Figures(cold_start_figures=["e2e_p90_s"]), 80)
    assert other.plain == "cold start: first requests set 1 run latency figure"


def cold_start(seq: int) -> Snapshot:
    snap = make_snapshot(seq)
    assert snap.client is not None
    run = snap.client.run.updated(ttft_p90_s=0.898, ttft_p90_s_warm=0.142, cold_start_figures=["ttft_p90_s"])
    return snap.model_copy(update={"client": snap.client.model_copy(update={"run": run})})


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_the_cold_start_shows_in_the_pane_at_both_sizes(size: tuple[int, int]) -> None:
    snaps = [make_snapshot(1), cold_start(2)]
    source = FakeSource(snaps, manual=True)
    app = AgentXApp(source, FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=size) as pilot:
        await shown(pilot, 1)
        figures = app.query_one("#tps-latency", Static)
        assert "cold" not in str(figures.render())
        source.release()
        await shown(pilot, 2)
        text = str(figures.render())
        assert "TTFT p90 898 ms" in text and "142 ms" in text, text
        # All of it on screen: its lines fit the widget, and the widget the pane (80×24 too).
        inside = pane(app, 4).content_region
        assert figures.region.height >= len(text.splitlines()) and inside.contains_region(figures.region)

"""The cache pane (³): where the prompt tokens came from, the offload tier's traffic and KV residency,
each `n/a` with the flag or version that would give it; its lines fit the 80×24 pane (35 columns) and
use the room of a wide one; the client's view of the cache has its place (`#cache-client`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.containers import Vertical
from textual.pilot import Pilot

from agentx_tui.snapshot import BucketCounts, EndpointReading, EndpointTotals, Percentiles, Snapshot
from agentx_tui.ui import AgentXApp
from agentx_tui.ui.panes.cache import cache_lines
from tests.ui._helpers import pane, shown
from tests.ui.fakes import FakeLiveControls, FakeSource, make_snapshot

SnapCompare = Callable[..., bool]
LAST = 20
NARROW = 35  # the pane's figures at 80×24


def _with(snap: Snapshot, **figures: object) -> Snapshot:
    assert snap.aggregate is not None
    agg = snap.aggregate.model_copy(update=figures)
    return snap.model_copy(update={"aggregate": agg, "endpoints": (agg,)})


def _text(snap: Snapshot, width: int) -> list[str]:
    return [row for content in cache_lines(snap, width) for row in content.plain.split("\n")]


def _words(snap: Snapshot, width: int) -> str:
    """The pane's text as one line, however it wrapped."""
    return " ".join(" ".join(_text(snap, width)).split())


def test_the_narrow_pane_fits_its_35_columns_and_names_each_source() -> None:
    rows = _text(make_snapshot(20, offload=True), NARROW)
    assert max(len(row) for row in rows) <= NARROW, rows
    assert rows == [
        "server  88.6% window · life 90.0%",
        "client  90.0%  ceiling 94.0%",
        "source  comp 10% GPU 70% offl 20%",
        "offload ↓5.40 ↑1.52 GB/s 21 ms/GB",
        "resid.  evict 12 s/41 s",
        "        reuse 3.2 s/9.5 s",
    ]


def test_the_wide_pane_draws_the_shares_as_a_bar_and_gives_rates_capacity_and_sample_rate() -> None:
    rows = _text(make_snapshot(20, offload=True), 63)
    bar = rows[2].removeprefix("source").strip()
    # 10% computed, 70% GPU cache, 20% offload of 52 cells: exactly as wide, glyphs in that order.
    assert (bar.count("▒"), bar.count("█"), bar.count("▓"), len(bar)) == (5, 36, 11, 52)
    text = "\n".join(rows)
    for words in ("computed 10.0% 20.6 K/s", "offload 20.0% 41.2 K/s", "load 5.40 GB/s 21 ms/GB", "CPU tier 500 GB"):
        assert words in text, (words, text)
    assert "waiting for KV 2" in text and "sampled: 1 in 10 blocks" in text and "block lifetime p50 1.6 min" in text
    assert max(len(row) for row in rows) <= 63


@pytest.mark.parametrize("width", [NARROW, 63])
def test_what_an_older_vllm_does_not_export_is_na_with_the_version_or_flag(width: int) -> None:
    older = _with(
        make_snapshot(),
        prompt_share_computed=None,
        prompt_share_gpu_cache=None,
        prompt_share_offload=None,
        prompt_computed_tokens_per_s=None,
        kv_block_idle_before_evict=Percentiles(),
        kv_block_reuse_gap=Percentiles(),
        kv_offload_cpu=None,
    )
    text = _words(older, width)
    assert "n/a: needs vLLM ≥ 0.16" in text
    assert "n/a: needs" in text and "--kv-cache-metrics" in text
    assert "n/a: no offloading connector's counters" in text
    assert max(len(row) for row in _text(older, width)) <= width


def test_an_offload_tier_the_server_has_not_got_is_off_with_its_flag() -> None:
    vllm = _words(make_snapshot(), NARROW)
    assert "off (--kv-offloading-size)" in vllm
    sim = _with(make_snapshot(), flavor="sim")
    assert "off: the server has no --sim-cpu-kv-gb" in _words(sim, 63)
    sglang = _with(make_snapshot(), flavor="sglang", kv_offload_cpu=None)
    assert "n/a: SGLang exports no KV offload metrics" in _words(sglang, 63)


@pytest.mark.parametrize(
    ("sample", "evicted", "reason"),
    [
        (1.0, 0.0, "n/a: no evictions yet"),
        (0.1, 0.0, "n/a: no sampled block evicted yet: 1 in 10 is sampled"),
        (1.0, 5.0, "n/a: none evicted in the window"),
    ],
    ids=["none-yet", "none-sampled-yet", "none-in-window"],
)
@pytest.mark.parametrize("width", [NARROW, 63])
def test_residency_exported_but_not_in_this_window_says_why_not_a_missing_flag(
    sample: float, evicted: float, reason: str, width: int
) -> None:
    """The simulator's case at its start: it exports the histograms (every block sampled), nothing was
    evicted yet. One reason for both figures, the report's where it is the run's (`residency_unknown`)."""
    quiet = _with(
        make_snapshot(),
        kv_block_idle_before_evict=Percentiles(),
        kv_block_reuse_gap=Percentiles(),
        kv_cache_metrics_sample=sample,
        totals=EndpointTotals(kv_block_idle_before_evict=BucketCounts(bounds=(1.0,), counts=(evicted, evicted))),
    )
    rows = _text(quiet, width)
    assert reason in _words(quiet, width) and not any("needs" in row for row in rows)
    assert "evict n/a" not in _words(quiet, width) and max(len(row) for row in rows) <= width


@pytest.mark.parametrize("width", [NARROW, 63])
def test_a_reuse_gap_unknown_beside_evictions_says_no_block_was_hit_twice(width: int) -> None:
    once = _with(make_snapshot(), kv_block_reuse_gap=Percentiles())
    words = _words(once, width)
    assert "evict 16 s/41 s" in words or "p50 16 s p90 41 s" in words
    assert ("reuse n/a (no block hit twice)" if width == NARROW else "n/a (no evicted block was hit twice)") in words
    assert max(len(row) for row in _text(once, width)) <= width


def test_no_server_metrics_and_caching_off_are_said() -> None:
    assert _text(make_snapshot().model_copy(update={"aggregate": None}), NARROW)[-1] == "no server metrics"
    off = _with(make_snapshot(), prefix_caching_enabled=False)
    assert "prefix caching is off on the server" in _text(off, NARROW)


async def test_the_client_view_has_its_place_under_the_servers_figures() -> None:
    app = AgentXApp(FakeSource([make_snapshot(seq, offload=True) for seq in range(1, 4)]), FakeLiveControls())
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, 3)
        cache = pane(app, 3)
        client = cache.query_one("#cache-client", Vertical)
        assert [child.id for child in cache.children] == ["cache-figures", "cache-client", "cache-history"]
        # The client's view: one line of words at 80×24 (the curve itself when the pane is maximised).
        assert client.size.height == 1 and [child.id for child in client.children] == ["cache-retention"]
        assert cache.border_subtitle == "residency p50/p90, 1/10 sampled"
        figures = EndpointReading.model_fields  # the pane reads only the snapshot's figures
        assert "kv_offload_load_gb_per_s" in figures


@pytest.mark.parametrize(("width", "height"), [(80, 24), (200, 60)], ids=["80x24", "200x60"])
def test_cache(snap_compare: SnapCompare, width: int, height: int) -> None:
    # The dashboard as it first opens: the cache pane (3) is on screen at both sizes.
    app = AgentXApp(FakeSource([make_snapshot(seq, offload=True) for seq in range(1, LAST + 1)]), FakeLiveControls())

    async def settle(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)

    assert snap_compare(app, terminal_size=(width, height), run_before=settle)

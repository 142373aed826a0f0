"""Where the prompt tokens came from, the offload tier's traffic and KV residency, read off /metrics pages
(docs/metrics.md, "Cache"): pages captured from the real vLLM 0.32 CPU engine, and vLLM 0.32's offload
families as its source writes them (the CPU build cannot run an offloading connector: docs/vllm.md).

The by-source shares must add up to 1 (within 1%) and agree with the counters' own totals over the
window; a figure a page does not carry is None, never 0.
"""

from __future__ import annotations

import pytest

from agentx_tui.snapshot import BucketCounts, EndpointReading, EndpointTotals, cache_figures
from agentx_tui.telemetry import MetricsReader, aggregate_endpoints

from .pages import REAL_AFTER, REAL_BEFORE, REAL_KV_METRICS_AFTER, REAL_KV_METRICS_BEFORE, offload_page

SHARES = ("prompt_share_computed", "prompt_share_gpu_cache", "prompt_share_offload")
GIB = 1 << 30


def _window(before: str, after: str, seconds: float, sample: float | None = None) -> EndpointReading:
    reader = MetricsReader("http://x", window_s=60, kv_cache_metrics_sample=sample)
    reader.read(before, 100.0)
    return reader.read(after, 100.0 + seconds)


def _shares_sum_to_one_and_agree_with_the_counters(figs: EndpointReading) -> None:
    shares = [getattr(figs, key) for key in SHARES]
    assert None not in shares
    assert sum(shares) == pytest.approx(1.0, abs=0.01)
    t = figs.totals
    by_source = [t.prompt_tokens_computed, t.prompt_tokens_gpu_cache, t.prompt_tokens_offload]
    assert None not in by_source and t.prompt_tokens is not None
    # The sources add up to vLLM's own prompt-token counter, and each share is its source's count.
    assert sum(by_source) == pytest.approx(t.prompt_tokens, rel=0.01)
    for share, count in zip(shares, by_source, strict=True):
        assert share == pytest.approx(count / t.prompt_tokens, rel=0.01)


def test_the_real_engines_prompt_tokens_by_source() -> None:
    # Between the captures: 4 requests of 710 prompt tokens, 640 of them a cached prefix (test_real_pages).
    figs = _window(REAL_BEFORE.read_text(), REAL_AFTER.read_text(), 5.0)
    _shares_sum_to_one_and_agree_with_the_counters(figs)
    assert (figs.totals.prompt_tokens_computed, figs.totals.prompt_tokens_gpu_cache) == (4 * 70, 4 * 640)
    assert figs.prompt_share_gpu_cache == pytest.approx(640 / 710) == figs.prefix_hit_rate_window
    assert figs.prompt_share_offload == 0  # vLLM counts external tokens (none): a 0, not an unknown
    assert figs.prompt_computed_tokens_per_s == pytest.approx(4 * 70 / 5)
    # No offloading connector and no --kv-cache-metrics on that server: unknown, not 0.
    assert figs.kv_offload_load_gb_per_s is None and figs.kv_offload_store_s_per_gb is None
    assert figs.kv_block_idle_before_evict.p50 is None and figs.totals.kv_block_idle_before_evict is None
    # Its cache_config_info says no offloading size, and it has no connector counters: it does not offload.
    assert (figs.kv_offload_cpu, figs.kv_offload_cpu_bytes) == (False, None)
    assert (figs.waiting_capacity, figs.waiting_deferred) == (0, 0)
    assert figs.external_prefix_hit_rate_window is None  # no external query in the window: no ratio


def test_the_real_engines_kv_residency_with_kv_cache_metrics() -> None:
    # vLLM 0.32 CPU, tiny model, --kv-cache-metrics --kv-cache-metrics-sample 1.0 and 48 blocks of 128
    # tokens; between the captures 45 s of the coding-agent preset at 12 users evicted 82 blocks.
    before, after = REAL_KV_METRICS_BEFORE.read_text(), REAL_KV_METRICS_AFTER.read_text()
    figs = _window(before, after, 45.0, sample=1.0)
    _shares_sum_to_one_and_agree_with_the_counters(figs)
    # Idle before eviction, cumulative: ≤10 s 18, ≤20 s 51, ≤30 s 73, ≤60 s 82 (Prometheus's rule).
    idle = figs.kv_block_idle_before_evict
    assert idle.p50 == pytest.approx(10 + 10 * (41 - 18) / (51 - 18))
    assert idle.p90 == pytest.approx(30 + 30 * (0.9 * 82 - 73) / (82 - 73))
    assert figs.kv_block_lifetime.p50 is not None
    # No block was accessed twice before it was evicted: no reuse gap observed, so none to tell.
    assert figs.kv_block_reuse_gap.p50 is None
    totals = figs.totals.kv_block_idle_before_evict
    assert totals is not None and totals.total == 82 and totals.bounds[-1] == 1800
    assert figs.kv_cache_metrics_sample == 1.0
    # The report's figure is the same rule over the run's totals.
    over_run = cache_figures(figs.totals, 45.0)
    assert over_run["kv_block_idle_before_evict_p50_s"] == pytest.approx(idle.p50)
    assert over_run["kv_block_reuse_gap_p50_s"] is None
    assert over_run["kv_offload_load_gb_per_s"] is None


def test_a_page_without_the_residency_families_knows_no_sample_rate_from_itself() -> None:
    figs = _window(REAL_KV_METRICS_BEFORE.read_text(), REAL_KV_METRICS_AFTER.read_text(), 45.0)
    assert figs.kv_cache_metrics_sample is None  # vLLM does not export it: only a launched server's is known


@pytest.mark.parametrize("new", [True, False], ids=["flat-names", "deprecated-names-only"])
def test_offload_traffic_each_way_and_its_time_per_gb(new: bool) -> None:
    before = offload_page(computed=1000, gpu=5000, offload=0, moved=(2e9, 1e9), took=(0.04, 0.03), new=new)
    after = offload_page(computed=1400, gpu=7000, offload=1600, moved=(4e9, 1.5e9), took=(0.08, 0.04), new=new)
    figs = _window(before, after, 2.0)
    _shares_sum_to_one_and_agree_with_the_counters(figs)
    assert figs.prompt_share_offload == pytest.approx(1600 / 4000)
    # 2 GB loaded in 2 s, in 0.04 s of transfers; 0.5 GB stored. 0.32 writes both names: counted once.
    assert figs.kv_offload_load_gb_per_s == pytest.approx(1.0)
    assert figs.kv_offload_load_s_per_gb == pytest.approx(0.02)
    assert figs.kv_offload_store_gb_per_s == pytest.approx(0.25)
    assert figs.kv_offload_store_s_per_gb == pytest.approx(0.02)
    assert figs.totals.kv_offload_load_bytes == pytest.approx(2e9)
    assert (figs.kv_offload_cpu, figs.kv_offload_cpu_bytes) == (True, 4 * GIB)
    assert (figs.waiting_capacity, figs.waiting_deferred) == (3, 2)
    assert figs.kv_offload_allocation_failures_per_s is None  # not on this page: unknown


def test_an_lmcache_backend_offloads_somewhere_the_page_does_not_name() -> None:
    page = offload_page(computed=1, gpu=1, offload=1, moved=(0, 0), took=(0, 0)).replace(
        'kv_offloading_backend="native"', 'kv_offloading_backend="lmcache"'
    )
    figs = MetricsReader("http://x").read(page, 0.0)
    assert (figs.kv_offload_cpu, figs.kv_offload_cpu_bytes) == (None, None)


def _endpoint(url: str, computed: float, gpu: float, offload: float, **kw: object) -> EndpointReading:
    return EndpointReading.model_validate(
        {
            "url": url,
            "up": True,
            "status": "up",
            "prompt_computed_tokens_per_s": computed,
            "prompt_gpu_cache_tokens_per_s": gpu,
            "prompt_offload_tokens_per_s": offload,
            **kw,
        }
    )


def test_the_aggregate_shares_are_of_the_summed_sources_and_histograms_merge_by_bucket() -> None:
    idle = BucketCounts(bounds=(1.0, 10.0), counts=(2.0, 6.0, 8.0))
    a = _endpoint(
        "a",
        100.0,
        900.0,
        0.0,
        kv_offload_load_gb_per_s=1.0,
        kv_offload_load_s_per_gb=0.02,
        kv_offload_cpu=True,
        kv_offload_cpu_bytes=4e9,
        totals=EndpointTotals(prompt_tokens_computed=10, kv_block_idle_before_evict=idle),
    )
    b = _endpoint(
        "b",
        300.0,
        100.0,
        600.0,
        kv_offload_load_gb_per_s=3.0,
        kv_offload_load_s_per_gb=0.04,
        kv_offload_cpu=True,
        kv_offload_cpu_bytes=6e9,
        totals=EndpointTotals(prompt_tokens_computed=5, kv_block_idle_before_evict=idle),
    )
    agg = aggregate_endpoints([a, b])
    assert agg is not None
    assert (agg.prompt_share_computed, agg.prompt_share_gpu_cache, agg.prompt_share_offload) == pytest.approx(
        (400 / 2000, 1000 / 2000, 600 / 2000)
    )
    assert agg.kv_offload_load_gb_per_s == 4.0
    assert agg.kv_offload_load_s_per_gb == pytest.approx((0.02 * 1 + 0.04 * 3) / 4)  # Σ seconds / Σ GB
    assert (agg.kv_offload_cpu, agg.kv_offload_cpu_bytes) == (True, 10e9)
    assert agg.totals.prompt_tokens_computed == 15
    merged = agg.totals.kv_block_idle_before_evict
    assert merged is not None and merged.counts == (4.0, 12.0, 16.0)
    # Buckets that differ cannot be merged exactly: unknown rather than wrong.
    other = b.model_copy(
        update={"totals": EndpointTotals(kv_block_idle_before_evict=BucketCounts(bounds=(2.0,), counts=(1.0, 2.0)))}
    )
    mixed = aggregate_endpoints([a, other])
    assert mixed is not None and mixed.totals.kv_block_idle_before_evict is None


def test_the_aggregate_offloads_to_cpu_only_when_every_endpoint_says_so() -> None:
    yes = _endpoint("a", 1, 1, 1, kv_offload_cpu=True, kv_offload_cpu_bytes=1e9)
    no = _endpoint("b", 1, 1, 1, kv_offload_cpu=False)
    unknown = _endpoint("c", 1, 1, 1)
    for endpoints, expected in (([yes, no], None), ([no, no], False), ([yes, unknown], None), ([yes], True)):
        agg = aggregate_endpoints(endpoints)
        assert agg is not None and agg.kv_offload_cpu is expected, endpoints

"""The servers' cache figures over a stretch of time (snapshot/cache.py) and the histograms they are read
from (`BucketCounts`): one rule for the report, an endpoint's row and a sweep point's window."""

from __future__ import annotations

import math

import pytest

from agentx_tui.snapshot import BucketCounts, EndpointTotals, cache_figures, histogram_quantile, totals_since


def test_bucket_counts_keep_inf_out_of_json_and_read_back_the_same() -> None:
    counts = BucketCounts.of([(1.0, 2.0), (math.inf, 5.0), (0.5, 1.0)])
    assert counts is not None and counts.bounds == (0.5, 1.0) and counts.counts == (1.0, 2.0, 5.0)
    assert BucketCounts.model_validate_json(counts.model_dump_json()) == counts
    assert counts.total == 5.0 and counts.pairs()[-1] == (math.inf, 5.0)
    assert BucketCounts.of([(1.0, 2.0)]) is None  # no +Inf: not a whole histogram


def test_histograms_add_and_subtract_only_bucket_by_bucket() -> None:
    a = BucketCounts(bounds=(1.0, 10.0), counts=(1.0, 3.0, 4.0))
    b = BucketCounts(bounds=(1.0, 10.0), counts=(2.0, 2.0, 6.0))
    assert a.plus(b) == BucketCounts(bounds=(1.0, 10.0), counts=(3.0, 5.0, 10.0))
    assert b.since(a) == BucketCounts(bounds=(1.0, 10.0), counts=(1.0, 0.0, 2.0))  # never below 0
    assert a.since(None) == a
    other = BucketCounts(bounds=(2.0,), counts=(1.0, 1.0))
    assert a.plus(other) is None and a.since(other) is None
    # The quantile is Prometheus's rule: rank 0.5 × 4 = 2 is halfway through the (1, 10] bucket.
    assert a.quantile(0.5) == pytest.approx(5.5) == histogram_quantile(0.5, a.pairs())


def test_a_windows_totals_are_each_figures_increase_and_none_where_a_tick_lacks_it() -> None:
    start = EndpointTotals(
        prompt_tokens_computed=100.0,
        prompt_tokens_gpu_cache=900.0,
        prompt_tokens_offload=0.0,
        kv_offload_load_bytes=1e9,
        kv_block_idle_before_evict=BucketCounts(bounds=(10.0,), counts=(5.0, 5.0)),
    )
    end = start.model_copy(
        update={
            "prompt_tokens_computed": 400.0,
            "prompt_tokens_gpu_cache": 1500.0,
            "prompt_tokens_offload": 300.0,
            "kv_offload_load_bytes": 5e9,
            "kv_block_idle_before_evict": BucketCounts(bounds=(10.0,), counts=(5.0, 9.0)),
        }
    )
    window = totals_since(end, start)
    assert (window.prompt_tokens_computed, window.prompt_tokens_gpu_cache, window.prompt_tokens_offload) == (
        300.0,
        600.0,
        300.0,
    )
    assert window.kv_block_idle_before_evict == BucketCounts(bounds=(10.0,), counts=(0.0, 4.0))
    assert window.kv_offload_store_bytes is None  # neither tick had it
    figures = cache_figures(window, 4.0)
    assert (figures["prompt_share_computed"], figures["prompt_share_offload"]) == (0.25, 0.25)
    assert figures["kv_offload_load_gb_per_s"] == pytest.approx(1.0)  # 4 GB in 4 s
    assert figures["kv_offload_store_gb_per_s"] is None
    # All four new evictions waited longer than 10 s: the largest finite bound, as Prometheus reads +Inf.
    assert figures["kv_block_idle_before_evict_p50_s"] == 10.0
    assert cache_figures(window, 0.0)["kv_offload_load_gb_per_s"] is None  # no time: no rate


def test_shares_need_every_source_and_some_tokens() -> None:
    assert cache_figures(EndpointTotals(prompt_tokens_computed=5.0), 1.0)["prompt_share_computed"] is None
    nothing = EndpointTotals(prompt_tokens_computed=0.0, prompt_tokens_gpu_cache=0.0, prompt_tokens_offload=0.0)
    assert cache_figures(nothing, 1.0)["prompt_share_gpu_cache"] is None  # 0 / 0 is unknown, not 0

from __future__ import annotations

import pytest

from agentx_tui.snapshot import EndpointReading, EndpointTotals, Percentiles
from agentx_tui.telemetry import aggregate_endpoints


def _fig(url: str, **kw: object) -> EndpointReading:
    return EndpointReading.model_validate({"url": url, "up": True, "status": "up", "flavor": "vllm", **kw})


def test_aggregate_sums_rates_means_kv_and_weights_hit_rate() -> None:
    a = _fig(
        "a",
        running=2,
        waiting=1,
        kv_cache_usage=0.2,
        prompt_tokens_per_s=300.0,
        generation_tokens_per_s=10.0,
        prefix_hit_rate_window=0.9,
        model="m",
        totals=EndpointTotals(prompt_tokens=1000, generation_tokens=50),
        ttft=Percentiles(p50=0.1),
    )
    b = _fig(
        "b",
        running=3,
        waiting=0,
        kv_cache_usage=0.6,
        prompt_tokens_per_s=100.0,
        generation_tokens_per_s=30.0,
        prefix_hit_rate_window=0.5,
        model="m",
        totals=EndpointTotals(prompt_tokens=500, generation_tokens=None),
    )
    down = EndpointReading(url="c", up=False, status="down: x", totals=EndpointTotals(prompt_tokens=7))
    agg = aggregate_endpoints([a, b, down])
    assert agg is not None
    assert agg.url == "aggregate" and agg.up and agg.status == "up: 2 of 3" and agg.model == "m"
    assert (agg.running, agg.waiting) == (5, 1)
    assert agg.kv_cache_usage == pytest.approx(0.4)
    assert agg.prompt_tokens_per_s == 400 and agg.generation_tokens_per_s == 40
    assert agg.prefix_hit_rate_window == pytest.approx((0.9 * 300 + 0.5 * 100) / 400)
    assert agg.totals.prompt_tokens == 1507 and agg.totals.generation_tokens == 50
    assert agg.totals.cached_prompt_tokens is None
    assert agg.ttft.p50 is None  # percentiles of two endpoints cannot be merged
    assert agg.cached_prompt_tokens_per_s is None


def test_aggregate_of_one_keeps_percentiles_and_of_none_is_none() -> None:
    a = _fig("a", ttft=Percentiles(p50=0.1, p90=0.2, p99=0.3))
    agg = aggregate_endpoints([a])
    assert agg is not None and agg.ttft == a.ttft
    assert aggregate_endpoints([]) is None
    all_down = aggregate_endpoints([EndpointReading(url="x", up=False, status="down: y")])
    assert all_down is not None and not all_down.up and all_down.running is None

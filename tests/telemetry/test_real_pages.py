"""Pages captured from the real vLLM 0.32 CPU engine serving the tiny model.

Between the two captures the client sent 4 identical chat requests of 710 prompt tokens (640 of them
a cached prefix: five 128-token blocks) and 16 output tokens each.
"""

from __future__ import annotations

import pytest

from agentx_tui.telemetry import MetricsReader

from .pages import REAL_AFTER, REAL_BEFORE


def test_single_page_gives_gauges_config_and_lifetime_rate_but_no_rates() -> None:
    figs = MetricsReader("http://x").read(REAL_BEFORE.read_text(), 0.0)
    assert figs.up and figs.status == "up" and figs.flavor == "vllm"
    assert figs.running == 0 and figs.waiting == 0 and figs.kv_cache_usage == 0
    assert (figs.block_size, figs.num_gpu_blocks, figs.prefix_caching_enabled) == (128, 16384, True)
    # Server counters then: 4 requests, the first one a miss: hits 3 × 640, queries 4 × 710.
    assert figs.prefix_hit_rate_lifetime == pytest.approx(1920 / 2840)
    assert figs.prompt_tokens_per_s is None and figs.prefix_hit_rate_window is None
    assert figs.ttft.p50 is None
    assert figs.totals.prompt_tokens == 0  # run totals start at the first sample
    assert figs.engines == ()


def test_two_captures_give_rates_totals_and_percentiles() -> None:
    reader = MetricsReader("http://x")
    reader.read(REAL_BEFORE.read_text(), 100.0)
    figs = reader.read(REAL_AFTER.read_text(), 105.0)
    assert figs.prompt_tokens_per_s == pytest.approx(4 * 710 / 5)
    assert figs.generation_tokens_per_s == pytest.approx(4 * 16 / 5)
    assert figs.cached_prompt_tokens_per_s == pytest.approx(4 * 640 / 5)
    assert figs.requests_per_s == pytest.approx(4 / 5)
    assert figs.preemptions_per_s == 0
    assert figs.prefix_hit_rate_window == pytest.approx(640 / 710)
    assert figs.prefix_hit_rate_lifetime == pytest.approx(4480 / 5680)
    totals = figs.totals
    assert (totals.prompt_tokens, totals.generation_tokens, totals.cached_prompt_tokens) == (2840, 64, 2560)
    assert (totals.prefix_cache_queries, totals.prefix_cache_hits) == (2840, 2560)
    assert totals.requests_finished == 4
    # All 4 new TTFT observations fell in the (0.02, 0.04] bucket: rank q·4 interpolated inside it.
    assert figs.ttft.p50 == pytest.approx(0.02 + 0.02 * 2 / 4)
    assert figs.ttft.p90 == pytest.approx(0.02 + 0.02 * 3.6 / 4)
    assert figs.ttft.p99 == pytest.approx(0.02 + 0.02 * 3.96 / 4)
    assert figs.itl.p50 is not None and figs.e2e.p50 is not None and figs.queue_time.p50 is not None

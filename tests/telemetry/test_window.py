"""Counter resets, the rate window, missing metrics and pages that are not metrics at all."""

from __future__ import annotations

import pytest

from agentx_tui.telemetry import MetricsReader, quantile

from .pages import counters_only


def test_counter_reset_counts_the_new_value_as_the_increase() -> None:
    reader = MetricsReader("http://r", window_s=10)
    reader.read(counters_only(1000, 100), 0.0)
    reader.read(counters_only(1500, 150), 1.0)
    reader.read(counters_only(200, 20), 2.0)  # the server restarted
    figs = reader.read(counters_only(400, 40), 3.0)
    assert figs.totals.prompt_tokens == 500 + 200 + 200
    assert figs.totals.generation_tokens == 50 + 20 + 20
    assert figs.prompt_tokens_per_s == pytest.approx(900 / 3)
    assert figs.generation_tokens_per_s == pytest.approx(90 / 3)


def test_window_keeps_the_last_point_at_or_before_its_start() -> None:
    reader = MetricsReader("http://r", window_s=2)
    for t, prompt in [(0, 0), (1, 100), (2, 400), (3, 1000)]:
        figs = reader.read(counters_only(prompt, 0), float(t))
    # Base is the point at t=1 (= now − window): (1000 − 100) / 2.
    assert figs.prompt_tokens_per_s == pytest.approx(450)
    assert figs.totals.prompt_tokens == 1000


def test_reset_window_restarts_rates_but_not_totals() -> None:
    reader = MetricsReader("http://r")
    reader.read(counters_only(0, 0), 0.0)
    reader.read(counters_only(100, 10), 1.0)
    reader.reset_window()
    figs = reader.read(counters_only(300, 30), 2.0)
    assert figs.prompt_tokens_per_s is None
    assert figs.totals.prompt_tokens == 300
    figs = reader.read(counters_only(600, 60), 4.0)
    assert figs.prompt_tokens_per_s == pytest.approx(300 / 2)


def test_a_series_that_appears_later_counts_from_zero() -> None:
    first = counters_only(0, 0)
    later = first + ('# TYPE vllm:request_success counter\nvllm:request_success_total{finished_reason="length"} 3\n')
    reader = MetricsReader("http://r")
    reader.read(first, 0.0)
    figs = reader.read(later, 2.0)
    assert figs.totals.requests_finished == 3 and figs.requests_per_s == pytest.approx(1.5)


def test_missing_metrics_are_none_never_zero() -> None:
    reader = MetricsReader("http://m")
    reader.read(counters_only(0, 0), 0.0)
    figs = reader.read(counters_only(10, 5), 1.0)
    assert figs.up and figs.prompt_tokens_per_s == 10
    for name in (
        "running",
        "waiting",
        "kv_cache_usage",
        "block_size",
        "prefix_hit_rate_window",
        "prefix_hit_rate_lifetime",
        "cached_prompt_tokens_per_s",
        "preemptions_per_s",
    ):
        assert getattr(figs, name) is None, name
    assert figs.ttft.p50 is None and figs.itl.p99 is None
    assert figs.totals.prefix_cache_hits is None and figs.totals.preemptions is None


def test_page_without_server_metrics_and_garbage_become_statuses() -> None:
    reader = MetricsReader("http://m")
    figs = reader.read("# TYPE python_info gauge\npython_info 1\n", 0.0)
    assert figs.up and figs.status.startswith("no metrics:") and figs.prompt_tokens_per_s is None
    figs = reader.read("vllm:prompt_tokens_total{ 12 oops\n", 1.0)
    assert figs.status.startswith("no metrics: unparseable /metrics")
    assert figs.running is None


def test_quantile_matches_histogram_quantile() -> None:
    inf = float("inf")
    assert quantile(0.5, [(1.0, 0), (2.0, 0), (inf, 0)]) is None
    assert quantile(0.5, [(1.0, 2), (2.0, 4), (inf, 4)]) == pytest.approx(1.0)
    assert quantile(0.75, [(1.0, 2), (2.0, 4), (inf, 4)]) == pytest.approx(1.5)
    assert quantile(0.25, [(1.0, 2), (2.0, 4), (inf, 4)]) == pytest.approx(0.5)
    # Rank in the +Inf bucket: the largest finite bound.
    assert quantile(0.99, [(1.0, 2), (2.0, 4), (inf, 10)]) == pytest.approx(2.0)
    assert quantile(0.5, [(1.0, 2)]) is None  # no +Inf bucket: not a histogram

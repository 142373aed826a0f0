"""Hand-made pages in each naming the scraper accepts; expected figures computed by hand."""

from __future__ import annotations

import pytest

from agentx_tui.telemetry import MetricsReader

from .pages import old_vllm, sglang, two_engines


def test_old_vllm_names_block_counting_prefix_and_old_itl() -> None:
    reader = MetricsReader("http://old")
    reader.read(old_vllm(queries=100, hits=40, prompt=1000, gen=100, itl=(10, 30, 40)), 0.0)
    figs = reader.read(old_vllm(queries=150, hits=70, prompt=1800, gen=300, itl=(20, 50, 60)), 10.0)
    assert figs.flavor == "vllm"
    assert figs.kv_cache_usage == 0.25 and figs.running == 3 and figs.waiting == 1
    assert figs.prefix_hit_rate_window == pytest.approx(30 / 50)
    assert figs.prefix_hit_rate_lifetime == pytest.approx(70 / 150)
    # HELP says blocks; cache_config_info says 16 tokens per block.
    assert figs.totals.prefix_cache_queries == 50 * 16
    assert figs.totals.prefix_cache_hits == 30 * 16
    assert figs.prompt_tokens_per_s == pytest.approx(800 / 10)
    assert figs.generation_tokens_per_s == pytest.approx(200 / 10)
    # ITL bucket deltas: ≤0.01: 10, ≤0.05: 20, +Inf: 20.
    assert figs.itl.p50 == pytest.approx(0.01)  # rank 10 closes the first bucket
    assert figs.itl.p90 == pytest.approx(0.01 + 0.04 * 8 / 10)
    assert figs.itl.p99 == pytest.approx(0.01 + 0.04 * 9.8 / 10)
    assert figs.cached_prompt_tokens_per_s is None  # no such counter in that version
    assert figs.ttft.p50 is None


def test_block_counts_without_block_size_keep_the_ratio_but_not_token_totals() -> None:
    def page(q: int, h: int) -> str:
        text = old_vllm(queries=q, hits=h, prompt=0, gen=0, itl=(0, 0, 0))
        return "\n".join(line for line in text.splitlines() if "cache_config_info" not in line) + "\n"

    reader = MetricsReader("http://old")
    reader.read(page(100, 40), 0.0)
    figs = reader.read(page(150, 70), 10.0)
    assert figs.block_size is None
    assert figs.prefix_hit_rate_window == pytest.approx(0.6)
    assert figs.totals.prefix_cache_queries is None and figs.totals.prefix_cache_hits is None


def test_block_counting_is_told_by_version_when_help_is_missing() -> None:
    text = (
        "vllm:gpu_prefix_cache_queries_total 10\nvllm:gpu_prefix_cache_hits_total 5\n"
        'vllm:cache_config_info{block_size="16"} 1\n'
    )
    later = text.replace(" 10\n", " 20\n").replace(" 5\n", " 9\n")
    old = MetricsReader("http://a", engine_version="0.8.5")
    old.read(text, 0.0)
    assert old.read(later, 1.0).totals.prefix_cache_queries == 10 * 16
    unknown = MetricsReader("http://a")
    unknown.read(text, 0.0)
    assert unknown.read(later, 1.0).totals.prefix_cache_queries == 10


def test_new_names_win_when_both_generations_are_exposed() -> None:
    def page(new_q: int, new_h: int) -> str:
        return (
            "# HELP vllm:prefix_cache_queries Prefix cache queries, in terms of number of queried tokens.\n"
            "# TYPE vllm:prefix_cache_queries counter\n"
            f"vllm:prefix_cache_queries_total {new_q}\n"
            "# TYPE vllm:prefix_cache_hits counter\n"
            f"vllm:prefix_cache_hits_total {new_h}\n"
            "# TYPE vllm:gpu_prefix_cache_queries counter\n"
            "vllm:gpu_prefix_cache_queries_total 999\n"
            "# TYPE vllm:gpu_prefix_cache_hits counter\n"
            "vllm:gpu_prefix_cache_hits_total 1\n"
            "# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc 0.9\n"
            "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc 0.3\n"
        )

    reader = MetricsReader("http://both")
    reader.read(page(100, 50), 0.0)
    figs = reader.read(page(300, 200), 1.0)
    assert figs.prefix_hit_rate_window == pytest.approx(150 / 200)
    assert figs.prefix_hit_rate_lifetime == pytest.approx(200 / 300)
    assert figs.kv_cache_usage == 0.3


def test_two_engines_are_summed_and_shown_each() -> None:
    reader = MetricsReader("http://dp")
    reader.read(two_engines(gen0=100, gen1=200, hits0=10, hits1=0, queries0=100, queries1=100), 0.0)
    figs = reader.read(two_engines(gen0=140, gen1=260, hits0=60, hits1=30, queries0=200, queries1=200), 2.0)
    assert figs.running == 7 and figs.waiting == 4
    assert figs.kv_cache_usage == pytest.approx((0.2 + 0.6) / 2)
    assert figs.generation_tokens_per_s == pytest.approx((40 + 60) / 2)
    assert figs.prefix_hit_rate_window == pytest.approx((50 + 30) / (100 + 100))
    assert figs.prefix_hit_rate_lifetime == pytest.approx((60 + 30) / (200 + 200))
    assert figs.num_gpu_blocks == 96
    assert figs.totals.generation_tokens == 100
    e0, e1 = figs.engines
    assert (e0.engine, e0.running, e0.waiting, e0.kv_cache_usage) == ("0", 2, 0, 0.2)
    assert e0.generation_tokens_per_s == pytest.approx(20) and e0.prefix_hit_rate_window == pytest.approx(0.5)
    assert (e1.engine, e1.running, e1.waiting, e1.kv_cache_usage) == ("1", 5, 4, 0.6)
    assert e1.generation_tokens_per_s == pytest.approx(30) and e1.prefix_hit_rate_window == pytest.approx(0.3)


def test_sglang_names() -> None:
    reader = MetricsReader("http://sg")
    reader.read(sglang(prompt=1000, gen=100, cached=600), 0.0)
    figs = reader.read(sglang(prompt=2000, gen=300, cached=1400), 4.0)
    assert figs.flavor == "sglang"
    assert figs.kv_cache_usage == 0.42 and figs.running == 7 and figs.waiting == 2
    assert figs.prompt_tokens_per_s == pytest.approx(250)
    assert figs.generation_tokens_per_s == pytest.approx(50)
    assert figs.cached_prompt_tokens_per_s == pytest.approx(200)
    assert figs.prefix_hit_rate_window == pytest.approx(800 / 1000)
    assert figs.prefix_hit_rate_lifetime == pytest.approx(1400 / 2000)
    assert figs.totals.cached_prompt_tokens == 800 and figs.block_size is None


def test_sglang_without_cached_counter_falls_back_to_its_hit_rate_gauge() -> None:
    def page(prompt: int) -> str:
        text = sglang(prompt=prompt, gen=0, cached=0, hit_gauge=0.35)
        return "\n".join(line for line in text.splitlines() if "cached_tokens" not in line) + "\n"

    reader = MetricsReader("http://sg")
    reader.read(page(10), 0.0)
    figs = reader.read(page(20), 1.0)
    assert figs.prefix_hit_rate_window == pytest.approx(0.35)
    assert figs.prefix_hit_rate_lifetime is None

"""Why a figure is n/a (snapshot/unknown.py): one reason per family, the same for the report and the panes."""

from __future__ import annotations

import pytest

from agentx_tui.report import FIGURES, Report
from agentx_tui.snapshot import EndpointRow, Figures, PointFigures
from agentx_tui.snapshot.unknown import (
    NO_CACHED_TOKENS,
    NO_GPU_COUNT,
    NO_PEAK,
    NO_PRICE,
    NOT_MEASURED,
    OBSERVING_ONLY,
    cached_tokens_unknown,
    client_unknown,
    offload_unknown,
    prompt_source_unknown,
    residency_unknown,
    roofline_unknown,
    why_unknown,
)

SIM = EndpointRow(url="http://127.0.0.1:8000", flavor="sim")
VLLM = EndpointRow(url="http://gpu-node:8000", flavor="vllm")


def test_residency_says_the_flag_or_that_nothing_was_evicted_yet() -> None:
    """Found: "resid. evict n/a reuse n/a" on the simulator, whose every block is recorded: nothing had been
    evicted yet, and nothing said so."""
    assert residency_unknown(1.0) == "no evictions yet"
    assert residency_unknown(1.0, exported=True) == "no evictions yet"
    assert residency_unknown(0.1, exported=True) == "no sampled block evicted yet: 1 in 10 is sampled"
    assert residency_unknown(None, exported=False) == "needs --kv-cache-metrics"
    assert residency_unknown(None) == "needs --kv-cache-metrics, or no evictions yet"  # an attached vLLM


def test_offload_names_the_flag_that_gives_it_or_the_counter_the_server_lacks() -> None:
    assert offload_unknown(False, "sim") == "the server does not offload KV: needs --sim-cpu-kv-gb GB"
    assert offload_unknown(False, "vllm") == "the server does not offload KV: needs --kv-offloading-size GiB"
    assert offload_unknown(None, "sglang") == "SGLang exports no KV offload counters"
    assert offload_unknown(None, "vllm").startswith("the server has no such counter")
    assert offload_unknown(True, "vllm", capacity=True) == "the server does not say its offload capacity"


def test_the_other_families_say_what_is_missing() -> None:
    assert prompt_source_unknown(None).startswith("the server has no such counter: prompt_tokens_by_source needs")
    assert prompt_source_unknown(0.0) == "no prompt tokens yet"
    assert client_unknown(False, None) == OBSERVING_ONLY
    assert client_unknown(True, 0) == "no request completed yet"
    assert cached_tokens_unknown(True, reported=False) == NO_CACHED_TOKENS
    assert cached_tokens_unknown(True, reported=True, reused_tokens=0) == "no prompt tokens sent again yet"
    assert roofline_unknown("n/a: start vLLM with --enable-mfu-metrics", None, needs="both").startswith("start vLLM")
    assert roofline_unknown("vLLM's estimate", None, needs="peak") == NO_PEAK


def simulated_run(**more: object) -> Figures:
    """A short run on the simulator: client-side figures, no task completed, no --precision, no price."""
    return Figures(
        samples=10,
        simulated=True,
        throughput_source="client",
        requests_completed=9,
        output_tokens=3000,
        total_tokens_per_s=11_000.0,
        kv_cache_metrics_sample=1.0,
        kv_offload_cpu=False,
        tasks_completed=0,
        endpoints=[SIM],
        **more,  # type: ignore[arg-type]
    )


def test_a_report_key_gets_its_familys_reason() -> None:
    run = simulated_run()
    assert why_unknown("kv_block_idle_before_evict_p50_s", run) == "no evictions yet"
    assert why_unknown("kv_block_reuse_gap_p90_s", run) == "no evictions yet"
    assert why_unknown("kv_offload_load_gb_per_s", run).endswith("--sim-cpu-kv-gb GB")
    assert why_unknown("task_s_p50", run) == "no task completed yet"
    assert why_unknown("joules_per_task", run) == "no task completed yet"
    assert why_unknown("total_tokens_per_s_per_gpu", run) == NO_GPU_COUNT
    assert why_unknown("tokens_per_dollar_total", run) == NO_PRICE
    assert why_unknown("total_tokens_per_s_per_gpu_ci_low", run).startswith("no --precision")
    assert why_unknown("proxied_requests", run) == "no --proxy"
    assert why_unknown("capture_dir", run) == "no --capture"
    assert why_unknown("frontier_axis", run) == "not a sweep"
    assert why_unknown("cached_prompt_tokens_per_s_server", run) == "the server has no such counter"
    no_cached = simulated_run(cached_prompt_tokens=None)
    assert why_unknown("prefix_cache_hit_rate_client", no_cached) == NO_CACHED_TOKENS
    observing = Figures(samples=10, throughput_source="server", endpoints=[VLLM])
    assert why_unknown("ttft_p90_s", observing) == OBSERVING_ONLY
    assert why_unknown("kv_block_idle_before_evict_p50_s", observing) == "needs --kv-cache-metrics, or no evictions yet"
    assert why_unknown("agentx_valid", observing) == "not judged: the run sends no load of its own"
    assert why_unknown("duration_s", Figures(samples=0)) == "the run ended before its first sample"
    point = PointFigures(index=0, users=4, warmup_s=1.0, duration_s=6.0, window_start_s=1.0)
    assert why_unknown("total_tokens_per_s_per_gpu_ci_low", point) == "too few requests in the point for an interval"
    assert why_unknown("ttft_p90_s", point) == "no request completed yet"  # a point is its own load's window


@pytest.mark.parametrize(
    "figures",
    [
        simulated_run(),
        Figures(samples=10, throughput_source="server", endpoints=[VLLM]),
        Figures(samples=3),
        Report(samples=10, throughput_source="client", frontier_axis="e2e_interactivity", tasks_completed=2),
    ],
    ids=["simulated run", "observing a vLLM", "no server, no load", "a sweep"],
)
def test_every_declared_figure_has_a_reason_of_its_family(figures: Figures) -> None:
    """A figure added without its family's rule would be "not measured in this run": caught here."""
    for key, fig in FIGURES.items():
        reason = why_unknown(key, figures)
        assert reason and reason != NOT_MEASURED, key
        assert "(" not in reason or reason.endswith(")") or "--" in reason, (key, reason)  # a phrase, not nested
        if fig.interval:
            for ci in fig.interval_keys:
                assert why_unknown(ci, figures) != NOT_MEASURED


def test_speculation_and_the_servers_phases_say_what_is_missing() -> None:
    """A server that does not speculate, one that does but drafted nothing, a model with no golden length
    (its source says why), and the request phases of a server that exports no such histograms."""
    run = simulated_run()
    assert why_unknown("spec_acceptance_length", run) == "the servers do not speculate: no spec_decode counters"
    assert why_unknown("spec_golden_acceptance_length", run) == "the servers do not speculate: no spec_decode counters"
    idle = run.updated(spec_draft_length=3, spec_golden_source="n/a: no golden acceptance length for 'tiny'")
    assert why_unknown("spec_acceptance_rate", idle) == "no draft was verified in the window"
    assert why_unknown("spec_golden_acceptance_length", idle) == "no golden acceptance length for 'tiny'"
    assert why_unknown("spec_acceptance_vs_golden", idle) == "no golden acceptance length for 'tiny'"
    no_phases = "the servers export no request-phase histograms (vLLM's request_queue_time_seconds, …)"
    assert why_unknown("server_queue_s_mean", run) == no_phases
    assert why_unknown("server_preemptions_per_request", run) == no_phases
    assert why_unknown("ttft_outside_server_s_mean", run.updated(ttft_s_mean=0.2)) == no_phases
    observing = Figures(samples=10, throughput_source="server", endpoints=[VLLM])
    assert why_unknown("ttft_outside_server_s_mean", observing) == "no client TTFT: the run sent no calls of its own"
    assert why_unknown("server_decode_s_mean", Figures(samples=3)) == "no server metrics"

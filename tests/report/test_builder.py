"""The report's figures, each computed by hand from the stream in `_snaps` (docs/metrics.md)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentx_tui.report import REPORT_KEYS, ReportBuilder
from agentx_tui.report._series import SeriesBuffer
from agentx_tui.snapshot import ClientHealth, PointFigures, RunIntervals, Snapshot, WorkerLossRow
from tests.report._snaps import A, B, stream

# The contract keys scripts rely on (docs/metrics.md): each is a declared figure of every report.
DOCUMENTED_KEYS = [
    "target",
    "model",
    "engine_version",
    "workload",
    "users",
    "duration_s",
    "requests_completed",
    "requests_failed",
    "error_rate",
    "output_tokens_per_s",
    "prompt_tokens_per_s",
    "cached_prompt_tokens_per_s",
    "total_tokens_per_s",
    "per_user_output_tokens_per_s_p50",
    "ttft_p50_s",
    "ttft_p90_s",
    "ttft_p99_s",
    "itl_p50_s",
    "itl_p90_s",
    "itl_p99_s",
    "prefix_cache_hit_rate_server",
    "prefix_cache_hit_rate_client",
    "prefix_cache_hit_rate_ceiling",
    "kv_cache_usage_mean",
    "kv_cache_usage_max",
    "preemptions",
    "gpu_util_mean",
    "gpu_power_w_mean",
    "usd_per_gpu_hour",
    "gpus",
    "usd_spent",
    "tokens_per_dollar_total",
    "tokens_per_dollar_output",
    "usd_per_million_output_tokens",
    "endpoints",
    "users_detail",
    "interactivity_p50_tokens_per_s",
    "interactivity_p90_tokens_per_s",
    "total_tokens_per_s_per_gpu",
    "output_tokens_per_s_per_gpu",
    "gpus_source",
    "e2e_p90_s",
    "client_cpu_cores_mean",
    "client_loop_lag_p99_s",
    "client_saturated",
    "workers",
    # Since the proxy (docs/metrics.md, the report keys):
    "proxied_requests",
    "proxied_sessions",
    "proxy_added_ttft_p50_s",
    "proxy_added_ttft_p99_s",
    "captured_sessions",
    "capture_dir",
    # Since the trust work (docs/sweeps.md):
    "total_tokens_per_s_per_gpu_ci_low",
    "total_tokens_per_s_per_gpu_ci_high",
    "interactivity_p90_tokens_per_s_ci_low",
    "interactivity_p90_tokens_per_s_ci_high",
    "ci_method",
    "stopped_early",
    "stop_reason",
    # Since the North Star work (docs/metrics.md):
    "schedule_lag_p50_s",
    "schedule_lag_p90_s",
    "schedule_lag_p99_s",
    "e2e_interactivity_p50_tokens_per_s",
    "e2e_interactivity_p75_tokens_per_s",
    "e2e_interactivity_p90_tokens_per_s",
    "e2e_interactivity_p90_tokens_per_s_ci_low",
    "e2e_interactivity_p90_tokens_per_s_ci_high",
    "frontier_axis",
    # Agents, not requests (docs/metrics.md, "Tasks"):
    "tasks_completed",
    "tasks_running",
    "tasks_failed",
    "task_s_p50",
    "task_s_p90",
    "task_model_share",
    "steps_per_task_mean",
    "tokens_per_task_mean",
    "output_tokens_per_task_mean",
    "usd_per_task",
    "tasks_per_hour_per_gpu",
    "step_curve",
    # AgentX validity (docs/sweeps.md):
    "agentx_valid",
    "agentx_invalid_reasons",
]


def build(snaps: list[Snapshot], **kw: str | None) -> dict[str, Any]:
    """The report as its JSON has it."""
    builder = ReportBuilder()
    for s in snaps:
        builder.add(s)
    return builder.build(**kw).model_dump()


def test_keys_are_the_declared_figures_and_hold_the_contract() -> None:
    assert set(DOCUMENTED_KEYS) <= set(REPORT_KEYS)
    assert len(set(REPORT_KEYS)) == len(REPORT_KEYS)
    for extra in (
        "partial",
        "partial_reason",
        "simulated",
        "agentx_version",
        "started_at",
        "prefix_cache_hit_rate_server_source",
    ):
        assert extra in REPORT_KEYS
    report = build(stream())
    assert list(report) == list(REPORT_KEYS)


def test_whole_run_figures_by_hand() -> None:
    r = build(stream())
    # Last tick i=4 at t=1008, first at t=1000.
    assert r["duration_s"] == 8.0
    assert r["target"] == "attach http://10.0.0.1:8000" and r["workload"] == "chat"
    assert r["model"] == "tiny" and r["engine_version"] == "0.32.0"
    assert r["users"] == 3 and r["users_max"] == 3
    assert r["requests_completed"] == 12 and r["requests_failed"] == 1
    assert r["error_rate"] == pytest.approx(1 / 13)
    # Client totals at i=4: output 600, prompt 6000, cached 2800 over 8 s.
    assert r["throughput_source"] == "client"
    assert r["output_tokens_per_s"] == pytest.approx(75.0)
    assert r["prompt_tokens_per_s"] == pytest.approx(750.0)
    assert r["cached_prompt_tokens_per_s"] == pytest.approx(350.0)
    assert r["total_tokens_per_s"] == pytest.approx(825.0)
    assert (r["output_tokens"], r["prompt_tokens"], r["cached_prompt_tokens"]) == (600, 6000, 2800)
    # Server totals summed over A and B: generation 400 + 200, prompt 4000 + 2000.
    assert r["output_tokens_per_s_server"] == pytest.approx(600 / 8)
    assert r["total_tokens_per_s_server"] == pytest.approx(6600 / 8)
    # Run percentiles, not the window ones (window p90 is 0.25 in every tick).
    assert (r["ttft_p50_s"], r["ttft_p90_s"], r["ttft_p99_s"]) == (0.1, 0.2, 0.3)
    assert (r["itl_p50_s"], r["itl_p90_s"], r["itl_p99_s"]) == (0.01, 0.02, 0.05)
    assert r["per_user_output_tokens_per_s_p50"] == 42.0
    # Hit rates: server Δhits/Δqueries = (2400+400)/(4000+2000); client 2800/6000; ceiling 3600/6000.
    assert r["prefix_cache_hit_rate_server"] == pytest.approx(2800 / 6000)
    assert r["prefix_cache_hit_rate_client"] == pytest.approx(2800 / 6000)
    assert r["prefix_cache_hit_rate_ceiling"] == pytest.approx(0.6)
    assert "Δhits / Δqueries" in str(r["prefix_cache_hit_rate_server_source"])
    # KV: the aggregate is the mean of A (0.1(i+1)) and B (0.2): mean over ticks 0.25, max 0.35.
    assert r["kv_cache_usage_mean"] == pytest.approx(0.25)
    assert r["kv_cache_usage_max"] == pytest.approx(0.35)
    assert r["preemptions"] == 4.0
    # GPU utilisation: per tick (0.5 + 0.1i)/2, mean 0.35; power: per tick sum 500 + 10i, mean 520 W.
    assert r["gpu_util_mean"] == pytest.approx(0.35)
    assert r["gpu_power_w_mean"] == pytest.approx(520.0)
    # Cost: the meter's run-wide figures of the last tick.
    spent = 4.0 * 8.5 / 3600
    assert r["usd_per_gpu_hour"] == 2.0 and r["gpus"] == 2
    assert r["usd_spent"] == pytest.approx(spent)
    assert r["tokens_per_dollar_total"] == pytest.approx(6600 / spent)
    assert r["tokens_per_dollar_output"] == pytest.approx(600 / spent)
    assert r["usd_per_million_output_tokens"] == pytest.approx(spent * 1e6 / 600)
    assert r["cost_mode"] == "rental" and r["price_source"] == "--gpu-price"
    assert r["partial"] is False and r["partial_reason"] is None
    assert r["started_at"] == 999.5 and r["ended_at"] == 1008.0 and r["samples"] == 5
    assert r["errors_by_kind"] == {"timeout": 1}


def test_per_endpoint_figures_by_hand() -> None:
    r = build(stream())
    eps = r["endpoints"]
    assert isinstance(eps, list)
    a, b = eps
    assert a["url"] == A and b["url"] == B
    assert a["output_tokens_per_s"] == pytest.approx(400 / 8)
    assert a["prompt_tokens_per_s"] == pytest.approx(4000 / 8)
    assert a["cached_prompt_tokens_per_s"] == pytest.approx(2400 / 8)
    assert a["total_tokens_per_s"] == pytest.approx(4400 / 8)
    assert a["prefix_cache_hit_rate_server"] == pytest.approx(0.6)
    assert b["prefix_cache_hit_rate_server"] == pytest.approx(0.2)
    assert a["kv_cache_usage_mean"] == pytest.approx(0.3) and a["kv_cache_usage_max"] == pytest.approx(0.5)
    assert b["kv_cache_usage_mean"] == pytest.approx(0.2)
    assert (a["generation_tokens"], a["prompt_tokens"], a["preemptions"]) == (400.0, 4000.0, 4.0)
    assert b["requests_finished"] == 4.0


def test_users_detail_is_one_row_per_session_of_the_last_tick() -> None:
    r = build(stream())
    rows = r["users_detail"]
    assert isinstance(rows, list)
    assert [row["user"] for row in rows] == [0, 1]
    assert rows[1]["decode_tokens_per_s"] == 41.0 and rows[0]["output_tokens"] == 300


def stopped(
    snaps: list[Snapshot], *, drain_s: float, held: tuple[int, ...], paused_by_user: bool = False
) -> list[Snapshot]:
    """`snaps` with one more tick `drain_s` after the last, taken after the stop (run state "stopping"), in
    which the users `held` wait at the drain's pause gate ("paused")."""
    last = snaps[-1]
    if paused_by_user:
        rows = tuple(row.model_copy(update={"state": "paused"}) for row in last.sessions)
        last = last.model_copy(update={"run": last.run.model_copy(update={"state": "paused"}), "sessions": rows})
        snaps = [*snaps[:-1], last]
    rows = tuple(
        row.model_copy(update={"state": "paused" if row.user in held else "tool", "requests": row.requests + 1})
        for row in last.sessions
    )
    final = last.model_copy(
        update={
            "seq": last.seq + 1,
            "time": last.time + drain_s,
            "elapsed_s": last.elapsed_s + drain_s,
            "run": last.run.model_copy(update={"state": "stopping"}),
            "sessions": rows,
        }
    )
    return [*snaps, final]


def test_the_users_states_are_theirs_when_the_run_stopped_and_their_counts_the_final_ones() -> None:
    """The drain holds every user at the pause gate before its next call: a user never paused must not
    read "paused" in the report (it did: every row of a plain run said so)."""
    rows = build(stopped(stream(), drain_s=3.5, held=(0,)))["users_detail"]
    assert [(row["state"], row["requests"]) for row in rows] == [("decoding", 5), ("tool", 5)]
    paused = build(stopped(stream(), drain_s=3.5, held=(0, 1), paused_by_user=True))["users_detail"]
    assert [row["state"] for row in paused] == ["paused", "paused"]  # paused by its user before the stop


def test_duration_covers_the_drain_and_drain_s_says_how_much_of_it() -> None:
    r = build(stopped(stream(), drain_s=3.5, held=()))
    assert r["duration_s"] == pytest.approx(8.0 + 3.5)  # first sample to last, the drain included
    assert r["drain_s"] == pytest.approx(3.5)
    assert build(stream())["drain_s"] is None  # not stopped: a report of the stream so far


def test_unknown_figures_stay_null_never_zero() -> None:
    r = build(stream(with_gpus=False, with_price=False, cached_reported=False))
    for key in (
        "gpu_util_mean",
        "gpu_power_w_mean",
        "usd_per_gpu_hour",
        "gpus",
        "usd_spent",
        "tokens_per_dollar_total",
        "tokens_per_dollar_output",
        "usd_per_million_output_tokens",
        "cached_prompt_tokens_per_s",
        "prefix_cache_hit_rate_client",
        "cached_prompt_tokens",
    ):
        assert r[key] is None, key
    # The server's own cached counter is still known.
    assert r["cached_prompt_tokens_per_s_server"] == pytest.approx(2800 / 8)


def test_observe_only_takes_throughput_from_the_servers() -> None:
    r = build(stream(with_client=False))
    assert r["throughput_source"] == "server"
    assert r["output_tokens_per_s"] == pytest.approx(600 / 8)
    assert r["requests_completed"] == 12.0
    for key in (
        "requests_failed",
        "error_rate",
        "ttft_p90_s",
        "itl_p50_s",
        "prefix_cache_hit_rate_client",
        "prefix_cache_hit_rate_ceiling",
        "per_user_output_tokens_per_s_p50",
    ):
        assert r[key] is None, key
    assert r["users_detail"] == []


def test_no_requests_gives_a_null_error_rate() -> None:
    r = build(stream(n=1))
    assert r["requests_completed"] == 0 and r["error_rate"] is None
    assert r["duration_s"] == 0.0 and r["output_tokens_per_s"] is None  # one sample: no rate


def test_partial_reports_carry_the_reason() -> None:
    r = build(stream(), partial_reason="stopped by SIGTERM")
    assert r["partial"] is True and r["partial_reason"] == "stopped by SIGTERM"
    assert r["output_tokens_per_s"] == pytest.approx(75.0)


def test_a_run_without_samples_is_partial_with_every_key_null() -> None:
    r = ReportBuilder().build().model_dump()
    assert list(r) == list(REPORT_KEYS)
    assert r["partial"] is True and "before its first sample" in str(r["partial_reason"])
    assert r["output_tokens_per_s"] is None and r["duration_s"] is None and r["endpoints"] == []


def test_series_stays_bounded_and_averages() -> None:
    builder = ReportBuilder(max_series_points=50)
    base = stream(n=1)[0]
    for i in range(1003):
        builder.add(base.model_copy(update={"seq": i, "time": 1000.0 + i, "elapsed_s": float(i)}))
    series = builder.series()
    assert 25 <= len(series) <= 50
    assert series.ticks_per_point == 32
    assert all(v == pytest.approx(70.0) for v in series.values["output_tokens_per_s"])
    assert series.elapsed_s[0] == pytest.approx(15.5)  # mean of ticks 0..31
    assert series.elapsed_s == tuple(sorted(series.elapsed_s))
    assert not any(math.isnan(x) for x in series.elapsed_s)


def test_replicas_with_different_models_are_all_named() -> None:
    snaps = stream(2)
    last = snaps[-1]
    b = last.endpoints[1].model_copy(update={"model": "other", "engine_version": "0.31.0"})
    snaps[-1] = last.model_copy(update={"endpoints": (last.endpoints[0], b)})
    r = build(snaps)
    assert r["model"] == "other, tiny" and r["engine_version"] == "0.31.0, 0.32.0"


@given(n=st.integers(1, 3000), max_points=st.integers(2, 600))
@settings(max_examples=40, deadline=None)
def test_series_buffer_is_bounded_and_keeps_every_tick(n: int, max_points: int) -> None:
    buf = SeriesBuffer(max_points)
    for i in range(n):
        buf.add(float(i), {"kv_cache_usage": float(i % 7)})
    series = buf.series()
    assert 1 <= len(series) <= max_points
    # Every point but the newest covers `ticks_per_point` ticks, so the ticks add up to n.
    full = len(series) - 1
    assert full * series.ticks_per_point < n <= len(series) * series.ticks_per_point
    assert series.elapsed_s == tuple(sorted(series.elapsed_s))


def test_a_run_without_precision_has_null_intervals() -> None:
    r = build(stream())
    for key in (
        "total_tokens_per_s_per_gpu_ci_low",
        "total_tokens_per_s_per_gpu_ci_high",
        "interactivity_p90_tokens_per_s_ci_low",
        "interactivity_p90_tokens_per_s_ci_high",
        "ci_method",
        "stopped_early",
        "stop_reason",
        "precision",
    ):
        assert r[key] is None, key


def test_a_run_with_precision_carries_its_intervals_over_to_its_figures() -> None:
    """The window's intervals (±10% throughput, −5%/+4% interactivity around the window's own figures)
    keep their relative widths around the report's whole-run figures."""
    snaps = stream()
    intervals = RunIntervals(
        precision=0.05,
        requests=120,
        total_tokens_per_s_per_gpu=500.0,
        interactivity_p90_tokens_per_s=50.0,
        intervals={"total_tokens_per_s_per_gpu": (450.0, 550.0), "interactivity_p90_tokens_per_s": (47.5, 52.0)},
        ci_method="throughput: cluster standard error over 12 session trees; p90 interactivity: batch means",
        stopped_early=True,
        stop_reason="precision ±5% reached: throughput ±4.0%, p90 interactivity ±3.0% after 120 requests",
    )
    cost = snaps[-1].cost.model_copy(update={"gpus": 2, "gpus_source": "--gpus"})
    assert snaps[-1].client is not None
    client = snaps[-1].client.model_copy(
        update={"run": snaps[-1].client.run.updated(interactivity_p90_tokens_per_s=48.0)}
    )
    snaps[-1] = snaps[-1].model_copy(update={"intervals": intervals, "cost": cost, "client": client})
    r = build(snaps)
    tput, inter = r["total_tokens_per_s_per_gpu"], r["interactivity_p90_tokens_per_s"]
    assert isinstance(tput, float) and isinstance(inter, float)
    assert r["total_tokens_per_s_per_gpu_ci_low"] == pytest.approx(tput * 0.9)
    assert r["total_tokens_per_s_per_gpu_ci_high"] == pytest.approx(tput * 1.1)
    assert r["interactivity_p90_tokens_per_s_ci_low"] == pytest.approx(inter * 0.95)
    assert r["interactivity_p90_tokens_per_s_ci_high"] == pytest.approx(inter * 1.04)
    assert r["stopped_early"] is True and r["precision"] == 0.05
    assert str(r["stop_reason"]).startswith("precision ±5% reached")
    assert str(r["ci_method"]).endswith("; over the run from its first tick")
    # An interval that could not be told stays null, its figure known.
    unknown = intervals.updated(intervals={"interactivity_p90_tokens_per_s": (None, 52.0)})
    snaps[-1] = snaps[-1].model_copy(update={"intervals": unknown})
    r = build(snaps)
    assert r["interactivity_p90_tokens_per_s_ci_low"] is None and r["interactivity_p90_tokens_per_s_ci_high"] is None
    assert r["interactivity_p90_tokens_per_s"] is not None


def test_client_health_figures_come_from_the_last_ticks_run_wide_figures() -> None:
    snaps = stream()
    health = ClientHealth(
        workers=2, cpu_cores=1.4, cpu_us_per_token=30.0, run_cpu_cores_mean=0.8, run_cpu_us_per_token=12.5,
        run_loop_lag_p99_s=0.004, run_saturated=True, run_reason="a load process used 0.95 of a core",
    )  # fmt: skip
    snaps[-1] = snaps[-1].model_copy(update={"client_health": health})
    r = build(snaps)
    assert r["client_cpu_cores_mean"] == 0.8 and r["client_cpu_us_per_token"] == 12.5  # run-wide, not the tick's
    assert r["client_loop_lag_p99_s"] == 0.004 and r["workers"] == 2
    assert r["client_saturated"] is True and r["client_saturated_reason"] == "a load process used 0.95 of a core"
    observing = build(stream())  # no load generator: nothing to judge
    assert observing["client_cpu_us_per_token"] is None and observing["client_saturated"] is None


def _losing(*losses: WorkerLossRow, users: int = 8) -> list[Snapshot]:
    """The stream with a load of two workers whose losses the last two ticks carry (`users` driven then)."""
    snaps = stream()
    for i in (3, 4):
        run = snaps[i].run.model_copy(update={"users": users, "load_losses": losses})
        snaps[i] = snaps[i].model_copy(update={"run": run, "client_health": ClientHealth(workers=2)})
    snaps[0] = snaps[0].model_copy(update={"run": snaps[0].run.model_copy(update={"users": 16})})
    return snaps


def _loss(restarted_at_s: float | None = None) -> WorkerLossRow:
    return WorkerLossRow(
        at_s=6.4, worker=2, workers=2, pid=31337, how="SIGKILL", users=16, users_lost=8, users_left=8,
        restarted_at_s=restarted_at_s,
    )  # fmt: skip


def test_a_lost_load_worker_makes_the_run_partial_and_its_users_true() -> None:
    r = build(_losing(_loss()))
    assert r["partial"] is True
    assert r["partial_reason"] == "load worker 2 of 2 died at 6 s (SIGKILL): 8 of 16 users were not driven from then on"
    assert r["users"] == 8 and r["users_max"] == 16 and r["users_lost"] == 8
    (row,) = r["worker_losses"]
    assert row == {
        "at_s": 6.4, "worker": 2, "workers": 2, "pid": 31337, "how": "SIGKILL", "users": 16, "users_lost": 8,
        "users_left": 8, "point": None, "restarted_at_s": None, "restart_error": None,
    }  # fmt: skip
    # Cut short too (a signal): both reasons, the cut first.
    both = build(_losing(_loss()), partial_reason="stopped by SIGTERM")
    assert both["partial_reason"] == f"stopped by SIGTERM; {r['partial_reason']}"


def test_users_a_sweep_restarted_are_counted_but_the_run_is_whole() -> None:
    r = build(_losing(_loss(restarted_at_s=9.0), users=16))
    assert r["partial"] is False and r["partial_reason"] is None
    assert r["users_lost"] == 8 and r["users"] == 16 and r["worker_losses"][0]["restarted_at_s"] == 9.0
    # A load that lost nothing says so: 0 and no rows (observing only: null, there is no load).
    whole = build(_losing())
    assert whole["users_lost"] == 0 and whole["worker_losses"] == [] and whole["partial"] is False
    assert build(stream(with_client=False))["users_lost"] is None


def test_a_warm_up_s_window_gives_the_client_figures_and_says_which_keys_it_gave() -> None:
    """A plain run with --warmup (docs/metrics.md, "Warm-up"): latency, hit rates and rates are the
    window's; totals, cost spent and the servers' token rates stay the whole run's; `window_keys` says which."""
    snaps = stream()
    whole = build(snaps)
    window = PointFigures(
        index=0, users=4, warmup_s=3.0, duration_s=5.0, window_start_s=3.0, requests=30,
        ttft_p90_s=0.05, total_tokens_per_s=900.0, prompt_tokens_per_s=800.0, prefix_cache_hit_rate_client=0.9,
        prefix_cache_hit_rate_server=0.88, error_rate=0.0, cold_start_figures=[],
    )  # fmt: skip
    snaps[-1] = snaps[-1].model_copy(update={"measured": window})
    r = build(snaps)
    assert r["warmup_s"] == 3.0 and r["window_s"] == 5.0
    assert r["ttft_p90_s"] == 0.05 and r["total_tokens_per_s"] == 900.0 and r["prompt_tokens_per_s"] == 800.0
    assert r["prefix_cache_hit_rate_client"] == 0.9 and r["prefix_cache_hit_rate_server"] == 0.88
    assert r["error_rate"] == 0.0 and r["cold_start_figures"] == []
    keys = r["window_keys"]
    assert {"ttft_p90_s", "total_tokens_per_s", "prefix_cache_hit_rate_server", "cold_start_note"} <= set(keys)
    for total in ("requests_completed", "prompt_tokens", "output_tokens", "usd_spent", "total_tokens_per_s_server"):
        assert total not in keys and r[total] == whole[total], total
    # A figure the window does not know is null, never the warm-up's: the client's ITL p90 here.
    assert r["itl_p90_s"] is None and whole["itl_p90_s"] is not None


def test_the_gpu_count_is_the_meters_never_the_local_machines() -> None:
    """A remote target whose GPU count is unknown: the local NVML GPUs this process sees are not its GPUs,
    so `gpus` is null and no per-GPU or dollar figure is made up from them."""
    snaps = stream()  # two local GPUs on every tick
    unknown = [
        s.model_copy(update={"cost": s.cost.model_copy(update={"gpus": None, "gpus_source": None})}) for s in snaps
    ]
    assert all(len(s.gpu.gpus) == 2 for s in unknown)
    r = build(unknown)
    assert r["gpus"] is None and r["total_tokens_per_s_per_gpu"] is None
    assert build(snaps)["gpus"] == 2


def test_the_report_says_how_long_the_run_was_paused() -> None:
    """Its rates are over duration_s, the pause inside it: the report says how much of it was a pause."""
    snaps = stream()
    assert build(snaps)["paused_s"] == 0.0
    snaps[-1] = snaps[-1].model_copy(update={"run": snaps[-1].run.model_copy(update={"paused_s": 2.5})})
    assert build(snaps)["paused_s"] == 2.5

"""The run's report (docs/metrics.md), built incrementally from the Snapshot stream.

Whole-run figures come from the *last* snapshot's run totals (server `totals`, the client's totals
and run percentiles, the cost meter's run-wide figures), divided by ``duration_s`` = last.time −
first.time. Only what the snapshots cannot carry is accumulated here, in O(1) memory per tick:

- ``kv_cache_usage_mean/max``: over the ticks where the aggregate endpoint reported KV usage (the
  aggregate is the mean over the endpoints that are up);
- ``gpu_util_mean``: per tick the mean utilisation of the GPUs that reported one, then the mean over
  those ticks;
- ``gpu_power_w_mean``: per tick the *sum* of the GPUs' power (the whole node's draw, what the
  owned-hardware cost pays for), then the mean over the ticks that had a reading;
- a downsampled series (≤ 500 points) for the Markdown charts.

Task figures (``tasks_completed`` … ``step_curve``) are the last snapshot's whole-run ``tasks``, as they
are; null when observing only (no calls of the run's own).

Throughput (``output_tokens_per_s`` …) is client-side when a load driver ran (tokens the driver
received), else server-side (the servers' token counters); ``throughput_source`` says which, and the
``*_server`` keys always give the server-side figures. ``prefix_cache_hit_rate_server`` is the run
window Δhits/Δqueries of the servers' prefix-cache counters (vLLM's log uses the last 1000 requests
instead). Cost figures are the cost meter's run-wide ones (docs/metrics.md, at the price in force at the
end), taken as they are so the report agrees with the meter on screen.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentx_tui import __version__
from agentx_tui.report._keys import REPORT_KEYS
from agentx_tui.report._model import Report
from agentx_tui.report._series import ReportSeries, SeriesBuffer
from agentx_tui.snapshot import EndpointFigures, EndpointTotals, ProxyState, RunIntervals, Snapshot, TaskFigures
from agentx_tui.snapshot.rates import rates
from agentx_tui.snapshot.stat import RunningStat, TickMeans, ratio

SERVER_HIT_RATE_SOURCE = "server prefix-cache counters over the run: Δhits / Δqueries (tokens)"
POWER_SOURCE = "sum of the GPUs' power per tick, mean over the ticks with a reading"


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


class ReportBuilder:
    def __init__(self, *, max_series_points: int = 500) -> None:
        self._first: Snapshot | None = None
        self._last: Snapshot | None = None
        self._samples = 0
        self._users_max = 0
        self._hardware = TickMeans()
        self._endpoint_kv: dict[str, RunningStat] = {}
        self._series = SeriesBuffer(max_series_points)

    def add(self, snap: Snapshot) -> None:
        if self._first is None:
            self._first = snap
        self._last = snap
        self._samples += 1
        self._users_max = max(self._users_max, snap.run.users)
        self._hardware.add(snap)
        for e in snap.endpoints:
            self._endpoint_kv.setdefault(e.url, RunningStat()).add(e.kv_cache_usage)
        self._series.add(snap.elapsed_s, _tick_values(snap))

    def publish(self, snap: Snapshot) -> None:
        """The tick loop's subscriber interface (run/subscribers.py)."""
        self.add(snap)

    def close(self) -> None:
        """Nothing to release: the run calls `build` once the stream has ended."""

    def series(self) -> ReportSeries:
        return self._series.series()

    def build(self, *, partial_reason: str | None = None) -> Report:
        # Every key is set, null where unknown: the report a reader gets always has them all.
        report: dict[str, Any] = dict.fromkeys(REPORT_KEYS)
        report.update(
            agentx_version=__version__,
            samples=self._samples,
            endpoints=[],
            users_detail=[],
            errors_by_kind={},
            prefix_cache_hit_rate_server_source=SERVER_HIT_RATE_SOURCE,
            gpu_power_w_mean_source=POWER_SOURCE,
        )
        first, last = self._first, self._last
        if first is None or last is None:
            report.update(partial=True, partial_reason=partial_reason or "the run ended before its first sample")
            return Report.model_validate(report)
        report.update(partial=partial_reason is not None, partial_reason=partial_reason)
        duration = last.time - first.time
        agg = last.aggregate
        report.update(
            target=last.run.target,
            simulated=last.run.simulated,
            workload=last.run.workload,
            output_scale=last.run.output_scale,
            users=last.run.users,
            users_max=self._users_max,
            started_at=first.run.started_at or first.time,
            ended_at=last.time,
            duration_s=duration,
            model=_joined(e.model for e in last.endpoints),
            engine_version=_joined(e.engine_version for e in last.endpoints),
            kv_cache_usage_mean=self._hardware.kv.mean,
            kv_cache_usage_max=self._hardware.kv.max,
            gpu_util_mean=self._hardware.gpu_util.mean,
            gpu_power_w_mean=self._hardware.gpu_power.mean,
        )
        server = _server_figures(agg.totals if agg else None, duration)
        report.update({f"{k}_server": server[k] for k in _RATE_KEYS})
        report.update(
            prefix_cache_hit_rate_server=server["prefix_cache_hit_rate_server"],
            prefix_cache_hit_rate_server_lifetime=agg.prefix_hit_rate_lifetime if agg else None,
            preemptions=server["preemptions"],
        )
        report.update(_client_figures(last, duration, server))
        report.update(_cost_figures(last))
        report.update(_per_gpu_figures(report, last))
        report.update(_health_figures(last))
        if last.tasks is not None:
            report.update(_task_figures(last.tasks))
        if last.sweep is not None:
            report.update(_sweep_figures(last))
        if last.proxy is not None:
            report.update(_proxy_figures(last.proxy))
        if last.intervals is not None:
            report.update(_interval_figures(report, last.intervals))
        report["endpoints"] = [self._endpoint(e, duration) for e in last.endpoints]
        report["users_detail"] = last.sessions
        return Report.model_validate(report)

    def _endpoint(self, e: EndpointFigures, duration: float) -> dict[str, Any]:
        kv = self._endpoint_kv.get(e.url, RunningStat())
        return {
            "url": e.url,
            "up": e.up,
            "status": e.status,
            "flavor": e.flavor,
            "model": e.model,
            "engine_version": e.engine_version,
            **_server_figures(e.totals, duration),
            "prefix_cache_hit_rate_server_lifetime": e.prefix_hit_rate_lifetime,
            "kv_cache_usage_mean": kv.mean,
            "kv_cache_usage_max": kv.max,
            "block_size": e.block_size,
            "num_gpu_blocks": e.num_gpu_blocks,
            **e.totals.model_dump(),
        }


def _proxy_figures(proxy: ProxyState) -> dict[str, Any]:
    """Your own traffic (docs/capture.md): what went through `--proxy` over the run."""
    return {
        "proxied_requests": proxy.proxied_requests,
        "proxied_sessions": proxy.proxied_sessions,
        "proxy_added_ttft_p50_s": proxy.added_ttft.p50,
        "proxy_added_ttft_p99_s": proxy.added_ttft.p99,
        "captured_sessions": proxy.captured_sessions,
        "capture_dir": proxy.capture_dir,
    }


_RATE_KEYS = (
    "output_tokens_per_s",
    "prompt_tokens_per_s",
    "cached_prompt_tokens_per_s",
    "total_tokens_per_s",
)


def _per_s(value: float | None, duration: float) -> float | None:
    return ratio(value, duration)


def _server_figures(t: EndpointTotals | None, duration: float) -> dict[str, Any]:
    t = t or EndpointTotals()
    return {
        "output_tokens_per_s": _per_s(t.generation_tokens, duration),
        "prompt_tokens_per_s": _per_s(t.prompt_tokens, duration),
        "cached_prompt_tokens_per_s": _per_s(t.cached_prompt_tokens, duration),
        "total_tokens_per_s": _per_s(_add(t.prompt_tokens, t.generation_tokens), duration),
        "prefix_cache_hit_rate_server": ratio(t.prefix_cache_hits, t.prefix_cache_queries),
        "preemptions": t.preemptions,
        "requests_finished": t.requests_finished,
    }


def _client_figures(last: Snapshot, duration: float, server: dict[str, Any]) -> dict[str, Any]:
    client = last.client
    agg = last.aggregate
    if client is None:
        # Observing only: the servers' counters are all there is; failures cannot be seen.
        st = agg.totals if agg else EndpointTotals()
        return {
            "throughput_source": "server" if agg else None,
            **{k: server[k] for k in _RATE_KEYS},
            "output_tokens": st.generation_tokens,
            "prompt_tokens": st.prompt_tokens,
            "cached_prompt_tokens": st.cached_prompt_tokens,
            "requests_completed": st.requests_finished,
        }
    t = client.totals
    cached = t.cached_prompt_tokens if t.cached_tokens_reported else None
    done = t.requests_completed + t.requests_failed
    return {
        "throughput_source": "client",
        "output_tokens": t.output_tokens,
        "prompt_tokens": t.prompt_tokens,
        "cached_prompt_tokens": cached,
        "output_tokens_per_s": _per_s(t.output_tokens, duration),
        "prompt_tokens_per_s": _per_s(t.prompt_tokens, duration),
        "cached_prompt_tokens_per_s": _per_s(cached, duration),
        "total_tokens_per_s": _per_s(t.prompt_tokens + t.output_tokens, duration),
        "requests_completed": t.requests_completed,
        "requests_failed": t.requests_failed,
        "error_rate": t.requests_failed / done if done else None,
        "sessions_completed": t.sessions_completed,
        "errors_by_kind": dict(t.errors_by_kind),
        "per_user_output_tokens_per_s_p50": client.run_per_user_output_tokens_per_s_p50,
        "ttft_p50_s": client.run_ttft.p50,
        "ttft_p90_s": client.run_ttft.p90,
        "ttft_p99_s": client.run_ttft.p99,
        "itl_p50_s": client.run_itl.p50,
        "itl_p90_s": client.run_itl.p90,
        "itl_p99_s": client.run_itl.p99,
        "prefix_cache_hit_rate_client": ratio(cached, t.prompt_tokens),
        "prefix_cache_hit_rate_ceiling": ratio(
            t.ceiling_cacheable_tokens, t.prompt_tokens if t.ceiling_prompt_tokens is None else t.ceiling_prompt_tokens
        ),
        "interactivity_p50_tokens_per_s": client.run_interactivity_p50_tokens_per_s,
        "interactivity_p90_tokens_per_s": client.run_interactivity_p90_tokens_per_s,
        "e2e_p90_s": client.run_e2e.p90,
        "e2e_interactivity_p50_tokens_per_s": client.run_e2e_interactivity_p50_tokens_per_s,
        "e2e_interactivity_p75_tokens_per_s": client.run_e2e_interactivity_p75_tokens_per_s,
        "e2e_interactivity_p90_tokens_per_s": client.run_e2e_interactivity_p90_tokens_per_s,
        "schedule_lag_p50_s": client.schedule_lag_p50_s,
        "schedule_lag_p90_s": client.schedule_lag_p90_s,
        "schedule_lag_p99_s": client.schedule_lag_p99_s,
        "schedule_behind": client.schedule_behind,
        "schedule_users_needed": client.schedule_users_needed,
        "sessions_started": t.sessions_completed + t.sessions_ended_by_context,
    }


def _cost_figures(last: Snapshot) -> dict[str, Any]:
    c = last.cost
    return {
        "usd_per_gpu_hour": c.usd_per_gpu_hour,
        "gpus": c.gpus if c.gpus is not None else (len(last.gpu.gpus) or None),
        "usd_spent": c.usd_spent,
        "tokens_per_dollar_total": c.tokens_per_dollar_total,
        "tokens_per_dollar_output": c.tokens_per_dollar_output,
        "usd_per_million_output_tokens": c.usd_per_million_output_tokens,
        "price_source": c.price_source,
        "cost_mode": c.mode,
    }


def _per_gpu_figures(report: dict[str, Any], last: Snapshot) -> dict[str, Any]:
    """Throughput per GPU (docs/metrics.md): the run's figures over the GPUs behind the target."""
    gpus = last.cost.gpus if last.cost.gpus_source else None
    return {
        "total_tokens_per_s_per_gpu": ratio(report.get("total_tokens_per_s"), gpus),
        "output_tokens_per_s_per_gpu": ratio(report.get("output_tokens_per_s"), gpus),
        "gpus_source": last.cost.gpus_source,
    }


def _health_figures(last: Snapshot) -> dict[str, Any]:
    h = last.client_health
    if h is None:  # observing only: no load generator to judge
        return {"workers": None, "client_saturated": None, "client_cpu_us_per_token": None}
    return {
        "client_cpu_cores_mean": h.run_cpu_cores_mean,
        "client_cpu_us_per_token": h.run_cpu_us_per_token,
        "client_loop_lag_p99_s": h.run_loop_lag_p99_s,
        "client_saturated": h.run_saturated,
        "client_saturated_reason": h.run_reason,
        "workers": h.workers,
    }


def _task_figures(tasks: TaskFigures) -> dict[str, Any]:
    """Agents, not requests (docs/metrics.md, "Tasks"): the last tick's whole-run task figures. The run
    carries none when observing only: then every task key stays null."""
    return {
        **tasks.model_dump(exclude={"step_curve", "task_s_histogram"}),
        "step_curve": tasks.step_curve,
        "task_s_histogram": [{"upper_s": upper, "tasks": n} for upper, n in tasks.task_s_histogram],
    }


def _sweep_figures(last: Snapshot) -> dict[str, Any]:
    sweep = last.sweep
    assert sweep is not None
    return {
        "points": sweep.points,
        "frontier": sweep.frontier,
        "frontier_axis": sweep.frontier_axis,
        # On the frontier's axis, then on the other (docs/sweeps.md): the report writes each tier's flat
        # keys too, with `_decode` after T for the reads on decode interactivity (report/_model.py).
        "tiers": [*sweep.tiers, *(sweep.secondary_tiers or ())],
        "sweep_stop_reason": sweep.stop_reason,
        "precision": sweep.precision,
    }


def _carried(value: Any, low: float | None, high: float | None, around: float | None) -> tuple[Any, Any]:
    """An interval found around `around` (the precision window's own figure) carried over to `value`
    (the report's whole-run figure) by its relative widths; (None, None) when anything is unknown."""
    if not isinstance(value, int | float) or low is None or high is None or around is None or not around > 0:
        return None, None
    return min(value * low / around, value), max(value * high / around, value)


def _interval_figures(report: dict[str, Any], iv: RunIntervals) -> dict[str, Any]:
    """A plain run with --precision (docs/sweeps.md): its figures' intervals and why it ended."""
    tput = _carried(
        report.get("total_tokens_per_s_per_gpu"),
        iv.total_tokens_per_s_ci_low,
        iv.total_tokens_per_s_ci_high,
        iv.total_tokens_per_s,
    )
    inter = _carried(
        report.get("interactivity_p90_tokens_per_s"),
        iv.interactivity_p90_tokens_per_s_ci_low,
        iv.interactivity_p90_tokens_per_s_ci_high,
        iv.interactivity_p90_tokens_per_s,
    )
    e2e = _carried(
        report.get("e2e_interactivity_p90_tokens_per_s"),
        iv.e2e_interactivity_p90_tokens_per_s_ci_low,
        iv.e2e_interactivity_p90_tokens_per_s_ci_high,
        iv.e2e_interactivity_p90_tokens_per_s,
    )
    known = tput[0] is not None or inter[0] is not None or e2e[0] is not None
    return {
        "precision": iv.precision,
        "total_tokens_per_s_per_gpu_ci_low": tput[0],
        "total_tokens_per_s_per_gpu_ci_high": tput[1],
        "interactivity_p90_tokens_per_s_ci_low": inter[0],
        "interactivity_p90_tokens_per_s_ci_high": inter[1],
        "e2e_interactivity_p90_tokens_per_s_ci_low": e2e[0],
        "e2e_interactivity_p90_tokens_per_s_ci_high": e2e[1],
        "ci_method": f"{iv.ci_method}; over the run from its first tick" if known and iv.ci_method else None,
        "stopped_early": iv.stopped_early,
        "stop_reason": iv.stop_reason,
    }


def _joined(values: Iterable[str | None]) -> str | None:
    """One value, or several endpoints' distinct values joined (replicas may differ)."""
    distinct = sorted({v for v in values if v})
    return ", ".join(distinct) if distinct else None


def _tick_values(snap: Snapshot) -> dict[str, float | None]:
    """What the charts plot for one tick: the window figures the dashboard shows."""
    now = rates(snap)
    agg = snap.aggregate
    return {
        "output_tokens_per_s": now.output,
        "total_tokens_per_s": now.total,
        "kv_cache_usage": agg.kv_cache_usage if agg else None,
        "prefix_cache_hit_rate": now.prefix_hit_rate,
    }

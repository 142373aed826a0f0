"""The run's report (docs/metrics.md), built incrementally from the Snapshot stream.

Whole-run figures come from the *last* snapshot's run totals (server `totals`, the client's totals
and run percentiles, the cost meter's run-wide figures), divided by ``duration_s`` = last.time −
first.time. The first snapshot is taken just before the load starts; the last once the run has been
stopped and the requests then in flight have finished (the drain), so every request the figures count
lies inside the window. ``drain_s`` is that last stretch: the time from the tick before the last
snapshot (the one that stopped a timed run) to the last. The users (``users_detail``) are the last
snapshot's rows (their counts include the drain's requests) with the state each had before the stop:
the drain holds every user at the pause gate before its next call, which is not a pause of theirs.
Only what the snapshots cannot carry is accumulated here, in O(1) memory per tick:

- ``kv_cache_usage_mean/max``: over the ticks where the aggregate endpoint reported KV usage (the
  aggregate is the mean over the endpoints that are up);
- ``gpu_util_mean``: per tick the mean utilisation of the GPUs that reported one, then the mean over
  those ticks;
- ``gpu_power_w_mean``: per tick the *sum* of the GPUs' power (the whole node's draw, what the
  owned-hardware cost pays for), then the mean over the ticks that had a reading;
- a downsampled series (≤ 500 points) for the Markdown charts.

Each part of the report is a `Figures` set of its own (the run, the client's, the cost meter's, the
tasks'…), merged into one `Report` that has every key, null where unknown: a key that is not declared
(snapshot/figures.py) is refused where the part is made.

A load worker that died mid-run (docs/scale.md) is in ``worker_losses`` and ``users_lost``; ``users`` is
the users driven at the end (the lost ones left out), and a loss no fresh worker made good makes the
run ``partial``, with the reason.

Task figures (``tasks_completed`` … ``step_curve``) are the last snapshot's whole-run ``tasks``, as they
are; null when observing only (no calls of the run's own). So is AgentX validity (``agentx_valid``,
``agentx_invalid_reasons``, ``agentx_rules_met``): the last tick's verdict (run/agentx.py).

How close to the limit (``achieved_tflops_per_gpu`` … ``tokens_per_joule``, docs/metrics.md "Roofline" and
"Energy"): the roofline of the aggregate's estimated-work run totals over ``duration_s``, against the peak
the last tick was measured against; the energy is the GPUs' energy from the first tick that had one
(the first scrape of a DCGM page may come a tick late) to the last, its mean power over the report's
token rates, and over its tasks. Null (and ``achieved_source``/``peak_source`` say why) where unknown.

A plain run with ``--warmup`` (docs/metrics.md, "Warm-up"): the last snapshot carries its window after the
warm-up (``measured``), and the report takes its client figures from it (``WARMED_KEYS``: latencies,
interactivity, hit rates, rates and what follows from them), saying which in ``window_keys``; every
other figure stays the whole run's.

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
from agentx_tui.report._keys import FIGURES
from agentx_tui.report._model import Report
from agentx_tui.report._series import ReportSeries, SeriesBuffer
from agentx_tui.snapshot import (
    AgentXVerdict,
    EndpointReading,
    EndpointRow,
    EndpointTotals,
    Figures,
    PointFigures,
    ProxyState,
    RunIntervals,
    Snapshot,
    TaskReading,
    UserRow,
    acceptance_vs_golden,
    cache_figures,
    lost_users_reason,
    totals_server_time,
    ttft_outside_server,
)
from agentx_tui.snapshot.limits import achieved_source, limits_values, totals_roofline
from agentx_tui.snapshot.rates import rates
from agentx_tui.snapshot.stat import RunningStat, TickMeans, ratio
from agentx_tui.sweep import WARMED_KEYS

SERVER_HIT_RATE_SOURCE = "server prefix-cache counters over the run: Δhits / Δqueries (tokens)"
POWER_SOURCE = "sum of the GPUs' power per tick, mean over the ticks with a reading"


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


class ReportBuilder:
    def __init__(self, *, max_series_points: int = 500) -> None:
        self._first: Snapshot | None = None
        self._last: Snapshot | None = None
        self._previous: Snapshot | None = None  # the tick before the last: the run as it was stopped
        self._samples = 0
        self._users_max = 0
        self._hardware = TickMeans()
        self._endpoint_kv: dict[str, RunningStat] = {}
        self._series = SeriesBuffer(max_series_points)
        self._energy_from: tuple[float, float] | None = None  # (time, J) of the first tick with an energy

    def add(self, snap: Snapshot) -> None:
        if self._first is None:
            self._first = snap
        self._previous, self._last = self._last, snap
        self._samples += 1
        self._users_max = max(self._users_max, snap.run.users)
        self._hardware.add(snap)
        if self._energy_from is None and snap.limits is not None and snap.limits.energy_j is not None:
            self._energy_from = (snap.time, snap.limits.energy_j)
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
        """`partial_reason`: why the run was cut short (a signal, a crash); a run whose load lost users
        that no fresh worker took again is partial too, and says that as well."""
        first, last = self._first, self._last
        lost = lost_users_reason(last.run.load_losses) if last is not None else None
        partial_reason = "; ".join(why for why in (partial_reason, lost) if why) or None
        about = Figures(
            agentx_version=__version__,
            samples=self._samples,
            endpoints=[],
            users_detail=[],
            errors_by_kind={},
            prefix_cache_hit_rate_server_source=SERVER_HIT_RATE_SOURCE,
            gpu_power_w_mean_source=POWER_SOURCE,
            partial=partial_reason is not None or first is None,
            partial_reason=partial_reason or (None if first else "the run ended before its first sample"),
        )
        if first is None or last is None:
            return merged(about)
        duration = last.time - first.time
        agg = last.aggregate
        server = _server_figures(agg.totals if agg else None, duration)
        parts = [
            about,
            self._run_figures(first, last, duration),
            Figures(
                **{f"{k}_server": server[k] for k in _RATE_KEYS},
                prefix_cache_hit_rate_server=server["prefix_cache_hit_rate_server"],
                prefix_cache_hit_rate_server_lifetime=agg.prefix_hit_rate_lifetime if agg else None,
                preemptions=server["preemptions"],
            ),
            _cache_figures(agg, duration),
            _server_time(agg, last.client.run if last.client else Figures()),
            _client_figures(last, duration, server),
            _cost_figures(last),
            _health_figures(last),
        ]
        if last.tasks is not None:
            parts.append(_task_figures(last.tasks))
        if last.proxy is not None:
            parts.append(_proxy_figures(last.proxy))
        if last.agentx is not None:
            parts.append(_agentx_figures(last.agentx))
        report = merged(*parts)
        report = report.updated(**_per_gpu_figures(report, last).set_values())
        report = report.updated(**_limits_figures(report, last, duration, self._energy_from))
        if last.measured is not None:  # a plain run's --warmup: its client figures are the window's
            report = report.updated(**_warmed_figures(last.measured))
            report = report.updated(**_per_gpu_figures(report, last).set_values())
        if last.sweep is not None:
            report = report.updated(**_sweep_figures(last))
        if last.intervals is not None:
            report = report.updated(**_interval_figures(report, last.intervals).set_values())
        return report

    def _run_figures(self, first: Snapshot, last: Snapshot, duration: float) -> Figures:
        """What was measured, for how long, and the means over its ticks."""
        return Figures(
            target=last.run.target,
            simulated=last.run.simulated,
            workload=last.run.workload,
            output_scale=last.run.output_scale,
            users=last.run.users,
            users_max=self._users_max,
            started_at=first.run.started_at or first.time,
            ended_at=last.time,
            duration_s=duration,
            drain_s=self._drain_s(last),
            paused_s=last.run.paused_s,
            model=_joined(e.model for e in last.endpoints),
            engine_version=_joined(e.engine_version for e in last.endpoints),
            kv_cache_usage_mean=self._hardware.kv.mean,
            kv_cache_usage_max=self._hardware.kv.max,
            gpu_util_mean=self._hardware.gpu_util.mean,
            gpu_power_w_mean=self._hardware.gpu_power.mean,
            endpoints=[self._endpoint(e, duration) for e in last.endpoints],
            users_detail=self._users(last),
        )

    def _stopped(self, last: Snapshot) -> Snapshot | None:
        """The tick before `last` when `last` was taken after the run was stopped (the drain); else None."""
        previous = self._previous
        return previous if previous is not None and last.run.state == "stopping" else None

    def _drain_s(self, last: Snapshot) -> float | None:
        """From the tick that stopped the run to the last sample; None for a run that was not stopped (a
        report built mid-run) or of one tick."""
        stopped = self._stopped(last)
        return max(0.0, last.time - stopped.time) if stopped is not None else None

    def _users(self, last: Snapshot) -> list[UserRow]:
        """The last rows, each user held by the drain ("paused") with the state it had when the run was
        stopped (module docstring)."""
        stopped = self._stopped(last)
        if stopped is None or stopped.run.state == "paused":  # paused by its user: its rows say so truly
            return list(last.sessions)
        before = {_row_id(row): row.state for row in stopped.sessions}
        return [
            row.model_copy(update={"state": before[_row_id(row)]})
            if row.state == "paused" and before.get(_row_id(row), "paused") != "paused"
            else row
            for row in last.sessions
        ]

    def _endpoint(self, e: EndpointReading, duration: float) -> EndpointRow:
        kv = self._endpoint_kv.get(e.url, RunningStat())
        # Its counters' totals last: they are the figures above, as counted (the same preemptions).
        return EndpointRow(
            **{
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
                **cache_figures(e.totals, duration),
                "kv_offload_cpu": e.kv_offload_cpu,
                "kv_offload_cpu_bytes": e.kv_offload_cpu_bytes,
                **_golden_figures(e, totals_server_time(e.totals)),
                # The counts behind its token figures (the cache's are in its shares and rates above;
                # the estimated work is the run's roofline, not an endpoint's).
                **e.totals.model_dump(include=_ROW_COUNTS),
            }
        )


def _row_id(row: UserRow) -> tuple[int, int | None, bool, str]:
    """A users-table row across ticks: its user (or sub-agent of a parent, or real session)."""
    return row.user, row.parent, row.real, row.label


# An endpoint row's raw counts (`EndpointRow`): the token and prefix-cache counters over the run.
_ROW_COUNTS = {
    "prompt_tokens",
    "generation_tokens",
    "cached_prompt_tokens",
    "prefix_cache_queries",
    "prefix_cache_hits",
}


def _cache_figures(agg: EndpointReading | None, duration: float) -> Figures:
    """Where the servers' prompt tokens came from over the run, their offload traffic and KV residency
    (docs/metrics.md, "Cache"), and whether they offload KV to CPU memory."""
    if agg is None:
        return Figures()
    return Figures(
        **cache_figures(agg.totals, duration),
        kv_cache_metrics_sample=agg.kv_cache_metrics_sample,
        kv_offload_cpu=agg.kv_offload_cpu,
        kv_offload_cpu_bytes=agg.kv_offload_cpu_bytes,
    )


def _golden_figures(e: EndpointReading, server_time: dict[str, Any]) -> dict[str, Any]:
    """The run's server-time figures (snapshot/servertime.py) with the golden acceptance length the run
    found for the endpoint (or the aggregate) and the measured one's ratio to it."""
    return {
        **server_time,
        "spec_golden_acceptance_length": e.spec_golden_acceptance_length,
        "spec_acceptance_vs_golden": acceptance_vs_golden(
            server_time["spec_acceptance_length"], e.spec_golden_acceptance_length
        ),
    }


def _server_time(agg: EndpointReading | None, client: Figures) -> Figures:
    """Where a request's time went on the servers over the run, their speculative decoding against the
    golden acceptance length, and what the client waited for a first token outside the servers."""
    if agg is None:
        return Figures()
    figures = _golden_figures(agg, totals_server_time(agg.totals))
    return Figures(
        **figures,
        spec_golden_source=agg.spec_golden_source,
        ttft_outside_server_s_mean=ttft_outside_server(
            client.ttft_s_mean, figures["server_queue_s_mean"], figures["server_prefill_s_mean"]
        ),
    )


def merged(*parts: Figures) -> Report:
    """One report of `parts`, later ones winning: every declared key is set (null where no part knows
    it), so a reader always finds them all."""
    values: dict[str, Any] = dict.fromkeys(FIGURES)
    intervals: dict[str, Any] = {}
    for part in parts:
        found = part.set_values()
        intervals.update(found.pop("intervals"))
        values.update(found)
    return Report(**values, intervals=intervals)


def _proxy_figures(proxy: ProxyState) -> Figures:
    """Your own traffic (docs/capture.md): what went through `--proxy` over the run."""
    return Figures(
        proxied_requests=proxy.proxied_requests,
        proxied_sessions=proxy.proxied_sessions,
        proxy_added_ttft_p50_s=proxy.added_ttft.p50,
        proxy_added_ttft_p99_s=proxy.added_ttft.p99,
        captured_sessions=proxy.captured_sessions,
        capture_dir=proxy.capture_dir,
    )


def _agentx_figures(verdict: AgentXVerdict) -> Figures:
    """AgentX validity (docs/sweeps.md) as the run's last tick judged it: the verdict, why not, and what holds."""
    return Figures(
        agentx_valid=verdict.valid,
        agentx_invalid_reasons=list(verdict.reasons),
        agentx_rules_met=[rule.sentence for rule in verdict.met],
    )


# The token rates the servers' counters give too: each declared again as `<rate>_server` (snapshot/figures.py).
_RATE_KEYS = tuple(key.removesuffix("_server") for key in FIGURES if key.endswith("_tokens_per_s_server"))


def _per_s(value: float | None, duration: float) -> float | None:
    return ratio(value, duration)


def _server_figures(t: EndpointTotals | None, duration: float) -> dict[str, Any]:
    """An endpoint's (or the aggregate's) whole-run figures from its counters: `EndpointRow`'s keys."""
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


def _client_figures(last: Snapshot, duration: float, server: dict[str, Any]) -> Figures:
    """Throughput and the client's figures over the run: the load driver's (its run figures, and its
    token totals over the run's duration), else the servers' counters when observing only."""
    client = last.client
    agg = last.aggregate
    if client is None:
        # Observing only: the servers' counters are all there is; failures cannot be seen.
        st = agg.totals if agg else EndpointTotals()
        return Figures(
            throughput_source="server" if agg else None,
            **{k: server[k] for k in _RATE_KEYS},
            output_tokens=st.generation_tokens,
            prompt_tokens=st.prompt_tokens,
            cached_prompt_tokens=st.cached_prompt_tokens,
            requests_completed=st.requests_finished,
        )
    t = client.totals
    cached = t.cached_prompt_tokens if t.cached_tokens_reported else None
    done = t.requests_completed + t.requests_failed
    return client.run.updated(
        throughput_source="client",
        output_tokens=t.output_tokens,
        prompt_tokens=t.prompt_tokens,
        cached_prompt_tokens=cached,
        output_tokens_per_s=_per_s(t.output_tokens, duration),
        prompt_tokens_per_s=_per_s(t.prompt_tokens, duration),
        cached_prompt_tokens_per_s=_per_s(cached, duration),
        total_tokens_per_s=_per_s(t.prompt_tokens + t.output_tokens, duration),
        requests_completed=t.requests_completed,
        requests_failed=t.requests_failed,
        error_rate=t.requests_failed / done if done else None,
        sessions_completed=t.sessions_completed,
        errors_by_kind=dict(t.errors_by_kind),
        sessions_ended=t.sessions_completed + t.sessions_ended_by_context,
    )


def _cost_figures(last: Snapshot) -> Figures:
    c = last.cost
    return Figures(
        usd_per_gpu_hour=c.usd_per_gpu_hour,
        gpus=c.gpus,  # the per-GPU figures' divisor (never the local machine's count for a remote target)
        usd_spent=c.usd_spent,
        tokens_per_dollar_total=c.tokens_per_dollar_total,
        tokens_per_dollar_output=c.tokens_per_dollar_output,
        usd_per_million_output_tokens=c.usd_per_million_output_tokens,
        price_source=c.price_source,
        cost_mode=c.mode,
    )


def _per_gpu_figures(report: Report, last: Snapshot) -> Figures:
    """Throughput per GPU (docs/metrics.md): the run's figures over the GPUs behind the target."""
    gpus = last.cost.gpus if last.cost.gpus_source else None
    return Figures(
        total_tokens_per_s_per_gpu=ratio(report.total_tokens_per_s, gpus),
        output_tokens_per_s_per_gpu=ratio(report.output_tokens_per_s, gpus),
        gpus_source=last.cost.gpus_source,
    )


def _limits_figures(
    report: Report, last: Snapshot, duration: float, energy_from: tuple[float, float] | None
) -> dict[str, Any]:
    """How close to the limit over the run (docs/metrics.md, "Roofline" and "Energy"); nothing from a
    recording made before these figures (its ticks carry no `limits`). `energy_from`: (time, J) of the
    first tick that had an energy figure."""
    limits = last.limits
    if limits is None:
        return {}
    agg = last.aggregate
    engines = agg.estimating_engines if agg else None
    energy, seconds = None, None
    if energy_from is not None and limits.energy_j is not None:
        energy, seconds = max(0.0, limits.energy_j - energy_from[1]), last.time - energy_from[0]
    return limits_values(
        work=totals_roofline(agg.totals if agg else EndpointTotals(), engines, duration, limits.peak),
        peak=limits.peak,
        source=achieved_source(agg, limits.roofline_note),
        energy_j=energy,
        energy_from=limits.energy_source,
        seconds=seconds,
        gpus=last.cost.gpus if last.cost.gpus_source else None,
        total_tokens_per_s=report.total_tokens_per_s,
        output_tokens_per_s=report.output_tokens_per_s,
        tasks=report.tasks_completed,
    )


def _health_figures(last: Snapshot) -> Figures:
    h = last.client_health
    if h is None:  # observing only: no load generator to judge
        return Figures()
    return Figures(
        client_cpu_cores_mean=h.run_cpu_cores_mean,
        client_cpu_us_per_token=h.run_cpu_us_per_token,
        client_loop_lag_p99_s=h.run_loop_lag_p99_s,
        client_saturated=h.run_saturated,
        client_saturated_reason=h.run_reason,
        workers=h.workers,
        users_lost=sum(loss.users_lost for loss in last.run.load_losses),
        worker_losses=list(last.run.load_losses),
    )


def _task_figures(tasks: TaskReading) -> Figures:
    """Agents, not requests (docs/metrics.md, "Tasks"): the last tick's whole-run task figures. The run
    carries none when observing only: then every task key stays null."""
    return Figures(
        **tasks.model_dump(exclude={"step_curve", "task_s_histogram"}),
        step_curve=list(tasks.step_curve),
        task_s_histogram=[{"upper_s": upper, "tasks": n} for upper, n in tasks.task_s_histogram],
    )


def _sweep_figures(last: Snapshot) -> dict[str, Any]:
    sweep = last.sweep
    assert sweep is not None
    return {
        "points": list(sweep.points),
        "frontier": list(sweep.frontier),
        "frontier_axis": sweep.frontier_axis,
        # On the frontier's axis, then on the other (docs/sweeps.md): the report writes each tier's flat
        # keys too, with `_decode` after T for the reads on decode interactivity (report/_model.py).
        "tiers": [*sweep.tiers, *(sweep.secondary_tiers or ())],
        "sweep_stop_reason": sweep.stop_reason,
        "sweep_join": sweep.join,
        "precision": sweep.precision,
        # Every sweep's GPU time, probes and warm-ups included (null without a GPU count); a tier sweep's
        # probes, apart from its points (docs/sweeps.md, "A tier sweep").
        "sweep_gpu_seconds": sweep.gpu_seconds,
        "probes": list(sweep.probes) if sweep.mode == "tiers" else None,
    }


def _warmed_figures(window: PointFigures) -> dict[str, Any]:
    """A plain run with --warmup (docs/metrics.md, "Warm-up"): the figures its window measured over the
    requests started after the warm-up (`WARMED_KEYS`), and which keys those are; the rest stay the run's."""
    return {
        **{key: getattr(window, key) for key in WARMED_KEYS},
        "warmup_s": window.warmup_s,
        "window_s": window.duration_s,
        "window_keys": list(WARMED_KEYS),
    }


def _carried(value: float | None, span: tuple[float | None, float | None], around: float | None) -> Any:
    """An interval found around `around` (the precision window's own figure) carried over to `value`
    (the report's whole-run figure) by its relative widths; None when anything is unknown."""
    low, high = span
    if value is None or low is None or high is None or around is None or not around > 0:
        return None
    return min(value * low / around, value), max(value * high / around, value)


def _interval_figures(report: Report, window: RunIntervals) -> Figures:
    """A plain run with --precision (docs/sweeps.md): its figures' intervals and why it ended."""
    span = "the window after the warm-up" if report.warmup_s else "the run from its first tick"
    intervals = {
        key: carried
        for key, span in window.intervals.items()
        if (carried := _carried(getattr(report, key), span, getattr(window, key))) is not None
    }
    return Figures(
        precision=window.precision,
        intervals=intervals,
        ci_method=f"{window.ci_method}; over {span}" if intervals and window.ci_method else None,
        stopped_early=window.stopped_early,
        stop_reason=window.stop_reason,
    )


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

"""A sweep point's figures (docs/sweeps.md): what the report says of one user count, over its window.

The window opens when the point's warm-up ends and closes `point_duration` later. Client latency
figures count the requests that started after the warm-up and ended inside the window (`requests`);
token rates count the tokens whose times fell inside it (a request still decoding at the end adds its
in-window tokens when it finishes, until the window is closed at the next point's measured start), and
the prompt side (cached tokens, the client's hit rate, reuse, the mean prompt) the same prompts, those
whose first token came inside, as the servers' counters count them; a point with fewer requests than an
interval needs is `thin`, and `ci_note` says why an interval is null; server figures are
counter deltas between the window's first and last tick; means and maxima are over its ticks. How close
to the limit (docs/metrics.md, "Roofline" and "Energy") is read the same way: the servers' estimated
work and the GPUs' energy between the window's first and last tick, over the point's token rates.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from agentx_tui.measure import TALLY_KEYS, WindowBook, cold_start, tally_figures
from agentx_tui.snapshot import (
    COUNT,
    TOKENS,
    EndpointReading,
    EndpointTotals,
    Figures,
    FrontierAxis,
    PointFigures,
    Snapshot,
    acceptance_vs_golden,
    cache_figures,
    declared,
    pricing,
    totals_server_time,
    totals_since,
    ttft_outside_server,
)
from agentx_tui.snapshot.limits import achieved_source, limits_values, span_energy, totals_roofline
from agentx_tui.snapshot.stat import RunningStat, TickMeans, ratio
from agentx_tui.sweep.axes import NORTH_STAR
from agentx_tui.sweep.intervals import (
    MIN_REQUESTS,
    Interval,
    PointIntervals,
    Precision,
    Sample,
    is_thin,
    point_intervals,
    precision_of,
)

CHECK_GROWTH = 1.05  # --precision: check again once 5% more requests are counted

# What a plain run's --warmup takes for its report from its window (docs/metrics.md, "Warm-up"): the
# client's figures of the requests started after the warm-up (those a tally gives, but its counts: the
# run's totals stay whole), and the figures declared `warmed` (the cold start among them, what follows from
# their rates, their error rate, the servers' hit rate over the same time). Totals, tasks, means over ticks,
# energy and the roofline stay the whole run's.
WARMED_KEYS: tuple[str, ...] = tuple(
    key
    for key, fig in declared(Figures).items()
    if fig.warmed or (key in TALLY_KEYS and fig.unit not in (TOKENS, COUNT))
)


@dataclass
class PointWindow:
    """One point being measured: the client window and what the ticks inside it showed."""

    index: int
    users: int
    warmup_s: float
    start: Snapshot  # the tick at which the window opened
    client: WindowBook
    last: Snapshot | None = None
    hardware: TickMeans = field(default_factory=TickMeans)
    cpu: RunningStat = field(default_factory=RunningStat)
    lag: RunningStat = field(default_factory=RunningStat)
    peak_in_flight: int = 0
    saturated_ticks: int = 0
    saturated_streak: int = 0
    longest_saturated_streak: int = 0
    ticks: int = 0
    stopped_early: bool = False  # --precision was met before --point-duration
    stop_reason: str | None = None
    checked_at: int = 0  # counted requests at the last --precision check
    last_check: Precision | None = None
    # When this point's users were set (the stats' clock): user slots that sent before it were added
    # by earlier points, a cohort the throughput interval keeps apart. None: one cohort.
    cohort_edge: float | None = None
    # The frontier's axis: `--precision` checks the p90 interactivity on it (and the throughput).
    axis: FrontierAxis = NORTH_STAR
    # Whether the load was steady when the window opened (sweep/steady.py), and what opened it, in words;
    # None for a window no steady rule opened (a plain run's).
    steady: bool | None = None
    steady_reason: str | None = None

    def check_precision(self, now: float, *, force: bool = False) -> Precision | None:
        """How precise the point is so far (`--precision`): the intervals of its throughput and of its p90
        interactivity on the frontier's axis, over the window until `now`;
        None when no check is due. A check is due once `MIN_REQUESTS` are counted and then whenever
        5% more have been (at least one more), so a long window costs O(log n) checks, not one a tick.
        Requests still in flight have not brought their tokens yet, which widens the throughput's
        interval a little: the check errs on the side of measuring longer."""
        requests = self.client.latency.requests
        due = requests >= MIN_REQUESTS and requests >= max(self.checked_at + 1, self.checked_at * CHECK_GROWTH)
        if not (due or force) or not now > self.client.start:
            return None
        self.checked_at = requests
        sample = interval_sample(self.client, now - self.client.start, self.cohort_edge)
        self.last_check = precision_of(sample, self.axis)
        return self.last_check

    def tick(self, snap: Snapshot) -> None:
        self.last = snap
        self.ticks += 1
        self.hardware.add(snap)
        if snap.client is not None:
            self.peak_in_flight = max(self.peak_in_flight, snap.client.in_flight)
        health = snap.client_health
        if health is not None:
            self.cpu.add(health.cpu_cores)
            self.lag.add(health.loop_lag_p99_s)
            if health.saturated:
                self.saturated_ticks += 1
                self.saturated_streak += 1
                self.longest_saturated_streak = max(self.longest_saturated_streak, self.saturated_streak)
            else:
                self.saturated_streak = 0

    @property
    def client_saturated(self) -> bool:
        """Saturated for three ticks in a row, or a quarter of the window (a hiccup is not)."""
        return self.longest_saturated_streak >= 3 or (self.ticks > 0 and self.saturated_ticks * 4 >= self.ticks)

    def figures(self) -> PointFigures:
        end = self.last or self.start
        c = self.client
        duration = c.duration_s if c.end is not None else end.time - self.start.time
        tally = c.latency
        done = tally.requests + c.failed
        cost = end.cost
        gpus = cost.gpus
        client = tally_figures(
            tally,
            span=duration,
            cached_reported=c.cached_reported,
            prompts=c.prompts,
            output=c.output_in_window,
        )
        if c.warm is not None:  # a plain run's window: whether its first requests set a latency figure
            client = client.updated(**cold_start(client, tally.requests, c.warm, advice=False))
        total_rate, output_rate = client.total_tokens_per_s, client.output_tokens_per_s
        price = cost.usd_per_gpu_hour
        dollars = pricing(price, gpus)  # the one price rule: no GPU count, no dollar figure
        ci = point_intervals(interval_sample(c, duration, self.cohort_edge)) if duration else PointIntervals()
        intervals = {
            "total_tokens_per_s_per_gpu": _per_gpu(_around(ci.throughput, total_rate), gpus),
            "e2e_interactivity_p90_tokens_per_s": _around(
                ci.e2e_interactivity_p90(), client.e2e_interactivity_p90_tokens_per_s
            ),
            "interactivity_p90_tokens_per_s": _around(ci.interactivity_p90(), client.interactivity_p90_tokens_per_s),
        }
        known = {key: (iv.low, iv.high) for key, iv in intervals.items() if iv is not None}
        ci_note = ci.note
        if ci.throughput is not None and not gpus:
            ci_note = "; ".join(filter(None, (ci_note, "throughput per GPU: no GPU count")))
        tasks = c.task_figures(
            time.monotonic(),
            gpus=gpus,
            tokens_per_dollar=dollars.tokens_per_dollar(total_rate),
        )
        server = _server_deltas(
            self.start.aggregate.totals if self.start.aggregate else None,
            end.aggregate.totals if end.aggregate else None,
        )
        limits = self._limits(end, server, gpus, total_rate, output_rate, tasks.tasks_completed if tasks else None)
        # The server's figures over the window are its counters' increase between the window's first and
        # last tick, so over the time between those ticks.
        server_span = end.time - self.start.time
        return PointFigures(
            **{**client.set_values(), **limits, **c.agentx_figures(self.users), "intervals": known},
            index=self.index,
            users=self.users,
            warmup_s=self.warmup_s,
            duration_s=duration or 0.0,
            window_start_s=self.start.elapsed_s,
            requests_failed=c.failed,
            error_rate=c.failed / done if done else None,
            total_tokens_per_s_per_gpu=ratio(total_rate, gpus),
            output_tokens_per_s_per_gpu=ratio(output_rate, gpus),
            prefix_cache_hit_rate_server=ratio(server.prefix_cache_hits, server.prefix_cache_queries),
            **cache_figures(server, server_span),
            **_server_time(server, end.aggregate, client),
            kv_cache_usage_mean=self.hardware.kv.mean,
            kv_cache_usage_max=self.hardware.kv.max,
            preemptions=server.preemptions,
            gpu_util_mean=self.hardware.gpu_util.mean,
            gpu_power_w_mean=self.hardware.gpu_power.mean,
            usd_per_gpu_hour=price,
            gpus=gpus,
            tokens_per_dollar_total=dollars.tokens_per_dollar(total_rate),
            tokens_per_dollar_output=dollars.tokens_per_dollar(output_rate),
            usd_per_million_output_tokens=dollars.usd_per_million_tokens(output_rate),
            usd_per_million_total_tokens=dollars.usd_per_million_tokens(total_rate),
            mean_prompt_tokens=ratio(c.prompts.prompt, c.first_tokens),
            requests=tally.requests,
            thin=is_thin(tally.requests),
            ci_note=ci_note,
            peak_in_flight=self.peak_in_flight,
            client_cpu_cores_mean=self.cpu.mean,
            client_loop_lag_p99_s=self.lag.max,
            client_saturated=self.client_saturated,
            ci_method=ci.method if known else None,
            stopped_early=self.stopped_early,
            stop_reason=self.stop_reason,
            steady=self.steady,
            steady_reason=self.steady_reason,
            tasks_completed=tasks.tasks_completed if tasks else None,
            tasks_failed=tasks.tasks_failed if tasks else None,
            task_s_p50=tasks.task_s_p50 if tasks else None,
            task_s_p90=tasks.task_s_p90 if tasks else None,
            usd_per_task=tasks.usd_per_task if tasks else None,
            tasks_per_hour_per_gpu=tasks.tasks_per_hour_per_gpu if tasks else None,
        )

    def _limits(
        self,
        end: Snapshot,
        server: EndpointTotals,
        gpus: int | None,
        total_rate: float | None,
        output_rate: float | None,
        tasks: int | None,
    ) -> dict[str, object]:
        """The point's roofline and energy, between the window's first and last tick."""
        if end.limits is None:
            return {}
        span = end.time - self.start.time
        agg = end.aggregate
        peak = end.limits.peak
        return limits_values(
            work=totals_roofline(server, agg.estimating_engines if agg else None, span, peak),
            peak=peak,
            source=achieved_source(agg, end.limits.roofline_note),
            energy_j=span_energy(self.start.limits, end.limits),
            energy_from=end.limits.energy_source,
            seconds=span,
            gpus=gpus,
            total_tokens_per_s=total_rate,
            output_tokens_per_s=output_rate,
            tasks=tasks,
        )


def _per_gpu(interval: Interval | None, gpus: int | None) -> Interval | None:
    """A throughput interval per GPU; None without a GPU count."""
    if interval is None or not gpus:
        return None
    return Interval(interval.low / gpus, interval.high / gpus)


def _around(interval: Interval | None, value: float | None) -> Interval | None:
    """The interval around the reported value (low ≤ value ≤ high); None when either is unknown."""
    return interval.around(value) if interval is not None and value is not None else None


def _server_time(server: EndpointTotals, agg: EndpointReading | None, client: Figures) -> dict[str, object]:
    """Where the point's requests' time went on the servers and their speculative decoding over its window
    (snapshot/servertime.py), against the golden acceptance length the last tick found, and the client's
    wait for a first token outside the servers."""
    figures = totals_server_time(server)
    golden = agg.spec_golden_acceptance_length if agg else None
    return {
        **figures,
        "spec_golden_acceptance_length": golden,
        "spec_golden_source": agg.spec_golden_source if agg else None,
        "spec_acceptance_vs_golden": acceptance_vs_golden(figures["spec_acceptance_length"], golden),
        "ttft_outside_server_s_mean": ttft_outside_server(
            client.ttft_s_mean, figures["server_queue_s_mean"], figures["server_prefill_s_mean"]
        ),
    }


def _server_deltas(start: EndpointTotals | None, end: EndpointTotals | None) -> EndpointTotals:
    if start is None or end is None:
        return EndpointTotals()
    return totals_since(end, start)


def interval_sample(window: WindowBook, duration_s: float, cohort_edge: float | None = None) -> Sample:
    """The window's raw sample as plain numbers (sweep/intervals.py), over its first `duration_s` seconds;
    user slots that sent their first request before `cohort_edge` form a cohort of their own."""
    raw = window.sample
    slots = max(1, math.ceil(duration_s / raw.slot_s - 1e-9))
    tokens = [0.0] * slots
    itl: list[dict[int, float]] = [{} for _ in range(slots)]
    e2e: list[dict[int, float]] = [{} for _ in range(slots)]
    for key, slot in raw.slots.items():
        if key > slots:  # after `duration_s` (a check while the window is still open)
            continue
        at = min(key, slots - 1)  # a token exactly at the window's end
        tokens[at] += slot.tokens
        for index, count in slot.itl.items():
            itl[at][index] = itl[at].get(index, 0.0) + count
        for index, count in slot.e2e.items():
            e2e[at][index] = e2e[at].get(index, 0.0) + count
    trees = list(raw.trees.values())
    return Sample(
        duration_s=duration_s,
        tree_tokens=tuple(t.tokens for t in trees),
        tree_itl=tuple(t.itl for t in trees),
        slot_s=raw.slot_s,
        slot_tokens=tuple(tokens),
        slot_itl=tuple(itl),
        requests=window.latency.requests,
        user_tokens=tuple(raw.users.values()),
        user_cohorts=tuple(_cohort(key, window.user_since, cohort_edge) for key in raw.users),
        tree_e2e=tuple(t.e2e for t in trees),
        slot_e2e=tuple(e2e),
    )


def _cohort(user: object, since: Mapping[int, float], edge: float | None) -> int:
    """0: a slot carried over from an earlier point; 1: one this point added (or any slot, with no edge)."""
    if edge is None or not isinstance(user, int):
        return 1
    return 0 if since.get(user, edge) < edge else 1

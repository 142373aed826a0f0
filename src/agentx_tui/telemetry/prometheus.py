"""`PrometheusSource`: a fleet's vLLM/SGLang and DCGM telemetry read from the Prometheus that already
scrapes it (docs/scale.md, `--prometheus URL [--selector …]`), one `FleetSample` per tick.

Per tick five queries run concurrently, whatever the number of replicas: every figure is grouped by
replica (and DP engine) in PromQL, and the figures of one kind share one request:
- one instant read of every counter, gauge and cache-config series (identity, gauges, lifetime hit
  rate, and the raw counters behind the run totals: Σ over series of now − start, reset-aware);
- `rate()` of each token/request counter and `increase()` of the prefix counters over the window;
- `histogram_quantile` p50/p90/p99 of TTFT, ITL, e2e and queue time;
- the DCGM GPU series; `up` of the targets the selector matches (why a replica is missing).
The window is the caller's, but at least 4 scrape intervals (read from /api/v1/targets, else from
the spacing of the samples), so `rate()` always has samples to work with. Every query of a tick is
evaluated at one instant on Prometheus's clock (its offset from ours is measured at start): queries
evaluated milliseconds apart can straddle a scrape, and Δhits/Δqueries taken from two windows that
hold different samples is off by up to one scrape's worth.

Failures: at `start()` they raise the project's errors (`TargetError` exit 3, `UsageError` exit 2);
during the run they never raise: Prometheus down or slow turns every replica into a down
`EndpointReading` (None figures, run totals kept) and the sample's status says why in one sentence.
The bearer token and header values are only ever in the HTTP client's headers.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Final

import httpx

from agentx_tui.errors import TargetError, UsageError
from agentx_tui.snapshot import EndpointReading, GpuReading, GpuState
from agentx_tui.telemetry import _promql, _promstart
from agentx_tui.telemetry._energy import EnergyMeter
from agentx_tui.telemetry._promapi import PromApi, PromError, Vector, shown_url
from agentx_tui.telemetry._promfigures import (
    ReplicaKey,
    ReplicaRead,
    RunTotals,
    WindowAnswers,
    read_instant,
    replica_figures,
    replica_key,
    replica_url,
    totals_of,
)
from agentx_tui.telemetry._promgpus import describe, map_gpus
from agentx_tui.telemetry._promstart import DEFAULT_SCRAPE_INTERVAL_S, PROMETHEUS_TOKEN_ENV

__all__ = [
    "PROMETHEUS_TOKEN_ENV",
    "FleetDiscovery",
    "FleetSample",
    "PrometheusSource",
    "check_selector",
    "parse_prometheus_header",
]

MIN_WINDOW_INTERVALS: Final = 4
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def parse_prometheus_header(text: str) -> tuple[str, str]:
    """``'X-Scope-OrgID: tenant-1'`` → ``("X-Scope-OrgID", "tenant-1")``; `UsageError` otherwise.

    The message never repeats the text: it may hold a credential."""
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not _HEADER_NAME.match(name) or not value or any(c in value for c in "\r\n\0"):
        raise UsageError(
            "--prometheus-header must look like 'Name: value' (an HTTP header name, a colon, a value).",
            "For example --prometheus-header 'X-Scope-OrgID: tenant-1'.",
        )
    return name, value


def check_selector(text: str | None) -> str:
    """The selector as PromQL will get it, or `UsageError` (checked before anything starts)."""
    try:
        return _promql.parse_selector(text).text
    except _promql.SelectorError as exc:
        raise UsageError(f"--selector is not a label selector: {exc}.", 'For example {namespace="llm"}.') from exc


@dataclass(frozen=True)
class FleetDiscovery:
    """What `start()` found: the replicas, the scrape interval and where it came from, the window."""

    replicas: tuple[str, ...]
    scrape_interval_s: float
    interval_source: str
    window_s: float
    prometheus_version: str | None
    dcgm_scoped: bool  # DCGM series carry the selector's labels (else all DCGM series are read)


@dataclass(frozen=True)
class FleetSample:
    """One tick: a figure set per replica (``url`` = its pod or instance), the GPUs, and a status."""

    endpoints: tuple[EndpointReading, ...]
    gpu: GpuState
    up: bool  # Prometheus answered the instant read
    status: str  # one sentence
    took_s: float  # wall time of the tick's queries


class PrometheusSource:
    """Reads every replica matching ``selector`` through the Prometheus HTTP API."""

    def __init__(
        self,
        url: str,
        *,
        selector: str | None = None,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        window_s: float = 10.0,
        query_timeout_s: float = 0.7,
        tick_budget_s: float = 0.8,
        start_timeout_s: float = 5.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """Validates everything that can be validated without I/O (`UsageError`); `start()` connects.

        ``query_timeout_s`` bounds each query and ``tick_budget_s`` the whole tick: keep both under
        the tick interval (0.7 and 0.8 of it). ``transport`` is for tests (httpx.MockTransport)."""
        if not url.startswith(("http://", "https://")) or not httpx.URL(url).host:
            raise UsageError("--prometheus must be an http:// or https:// URL of a Prometheus server.")
        if not window_s > 0 or not query_timeout_s > 0 or not tick_budget_s > 0:
            raise ValueError("window_s, query_timeout_s and tick_budget_s must be positive")
        try:
            self.selector = _promql.parse_selector(selector)
        except _promql.SelectorError as exc:
            raise UsageError(f"--selector is not a label selector: {exc}.", 'For example {namespace="llm"}.') from exc
        sent: dict[str, str] = dict(headers or {})
        if token:
            if any(k.lower() == "authorization" for k in sent):
                raise UsageError(
                    f"Give the Prometheus credential once: {PROMETHEUS_TOKEN_ENV} or an Authorization header."
                )
            sent["Authorization"] = f"Bearer {token}"
        # What must never be shown: the token, header values, and a password written into the URL.
        self._secrets = tuple(v for v in (token, *(headers or {}).values(), httpx.URL(url).password) if v)
        self._header_names = tuple(sorted(sent))
        self.url = shown_url(url)
        self._client = httpx.AsyncClient(headers=sent, transport=transport, follow_redirects=False)
        self._api = PromApi(url, client=self._client, secrets=self._secrets)
        self._window_s = window_s
        self._query_timeout_s = query_timeout_s
        self._tick_budget_s = tick_budget_s
        self._start_timeout_s = start_timeout_s
        self._scrape_interval_s = DEFAULT_SCRAPE_INTERVAL_S
        self._clock_offset_s = 0.0
        self._reset_at: float | None = None
        self._started = False
        self._dcgm_scoped = True
        # Replicas whose deprecated prefix counters count blocks (None: all of them, when only the
        # per-name metadata could be read).
        self._block_counted: set[ReplicaKey | None] = set()
        self._replicas: dict[ReplicaKey, dict[str, str]] = {}  # known replicas (kept when they vanish)
        self._totals = RunTotals()
        self._energy = EnergyMeter()  # the fleet's GPUs, by UUID
        self._last_figures: dict[ReplicaKey, EndpointReading] = {}
        self._units_task: asyncio.Task[None] | None = None

    # -- identity ---------------------------------------------------------------------------------

    def __repr__(self) -> str:
        return f"PrometheusSource({self.url!r}, selector={self.selector.text!r}, headers={list(self._header_names)!r})"

    @property
    def secrets(self) -> tuple[str, ...]:
        """The token, header values and URL password: hand them to every redacting writer (event log,
        recorder, report)."""
        return self._secrets

    @property
    def window_s(self) -> float:
        """The PromQL range of the window figures now: the caller's window, at least 4 scrape intervals,
        and after `reset_window` no more than the time since the reset (down to that minimum)."""
        floor = MIN_WINDOW_INTERVALS * self._scrape_interval_s
        window = self._window_s
        if self._reset_at is not None:
            window = min(window, time.monotonic() - self._reset_at)
        return max(window, floor)

    @property
    def scrape_interval_s(self) -> float:
        return self._scrape_interval_s

    def reset_window(self) -> None:
        """Rates restart (a sweep point begins): the window shrinks to the time since now, though never
        below 4 scrape intervals. Run totals are not touched."""
        self._reset_at = time.monotonic()

    async def __aenter__(self) -> PrometheusSource:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._units_task is not None:
            self._units_task.cancel()
            await asyncio.gather(self._units_task, return_exceptions=True)
        await self._client.aclose()

    # -- start ------------------------------------------------------------------------------------

    async def start(self) -> FleetDiscovery:
        """Reach Prometheus, find the replicas, read the scrape interval, take the run's start counters.

        Raises `TargetError` (exit 3) when Prometheus cannot be reached, refuses access, is not a
        Prometheus API or has no vLLM/SGLang series for the selector; `UsageError` (exit 2) when it
        rejects the selector."""
        api, sel, timeout = self._api, self.selector, self._start_timeout_s
        try:
            version = await _promstart.version(api, timeout)
            reads = read_instant(await api.query(_promql.instant_series(sel), timeout))
            if not reads:
                raise await _promstart.no_series_error(api, sel, timeout)
            self._remember(reads)
            self._scrape_interval_s, source = await _promstart.scrape_interval(api, sel, set(self._replicas), timeout)
            self._clock_offset_s = await _promstart.clock_offset(api, timeout)
            self._dcgm_scoped = bool(await api.query(_promql.dcgm_series(sel), timeout))
            await self._read_prefix_units(reads, timeout)
        except PromError as exc:
            raise _promstart.start_error(exc) from exc
        if not self._totals.started:
            self._totals.add(reads)
        self._started = True
        return FleetDiscovery(
            replicas=tuple(replica_url(k) for k in self._replicas),
            scrape_interval_s=self._scrape_interval_s,
            interval_source=source,
            window_s=self.window_s,
            prometheus_version=version,
            dcgm_scoped=self._dcgm_scoped,
        )

    async def _read_prefix_units(self, reads: Mapping[ReplicaKey, ReplicaRead], timeout: float) -> None:
        if any(r.old_prefix_names for r in reads.values()):
            self._block_counted = await _promstart.block_counted(self._api, self.selector, timeout)

    def _remember(self, reads: Mapping[ReplicaKey, ReplicaRead]) -> None:
        for key, read in reads.items():
            self._replicas.setdefault(key, read.labels)

    # -- one tick ---------------------------------------------------------------------------------

    async def sample(self, now: float) -> FleetSample:
        """One tick's figures; never raises for Prometheus trouble (see the module doc).

        ``now`` is the run's clock, kept for symmetry with the other monitors: queries are evaluated
        at Prometheus's own now (see the module doc), so a skew between the clocks does not matter."""
        del now
        started = time.monotonic()
        if not self._started:
            try:
                await self.start()
            except (TargetError, UsageError) as exc:
                return self._down(exc.message, started)
        answers = await self._run_queries()
        instant = answers.pop("instant")
        if isinstance(instant, PromError):
            return self._down(instant.sentence, started)
        reads = read_instant(instant)
        new = [k for k in reads if k not in self._replicas]
        self._remember(reads)
        self._totals.add(reads)
        if any(reads[k].old_prefix_names for k in new) and self._units_task is None:
            # Outside the tick (its budget is for the figures); the units apply from a later tick.
            self._units_task = asyncio.create_task(self._reread_prefix_units(reads))
        figures = self._figures(reads, answers)
        gpu, owned = self._gpu_state(answers.get("dcgm"), figures, started)
        failed = sorted({a.sentence for a in answers.values() if isinstance(a, PromError)})
        endpoints = tuple(self._with_gpus(figures, owned))
        return FleetSample(endpoints, gpu, True, self._status(reads, failed), time.monotonic() - started)

    async def _reread_prefix_units(self, reads: Mapping[ReplicaKey, ReplicaRead]) -> None:
        try:
            await self._read_prefix_units(reads, self._start_timeout_s)
        except PromError:
            pass  # read again when the next replica with old names appears
        finally:
            self._units_task = None

    def _queries(self) -> dict[str, str]:
        window, sel = self.window_s, self.selector
        queries = {
            "instant": _promql.instant_series(sel),
            "up": _promql.targets_up(sel),
            "dcgm": _promql.dcgm_series(sel if self._dcgm_scoped else _promql.Selector()),
        }
        queries["counters"] = _promql.window_counters(sel, window)
        queries["quantiles"] = _promql.window_quantiles(sel, window)
        return queries

    async def _run_queries(self) -> dict[str, Vector | PromError]:
        """All of the tick's queries at once, each with its deadline, all within the tick budget."""
        at = time.time() + self._clock_offset_s  # one instant for every query of the tick
        tasks = {
            key: asyncio.create_task(self._api.query(q, self._query_timeout_s, at))
            for key, q in self._queries().items()
        }
        try:
            done, pending = await asyncio.wait(tasks.values(), timeout=self._tick_budget_s)
        finally:  # also when the tick itself is cancelled: no query outlives it
            for task in tasks.values():
                task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        late = PromError("timeout", f"Prometheus at {self.url} did not answer within {self._tick_budget_s:g} s")
        out: dict[str, Vector | PromError] = {}
        for key, task in tasks.items():
            if task not in done:
                out[key] = late
                continue
            error = task.exception()
            if error is None:
                out[key] = task.result()
            elif isinstance(error, PromError):
                out[key] = error
            else:
                raise error  # a bug here, not Prometheus trouble: let it show
        return out

    def _figures(
        self, reads: Mapping[ReplicaKey, ReplicaRead], answers: Mapping[str, Vector | PromError]
    ) -> dict[ReplicaKey, EndpointReading]:
        def vector(key: str) -> Vector | None:
            answer = answers.get(key)
            return None if answer is None or isinstance(answer, PromError) else answer

        window = WindowAnswers(vector("counters"), vector("quantiles"))
        up = vector("up") or []
        failed_targets = {replica_key(labels) for labels, value in up if value == 0}
        out: dict[ReplicaKey, EndpointReading] = {}
        for key in self._replicas:
            read = reads.get(key)
            if read is None:
                reason = (
                    "Prometheus's last scrape of it failed" if key in failed_targets else "no series in Prometheus now"
                )
                out[key] = self._replica_down(key, reason)
                continue
            blocks = read.old_prefix_names and (key in self._block_counted or None in self._block_counted)
            totals = totals_of(key, self._totals, read.block_size, blocks=blocks)
            out[key] = replica_figures(key, read, window, totals)
        self._last_figures = out
        return out

    def _replica_down(self, key: ReplicaKey, reason: str) -> EndpointReading:
        """None figures, identity and run totals as last shown (a vanished series adds nothing)."""
        last = self._last_figures.get(key)
        return EndpointReading(
            url=replica_url(key),
            up=False,
            status=f"down: {reason}",
            flavor=last.flavor if last else "unknown",
            model=last.model if last else None,
            totals=last.totals if last else totals_of(key, self._totals, None, blocks=False),
        )

    def _gpu_state(
        self, answer: Vector | PromError | None, figures: Mapping[ReplicaKey, EndpointReading], now: float
    ) -> tuple[GpuState, dict[ReplicaKey, list[GpuReading]]]:
        if isinstance(answer, PromError):
            return GpuState(status=f"DCGM via Prometheus: {answer.sentence}"), {}
        if not answer:
            where = f"matching {self.selector.text}" if self._dcgm_scoped else "in Prometheus"
            return GpuState(status=f"no DCGM GPU series {where}: GPUs not known"), {}
        gmap = map_gpus(answer, {k: self._replicas[k] for k in figures})
        for gpu_id, fig in gmap.gpus.items():
            counter = gmap.energy_mj.get(gpu_id)
            joules, how = self._energy.add(
                gpu_id, now, counter_j=None if counter is None else counter / 1000.0, power_w=fig.power_w
            )
            gmap.gpus[gpu_id] = fig.model_copy(update={"energy_j": joules, "energy_from": how})
        owned = {k: gmap.of(k) for k in figures}
        # All DCGM series are read when none carries the selector's labels; then only the GPUs
        # mapped to a replica are the fleet's (the rest belong to other workloads), if any is mapped.
        every = self._dcgm_scoped or not gmap.owner
        shown = list(gmap.gpus.values()) if every else [gmap.gpus[g] for g in gmap.owner]
        shown.sort(key=lambda g: (g.host or "", g.index, g.uuid or ""))
        status = describe(gmap, shown, len(figures), scoped=self._dcgm_scoped)
        return GpuState(status=status, gpus=tuple(shown)), owned

    def _with_gpus(
        self, figures: Mapping[ReplicaKey, EndpointReading], owned: Mapping[ReplicaKey, list[GpuReading]]
    ) -> list[EndpointReading]:
        out = []
        for key, fig in figures.items():
            mine = owned.get(key) or []
            if mine:
                utils = [g.utilization for g in mine if g.utilization is not None]
                fig = fig.model_copy(
                    update={"gpu_count": len(mine), "gpu_utilization": sum(utils) / len(utils) if utils else None}
                )
            out.append(fig)
        return out

    def _status(self, reads: Mapping[ReplicaKey, ReplicaRead], failed: list[str]) -> str:
        if not reads:
            return f"Prometheus at {self.url} has no vLLM or SGLang series matching {self.selector.text} now"
        text = (
            f"Prometheus {self.url}: {len(reads)} of {len(self._replicas)} replicas reporting, "
            f"{self.window_s:g} s window ({self._scrape_interval_s:g} s scrape interval)"
        )
        if failed:
            text += f"; some figures missing: {failed[0]}"
        return text

    def _down(self, sentence: str, started: float) -> FleetSample:
        endpoints = tuple(self._replica_down(k, sentence) for k in self._replicas)
        gpu = GpuState(status=f"DCGM via Prometheus: {sentence}")
        return FleetSample(endpoints, gpu, False, sentence, time.monotonic() - started)

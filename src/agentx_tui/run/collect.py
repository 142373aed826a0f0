"""Collection: every source of one tick (scrapers, GPUs, the load generator, the cost meter, the roofline
and energy) → one Snapshot.

`Collectors.collect` is called once per tick by the tick loop (run/live.py). Scrapes run concurrently
with a deadline under the tick interval, the NVML sampler runs in its own thread, and the load
generator hands over figures it has already aggregated: nothing here waits on a slow source for long.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from agentx_tui.cost import CostMeter, PriceChoice, compute_dtype, load_peaks, resolve_peak, resolve_price
from agentx_tui.load import LoadSample
from agentx_tui.redaction import redact
from agentx_tui.run.golden import GoldenLengths
from agentx_tui.run.plan import RunPlan
from agentx_tui.run.serving import Serving
from agentx_tui.run.traffic import Traffic
from agentx_tui.snapshot import (
    ClientReading,
    CostReading,
    EndpointReading,
    GpuPeak,
    GpuState,
    LimitsReading,
    ProxyState,
)
from agentx_tui.snapshot.limits import gpus_energy, tick_limits
from agentx_tui.snapshot.rates import run_tokens, window_rates
from agentx_tui.snapshot.stat import ratio
from agentx_tui.telemetry import DcgmMonitor, EndpointMonitor, NvmlSampler, aggregate_endpoints

# The rate window of the servers' figures (telemetry's default), which joules per token on screen share.
WINDOW_S = 10.0


class EventLog:
    """Events for the dashboard's log pane and the recording: bounded, stamped, secrets masked."""

    def __init__(self, secrets: Sequence[str], maxlen: int = 200) -> None:
        self._secrets = tuple(secrets)
        self._lines: deque[str] = deque(maxlen=maxlen)

    def add(self, text: str) -> None:
        self._lines.append(f"{time.strftime('%H:%M:%S')} {redact(text, self._secrets)}")

    def take(self) -> tuple[str, ...]:
        lines = tuple(self._lines)
        self._lines.clear()
        return lines


@dataclass(frozen=True)
class Collected:
    """One tick's figures, before the run adds its own state (seq, elapsed, phase)."""

    time: float
    endpoints: tuple[EndpointReading, ...]
    aggregate: EndpointReading | None
    gpu: GpuState
    load: LoadSample | None
    cost: CostReading
    server_log: tuple[str, ...]
    proxy: ProxyState | None = None
    limits: LimitsReading | None = None


class Collectors:
    def __init__(
        self, plan: RunPlan, serving: Serving, traffic: Traffic | None, events: EventLog, started_at: float
    ) -> None:
        self.plan = plan
        self.serving = serving
        self.traffic = traffic
        self.events = events
        self.started_at = started_at
        interval = plan.output.interval_s
        headers = {"Authorization": f"Bearer {plan.api_key}"} if plan.api_key else {}
        # A scrape must leave room in the tick for the others and for drawing.
        self._deadline_s = interval * 0.8
        self._http = httpx.AsyncClient(headers=headers, timeout=self._deadline_s)
        # With --prometheus the fleet's telemetry comes from there: no server is scraped directly.
        self._fleet = serving.fleet
        self._fleet_status: str | None = None
        self._scrapers = (
            []
            if self._fleet is not None
            else [
                EndpointMonitor(e.url, client=self._http, timeout_s=self._deadline_s, **e.identity())
                for e in serving.endpoints
            ]
        )
        gpu_metrics = plan.target.gpu_metrics
        self._dcgm = DcgmMonitor(gpu_metrics, client=self._http, timeout_s=self._deadline_s) if gpu_metrics else None
        # NVML describes this machine's GPUs: meaningful only for servers that run here.
        self._nvml: NvmlSampler | None = None
        if not serving.simulated and self._dcgm is None and serving.local:
            self._nvml = NvmlSampler(interval_s=interval)
            self._nvml.start()
        self._user_price = plan.price.gpu_price is not None or plan.price.cost_profile is not None
        self._gpus_set_by_user = plan.price.gpus is not None
        self._gpus_set_live = False
        self._meter = CostMeter(self._resolve_price((), plan.price.gpus or serving.sim_gpus))
        self._peaks = load_peaks()  # read (and checked) once: preflight said a bad file already
        self._dtype = compute_dtype(next((e.model for e in serving.endpoints), None), plan.target.vllm_args)
        sims = [e.sim for e in serving.endpoints if e.sim]
        self._sim_peak = _sim_peak(sims[0]) if sims else None
        self._peak: tuple[tuple[str, ...], GpuPeak] | None = None  # by the GPU names it was found for
        self._golden = GoldenLengths(plan.agentx.spec_golden)
        self._energy = EnergyWindow()
        self._down: set[str] = set()
        self._slow: set[str] = set()
        self._pids: set[int] = set()
        self._pids_at = -1e9

    # -- controls the run passes on ----------------------------------------------------------------
    def reset_windows(self) -> None:
        self._energy = EnergyWindow()
        for scraper in self._scrapers:
            scraper.reset_window()
        if self._fleet is not None:
            self._fleet.reset_window()

    def set_price(self, usd_per_gpu_hour: float | None, gpus: int | None) -> None:
        self._meter.set_price(usd_per_gpu_hour, gpus)
        self._user_price = True
        self._gpus_set_by_user = self._gpus_set_by_user or gpus is not None
        self._gpus_set_live = self._gpus_set_live or gpus is not None

    async def close(self) -> None:
        if self._nvml is not None:
            await asyncio.to_thread(self._nvml.close)
        # (the fleet source belongs to the serving side, which closes it)
        await self._http.aclose()

    # -- one tick ------------------------------------------------------------------------------------
    async def collect(self) -> Collected:
        now = time.time()
        if self._fleet is not None:
            fleet, (load, proxy, said) = await asyncio.gather(self._fleet.sample(now), self._traffic())
            endpoints, gpu = list(fleet.endpoints), fleet.gpu
            self._note_fleet(fleet.up, fleet.status)
        else:
            scraped, gpu, (load, proxy, said) = await asyncio.gather(
                asyncio.gather(*(s.sample(now) for s in self._scrapers)), self._gpu_state(now), self._traffic()
            )
            endpoints = list(scraped)
            self._note_up_down(endpoints)
        endpoints = [self._golden.of(e) for e in endpoints]
        aggregate = aggregate_endpoints(endpoints)
        gpus, gpus_source = self._gpu_count(gpu)
        if self._gpus_set_live:  # the count typed live (key c) is every figure's, the meter's too
            gpus, gpus_source = self._meter.gpus, "set live"
        if not self._user_price and self._meter.price is None:
            self._meter = CostMeter(self._resolve_price(tuple(g.name for g in gpu.gpus), gpus))
        if not self._gpus_set_by_user and gpus != self._meter.gpus:
            # One count for every figure: the GPUs found here (a fleet's show up or change), or none,
            # and then no dollar figure (never the local machine's GPUs for a remote target).
            self._meter.count_gpus(gpus)
        cost = self._cost(now, load.client if load else None, aggregate, gpu)
        if gpus is not None:  # known whether or not a price is: the per-GPU figures need only the count
            cost = cost.model_copy(update={"gpus": gpus, "gpus_source": gpus_source})
        for line in said:
            self.events.add(line)
        limits = self._limits(now, aggregate, gpu, load.client if load else None, gpus)
        return Collected(now, tuple(endpoints), aggregate, gpu, load, cost, self._server_log(), proxy, limits)

    async def _traffic(self) -> tuple[LoadSample | None, ProxyState | None, list[str]]:
        return await self.traffic.sample() if self.traffic is not None else (None, None, [])

    def _server_log(self) -> tuple[str, ...]:
        launched = self.serving.launched
        if launched is None:
            return ()
        lines, launched.log_cursor = launched.log.since(launched.log_cursor)
        return tuple(lines[-200:])

    def _note_fleet(self, up: bool, status: str) -> None:
        """One line when Prometheus stops answering (not one per replica), and one when it is back."""
        if not up and status != self._fleet_status:
            self.events.add(f"prometheus: {status}")
        elif up and self._fleet_status is not None:
            self.events.add(f"prometheus answers again: {status}")
        self._fleet_status = None if up else status

    def _note_up_down(self, endpoints: Sequence[EndpointReading]) -> None:
        for e in endpoints:
            slow = e.status.startswith("slow")
            if slow and e.url not in self._slow:
                self._slow.add(e.url)
                self.events.add(f"server slow: {e.url} ({e.status.removeprefix('slow: ')})")
            elif not slow and e.url in self._slow:
                self._slow.discard(e.url)
            if not e.up and e.url not in self._down:
                self._down.add(e.url)
                self.events.add(f"server down: {e.url} ({e.status})")
            elif e.up and e.url in self._down:
                self._down.discard(e.url)
                self.events.add(f"server up again: {e.url}")

    async def _gpu_state(self, now: float) -> GpuState:
        if self._dcgm is not None:
            return await self._dcgm.sample(now)
        dcgm_gpus = tuple(g for s in self._scrapers for g in s.dcgm_gpus)
        if dcgm_gpus:
            source = "simulated GPU (DCGM metrics of the simulator)" if self.serving.simulated else "DCGM metrics"
            return GpuState(status=f"{len(dcgm_gpus)} GPU(s) from {source}", gpus=dcgm_gpus)
        if self._nvml is not None:
            return self._nvml.latest()
        return GpuState(status="no NVIDIA GPU visible: remote server (pass --gpu-metrics URL of a DCGM exporter)")

    def _gpu_count(self, gpu: GpuState) -> tuple[int | None, str | None]:
        """GPUs behind the target, in docs/metrics.md's order, and where the count came from."""
        if self.plan.price.gpus is not None:
            return self.plan.price.gpus, "--gpus"
        if self._fleet is not None and gpu.gpus:  # the fleet's GPUs, not the router's profile
            return len(
                {g.uuid or f"{g.host}:{g.index}" for g in gpu.gpus}
            ), "DCGM series of Prometheus (distinct UUIDs)"
        if self.serving.sim_gpus is not None:
            return self.serving.sim_gpus, "simulated profile"
        if gpu.gpus and (self._dcgm is not None or any(g.source == "dcgm" for g in gpu.gpus)):
            uuids = {g.uuid or f"{g.host}:{g.index}" for g in gpu.gpus}
            return len(uuids), "DCGM series of the target (distinct UUIDs)"
        if gpu.gpus and self.serving.launched is not None:
            mine = self._server_pids()
            used = [g for g in gpu.gpus if mine & set(g.pids)]
            if used:
                return len(used), "the launched server's GPUs (NVML processes)"
        if gpu.gpus and self.serving.local:
            return len(gpu.gpus), "NVML of this machine (the server runs here)"
        return None, None

    def _server_pids(self) -> set[int]:
        """The launched server's processes, looked up every 10 s (its workers start late)."""
        launched = self.serving.launched
        now = time.monotonic()
        if launched is not None and now - self._pids_at >= 10.0:
            self._pids, self._pids_at = launched.process.pids(), now
        return self._pids

    def _resolve_price(self, gpu_names: Sequence[str], gpus: int | None) -> PriceChoice | None:
        return resolve_price(
            gpu_price=self.plan.price.gpu_price,
            cost_profile=self.plan.price.cost_profile,
            gpu_names=gpu_names,
            sim_gpu=self.serving.sim_gpu,
            gpus=gpus,  # in the order of `_gpu_count`: --gpus, the fleet's, the simulator's, NVML's
        )

    def _peak_of(self, gpu: GpuState) -> GpuPeak:
        """The peak one GPU is measured against (cost/_peaks.py), found again only when the GPUs' names change."""
        names = tuple(g.name for g in gpu.gpus)
        if self._peak is None or self._peak[0] != names:
            peak = resolve_peak(
                override=self.plan.price.gpu_peak,
                sim_peak=self._sim_peak,
                gpu_names=names,
                dtype=self._dtype,
                sim_gpu=self.serving.sim_gpu,
                table=self._peaks,
            )
            self._peak = (names, peak)
        return self._peak[1]

    def _limits(
        self,
        now: float,
        aggregate: EndpointReading | None,
        gpu: GpuState,
        client: ClientReading | None,
        gpus: int | None,
    ) -> LimitsReading:
        """How close to the limit, this tick (docs/metrics.md, "Roofline" and "Energy")."""
        energy = gpus_energy(gpu.gpus, gpus)
        return tick_limits(
            peak=self._peak_of(gpu),
            aggregate=aggregate,
            gpu=gpu,
            energy_j=energy,
            power_w=self._energy.mean_power(now, energy),
            total_tokens_per_s=window_rates(client, aggregate).total,
        )

    def _cost(
        self, now: float, client: ClientReading | None, aggregate: EndpointReading | None, gpu: GpuState
    ) -> CostReading:
        # The meter multiplies by the GPU count, so it takes the mean power of one GPU.
        powers = [g.power_w for g in gpu.gpus if g.power_w is not None]
        tokens = run_tokens(client, aggregate)
        window = window_rates(client, aggregate)
        return self._meter.figures(
            elapsed_s=now - self.started_at,
            total_tokens=tokens.total,
            output_tokens=tokens.output,
            window_total_tokens_per_s=window.total,
            window_output_tokens_per_s=window.output,
            gpu_power_w=sum(powers) / len(powers) if powers else None,
        )


def _sim_peak(sim: dict[str, object]) -> tuple[float, float] | None:
    """The simulated GPU's peaks (BF16 TFLOP/s, HBM TB/s) from its /version; None from an older simulator."""
    tflops, tb_s = sim.get("bf16_tflops"), sim.get("hbm_tb_s")
    if isinstance(tflops, int | float) and isinstance(tb_s, int | float):
        return float(tflops), float(tb_s)
    return None


class EnergyWindow:
    """The GPUs' mean power over the last rate window, from their energy (its growth ÷ the time), so that
    joules per token on screen are over the same window as the token rates."""

    def __init__(self, window_s: float = WINDOW_S) -> None:
        self._window_s = window_s
        self._points: deque[tuple[float, float]] = deque()

    def mean_power(self, now: float, energy_j: float | None) -> float | None:
        if energy_j is None:
            return None
        if self._points and energy_j < self._points[-1][1]:
            self._points.clear()  # fewer GPUs counted than before: start the window afresh
        self._points.append((now, energy_j))
        while len(self._points) >= 2 and self._points[1][0] <= now - self._window_s:
            self._points.popleft()
        (t0, e0), (t1, e1) = self._points[0], self._points[-1]
        return ratio(e1 - e0, t1 - t0)

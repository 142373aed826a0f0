"""The live run: collectors in, one Snapshot per tick out (DESIGN §2).

`Runtime` samples every endpoint's /metrics, the GPUs and the load driver once per tick, prices the
tick with the cost meter, and publishes a `Snapshot` to its sinks (recorder, report builder) and to
whoever iterates `snapshots()` (the dashboard or the headless printer). It is also the `LiveControls`
those sinks may call. Collection never waits on rendering: the UI reads the stream in a worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence

import httpx

from agentx_tui.cost import CostMeter, PriceChoice, resolve_price
from agentx_tui.load import Driver
from agentx_tui.target import Target
from agentx_tui.telemetry import DcgmMonitor, EndpointMonitor, NvmlSampler, aggregate_endpoints
from agentx_tui.telemetry.snapshot import (
    ClientFigures,
    CostFigures,
    EndpointFigures,
    GpuState,
    RunInfo,
    RunState,
    SessionRow,
    Snapshot,
)

Sink = Callable[[Snapshot], None]
_CRASH_LOG_LINES = 15  # as many as a failed start-up shows (engine/launcher.py)


class Runtime:
    def __init__(
        self,
        target: Target,
        *,
        driver: Driver | None,
        workload: str,
        interval_s: float = 1.0,
        duration_s: float | None = None,
        refresh_s: float = 0.5,
        api_key: str | None = None,
        gpu_metrics_url: str | None = None,
        gpu_price: float | None = None,
        cost_profile: str | None = None,
        gpus: int | None = None,
    ) -> None:
        self.target = target
        self.driver = driver
        self.workload = workload
        self.interval_s = interval_s
        self.duration_s = duration_s
        self.refresh_s = refresh_s
        self.sinks: list[Sink] = []
        self.drain_timeout_s = 10.0
        self.partial_reason: str | None = None
        # Set when a launched server exited on its own: (exit code, its last log lines).
        self.server_exit: tuple[int | None, list[str]] | None = None
        self.stop_reason: str | None = None
        self._secrets = [api_key] if api_key else []
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(headers=headers, timeout=interval_s * 0.8)
        self._monitors = [
            EndpointMonitor(
                e.url,
                client=self._http,
                timeout_s=interval_s * 0.8,
                model=e.model,
                engine_version=e.engine_version,
                max_model_len=e.max_model_len,
                flavor=e.flavor,
            )
            for e in target.endpoints
        ]
        self._dcgm = (
            DcgmMonitor(gpu_metrics_url, client=self._http, timeout_s=interval_s * 0.8) if gpu_metrics_url else None
        )
        # NVML describes this machine's GPUs: meaningful for a launched server (or one on loopback).
        self._nvml: NvmlSampler | None = None
        if not target.simulated and self._dcgm is None and _is_local(target):
            self._nvml = NvmlSampler(interval_s=interval_s)
            self._nvml.start()
        self._user_price = gpu_price is not None or cost_profile is not None
        self._gpu_price, self._cost_profile, self._gpus = gpu_price, cost_profile, gpus
        self._meter = CostMeter(self._resolve_price(()))
        self._events: deque[str] = deque(maxlen=200)
        self._stop = asyncio.Event()
        self._started_at = 0.0
        self._seq = 0
        self._finished = False
        self._down: set[str] = set()
        self._state: RunState = "starting"

    # ---- LiveControls -------------------------------------------------------------------------
    @property
    def paused(self) -> bool:
        return self.driver.paused if self.driver else False

    @property
    def users(self) -> int:
        return self.driver.users if self.driver else 0

    def pause(self) -> None:
        if self.driver:
            self.driver.pause()
            self.event("load paused")

    def resume(self) -> None:
        if self.driver:
            self.driver.resume()
            self.event("load resumed")

    def set_users(self, users: int) -> None:
        if self.driver:
            users = max(0, users)
            self.driver.set_users(users)
            self.event(f"users set to {users}")

    def set_price(self, usd_per_gpu_hour: float | None, gpus: int | None) -> None:
        self._meter.set_price(usd_per_gpu_hour, gpus)
        self._user_price = True
        self.event("cost price changed by the user")

    def reset_windows(self) -> None:
        for monitor in self._monitors:
            monitor.reset_window()
        if self.driver:
            self.driver.reset_window()
        self.event("windows reset")

    async def shutdown(self, reason: str | None = None) -> None:
        self.request_stop(reason or "quit")

    # ---- lifecycle ----------------------------------------------------------------------------
    def request_stop(self, reason: str, *, partial: bool = False) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
            if partial:
                self.partial_reason = reason
        self._stop.set()

    def event(self, text: str) -> None:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        self._events.append(f"{time.strftime('%H:%M:%S')} {text}")

    async def close(self) -> None:
        """Stop collectors and load (the launched server is the target's to stop)."""
        if self.driver:
            await self.driver.stop()
        if self._nvml:
            await asyncio.to_thread(self._nvml.close)
        await self._http.aclose()

    async def snapshots(self) -> AsyncIterator[Snapshot]:
        """One Snapshot per tick until the run ends, then a final one after the load has drained,
        so that the last snapshot's server counters and client records cover the same requests."""
        self._started_at = time.time()
        next_tick = time.monotonic()
        while not self._stop.is_set():
            snap = self._publish(await self._tick())
            yield snap
            self._check_end(snap)
            next_tick += self.interval_s
            delay = next_tick - time.monotonic()
            if delay < 0:  # fell behind (a slow tick): do not try to catch up with a burst
                next_tick = time.monotonic()
                delay = 0
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=delay)
        final = await self.finish()
        if final is not None:
            yield final

    async def finish(self) -> Snapshot | None:
        """Drain in-flight requests (briefly when interrupted) and publish the final snapshot, once.
        Called by `snapshots()` at its end, and by the runner when the dashboard quit mid-stream."""
        if self._finished or self._seq == 0:
            return None
        self._finished = True
        self.request_stop(self.stop_reason or "quit")
        if self.driver is not None:
            await self.driver.drain(timeout_s=self.drain_timeout_s if self.partial_reason is None else 2.0)
        return self._publish(await self._tick())

    def _publish(self, snap: Snapshot) -> Snapshot:
        for sink in self.sinks:
            sink(snap)
        return snap

    def _check_end(self, snap: Snapshot) -> None:
        launched = self.target.launched
        if launched is not None and not launched.alive():
            code = launched.process.poll()
            tail = launched.log.tail(_CRASH_LOG_LINES)
            self.server_exit = (code, tail)
            last = tail[-1].strip() if tail else "no output"
            self.event(f"the launched server exited (code {code}): {last}")
            self.request_stop(f"the launched server exited (code {code}): {last}", partial=True)
        elif self.duration_s is not None and snap.elapsed_s >= self.duration_s:
            self.request_stop("duration reached")

    async def _tick(self) -> Snapshot:
        now = time.time()
        endpoints: Sequence[EndpointFigures] = await asyncio.gather(*(m.sample(now) for m in self._monitors))
        self._note_up_down(endpoints)
        gpu = await self._gpu_state(now)
        client: ClientFigures | None = None
        sessions: tuple[SessionRow, ...] = ()
        if self.driver is not None:
            client = self.driver.figures(time.monotonic())  # the driver's clock
            sessions = self.driver.sessions()
        aggregate = aggregate_endpoints(endpoints)
        if not self._user_price and self._meter.price is None:
            self._meter = CostMeter(self._resolve_price(tuple(g.name for g in gpu.gpus), len(gpu.gpus)))
        cost = self._cost(now, client, aggregate, gpu)
        self._seq += 1
        log_lines: tuple[str, ...] = ()
        if self.target.launched is not None:
            lines, self.target.launched.log_cursor = self.target.launched.log.since(self.target.launched.log_cursor)
            log_lines = tuple(lines[-200:])
        events = tuple(self._events)
        self._events.clear()
        return Snapshot(
            seq=self._seq,
            time=now,
            elapsed_s=now - self._started_at,
            run=RunInfo(
                target=self.target.label,
                simulated=self.target.simulated,
                workload=self.workload,
                users=self.users,
                state=self._run_state(endpoints),
                started_at=self._started_at,
                refresh_s=self.refresh_s,
            ),
            endpoints=tuple(endpoints),
            aggregate=aggregate,
            gpu=gpu,
            client=client,
            sessions=sessions,
            cost=cost,
            events=events,
            server_log=log_lines,
        )

    def _run_state(self, endpoints: Sequence[EndpointFigures]) -> RunState:
        if self._stop.is_set():
            return "server down" if self.server_exit is not None else "stopping"
        if endpoints and not any(e.up for e in endpoints):
            return "server down"
        if self.paused:
            return "paused"
        return "running"

    def _note_up_down(self, endpoints: Sequence[EndpointFigures]) -> None:
        for e in endpoints:
            if not e.up and e.url not in self._down:
                self._down.add(e.url)
                self.event(f"server down: {e.url} ({e.status})")
            elif e.up and e.url in self._down:
                self._down.discard(e.url)
                self.event(f"server up again: {e.url}")

    async def _gpu_state(self, now: float) -> GpuState:
        if self._dcgm is not None:
            return await self._dcgm.sample(now)
        dcgm_gpus = tuple(g for m in self._monitors for g in m.dcgm_gpus)
        if dcgm_gpus:
            source = "simulated GPU (DCGM metrics of the simulator)" if self.target.simulated else "DCGM metrics"
            return GpuState(status=f"{len(dcgm_gpus)} GPU(s) from {source}", gpus=dcgm_gpus)
        if self._nvml is not None:
            return self._nvml.latest()
        return GpuState(status="no NVIDIA GPU visible: remote server (pass --gpu-metrics URL of a DCGM exporter)")

    def _resolve_price(self, gpu_names: Sequence[str], gpu_count: int | None = None) -> PriceChoice | None:
        return resolve_price(
            gpu_price=self._gpu_price,
            cost_profile=self._cost_profile,
            gpu_names=gpu_names,
            sim_gpu=self.target.sim_gpu,
            gpus=self._gpus or self.target.sim_gpus or gpu_count or None,
        )

    def _cost(
        self, now: float, client: ClientFigures | None, aggregate: EndpointFigures | None, gpu: GpuState
    ) -> CostFigures:
        elapsed = now - self._started_at
        # The meter multiplies by the GPU count, so it takes the mean power of one GPU.
        powers = [g.power_w for g in gpu.gpus if g.power_w is not None]
        power = sum(powers) / len(powers) if powers else None
        if client is not None:
            total: float | None = client.totals.prompt_tokens + client.totals.output_tokens
            output: float | None = client.totals.output_tokens
            window_total, window_output = client.total_tokens_per_s, client.output_tokens_per_s
        else:
            t = aggregate.totals if aggregate else None
            output = t.generation_tokens if t else None
            total = _sum_or_none(t.prompt_tokens, t.generation_tokens) if t else None
            window_output = aggregate.generation_tokens_per_s if aggregate else None
            window_total = (
                _sum_or_none(aggregate.prompt_tokens_per_s, aggregate.generation_tokens_per_s) if aggregate else None
            )
        return self._meter.figures(
            elapsed_s=elapsed,
            total_tokens=total,
            output_tokens=output,
            window_total_tokens_per_s=window_total,
            window_output_tokens_per_s=window_output,
            gpu_power_w=power,
        )


def _sum_or_none(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _is_local(target: Target) -> bool:
    if target.launched is not None:
        return True
    return all(("127." in e.url or "localhost" in e.url or "[::1]" in e.url) for e in target.endpoints)

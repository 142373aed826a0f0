"""A deterministic Snapshot stream and recording controls for the dashboard's tests and bench."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from agentx_tui.telemetry.snapshot import (
    ClientFigures,
    ClientTotals,
    CostFigures,
    EndpointFigures,
    EndpointTotals,
    GpuFigures,
    GpuState,
    Percentiles,
    RunInfo,
    RunState,
    SessionRow,
    SessionState,
    Snapshot,
)

URL = "http://10.0.0.7:8000"
SECRET = "sk-test-Zq9X8c7V6b5N4m3"
_STATES: tuple[SessionState, ...] = ("decoding", "prefill", "tool", "waiting", "decoding", "tool")
GIB = 1024**3


def make_snapshot(
    seq: int = 42,
    *,
    sessions: int = 12,
    users: int | None = None,
    elapsed_s: float | None = None,
    state: RunState = "running",
    gpus: int = 2,
    price: bool = True,
    cached_reported: bool = True,
    server_log: Sequence[str] = (),
    events: Sequence[str] = (),
) -> Snapshot:
    """A plausible tick of an H200 run; every figure is a fixed function of `seq`, so tests repeat."""
    wave = 0.5 + 0.5 * math.sin(seq / 5)
    output_tps = 9000 + 3000 * wave
    prompt_tps = 200_000 + 50_000 * wave
    cached_tps = prompt_tps * 0.9
    elapsed = float(seq) if elapsed_s is None else elapsed_s
    endpoint = EndpointFigures(
        url=URL,
        up=True,
        status="up",
        flavor="vllm",
        model="meta-llama/Llama-3.1-8B-Instruct",
        engine_version="0.32.0",
        max_model_len=131072,
        running=min(sessions, 256),
        waiting=3.0,
        kv_cache_usage=0.55 + 0.4 * wave,
        block_size=16,
        num_gpu_blocks=120_000,
        prefix_caching_enabled=True,
        prefix_hit_rate_window=0.88 + 0.05 * wave,
        prefix_hit_rate_lifetime=0.9,
        prompt_tokens_per_s=prompt_tps,
        generation_tokens_per_s=output_tps,
        cached_prompt_tokens_per_s=cached_tps,
        preemptions_per_s=0.5 * wave,
        requests_per_s=22.5,
        ttft=Percentiles(p50=0.17, p90=0.42, p99=0.9),
        itl=Percentiles(p50=0.008, p90=0.013, p99=0.03),
        totals=EndpointTotals(
            prompt_tokens=prompt_tps * elapsed, generation_tokens=output_tps * elapsed, preemptions=12.0
        ),
    )
    gpu_rows = tuple(
        GpuFigures(
            index=i,
            name="NVIDIA H200",
            source="nvml",
            utilization=0.8 + 0.15 * wave - 0.1 * i,
            memory_used_bytes=(120 - 10 * i) * GIB,
            memory_total_bytes=141 * GIB,
            power_w=600.0 - 40 * i,
            power_limit_w=700.0,
            temperature_c=64.0 + i,
        )
        for i in range(gpus)
    )
    rows = tuple(
        SessionRow(
            user=u,
            session=1 + (seq + u) // 30,
            state=_STATES[(seq + u) % len(_STATES)],
            step=(seq + u) % 30 + 1,
            steps_total=30,
            context_tokens=12_000 + 1_500 * ((seq + u) % 30),
            last_ttft_s=0.1 + 0.01 * (u % 7),
            decode_tokens_per_s=95.0 + (u % 11),
            output_tokens=400 * (seq + u),
            requests=seq + u,
            endpoint=URL,
        )
        for u in range(sessions)
    )
    total_tps = prompt_tps + output_tps
    usd_hour = 2.90 * gpus
    cost = (
        CostFigures(
            usd_per_gpu_hour=2.90,
            gpus=gpus,
            price_source="preset H200 rental (SemiAnalysis, July 2026)",
            mode="rental",
            usd_spent=usd_hour * elapsed / 3600,
            tokens_per_dollar_total=total_tps * 3600 / usd_hour,
            tokens_per_dollar_output=output_tps * 3600 / usd_hour,
            usd_per_million_output_tokens=usd_hour * 1e6 / (output_tps * 3600),
        )
        if price
        else CostFigures()
    )
    return Snapshot(
        seq=seq,
        time=1_800_000_000.0 + elapsed,
        elapsed_s=elapsed,
        run=RunInfo(
            target=f"attach {URL}",
            workload="coding-agent",
            users=sessions if users is None else users,
            state=state,
            started_at=1_800_000_000.0,
        ),
        endpoints=(endpoint,),
        aggregate=endpoint,
        gpu=GpuState(status=f"{gpus} GPUs via NVML", gpus=gpu_rows) if gpus else GpuState(),
        client=ClientFigures(
            output_tokens_per_s=output_tps,
            prompt_tokens_per_s=prompt_tps,
            cached_prompt_tokens_per_s=cached_tps if cached_reported else None,
            total_tokens_per_s=total_tps,
            requests_per_s=22.5,
            prefix_hit_rate=0.9 if cached_reported else None,
            prefix_hit_rate_ceiling=0.94,
            per_user_output_tokens_per_s_p50=101.0,
            ttft=Percentiles(p50=0.18, p90=0.45),
            itl=Percentiles(p50=0.009, p90=0.014),
            totals=ClientTotals(
                requests_completed=100 + seq,
                prompt_tokens=int(prompt_tps * elapsed),
                cached_prompt_tokens=int(cached_tps * elapsed),
                output_tokens=int(output_tps * elapsed),
                cached_tokens_reported=cached_reported,
            ),
        ),
        sessions=rows,
        cost=cost,
        events=tuple(events),
        server_log=tuple(server_log),
    )


class FakeSource:
    """Yields the given snapshots, then either ends or waits to be cancelled.

    `interval_s` spaces them in time; with `manual=True` only the first comes at once and each
    further one waits for `release()`, so a test decides exactly what the dashboard has seen.
    """

    def __init__(
        self,
        snapshots: Sequence[Snapshot],
        *,
        interval_s: float = 0.0,
        end: bool = False,
        manual: bool = False,
    ) -> None:
        self.items = list(snapshots)
        self.interval_s = interval_s
        self.end = end
        self.manual = manual
        self.delivered = 0
        self._released = 0
        self._wakeup: asyncio.Event | None = None

    def release(self, count: int = 1) -> None:
        self._released += count
        if self._wakeup is not None:
            self._wakeup.set()

    async def snapshots(self) -> AsyncIterator[Snapshot]:
        self._wakeup = asyncio.Event()
        for index, snap in enumerate(self.items):
            if self.manual:
                while index > self._released:
                    self._wakeup.clear()
                    await self._wakeup.wait()
            if self.interval_s:
                await asyncio.sleep(self.interval_s)
            self.delivered += 1
            yield snap
        if not self.end:
            await asyncio.Event().wait()


@dataclass
class FakeLiveControls:
    """Records every call, like the runtime would take them."""

    users: int = 12
    paused: bool = False
    calls: list[tuple[str, tuple[object, ...]]] = field(default_factory=list)

    def pause(self) -> None:
        self.paused = True
        self.calls.append(("pause", ()))

    def resume(self) -> None:
        self.paused = False
        self.calls.append(("resume", ()))

    def set_users(self, users: int) -> None:
        self.users = users
        self.calls.append(("set_users", (users,)))

    def set_price(self, usd_per_gpu_hour: float | None, gpus: int | None) -> None:
        self.calls.append(("set_price", (usd_per_gpu_hour, gpus)))

    def reset_windows(self) -> None:
        self.calls.append(("reset_windows", ()))

    async def shutdown(self, reason: str | None = None) -> None:
        self.calls.append(("shutdown", (reason,)))


@dataclass
class FakeReplayControls:
    length: int = 100
    position: int = 0
    speed: float = 1.0
    paused: bool = False
    calls: list[tuple[str, tuple[object, ...]]] = field(default_factory=list)

    def pause(self) -> None:
        self.paused = True
        self.calls.append(("pause", ()))

    def resume(self) -> None:
        self.paused = False
        self.calls.append(("resume", ()))

    def step(self, ticks: int = 1) -> None:
        self.position = min(max(self.position + ticks, 0), self.length - 1)
        self.paused = True
        self.calls.append(("step", (ticks,)))

    def seek(self, index: int) -> None:
        self.position = index
        self.calls.append(("seek", (index,)))

    def set_speed(self, speed: float) -> None:
        self.speed = speed
        self.calls.append(("set_speed", (speed,)))

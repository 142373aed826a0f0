"""Is the client the bottleneck? Each load process measures its own CPU, event-loop lag and CPU wait.

An instrument that silently measures itself is worse than none (docs/metrics.md, "Client health").
Every load process (the main one included) runs a `HealthProbe`; `judge` turns their figures into a
verdict with a reason in words. Thresholds, and why:

- **CPU ≥ 0.9 of a core in one process**: an asyncio event loop runs on one core; at 90% it has no
  headroom, so stream reads queue up and token timestamps (TTFT, ITL) come late.
- **event-loop lag p99 ≥ 50 ms**: a timer due now ran 50 ms late, so a token that arrived now may be
  stamped up to 50 ms late — five tokens at 100 tok/s per user: interactivity figures would be the
  client's, not the server's.
- **requests waiting for a connection slot**: the machine's file descriptors or ports ran out, so
  users wait on the client, not on the server (the wait is kept out of TTFT and reported here).
- **CPU wait (run queue) ≥ 0.25 s per s**: the process was runnable but had no core a quarter of the
  time — another process (often a server on the same machine) holds the cores. This is told apart
  from the client's own work: CPU time is work done, run-queue time is work the OS made it wait for.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass

CPU_LIMIT_CORES = 0.9
LAG_LIMIT_S = 0.05
RUN_QUEUE_LIMIT = 0.25
_PERIOD_S = 0.1  # lag probe period: ten looks a second are enough to see a 50 ms stall


@dataclass(frozen=True, slots=True)
class ProcessHealth:
    """One load process since the previous look (one tick)."""

    cpu_cores: float | None
    loop_lag_p99_s: float | None
    run_queue_s_per_s: float | None
    lag_samples: tuple[float, ...] = ()  # the raw lags since the previous look, for run-wide percentiles


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def _run_queue_seconds() -> float | None:
    """Time the process's main thread spent runnable but waiting for a CPU (Linux schedstat)."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as fh:
            return int(fh.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class HealthProbe:
    """Samples this process's event-loop lag in a task; `look()` gives the figures since the last look."""

    def __init__(self, period_s: float = _PERIOD_S) -> None:
        self.period_s = period_s
        self._fresh: list[float] = []  # the lags since the previous look
        self._p99: float | None = None
        self._task: asyncio.Task[None] | None = None
        self._last_wall = time.monotonic()
        self._last_cpu = _cpu_seconds()
        self._last_queue = _run_queue_seconds()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._probe(), name="agentx-health")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _probe(self) -> None:
        while True:
            due = time.monotonic() + self.period_s
            await asyncio.sleep(self.period_s)
            now = time.monotonic()
            self._fresh.append(max(0.0, now - due))

    def look(self) -> ProcessHealth:
        now, cpu, queue = time.monotonic(), _cpu_seconds(), _run_queue_seconds()
        wall = now - self._last_wall
        cores = (cpu - self._last_cpu) / wall if wall > 0 else None
        waited = None
        if queue is not None and self._last_queue is not None and wall > 0:
            waited = (queue - self._last_queue) / wall
        self._last_wall, self._last_cpu, self._last_queue = now, cpu, queue
        # The lag is judged over this look's samples only, never a window reaching back past the previous
        # look: one stall then counts in one look, so ticks closer together than a window cannot make a
        # single GC pause look like "three ticks in a row" (HealthBook).
        # Looks closer together than the probe's period may find no new sample: the last figure stands.
        fresh, self._fresh = tuple(self._fresh), []
        if fresh:
            lags = sorted(fresh)
            self._p99 = lags[min(len(lags) - 1, int(0.99 * len(lags)))]
        return ProcessHealth(cores, self._p99, waited, fresh)


def judge(processes: list[ProcessHealth], queued_requests: int) -> tuple[bool, str | None]:
    """Saturated or not, and why in words (None when healthy)."""
    why: list[str] = []
    busiest = max((p.cpu_cores for p in processes if p.cpu_cores is not None), default=None)
    lag = max((p.loop_lag_p99_s for p in processes if p.loop_lag_p99_s is not None), default=None)
    wait = max((p.run_queue_s_per_s for p in processes if p.run_queue_s_per_s is not None), default=None)
    many = len(processes) > 1
    if busiest is not None and busiest >= CPU_LIMIT_CORES:
        who = "a load process" if many else "the load process"
        why.append(f"{who} used {busiest:.2f} of a core")
    if lag is not None and lag >= LAG_LIMIT_S:
        why.append(f"its event loop ran {lag * 1000:.0f} ms late (p99)")
    if queued_requests > 0:
        why.append(f"{queued_requests} request(s) waited for a connection slot (the machine's limit)")
    if wait is not None and wait >= RUN_QUEUE_LIMIT:
        why.append(f"it waited {wait:.2f} s per s for a CPU held by other processes (a server on this machine?)")
    if not why:
        return False, None
    return True, "client saturated: " + "; ".join(why) + " — the figures are limited by the client"

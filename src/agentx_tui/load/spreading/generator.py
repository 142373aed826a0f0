"""The load generator as the run sees it (docs/architecture.md): one interface, local or in workers.

`LocalLoad` drives the users in this process; `workers.WorkerPool` spreads them over processes (or
Ray actors). Either way the run gets one `LoadSample` per tick: the client figures (merged exactly:
every load process feeds one `ClientStats`), the client's health, and a bounded sample of user rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from agentx_tui.load.sending.driver import Driver
from agentx_tui.load.sending.health import HealthProbe, ProcessHealth, judge
from agentx_tui.load.stats import ClientStats, LogHistogram, WindowFigures
from agentx_tui.load.workload.prepared import PreparedWorkload
from agentx_tui.snapshot import ClientFigures, ClientHealth, UserRow


@dataclass(frozen=True)
class LoadSample:
    client: ClientFigures
    health: ClientHealth
    sessions: tuple[UserRow, ...] = ()
    session_states: dict[str, int] = field(default_factory=dict)


class LoadGenerator(Protocol):
    """What the run asks of its load, whatever runs it."""

    on_event: Callable[[str], None] | None

    @property
    def users(self) -> int: ...

    @property
    def paused(self) -> bool: ...

    @property
    def finished(self) -> bool: ...

    @property
    def workers(self) -> int: ...

    @property
    def stats(self) -> ClientStats: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def drain(self, timeout_s: float) -> bool: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def set_users(self, users: int) -> None: ...

    def set_workload(self, workload: PreparedWorkload) -> None: ...

    def reset_window(self) -> None: ...

    async def sample(self) -> LoadSample: ...


STREAK_TICKS = 3


class HealthBook:
    """Client health over the run: the window verdict per tick, and run-wide figures for the report."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.lag = LogHistogram()
        self._cpu_sum = 0.0
        self._cpu_n = 0
        self._streak = 0
        self.saturated_ever = False
        self.reason: str | None = None

    def tick(self, processes: list[ProcessHealth], queued: int) -> ClientHealth:
        for p in processes:
            for lag in p.lag_samples:
                self.lag.add(max(lag, 1e-6))
        cores = [p.cpu_cores for p in processes if p.cpu_cores is not None]
        total = sum(cores) if cores else None
        if total is not None:
            self._cpu_sum += total
            self._cpu_n += 1
        limited, reason = judge(processes, queued)
        # A passing hiccup (a GC pause, the dashboard starting) is not saturation: three ticks in a
        # row are (each tick's lag is judged over that tick alone, so one stall counts once).
        self._streak = self._streak + 1 if limited else 0
        saturated = self._streak >= STREAK_TICKS
        if saturated and not self.saturated_ever:
            self.saturated_ever, self.reason = True, reason
        lags = [p.loop_lag_p99_s for p in processes if p.loop_lag_p99_s is not None]
        waits = [p.run_queue_s_per_s for p in processes if p.run_queue_s_per_s is not None]
        return ClientHealth(
            workers=self.workers,
            cpu_cores=total,
            cpu_cores_max_process=max(cores) if cores else None,
            loop_lag_p99_s=max(lags) if lags else None,
            run_queue_s_per_s=max(waits) if waits else None,
            queued_requests=queued,
            saturated=saturated,
            reason=reason if saturated else None,
            run_cpu_cores_mean=self.cpu_cores_mean,
            run_loop_lag_p99_s=self.lag.quantile(0.99),
            run_saturated=self.saturated_ever,
            run_reason=self.reason,
        )

    @property
    def cpu_cores_mean(self) -> float | None:
        return self._cpu_sum / self._cpu_n if self._cpu_n else None


class LocalLoad:
    """The users in this process: one `Driver`, whose statistics are the run's."""

    workers = 1

    def __init__(self, driver: Driver) -> None:
        assert driver.stats is not None
        self.driver = driver
        self.stats: ClientStats = driver.stats
        self.on_event: Callable[[str], None] | None = None
        self._probe = HealthProbe()
        self.health = HealthBook(workers=1)

    @property
    def users(self) -> int:
        return self.driver.users

    @property
    def paused(self) -> bool:
        return self.driver.paused

    @property
    def finished(self) -> bool:
        return self.driver.finished

    async def start(self) -> None:
        self.driver.on_event = self._emit
        self._probe.start()
        await self.driver.start()

    def _emit(self, line: str) -> None:
        if self.on_event is not None:
            self.on_event(line)

    async def stop(self) -> None:
        await self.driver.stop()
        await self._probe.stop()

    async def drain(self, timeout_s: float) -> bool:
        return await self.driver.drain(timeout_s)

    def pause(self) -> None:
        self.driver.pause()

    def resume(self) -> None:
        self.driver.resume()

    def set_users(self, users: int) -> None:
        self.driver.set_users(users)

    def set_workload(self, workload: PreparedWorkload) -> None:
        self.driver.set_workload(workload)

    def reset_window(self) -> None:
        self.driver.reset_window()

    def open_window(self) -> WindowFigures:
        return self.stats.open_window(time.monotonic())

    async def sample(self) -> LoadSample:
        figures = self.driver.figures(time.monotonic())
        health = self.health.tick([self._probe.look()], self.driver.queued)
        return LoadSample(figures, health, self.driver.sessions(), self.driver.session_states())

"""Client health over the run (docs/metrics.md, "Client health"): each tick's verdict over every load
process, and the run-wide figures the report keeps."""

from __future__ import annotations

from agentx_tui.load.sending import ProcessHealth, judge
from agentx_tui.load.stats import LogHistogram
from agentx_tui.snapshot import ClientHealth

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

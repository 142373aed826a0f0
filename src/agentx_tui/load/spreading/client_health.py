"""Client health over the run (docs/metrics.md, "Client health"): each tick's verdict over every load
process, and the run-wide figures the report keeps."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from agentx_tui.load.sending import ProcessHealth, judge
from agentx_tui.measure import LogHistogram
from agentx_tui.snapshot import ClientHealth

STREAK_TICKS = 3
RECENT_TICKS = 10  # the live CPU-per-token figure is over this many ticks (one tick has few tokens)


class HealthBook:
    """Client health over the run: the window verdict per tick, and run-wide figures for the report."""

    def __init__(self, workers: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.workers = workers
        self._clock = clock
        self.lag = LogHistogram()
        self._cpu_sum = 0.0
        self._cpu_n = 0
        self._last_tick = clock()
        self._tokens_seen = 0
        self._cpu_s = 0.0  # CPU seconds of every load process over the run
        self._tokens = 0  # output tokens streamed over the run
        self._recent: deque[tuple[float, int]] = deque(maxlen=RECENT_TICKS)
        self._streak = 0
        self.saturated_ever = False
        self.reason: str | None = None

    def tick(self, processes: list[ProcessHealth], queued: int, output_tokens: int = 0) -> ClientHealth:
        """This tick's verdict; `output_tokens` is the run's output tokens so far (for CPU per token)."""
        for p in processes:
            for lag in p.lag_samples:
                self.lag.add(max(lag, 1e-6))
        cores = [p.cpu_cores for p in processes if p.cpu_cores is not None]
        total = sum(cores) if cores else None
        if total is not None:
            self._cpu_sum += total
            self._cpu_n += 1
        self._count_tokens(total, output_tokens)
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
            cpu_us_per_token=_per_token(sum(c for c, _ in self._recent), sum(t for _, t in self._recent)),
            run_cpu_cores_mean=self.cpu_cores_mean,
            run_cpu_us_per_token=_per_token(self._cpu_s, self._tokens),
            run_loop_lag_p99_s=self.lag.quantile(0.99),
            run_saturated=self.saturated_ever,
            run_reason=self.reason,
        )

    @property
    def cpu_cores_mean(self) -> float | None:
        return self._cpu_sum / self._cpu_n if self._cpu_n else None

    def _count_tokens(self, cores: float | None, output_tokens: int) -> None:
        now = self._clock()
        cpu_s = cores * (now - self._last_tick) if cores is not None else 0.0
        tokens = max(0, output_tokens - self._tokens_seen)  # (a total never falls; a new run's may start lower)
        self._last_tick, self._tokens_seen = now, output_tokens
        self._cpu_s += cpu_s
        self._tokens += tokens
        self._recent.append((cpu_s, tokens))


def _per_token(cpu_s: float, tokens: int) -> float | None:
    """µs of client CPU per output token streamed; None before any token."""
    return cpu_s / tokens * 1e6 if tokens else None

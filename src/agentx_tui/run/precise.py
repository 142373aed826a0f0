"""A plain run with `--precision F` (docs/sweeps.md, "--precision"): it measures like a sweep point.

A window opens at the run's first tick (after its `--warmup`, when it has one: run/phases.py
`MeasuredWindow`); the run ends as soon as the 95% intervals of its throughput
and of its p90 interactivity on the frontier's axis (`--frontier-axis`: E2E-normalized by default)
are each within ±F (checked as a sweep point's are, once 20 requests are
counted), or at `--duration` (then the longest the run may take), or when its sessions have run out
(or its every load worker has died: cut short).
The final snapshot carries the window's intervals (`Snapshot.intervals`) and why the run ended; the
report carries their relative widths over to its whole-run figures.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agentx_tui.run.phases import EVERY_WORKER_LOST, MeasuredWindow, RunHandle, every_worker_lost
from agentx_tui.snapshot import FrontierAxis, PointFigures, RunIntervals, Snapshot
from agentx_tui.sweep import NORTH_STAR, PointWindow


class PreciseRun:
    def __init__(
        self,
        duration_s: float | None,
        precision: float,
        *,
        warmup_s: float = 0.0,
        axis: FrontierAxis = NORTH_STAR,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.duration_s = duration_s
        self.precision = precision
        self.axis = axis
        self._clock = clock
        self._measured = MeasuredWindow(warmup_s, axis=axis, clock=clock)
        self._stopped_early = False
        self._stop_reason: str | None = None

    def advance(self, snap: Snapshot, run: RunHandle, *, final: bool) -> Snapshot:
        stats = run.load.stats if run.load is not None else None
        if stats is None:
            return snap
        measured = self._measured
        window = measured.advance(snap, stats, run, final=final)
        if final:
            measured.end(stats)
            point = measured.figures(snap) if window is not None and window.client.duration_s else None
            update: dict[str, object] = {"intervals": self._final(window, point)}
            if measured.warmup_s:  # the report's client figures are the window's (run/phases.py)
                update["measured"] = point or measured.figures(snap)
            measured.close(stats)
            return snap.model_copy(update=update)
        if self._stop_reason is None and every_worker_lost(snap):
            self._stop_reason = EVERY_WORKER_LOST
            run.request_stop(EVERY_WORKER_LOST, partial=True)
        if window is None:  # still warming up
            if self.duration_s is not None and snap.elapsed_s >= self.duration_s:
                run.request_stop("duration reached")
            elif run.load is not None and run.load.finished:
                run.request_stop("every session has ended")
            return snap.model_copy(update={"intervals": self._state(None)})
        if self._stop_reason is None:
            self._check(snap, run, window)
        return snap.model_copy(update={"intervals": self._state(window)})

    def _check(self, snap: Snapshot, run: RunHandle, window: PointWindow) -> None:
        out_of_time = self.duration_s is not None and snap.clock_s >= self.duration_s
        finished = run.load is not None and run.load.finished
        check = window.check_precision(self._clock(), force=out_of_time or finished)
        target = f"±{self.precision:.0%}"
        if check is not None and check.met(self.precision):
            self._stopped_early = not out_of_time
            self._stop_reason = f"precision {target} reached: {check.words()}"
            run.request_stop(self._stop_reason)
        elif out_of_time or finished:
            why = "--duration reached" if out_of_time else "every session has ended"
            words = check.words() if check is not None else "no request counted"
            self._stop_reason = f"{why} before {target}: {words}"
            run.request_stop("duration reached" if out_of_time else why)

    def _state(self, window: PointWindow | None) -> RunIntervals:
        return RunIntervals(
            precision=self.precision,
            requests=window.client.latency.requests if window is not None else 0,
            stopped_early=self._stopped_early,
            stop_reason=self._stop_reason,
        )

    def _final(self, window: PointWindow | None, point: PointFigures | None) -> RunIntervals:
        """The window's figures (`point`, None when it measured no time) that carry a 95% interval, with
        their intervals (as a sweep point's)."""
        if point is None:
            return self._state(window)
        return self._state(window).updated(
            **{key: getattr(point, key) for key in point.intervals},
            intervals=point.intervals,
            ci_method=point.ci_method,
        )

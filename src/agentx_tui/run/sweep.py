"""A sweep's phases (docs/sweeps.md): one measured point per user count, sessions kept running.

Per point: set the users (more are added, none restarted), wait the warm-up, measure for
`point_duration` — or, with `--precision F`, until both 95% half-widths are within F (checked each
tick once 20 requests are counted; `point_duration` is then the longest) — record the point; then
the next user count (the list's, or double for `auto`, until a stop rule says the curve is done).
Each tick the Snapshot carries the sweep's state, so the dashboard draws the frontier as points
arrive and a recording replays it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agentx_tui.measure import ClientStats, WindowFigures
from agentx_tui.run.phases import RunHandle
from agentx_tui.snapshot import PointFigures, Snapshot, SweepPhase, SweepState, TierRead
from agentx_tui.sweep import (
    PointWindow,
    auto_stop_reason,
    next_auto_users,
    pareto_front,
    read_tiers,
    tier_intervals,
)
from agentx_tui.units import compact


class SweepPhases:
    def __init__(
        self,
        users: tuple[int, ...],
        *,
        start_users: int,
        warmup_s: float,
        point_duration_s: float,
        tiers: tuple[float, ...],
        precision: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.auto = not users
        self._clock = clock  # the load statistics' clock (monotonic), for the windows' edges
        self.planned = list(users) if users else [start_users]
        self.warmup_s = warmup_s
        self.point_duration_s = point_duration_s
        self.tiers = tiers
        self.precision = precision
        self.points: list[PointFigures] = []
        # The tier reads and their intervals, kept until the points or the price change (a Monte Carlo).
        self._reads: tuple[tuple[tuple[PointFigures, ...], float | None], tuple[TierRead, ...]] | None = None
        self._index = 0
        self._phase: SweepPhase = "warmup"
        self._phase_started: float | None = None  # snapshot time the phase began
        self._window: PointWindow | None = None
        self._closing: tuple[PointWindow, ClientStats] | None = None  # the last point, still counting tokens
        self._users_set_at: float | None = None  # the stats' clock when this point's users were set
        self._stop_reason: str | None = None

    # -- Phases -------------------------------------------------------------------------------------
    def advance(self, snap: Snapshot, run: RunHandle, *, final: bool) -> Snapshot:
        stats = run.load.stats if run.load is not None else None
        if stats is None:
            return snap
        if final:
            self._finish(snap, stats)
            return snap.model_copy(update={"sweep": self._state(snap)})
        if self._phase_started is None:
            self._phase_started = snap.time
            run.set_users(self.planned[0])
            self._users_set_at = self._clock()
            run.events.add(f"sweep point 1: {self.planned[0]} users, warm-up {self.warmup_s:g} s")
        if run.load is not None and run.load.finished:  # --sessions ran out before the sweep did
            self._stop_reason = self._stop_reason or "every session has ended"
            run.request_stop(f"sweep ended: {self._stop_reason}")
        elapsed = snap.time - self._phase_started
        if self._phase == "warmup" and elapsed >= self.warmup_s:
            self._begin_measure(snap, stats)
        elif self._phase == "measure" and self._window is not None:
            self._window.tick(snap)
            if self._window_done(self._window, elapsed):
                self._end_point(snap, stats, run)
        return snap.model_copy(update={"sweep": self._state(snap)})

    def _window_done(self, window: PointWindow, elapsed: float) -> bool:
        """Whether the point's window ends now, and why (set on the window)."""
        if self.precision is not None:
            last = elapsed >= self.point_duration_s
            check = window.check_precision(self._clock(), force=last)
            if check is not None and check.met(self.precision):
                window.stopped_early = not last
                window.stop_reason = f"precision ±{self.precision:.0%} reached: {check.words()}"
                return True
            if last:
                words = check.words() if check is not None else "no request counted"
                window.stop_reason = (
                    f"--point-duration {self.point_duration_s:g} s reached before ±{self.precision:.0%}: {words}"
                )
                return True
            return False
        if elapsed >= self.point_duration_s:
            window.stop_reason = f"--point-duration {self.point_duration_s:g} s measured"
            return True
        return False

    # -- internals ----------------------------------------------------------------------------------
    def _begin_measure(self, snap: Snapshot, stats: ClientStats) -> None:
        self._close_previous(stats)  # its in-flight requests have had the warm-up to finish
        window: WindowFigures = stats.open_window(self._clock())
        self._window = PointWindow(self._index, self.planned[self._index], self.warmup_s, snap, window)
        self._window.cohort_edge = self._users_set_at  # slots that sent before it came from earlier points
        self._phase, self._phase_started = "measure", snap.time

    def _end_point(self, snap: Snapshot, stats: ClientStats, run: RunHandle) -> None:
        assert self._window is not None
        stats.end_window(self._window.client, self._clock())
        self.points.append(self._window.figures())
        self._closing = (self._window, stats)
        self._window = None
        point = self.points[-1]
        run.events.add(
            f"sweep point {self._index + 1} done: {point.users} users, "
            f"{compact(point.total_tokens_per_s_per_gpu, trim=True)}"
            f"{_span(point.total_tokens_per_s_per_gpu_ci_low, point.total_tokens_per_s_per_gpu_ci_high)} tok/s/GPU "
            f"at p90 {compact(point.interactivity_p90_tokens_per_s, trim=True)}"
            f"{_span(point.interactivity_p90_tokens_per_s_ci_low, point.interactivity_p90_tokens_per_s_ci_high)} "
            f"tok/s/user"
        )
        if point.stopped_early and point.stop_reason:
            run.events.add(f"sweep point {self._index + 1} ended early: {point.stop_reason}")
        reason = self._next_reason()
        if reason is not None:
            self._stop_reason = reason
            self._phase = "done"
            run.events.add(f"sweep ended: {reason}")
            run.request_stop(f"sweep done: {reason}")
            return
        self._index += 1
        if self.auto:
            self.planned.append(next_auto_users(self.planned[-1]))
        users = self.planned[self._index]
        run.set_users(users)
        self._users_set_at = self._clock()
        run.events.add(f"sweep point {self._index + 1}: {users} users, warm-up {self.warmup_s:g} s")
        self._phase, self._phase_started = "warmup", snap.time

    def _next_reason(self) -> str | None:
        if not self.auto:
            return None if self._index + 1 < len(self.planned) else f"all {len(self.planned)} points measured"
        return auto_stop_reason(self.points, lowest_tier=min(self.tiers))

    def _close_previous(self, stats: ClientStats) -> None:
        """Final token rates of the last point: requests it counted half have finished since."""
        if self._closing is None:
            return
        window, closing_stats = self._closing
        closing_stats.close_window(window.client)
        self.points[window.index] = window.figures()
        self._closing = None

    def _finish(self, snap: Snapshot, stats: ClientStats) -> None:
        """The run's last snapshot (after the drain): close what is open and say why the sweep ended."""
        self._close_previous(stats)
        if self._window is not None:  # interrupted mid-point: a partial window is not a point
            stats.close_window(self._window.client)
            self._window = None
        if self._stop_reason is None:
            measured = len(self.points)
            self._stop_reason = f"interrupted after {measured} point{'s' if measured != 1 else ''}"
        self._phase = "done"

    def _tiers(self, frontier: tuple[int, ...], price: float | None) -> tuple[TierRead, ...]:
        key = (tuple(self.points), price)
        if self._reads is None or self._reads[0] != key:
            reads = read_tiers(self.points, frontier, self.tiers, usd_per_gpu_hour=price)
            self._reads = (key, tier_intervals(self.points, frontier, reads))
        return self._reads[1]

    def _state(self, snap: Snapshot) -> SweepState:
        frontier = pareto_front([(p.interactivity_p90_tokens_per_s, p.total_tokens_per_s_per_gpu) for p in self.points])
        left = None
        if self._phase != "done" and self._phase_started is not None:
            span = self.warmup_s if self._phase == "warmup" else self.point_duration_s
            left = max(0.0, span - (snap.time - self._phase_started))
        return SweepState(
            mode="auto" if self.auto else "list",
            planned_users=tuple(self.planned),
            tiers=self._tiers(frontier, snap.cost.usd_per_gpu_hour),
            points=tuple(self.points),
            frontier=frontier,
            current=None if self._phase == "done" else self._index,
            current_users=None if self._phase == "done" else self.planned[self._index],
            phase=self._phase,
            phase_left_s=left,
            warmup_s=self.warmup_s,
            point_duration_s=self.point_duration_s,
            stop_reason=self._stop_reason,
            precision=self.precision,
        )


def _span(low: float | None, high: float | None) -> str:
    """A 95% interval for the log: ' [1.2K–1.5K]', or nothing when unknown."""
    if low is None or high is None:
        return ""
    return f" [{compact(low, trim=True)}–{compact(high, trim=True)}]"

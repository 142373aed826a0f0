"""A sweep's phases (docs/sweeps.md): one measured point per user count, sessions kept running.

Per point: set the users (more are added, none restarted), wait the warm-up, measure for
`point_duration` — or, with `--precision F`, until both 95% half-widths are within F (checked each
tick once 20 requests are counted; `point_duration` is then the longest) — record the point; then
the next user count (the list's, or double for `auto`, until a stop rule says the curve is done).
A load worker that dies mid-point takes its users with it: the point's window is dropped, the users
restarted in a fresh worker, and the point measured again from a new warm-up; lost again in the same
point (or not restartable), the sweep stops. Each tick the Snapshot carries the sweep's state, so the
dashboard draws the frontier as points arrive and a recording replays it: the frontier and tier reads
on the chosen x-axis (`--frontier-axis`, the North Star by default), with the agents per GPU at each
tier read on that frontier too, and the other view's frontier and tier reads beside them
(docs/sweeps.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agentx_tui.measure import ClientStats, WindowFigures
from agentx_tui.run.phases import RunHandle
from agentx_tui.snapshot import FrontierAxis, PointFigures, Snapshot, SweepPhase, SweepState, TierRead
from agentx_tui.sweep import (
    NORTH_STAR,
    PointWindow,
    auto_stop_reason,
    axis_name,
    measured,
    next_auto_users,
    other_axis,
    point_x,
    point_x_interval,
    read_agents,
    read_tiers,
    thin_words,
    tier_intervals,
    view_fronts,
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
        axis: FrontierAxis = NORTH_STAR,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.auto = not users
        self.axis = axis  # the frontier's x-axis: tier reads, the auto stop rule and --precision are on it
        self._clock = clock  # the load statistics' clock (monotonic), for the windows' edges
        self.planned = list(users) if users else [start_users]
        self.warmup_s = warmup_s
        self.point_duration_s = point_duration_s
        self.tiers = tiers
        self.precision = precision
        self.points: list[PointFigures] = []
        # The tier reads and their intervals on both views (the chosen axis's, the other's), kept until
        # the points, the price or the GPU count change (a Monte Carlo each).
        self._reads: (
            tuple[
                tuple[tuple[PointFigures, ...], float | None, int | None],
                tuple[tuple[TierRead, ...], tuple[TierRead, ...]],
            ]
            | None
        ) = None
        self._index = 0
        self._phase: SweepPhase = "warmup"
        self._phase_started: float | None = None  # snapshot time the phase began
        self._window: PointWindow | None = None
        self._closing: tuple[PointWindow, ClientStats] | None = None  # the last point, still counting tokens
        self._users_set_at: float | None = None  # the stats' clock when this point's users were set
        self._stop_reason: str | None = None
        self._losses_seen = 0  # the run's lost load workers already acted on
        self._lost_in: dict[int, int] = {}  # a point's index → how often load workers were lost in it
        self._restarting = False  # the point waits for the lost users to run again

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
        if self._held_by_losses(snap, stats, run):
            return snap.model_copy(update={"sweep": self._state(snap)})
        elapsed = snap.time - self._phase_started
        if self._phase == "warmup" and elapsed >= self.warmup_s:
            self._begin_measure(snap, stats)
        elif self._phase == "measure" and self._window is not None:
            self._window.tick(snap)
            if self._window_done(self._window, elapsed):
                self._end_point(snap, stats, run)
        return snap.model_copy(update={"sweep": self._state(snap)})

    def _held_by_losses(self, snap: Snapshot, stats: ClientStats, run: RunHandle) -> bool:
        """A load worker died (docs/sweeps.md, "A lost load worker"): the point under way is not measured
        with its users, so its window (if open) is dropped, the lost users restarted in fresh workers, and
        the point measured again from a new warm-up once they run. Lost again in the same point, or not
        restartable, the sweep stops. Whether the point is held this tick (waiting, or stopped)."""
        losses = snap.run.load_losses
        if self._phase == "done":
            return False
        number, users = self._index + 1, self.planned[self._index]
        if len(losses) > self._losses_seen:
            self._losses_seen = len(losses)
            self._lost_in[self._index] = self._lost_in.get(self._index, 0) + 1
            if self._window is not None:  # measured with fewer users than its label: not a point
                stats.close_window(self._window.client)
                self._window = None
            if self._lost_in[self._index] > 1:
                self._stop(run, f"load workers lost again in point {number} ({users} users): {losses[-1].words}")
                return True
            if run.load is not None:
                run.load.restart_lost()
            self._restarting = True
            self._phase = "warmup"
            run.events.add(
                f"sweep point {number} ({users} users): load workers lost; its window is dropped and the point "
                "measured again once their users run again"
            )
        if not self._restarting:
            return False
        self._phase_started = snap.time  # its warm-up begins once every user runs again
        failed = next((loss for loss in losses if loss.restart_error is not None), None)
        if failed is not None:
            self._stop(run, f"the load workers lost in point {number} could not be restarted: {failed.restart_error}")
            return True
        if any(loss.restarted_at_s is None for loss in losses):
            return True
        # (The point's cohort edge stays when its users were set: the fresh worker's users began after it.)
        self._restarting = False
        run.events.add(f"sweep point {number}: {users} users run again, warm-up {self.warmup_s:g} s")
        return False

    def _stop(self, run: RunHandle, reason: str) -> None:
        """End the sweep early: it could not measure the point under way."""
        self._stop_reason = reason
        self._phase = "done"
        run.events.add(f"sweep ended: {reason}")
        run.request_stop(f"sweep stopped: {reason}", partial=True)

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
        self._window = PointWindow(self._index, self.planned[self._index], self.warmup_s, snap, window, axis=self.axis)
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
            f"{_span(*point.interval('total_tokens_per_s_per_gpu'))} tok/s/GPU "
            f"at {axis_name(self.axis)} {compact(point_x(point, self.axis), trim=True)}"
            f"{_span(*point_x_interval(point, self.axis))} tok/s/user"
        )
        if point.stopped_early and point.stop_reason:
            run.events.add(f"sweep point {self._index + 1} ended early: {point.stop_reason}")
        if not measured(point):
            run.events.add(
                f"sweep point {self._index + 1} not measured: no request started after its warm-up and ended "
                "inside its window (a longer --point-duration would count some)"
            )
        elif point.thin:
            run.events.add(f"sweep point {self._index + 1} is thin: {thin_words(point.requests or 0)}")
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
            if self._index + 1 < len(self.planned):
                return None
            unmeasured = sum(1 for p in self.points if not measured(p))
            if unmeasured:
                return f"all {len(self.planned)} points done, {unmeasured} not measured (no request counted)"
            return f"all {len(self.planned)} points measured"
        return auto_stop_reason(self.points, lowest_tier=min(self.tiers), axis=self.axis)

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

    def _tiers(
        self, fronts: tuple[tuple[int, ...], tuple[int, ...]], price: float | None, gpus: int | None
    ) -> tuple[tuple[TierRead, ...], tuple[TierRead, ...]]:
        """The tier reads on the chosen axis and on the other, both every time (docs/sweeps.md); the
        chosen axis's carry the agents per GPU at each tier, read on its frontier."""
        key = (tuple(self.points), price, gpus)
        if self._reads is None or self._reads[0] != key:
            found = []
            for axis, frontier in zip((self.axis, other_axis(self.axis)), fronts, strict=True):
                # The decode view beside the North Star: its frontier keeps the North Star's points only.
                within = NORTH_STAR if axis != NORTH_STAR and self.axis == NORTH_STAR else None
                reads = read_tiers(self.points, frontier, self.tiers, usd_per_gpu_hour=price, gpus=gpus, axis=axis)
                found.append(tier_intervals(self.points, frontier, reads, axis=axis, within=within))
            agents = read_agents(self.points, fronts[0], self.tiers, gpus=gpus, axis=self.axis)
            primary = tuple(
                read.model_copy(
                    update={
                        "users": a.users,
                        "agents_per_gpu": a.agents_per_gpu,
                        "gpu_power_w_per_gpu": a.gpu_power_w_per_gpu,
                        "agents_per_mw": a.agents_per_mw,
                    }
                )
                for read, a in zip(found[0], agents, strict=True)
            )
            self._reads = (key, (primary, found[1]))
        return self._reads[1]

    def _state(self, snap: Snapshot) -> SweepState:
        frontier, secondary = view_fronts(self.points, self.axis)
        gpus = snap.cost.gpus or next((p.gpus for p in reversed(self.points) if p.gpus), None)
        tiers, secondary_tiers = self._tiers((frontier, secondary), snap.cost.usd_per_gpu_hour, gpus)
        left = None
        if self._phase != "done" and self._phase_started is not None:
            span = self.warmup_s if self._phase == "warmup" else self.point_duration_s
            left = max(0.0, span - (snap.time - self._phase_started))
        return SweepState(
            mode="auto" if self.auto else "list",
            planned_users=tuple(self.planned),
            tiers=tiers,
            points=tuple(self.points),
            frontier=frontier,
            frontier_axis=self.axis,
            secondary_frontier=secondary,
            secondary_tiers=secondary_tiers,
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

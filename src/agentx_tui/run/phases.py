"""The phases of a run (docs/architecture.md): what happens from tick to tick besides collecting.

A plain run measures until its `--duration` (or until `--sessions`/the workload's stop rule has run
its course, or every load worker has died, or until quit); with `--warmup S` its first S seconds are
not measured: a window opens once they are over (`MeasuredWindow`, a sweep point's machinery), and the
last snapshot carries its figures (`Snapshot.measured`), which the report takes for its client figures
(docs/metrics.md, "Warm-up"). A sweep (run/sweep.py) steps through its points. Both see each tick's
Snapshot and may change the users, end the run, or add their state to the Snapshot.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from agentx_tui.load import LoadGenerator
from agentx_tui.measure import ClientStats
from agentx_tui.run.collect import EventLog
from agentx_tui.snapshot import FrontierAxis, PointFigures, Snapshot
from agentx_tui.sweep import NORTH_STAR, PointWindow


class RunHandle(Protocol):
    """What the phases may do to the live run."""

    @property
    def load(self) -> LoadGenerator | None: ...

    @property
    def events(self) -> EventLog: ...

    def set_users(self, users: int) -> None: ...

    def request_stop(self, reason: str, *, partial: bool = False) -> None: ...


class Phases(Protocol):
    def advance(self, snap: Snapshot, run: RunHandle, *, final: bool) -> Snapshot:
        """Called once per tick (and for the final snapshot): returns the snapshot to publish."""
        ...


class MeasuredWindow:
    """A plain run's measured window: it opens at the first tick `warmup_s` seconds into the run (at the
    first tick without a warm-up) and counts, as a sweep point does, the requests that started after it
    (measure/window.py); the run's totals are not its business."""

    def __init__(self, warmup_s: float, *, axis: FrontierAxis, clock: Callable[[], float]) -> None:
        self.warmup_s = warmup_s
        self.axis = axis
        self._clock = clock
        self.window: PointWindow | None = None
        self._said = False

    def advance(self, snap: Snapshot, stats: ClientStats, run: RunHandle, *, final: bool) -> PointWindow | None:
        """The window, opened once the warm-up is over (never at the final tick: it would measure no
        time), with this tick counted in it; None before."""
        if self.warmup_s and not self._said:
            self._said = True
            run.events.add(f"warm-up: the first {self.warmup_s:g} s are not measured")
        if self.window is None and snap.elapsed_s >= self.warmup_s and not final:
            client = stats.open_window(self._clock())
            client.keep_warm()  # the cold start over the window's requests (measure/cold.py)
            self.window = PointWindow(0, snap.run.users, self.warmup_s, snap, client, axis=self.axis)
            if self.warmup_s:
                run.events.add("warm-up over: the report's client figures count the requests sent from now on")
        if self.window is not None:
            self.window.tick(snap)
        return self.window

    def end(self, stats: ClientStats) -> None:
        """The run's end (after its drain): later requests no longer count for the window's latencies."""
        if self.window is not None:
            stats.end_window(self.window.client, self._clock())

    def close(self, stats: ClientStats) -> None:
        if self.window is not None:
            stats.close_window(self.window.client)

    def figures(self, snap: Snapshot) -> PointFigures:
        """The window's figures; a run that ended inside its warm-up measured nothing: a point of no
        request and no time, so every figure over the window is unknown (null), never the warm-up's."""
        if self.window is not None:
            return self.window.figures()
        return PointFigures(
            index=0,
            users=snap.run.users,
            warmup_s=self.warmup_s,
            duration_s=0.0,
            window_start_s=snap.elapsed_s,
            requests=0,
            thin=True,
        )


class TimedRun:
    """A plain run: ends at its duration, or when the load has run out of sessions to start. With a
    warm-up, its last snapshot carries the window after it (`Snapshot.measured`)."""

    def __init__(
        self,
        duration_s: float | None,
        *,
        warmup_s: float = 0.0,
        axis: FrontierAxis = NORTH_STAR,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.duration_s = duration_s
        self._measured = MeasuredWindow(warmup_s, axis=axis, clock=clock) if warmup_s > 0 else None

    def advance(self, snap: Snapshot, run: RunHandle, *, final: bool) -> Snapshot:
        stats = run.load.stats if run.load is not None else None
        measured = self._measured
        if measured is not None and stats is not None:
            measured.advance(snap, stats, run, final=final)
            if final:
                measured.end(stats)
                figures = measured.figures(snap)
                measured.close(stats)
                return snap.model_copy(update={"measured": figures})
        if final:
            return snap
        if self.duration_s is not None and snap.clock_s >= self.duration_s:  # a pause stops the clock
            run.request_stop("duration reached")
        elif run.load is not None and run.load.finished:
            run.request_stop("every session has ended")
        elif every_worker_lost(snap):
            run.request_stop(EVERY_WORKER_LOST, partial=True)
        return snap


EVERY_WORKER_LOST = "every load worker died: no user is left to measure"


def every_worker_lost(snap: Snapshot) -> bool:
    """Whether the load's last worker has died: a plain run restarts none (docs/scale.md), so with none
    left it measures nothing more and ends, cut short."""
    losses = snap.run.load_losses
    return bool(losses) and losses[-1].users_left == 0 and losses[-1].users_lost > 0

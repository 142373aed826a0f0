"""The phases of a run (docs/architecture.md): what happens from tick to tick besides collecting.

A plain run measures until its `--duration` (or until `--sessions`/the workload's stop rule has run
its course, or every load worker has died, or until quit). A sweep (run/sweep.py) steps through its
points. Both see each tick's Snapshot and may change the users, end the run, or add their state to the
Snapshot.
"""

from __future__ import annotations

from typing import Protocol

from agentx_tui.load import LoadGenerator
from agentx_tui.run.collect import EventLog
from agentx_tui.snapshot import Snapshot


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


class TimedRun:
    """A plain run: ends at its duration, or when the load has run out of sessions to start."""

    def __init__(self, duration_s: float | None) -> None:
        self.duration_s = duration_s

    def advance(self, snap: Snapshot, run: RunHandle, *, final: bool) -> Snapshot:
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

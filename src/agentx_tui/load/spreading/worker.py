"""The worker side of a load worker, whatever carries its commands (a pipe, or Ray actor methods).

Each worker runs a `Driver` that owns a stride of the global user and session ids (worker w of N:
ids w, w+N, w+2N, …), so one and N workers draw the very same sessions, and hands what happened to an
`Outbox` instead of statistics: the main process merges every worker's summaries into one
`ClientStats`, so the accounting is the same code whatever the number of workers.
"""

from __future__ import annotations

import time
from dataclasses import replace

from agentx_tui.load.sending import Driver, HealthProbe, IdStride
from agentx_tui.load.spreading.driven import DriverControls
from agentx_tui.load.spreading.protocol import WorkerReport, WorkerSpec
from agentx_tui.measure import Completed, Failed
from agentx_tui.snapshot import USERS_SHOWN


def share(users: int, worker: int, workers: int) -> int:
    """How many of `users` worker `worker` of `workers` runs: the global ids ≡ worker (mod workers)."""
    return users // workers + (1 if worker < users % workers else 0)


class Outbox:
    """A worker's `StatsSink`: what happened since the main process last asked."""

    def __init__(self) -> None:
        self.completed: list[Completed] = []
        self.failed: list[Failed] = []
        self.sessions_ended: list[tuple[str, int]] = []  # (how, tree)

    def add(self, done: Completed) -> None:
        self.completed.append(done)

    def error(self, failed: Failed) -> None:
        self.failed.append(failed)

    def session_ended(self, how: str, tree: int = -1) -> None:
        self.sessions_ended.append((how, tree))

    def take(self) -> tuple[list[Completed], list[Failed], list[tuple[str, int]]]:
        out = (self.completed, self.failed, self.sessions_ended)
        self.completed, self.failed, self.sessions_ended = [], [], []
        return out


class WorkerCore(DriverControls):
    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.outbox = Outbox()
        self.events: list[str] = []
        self.probe = HealthProbe()
        mine = share(spec.settings.users, spec.index, spec.count)
        self.driver = Driver(
            spec.workload,
            spec.servers,
            replace(spec.settings, users=mine),
            # Past `resume_at` of its stride: a restarted worker goes on after its predecessor's sessions.
            ids=IdStride(spec.index + spec.count * spec.resume_at, spec.count),
            sink=self.outbox,
            token_models=spec.token_models,
        )
        self.driver.on_event = self.events.append

    async def start(self) -> None:
        self.probe.start()
        await self.driver.start()

    def set_users(self, users: int) -> None:
        self.driver.set_users(share(users, self.spec.index, self.spec.count))

    def collect(self) -> WorkerReport:
        completed, failed, ended = self.outbox.take()
        events, self.events = self.events, []
        limit = max(1, USERS_SHOWN // self.spec.count)
        return WorkerReport(
            index=self.spec.index,
            completed=completed,
            failed=failed,
            sessions_ended=ended,
            rows=self.driver.rows(limit),
            states=self.driver.states(),
            health=self.probe.look(),
            in_flight=self.driver.in_flight,
            queued=self.driver.queued,
            finished=self.driver.finished,
            events=events,
            now=time.monotonic(),
            sessions_taken=self.driver.sessions_taken,
            streamed=self.driver.take_streamed(),
        )

    async def stop(self) -> None:
        await self.driver.stop()
        await self.probe.stop()

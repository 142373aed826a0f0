"""Load in several processes or Ray actors (`--workers N`, `--ray`, docs/scale.md): `WorkerPool`, the
`LoadGenerator` the run sees, and `workers_for`, how many workers `--workers auto` starts.

Starting, the pool calibrates the workload's token costs once, in this process, so that every worker
sends the same text, then starts the workers (processes by default; Ray actors through `spawn`), each
with its own event loop and HTTP connections and its share of the users (worker.py). If one cannot
start, those that did are stopped: a `TargetError` when no process could be made.

Each tick the pool asks every worker for its report (protocol.py) and waits a quarter of a second; a
report that comes later is merged at a later tick (its requests carry their own times, so they count
in the right seconds). Reports are merged into the run's one `ClientStats` (finished and failed
requests, ended sessions: figures merged exactly, whatever the number of workers), the users table
(its first rows by user), the session states and the client's health (`HealthBook`, with this
process's own). A Ray actor's times are on another node's clock: the pool moves them onto its own.
Live controls (users, pause, resume, a new workload) go to every worker.

A worker that dies (its pipe closes, a Ray call fails: seen at the tick's question, so within a tick)
is a `WorkerLoss`: which worker, its process, how it ended (the signal, the exit code, Ray's words), the
users it took with it and those left, said in the log at once. Its users are gone until `restart_lost`
starts a fresh worker in its place (a sweep does, docs/sweeps.md; a plain run does not): the same index
and share of the users, its session ids past those its predecessor took, so it replays none of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from agentx_tui.engine.info import ServerInfo
from agentx_tui.errors import TargetError
from agentx_tui.load.sending import Driver, HealthProbe, LoadSettings
from agentx_tui.load.spreading.client_health import HealthBook
from agentx_tui.load.spreading.generator import LoadSample, WorkerLoss
from agentx_tui.load.spreading.process import ProcessWorker
from agentx_tui.load.spreading.protocol import Command, WorkerHandle, WorkerReport, WorkerSpec
from agentx_tui.load.spreading.worker import share
from agentx_tui.load.workload import PreparedWorkload
from agentx_tui.load.workload.text import TokenModel
from agentx_tui.measure import ClientStats, Completed
from agentx_tui.snapshot import USERS_SHOWN, lost_worker_words, restarted_worker_words

_REPLY_TIMEOUT_S = 5.0  # a worker that does not answer a control (drain, stop) within this is stuck
_STOP_TIMEOUT_S = 10.0
_START_TIMEOUT_S = 60.0
# Users per load process before `--workers auto` adds another (docs/scale.md: one process streams
# ~40 K tok/s at best; a few hundred agent sessions at interactive speed stay under that).
USERS_PER_WORKER = 512


def workers_for(users: int, *, cores: int | None = None, at_least: int = 1) -> int:
    """`--workers auto`: a process per USERS_PER_WORKER users (and at least `at_least`), within this
    machine's cores less one (kept for the main process's ticks and dashboard, and a server on the same
    machine); with `cores` given (a Ray cluster's CPUs), within those."""
    wanted = max(-(-users // USERS_PER_WORKER), at_least)
    limit = max(1, (os.cpu_count() or 1) - 1) if cores is None else cores
    return max(1, min(wanted, limit))


class WorkerPool:
    """The run's load spread over workers: the `LoadGenerator` the run sees (load/generator.py)."""

    def __init__(
        self,
        workload: PreparedWorkload,
        servers: tuple[ServerInfo, ...],
        settings: LoadSettings,
        *,
        workers: int,
        spawn: Callable[[WorkerSpec], WorkerHandle] | None = None,
    ) -> None:
        self.workers = max(1, workers)
        self._workload = workload
        self._servers = servers
        self._settings = settings
        self._users = settings.users
        self._spawn = spawn
        self.stats = ClientStats(settings.window_s, time.monotonic())
        self.health = HealthBook(self.workers)
        self.on_event: Callable[[str], None] | None = None
        self._handles: list[WorkerHandle] = []
        self._last: dict[int, WorkerReport] = {}
        self._pending: dict[int, asyncio.Task[Any]] = {}
        self._probe = HealthProbe()
        self._paused = False
        self._gone: set[int] = set()
        self._offsets: dict[int, float] = {}  # main clock − a remote worker's clock, per worker
        self._models: dict[str, TokenModel] = {}  # the calibration, for a worker started in place of one lost
        self._losses: list[WorkerLoss] = []
        self._down: dict[int, int] = {}  # a worker index whose worker died, not yet replaced → its `_losses` entry
        self._restarts: dict[int, asyncio.Task[None]] = {}
        # Per worker index: where in its stride the running worker's ids began (its spec's `resume_at`),
        # and how far they are taken (that plus the sessions it reported taking): a fresh worker in its
        # place begins past them.
        self._resumed: dict[int, int] = {}
        self._taken: dict[int, int] = {}

    # -- LoadGenerator ---------------------------------------------------------------------------
    @property
    def users(self) -> int:
        return self._users

    @property
    def users_lost(self) -> int:
        return sum(share(self._users, index, self.workers) for index in self._down)

    @property
    def losses(self) -> tuple[WorkerLoss, ...]:
        return tuple(self._losses)

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def finished(self) -> bool:
        live = [h.index for h in self._handles if h.index not in self._gone]
        return bool(self._last) and all(i in self._last and self._last[i].finished for i in live)

    async def start(self) -> None:
        # Calibrate once, here: every worker gets the same token models and sends the same text.
        probe = Driver(self._workload, self._servers, replace(self._settings, users=0))
        await probe.start()
        self._models = probe.token_models
        await probe.stop()
        self._probe.start()
        specs = [self._spec(i) for i in range(self.workers)]
        spawn = self._spawn or ProcessWorker
        handles: list[WorkerHandle] = []
        try:
            handles.extend(spawn(spec) for spec in specs)
            await asyncio.gather(*(h.started(_START_TIMEOUT_S) for h in handles))
        except BaseException as exc:
            # The workers that did start are stopped, unseen by the ticks: a worker of a start that failed
            # is not a worker the run lost.
            await self._stop_workers(handles)
            if isinstance(exc, OSError):  # no process could be made (a limit on processes or memory)
                raise TargetError(
                    f"Could not start {self.workers} load worker processes ({exc.strerror or exc}).",
                    "Use fewer --workers, or --workers 1 to load from this process.",
                ) from exc
            raise
        # Only now do ticks see the workers: a question asked before a worker has started would be
        # answered out of turn (a process) or refused (an actor).
        self._handles = handles
        self._emit(f"{self.workers} load workers started")

    def _emit(self, line: str) -> None:
        if self.on_event is not None:
            self.on_event(line)

    def _spec(self, index: int) -> WorkerSpec:
        settings = replace(self._settings, users=self._users)
        resume_at = self._resumed[index] = self._taken.get(index, 0)
        return WorkerSpec(
            index, self.workers, self._workload, self._servers, self._models, settings, resume_at=resume_at
        )

    async def stop(self) -> None:
        for task in self._restarts.values():  # a fresh worker still starting: it closes itself
            task.cancel()
        await asyncio.gather(*self._restarts.values(), return_exceptions=True)
        self._restarts.clear()
        if self._pending:  # reports already asked for: merge them, they hold finished requests
            await self._collect_all(timeout_s=_REPLY_TIMEOUT_S)
        for task in self._pending.values():
            task.cancel()
        self._pending.clear()

        await self._stop_workers(self._handles)
        await self._probe.stop()

    async def _stop_workers(self, handles: list[WorkerHandle]) -> None:
        """Stop each of `handles` that runs, merging its final report."""

        async def stop_one(handle: WorkerHandle) -> None:
            with contextlib.suppress(ConnectionError, TimeoutError, OSError):
                final = await asyncio.wait_for(handle.call(Command.STOP), _STOP_TIMEOUT_S)
                if isinstance(final, WorkerReport):
                    self._merge(final)
            await handle.close()

        await asyncio.gather(*(stop_one(h) for h in handles if h.alive()), return_exceptions=True)

    async def drain(self, timeout_s: float) -> bool:
        self.pause()

        async def drain_one(handle: WorkerHandle) -> bool:
            try:
                return bool(await asyncio.wait_for(handle.call(Command.DRAIN, timeout_s), timeout_s + _REPLY_TIMEOUT_S))
            except (ConnectionError, TimeoutError):
                return False

        results = await asyncio.gather(*(drain_one(h) for h in self._live()))
        await self._collect_all(timeout_s=_REPLY_TIMEOUT_S)  # what finished during the drain
        return all(results)

    def pause(self) -> None:
        self._paused = True
        for h in self._live():
            h.tell(Command.PAUSE)

    def resume(self) -> None:
        self._paused = False
        for h in self._live():
            h.tell(Command.RESUME)

    def set_users(self, users: int) -> None:
        self._users = max(0, users)
        for h in self._live():
            h.tell(Command.USERS, self._users)

    def set_workload(self, workload: PreparedWorkload) -> None:
        self._workload = workload
        for h in self._live():
            h.tell(Command.WORKLOAD, workload)

    def reset_window(self) -> None:
        self.stats.reset_window(time.monotonic())

    def restart_lost(self) -> None:
        for index in self._down:
            if index not in self._restarts:
                self._restarts[index] = asyncio.create_task(self._restart(index), name=f"agentx-restart-{index}")

    async def _restart(self, index: int) -> None:
        """A fresh worker in place of lost worker `index`: its share of the users (as many as the run has
        now), its session ids past its predecessor's; said in the log whether it starts or not."""
        number = index + 1
        spec = self._spec(index)
        handle: WorkerHandle | None = None
        try:
            handle = (self._spawn or ProcessWorker)(spec)
            await handle.started(_START_TIMEOUT_S)
        except asyncio.CancelledError:  # the run is stopping: the worker stops once it has started
            if handle is not None:
                handle.tell(Command.STOP)
                await handle.close()
            raise
        except (TargetError, OSError) as exc:
            if handle is not None:
                await handle.close()
            why = str(exc).rstrip(".")
            self._losses[self._down[index]] = replace(self._losses[self._down[index]], restart_error=why)
            left = self._users - self.users_lost
            self._emit(
                f"load worker {number} of {self.workers} could not be restarted: {why}; "
                f"{left} of {self._users} users remain"
            )
            return
        finally:
            self._restarts.pop(index, None)
        # What changed while it started: the users, a pause, the workload.
        handle.tell(Command.USERS, self._users)
        if self._paused:
            handle.tell(Command.PAUSE)
        if self._workload is not spec.workload:
            handle.tell(Command.WORKLOAD, self._workload)
        self._handles = [handle if h.index == index else h for h in self._handles]
        self._gone.discard(index)
        self._offsets.pop(index, None)  # a new process (or node): its clock's offset is measured anew
        position = self._down.pop(index)
        self._losses[position] = replace(self._losses[position], restarted_at=time.time())
        back = restarted_worker_words(number, self.workers, handle.pid, share(self._users, index, self.workers))
        self._emit(f"{back}; {self._users - self.users_lost} of {self._users} running")

    async def sample(self) -> LoadSample:
        await self._collect_all(timeout_s=0.25)
        now = time.monotonic()
        reports = [self._last[i] for i in sorted(self._last)]
        self.stats.in_flight = sum(r.in_flight for r in reports)
        figures = self.stats.figures(now)
        processes = [self._probe.look(), *(r.health for r in reports)]
        health = self.health.tick(processes, sum(r.queued for r in reports), figures.totals.output_tokens)
        rows = sorted((row for r in reports for row in r.rows), key=lambda row: row.user)[:USERS_SHOWN]
        states: dict[str, int] = {}
        for r in reports:
            for state, n in r.states.items():
                states[state] = states.get(state, 0) + n
        return LoadSample(figures, health, tuple(rows), states)

    # -- internals ---------------------------------------------------------------------------------
    def _live(self) -> list[WorkerHandle]:
        return [h for h in self._handles if h.index not in self._gone]

    async def _collect_all(self, *, timeout_s: float) -> None:
        """Ask every worker for its report; a late one is merged when it arrives (a later tick)."""
        for handle in self._live():
            if handle.index not in self._pending:
                self._pending[handle.index] = asyncio.create_task(handle.call(Command.COLLECT))
        pending = list(self._pending.values())
        if pending:
            await asyncio.wait(pending, timeout=timeout_s)
        for index, task in list(self._pending.items()):
            if not task.done():
                continue
            del self._pending[index]
            if task.cancelled():  # asked no more (the pool is stopping): not an answer either way
                continue
            try:
                report = task.result()
            except (ConnectionError, OSError):  # its pipe closed, its actor is gone: the worker died
                await self._worker_gone(index)
                continue
            if isinstance(report, WorkerReport):
                self._merge(report)

    def _merge(self, report: WorkerReport) -> None:
        handle = next((h for h in self._handles if h.index == report.index), None)
        shift = 0.0
        if handle is not None and handle.remote_clock:
            # Another node's monotonic clock: its reports arrive at least this much later than it says.
            seen = time.monotonic() - report.now
            shift = self._offsets[report.index] = min(self._offsets.get(report.index, seen), seen)
        for done in report.completed:
            self.stats.add(_shifted(done, shift) if shift else done)
        self.stats.count_streamed(report.streamed, shift)
        for failed in report.failed:
            self.stats.error(replace(failed, sent_at=failed.sent_at + shift, at=failed.at + shift) if shift else failed)
        for how, tree in report.sessions_ended:
            self.stats.session_ended(how, tree)
        for event in report.events:
            self._emit(event)
        self._taken[report.index] = self._resumed.get(report.index, 0) + report.sessions_taken
        self._last[report.index] = report

    async def _worker_gone(self, index: int) -> None:
        """Worker `index` stopped answering: it died. Count its users as lost and say so, at once."""
        handle = next((h for h in self._handles if h.index == index), None)
        if handle is None or index in self._gone:
            return
        self._gone.add(index)
        self._last.pop(index, None)
        lost = share(self._users, index, self.workers)
        # Each of its users may have taken one more session since it last reported: skip those too.
        self._taken[index] = self._taken.get(index, 0) + lost
        position = self._down[index] = len(self._losses)
        left = self._users - self.users_lost
        # Counted before it is asked how it ended: a tick cancelled meanwhile (the run stopping) loses nothing.
        self._losses.append(
            WorkerLoss(index, self.workers, handle.pid, "it stopped answering", self._users, lost, left, time.time())
        )
        try:
            self._losses[position] = replace(self._losses[position], how=await handle.ended())
            await handle.close()
        finally:
            how = self._losses[position].how
            self._emit(lost_worker_words(index + 1, self.workers, handle.pid, how, lost, left, self._users))


def _shifted(done: Completed, shift: float) -> Completed:
    """`done` on the main process's clock (durations are unchanged: they were measured on one node)."""
    return replace(
        done,
        sent_at=done.sent_at + shift,
        first_token_at=None if done.first_token_at is None else done.first_token_at + shift,
        last_token_at=None if done.last_token_at is None else done.last_token_at + shift,
        ended_at=done.ended_at + shift,
        due_at=None if done.due_at is None else done.due_at + shift,
        arrivals=tuple((second + shift, events) for second, events in done.arrivals),
    )

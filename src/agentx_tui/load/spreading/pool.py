"""Load in several processes (`--workers N`, docs/scale.md): users spread over worker processes, each
with its own event loop and HTTP connections, figures merged exactly in the main process.

Each worker runs a `Driver` that owns a stride of the global user and session ids (worker w of N:
ids w, w+N, w+2N, …), so one and N workers draw the very same sessions, and hands what happened to an
`Outbox` instead of statistics. Once per tick the main process asks every worker for its outbox,
its users' rows and its health, and feeds the summaries into the run's one `ClientStats`: the
accounting is the same code, whatever the number of workers.

The transport is the standard library's: `multiprocessing` (spawned processes, a `Pipe` each, pickled
tuples). A worker that falls behind answers late: its summaries carry their own times, so they are
counted at the next tick, in the right seconds. Ray actors (load/ray_workers.py) use the same
`WorkerCore` behind actor calls instead of a pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from typing import Any, Protocol

from agentx_tui.engine.info import ServerInfo
from agentx_tui.load.sending.driver import Driver, IdStride
from agentx_tui.load.sending.health import HealthProbe, ProcessHealth
from agentx_tui.load.spreading.generator import HealthBook, LoadSample
from agentx_tui.load.stats import ClientStats, Completed, Failed, WindowFigures
from agentx_tui.load.workload.prepared import PreparedWorkload
from agentx_tui.load.workload.text import TokenModel
from agentx_tui.snapshot import USERS_SHOWN, UserRow

_REPLY_TIMEOUT_S = 5.0  # a worker that does not answer a control (drain, stop) within this is stuck
_STOP_TIMEOUT_S = 10.0
_ANSWERS = {"collect": "report", "drain": "drained", "stop": "stopped"}


def share(users: int, worker: int, workers: int) -> int:
    """How many of `users` worker `worker` of `workers` runs: the global ids ≡ worker (mod workers)."""
    return users // workers + (1 if worker < users % workers else 0)


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs, picklable: it calibrates nothing and reads no file again."""

    index: int
    count: int
    workload: PreparedWorkload
    servers: tuple[ServerInfo, ...]
    token_models: dict[str, TokenModel]
    users: int  # the run's users at start (the worker takes its share)
    seed: int = 0
    api_key: str | None = field(default=None, repr=False)
    sessions: int | None = None
    max_think_s: float | None = None
    nonce: int = 0  # the run's, so every worker scopes session-replay text the same way


class Outbox:
    """A worker's `StatsSink`: what happened since the main process last asked."""

    def __init__(self) -> None:
        self.completed: list[Completed] = []
        self.failed: list[Failed] = []
        self.sessions_ended: list[str] = []

    def add(self, done: Completed) -> None:
        self.completed.append(done)

    def error(self, failed: Failed) -> None:
        self.failed.append(failed)

    def session_ended(self, how: str) -> None:
        self.sessions_ended.append(how)

    def take(self) -> tuple[list[Completed], list[Failed], list[str]]:
        out = (self.completed, self.failed, self.sessions_ended)
        self.completed, self.failed, self.sessions_ended = [], [], []
        return out


@dataclass(frozen=True)
class WorkerReport:
    """A worker's answer to `collect`."""

    index: int
    completed: list[Completed]
    failed: list[Failed]
    sessions_ended: list[str]
    rows: tuple[UserRow, ...]
    states: dict[str, int]
    health: ProcessHealth
    in_flight: int
    queued: int
    finished: bool
    events: list[str]
    now: float = 0.0  # the worker's `time.monotonic()` when it reported (another node's clock, with Ray)


class WorkerCore:
    """The worker side, whatever carries its calls (a pipe, or Ray actor methods)."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.outbox = Outbox()
        self.events: list[str] = []
        self.probe = HealthProbe()
        self.driver = Driver(
            spec.workload,
            spec.servers,
            users=share(spec.users, spec.index, spec.count),
            seed=spec.seed,
            api_key=spec.api_key,
            sink=self.outbox,
            token_models=spec.token_models,
            sessions=spec.sessions,
            max_think_s=spec.max_think_s,
            ids=IdStride(spec.index, spec.count),
            nonce=spec.nonce,
        )
        self.driver.on_event = self.events.append

    async def start(self) -> None:
        self.probe.start()
        await self.driver.start()

    def set_users(self, users: int) -> None:
        self.driver.set_users(share(users, self.spec.index, self.spec.count))

    def pause(self) -> None:
        self.driver.pause()

    def resume(self) -> None:
        self.driver.resume()

    def set_workload(self, workload: PreparedWorkload) -> None:
        self.driver.set_workload(workload)

    async def drain(self, timeout_s: float) -> bool:
        return await self.driver.drain(timeout_s)

    def collect(self) -> WorkerReport:
        completed, failed, ended = self.outbox.take()
        events, self.events = self.events, []
        limit = max(1, USERS_SHOWN // self.spec.count)
        return WorkerReport(
            self.spec.index,
            completed,
            failed,
            ended,
            self.driver.sessions(limit),
            self.driver.session_states(),
            self.probe.look(),
            self.driver.in_flight,
            self.driver.queued,
            self.driver.finished,
            events,
            time.monotonic(),
        )

    async def stop(self) -> None:
        await self.driver.stop()
        await self.probe.stop()


# -- the process transport -------------------------------------------------------------------------


def worker_main(conn: Connection, spec: WorkerSpec) -> None:
    """A worker process: run `WorkerCore` and answer the main process's commands until `stop`."""
    import signal

    # Ctrl-C in the terminal reaches the whole process group: the main process decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import uvloop

        uvloop.run(_serve(conn, spec))
    except ImportError:  # pragma: no cover - uvloop is a dependency, but not on Windows
        asyncio.run(_serve(conn, spec))


async def _serve(conn: Connection, spec: WorkerSpec) -> None:
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()

    def read() -> None:  # a blocking reader thread: the event loop never waits on the pipe
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                message = ("stop",)  # the main process is gone: stop too
            loop.call_soon_threadsafe(inbox.put_nowait, message)
            if message[0] == "stop":
                return

    threading.Thread(target=read, name="agentx-worker-inbox", daemon=True).start()
    core = WorkerCore(spec)
    try:
        await core.start()
        conn.send(("started", spec.index))
    except Exception as exc:  # calibration is done; a failure here is a server that went away
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    while True:
        command, *args = await inbox.get()
        if command == "collect":
            conn.send(("report", core.collect()))
        elif command == "users":
            core.set_users(args[0])
        elif command == "pause":
            core.pause()
        elif command == "resume":
            core.resume()
        elif command == "workload":
            core.set_workload(args[0])
        elif command == "drain":
            conn.send(("drained", await core.drain(args[0])))
        elif command == "stop":
            await core.stop()
            with contextlib.suppress(OSError):
                conn.send(("stopped", core.collect()))
            return


class WorkerHandle(Protocol):
    """One worker as the pool sees it (a process with a pipe, or a Ray actor)."""

    index: int

    async def call(self, command: str, *args: Any) -> Any:
        """Send a command and wait for its answer (collect, drain, stop)."""
        ...

    def tell(self, command: str, *args: Any) -> None:
        """Send a command that has no answer (users, pause, resume, workload)."""
        ...

    def alive(self) -> bool: ...

    async def close(self) -> None: ...


class ProcessWorker:
    """A worker process and its pipe; answers are read by a thread and handed to the event loop."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.index = spec.index
        context = multiprocessing.get_context("spawn")  # no fork of a process with threads and a loop
        self._conn, child = context.Pipe()
        self.process = context.Process(
            target=worker_main, args=(child, spec), name=f"agentx-worker-{spec.index}", daemon=True
        )
        self.process.start()
        child.close()
        self._loop = asyncio.get_running_loop()
        self._answers: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self._lock = asyncio.Lock()
        threading.Thread(target=self._read, name=f"agentx-worker-{spec.index}-answers", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                self._loop.call_soon_threadsafe(self._answers.put_nowait, ("gone",))
                return
            self._loop.call_soon_threadsafe(self._answers.put_nowait, message)

    async def started(self, timeout_s: float) -> None:
        kind, *rest = await asyncio.wait_for(self._answers.get(), timeout_s)
        if kind != "started":
            raise RuntimeError(rest[0] if rest else f"load worker {self.index} exited while starting")

    def tell(self, command: str, *args: Any) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._conn.send((command, *args))

    async def call(self, command: str, *args: Any) -> Any:
        expected = _ANSWERS[command]
        async with self._lock:  # one question at a time: answers come back in order
            self.tell(command, *args)
            while True:
                kind, *rest = await self._answers.get()
                if kind == "gone":
                    self._answers.put_nowait(("gone",))
                    raise ConnectionError(f"load worker {self.index} is gone")
                if kind == expected:
                    return rest[0] if rest else None
                # The answer to a question whose asker was cancelled: nobody waits for it any more.

    def alive(self) -> bool:
        return self.process.is_alive()

    async def close(self) -> None:
        await asyncio.to_thread(self.process.join, _STOP_TIMEOUT_S)
        if self.process.is_alive():
            self.process.kill()
            await asyncio.to_thread(self.process.join, 2.0)
        self._conn.close()


class WorkerPool:
    """The run's load spread over workers: the `LoadGenerator` the run sees (load/generator.py)."""

    def __init__(
        self,
        workload: PreparedWorkload,
        servers: tuple[ServerInfo, ...],
        *,
        users: int,
        workers: int,
        seed: int = 0,
        api_key: str | None = None,
        sessions: int | None = None,
        max_think_s: float | None = None,
        window_s: float = 10.0,
        spawn: Callable[[WorkerSpec], WorkerHandle] | None = None,
    ) -> None:
        self.workers = max(1, workers)
        self._workload = workload
        self._servers = servers
        self._users = users
        self._seed = seed
        self._api_key = api_key
        self._sessions = sessions
        self._max_think_s = max_think_s
        self._spawn = spawn
        self._nonce = random.getrandbits(48)
        self.stats = ClientStats(window_s, time.monotonic())
        self.health = HealthBook(self.workers)
        self.on_event: Callable[[str], None] | None = None
        self._handles: list[WorkerHandle] = []
        self._last: dict[int, WorkerReport] = {}
        self._pending: dict[int, asyncio.Task[Any]] = {}
        self._probe = HealthProbe()
        self._paused = False
        self._gone: set[int] = set()
        self._offsets: dict[int, float] = {}  # main clock − a remote worker's clock, per worker

    # -- LoadGenerator ---------------------------------------------------------------------------
    @property
    def users(self) -> int:
        return self._users

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def finished(self) -> bool:
        live = [h.index for h in self._handles if h.index not in self._gone]
        return bool(self._last) and all(i in self._last and self._last[i].finished for i in live)

    async def start(self) -> None:
        # Calibrate once, here: every worker gets the same token models and sends the same text.
        probe = Driver(self._workload, self._servers, users=0, seed=self._seed, api_key=self._api_key)
        await probe.start()
        models = probe.token_models
        await probe.stop()
        self._probe.start()
        specs = [
            WorkerSpec(
                i,
                self.workers,
                self._workload,
                self._servers,
                models,
                self._users,
                self._seed,
                self._api_key,
                self._sessions,
                self._max_think_s,
                self._nonce,
            )
            for i in range(self.workers)
        ]
        spawn = self._spawn or ProcessWorker
        handles = [spawn(spec) for spec in specs]
        try:
            await asyncio.gather(*(_started(h) for h in handles))
        except BaseException:
            self._handles = handles
            await self.stop()
            raise
        # Only now do ticks see the workers: a question asked before a worker has started would be
        # answered out of turn (a process) or refused (an actor).
        self._handles = handles
        self._emit(f"{self.workers} load workers started")

    def _emit(self, line: str) -> None:
        if self.on_event is not None:
            self.on_event(line)

    async def stop(self) -> None:
        if self._pending:  # reports already asked for: merge them, they hold finished requests
            await self._collect_all(timeout_s=_REPLY_TIMEOUT_S)
        for task in self._pending.values():
            task.cancel()
        self._pending.clear()

        async def stop_one(handle: WorkerHandle) -> None:
            with contextlib.suppress(ConnectionError, TimeoutError, OSError):
                final = await asyncio.wait_for(handle.call("stop"), _STOP_TIMEOUT_S)
                if isinstance(final, WorkerReport):
                    self._merge(final)
            await handle.close()

        await asyncio.gather(*(stop_one(h) for h in self._handles if h.alive()), return_exceptions=True)
        await self._probe.stop()

    async def drain(self, timeout_s: float) -> bool:
        self.pause()

        async def drain_one(handle: WorkerHandle) -> bool:
            try:
                return bool(await asyncio.wait_for(handle.call("drain", timeout_s), timeout_s + _REPLY_TIMEOUT_S))
            except (ConnectionError, TimeoutError):
                return False

        results = await asyncio.gather(*(drain_one(h) for h in self._live()))
        await self._collect_all(timeout_s=_REPLY_TIMEOUT_S)  # what finished during the drain
        return all(results)

    def pause(self) -> None:
        self._paused = True
        for h in self._live():
            h.tell("pause")

    def resume(self) -> None:
        self._paused = False
        for h in self._live():
            h.tell("resume")

    def set_users(self, users: int) -> None:
        self._users = max(0, users)
        for h in self._live():
            h.tell("users", self._users)

    def set_workload(self, workload: PreparedWorkload) -> None:
        self._workload = workload
        for h in self._live():
            h.tell("workload", workload)

    def reset_window(self) -> None:
        self.stats.reset_window(time.monotonic())

    def open_window(self) -> WindowFigures:
        return self.stats.open_window(time.monotonic())

    async def sample(self) -> LoadSample:
        await self._collect_all(timeout_s=0.25)
        now = time.monotonic()
        reports = [self._last[i] for i in sorted(self._last)]
        self.stats.in_flight = sum(r.in_flight for r in reports)
        figures = self.stats.figures(now)
        processes = [self._probe.look(), *(r.health for r in reports)]
        health = self.health.tick(processes, sum(r.queued for r in reports))
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
                self._pending[handle.index] = asyncio.create_task(handle.call("collect"))
        pending = list(self._pending.values())
        if pending:
            await asyncio.wait(pending, timeout=timeout_s)
        for index, task in list(self._pending.items()):
            if not task.done():
                continue
            del self._pending[index]
            try:
                report = task.result()
            except (ConnectionError, OSError, asyncio.CancelledError):
                self._worker_gone(index)
                continue
            if isinstance(report, WorkerReport):
                self._merge(report)

    def _merge(self, report: WorkerReport) -> None:
        handle = next((h for h in self._handles if h.index == report.index), None)
        shift = 0.0
        if handle is not None and getattr(handle, "remote_clock", False):
            # Another node's monotonic clock: its reports arrive at least this much later than it says.
            seen = time.monotonic() - report.now
            shift = self._offsets[report.index] = min(self._offsets.get(report.index, seen), seen)
        for done in report.completed:
            self.stats.add(_shifted(done, shift) if shift else done)
        for failed in report.failed:
            self.stats.error(replace(failed, sent_at=failed.sent_at + shift, at=failed.at + shift) if shift else failed)
        for how in report.sessions_ended:
            self.stats.session_ended(how)
        for event in report.events:
            self._emit(event)
        self._last[report.index] = report

    def _worker_gone(self, index: int) -> None:
        if index not in self._gone:
            self._gone.add(index)
            self._last.pop(index, None)
            self._emit(f"load worker {index} exited: its users are gone; the figures cover the others")


def _shifted(done: Completed, shift: float) -> Completed:
    """`done` on the main process's clock (durations are unchanged: they were measured on one node)."""
    return replace(
        done,
        sent_at=done.sent_at + shift,
        first_token_at=None if done.first_token_at is None else done.first_token_at + shift,
        last_token_at=None if done.last_token_at is None else done.last_token_at + shift,
        ended_at=done.ended_at + shift,
    )


async def _started(handle: WorkerHandle) -> None:
    started = getattr(handle, "started", None)
    if started is not None:
        await started(60.0)

"""The driver: the users of one process, each running its workload kind's loop, and their live controls.

Lifecycle (calibrate, connect, start, drain, stop) and the users live here; what a user does with one
session is its kind's loop (load/sending/kinds/), which sends through the shared `RequestSender`.

Costs per user are O(1) (docs/scale.md): users are indexed by id, free ids are kept in a heap, and
users start in slices so the event loop stays responsive (and signals are honoured) while 100,000
start. In a worker process (load/spreading/) the driver owns a stride of the global user and session
ids, so one and several workers draw the very same sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import heapq
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import aiohttp

from agentx_tui.engine.info import ServerInfo
from agentx_tui.errors import TargetError
from agentx_tui.load.sending.calibrate import PostJson, calibrate
from agentx_tui.load.sending.context import LoopContext
from agentx_tui.load.sending.gates import PauseGate
from agentx_tui.load.sending.kinds import KindLoop, loop_for
from agentx_tui.load.sending.limits import connection_budget
from agentx_tui.load.sending.sender import EventThrottle, RequestSender, ServerConnection
from agentx_tui.load.sending.settings import IdStride, LoadSettings
from agentx_tui.load.sending.users import User
from agentx_tui.load.sending.wire import StreamPool
from agentx_tui.load.workload import PreparedWorkload, Workload, WorkloadBase, prepare
from agentx_tui.load.workload.text import TextMaker, TokenModel
from agentx_tui.measure import ClientStats, RequestRecord, StatsSink, Streamed
from agentx_tui.snapshot import USERS_SHOWN, ClientReading, UserRow

_CONTROL_TIMEOUT = aiohttp.ClientTimeout(total=30)
_CONNECT_TIMEOUT_S = 10.0  # a stream's connection; the sender's StallWatch then covers the request
DEFAULT_BLOCK_SIZE = 16  # GPU vLLM's default; the CPU build uses 128 (the probe reads it from /metrics)
START_SLICE = 500  # users started per event-loop turn: keeps each turn well under 50 ms
DRAIN_STALL_S = 3.0  # a drain in which no request finished for this long has nothing more to wait for

__all__ = ["Driver"]


class Driver:
    def __init__(
        self,
        workload: PreparedWorkload | Workload,
        servers: Sequence[ServerInfo],
        settings: LoadSettings,
        *,
        ids: IdStride | None = None,
        sink: StatsSink | None = None,
        token_models: dict[str, TokenModel] | None = None,
    ) -> None:
        """`sink`: where request figures go (a worker's outbox); by default this driver's own `stats`."""
        if not servers:
            raise TargetError("The load driver needs at least one server.")
        self._servers = list(servers)
        self.settings = settings
        self.stats = ClientStats(settings.window_s, time.monotonic()) if sink is None else None
        size = settings.block_size or next((s.block_size for s in servers if s.block_size), None)
        self._pause = PauseGate()
        self._events = EventThrottle()
        sender = RequestSender(
            sink=sink or self.stats,  # type: ignore[arg-type]
            block_size=size or DEFAULT_BLOCK_SIZE,
            connections=settings.connections or connection_budget(),
            pause=self._pause,
            events=self._events,
        )
        self._ctx = LoopContext(settings, ids or IdStride(), sender, self._pause, self._events)
        self._workload = prepare(workload) if isinstance(workload, WorkloadBase) else workload
        self._loop: KindLoop | None = None
        self._closing: set[asyncio.Task[None]] = set()  # loops of a previous workload, closing
        self._token_models = dict(token_models or {})
        self._want = max(0, settings.users)
        self._users: dict[int, User] = {}  # live users by local index
        self._retiring: set[int] = set()  # removed users finishing their in-flight request
        self._free: list[int] = []  # heap of local indices neither live nor retiring
        self._next_local = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._reconciler: asyncio.Task[None] | None = None
        self._stopped = False
        self._started = False
        self.calibration_notes: list[str] = []

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def on_event(self) -> Callable[[str], None] | None:
        return self._events.on_event

    @on_event.setter
    def on_event(self, callback: Callable[[str], None] | None) -> None:
        self._events.on_event = callback

    async def start(self) -> None:
        """Calibrate each model's tokenizer (unless given), then start the users."""
        if self._started:
            return
        self._started = True
        headers = {"Content-Type": "application/json"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        makers: dict[str, TextMaker] = {}
        for info in self._servers:
            tm = self._token_models.get(info.model) or await self._calibrate(info, headers)
            self._token_models[info.model] = tm
            maker = makers.setdefault(info.model, TextMaker(tm, self.settings.seed))
            streams = StreamPool(info.url, headers=headers, connect_timeout_s=_CONNECT_TIMEOUT_S)
            self._ctx.servers.append(ServerConnection(info, streams, tm, maker, info.max_model_len))
        self._ctx.started_at = time.monotonic()
        if self.stats is not None:
            self.stats.reset_window(self._ctx.started_at)
        self._switch_loop()

    async def _calibrate(self, info: ServerInfo, headers: dict[str, str]) -> TokenModel:
        async with aiohttp.ClientSession(headers=headers, timeout=_CONTROL_TIMEOUT) as http:
            tm = await calibrate(_poster(http, info.url), info.model)
        if tm.note:
            self.calibration_notes.append(f"{info.model}: {tm.note}")
            self._events.say(f"token calibration for {info.model}: {tm.note}")
        return tm

    @property
    def token_models(self) -> dict[str, TokenModel]:
        """The calibrated models, to hand to worker processes so they need not calibrate again."""
        return dict(self._token_models)

    async def stop(self) -> None:
        """Cancel every user (in-flight requests too) and close the connections; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        tasks = [*self._tasks, *(t for t in (self._reconciler,) if t is not None)]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._loop is not None:
            await self._loop.close()
        await asyncio.gather(*self._closing, return_exceptions=True)
        await self._ctx.sender.close()
        for server in self._ctx.servers:
            await server.streams.close()

    async def drain(self, timeout_s: float = 60.0) -> bool:
        """Pause and wait until no request is in flight (server counters then match the records).

        Counts every request on the wire, also those of users removed by `set_users` or a workload
        switch that are finishing theirs. Returns False when `timeout_s` passed first."""
        self.pause()
        sender = self._ctx.sender
        deadline = time.monotonic() + timeout_s
        last, progressed = sender.in_flight, time.monotonic()
        while sender.in_flight and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
            if sender.in_flight < last:
                last, progressed = sender.in_flight, time.monotonic()
            elif time.monotonic() - progressed > DRAIN_STALL_S:
                break  # nothing finished for a while: the server is not answering them, stop waiting
        return not sender.in_flight

    # -- live controls -------------------------------------------------------------------------
    @property
    def users(self) -> int:
        return self._want

    @property
    def paused(self) -> bool:
        return self._pause.paused

    @property
    def workload(self) -> PreparedWorkload:
        return self._workload

    @property
    def sessions_taken(self) -> int:
        """Session ids handed out so far, over every workload this driver has run."""
        return self._ctx.sessions_taken

    @property
    def in_flight(self) -> int:
        return self._ctx.sender.in_flight

    @property
    def queued(self) -> int:
        """Requests waiting for a connection slot (client saturation)."""
        return self._ctx.sender.limit.waiting

    @property
    def starting(self) -> bool:
        """Users are still being started (a slice per event-loop turn)."""
        return self._reconciler is not None and not self._reconciler.done()

    @property
    def finished(self) -> bool:
        """No session may start any more (a stop rule, or the trace was all sent) and every one has ended."""
        exhausted = self._loop is not None and self._loop.exhausted
        return (self._ctx.stop_rule_hit() or exhausted) and not self._tasks

    def pause(self) -> None:
        self._pause.set_paused(True)

    def resume(self) -> None:
        self._pause.set_paused(False)

    def set_users(self, n: int) -> None:
        self._want = self._ctx.users_wanted = max(0, n)
        if self._started and not self._stopped:
            self._kick()

    def set_workload(self, workload: PreparedWorkload | Workload) -> None:
        """Running sessions finish their in-flight request, then users start sessions of `workload`."""
        self._workload = prepare(workload) if isinstance(workload, WorkloadBase) else workload
        if self._started and not self._stopped:
            for local in list(self._users):
                self._retire(local)
            self._switch_loop()

    def reset_window(self) -> None:
        if self.stats is not None:
            self.stats.reset_window(time.monotonic())

    def figures(self, now: float) -> ClientReading:
        """Window and run figures of this driver's own statistics; `now` is `time.monotonic()`."""
        assert self.stats is not None, "a driver with an outside sink keeps no figures of its own"
        self.stats.in_flight = self.in_flight
        self.stats.count_streamed(self.take_streamed())
        return self.stats.figures(now)

    def take_streamed(self) -> Streamed:
        """The tokens the requests in flight streamed since the last call, for the live window."""
        return self._ctx.sender.take_streamed()

    def rows(self, limit: int = USERS_SHOWN) -> tuple[UserRow, ...]:
        """Up to `limit` rows (live users first, by id, then sub-agents): O(limit), not O(users)."""
        rows: list[UserRow] = []
        for user in self._users.values():
            if len(rows) >= limit:
                break
            rows.append(user.row())
        for child in list(self._ctx.children.values()):
            if len(rows) >= limit:
                break
            rows.append(child.row())
        return tuple(sorted(rows, key=lambda r: r.user))

    def states(self) -> dict[str, int]:
        """How many users (and sub-agents) are in each state."""
        counts: Counter[str] = Counter(user.state for user in self._users.values())
        counts.update(child.state for child in self._ctx.children.values())
        return dict(counts)

    def records(self) -> Sequence[RequestRecord]:
        return tuple(self._ctx.sender.records)

    # -- internals -----------------------------------------------------------------------------
    def _switch_loop(self) -> None:
        """The current workload's loop replaces the previous one (whose background tasks end)."""
        old, self._loop = self._loop, loop_for(self._workload, self._ctx)
        if old is not None:
            closing = asyncio.create_task(old.close())
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)
        self._ctx.stop_rule = self._workload.spec.stop
        self._ctx.users_wanted = self._want
        if self._loop is not None:
            self._loop.start()
        self._kick()

    def _kick(self) -> None:
        if self._reconciler is None or self._reconciler.done():
            self._reconciler = asyncio.create_task(self._reconcile(), name="agentx-users")

    async def _reconcile(self) -> None:
        """Bring the live users to `_want`, a slice per event-loop turn (O(1) per user)."""
        many = self._want - len(self._users) > START_SLICE
        with _collector_paused(many):
            while not self._stopped and self._loop is not None:
                have = len(self._users)
                if have > self._want:
                    for local in sorted(self._users, reverse=True)[: have - self._want]:
                        self._retire(local)
                    continue
                if have == self._want:
                    return
                for _ in range(min(self._want - have, START_SLICE)):
                    self._start_user()
                await asyncio.sleep(0)  # let the loop breathe: signals, ticks and the dashboard go on

    def _start_user(self) -> None:
        local = heapq.heappop(self._free) if self._free else self._take_local()
        user = User(user=self._ctx.ids.id(local))
        self._users[local] = user
        task = asyncio.create_task(self._run_user(user))
        user.task = task
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._user_ended, local))

    def _take_local(self) -> int:
        self._next_local += 1
        return self._next_local - 1

    def _user_ended(self, local: int, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if local in self._retiring:  # a removed user: its id is free again
            self._retiring.discard(local)
            heapq.heappush(self._free, local)
        # Otherwise it ended by itself (the stop rule): it stays listed, "done", and keeps its id.

    def _retire(self, local: int) -> None:
        """A removed user finishes its in-flight request; one that is waiting stops now."""
        user = self._users.pop(local)
        self._retiring.add(local)
        user.retire = True
        if user.stop is not None:
            user.stop.set()  # a session replay ends its waits and lets its calls on the wire finish
        elif not user.in_flight and user.task is not None:
            user.task.cancel()

    async def _run_user(self, user: User) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            while not user.retire:
                loop = self._loop
                if loop is None:
                    break
                user.state = "waiting"
                if not await loop.run(user):
                    break
            user.state = "done"


@contextlib.contextmanager
def _collector_paused(paused: bool) -> Iterator[None]:
    """Start many users without CPython's cyclic collector, then move them out of its way.

    A full collection walks every live object: with 50,000 users (~860 K objects) one took 0.22 s,
    a stall of the event loop each time the collector ran while they started, and again and again
    afterwards. Users live as long as the run, so once started they are frozen (`gc.freeze`): the
    collector then skips them. (Retired users' cycles are not collected after a freeze; they are a
    few KB each.) Measured: starting 50,000 paused users took 1.38 s of CPU with the collector
    running, 0.29 s without; a full collection afterwards took 2 µs instead of 0.22 s."""
    if not paused:
        yield
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _poster(http: aiohttp.ClientSession, base: str) -> PostJson:
    async def post(path: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        try:
            async with http.post(base.rstrip("/") + path, json=payload, timeout=_CONTROL_TIMEOUT) as resp:
                if resp.status != 200:
                    return None
                data = await resp.json(content_type=None)
                return data if isinstance(data, dict) else None
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise TargetError(f"Cannot reach {base} to calibrate the tokenizer ({type(exc).__name__}).") from exc

    return post

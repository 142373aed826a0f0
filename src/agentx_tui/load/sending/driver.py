"""The load driver: simulated users running agent sessions, a trace replay or recorded agent sessions.

Lifecycle and live controls live here; sending is in `core`, the loops in `agent` (and the replays).
Sessions are spread round-robin over the servers and stay on theirs (each keeps its prefix cache on
one server); sub-agents go where their parent is.

Costs per user are O(1) (docs/scale.md): users are indexed by id, free ids are kept in a heap, and
users start in slices so the event loop stays responsive (and signals are honoured) while 100,000
start. In a worker process (load/workers.py) the driver owns a stride of the global user and session
ids, so one and several workers draw the very same sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import heapq
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp

from agentx_tui.engine.info import ServerInfo
from agentx_tui.errors import TargetError
from agentx_tui.load.sending.gates import FairQueue
from agentx_tui.load.sending.kinds.session_files import run_tree
from agentx_tui.load.sending.kinds.synthetic import run_session
from agentx_tui.load.sending.limits import connection_budget
from agentx_tui.load.sending.sender import Core, ServerConnection
from agentx_tui.load.sending.sse import STREAM_IDLE_TIMEOUT_S, RequestRecord
from agentx_tui.load.sending.users import User
from agentx_tui.load.stats import ClientStats, Failed, StatsSink
from agentx_tui.load.workload.conversation import Conversation
from agentx_tui.load.workload.mooncake import TraceRequest, build_request
from agentx_tui.load.workload.prepared import PreparedWorkload, prepared
from agentx_tui.load.workload.spec import Workload
from agentx_tui.load.workload.text import PostJson, TextMaker, TokenModel, calibrate
from agentx_tui.snapshot import USERS_SHOWN, ClientFigures, UserRow

_CONTROL_TIMEOUT = aiohttp.ClientTimeout(total=30)
# `sock_read` covers the wait for a response's headers; the core's StallWatch then covers its body.
_STREAM_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=STREAM_IDLE_TIMEOUT_S)
_ERROR_PAUSE_S = 1.0
DEFAULT_BLOCK_SIZE = 16  # GPU vLLM's default; the CPU build uses 128 (the probe reads it from /metrics)
START_SLICE = 500  # users started per event-loop turn: keeps each turn well under 50 ms
DRAIN_STALL_S = 3.0  # a drain in which no request finished for this long has nothing more to wait for

__all__ = ["Driver", "IdStride"]


@dataclass(frozen=True)
class IdStride:
    """This driver's share of the global ids: offset, offset + stride, offset + 2·stride, …"""

    offset: int = 0
    stride: int = 1

    def id(self, local: int) -> int:
        return self.offset + self.stride * local


class Driver:
    def __init__(
        self,
        workload: PreparedWorkload | Workload,
        servers: Sequence[ServerInfo],
        *,
        users: int,
        seed: int = 0,
        api_key: str | None = None,
        window_s: float = 10.0,
        block_size: int | None = None,
        sink: StatsSink | None = None,
        token_models: dict[str, TokenModel] | None = None,
        sessions: int | None = None,
        max_think_s: float | None = None,
        ids: IdStride = IdStride(),
        connections: int | None = None,
        nonce: int | None = None,
    ) -> None:
        if not servers:
            raise TargetError("The load driver needs at least one server.")
        ready = workload if isinstance(workload, PreparedWorkload) else prepared(workload)
        self._servers = list(servers)
        self._prepared = ready
        self.stats = ClientStats(window_s, time.monotonic()) if sink is None else None
        size = block_size or next((s.block_size for s in servers if s.block_size), None) or DEFAULT_BLOCK_SIZE
        self._core = Core(
            ready.spec,
            seed=seed,
            block_size=size,
            sink=sink or self.stats,  # type: ignore[arg-type]
            connections=connections or connection_budget(),
        )
        self._core.max_think_s = max_think_s
        self._token_models = dict(token_models or {})
        # Scopes a session replay's text to this run (workers share the main process's nonce).
        self._nonce = nonce if nonce is not None else random.getrandbits(48)
        self._want = max(0, users)
        self._seed = seed
        self._api_key = api_key
        self._ids = ids
        self._session_budget = sessions
        self._slots: dict[int, User] = {}  # live users by local index
        self._retiring: set[int] = set()  # removed users finishing their in-flight request
        self._free: list[int] = []  # heap of local indices neither live nor retiring
        self._next_local = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._reconciler: asyncio.Task[None] | None = None
        self._started_at: float | None = None
        self._sessions_started = 0  # this driver's, for the workload's own stop rule
        self._session_seq = 0  # local counter of session ids handed out
        self._stopped = False
        self._started = False
        self._queue: FairQueue[TraceRequest | None] = FairQueue()
        self._arrivals: FairQueue[None] = FairQueue()
        self._feeder: asyncio.Task[None] | None = None
        self._trace_exhausted = False
        self.on_event: Callable[[str], None] | None = None
        self.calibration_notes: list[str] = []

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Calibrate each model's tokenizer (unless given), then start the user loops."""
        if self._started:
            return
        self._started = True
        self._core.on_event = self._emit
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        makers: dict[str, TextMaker] = {}
        for info in self._servers:
            http = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
                timeout=_STREAM_TIMEOUT,
                headers=headers,
            )
            try:
                tm = self._token_models.get(info.model) or await self._calibrate(http, info)
            except BaseException:
                await http.close()
                raise
            self._token_models[info.model] = tm
            maker = makers.setdefault(info.model, TextMaker(tm, self._seed))
            self._core.servers.append(ServerConnection(info, http, tm, maker, info.max_model_len, {}))
        self._started_at = time.monotonic()
        if self.stats is not None:
            self.stats.reset_window(self._started_at)
        self._apply_workload()

    async def _calibrate(self, http: aiohttp.ClientSession, info: ServerInfo) -> TokenModel:
        tm = await calibrate(_poster(http, info.url), info.model)
        if tm.note:
            self.calibration_notes.append(f"{info.model}: {tm.note}")
            self._emit(f"token calibration for {info.model}: {tm.note}")
        return tm

    @property
    def token_models(self) -> dict[str, TokenModel]:
        """The calibrated models, to hand to worker processes so they need not calibrate again."""
        return dict(self._token_models)

    async def stop(self) -> None:
        """Cancel every loop (in-flight requests too) and close the HTTP sessions; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        tasks = [*self._tasks, *(t for t in (self._feeder, self._reconciler) if t is not None)]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._core.watch.close()
        for server in self._core.servers:
            await server.http.close()

    async def drain(self, timeout_s: float = 60.0) -> bool:
        """Pause and wait until no request is in flight (server counters then match the records).

        Counts every request on the wire, also those of users removed by `set_users` or a workload
        switch that are finishing theirs. Returns False when `timeout_s` passed first."""
        self.pause()
        deadline = time.monotonic() + timeout_s
        last, progressed = self._core.in_flight, time.monotonic()
        while self._core.in_flight and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
            if self._core.in_flight < last:
                last, progressed = self._core.in_flight, time.monotonic()
            elif time.monotonic() - progressed > DRAIN_STALL_S:
                break  # nothing finished for a while: the server is not answering them, stop waiting
        return not self._core.in_flight

    # -- live controls -------------------------------------------------------------------------
    @property
    def users(self) -> int:
        return self._want

    @property
    def paused(self) -> bool:
        return self._core.paused

    @property
    def workload(self) -> Workload:
        return self._core.workload

    @property
    def in_flight(self) -> int:
        return self._core.in_flight

    @property
    def queued(self) -> int:
        """Requests waiting for a connection slot (client saturation)."""
        return self._core.limit.waiting

    @property
    def starting(self) -> bool:
        """Users are still being started (a slice per event-loop turn)."""
        return self._reconciler is not None and not self._reconciler.done()

    @property
    def finished(self) -> bool:
        """The stop rule was reached (or the trace was all sent) and every session has ended."""
        return (self._stop_rule_hit() or self._trace_exhausted) and not self._tasks

    def pause(self) -> None:
        self._core.set_paused(True)

    def resume(self) -> None:
        self._core.set_paused(False)

    def set_users(self, n: int) -> None:
        self._want = max(0, n)
        if self._started and not self._stopped:
            self._kick()

    def set_workload(self, workload: PreparedWorkload | Workload) -> None:
        """Running sessions finish their in-flight request, then users start sessions of `workload`."""
        ready = workload if isinstance(workload, PreparedWorkload) else prepared(workload)
        self._prepared = ready
        self._core.workload = ready.spec
        if self._started and not self._stopped:
            for local in list(self._slots):
                self._retire(local)
            self._apply_workload()

    def reset_window(self) -> None:
        if self.stats is not None:
            self.stats.reset_window(time.monotonic())

    def figures(self, now: float) -> ClientFigures:
        """Window and run figures of this driver's own statistics; `now` is `time.monotonic()`."""
        assert self.stats is not None, "a driver with an outside sink keeps no figures of its own"
        self.stats.in_flight = self._core.in_flight
        return self.stats.figures(now)

    def sessions(self, limit: int = USERS_SHOWN) -> tuple[UserRow, ...]:
        """Up to `limit` rows (live users first, by id, then sub-agents): O(limit), not O(users)."""
        rows: list[UserRow] = []
        for slot in self._slots.values():
            if len(rows) >= limit:
                break
            rows.append(slot.row())
        for child in list(self._core.children.values()):
            if len(rows) >= limit:
                break
            rows.append(child.row())
        return tuple(sorted(rows, key=lambda r: r.user))

    def session_states(self) -> dict[str, int]:
        """How many users (and sub-agents) are in each state."""
        counts: Counter[str] = Counter(slot.state for slot in self._slots.values())
        counts.update(child.state for child in self._core.children.values())
        return dict(counts)

    def records(self) -> Sequence[RequestRecord]:
        return tuple(self._core.records)

    # -- internals -----------------------------------------------------------------------------
    def _emit(self, line: str) -> None:
        if self.on_event is not None:
            self.on_event(line)

    def _stop_rule_hit(self) -> bool:
        if self._session_budget is not None and self._next_session_id() is None:
            return True
        stop = self._core.workload.stop
        if stop.sessions is not None and self._sessions_started >= stop.sessions:
            return True
        return (
            stop.duration_s is not None
            and self._started_at is not None
            and time.monotonic() - self._started_at >= stop.duration_s
        )

    def _next_session_id(self) -> int | None:
        """The next global session id this driver may start; None when `--sessions` is used up."""
        session_id = self._ids.id(self._session_seq)
        if self._session_budget is not None and session_id >= self._session_budget:
            return None
        return session_id

    def _take_session(self) -> int | None:
        session_id = self._next_session_id()
        if session_id is not None:
            self._session_seq += 1
            self._sessions_started += 1
        return session_id

    def _apply_workload(self) -> None:
        w = self._core.workload
        if self._feeder is not None:
            self._feeder.cancel()
            self._feeder = None
        self._queue = FairQueue()
        self._arrivals = FairQueue()
        self._trace_exhausted = False
        if w.kind == "trace":
            self._feeder = asyncio.create_task(self._feed_trace(self._queue))
        elif w.kind == "agent" and w.arrival.mode == "poisson":
            self._feeder = asyncio.create_task(self._feed_arrivals(w, self._arrivals))
        self._kick()

    def _kick(self) -> None:
        if self._reconciler is None or self._reconciler.done():
            self._reconciler = asyncio.create_task(self._reconcile(), name="agentx-users")

    async def _reconcile(self) -> None:
        """Bring the live users to `_want`, a slice per event-loop turn (O(1) per user)."""
        many = self._want - len(self._slots) > START_SLICE
        with _collector_paused(many):
            while not self._stopped and not self._core.workload.is_none:
                have = len(self._slots)
                if have > self._want:
                    for local in sorted(self._slots, reverse=True)[: have - self._want]:
                        self._retire(local)
                    continue
                if have == self._want:
                    return
                for _ in range(min(self._want - have, START_SLICE)):
                    self._start_user()
                await asyncio.sleep(0)  # let the loop breathe: signals, ticks and the dashboard go on

    def _start_user(self) -> None:
        local = heapq.heappop(self._free) if self._free else self._take_local()
        slot = User(user=self._ids.id(local))
        self._slots[local] = slot
        task = asyncio.create_task(self._run_user(slot))
        slot.task = task
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
        slot = self._slots.pop(local)
        self._retiring.add(local)
        slot.retire = True
        if slot.stop is not None:
            slot.stop.set()  # a session replay ends its waits and lets its calls on the wire finish
        elif not slot.in_flight and slot.task is not None:
            slot.task.cancel()

    async def _run_user(self, slot: User) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            while not slot.retire:
                w = self._core.workload
                slot.state = "waiting"
                if w.kind == "trace":
                    req = await self._queue.get()
                    if req is None:  # the trace is exhausted
                        break
                    await self._run_trace_request(slot, w, req)
                    continue
                if w.kind == "sessions":
                    if not await self._run_session_tree(slot, w):
                        break
                    continue
                if w.arrival.mode == "poisson":
                    await self._arrivals.get()
                await self._core.gate(slot)
                session_id = None if slot.retire or self._stop_rule_hit() else self._take_session()
                if session_id is None:  # the rule may have been reached while waiting
                    break
                slot.session += 1
                server = self._core.pick_server()
                rng = random.Random(hash((self._seed, session_id)))
                how = await run_session(self._core, slot, server, w, rng)
                self._core.session_ended(how, server)
                if how == "error" or (how == "context" and slot.step == 0):
                    slot.state = "error"
                    await asyncio.sleep(_ERROR_PAUSE_S)
            slot.state = "done"

    async def _run_session_tree(self, slot: User, w: Workload) -> bool:
        """One pass of the next session file; False when there is none to start (the stop rule)."""
        sessions = self._prepared.sessions
        await self._core.gate(slot)
        session_id = None if slot.retire or self._stop_rule_hit() else self._take_session()
        if session_id is None or sessions is None or not sessions.trees:
            return False
        # Files in order, recycled; each pass (a recycled file, the same file for two users, the same
        # file in another run) gets its own marker, so no pass hits another's cache.
        tree = sessions.trees[session_id % len(sessions.trees)]
        slot.session += 1
        slot.stop = asyncio.Event()
        if slot.retire:
            slot.stop.set()
        how = await run_tree(self._core, slot, tree, hash((self._nonce, session_id)), w, slot.stop)
        slot.stop = None
        self._core.session_ended(how, self._core.servers[0])
        if how == "error":
            slot.state = "error"
            await asyncio.sleep(_ERROR_PAUSE_S)
        return True

    async def _run_trace_request(self, slot: User, w: Workload, req: TraceRequest) -> None:
        servers = self._core.servers
        server = servers[(req.hash_ids[0] if req.hash_ids else req.index) % len(servers)]
        conv = Conversation(server.tm)
        out = build_request(conv, req, w, server.maker)
        slot.session, slot.step, slot.steps_total = req.index, 1, 1
        slot.endpoint, slot.context_tokens = server.url, conv.prompt_tokens
        if server.max_len is not None and conv.prompt_tokens + out > server.max_len:
            now = time.monotonic()
            self._core.sink.error(Failed("trace_skipped_too_long", False, now, now))
            limit = server.max_len
            self._core.event(
                "trace_skip",
                lambda n: (
                    f"{n} trace request(s) skipped: longer than the model's context ({limit} tokens); "
                    "lower --scale to fit them"
                ),
            )
            return
        await self._core.gate(slot)
        self._sessions_started += 1
        record, _ = await self._core.send(server, slot, conv, out, 1, w)
        self._core.session_ended("done" if record.error is None else "error", server)

    async def _feed_trace(self, queue: FairQueue[TraceRequest | None]) -> None:
        w = self._core.workload
        reqs = self._prepared.trace or ()
        # A worker takes every stride-th request of the trace, so the workers share it without overlap.
        mine = reqs[self._ids.offset :: self._ids.stride]
        assert w.trace is not None
        timed, speed = w.trace.mode == "timed", w.trace.speed
        t0, base = time.monotonic(), reqs[0].timestamp_s if reqs else 0.0
        for req in mine:
            if timed:
                delay = t0 + (req.timestamp_s - base) / speed - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            else:
                while queue.qsize() > max(self._want, 1):
                    await asyncio.sleep(0.01)
            await self._core.gate(User(user=-1))
            queue.put_nowait(req)
        self._trace_exhausted = True
        self._emit(f"trace replay finished: all {len(mine)} requests were sent")
        for _ in range(max(self._want, 1) * 4):
            queue.put_nowait(None)

    async def _feed_arrivals(self, w: Workload, queue: FairQueue[None]) -> None:
        rng = random.Random(self._seed ^ 0xA441 ^ self._ids.offset)
        rate = (w.arrival.rate_per_s or 1.0) / self._ids.stride  # each worker takes its share
        while True:
            await asyncio.sleep(rng.expovariate(rate))
            queue.put_nowait(None)


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

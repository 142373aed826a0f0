"""The load driver: simulated users running agent sessions (or a trace replay) against endpoints.

Lifecycle and live controls live here; the per-step machinery is in `core`, the loops in `agent`.
Sessions are spread round-robin over endpoints and stay on theirs (each keeps its prefix cache on one
server); sub-agents go where their parent is.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from agentx_tui.errors import TargetError
from agentx_tui.load.agent import Slot, run_session
from agentx_tui.load.client import STREAM_IDLE_TIMEOUT_S, RequestRecord
from agentx_tui.load.conversation import Conversation
from agentx_tui.load.core import Core, Endpoint, EndpointTarget
from agentx_tui.load.textgen import PostJson, TextMaker, TokenModel, calibrate
from agentx_tui.load.trace import TraceRequest, build_request, trace_requests
from agentx_tui.load.workload import Workload
from agentx_tui.telemetry.snapshot import ClientFigures, SessionRow

_CONTROL_TIMEOUT = aiohttp.ClientTimeout(total=30)
# `sock_read` covers the wait for a response's headers; the core's StallWatch then covers its body.
_STREAM_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=STREAM_IDLE_TIMEOUT_S)
_ERROR_PAUSE_S = 1.0
_MAX_METRICS_BYTES = 8 << 20
DEFAULT_BLOCK_SIZE = 16  # GPU vLLM's default; the CPU build uses 128 (read from /metrics when it can)

__all__ = ["Driver", "EndpointTarget"]


class Driver:
    def __init__(
        self,
        workload: Workload,
        endpoints: Sequence[EndpointTarget],
        *,
        users: int,
        seed: int = 0,
        api_key: str | None = None,
        window_s: float = 10.0,
        block_size: int | None = None,
    ) -> None:
        if not endpoints:
            raise TargetError("The load driver needs at least one endpoint.")
        self._targets = list(endpoints)
        self._core = Core(workload, seed=seed, window_s=window_s, block_size=block_size or DEFAULT_BLOCK_SIZE)
        self._block_size_given = block_size is not None
        self._users = max(0, users)
        self._seed = seed
        self._api_key = api_key
        self._slots: dict[int, Slot] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._started_at: float | None = None
        self._sessions_started = 0
        self._stopped = False
        self._started = False
        self._queue: asyncio.Queue[TraceRequest | None] = asyncio.Queue()
        self._arrivals: asyncio.Queue[None] = asyncio.Queue()
        self._feeder: asyncio.Task[None] | None = None
        self._trace_exhausted = False
        self.on_event: Callable[[str], None] | None = None
        self.calibration_notes: list[str] = []

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Calibrate each model's tokenizer, then start the user loops."""
        if self._started:
            return
        self._started = True
        self._core.on_event = self._emit
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        models: dict[str, tuple[TokenModel, TextMaker]] = {}
        for target in self._targets:
            http = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
                timeout=_STREAM_TIMEOUT,
                headers=headers,
            )
            try:
                max_len = target.max_model_len or await _max_model_len(http, target)
                if target.model not in models:
                    tm = await calibrate(_poster(http, target.url), target.model)
                    models[target.model] = (tm, TextMaker(tm, self._seed))
                    if tm.note:
                        self.calibration_notes.append(f"{target.model}: {tm.note}")
                        self._emit(f"token calibration for {target.model}: {tm.note}")
                if not self._block_size_given and not self._core.endpoints:
                    self._core.ceiling.block_size = await _block_size(http, target) or DEFAULT_BLOCK_SIZE
            except BaseException:
                await http.close()
                raise
            tm, maker = models[target.model]
            self._core.endpoints.append(Endpoint(target, http, tm, maker, max_len, {}))
        self._started_at = time.monotonic()
        self._core.stats.reset_window(self._started_at)
        self._apply_workload()

    async def stop(self) -> None:
        """Cancel every loop (in-flight requests too) and close the HTTP sessions; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        tasks = list(self._tasks) + ([self._feeder] if self._feeder else [])
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._core.watch.close()
        for ep in self._core.endpoints:
            await ep.http.close()

    async def drain(self, timeout_s: float = 60.0) -> bool:
        """Pause and wait until no request is in flight (server counters then match the records).

        Counts every request on the wire, also those of users removed by `set_users` or a workload
        switch that are finishing theirs. Returns False when `timeout_s` passed first."""
        self.pause()
        deadline = time.monotonic() + timeout_s
        while self._core.in_flight and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return not self._core.in_flight

    # -- live controls -------------------------------------------------------------------------
    @property
    def users(self) -> int:
        return self._users

    @property
    def paused(self) -> bool:
        return self._core.paused

    @property
    def workload(self) -> Workload:
        return self._core.workload

    @property
    def finished(self) -> bool:
        """The workload's stop rule was reached (or the trace was all sent) and every session has ended."""
        return (self._stop_rule_hit() or self._trace_exhausted) and not self._tasks

    def pause(self) -> None:
        self._core.set_paused(True)

    def resume(self) -> None:
        self._core.set_paused(False)

    def set_users(self, n: int) -> None:
        self._users = max(0, n)
        if self._started and not self._stopped:
            self._reconcile()

    def set_workload(self, workload: Workload) -> None:
        """Running sessions finish their in-flight request, then users start sessions of `workload`."""
        self._core.workload = workload
        if self._started and not self._stopped:
            for slot in self._slots.values():
                self._retire(slot)
            self._slots.clear()
            self._apply_workload()

    def reset_window(self) -> None:
        self._core.stats.reset_window(time.monotonic())

    def figures(self, now: float) -> ClientFigures:
        """Window and run figures; `now` is `time.monotonic()`."""
        return self._core.stats.figures(now)

    def sessions(self) -> tuple[SessionRow, ...]:
        rows = [s.row() for s in self._slots.values()] + [c.row() for c in list(self._core.children.values())]
        return tuple(sorted(rows, key=lambda r: r.user))

    def records(self) -> Sequence[RequestRecord]:
        return tuple(self._core.records)

    # -- internals -----------------------------------------------------------------------------
    def _emit(self, line: str) -> None:
        if self.on_event is not None:
            self.on_event(line)

    def _stop_rule_hit(self) -> bool:
        stop = self._core.workload.stop
        if stop.sessions is not None and self._sessions_started >= stop.sessions:
            return True
        return (
            stop.duration_s is not None
            and self._started_at is not None
            and time.monotonic() - self._started_at >= stop.duration_s
        )

    def _apply_workload(self) -> None:
        w = self._core.workload
        if self._feeder is not None:
            self._feeder.cancel()
            self._feeder = None
        self._queue = asyncio.Queue()
        self._arrivals = asyncio.Queue()
        self._trace_exhausted = False
        if w.kind == "trace":
            self._feeder = asyncio.create_task(self._feed_trace(w, self._queue))
        elif w.kind == "agent" and w.arrival.mode == "poisson":
            self._feeder = asyncio.create_task(self._feed_arrivals(w, self._arrivals))
        self._reconcile()

    def _reconcile(self) -> None:
        if self._core.workload.is_none:
            return
        live = sorted(self._slots)
        for user in live[self._users :]:
            self._retire(self._slots.pop(user))
        user = 0
        while len(self._slots) < self._users:
            while user in self._slots or any(t.get_name() == f"user-{user}" for t in self._tasks):
                user += 1
            slot = Slot(user=user)
            self._slots[user] = slot
            task = asyncio.create_task(self._run_user(slot), name=f"user-{user}")
            slot.task = task
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _retire(self, slot: Slot) -> None:
        """A removed user finishes its in-flight request; one that is waiting stops now."""
        slot.retire = True
        if not slot.in_flight and slot.task is not None:
            slot.task.cancel()

    async def _run_user(self, slot: Slot) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            while not slot.retire and not self._stop_rule_hit():
                w = self._core.workload
                slot.state = "waiting"
                if w.kind == "trace":
                    req = await self._queue.get()
                    if req is None:  # the trace is exhausted
                        break
                    await self._run_trace_request(slot, w, req)
                    continue
                if w.arrival.mode == "poisson":
                    await self._arrivals.get()
                await self._core.gate(slot)
                if slot.retire or self._stop_rule_hit():  # the rule may have been reached while waiting
                    break
                self._sessions_started += 1
                slot.session += 1
                ep = self._core.pick_endpoint()
                rng = random.Random(hash((self._seed, slot.user, slot.session)))
                how = await run_session(self._core, slot, ep, w, rng)
                self._core.session_ended(how, ep)
                if how == "error" or (how == "context" and slot.step == 0):
                    slot.state = "error"
                    await asyncio.sleep(_ERROR_PAUSE_S)
            slot.state = "done"

    async def _run_trace_request(self, slot: Slot, w: Workload, req: TraceRequest) -> None:
        eps = self._core.endpoints
        ep = eps[(req.hash_ids[0] if req.hash_ids else req.index) % len(eps)]
        conv = Conversation(ep.tm)
        out = build_request(conv, req, w, ep.maker)
        slot.session, slot.step, slot.steps_total = req.index, 1, 1
        slot.endpoint, slot.context_tokens = ep.target.url, conv.prompt_tokens
        if ep.max_len is not None and conv.prompt_tokens + out > ep.max_len:
            self._core.stats.error("trace_skipped_too_long", final=False)
            self._core.event(
                "trace_skip",
                lambda n: f"{n} trace request(s) skipped: longer than the model's context ({ep.max_len} tokens); "
                "lower --scale to fit them",
            )
            return
        await self._core.gate(slot)
        self._sessions_started += 1
        record, _ = await self._core.send(ep, slot, conv, out, 1, w)
        self._core.session_ended("done" if record.error is None else "error", ep)

    async def _feed_trace(self, w: Workload, queue: asyncio.Queue[TraceRequest | None]) -> None:
        reqs = trace_requests(w)
        assert w.trace is not None
        timed, speed = w.trace.mode == "timed", w.trace.speed
        t0, base = time.monotonic(), reqs[0].timestamp_s
        for req in reqs:
            if timed:
                delay = t0 + (req.timestamp_s - base) / speed - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            else:
                while queue.qsize() > max(self._users, 1):
                    await asyncio.sleep(0.01)
            await self._core.gate(Slot(user=-1))
            queue.put_nowait(req)
        self._trace_exhausted = True
        self._emit(f"trace replay finished: all {len(reqs)} requests were sent")
        for _ in range(max(self._users, 1) * 4):
            queue.put_nowait(None)

    async def _feed_arrivals(self, w: Workload, queue: asyncio.Queue[None]) -> None:
        rng = random.Random(self._seed ^ 0xA441)
        rate = w.arrival.rate_per_s or 1.0
        while True:
            await asyncio.sleep(rng.expovariate(rate))
            queue.put_nowait(None)


def _poster(http: aiohttp.ClientSession, base: str) -> PostJson:
    async def post(path: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        try:
            async with http.post(base.rstrip("/") + path, json=payload, timeout=_CONTROL_TIMEOUT) as resp:
                if resp.status != 200:
                    return None
                data = await resp.json(content_type=None)
                return data if isinstance(data, dict) else None
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise TargetError(
                f"Cannot reach {base} to calibrate the tokenizer ({type(exc).__name__})."
            ) from exc

    return post


async def _max_model_len(http: aiohttp.ClientSession, target: EndpointTarget) -> int | None:
    try:
        async with http.get(target.url.rstrip("/") + "/v1/models", timeout=_CONTROL_TIMEOUT) as resp:
            data = await resp.json(content_type=None) if resp.status == 200 else {}
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return None
    for card in data.get("data", []) if isinstance(data, dict) else []:
        if (
            isinstance(card, dict)
            and card.get("id") == target.model
            and isinstance(card.get("max_model_len"), int)
        ):
            return int(card["max_model_len"])
    return None


async def _block_size(http: aiohttp.ClientSession, target: EndpointTarget) -> int | None:
    """`block_size` of `vllm:cache_config_info` on the server's /metrics, if it exposes it."""
    try:
        async with http.get(target.url.rstrip("/") + "/metrics", timeout=_CONTROL_TIMEOUT) as resp:
            body = bytearray()
            if resp.status == 200:
                # Capped: a broken or hostile server's endless page must not fill memory.
                async for chunk in resp.content.iter_chunked(1 << 16):
                    body += chunk
                    if len(body) > _MAX_METRICS_BYTES:
                        return None
    except (aiohttp.ClientError, TimeoutError):
        return None
    # Only the one family is parsed: the parser is pure Python and a page may be megabytes.
    text = "\n".join(
        line for line in body.decode("utf-8", errors="replace").splitlines() if "cache_config_info" in line
    )
    try:
        for family in text_string_to_metric_families(text):
            if family.name.startswith("vllm:cache_config_info"):
                for sample in family.samples:
                    size = sample.labels.get("block_size", "")
                    if size.isdigit():
                        return int(size)
    except ValueError:
        return None
    return None

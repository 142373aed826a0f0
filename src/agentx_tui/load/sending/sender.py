"""The load loops' shared machinery: connections to the servers, the pause gate, the connection limit,
sending one request with retries, and handing what happened to the statistics (`StatsSink`).

The agent, trace and session-replay loops call into it; `driver.Driver` owns its lifecycle.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

from agentx_tui.engine.info import ServerInfo
from agentx_tui.load.sending.gates import FairLimit, Gate
from agentx_tui.load.sending.sse import RETRIABLE, RequestRecord, StallWatch, stream_chat
from agentx_tui.load.sending.users import User
from agentx_tui.load.stats import Completed, Failed, StatsSink, bucketed
from agentx_tui.load.workload.conversation import CeilingTracker, Conversation
from agentx_tui.load.workload.spec import Workload
from agentx_tui.load.workload.text import TextMaker, TokenModel
from agentx_tui.snapshot import CHILD_ID_BASE

MAX_ATTEMPTS = 6
_BACKOFF_S = 0.25
_BACKOFF_MAX_S = 8.0
_EVENT_EVERY_S = 5.0
# The latest request records, for inspection (nothing in the run's figures reads them: those come from
# ClientStats). ~1 KB each in a long run, so 100,000 grew a soak's memory by ~95 MiB (bench/soak.py).
RECORDS_KEPT = 10_000


@dataclass
class ServerConnection:
    """One server as the load loops use it: its HTTP session and its calibrated tokenizer."""

    info: ServerInfo
    http: aiohttp.ClientSession
    tm: TokenModel
    maker: TextMaker
    max_len: int | None
    headers: dict[str, str]

    @property
    def url(self) -> str:
        return self.info.url

    @property
    def chat_url(self) -> str:
        return self.info.url.rstrip("/") + "/v1/chat/completions"

    def head(self, out: int, temperature: float) -> bytes:
        model = self.info.model.replace("\\", "\\\\").replace('"', '\\"')
        return (
            f'{{"model":"{model}","stream":true,"stream_options":{{"include_usage":true}},'
            f'"temperature":{temperature},"max_tokens":{out},"min_tokens":{out},"ignore_eos":true,'
            f'"messages":['
        ).encode()


TAIL = b"]}"


class ConnectionLimit(FairLimit):
    """At most `limit` requests on the wire; the rest wait here, counted, before their clock starts.

    The limit comes from what the machine allows (file descriptors, ephemeral ports): a request that
    waits for a slot waits on the client, so the wait is kept out of TTFT and reported as client
    saturation instead (load/health.py)."""


class Core:
    def __init__(self, workload: Workload, *, seed: int, block_size: int, sink: StatsSink, connections: int) -> None:
        self.workload = workload
        self.seed = seed
        self.sink = sink
        self.servers: list[ServerConnection] = []
        self.ceiling = CeilingTracker(block_size)
        self.records: deque[RequestRecord] = deque(maxlen=RECORDS_KEPT)
        self.children: dict[int, User] = {}
        self.on_event: Callable[[str], None] | None = None
        self.limit = ConnectionLimit(connections)
        self.max_think_s: float | None = None  # --max-think: every think time is capped at this
        self._resume = Gate()
        self.in_flight = 0  # requests on the wire, of every loop (retired users' too)
        self.watch = StallWatch()  # ends streams whose body went silent (`sock_read` covers only headers)
        self._rr = 0
        self._next_child = CHILD_ID_BASE
        self._shared: dict[int, int] = {}
        self._pending_events: dict[str, int] = {}
        self._last_event: dict[str, float] = {}

    # -- small services for the loops --------------------------------------------------------
    @property
    def paused(self) -> bool:
        return not self._resume.is_open

    def set_paused(self, paused: bool) -> None:
        if paused:
            self._resume.shut()
        else:
            self._resume.open()

    async def gate(self, slot: User) -> None:
        if not self._resume.is_open:
            previous, slot.state = slot.state, "paused"
            await self._resume.wait()
            slot.state = previous

    def shared_prefix_tokens(self, w: Workload) -> int:
        """Drawn once per workload: every session must send the very same shared text."""
        key = id(w)
        if key not in self._shared:
            self._shared[key] = w.shared_prefix_tokens.draw_int(random.Random(self.seed), floor=0)
        return self._shared[key]

    async def think(self, seconds: float) -> None:
        """Wait a think (tool) time, capped by --max-think."""
        if self.max_think_s is not None:
            seconds = min(seconds, self.max_think_s)
        if seconds > 0:
            await asyncio.sleep(seconds)

    def pick_server(self) -> ServerConnection:
        server = self.servers[self._rr % len(self.servers)]
        self._rr += 1
        return server

    def new_child_id(self) -> int:
        self._next_child += 1
        return self._next_child

    def event(self, kind: str, message: Callable[[int], str]) -> None:
        """Report `kind` at most every few seconds, with how many happened since the last report."""
        self._pending_events[kind] = self._pending_events.get(kind, 0) + 1
        now = time.monotonic()
        if now - self._last_event.get(kind, -1e9) < _EVENT_EVERY_S:
            return
        count = self._pending_events.pop(kind)
        self._last_event[kind] = now
        if self.on_event is not None:
            self.on_event(message(count))

    def session_ended(self, how: str, server: ServerConnection) -> None:
        self.sink.session_ended(how)
        if how == "context":
            self.event(
                "context",
                lambda n: f"{n} session(s) ended cleanly at the model's context limit ({server.max_len} tokens)",
            )

    # -- one request ------------------------------------------------------------------------------
    async def send(
        self, server: ServerConnection, slot: User, conv: Conversation, out: int, step: int, w: Workload
    ) -> tuple[RequestRecord, str]:
        body = conv.body(server.head(out, w.temperature), TAIL)
        expected = conv.prompt_tokens
        attempt = 0
        while True:
            attempt += 1
            # Observed on every attempt: a retried prompt may already sit in the server's cache (the
            # first attempt was computed before it failed), and a perfect cache would have it too.
            ceiling = self.ceiling.observe(server.url, conv)
            slot.state, slot.in_flight = "prefill", True
            async with self.limit:
                self.in_flight += 1
                try:
                    res = await stream_chat(
                        server.http, server.chat_url, body, server.headers, want_text=w.history == "echo",
                        watch=self.watch,
                    )  # fmt: skip
                finally:
                    slot.in_flight = False
                    self.in_flight -= 1
            if res.error in RETRIABLE and attempt < MAX_ATTEMPTS and not slot.retire:
                self._error(slot, res.error or "", final=False, sent_at=res.sent_at, at=res.ended_at)
                slot.state = "waiting"
                delay = min(_BACKOFF_S * 2 ** (attempt - 1), _BACKOFF_MAX_S)
                await asyncio.sleep(delay * (0.5 + random.random()))
                # A retry is a new request: it waits while paused, so a drained driver stays quiet.
                await self.gate(slot)
                continue
            break
        output = res.output_tokens if res.output_tokens is not None else (res.events if res.error is None else None)
        ttft = None if res.first_at is None else res.first_at - res.sent_at
        decode = request_itl = None
        if output and output > 1 and res.first_at is not None and res.last_at is not None:
            span = res.last_at - res.first_at
            if span > 0:
                decode = output / span
                request_itl = span / (output - 1)
        itl = res.itl_samples()
        weight = sum(wt for _, wt in itl)
        record = RequestRecord(
            endpoint=server.url, user=slot.user, session=slot.session, step=step,
            sent_at=res.sent_at, ended_at=res.ended_at, status=res.status, error=res.error,
            expected_prompt_tokens=expected, expected_output_tokens=out,
            prompt_tokens=res.prompt_tokens, cached_tokens=res.cached_tokens, output_tokens=output,
            ceiling_tokens=ceiling if res.error is None else 0, ttft_s=ttft,
            itl_s=(sum(g * wt for g, wt in itl) / weight) if weight else None,
            e2e_s=res.ended_at - res.sent_at, decode_tokens_per_s=decode,
            malformed_lines=res.malformed, attempts=attempt,
        )  # fmt: skip
        self.records.append(record)
        if res.malformed:
            for _ in range(res.malformed):
                self.sink.error(Failed("malformed_sse_line", False, res.sent_at, res.ended_at))
        if res.error is not None:
            self._error(slot, res.error, final=True, sent_at=res.sent_at, at=res.ended_at)
            return record, res.text
        self.sink.add(
            Completed(
                sent_at=res.sent_at, first_token_at=res.first_at, last_token_at=res.last_at,
                ended_at=res.ended_at,
                prompt_tokens=res.prompt_tokens if res.prompt_tokens is not None else expected,
                cached_tokens=res.cached_tokens, output_tokens=output or 0, ceiling_tokens=ceiling,
                ttft_s=ttft, decode_tokens_per_s=decode, request_itl_s=request_itl, itl=bucketed(itl),
            )
        )  # fmt: skip
        slot.requests += 1
        slot.output_tokens += output or 0
        slot.last_ttft = ttft
        if decode is not None:
            slot.decode_sum += decode
            slot.decode_n += 1
        if request_itl is not None:
            slot.itl_sum += request_itl
            slot.itl_n += 1
        return record, res.text

    def _error(self, slot: User, kind: str, *, final: bool, sent_at: float, at: float) -> None:
        slot.errors += 1
        self.sink.error(Failed(kind, final, sent_at, at))
        if kind != "context_overflow":
            self.event("errors", lambda n: f"{n} request error(s) in the last seconds, latest: {kind}")

"""The driver's shared machinery: endpoints, the pause gate, sending one step with retries, records,
statistics and events. `agent` and `replay` loops call into it; `driver.Driver` owns its lifecycle."""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

from agentx_tui.load.agent import Opening, Slot, run_session
from agentx_tui.load.client import RETRIABLE, RequestRecord, StallWatch, stream_chat
from agentx_tui.load.conversation import CeilingTracker, Conversation
from agentx_tui.load.stats import ClientStats, Completed
from agentx_tui.load.textgen import TextMaker, TokenModel
from agentx_tui.load.workload import Workload

MAX_ATTEMPTS = 6
_BACKOFF_S = 0.25
_BACKOFF_MAX_S = 8.0
_EVENT_EVERY_S = 5.0
# The latest request records, for inspection (nothing in the run's figures reads them: those come from
# ClientStats). ~1 KB each in a long run, so 100,000 grew a soak's memory by ~95 MiB (bench/soak.py).
RECORDS_KEPT = 10_000


@dataclass(frozen=True)
class EndpointTarget:
    url: str  # base URL, e.g. http://127.0.0.1:8000
    model: str
    max_model_len: int | None = None


@dataclass
class Endpoint:
    target: EndpointTarget
    http: aiohttp.ClientSession
    tm: TokenModel
    maker: TextMaker
    max_len: int | None
    headers: dict[str, str]

    @property
    def chat_url(self) -> str:
        return self.target.url.rstrip("/") + "/v1/chat/completions"

    def head(self, out: int, temperature: float) -> bytes:
        model = self.target.model.replace("\\", "\\\\").replace('"', '\\"')
        return (
            f'{{"model":"{model}","stream":true,"stream_options":{{"include_usage":true}},'
            f'"temperature":{temperature},"max_tokens":{out},"min_tokens":{out},"ignore_eos":true,'
            f'"messages":['
        ).encode()


TAIL = b"]}"


class Core:
    def __init__(self, workload: Workload, *, seed: int, window_s: float, block_size: int) -> None:
        self.workload = workload
        self.seed = seed
        self.endpoints: list[Endpoint] = []
        self.stats = ClientStats(window_s, time.monotonic())
        self.ceiling = CeilingTracker(block_size)
        self.records: deque[RequestRecord] = deque(maxlen=RECORDS_KEPT)
        self.children: dict[int, Slot] = {}
        self.on_event: Callable[[str], None] | None = None
        self._resume = asyncio.Event()
        self._resume.set()
        self.in_flight = 0  # requests on the wire, of every loop (retired users' too)
        self.watch = StallWatch()  # ends streams whose body went silent (`sock_read` covers only headers)
        self._rr = 0
        self._next_child = 1_000_000
        self._shared: dict[int, int] = {}
        self._pending_events: dict[str, int] = {}
        self._last_event: dict[str, float] = {}

    # -- small services for the loops --------------------------------------------------------
    @property
    def paused(self) -> bool:
        return not self._resume.is_set()

    def set_paused(self, paused: bool) -> None:
        if paused:
            self._resume.clear()
        else:
            self._resume.set()

    async def gate(self, slot: Slot) -> None:
        if not self._resume.is_set():
            previous, slot.state = slot.state, "paused"
            await self._resume.wait()
            slot.state = previous

    def shared_prefix_tokens(self, w: Workload) -> int:
        """Drawn once per workload: every session must send the very same shared text."""
        key = id(w)
        if key not in self._shared:
            self._shared[key] = w.shared_prefix_tokens.draw_int(random.Random(self.seed), floor=0)
        return self._shared[key]

    def pick_endpoint(self) -> Endpoint:
        ep = self.endpoints[self._rr % len(self.endpoints)]
        self._rr += 1
        return ep

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

    def session_ended(self, how: str, ep: Endpoint) -> None:
        if how == "context":
            self.stats.sessions_ended_by_context += 1
            self.event(
                "context",
                lambda n: f"{n} session(s) ended cleanly at the model's context limit ({ep.max_len} tokens)",
            )
        elif how == "done":
            self.stats.sessions_completed += 1

    # -- one step ------------------------------------------------------------------------------
    async def send(
        self, ep: Endpoint, slot: Slot, conv: Conversation, out: int, step: int, w: Workload
    ) -> tuple[RequestRecord, str]:
        body = conv.body(ep.head(out, w.temperature), TAIL)
        expected = conv.prompt_tokens
        ceiling = self.ceiling.observe(ep.target.url, conv)
        attempt = 0
        while True:
            attempt += 1
            slot.state, slot.in_flight = "prefill", True
            self.in_flight += 1
            try:
                res = await stream_chat(
                    ep.http, ep.chat_url, body, ep.headers, want_text=w.history == "echo", watch=self.watch
                )
            finally:
                slot.in_flight = False
                self.in_flight -= 1
            if res.error in RETRIABLE and attempt < MAX_ATTEMPTS and not slot.retire:
                self._error(slot, res.error or "", final=False, status=res.status)
                slot.state = "waiting"
                delay = min(_BACKOFF_S * 2 ** (attempt - 1), _BACKOFF_MAX_S)
                await asyncio.sleep(delay * (0.5 + random.random()))
                # A retry is a new request: it waits while paused, so a drained driver stays quiet.
                await self.gate(slot)
                continue
            break
        output = (
            res.output_tokens
            if res.output_tokens is not None
            else (res.events if res.error is None else None)
        )
        ttft = None if res.first_at is None else res.first_at - res.sent_at
        decode = None
        if output and output > 1 and res.first_at is not None and res.last_at is not None:
            span = res.last_at - res.first_at
            decode = output / span if span > 0 else None
        itl = res.itl_samples()
        weight = sum(wt for _, wt in itl)
        record = RequestRecord(
            endpoint=ep.target.url, user=slot.user, session=slot.session, step=step,
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
            self.stats.errors["malformed_sse_line"] = (
                self.stats.errors.get("malformed_sse_line", 0) + res.malformed
            )
        if res.error is not None:
            self._error(slot, res.error, final=True, status=res.status)
            return record, res.text
        self.stats.add(
            Completed(
                sent_at=res.sent_at, first_token_at=res.first_at, last_token_at=res.last_at,
                ended_at=res.ended_at, prompt_tokens=res.prompt_tokens if res.prompt_tokens is not None
                else expected, cached_tokens=res.cached_tokens, output_tokens=output or 0,
                ceiling_tokens=ceiling, ttft_s=ttft, decode_tokens_per_s=decode, itl=itl,
            )
        )  # fmt: skip
        slot.requests += 1
        slot.output_tokens += output or 0
        slot.last_ttft = ttft
        if decode is not None:
            slot.decode_sum += decode
            slot.decode_n += 1
        return record, res.text

    def _error(self, slot: Slot, kind: str, *, final: bool, status: int | None) -> None:
        slot.errors += 1
        self.stats.error(kind, final=final)
        if kind != "context_overflow":
            self.event("errors", lambda n: f"{n} request error(s) in the last seconds, latest: {kind}")

    # -- sub-agents ----------------------------------------------------------------------------
    async def run_children(
        self, parent: Slot, ep: Endpoint, w: Workload, opening: Opening, count: int, rng: random.Random
    ) -> None:
        sub = w.subagents
        if sub is None or count <= 0:
            return
        slots = []
        for _ in range(count):
            self._next_child += 1
            child = Slot(user=self._next_child, parent=parent.user, session=1, endpoint=ep.target.url)
            self.children[child.user] = child
            slots.append(child)

        async def one(child: Slot, seed: int) -> None:
            crng = random.Random(seed)
            try:
                how = await run_session(
                    self, child, ep, w, crng, opening=opening, steps=sub.steps.draw_int(crng)
                )
                self.session_ended(how, ep)
            finally:
                self.children.pop(child.user, None)

        await asyncio.gather(*(one(c, rng.getrandbits(63)) for c in slots))

"""Sending one request: the connection limit, retries with back-off, the ceiling, the record, and what
happened handed to the statistics (`StatsSink`). Every kind's loop sends through one `RequestSender`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from agentx_tui.engine.info import ServerInfo
from agentx_tui.load.sending.gates import FairLimit, PauseGate
from agentx_tui.load.sending.streaming import StallWatch, stream_chat
from agentx_tui.load.sending.users import User
from agentx_tui.load.sending.wire import StreamPool
from agentx_tui.load.workload.conversation import CeilingTracker, Conversation
from agentx_tui.load.workload.text import TextMaker, TokenModel
from agentx_tui.measure import (
    CONTEXT_OVERFLOW,
    RETRIABLE,
    Completed,
    Failed,
    LiveCount,
    RequestRecord,
    StatsSink,
    Streamed,
    TokensPerEvent,
    answer_end,
    arrivals_of,
    measure_answer,
    split_prompt,
)

MAX_ATTEMPTS = 6
_BACKOFF_S = 0.25
_BACKOFF_MAX_S = 8.0
_EVENT_EVERY_S = 5.0
# The latest request records, for inspection (nothing in the run's figures reads them: those come from
# ClientStats). ~1 KB each in a long run, so 100,000 grew a soak's memory by ~95 MiB (bench/soak.py).
RECORDS_KEPT = 10_000
TAIL = b"]}"
CHAT_PATH = "/v1/chat/completions"


@dataclass
class ServerConnection:
    """One server as the loops use it: its streaming connections and its calibrated tokenizer."""

    info: ServerInfo
    streams: StreamPool
    tm: TokenModel
    maker: TextMaker
    max_len: int | None

    @property
    def url(self) -> str:
        return self.info.url

    def head(self, out: int, temperature: float) -> bytes:
        model = self.info.model.replace("\\", "\\\\").replace('"', '\\"')
        return (
            f'{{"model":"{model}","stream":true,"stream_options":{{"include_usage":true}},'
            f'"temperature":{temperature},"max_tokens":{out},"min_tokens":{out},"ignore_eos":true,'
            f'"messages":['
        ).encode()


class ConnectionLimit(FairLimit):
    """At most `limit` requests on the wire; the rest wait here, counted, before their clock starts.

    The limit comes from what the machine allows (file descriptors, ephemeral ports): a request that
    waits for a slot waits on the client, so the wait is kept out of TTFT and reported as client
    saturation instead (load/sending/health.py) — except in a timed replay, whose clock starts when
    the request was due: there the wait is schedule lag, in TTFT and in the lag figures."""


class EventThrottle:
    """Says a kind of event at most every few seconds, with how many happened since it last said it."""

    def __init__(self) -> None:
        self.on_event: Callable[[str], None] | None = None
        self._pending: dict[str, int] = {}
        self._last: dict[str, float] = {}

    def say(self, line: str) -> None:
        if self.on_event is not None:
            self.on_event(line)

    def count(self, kind: str, message: Callable[[int], str]) -> None:
        self._pending[kind] = self._pending.get(kind, 0) + 1
        now = time.monotonic()
        if now - self._last.get(kind, -1e9) < _EVENT_EVERY_S:
            return
        count = self._pending.pop(kind)
        self._last[kind] = now
        self.say(message(count))


class RequestSender:
    def __init__(
        self, *, sink: StatsSink, block_size: int, connections: int, pause: PauseGate, events: EventThrottle
    ) -> None:
        self.sink = sink
        self.ceiling = CeilingTracker(block_size)
        self.records: deque[RequestRecord] = deque(maxlen=RECORDS_KEPT)
        self.limit = ConnectionLimit(connections)
        self.in_flight = 0  # requests on the wire, of every loop (retired users' too)
        self.on_idle: Callable[[], None] | None = None  # told each time `in_flight` falls to 0
        self.streaming: set[LiveCount] = set()  # their tokens as they stream, for the live window
        self.per_event = TokensPerEvent()  # output tokens per content event, of the answers lately
        self.watch = StallWatch()  # ends requests that went silent
        self._pause = pause
        self._events = events

    async def close(self) -> None:
        await self.watch.close()

    def take_streamed(self) -> Streamed:
        """What the requests in flight streamed since the last call (measure/slots.py `LiveCount`): the
        live window's tokens, handed over once a tick, never per token."""
        streamed = Streamed()
        per_event = self.per_event.value
        for live in self.streaming:
            live.take(streamed, per_event)
        return streamed

    async def send(
        self,
        server: ServerConnection,
        user: User,
        conv: Conversation,
        out: int,
        step: int,
        *,
        temperature: float,
        echo: bool = False,
        due_at: float | None = None,
    ) -> tuple[RequestRecord, str]:
        """Send `conv` (asking for exactly `out` tokens), retrying what is worth retrying; the text
        streamed back is returned only with `echo`.

        `due_at` (`time.monotonic()`): when a timed replay's schedule wanted it sent. TTFT and E2E then
        count from it, not from when a free user got round to it (docs/metrics.md, "Honest clocks")."""
        body = conv.body(server.head(out, temperature), TAIL)
        expected = conv.prompt_tokens
        attempt = 0
        first_sent: float | None = None
        while True:
            attempt += 1
            # Observed on every attempt: a retried prompt may already sit in the server's cache (the
            # first attempt was computed before it failed), and a perfect cache would have it too.
            ceiling = self.ceiling.observe(server.url, conv)
            user.state, user.in_flight = "prefill", True
            live = LiveCount(expected)
            async with self.limit:
                self.in_flight += 1
                self.streaming.add(live)
                try:
                    res = await stream_chat(
                        server.streams, CHAT_PATH, body, want_text=echo, watch=self.watch,
                        on_first_token=user.decoding, live=live,
                    )  # fmt: skip
                finally:
                    user.in_flight = False
                    self.in_flight -= 1
                    self.streaming.discard(live)
                    if not self.in_flight and self.on_idle is not None:
                        self.on_idle()
            if first_sent is None:
                first_sent = res.sent_at
            if res.error in RETRIABLE and attempt < MAX_ATTEMPTS and not user.retire:
                self._error(user, res.error or "", final=False, sent_at=res.sent_at, at=res.ended_at)
                user.state = "waiting"
                delay = min(_BACKOFF_S * 2 ** (attempt - 1), _BACKOFF_MAX_S)
                await asyncio.sleep(delay * (0.5 + random.random()))
                # A retry is a new request: it waits while paused, so a drained driver stays quiet.
                await self._pause.hold(user)
                continue
            break
        # The schedule's lag is the first attempt's: a retry's back-off is the server's doing, not the users'.
        due = None if due_at is None or first_sent is None else min(due_at, first_sent)
        lag = None if due is None or first_sent is None else first_sent - due
        start = res.sent_at if due is None else due
        # A failed request's partial stream is not counted as its output (only the server's count is),
        # nor is its last content its end: its E2E runs to the end of its body.
        e2e_s = answer_end(res.last_at if res.error is None else None, res.ended_at) - start
        answer = measure_answer(
            start, res.read_times, res.read_events,
            reported_output=res.output_tokens, counted_events=res.events if res.error is None else None,
            ended_at=res.ended_at,
        )  # fmt: skip
        record = RequestRecord(
            endpoint=server.url, user=user.user, session=user.session, step=step,
            sent_at=res.sent_at, ended_at=res.ended_at, status=res.status, error=res.error,
            expected_prompt_tokens=expected, expected_output_tokens=out,
            prompt_tokens=res.prompt_tokens, cached_tokens=res.cached_tokens, output_tokens=answer.output_tokens,
            ceiling_tokens=ceiling if res.error is None else 0, ttft_s=answer.ttft_s, itl_s=answer.itl_mean_s,
            e2e_s=e2e_s, decode_tokens_per_s=answer.decode_tokens_per_s,
            malformed_lines=res.malformed, attempts=attempt, due_at=due,
        )  # fmt: skip
        self.records.append(record)
        idle = user.idle_before(res.sent_at)
        user.call_ended(res.ended_at)
        if res.malformed:
            for _ in range(res.malformed):
                self.sink.error(Failed("malformed_sse_line", False, res.sent_at, res.ended_at))
        if res.error is not None:
            self._error(user, res.error, final=True, sent_at=res.sent_at, at=res.ended_at)
            return record, res.text
        prompt = res.prompt_tokens if res.prompt_tokens is not None else expected
        self.per_event.observe(answer.output_tokens or 0, res.events)
        self.sink.add(
            Completed.of_answer(
                answer, sent_at=res.sent_at, ended_at=res.ended_at, prompt_tokens=prompt,
                cached_tokens=res.cached_tokens, ceiling_tokens=ceiling,
                tree=user.tree, user=user.user if user.parent is None else user.parent, step=step,
                due_at=due, schedule_lag_s=lag, idle_s=idle, arrivals=arrivals_of(res.read_times, res.read_events),
                live_prompt=live.prompt, live_output=live.output, live_events=live.events,
            )
        )  # fmt: skip
        user.count(answer)
        user.count_reuse(split_prompt(prompt, ceiling, res.cached_tokens))
        return record, res.text

    def _error(self, user: User, kind: str, *, final: bool, sent_at: float, at: float) -> None:
        user.errors += 1
        self.sink.error(Failed(kind, final, sent_at, at, tree=user.tree))
        if kind != CONTEXT_OVERFLOW:
            self._events.count("errors", lambda n: f"{n} request error(s) in the last seconds, latest: {kind}")

"""The streaming hot path: one chat completion (sent by `wire.StreamPool`), parsed from raw SSE bytes.

Per-token work is kept to a byte search: a `data:` line counts as a content event when its `"content"`
value is a non-empty string, and only the final usage chunk (and, in echo mode, content chunks) is
decoded as JSON. Timestamps are taken once per network read, not per event: events that arrive in the
same read did arrive at the same time. `SseScanner` is that scan, fed one network read at a time: the
load client's `stream_chat` and the proxy (agentx_tui.proxy), which scans what it forwards, share it.
A silent request is ended by a `StallWatch`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentx_tui.load.sending.wire import StreamPool, WireError

_DATA = b"data:"
_CONTENT = b'"content":'
_USAGE = b'"usage":'
_NULLS = (b"null", b" null")
_FINISH = b'"finish_reason":'
# Besides `content`, what a delta streams generated tokens in (the proxy's agents call tools and reason;
# a text completion streams `text`): see `SseScanner(any_tokens=True)`.
_OTHER_TOKENS = (b'"tool_calls":[{', b'"reasoning":', b'"reasoning_content":', b'"text":')
_OVERFLOW_HINTS = ("context length", "maximum context", "max_model_len", "too long", "context window")
RETRIABLE = frozenset({"rate_limited", "unavailable", "connection", "timeout"})
STREAM_IDLE_TIMEOUT_S = 600.0  # a stream with no network read for this long has failed


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as the driver saw it (times from `time.monotonic()`, durations in seconds)."""

    endpoint: str
    user: int
    session: int
    step: int
    sent_at: float
    ended_at: float
    status: int | None  # HTTP status; None when no response arrived
    error: str | None  # error kind; None for a completed request
    expected_prompt_tokens: int | None  # what the driver meant to send
    expected_output_tokens: int
    prompt_tokens: int | None = None  # server usage
    cached_tokens: int | None = None  # usage.prompt_tokens_details.cached_tokens; None when absent
    output_tokens: int | None = None
    ceiling_tokens: int = 0
    ttft_s: float | None = None
    itl_s: float | None = None  # token-weighted mean inter-token latency
    e2e_s: float | None = None
    decode_tokens_per_s: float | None = None
    malformed_lines: int = 0
    attempts: int = 1


class UsageFigures:
    """Token counts read from the OpenAI `usage` object of whatever holds one as `usage` (an answer
    streamed to the load client, or relayed by the proxy)."""

    __slots__ = ()
    usage: dict[str, Any] | None

    @property
    def prompt_tokens(self) -> int | None:
        return usage_int(self.usage, "prompt_tokens")

    @property
    def output_tokens(self) -> int | None:
        return usage_int(self.usage, "completion_tokens")

    @property
    def cached_tokens(self) -> int | None:
        return usage_cached_tokens(self.usage)


@dataclass(slots=True)
class StreamResult(UsageFigures):
    status: int | None
    error: str | None
    sent_at: float
    ended_at: float = 0.0
    first_at: float | None = None
    last_at: float | None = None
    usage: dict[str, Any] | None = None
    read_times: list[float] = field(default_factory=list)
    read_events: list[int] = field(default_factory=list)
    events: int = 0
    malformed: int = 0
    text: str = ""
    detail: str = ""
    last_read: float = 0.0  # time of the latest network read of the body (the StallWatch reads it)

    def itl_samples(self) -> tuple[tuple[float, float], ...]:
        """(gap per token, tokens) per read after the first that carried content (`SseScanner.itl_samples`)."""
        return _itl_samples(self.read_times, self.read_events, self.events, self.output_tokens)


def usage_int(usage: object, key: str) -> int | None:
    """An integer of an OpenAI `usage` object (`prompt_tokens`, `completion_tokens`); None when absent."""
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage_cached_tokens(usage: object) -> int | None:
    """`usage.prompt_tokens_details.cached_tokens` (vLLM fills it with prefix caching on); None when absent."""
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    return usage_int(details, "cached_tokens")


def classify(status: int, body: str) -> str:
    if status == 400 and any(h in body.lower() for h in _OVERFLOW_HINTS):
        return "context_overflow"
    if status == 429:
        return "rate_limited"
    if status == 503:
        return "unavailable"
    return f"http_{status}"


def _content_nonempty(payload: bytes) -> bool:
    i = payload.find(_CONTENT)
    if i < 0:
        return False
    i += len(_CONTENT)
    if payload[i : i + 1] == b" ":
        i += 1
    return payload[i : i + 1] == b'"' and payload[i + 1 : i + 2] != b'"'


def _string_nonempty(payload: bytes, at: int) -> bool:
    """Whether a non-empty JSON string starts at `at` (one optional space first)."""
    if payload[at : at + 1] == b" ":
        at += 1
    return payload[at : at + 1] == b'"' and payload[at + 1 : at + 2] != b'"'


def _other_tokens(payload: bytes) -> bool:
    for key in _OTHER_TOKENS:
        i = payload.find(key)
        if i >= 0 and (key[-1:] == b"{" or _string_nonempty(payload, i + len(key))):
            return True
    return False


class SseScanner:
    """The events of one OpenAI-compatible SSE body, fed one network read at a time (`feed`).

    Per read it records the time and the number of content events (for TTFT and the token gaps); it
    keeps the usage event, whether `[DONE]` came, a stream error, and malformed lines. With `want_text`
    it collects the content text; with `want_finish`, the last `finish_reason`; with `any_tokens`, an
    event also counts when it streams tool-call arguments, reasoning or completion `text` (an agent's
    answer may be all tool call), not only `content`."""

    __slots__ = (
        "any_tokens",
        "buf",
        "detail",
        "done",
        "error",
        "events",
        "finish_reason",
        "malformed",
        "pieces",
        "read_events",
        "read_times",
        "usage",
        "want_finish",
        "want_text",
    )

    def __init__(self, *, want_text: bool = False, want_finish: bool = False, any_tokens: bool = False) -> None:
        self.want_text = want_text
        self.want_finish = want_finish
        self.any_tokens = any_tokens
        self.buf = b""
        self.done = False
        self.error: str | None = None
        self.detail = ""
        self.usage: dict[str, object] | None = None
        self.finish_reason: str | None = None
        self.events = 0
        self.malformed = 0
        self.pieces: list[str] = []
        self.read_times: list[float] = []
        self.read_events: list[int] = []

    def feed(self, data: bytes, now: float) -> int:
        """Scan one read that arrived at `now`; returns the content events it completed."""
        buf = self.buf
        lines = (buf + data).split(b"\n") if buf else data.split(b"\n")
        self.buf = lines.pop()
        want_text, want_finish, any_tokens = self.want_text, self.want_finish, self.any_tokens
        n = 0
        for line in lines:
            if not line or line == b"\r" or line[:1] == b":":
                continue
            if line[:5] != _DATA:
                if not line.startswith((b"event:", b"id:", b"retry:")):
                    self.malformed += 1
                continue
            payload = line[5:].strip()
            if payload[:1] != b"{":
                if payload == b"[DONE]":
                    self.done = True
                else:
                    self.malformed += 1
                continue
            if _content_nonempty(payload) or (any_tokens and _other_tokens(payload)):
                n += 1
                if want_text:
                    self.pieces.append(_delta_text(payload))
            if want_finish:
                f = payload.find(_FINISH)
                if f >= 0 and _string_nonempty(payload, f + len(_FINISH)):
                    self.finish_reason = _string_at(payload, f + len(_FINISH))
            u = payload.find(_USAGE)
            if u >= 0 and payload[u + 8 : u + 13] not in _NULLS:
                try:
                    usage = json.loads(payload).get("usage")
                except ValueError:
                    self.malformed += 1
                    continue
                if isinstance(usage, dict):
                    self.usage = usage
            elif payload.startswith(b'{"error"'):
                self.error = "stream_error"
                self.detail = payload[:500].decode(errors="replace")
        if n:
            self.read_times.append(now)
            self.read_events.append(n)
            self.events += n
        return n

    def end(self) -> None:
        """The body ended: a partial line left over is malformed."""
        if self.buf.strip():
            self.malformed += 1
        self.buf = b""

    def itl_samples(self, output_tokens: int | None) -> tuple[tuple[float, float], ...]:
        return _itl_samples(self.read_times, self.read_events, self.events, output_tokens)


def _itl_samples(
    times: list[float], counts: list[int], events: int, output_tokens: int | None
) -> tuple[tuple[float, float], ...]:
    """(gap per token, tokens) for every read after the first that carried content. A content event
    may hold several tokens: each event is weighted by the server's output tokens per event, so the
    weights add up to the tokens that arrived after the first read."""
    if len(times) < 2:
        return ()
    factor = output_tokens / events if output_tokens is not None and events > 0 else 1.0
    samples = []
    for i in range(1, len(times)):
        tokens = counts[i] * factor
        if tokens > 0:
            samples.append(((times[i] - times[i - 1]) / tokens, tokens))
    return tuple(samples)


def _string_at(payload: bytes, at: int) -> str:
    """The JSON string value starting at `at` (after an optional space), escapes left as they are."""
    start = payload.index(b'"', at) + 1
    end = payload.find(b'"', start)
    return payload[start : end if end >= 0 else len(payload)].decode(errors="replace")


class StallWatch:
    """Fails streams that have been silent for `idle_s` seconds (no answer yet, or no more of it), as a
    `timeout`.

    One sweep every `every_s` seconds over the open streams replaces a timer re-armed on every network
    read (bench/driver_efficiency.py measured such a timer at about a tenth of the driver's CPU per
    streamed token). The sweeping task runs only while streams are open."""

    def __init__(self, idle_s: float = STREAM_IDLE_TIMEOUT_S, every_s: float | None = None) -> None:
        self.idle_s = idle_s
        self.every_s = every_s if every_s is not None else min(idle_s / 4, 5.0)
        self._open: dict[int, tuple[StreamResult, Callable[[WireError], None]]] = {}
        self._task: asyncio.Task[None] | None = None

    def add(self, result: StreamResult, abort: Callable[[WireError], None]) -> None:
        """Watch `result` from now; `abort` ends its request with the error it is given."""
        result.last_read = time.monotonic()
        self._open[id(result)] = (result, abort)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._sweeper())

    def discard(self, result: StreamResult) -> None:
        self._open.pop(id(result), None)

    def sweep(self, now: float) -> int:
        """End every stream silent since `now - idle_s`; returns how many."""
        stalled = [(r, abort) for r, abort in self._open.values() if now - r.last_read > self.idle_s]
        for result, abort in stalled:
            self.discard(result)
            abort(WireError("timeout", f"no data for {self.idle_s:g} s"))
        return len(stalled)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _sweeper(self) -> None:
        try:
            while self._open:
                await asyncio.sleep(self.every_s)
                self.sweep(time.monotonic())
        finally:
            self._task = None


async def stream_chat(
    pool: StreamPool,
    path: str,
    body: bytes,
    *,
    want_text: bool = False,
    watch: StallWatch | None = None,
    on_first_token: Callable[[], None] | None = None,
) -> StreamResult:
    """POST one streaming chat completion to `path` of `pool`'s server; never raises for HTTP,
    connection or stream errors.

    With a `watch`, a request silent for the watch's idle time (before or during its answer) fails as
    a `timeout`; without one, nothing times it out once connected. `on_first_token` is called once,
    when the first content arrives (a user's row then says "decoding")."""
    result = StreamResult(status=None, error=None, sent_at=time.monotonic())
    scan = SseScanner(want_text=want_text)
    read_times = scan.read_times
    result.read_times, result.read_events = read_times, scan.read_events
    first_token = on_first_token

    def on_read(now: float) -> None:
        nonlocal first_token
        result.last_read = now
        if first_token is not None and read_times:
            first_token()
            first_token = None

    def on_sent(abort: Callable[[WireError], None]) -> None:
        assert watch is not None
        watch.add(result, abort)

    try:
        answer = await pool.post(path, body, scan, on_read=on_read, on_sent=on_sent if watch is not None else None)
    except WireError as exc:
        result.status, result.error, result.detail = exc.status, exc.kind, exc.detail
    else:
        result.status = answer.status
        if answer.status != 200:
            result.detail = answer.error_body.decode(errors="replace")[:500]
            result.error = classify(answer.status or 0, result.detail)
        else:
            scan.end()
            if not scan.done and scan.error is None:
                # The body ended cleanly but the stream did not: OpenAI-compatible servers always close
                # a stream with `data: [DONE]`, so this answer was cut short and is not a completion.
                scan.error = "incomplete_stream"
    finally:
        result.ended_at = time.monotonic()
        if watch is not None:
            watch.discard(result)
    if result.status != 200:
        return result
    result.usage, result.events, result.malformed = scan.usage, scan.events, scan.malformed
    if result.error is None and scan.error is not None:
        result.error, result.detail = scan.error, scan.detail
    if read_times:
        result.first_at, result.last_at = read_times[0], read_times[-1]
    result.text = "".join(scan.pieces)
    return result


def _delta_text(payload: bytes) -> str:
    try:
        choices = json.loads(payload).get("choices") or [{}]
        return str((choices[0].get("delta") or {}).get("content") or "")
    except (ValueError, AttributeError, IndexError):
        return ""

"""The load client's streaming call: one chat completion sent by `wire.StreamPool`, its body read by
the `SseScanner` (agentx_tui.measure) as it arrives; a silent request is ended by a `StallWatch`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentx_tui.load.sending.wire import StreamPool, WireError
from agentx_tui.measure import LiveCount, SseScanner, UsageCounts, classify, token_gaps

STREAM_IDLE_TIMEOUT_S = 600.0  # a stream with no network read for this long has failed


@dataclass(slots=True)
class StreamResult(UsageCounts):
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
    last_read: float = 0.0  # when it was sent, for the StallWatch (its scan keeps its latest read's time)
    scan: SseScanner | None = None  # its body's scan, while it streams

    def itl_samples(self) -> tuple[tuple[float, float], ...]:
        """(gap per token, tokens) per read after the first that carried content (`SseScanner.itl_samples`)."""
        return token_gaps(self.read_times, self.read_events, self.events, self.output_tokens)


def _last_read(result: StreamResult) -> float:
    """When `result` last heard from its server: its latest network read of the body, else its sending."""
    scan = result.scan
    return scan.last_read if scan is not None and scan.last_read > result.last_read else result.last_read


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
        stalled = [(r, abort) for r, abort in self._open.values() if now - _last_read(r) > self.idle_s]
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
    live: LiveCount | None = None,
) -> StreamResult:
    """POST one streaming chat completion to `path` of `pool`'s server; never raises for HTTP,
    connection or stream errors.

    With a `watch`, a request silent for the watch's idle time (before or during its answer) fails as
    a `timeout`; without one, nothing times it out once connected. `on_first_token` is called once,
    when the first content arrives (a user's row then says "decoding"). A `live` count follows the
    scan's reads, for the live window (agentx_tui.measure `LiveCount`: nothing per read here)."""
    result = StreamResult(status=None, error=None, sent_at=time.monotonic())
    scan = result.scan = SseScanner(want_text=want_text, on_first=on_first_token)
    read_times = scan.read_times
    result.read_times, result.read_events = read_times, scan.read_events
    if live is not None:
        live.follow(read_times, scan.read_events)

    def on_sent(abort: Callable[[WireError], None]) -> None:
        assert watch is not None
        watch.add(result, abort)

    try:
        answer = await pool.post(path, body, scan, on_sent=on_sent if watch is not None else None)
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
        result.scan = None
    if result.status != 200:
        return result
    result.usage, result.events, result.malformed = scan.usage, scan.events, scan.malformed
    if result.error is None and scan.error is not None:
        result.error, result.detail = scan.error, scan.detail
    if read_times:
        result.first_at, result.last_at = read_times[0], read_times[-1]
    result.text = "".join(scan.pieces)
    return result

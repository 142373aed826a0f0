"""Reading an OpenAI-compatible SSE body from raw bytes, fed one network read at a time (`SseScanner`):
the load client's streaming call (load/sending/streaming.py) and the proxy (agentx_tui.proxy), which
scans what it forwards, share it; and the names of what went wrong (`classify`, `RETRIABLE`).

Per-token work is kept to a byte search: a `data:` line counts as a content event when its `"content"`
value is a non-empty string, and only the final usage chunk (and, in echo mode, content chunks) is
decoded as JSON. Timestamps are taken once per network read, not per event: events that arrive in the
same read did arrive at the same time.
"""

from __future__ import annotations

import json
from collections.abc import Callable

_DATA = b"data:"
_DATA_OBJECT = b"data: {"
_CONTENT = b'"content":'
_USAGE = b'"usage":'
_NULLS = (b"null", b" null")
_FINISH = b'"finish_reason":'
# Besides `content`, what a delta streams generated tokens in (the proxy's agents call tools and reason;
# a text completion streams `text`): see `SseScanner(any_tokens=True)`.
_OTHER_TOKENS = (b'"tool_calls":[{', b'"reasoning":', b'"reasoning_content":', b'"text":')
_OVERFLOW_HINTS = ("context length", "maximum context", "max_model_len", "too long", "context window")
# The error kinds worth another try: the server was busy or away, or the stream went silent.
RETRIABLE = frozenset({"rate_limited", "unavailable", "connection", "timeout"})
# A request over the model's context: refused by the server for its length; or, by the client, not sent
# because it would not fit (a session replay's call, a trace's request, a synthetic agent's next step).
CONTEXT_OVERFLOW = "context_overflow"
SESSION_CALL_TOO_LONG = "session_call_too_long"
TRACE_TOO_LONG = "trace_skipped_too_long"
AGENT_STEP_TOO_LONG = "agent_step_too_long"
OVER_CONTEXT = frozenset({CONTEXT_OVERFLOW, SESSION_CALL_TOO_LONG, TRACE_TOO_LONG, AGENT_STEP_TOO_LONG})


def classify(status: int, body: str) -> str:
    if status == 400 and any(h in body.lower() for h in _OVERFLOW_HINTS):
        return CONTEXT_OVERFLOW
    if status == 429:
        return "rate_limited"
    if status == 503:
        return "unavailable"
    return f"http_{status}"


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
        "last_read",
        "malformed",
        "on_first",
        "pieces",
        "read_events",
        "read_times",
        "usage",
        "want_finish",
        "want_text",
    )

    def __init__(
        self,
        *,
        want_text: bool = False,
        want_finish: bool = False,
        any_tokens: bool = False,
        on_first: Callable[[], None] | None = None,
    ) -> None:
        """`on_first` is called once, when the first content event has come (a users-table row then
        says "decoding")."""
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
        self.last_read = 0.0  # when the latest read came (a stall watch reads it)
        self.on_first = on_first

    def feed(self, data: bytes, now: float) -> int:
        """Scan one read that arrived at `now`; returns the content events it completed."""
        self.last_read = now
        if not self.buf and data[:7] == _DATA_OBJECT and data[-3:] == b"}\n\n" and data.find(b"\n") == len(data) - 2:
            n = self._event(data, 6)  # the usual read (vLLM's): one whole event, scanned in place
        else:
            n = 0
            lines = (self.buf + data).split(b"\n") if self.buf else data.split(b"\n")
            self.buf = lines.pop()
            for line in lines:
                if line[:7] == _DATA_OBJECT and line[-1:] == b"}":
                    n += self._event(line, 6)
                    continue
                if not line or line == b"\r" or line[:1] == b":":
                    continue
                if line[:5] != _DATA:
                    if not line.startswith((b"event:", b"id:", b"retry:")):
                        self.malformed += 1
                    continue
                payload = line[5:].strip()
                if payload[:1] == b"{":
                    n += self._event(payload, 0)
                elif payload == b"[DONE]":
                    self.done = True
                else:
                    self.malformed += 1
        if n:
            if not self.events and self.on_first is not None:
                self.on_first()
            self.read_times.append(now)
            self.read_events.append(n)
            self.events += n
        return n

    def _event(self, line: bytes, at: int) -> int:
        """One event's JSON object, from `at` in `line` (whitespace may follow it); 1 when it is a
        content event. Only the usage chunk (and, with `want_text`, content) is decoded as JSON."""
        content = 0
        c = line.find(_CONTENT, at)
        if (c >= 0 and _string_nonempty(line, c + 10)) or (self.any_tokens and _other_tokens(line)):
            content = 1
            if self.want_text:
                self.pieces.append(_delta_text(line[at:]))
        if self.want_finish:
            f = line.find(_FINISH, at)
            if f >= 0 and _string_nonempty(line, f + len(_FINISH)):
                self.finish_reason = _string_at(line, f + len(_FINISH))
        u = line.find(_USAGE, at)
        if u >= 0 and line[u + 8 : u + 13] not in _NULLS:
            try:
                usage = json.loads(line[at:]).get("usage")
            except ValueError:
                self.malformed += 1
                return content
            if isinstance(usage, dict):
                self.usage = usage
        elif line.startswith(b'{"error"', at):
            self.error = "stream_error"
            self.detail = line[at:].rstrip()[:500].decode(errors="replace")
        return content

    def end(self) -> None:
        """The body ended: a partial line left over is malformed."""
        if self.buf.strip():
            self.malformed += 1
        self.buf = b""


def _string_at(payload: bytes, at: int) -> str:
    """The JSON string value starting at `at` (after an optional space), escapes left as they are."""
    start = payload.index(b'"', at) + 1
    end = payload.find(b'"', start)
    return payload[start : end if end >= 0 else len(payload)].decode(errors="replace")


def _delta_text(payload: bytes) -> str:
    try:
        choices = json.loads(payload).get("choices") or [{}]
        return str((choices[0].get("delta") or {}).get("content") or "")
    except (ValueError, AttributeError, IndexError):
        return ""

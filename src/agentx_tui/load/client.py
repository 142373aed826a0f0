"""The streaming hot path: one chat completion over aiohttp, parsed from raw SSE bytes.

DESIGN §6 measured aiohttp's compiled HTTP parser at about half httpx's CPU per token, so this module
keeps per-token work to a byte search: a `data:` line counts as a content event when its `"content"`
value is a non-empty string, and only the final usage chunk (and, in echo mode, content chunks) is
decoded as JSON. Timestamps are taken once per network read, not per event: events that arrive in the
same read did arrive at the same time.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import aiohttp

_DATA = b"data:"
_CONTENT = b'"content":'
_USAGE = b'"usage":'
_NULLS = (b"null", b" null")
_OVERFLOW_HINTS = ("context length", "maximum context", "max_model_len", "too long", "context window")
RETRIABLE = frozenset({"rate_limited", "unavailable", "connection", "timeout"})


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


@dataclass(slots=True)
class StreamResult:
    status: int | None
    error: str | None
    sent_at: float
    ended_at: float = 0.0
    first_at: float | None = None
    last_at: float | None = None
    usage: dict[str, object] | None = None
    read_times: list[float] = field(default_factory=list)
    read_events: list[int] = field(default_factory=list)
    events: int = 0
    malformed: int = 0
    text: str = ""
    detail: str = ""

    @property
    def prompt_tokens(self) -> int | None:
        return _int(self.usage, "prompt_tokens")

    @property
    def output_tokens(self) -> int | None:
        return _int(self.usage, "completion_tokens")

    @property
    def cached_tokens(self) -> int | None:
        details = None if self.usage is None else self.usage.get("prompt_tokens_details")
        return _int(details, "cached_tokens") if isinstance(details, dict) else None

    def itl_samples(self) -> tuple[tuple[float, float], ...]:
        """(gap per token, tokens) for every read after the first that carried content. A content event
        may hold several tokens: each event is weighted by the server's output tokens per event, so
        the weights add up to the tokens that arrived after the first read."""
        times, counts = self.read_times, self.read_events
        if len(times) < 2:
            return ()
        out_tokens = self.output_tokens
        factor = out_tokens / self.events if out_tokens is not None and self.events > 0 else 1.0
        samples = []
        for i in range(1, len(times)):
            tokens = counts[i] * factor
            if tokens > 0:
                samples.append(((times[i] - times[i - 1]) / tokens, tokens))
        return tuple(samples)


def _int(mapping: object, key: str) -> int | None:
    value = mapping.get(key) if isinstance(mapping, dict) else None
    return value if isinstance(value, int) else None


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


async def stream_chat(
    http: aiohttp.ClientSession, url: str, body: bytes, headers: dict[str, str], *, want_text: bool = False
) -> StreamResult:
    """POST one streaming chat completion; never raises for HTTP, connection or stream errors."""
    result = StreamResult(status=None, error=None, sent_at=time.monotonic())
    pieces: list[str] = []
    try:
        async with http.post(url, data=body, headers=headers) as resp:
            result.status = resp.status
            if resp.status != 200:
                result.detail = (await resp.text())[:500]
                result.error = classify(resp.status, result.detail)
                return result
            buf = b""
            read_times, read_events = result.read_times, result.read_events
            async for data in resp.content.iter_any():
                now = time.monotonic()
                lines = (buf + data).split(b"\n") if buf else data.split(b"\n")
                buf = lines.pop()
                n = 0
                for line in lines:
                    if not line or line == b"\r" or line[:1] == b":":
                        continue
                    if line[:5] != _DATA:
                        if not line.startswith((b"event:", b"id:", b"retry:")):
                            result.malformed += 1
                        continue
                    payload = line[5:].strip()
                    if payload[:1] != b"{":
                        if payload != b"[DONE]":
                            result.malformed += 1
                        continue
                    if _content_nonempty(payload):
                        n += 1
                        if want_text:
                            pieces.append(_delta_text(payload))
                    u = payload.find(_USAGE)
                    if u >= 0 and payload[u + 8 : u + 13] not in _NULLS:
                        try:
                            usage = json.loads(payload).get("usage")
                        except ValueError:
                            result.malformed += 1
                            continue
                        if isinstance(usage, dict):
                            result.usage = usage
                    elif payload.startswith(b'{"error"'):
                        result.error = "stream_error"
                        result.detail = payload[:500].decode(errors="replace")
                if n:
                    read_times.append(now)
                    read_events.append(n)
                    result.events += n
            if buf.strip():
                result.malformed += 1
    except TimeoutError:
        result.error = "timeout"
    except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
        result.error = "connection"
        result.detail = type(exc).__name__
    finally:
        result.ended_at = time.monotonic()
    if result.read_times:
        result.first_at, result.last_at = result.read_times[0], result.read_times[-1]
    result.text = "".join(pieces)
    return result


def _delta_text(payload: bytes) -> str:
    try:
        choices = json.loads(payload).get("choices") or [{}]
        return str((choices[0].get("delta") or {}).get("content") or "")
    except (ValueError, AttributeError, IndexError):
        return ""

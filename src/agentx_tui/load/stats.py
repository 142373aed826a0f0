"""Client-side figures from request records: windowed rates and percentiles, run-wide percentiles.

Memory is bounded whatever the run length: latencies go into log-bucketed histograms (2% wide
buckets, so a percentile is within about 1% of the exact one), windows are a ring of one-second slots.
A request's output tokens are spread over the seconds it was decoding and its prompt tokens are
counted when its first token arrived, so rates do not jump when long requests finish.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentx_tui.telemetry.snapshot import ClientFigures, ClientTotals, Percentiles

_GROWTH = math.log(1.02)
_FLOOR = 1e-7


class LogHistogram:
    """Weighted samples of positive values in buckets of constant relative width."""

    __slots__ = ("buckets", "total")

    def __init__(self) -> None:
        self.buckets: dict[int, float] = {}
        self.total = 0.0

    def add(self, value: float, weight: float = 1.0) -> None:
        index = int(math.log(max(value, _FLOOR) / _FLOOR) / _GROWTH)
        self.buckets[index] = self.buckets.get(index, 0.0) + weight
        self.total += weight

    def merge(self, other: LogHistogram) -> None:
        for index, weight in other.buckets.items():
            self.buckets[index] = self.buckets.get(index, 0.0) + weight
        self.total += other.total

    def quantile(self, q: float) -> float | None:
        if self.total <= 0:
            return None
        target = q * self.total
        running = 0.0
        for index in sorted(self.buckets):
            running += self.buckets[index]
            if running >= target:
                return _FLOOR * math.exp((index + 0.5) * _GROWTH)
        return _FLOOR * math.exp((max(self.buckets) + 0.5) * _GROWTH)

    def percentiles(self) -> Percentiles:
        return Percentiles(p50=self.quantile(0.5), p90=self.quantile(0.9), p99=self.quantile(0.99))


@dataclass
class _Slot:
    prompt: int = 0
    cached: int = 0
    prompt_with_cached: int = 0  # prompt tokens of requests that reported cached tokens
    output: float = 0.0
    requests: int = 0
    ttft: LogHistogram = field(default_factory=LogHistogram)
    itl: LogHistogram = field(default_factory=LogHistogram)
    decode: LogHistogram = field(default_factory=LogHistogram)


@dataclass(frozen=True, slots=True)
class Completed:
    """The figures of one finished request that the statistics need."""

    sent_at: float
    first_token_at: float | None
    last_token_at: float | None
    ended_at: float
    prompt_tokens: int
    cached_tokens: int | None
    output_tokens: int
    ceiling_tokens: int
    ttft_s: float | None
    decode_tokens_per_s: float | None
    itl: tuple[tuple[float, float], ...]  # (inter-token latency, tokens it stands for)


class ClientStats:
    def __init__(self, window_s: float, started_at: float) -> None:
        self.window_s = window_s
        self._slots: dict[int, _Slot] = {}
        self._window_start = started_at
        self.run_ttft = LogHistogram()
        self.run_itl = LogHistogram()
        self.run_decode = LogHistogram()
        self.requests_completed = 0
        self.requests_failed = 0
        self.prompt_tokens = 0
        self.cached_tokens = 0
        self.output_tokens = 0
        self.ceiling_tokens = 0
        self.cached_reported = False
        self.sessions_completed = 0
        self.sessions_ended_by_context = 0
        self.errors: dict[str, int] = {}

    def _slot(self, t: float) -> _Slot:
        key = int(t)
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = _Slot()
            horizon = key - int(self.window_s) - 2
            for old in [k for k in self._slots if k < horizon]:
                del self._slots[old]
        return slot

    def error(self, kind: str, *, final: bool) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1
        if final:
            self.requests_failed += 1

    def add(self, done: Completed) -> None:
        self.requests_completed += 1
        self.prompt_tokens += done.prompt_tokens
        self.output_tokens += done.output_tokens
        self.ceiling_tokens += done.ceiling_tokens
        first = done.first_token_at if done.first_token_at is not None else done.ended_at
        slot = self._slot(first)
        slot.prompt += done.prompt_tokens
        if done.cached_tokens is not None:
            self.cached_reported = True
            self.cached_tokens += done.cached_tokens
            slot.cached += done.cached_tokens
            slot.prompt_with_cached += done.prompt_tokens
        end_slot = self._slot(done.ended_at)
        end_slot.requests += 1
        self._spread_output(first, done.last_token_at or done.ended_at, done.output_tokens)
        if done.ttft_s is not None:
            self.run_ttft.add(done.ttft_s)
            end_slot.ttft.add(done.ttft_s)
        if done.decode_tokens_per_s is not None:
            self.run_decode.add(done.decode_tokens_per_s)
            end_slot.decode.add(done.decode_tokens_per_s)
        if done.itl:
            # Bucketed once into a per-request histogram, then merged: one log per token, not two.
            itl = LogHistogram()
            for gap, weight in done.itl:
                itl.add(gap, weight)
            self.run_itl.merge(itl)
            end_slot.itl.merge(itl)

    def _spread_output(self, start: float, end: float, tokens: int) -> None:
        if tokens <= 0:
            return
        if end - start < 1.0 or int(start) == int(end):
            self._slot(end).output += tokens
            return
        span = end - start
        t = start
        while t < end:
            nxt = min(math.floor(t) + 1.0, end)
            self._slot(t).output += tokens * (nxt - t) / span
            t = nxt

    def reset_window(self, now: float) -> None:
        self._slots.clear()
        self._window_start = now

    def _window(self, now: float) -> Iterable[_Slot]:
        lo = now - self.window_s
        return [s for k, s in self._slots.items() if k + 1 > lo and k <= now]

    def figures(self, now: float) -> ClientFigures:
        slots = list(self._window(now))
        span = min(self.window_s, now - self._window_start)
        merged = _Slot()
        for s in slots:
            merged.prompt += s.prompt
            merged.cached += s.cached
            merged.prompt_with_cached += s.prompt_with_cached
            merged.output += s.output
            merged.requests += s.requests
            merged.ttft.merge(s.ttft)
            merged.itl.merge(s.itl)
            merged.decode.merge(s.decode)

        def rate(value: float) -> float | None:
            return value / span if span > 0 else None

        cached_rate = rate(merged.cached) if self.cached_reported else None
        return ClientFigures(
            output_tokens_per_s=rate(merged.output),
            prompt_tokens_per_s=rate(merged.prompt),
            cached_prompt_tokens_per_s=cached_rate,
            total_tokens_per_s=rate(merged.prompt + merged.output),
            requests_per_s=rate(merged.requests),
            prefix_hit_rate=(merged.cached / merged.prompt_with_cached)
            if merged.prompt_with_cached
            else None,
            prefix_hit_rate_ceiling=(self.ceiling_tokens / self.prompt_tokens)
            if self.prompt_tokens
            else None,
            per_user_output_tokens_per_s_p50=merged.decode.quantile(0.5),
            ttft=merged.ttft.percentiles(),
            itl=merged.itl.percentiles(),
            run_ttft=self.run_ttft.percentiles(),
            run_itl=self.run_itl.percentiles(),
            run_per_user_output_tokens_per_s_p50=self.run_decode.quantile(0.5),
            totals=self.totals(),
        )

    def totals(self) -> ClientTotals:
        return ClientTotals(
            requests_completed=self.requests_completed,
            requests_failed=self.requests_failed,
            prompt_tokens=self.prompt_tokens,
            cached_prompt_tokens=self.cached_tokens,
            output_tokens=self.output_tokens,
            sessions_completed=self.sessions_completed,
            sessions_ended_by_context=self.sessions_ended_by_context,
            ceiling_cacheable_tokens=self.ceiling_tokens,
            cached_tokens_reported=self.cached_reported,
            errors_by_kind=dict(self.errors),
        )

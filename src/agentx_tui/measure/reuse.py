"""Where each prompt's tokens came from, as the client can tell (docs/metrics.md §4, "Where the prefix
went"): the split of one request's prompt, and what a set of requests adds up to (`ReuseTally`).

A request's prompt splits into
- **reused** tokens: its block-aligned prefix that an earlier call of the run had already sent. This is
  the ceiling's own count (`Completed.ceiling_tokens`): one rule, one copy of the prefixes sent;
- of those, **hit** tokens: the server's `cached_tokens` for the request, capped at the reused count,
  and **evicted** tokens: reused − hit, sent before and no longer cached;
- **cold** tokens: prompt − reused, which no earlier call sent, so no cache could have served them.

With it, the session's **idle time** before the call (`Completed.idle_s`: the call's start − the end of
its agent's previous call). The **retention curve** is Σ hit ÷ Σ reused of the calls in each idle-time
bucket (0–1, 1–2, 2–5, 5–10, 10–30, 30–60, 60–120, > 120 s): where a cache stops holding an idle
agent's context. A call without an idle time (a session's first, a trace's request) counts in the
evicted share and in no bucket.

Memory is fixed whatever the run's length: a few sums per bucket and one log histogram of the idle
times (its percentiles within 1% of the exact ones: histogram.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentx_tui.measure.histogram import LogHistogram
from agentx_tui.measure.record import Completed
from agentx_tui.snapshot import IDLE_BUCKETS_S, RetentionRow, idle_bucket
from agentx_tui.snapshot.stat import ratio

# The retention curve's bucket count (their edges: snapshot's IDLE_BUCKETS_S).
_BUCKETS = len(IDLE_BUCKETS_S)


def hit_tokens(reused: int, cached: int) -> int:
    """The reused tokens the server served from its cache: its `cached_tokens`, at most the reused count.

    A server can count more than the client saw sent before: text that matches an earlier prompt by
    chance where a block ends, or a block of the prompt itself computed by a failed attempt. Those are
    hits the client cannot attribute to a reuse; capped, the split always adds up to the prompt."""
    return max(0, min(cached, reused))


@dataclass(frozen=True, slots=True)
class PromptSplit:
    """One request's prompt by where its tokens came from: cold + hit + evicted = prompt."""

    cold: int
    reused: int
    hit: int | None  # None: the server reported no cached_tokens, so hit and evicted are unknown

    @property
    def evicted(self) -> int | None:
        return None if self.hit is None else self.reused - self.hit


def split_prompt(prompt: int, reused: int | None, cached: int | None) -> PromptSplit | None:
    """The split of a prompt of `prompt` tokens; None when the client does not know what was reused (a
    proxied call whose prompt could not be tokenized)."""
    if reused is None:
        return None
    reused = max(0, min(reused, prompt))
    return PromptSplit(cold=prompt - reused, reused=reused, hit=None if cached is None else hit_tokens(reused, cached))


def _zeros() -> list[int]:
    return [0] * _BUCKETS


@dataclass(slots=True)
class ReuseTally:
    """The split's sums over a set of requests (a one-second slot, a window, the run), mergeable."""

    reused_reported: int = 0  # Σ reused of the requests whose server reported cached_tokens
    hit: int = 0  # Σ hit of the same requests
    # Per idle-time bucket: calls, their reused tokens, and the reused and hit tokens of those that
    # reported cached_tokens.
    bucket_requests: list[int] = field(default_factory=_zeros)
    bucket_reused: list[int] = field(default_factory=_zeros)
    bucket_reused_reported: list[int] = field(default_factory=_zeros)
    bucket_hit: list[int] = field(default_factory=_zeros)
    idle: LogHistogram = field(default_factory=LogHistogram)  # the idle times, for think_s_p50/p90

    def count(self, done: Completed) -> None:
        """One request's split (`split_prompt`'s rule, in plain integers: this runs for every request)."""
        reused, cached = done.ceiling_tokens, done.cached_tokens
        if reused is not None:
            reused = max(0, min(reused, done.prompt_tokens))
        hit = hit_tokens(reused, cached) if reused is not None and cached is not None else None
        if reused is not None and hit is not None:
            self.reused_reported += reused
            self.hit += hit
        if done.idle_s is None:
            return
        self.idle.add(done.idle_s)
        b = idle_bucket(done.idle_s)
        self.bucket_requests[b] += 1
        if reused is not None:
            self.bucket_reused[b] += reused
            if hit is not None:
                self.bucket_reused_reported[b] += reused
                self.bucket_hit[b] += hit

    def merge(self, other: ReuseTally) -> None:
        self.reused_reported += other.reused_reported
        self.hit += other.hit
        for mine, theirs in (
            (self.bucket_requests, other.bucket_requests),
            (self.bucket_reused, other.bucket_reused),
            (self.bucket_reused_reported, other.bucket_reused_reported),
            (self.bucket_hit, other.bucket_hit),
        ):
            for b in range(_BUCKETS):
                mine[b] += theirs[b]
        self.idle.merge(other.idle)

    def curve(self) -> list[RetentionRow] | None:
        """The retention curve: one row per bucket with calls in it; None when no call had an idle time."""
        rows = [
            RetentionRow(
                idle_s_low=low,
                idle_s_high=IDLE_BUCKETS_S[b + 1] if b + 1 < _BUCKETS else None,
                requests=self.bucket_requests[b],
                reused_tokens=self.bucket_reused[b],
                hit_share=ratio(self.bucket_hit[b], self.bucket_reused_reported[b]),
            )
            for b, low in enumerate(IDLE_BUCKETS_S)
            if self.bucket_requests[b]
        ]
        return rows or None

    def figures(self) -> dict[str, Any]:
        """The split's figures as `Figures` names them (None where unknown: module docstring)."""
        return {
            "prefix_evicted_share": ratio(self.reused_reported - self.hit, self.reused_reported),
            "retention_curve": self.curve(),
            "think_s_p50": self.idle.quantile(0.5),
            "think_s_p90": self.idle.quantile(0.9),
        }

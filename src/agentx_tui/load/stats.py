"""Client-side figures from completed requests: windowed rates and percentiles, run-wide percentiles,
and the measured windows of a sweep's points (docs/metrics.md).

Every load process hands its completed requests to one `ClientStats` as `Completed` summaries (local
ones directly, worker processes through their pipe), so one and many workers share one accounting.
Per-token work happens where the stream is read: a request's token gaps arrive already bucketed.

Memory is bounded whatever the run length: latencies go into log-bucketed histograms (2% wide buckets,
so a percentile is within about 1% of the exact one), windows are a ring of one-second slots. A
request's output tokens are spread over the seconds it was decoding and its prompt tokens are counted
when its first token arrived, so rates do not jump when long requests finish.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from agentx_tui.snapshot import ClientFigures, ClientTotals, Percentiles
from agentx_tui.snapshot.stat import ratio

_GROWTH = math.log(1.02)
_FLOOR = 1e-7


def bucket_of(value: float) -> int:
    return int(math.log(max(value, _FLOOR) / _FLOOR) / _GROWTH)


class LogHistogram:
    """Weighted samples of positive values in buckets of constant relative width: mergeable exactly."""

    __slots__ = ("buckets", "total")

    def __init__(self, buckets: Mapping[int, float] | None = None) -> None:
        self.buckets: dict[int, float] = dict(buckets) if buckets else {}
        self.total = sum(self.buckets.values())

    def add(self, value: float, weight: float = 1.0) -> None:
        index = bucket_of(value)
        self.buckets[index] = self.buckets.get(index, 0.0) + weight
        self.total += weight

    def merge(self, other: LogHistogram | Mapping[int, float]) -> None:
        buckets = other.buckets if isinstance(other, LogHistogram) else other
        for index, weight in buckets.items():
            self.buckets[index] = self.buckets.get(index, 0.0) + weight
            self.total += weight

    def quantile(self, q: float) -> float | None:
        if self.total <= 0:
            return None
        target = q * self.total
        running = 0.0
        for index in sorted(self.buckets):
            running += self.buckets[index]
            if running >= target:
                return self.value_of(index)
        return self.value_of(max(self.buckets))

    def percentiles(self) -> Percentiles:
        return Percentiles(p50=self.quantile(0.5), p90=self.quantile(0.9), p99=self.quantile(0.99))

    @staticmethod
    def value_of(index: int) -> float:
        """The value a bucket stands for (its geometric middle): what `quantile` returns for it."""
        return _FLOOR * math.exp((index + 0.5) * _GROWTH)

    def inverse_quantile(self, q: float) -> float | None:
        """1 / quantile: AgentX interactivity from per-request ITL (docs/metrics.md)."""
        value = self.quantile(q)
        return 1.0 / value if value else None


def bucketed(samples: Iterable[tuple[float, float]]) -> dict[int, float]:
    """(value, weight) samples as histogram buckets: what a load process ships per request."""
    out: dict[int, float] = {}
    for value, weight in samples:
        index = bucket_of(value)
        out[index] = out.get(index, 0.0) + weight
    return out


@dataclass(frozen=True, slots=True)
class Completed:
    """The figures of one finished request that the statistics need (times: `time.monotonic()`)."""

    sent_at: float
    first_token_at: float | None
    last_token_at: float | None
    ended_at: float
    prompt_tokens: int
    cached_tokens: int | None
    output_tokens: int
    ceiling_tokens: int | None  # None when not known (a proxied call's blocks are read only later)
    ttft_s: float | None
    decode_tokens_per_s: float | None
    request_itl_s: float | None = None  # (last − first token) / (output tokens − 1): AgentX's per-request ITL
    itl: Mapping[int, float] = field(default_factory=dict)  # token gaps, bucketed (see `bucketed`)
    # The global id of the session (tree) the request belongs to: requests of one tree are not
    # independent, which a confidence interval must respect. -1 when unknown.
    tree: int = -1
    # The user slot (`-u`) whose session tree it is (a sub-agent's: its parent's): one slot runs one tree
    # after another, so its tokens over a window are the cluster a throughput interval needs. -1: unknown.
    user: int = -1


@dataclass(frozen=True, slots=True)
class Failed:
    """A request that failed (`final`) or will be retried; `at` is when it ended."""

    kind: str
    final: bool
    sent_at: float
    at: float


@dataclass
class _Tally:
    """Counts and histograms of a set of requests (a one-second slot, or a sweep point's window)."""

    prompt: int = 0
    cached: int = 0
    prompt_with_cached: int = 0  # prompt tokens of requests that reported cached tokens
    ceiling: int = 0
    prompt_with_ceiling: int = 0  # prompt tokens of requests whose ceiling is known
    output: float = 0.0
    requests: int = 0
    ttft: LogHistogram = field(default_factory=LogHistogram)
    itl: LogHistogram = field(default_factory=LogHistogram)
    request_itl: LogHistogram = field(default_factory=LogHistogram)
    decode: LogHistogram = field(default_factory=LogHistogram)
    e2e: LogHistogram = field(default_factory=LogHistogram)

    def count(self, done: Completed) -> None:
        """Latencies and the hit-rate tokens of `done` (token *rates* are spread separately)."""
        self.requests += 1
        self.count_ceiling(done)
        if done.cached_tokens is not None:
            self.cached += done.cached_tokens
            self.prompt_with_cached += done.prompt_tokens
        if done.ttft_s is not None:
            self.ttft.add(done.ttft_s)
        if done.decode_tokens_per_s is not None:
            self.decode.add(done.decode_tokens_per_s)
        if done.request_itl_s is not None:
            self.request_itl.add(done.request_itl_s)
        self.e2e.add(done.ended_at - done.sent_at)
        if done.itl:
            self.itl.merge(done.itl)

    def count_ceiling(self, done: Completed) -> None:
        if done.ceiling_tokens is not None:
            self.ceiling += done.ceiling_tokens
            self.prompt_with_ceiling += done.prompt_tokens

    def merge(self, other: _Tally) -> None:
        self.prompt += other.prompt
        self.cached += other.cached
        self.prompt_with_cached += other.prompt_with_cached
        self.ceiling += other.ceiling
        self.prompt_with_ceiling += other.prompt_with_ceiling
        self.output += other.output
        self.requests += other.requests
        for name in ("ttft", "itl", "request_itl", "decode", "e2e"):
            getattr(self, name).merge(getattr(other, name))


SLOT_S = 1.0  # the sample's time slots: batch means group whole slots into sub-windows


@dataclass(slots=True)
class TreeSample:
    """One session tree's part of a sweep point's window (its sub-agents' requests included)."""

    tokens: float = 0.0  # prompt tokens whose first token came inside, output tokens decoded inside
    requests: int = 0  # requests counted for the window's latencies
    itl: dict[int, float] = field(default_factory=dict)  # their per-request ITL, bucketed as `LogHistogram`


@dataclass(slots=True)
class SlotSample:
    """One `SLOT_S` slot of a sweep point's window: its tokens, and the counted requests that ended in it."""

    tokens: float = 0.0
    requests: int = 0
    itl: dict[int, float] = field(default_factory=dict)


class PointSample:
    """The raw sample a sweep point's confidence intervals are computed from (sweep/intervals.py): per
    session tree and per time slot, the window's tokens and its counted requests' per-request ITL.

    O(1) work per request (plus one step per second a request decodes across) and bounded memory:
    one small record per tree and per slot, ITLs in the 2% buckets of `LogHistogram`, never a list
    of requests. A request with no known tree (-1) counts as a tree of its own."""

    __slots__ = ("_untreed", "slot_s", "slots", "start", "trees", "users")

    def __init__(self, start: float) -> None:
        self.start = start
        self.slot_s = SLOT_S
        self.trees: dict[int, TreeSample] = {}
        self.users: dict[int | tuple[str, int], float] = {}  # tokens inside the window per user slot
        self.slots: dict[int, SlotSample] = {}
        self._untreed = 0

    def tree_of(self, tree: int) -> TreeSample:
        if tree < 0:  # unknown: a tree of its own, with an id no real tree has
            self._untreed += 1
            tree = -self._untreed
        found = self.trees.get(tree)
        if found is None:
            found = self.trees[tree] = TreeSample()
        return found

    def user_tokens(self, user: int, tree: int, tokens: float) -> None:
        """`tokens` of the window to the request's user slot. A request of no known slot counts apart
        from every real slot: with its tree, or (no tree either) as the tree `tree_of` just made it."""
        key: int | tuple[str, int] = user if user >= 0 else ("tree", tree if tree >= 0 else -self._untreed)
        self.users[key] = self.users.get(key, 0.0) + tokens

    def _slot(self, t: float) -> SlotSample:
        key = max(0, int((t - self.start) / self.slot_s))
        found = self.slots.get(key)
        if found is None:
            found = self.slots[key] = SlotSample()
        return found

    def tokens_at(self, t: float, tokens: float) -> None:
        self._slot(t).tokens += tokens

    def tokens_over(self, lo: float, hi: float, tokens: float) -> None:
        """`tokens` spread evenly over [lo, hi] (inside the window), slot by slot."""
        span = hi - lo
        first = max(0, int((lo - self.start) / self.slot_s))
        last = max(first, int((hi - self.start) / self.slot_s))
        for key in range(first, last + 1):  # whole slot indices: no float step can stall the walk
            edge_lo = max(lo, self.start + key * self.slot_s)
            edge_hi = min(hi, self.start + (key + 1) * self.slot_s)
            if edge_hi > edge_lo:
                slot = self.slots.get(key)
                if slot is None:
                    slot = self.slots[key] = SlotSample()
                slot.tokens += tokens * (edge_hi - edge_lo) / span

    def counted(self, tree: TreeSample, ended_at: float, request_itl_s: float | None) -> None:
        """A request counted for the window's latencies (started after the warm-up, ended inside)."""
        slot = self._slot(ended_at)
        tree.requests += 1
        slot.requests += 1
        if request_itl_s is not None:
            index = bucket_of(request_itl_s)
            tree.itl[index] = tree.itl.get(index, 0.0) + 1.0
            slot.itl[index] = slot.itl.get(index, 0.0) + 1.0


@dataclass
class WindowFigures:
    """A sweep point's client figures (docs/sweeps.md): latencies of the requests that started after the
    warm-up and ended inside the window; token rates from token times inside the window."""

    start: float
    end: float | None = None
    latency: _Tally = field(default_factory=_Tally)  # requests started and ended inside
    prompt_in_window: int = 0  # prompt tokens whose first token came inside (rates)
    output_in_window: float = 0.0  # output tokens decoded inside (rates)
    failed: int = 0
    prompt_tokens_sum: int = 0  # of the requests counted, for the mean prompt length
    cached_reported: bool = False
    sample: PointSample = field(init=False)  # per tree and per slot, for the intervals
    user_since: Mapping[int, float] = field(default_factory=dict)  # ClientStats.user_since

    def __post_init__(self) -> None:
        self.sample = PointSample(self.start)

    @property
    def duration_s(self) -> float | None:
        return None if self.end is None else self.end - self.start

    def rate(self, tokens: float) -> float | None:
        span = self.duration_s
        return tokens / span if span else None

    def inside(self, sent_at: float, ended_at: float) -> bool:
        return sent_at >= self.start and (self.end is None or ended_at <= self.end)

    def spread(
        self, first: float, last: float, prompt: int, output: int, tree: int = -1, user: int = -1
    ) -> TreeSample | None:
        """Count the tokens of a finished request that fell inside the window; the tree's sample, or
        None when none did."""
        end = math.inf if self.end is None else self.end
        inside = 0.0
        if self.start <= first <= end and prompt:
            inside += prompt
            self.prompt_in_window += prompt
            self.sample.tokens_at(first, prompt)
        if output > 0 and last <= first:
            if self.start <= last <= end:
                inside += output
                self.output_in_window += output
                self.sample.tokens_at(last, output)
        elif output > 0:
            lo, hi = max(first, self.start), min(last, end)
            if hi > lo:
                share = output * (hi - lo) / (last - first)
                inside += share
                self.output_in_window += share
                self.sample.tokens_over(lo, hi, share)
        if not inside:
            return None
        found = self.sample.tree_of(tree)
        found.tokens += inside
        self.sample.user_tokens(user, tree, inside)
        return found


class StatsSink(Protocol):
    """Where a load loop hands what happened: `ClientStats` in this process, a worker's outbox in another."""

    def add(self, done: Completed) -> None: ...

    def error(self, failed: Failed) -> None: ...

    def session_ended(self, how: str) -> None: ...


class ClientStats:
    def __init__(self, window_s: float, started_at: float) -> None:
        self.window_s = window_s
        self._slots: dict[int, _Tally] = {}
        self._window_start = started_at
        self.run = _Tally()
        self.requests_failed = 0
        self.output_tokens = 0
        self.sessions_completed = 0
        self.sessions_ended_by_context = 0
        self.cached_reported = False
        self.errors: dict[str, int] = {}
        self.in_flight = 0  # set by the load generator each tick
        self._windows: list[WindowFigures] = []  # sweep points still taking requests
        # When each user slot sent its first request: a sweep point's slots added before its warm-up
        # are a cohort apart from those it added (sweep/intervals.py stratifies by it). O(users).
        self.user_since: dict[int, float] = {}

    # -- input ---------------------------------------------------------------------------------
    def _slot(self, t: float) -> _Tally:
        key = int(t)
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = _Tally()
            horizon = key - int(self.window_s) - 2
            for old in [k for k in self._slots if k < horizon]:
                del self._slots[old]
        return slot

    def session_ended(self, how: str) -> None:
        if how == "context":
            self.sessions_ended_by_context += 1
        elif how == "done":
            self.sessions_completed += 1

    def error(self, failed: Failed) -> None:
        self.errors[failed.kind] = self.errors.get(failed.kind, 0) + 1
        if failed.final:
            self.requests_failed += 1
            for window in self._windows:
                if window.inside(failed.sent_at, failed.at):
                    window.failed += 1

    def add(self, done: Completed) -> None:
        first = done.first_token_at if done.first_token_at is not None else done.ended_at
        last = done.last_token_at or done.ended_at
        if done.user >= 0 and done.sent_at < self.user_since.get(done.user, math.inf):
            self.user_since[done.user] = done.sent_at
        self.run.count(done)
        self.run.prompt += done.prompt_tokens
        self.run.output += done.output_tokens
        self.output_tokens += done.output_tokens
        if done.cached_tokens is not None:
            self.cached_reported = True
        start_slot = self._slot(first)
        start_slot.prompt += done.prompt_tokens
        start_slot.count_ceiling(done)
        if done.cached_tokens is not None:
            start_slot.cached += done.cached_tokens
            start_slot.prompt_with_cached += done.prompt_tokens
        end_slot = self._slot(done.ended_at)
        end_slot.requests += 1
        for name, value in (
            ("ttft", done.ttft_s),
            ("decode", done.decode_tokens_per_s),
            ("request_itl", done.request_itl_s),
            ("e2e", done.ended_at - done.sent_at),
        ):
            if value is not None:
                getattr(end_slot, name).add(value)
        if done.itl:
            end_slot.itl.merge(done.itl)
        self._spread_output(first, last, done.output_tokens)
        for window in self._windows:
            tree = window.spread(first, last, done.prompt_tokens, done.output_tokens, done.tree, done.user)
            if window.inside(done.sent_at, done.ended_at):
                sample = window.sample
                sample.counted(tree or sample.tree_of(done.tree), done.ended_at, done.request_itl_s)
                window.latency.count(done)
                window.latency.prompt += done.prompt_tokens
                window.latency.output += done.output_tokens
                window.prompt_tokens_sum += done.prompt_tokens
                window.cached_reported |= done.cached_tokens is not None

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

    # -- sweep windows ---------------------------------------------------------------------------
    def open_window(self, now: float) -> WindowFigures:
        window = WindowFigures(start=now)
        window.user_since = self.user_since  # the run's, read when the window's intervals are computed
        self._windows.append(window)
        return window

    def end_window(self, window: WindowFigures, now: float) -> None:
        """The window's end: later requests no longer count for its latencies; tokens decoded inside
        it still count for its rates until `close_window` (requests in flight at its end)."""
        window.end = now

    def close_window(self, window: WindowFigures) -> None:
        if window in self._windows:
            self._windows.remove(window)

    # -- output ------------------------------------------------------------------------------------
    def reset_window(self, now: float) -> None:
        self._slots.clear()
        self._window_start = now

    def figures(self, now: float) -> ClientFigures:
        lo = now - self.window_s
        merged = _Tally()
        for key, slot in self._slots.items():
            if key + 1 > lo and key <= now:
                merged.merge(slot)
        span = min(self.window_s, now - self._window_start)

        def rate(value: float) -> float | None:
            return value / span if span > 0 else None

        run = self.run
        return ClientFigures(
            output_tokens_per_s=rate(merged.output),
            prompt_tokens_per_s=rate(merged.prompt),
            cached_prompt_tokens_per_s=rate(merged.cached) if self.cached_reported else None,
            total_tokens_per_s=rate(merged.prompt + merged.output),
            requests_per_s=rate(merged.requests),
            prefix_hit_rate=ratio(merged.cached, merged.prompt_with_cached),
            prefix_hit_rate_ceiling=ratio(merged.ceiling, merged.prompt_with_ceiling),
            per_user_output_tokens_per_s_p50=merged.decode.quantile(0.5),
            interactivity_p50_tokens_per_s=merged.request_itl.inverse_quantile(0.5),
            interactivity_p90_tokens_per_s=merged.request_itl.inverse_quantile(0.9),
            ttft=merged.ttft.percentiles(),
            itl=merged.itl.percentiles(),
            e2e=merged.e2e.percentiles(),
            run_ttft=run.ttft.percentiles(),
            run_itl=run.itl.percentiles(),
            run_e2e=run.e2e.percentiles(),
            run_per_user_output_tokens_per_s_p50=run.decode.quantile(0.5),
            run_interactivity_p50_tokens_per_s=run.request_itl.inverse_quantile(0.5),
            run_interactivity_p90_tokens_per_s=run.request_itl.inverse_quantile(0.9),
            run_prefix_hit_rate_ceiling=ratio(run.ceiling, run.prompt_with_ceiling),
            in_flight=self.in_flight,
            totals=self.totals(),
        )

    def totals(self) -> ClientTotals:
        run = self.run
        return ClientTotals(
            requests_completed=run.requests,
            requests_failed=self.requests_failed,
            prompt_tokens=run.prompt,
            cached_prompt_tokens=run.cached,
            output_tokens=self.output_tokens,
            sessions_completed=self.sessions_completed,
            sessions_ended_by_context=self.sessions_ended_by_context,
            ceiling_cacheable_tokens=run.ceiling,
            ceiling_prompt_tokens=run.prompt_with_ceiling,
            cached_tokens_reported=self.cached_reported,
            errors_by_kind=dict(self.errors),
        )

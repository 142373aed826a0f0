"""Time cut into slots, and a request's tokens placed in them: one rule for the run's live window
(`ClientStats`: one-second slots of the monotonic clock) and a sweep point's window and sample
(`WindowBook`, `PointSample`: `SLOT_S` slots from the window's start). docs/metrics.md §4.

Slot k holds [origin + k·width, origin + (k+1)·width): a moment on an edge is in the slot that edge
opens.

The rule: tokens count when they happened. A request's prompt tokens count at its first token. Its
output tokens count when they arrived: the load client counts its content events per second of the
clock as they stream (`arrivals_of`), each event holding the server's count of output tokens ÷ the
events (one with vLLM's defaults; several when a server batches tokens into an event, as speculative
decoding does), each second's coming evenly over that second's part of the span from the first
content token to the last. A request with no such counts (a proxied call) has its output tokens come
evenly over the whole span: one inside one slot puts them all there; one across an edge splits them by
time on either side; one that ends exactly on an edge puts nothing in the slot that edge opens (it
decoded nothing there); and one with no decoding time (a single token, or no content times: not
streamed) puts them all at its end, in the slot that holds that moment.

The live window learns of tokens as they stream, not when their request ends: each tick, every
request in flight hands over what it streamed since the last tick (`LiveCount.take` into `Streamed`:
its prompt, at the client's own count, once its first token came; its content events per second, at
the tokens an event has held lately, `TokensPerEvent`), read from the per-read times and counts its SSE
scan keeps anyway, so the streaming path pays nothing per token. When the request completes, the
statistics add the difference between the server's counts and what was counted live (the prompt's at
its first token; `spread_tokens(live_events=…, live_tokens=…)` for the output), so the window's tokens
add up over the run to the server's own counts.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

# (the start of a second of the clock, the content events that arrived in it), in time order.
Arrivals = tuple[tuple[float, int], ...]


def slot_of(t: float, origin: float = 0.0, width: float = 1.0) -> int:
    """The slot that holds the moment `t`."""
    return math.floor((t - origin) / width)


def spread_tokens(
    first: float,
    last: float,
    tokens: float,
    *,
    arrivals: Arrivals = (),
    live_events: int = 0,
    live_tokens: float = 0.0,
    origin: float = 0.0,
    width: float = 1.0,
    lo: float = -math.inf,
    hi: float = math.inf,
) -> list[tuple[int, float]]:
    """`tokens` of output decoded from `first` to `last`, as (slot, tokens) pairs, by the module's rule
    (a slot may come more than once); only the part decoded inside [lo, hi] (a sweep window's bounds:
    what fell outside it is not its). One step per slot the request decoded across, so a request's
    cost does not grow with its tokens.

    Without `arrivals` they came evenly over [first, last]. With them (the request's content events per
    second, `arrivals_of`), each event holds `tokens` ÷ their events, in its second. The first
    `live_events` events are then left out: the live window counted `live_tokens` for them as they
    streamed (`LiveCount`), and the difference between their share and that is spread over [first, last]."""
    if not arrivals:
        return _evenly(first, last, tokens, origin, width, lo, hi)
    per_event = tokens / sum([events for _, events in arrivals])
    shares: list[tuple[int, float]] = []
    skip = live_events
    for start, events in arrivals:
        if skip >= events:
            skip -= events
            continue
        begin = start if start > first else first
        end = start + 1.0 if start + 1.0 < last else last
        shares += _evenly(begin, end if end > begin else begin, (events - skip) * per_event, origin, width, lo, hi)
        skip = 0
    correction = live_events * per_event - live_tokens
    if correction:
        shares += _evenly(first, last, correction, origin, width, lo, hi)
    return shares


def _evenly(
    first: float, last: float, tokens: float, origin: float, width: float, lo: float, hi: float
) -> list[tuple[int, float]]:
    """`tokens` that came evenly from `first` to `last` (all at `last` when it is not after `first`),
    as (slot, tokens) in time order, only the part inside [lo, hi]. A negative count (the server
    counted fewer than streamed) is placed as a positive one would be."""
    # Written for speed, as it runs once per request and window: no max/min builtins, no call per slot.
    if not tokens:
        return []
    if last <= first:  # no decoding time: all at the end
        return [(math.floor((last - origin) / width), tokens)] if lo <= last <= hi else []
    start = first if first >= lo else lo
    end = last if last <= hi else hi
    if end <= start:
        return []
    first_key = math.floor((start - origin) / width)
    last_key = math.floor((end - origin) / width)
    if first_key == last_key:
        # A request wholly inside [lo, hi] adds up to `tokens` exactly, not a rate times its time.
        return [(first_key, tokens if start == first and end == last else tokens * (end - start) / (last - first))]
    per_s = tokens / (last - first)
    shares = []
    t = start
    for key in range(first_key, last_key):  # whole slot indices: no float step can stall the walk
        edge = origin + (key + 1) * width
        if edge > t:
            shares.append((key, per_s * (edge - t)))
            t = edge
    if end > t:
        shares.append((last_key, per_s * (end - t)))  # up to `end` itself: no float rounding lost at the end
    return shares


def arrivals_of(times: Sequence[float], events: Sequence[int], begin: int = 0) -> Arrivals:
    """The content events of reads at `times` (`events` each; times in order), from read `begin` on,
    per second of the clock: one step per second, not per read."""
    found = []
    n = len(times)
    i = begin
    while i < n:
        second = math.floor(times[i])
        j = bisect_left(times, second + 1, i + 1, n)  # the first read of a later second
        found.append((float(second), events[i] if j == i + 1 else sum(events[i:j])))
        i = j
    return tuple(found)


@dataclass(slots=True)
class Streamed:
    """Tokens counted as they streamed since they were last handed over: what a load process hands the
    run's statistics each tick (`ClientStats.count_streamed`), through a worker's report too."""

    prompts: list[tuple[float, int]] = field(default_factory=list)  # (first token's time, prompt tokens)
    output: dict[int, float] = field(default_factory=dict)  # output tokens per second of the clock

    def __bool__(self) -> bool:
        return bool(self.prompts or self.output)


class TokensPerEvent:
    """How many output tokens a content event holds, lately: the server's counts over the events its
    recent answers streamed (one with vLLM's defaults; several when it batches tokens into an event, as
    speculative decoding does or a busy server may). 1 until an answer has said."""

    __slots__ = ("_events", "_tokens")

    KEPT = 1 / 8  # each answer's weight: the ratio follows a server whose batching changes with its load

    def __init__(self) -> None:
        self._tokens = 0.0
        self._events = 0.0

    def observe(self, tokens: int, events: int) -> None:
        """An answer's output tokens (the server's count) and the content events it streamed."""
        if events > 0:
            self._tokens += (tokens - self._tokens) * self.KEPT if self._events else tokens
            self._events += (events - self._events) * self.KEPT if self._events else events

    @property
    def value(self) -> float:
        return self._tokens / self._events if self._events else 1.0


class LiveCount:
    """One request's tokens as the live window counts them while it streams (the module's rule).

    It reads the per-read times and content events the request's SSE scan keeps (`follow`), so the
    streaming path pays nothing for it; `take` hands over what came since it last did, an event at the
    tokens an event holds lately (`TokensPerEvent`). What it handed (`prompt`, `output` for `events`)
    goes into the request's `Completed`, so that its completion adds only the difference."""

    __slots__ = ("estimate", "events", "output", "prompt", "read", "read_events", "read_times")

    def __init__(self, prompt_estimate: int) -> None:
        self.estimate = prompt_estimate  # the client's count of the prompt (the server's comes with `usage`)
        self.read_times: Sequence[float] = ()
        self.read_events: Sequence[int] = ()
        self.read = 0  # the reads handed over so far
        self.prompt = 0  # prompt tokens handed over (the estimate, once the first token came)
        self.events = 0  # content events handed over
        self.output = 0.0  # output tokens handed over for them

    def follow(self, read_times: Sequence[float], read_events: Sequence[int]) -> None:
        """Count the reads of a stream as its scan records them (two lists it appends to together)."""
        self.read_times, self.read_events = read_times, read_events

    def take(self, into: Streamed, per_event: float = 1.0) -> None:
        """Add to `into` what streamed since the last `take`: the prompt once its first token came, the
        content events of the reads since then, per second, at `per_event` tokens each."""
        n = len(self.read_times)
        if self.read >= n:
            return
        if not self.read and self.estimate:
            into.prompts.append((self.read_times[0], self.estimate))
            self.prompt = self.estimate
        output = into.output
        for second, events in arrivals_of(self.read_times, self.read_events, self.read):
            key, tokens = int(second), events * per_event
            output[key] = output.get(key, 0.0) + tokens
            self.events += events
            self.output += tokens
        self.read = n

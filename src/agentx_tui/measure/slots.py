"""Time cut into slots, and a request's output tokens spread over them: one rule for the run's
sliding window (`ClientStats`: one-second slots of the monotonic clock) and a sweep point's window and
sample (`WindowFigures`, `PointSample`: `SLOT_S` slots from the window's start). docs/metrics.md §4.

Slot k holds [origin + k·width, origin + (k+1)·width): a moment on an edge is in the slot that edge
opens. The rule for output tokens: they came evenly from the request's first content token to its
last, so a slot gets the share of them that its part of [first, last] is of the whole. Hence a
request inside one slot puts them all there; one across an edge splits them by time on either side;
one that ends exactly on an edge puts nothing in the slot that edge opens (it decoded nothing there);
and one with no decoding time (a single token, or no content times: not streamed) puts them all at
its end, in the slot that holds that moment.
"""

from __future__ import annotations

import math


def slot_of(t: float, origin: float = 0.0, width: float = 1.0) -> int:
    """The slot that holds the moment `t`."""
    return math.floor((t - origin) / width)


def spread_tokens(
    first: float,
    last: float,
    tokens: float,
    *,
    origin: float = 0.0,
    width: float = 1.0,
    lo: float = -math.inf,
    hi: float = math.inf,
) -> list[tuple[int, float]]:
    """`tokens` decoded from `first` to `last`, as (slot, tokens) in time order, by the module's rule;
    only the part decoded inside [lo, hi] (a sweep window's bounds: what fell outside it is not its).
    One step per slot the request decoded across, so a request's cost does not grow with its tokens."""
    # Written for speed, as it runs once per request and window: no max/min builtins, no call per slot.
    if tokens <= 0:
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

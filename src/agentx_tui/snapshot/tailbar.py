"""Where the North-Star-setting requests' time went, as one bar (docs/metrics.md, "Where the time went").

The bar is the p90 tail's r_i (the requests whose r_i is at or above its p90) cut into shares that add up
to 1, by the client's own clock: its first-token part (`north_star_ttft_share`), its decode stalls
(`north_star_stall_share`) and the rest, decode. Where the servers export their request phases, the
first-token part is divided between the time outside the server (the network, the server's frontend,
the client), the queue and the prefill in the proportions of their means over the same window
(`ttft_outside_server_s_mean`, `server_queue_s_mean`, `server_prefill_s_mean`); a negative outside time
(the server's means over its requests exceed the client's TTFT mean over its own) counts as none.
Otherwise, or when those means are all 0, the first-token part is one segment. The servers' means are
over every request they finished in the window, not the tail's alone: the division says where a first
token's wait goes on that server, not what each tail request waited for.

A pure function of plain figures, so that the dashboard (on every draw) and a report read the same bar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Segment = Literal["outside", "queue", "prefill", "first token", "decode", "stalls"]
# The segments in the bar's order, left to right: what a request meets first comes first.
SEGMENTS: tuple[Segment, ...] = ("outside", "queue", "prefill", "first token", "decode", "stalls")


@dataclass(frozen=True, slots=True)
class TailBar:
    """The tail's r_i in shares: `segments` in `SEGMENTS` order, each (name, share), shares ≥ 0 adding
    up to 1; only those the figures give (no `stalls` where the stall share is unknown, `first token`
    only where the servers' phases do not divide it)."""

    first_token_share: float
    stall_share: float | None
    segments: tuple[tuple[Segment, float], ...]

    @property
    def by_server(self) -> bool:
        """Whether the first-token part is divided by the servers' phases."""
        return any(name in ("queue", "prefill") for name, _ in self.segments)


def tail_bar(
    ttft_share: float | None,
    stall_share: float | None,
    *,
    queue_s: float | None = None,
    prefill_s: float | None = None,
    outside_s: float | None = None,
) -> TailBar | None:
    """The bar of a window's tail from its first-token and stall shares, the first-token part divided by
    the servers' queue and prefill means (`queue_s`, `prefill_s`) and the client's wait outside the
    server (`outside_s`, None where not known); None without a first-token share."""
    if ttft_share is None:
        return None
    first = _fraction(ttft_share)
    stalls = None if stall_share is None else min(_fraction(stall_share), 1.0 - first)
    decode = 1.0 - first - (stalls or 0.0)
    parts: list[tuple[Segment, float]] = [*_first_token(first, queue_s, prefill_s, outside_s), ("decode", decode)]
    if stalls is not None:
        parts.append(("stalls", stalls))
    return TailBar(first_token_share=first, stall_share=stalls, segments=tuple(parts))


def _first_token(
    share: float, queue_s: float | None, prefill_s: float | None, outside_s: float | None
) -> list[tuple[Segment, float]]:
    """The first-token part in the proportions of the servers' means (and the time outside, where known)."""
    if queue_s is None or prefill_s is None:
        return [("first token", share)]
    weights: list[tuple[Segment, float]] = [
        ("outside", max(outside_s, 0.0) if outside_s is not None else 0.0),
        ("queue", max(queue_s, 0.0)),
        ("prefill", max(prefill_s, 0.0)),
    ]
    total = sum(weight for _, weight in weights)
    if total <= 0:
        return [("first token", share)]
    return [(name, share * weight / total) for name, weight in weights if name != "outside" or outside_s is not None]


def _fraction(value: float) -> float:
    return min(max(value, 0.0), 1.0)

"""Where the North Star's time went, over a set of requests (docs/metrics.md, "Where the time went").

Each request's r_i (E2E per output token) is TTFT_i / OSL_i (its first-token part) plus its decode
part; its decode stalls' excess over OSL_i is part of the latter. `TimeSplit` keeps, per 2% bucket of
r_i (histogram.py `bucket_of`, the buckets of the r_i histogram the North Star is read from), the sums
of r_i, of the first-token parts and of the stall parts: mergeable exactly (a one-second slot's, a
window's, the run's, a worker's), bounded by the buckets. The requests with r_i at or above a
percentile of r_i are read as the buckets at or above the bucket holding that percentile, so the
share of the time before the first token among the requests that set the North Star is
Σ first-token parts ÷ Σ r_i over those buckets.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentx_tui.measure.histogram import bucket_of
from agentx_tui.measure.record import Completed


@dataclass(slots=True)
class SplitSums:
    """Sums over some requests, seconds per output token."""

    whole: float = 0.0  # Σ r_i
    first_token: float = 0.0  # Σ TTFT_i / OSL_i
    stall: float = 0.0  # Σ stall excess_i / OSL_i

    def add(self, other: SplitSums) -> None:
        self.whole += other.whole
        self.first_token += other.first_token
        self.stall += other.stall


@dataclass(frozen=True, slots=True)
class TailShares:
    """Of the requests whose r_i is at or above a percentile: the shares of Σ r_i that came before the
    first token and that decode stalls added (None: no such request). The rest of it is decode."""

    first_token: float | None
    stall: float | None


class TimeSplit:
    """r_i's parts summed per bucket of r_i, for the requests whose split is known (a first token time:
    a streamed answer with an output token)."""

    __slots__ = ("buckets",)

    def __init__(self) -> None:
        self.buckets: dict[int, SplitSums] = {}

    def count(self, done: Completed) -> None:
        r, first = done.e2e_per_token_s, done.ttft_per_token_s
        if r is None or first is None:
            return
        index = bucket_of(r)
        sums = self.buckets.get(index)
        if sums is None:
            sums = self.buckets[index] = SplitSums()
        sums.whole += r
        sums.first_token += first
        sums.stall += done.stall_excess_s / done.output_tokens  # an output token: r_i is known

    def merge(self, other: TimeSplit) -> None:
        buckets = self.buckets
        for index, sums in other.buckets.items():
            mine = buckets.get(index)
            if mine is None:
                buckets[index] = SplitSums(sums.whole, sums.first_token, sums.stall)
            else:
                mine.add(sums)

    def tail(self, r_percentile: float | None) -> TailShares:
        """The shares over the buckets at or above the one holding `r_percentile` (a percentile of the
        same requests' r_i); None where it is None or no split request is there."""
        if r_percentile is None:
            return TailShares(None, None)
        edge = bucket_of(r_percentile)
        total = SplitSums()
        for index, sums in self.buckets.items():
            if index >= edge:
                total.add(sums)
        if not total.whole > 0:
            return TailShares(None, None)
        return TailShares(total.first_token / total.whole, total.stall / total.whole)

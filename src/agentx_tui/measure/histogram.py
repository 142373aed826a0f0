"""Log-bucketed histograms: values in buckets 2% wide, so memory is bounded whatever the run length
and two histograms merge exactly; a percentile is within 1% of the exact one (docs/metrics.md,
"Percentiles"). `Samples`: a figure's values exact while they are few, the histogram beyond."""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right, insort
from collections.abc import Iterable, Mapping
from itertools import accumulate

from agentx_tui.measure.percentile import interpolated, linear_quantile
from agentx_tui.snapshot import Percentiles

_GROWTH = math.log(1.02)
_FLOOR = 1e-7
# Exact values kept per figure before `Samples` falls back to its histogram: 32 KiB of doubles. By
# then the sample's own spread is wider than the histogram's error: a p90's relative standard error is
# about 1.3 / √n for exponential times (2% at n = 4096), against the histogram's 1% at most.
EXACT_LIMIT = 4096


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
        """The q-quantile by the exact samples' rule (percentile.py, `interpolated`), each value read as
        its bucket's middle (`value_of`): with N the total weight and h = q × (N − 1), the middles of
        the buckets holding ranks ⌊h⌋ and ⌊h⌋ + 1 (0-based, a weight of w counting as w values; rank k
        is in the first bucket whose cumulative weight exceeds k), interpolated linearly by h − ⌊h⌋.
        Every middle is within half a bucket of its values (√1.02 − 1, under 1%), so the result is
        within 1% of the exact samples' linear percentile. None when empty."""
        if self.total <= 0:
            return None
        order = sorted(self.buckets)
        cumulative = list(accumulate(map(self.buckets.__getitem__, order)))

        def value_at(rank: int) -> float:
            # min(): a total's rounding may leave the last rank a hair past the last cumulative sum.
            return self.value_of(order[min(bisect_right(cumulative, rank), len(order) - 1)])

        return interpolated(q, self.total, value_at)

    def percentiles(self) -> Percentiles:
        return Percentiles(p50=self.quantile(0.5), p90=self.quantile(0.9), p99=self.quantile(0.99))

    @staticmethod
    def value_of(index: int) -> float:
        """The value a bucket stands for (its geometric middle): what `quantile` reads for its ranks."""
        return _FLOOR * math.exp((index + 0.5) * _GROWTH)

    def inverse_quantile(self, q: float) -> float | None:
        """1 / quantile: AgentX interactivity from per-request ITL (docs/metrics.md)."""
        value = self.quantile(q)
        return 1.0 / value if value else None


def bucketed(samples: Iterable[tuple[float, float]]) -> dict[int, float]:
    """(value, weight) samples as histogram buckets: what a load process ships per request."""
    out: dict[int, float] = {}
    log, floor, growth = math.log, _FLOOR, _GROWTH
    for value, weight in samples:
        index = int(
            log((value if value > floor else floor) / floor) / growth
        )  # `bucket_of`, inline: a call a token gap
        out[index] = out.get(index, 0.0) + weight
    return out


class Samples:
    """One figure's values (a task's wall time, a step's TTFT): exact while there are at most
    `EXACT_LIMIT`, percentiles then by the linear rule on them (percentile.py); always in a
    `LogHistogram` too, whose percentiles (the same rule on bucket middles, within 1%) stand in once
    there are more, when the exact values are released. So memory is bounded (the limit's doubles and
    the buckets) and a figure always covers every value, never a subset of them; crossing the limit
    moves it by at most the histogram's 1%. Adding is O(log n) compares and one O(n) shift while
    exact (n ≤ the limit), O(1) after; a percentile is O(1) while exact."""

    __slots__ = ("count", "exact", "histogram")

    def __init__(self) -> None:
        self.count = 0
        self.exact: array[float] | None = array("d")  # sorted ascending; None past the limit
        self.histogram = LogHistogram()

    def add(self, value: float) -> None:
        self.count += 1
        self.histogram.add(value)
        if self.exact is None:
            return
        if self.count > EXACT_LIMIT:
            self.exact = None
        else:
            insort(self.exact, value)

    def quantile(self, q: float) -> float | None:
        """The q-quantile of every value added (above); None when there is none."""
        if self.exact is None:
            return self.histogram.quantile(q)
        return linear_quantile(self.exact, q) if self.exact else None


class IntegerCounts:
    """Whole-number values (a request's output tokens) counted exactly, one count per distinct value:
    mergeable exactly, memory bounded by the distinct values, and a percentile by the linear rule on
    the values themselves (percentile.py), so a median of 400-token answers reads 400, not a bucket's
    middle."""

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.total = 0

    def add(self, value: int) -> None:
        self.counts[value] = self.counts.get(value, 0) + 1
        self.total += 1

    def merge(self, other: IntegerCounts) -> None:
        counts = self.counts
        for value, n in other.counts.items():
            counts[value] = counts.get(value, 0) + n
        self.total += other.total

    def quantile(self, q: float) -> int | float | None:
        """The q-quantile of every value counted, as `linear_quantile` reads them all in order: a whole
        number when it falls on one (400, not 400.0), else between two; None when none was counted."""
        if not self.total:
            return None
        order = sorted(self.counts)
        cumulative = list(accumulate(map(self.counts.__getitem__, order)))
        value = interpolated(q, self.total, lambda rank: float(order[bisect_right(cumulative, rank)]))
        return int(value) if value.is_integer() else value

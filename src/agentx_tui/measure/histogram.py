"""Log-bucketed histograms: latencies in buckets 2% wide, so a percentile is within about 1% of the
exact one, memory is bounded whatever the run length, and two histograms merge exactly (docs/metrics.md)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from agentx_tui.snapshot import Percentiles

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

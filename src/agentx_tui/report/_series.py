"""A bounded, evenly downsampled time series of the run, for the report's charts.

Memory stays under `max_points` whatever the run's length: samples are averaged into buckets of
`stride` ticks; when the buckets fill up, neighbours are merged pairwise and the stride doubles.
Every point therefore covers the same number of ticks (except the newest, still filling).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SERIES_NAMES: tuple[str, ...] = (
    "output_tokens_per_s",
    "total_tokens_per_s",
    "kv_cache_usage",
    "prefix_cache_hit_rate",
)


class _Mean:
    __slots__ = ("n", "total")

    def __init__(self) -> None:
        self.total = 0.0
        self.n = 0

    def add(self, value: float | None) -> None:
        if value is not None:
            self.total += value
            self.n += 1

    def merge(self, other: _Mean) -> None:
        self.total += other.total
        self.n += other.n

    @property
    def value(self) -> float | None:
        return self.total / self.n if self.n else None


@dataclass(frozen=True)
class ReportSeries:
    """The run over time: `elapsed_s` and, per name of `SERIES_NAMES`, one value (or None) per point."""

    elapsed_s: tuple[float, ...] = ()
    values: dict[str, tuple[float | None, ...]] = field(default_factory=dict)
    ticks_per_point: int = 1

    def __len__(self) -> int:
        return len(self.elapsed_s)


class _Bucket:
    __slots__ = ("elapsed", "means", "ticks")

    def __init__(self) -> None:
        self.elapsed = _Mean()
        self.means = {name: _Mean() for name in SERIES_NAMES}
        self.ticks = 0

    def merge(self, other: _Bucket) -> None:
        self.elapsed.merge(other.elapsed)
        for name in SERIES_NAMES:
            self.means[name].merge(other.means[name])
        self.ticks += other.ticks


class SeriesBuffer:
    def __init__(self, max_points: int = 500) -> None:
        if max_points < 2:
            raise ValueError("max_points must be at least 2")
        self._max = max_points - max_points % 2  # even, so a full buffer halves exactly
        self._stride = 1
        self._buckets: list[_Bucket] = []

    def add(self, elapsed_s: float, values: dict[str, float | None]) -> None:
        if not self._buckets or self._buckets[-1].ticks >= self._stride:
            if len(self._buckets) >= self._max:
                self._halve()
            if not self._buckets or self._buckets[-1].ticks >= self._stride:
                self._buckets.append(_Bucket())
        bucket = self._buckets[-1]
        bucket.elapsed.add(elapsed_s)
        for name in SERIES_NAMES:
            bucket.means[name].add(values.get(name))
        bucket.ticks += 1

    def _halve(self) -> None:
        merged: list[_Bucket] = []
        for i in range(0, len(self._buckets), 2):
            pair = self._buckets[i : i + 2]
            first = pair[0]
            for other in pair[1:]:
                first.merge(other)
            merged.append(first)
        self._buckets = merged
        self._stride *= 2

    def series(self) -> ReportSeries:
        return ReportSeries(
            elapsed_s=tuple(b.elapsed.value or 0.0 for b in self._buckets),
            values={name: tuple(b.means[name].value for b in self._buckets) for name in SERIES_NAMES},
            ticks_per_point=self._stride,
        )

"""A running mean and maximum over a run's (or a window's) ticks, in O(1) memory."""

from __future__ import annotations


class RunningStat:
    """Mean and max of the values seen; None values (an unknown figure that tick) are skipped."""

    __slots__ = ("max", "n", "total")

    def __init__(self) -> None:
        self.total = 0.0
        self.n = 0
        self.max: float | None = None

    def add(self, value: float | None) -> None:
        if value is None:
            return
        self.total += value
        self.n += 1
        self.max = value if self.max is None else max(self.max, value)

    @property
    def mean(self) -> float | None:
        return self.total / self.n if self.n else None

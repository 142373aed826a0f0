"""Bounded history of named series for sparklines: fixed memory however long the run lasts."""

from __future__ import annotations

from collections import deque


class History:
    """One ring buffer of ``maxlen`` values (None = unknown at that tick) per series name."""

    def __init__(self, maxlen: int = 600) -> None:
        if maxlen < 1:
            raise ValueError("maxlen must be at least 1")
        self.maxlen = maxlen
        self._series: dict[str, deque[float | None]] = {}

    def push(self, name: str, value: float | None) -> None:
        buffer = self._series.get(name)
        if buffer is None:
            buffer = self._series[name] = deque(maxlen=self.maxlen)
        buffer.append(None if value is None else float(value))

    def series(self, name: str) -> list[float | None]:
        """Oldest first; empty for a name never pushed."""
        return list(self._series.get(name, ()))

    def names(self) -> list[str]:
        return list(self._series)

    def clear(self) -> None:
        self._series.clear()

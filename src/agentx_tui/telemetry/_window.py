"""Windowed rates and run totals from successive `MetricsPage`s (pure; the caller supplies the clock).

Every counter series keeps a reset-aware running increase since the monitor's first page: each step
adds ``new - old``, or ``new`` when the counter went down (the server restarted), as Prometheus
`rate()` does. A series first seen after the first page started at zero, so all of its value counts.
Window figures are differences of that running increase between now and the oldest point of the
window; run totals are the running increase itself.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from agentx_tui.telemetry._parse import Histogram, MetricsPage, SeriesKey

Buckets = dict[float, float]


@dataclass(frozen=True)
class Point:
    """Running increases at one instant, grouped by (internal name, engine)."""

    t: float
    counters: dict[tuple[str, str], float]
    histograms: dict[tuple[str, str], Buckets]


@dataclass
class _Last:
    counters: dict[SeriesKey, float] = field(default_factory=dict)
    histograms: dict[SeriesKey, Histogram] = field(default_factory=dict)


def counter_step(old: float | None, new: float) -> float:
    """A counter's increase from `old` (None: not seen before, so it started at zero) to `new`: all of
    `new` where it went down (the server restarted)."""
    if old is None:
        return new
    return new if new < old else new - old


def buckets_step(old: Mapping[float, float] | None, new: Mapping[float, float]) -> Buckets:
    """As `counter_step`, for a histogram's cumulative buckets (upper bound → count): any bucket going
    down means the histogram was reset."""
    if old is None or any(count < old.get(upper, 0.0) for upper, count in new.items()):
        return dict(new)
    return {upper: count - old.get(upper, 0.0) for upper, count in new.items()}


class WindowState:
    """Holds the points of one endpoint's rate window and the run's running increases."""

    def __init__(self, window_s: float) -> None:
        if not window_s > 0:
            raise ValueError("window_s must be positive")
        self.window_s = window_s
        self._points: deque[Point] = deque()
        self._last: _Last | None = None
        self._counters: dict[SeriesKey, float] = {}
        self._histograms: dict[SeriesKey, Buckets] = {}

    def reset_window(self) -> None:
        """Forget the window (rates restart) but keep the run totals running."""
        self._points.clear()

    def add(self, page: MetricsPage, now: float) -> None:
        first = self._last is None
        last = self._last or _Last()
        for key, value in page.counters.items():
            step = 0.0 if first else counter_step(last.counters.get(key), value)
            self._counters[key] = self._counters.get(key, 0.0) + step
        for key, hist in page.histograms.items():
            # Every bound from the start, at zero: a histogram with nothing observed yet is known, empty.
            acc = self._histograms.setdefault(key, dict.fromkeys((upper for upper, _ in hist.buckets), 0.0))
            if not first:
                old = last.histograms.get(key)
                increase = buckets_step(None if old is None else dict(old.buckets), dict(hist.buckets))
                for upper, count in increase.items():
                    acc[upper] = acc.get(upper, 0.0) + count
        # Series missing from this page keep their last value, so a flapping series is not a reset.
        last.counters.update(page.counters)
        last.histograms.update(page.histograms)
        self._last = last
        self._points.append(self._point(page, now))
        cutoff = now - self.window_s
        while len(self._points) >= 2 and self._points[1].t <= cutoff:
            self._points.popleft()

    def _point(self, page: MetricsPage, now: float) -> Point:
        counters: dict[tuple[str, str], float] = {}
        for key in page.counters:
            group = key[:2]
            counters[group] = counters.get(group, 0.0) + self._counters[key]
        histograms: dict[tuple[str, str], Buckets] = {}
        for key in page.histograms:
            merged = histograms.setdefault(key[:2], {})
            for upper, count in self._histograms[key].items():
                merged[upper] = merged.get(upper, 0.0) + count
        return Point(now, counters, histograms)

    # -- reading -------------------------------------------------------------------------------

    @property
    def span_s(self) -> float | None:
        if len(self._points) < 2:
            return None
        span = self._points[-1].t - self._points[0].t
        return span if span > 0 else None

    def _engine_match(self, engine: str | None, key_engine: str) -> bool:
        return engine is None or engine == key_engine

    def total(self, name: str, engine: str | None = None) -> float | None:
        """Run total (increase since the first page) of a counter present on the latest page."""
        if not self._points:
            return None
        latest = self._points[-1].counters
        values = [v for (n, e), v in latest.items() if n == name and self._engine_match(engine, e)]
        return sum(values) if values else None

    def delta(self, name: str, engine: str | None = None) -> float | None:
        """Increase of a counter over the window; None with fewer than two points or no such counter."""
        if self.span_s is None:
            return None
        now, base = self._points[-1], self._points[0]
        keys = [k for k in now.counters if k[0] == name and self._engine_match(engine, k[1])]
        if not keys:
            return None
        return sum(now.counters[k] - base.counters.get(k, 0.0) for k in keys)

    def rate(self, name: str, engine: str | None = None) -> float | None:
        delta, span = self.delta(name, engine), self.span_s
        return None if delta is None or span is None else delta / span

    def hist_total(self, name: str) -> Buckets | None:
        """Run total (observations since the first page) of a histogram present on the latest page."""
        if not self._points:
            return None
        out: Buckets = {}
        for key, buckets in self._points[-1].histograms.items():
            if key[0] == name:
                for upper, count in buckets.items():
                    out[upper] = out.get(upper, 0.0) + count
        return out or None

    def hist_delta(self, name: str, engine: str | None = None) -> Buckets | None:
        if self.span_s is None:
            return None
        now, base = self._points[-1], self._points[0]
        out: Buckets = {}
        for key, buckets in now.histograms.items():
            if key[0] != name or not self._engine_match(engine, key[1]):
                continue
            before = base.histograms.get(key, {})
            for upper, count in buckets.items():
                out[upper] = out.get(upper, 0.0) + count - before.get(upper, 0.0)
        return out or None

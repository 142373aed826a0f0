"""A sweep as a chart sees it (docs/sweeps.md): the dashboard's Frontier pane and the report's SVG
pictures both draw this one model, so they place the same points, the same frontier, the same curve
and the same tier reads with the same intervals.

x is p90 interactivity (tok/s/user) on the chart's `axis` (the North Star or decode, docs/sweeps.md;
an older recording's: decode), y total tokens/s per GPU; when no point knows the GPU count, y
is the plain total tokens/s (`SweepChart.per_gpu` says which) and no tier is read. The Frontier pane
can place the points by tasks per hour per GPU instead (`ChartY`): the frontier stays the one found on
throughput, and the tier reads, which are throughput, are then not placed. A figure here is never
negative: one that is, or is not finite, cannot be placed. A tier sweep's probes (`SweepChart.probes`) are
placed apart, on the throughput chart only: they stand on no frontier and no curve joins them.
`nice_step` is the one rule for round axis ticks (1, 2 or 5 × 10ⁿ) of both charts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from agentx_tui.snapshot import FrontierAxis, PointFigures, ProbeRow, TierRead
from agentx_tui.sweep.axes import DECODE, NORTH_STAR, point_x, point_x_interval
from agentx_tui.sweep.pareto import MonotoneCurve, frontier_curve, pareto_front

Span = tuple[float, float]  # a 95% interval (low, high)
# What y places the points by: total tokens/s per GPU (the frontier's own axis), or tasks (session
# trees) completed per hour per GPU (`PointFigures.tasks_per_hour_per_gpu`).
ChartY = Literal["throughput", "tasks"]


def _placeable(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and value >= 0 else None


def _span(low: float | None, high: float | None) -> Span | None:
    low, high = _placeable(low), _placeable(high)
    return (low, high) if low is not None and high is not None and low <= high else None


@dataclass(frozen=True)
class ChartPoint:
    """One measured point; None where the figure is unknown (the point is then not placed)."""

    users: int | None = None
    interactivity_p90: float | None = None  # x: on the chart's axis
    throughput: float | None = None  # y: per GPU, or the total (see `SweepChart.per_gpu`), or tasks/h/GPU
    interactivity_p50: float | None = None  # the per-point picture's second line
    interactivity_p90_ci: Span | None = None
    throughput_ci: Span | None = None  # throughput per GPU only
    on_frontier: bool = False

    @property
    def placed(self) -> bool:
        return self.interactivity_p90 is not None and self.throughput is not None


@dataclass(frozen=True)
class ChartTier:
    """An interactivity tier and the throughput per GPU read there on the frontier."""

    tier: float
    read: float | None = None
    ci: Span | None = None


@dataclass(frozen=True)
class SweepChart:
    points: tuple[ChartPoint, ...]  # every point in its place: `frontier` indexes them
    frontier: tuple[int, ...]
    tiers: tuple[ChartTier, ...]  # by tier, ascending
    per_gpu: bool
    axis: FrontierAxis = DECODE  # the interactivity x is (the frontier's and the tiers')
    y: ChartY = "throughput"
    probes: tuple[ChartPoint, ...] = ()  # a tier sweep's probes that can be placed: never on the frontier

    @classmethod
    def of(
        cls,
        points: Sequence[PointFigures | None],
        frontier: Sequence[int] | None,
        tiers: Sequence[TierRead],
        axis: FrontierAxis | None = None,
        *,
        y: ChartY = "throughput",
        probes: Sequence[ProbeRow] = (),
    ) -> SweepChart:
        """The chart of a sweep's points (None: a point whose figures are unknown), its frontier on
        `axis` (None: an older sweep's, decode; the Pareto front is found again when it is missing or
        points elsewhere) and its tier reads on that axis (reads on the other are left out); `y` says
        what places the points vertically; a tier sweep's `probes`, placed apart (throughput only)."""
        on_axis = axis or DECODE
        per_gpu = any(p is not None and p.total_tokens_per_s_per_gpu is not None for p in points) or any(
            p.total_tokens_per_s_per_gpu is not None for p in probes
        )
        given = list(frontier or ())
        if not given or not all(0 <= i < len(points) for i in given):
            given = list(pareto_front([_xy(p, per_gpu, on_axis) for p in points]))
        on_front = set(given)
        chart_points = tuple(_point(p, per_gpu, i in on_front, on_axis, y) for i, p in enumerate(points))
        tiers = [t for t in tiers if (t.axis or DECODE) == on_axis]
        reads = per_gpu and y == "throughput"  # a read is throughput: on a tasks chart it has no place
        chart_tiers = tuple(
            ChartTier(
                t.tier,
                _placeable(t.total_tokens_per_s_per_gpu) if reads else None,
                _span(t.total_tokens_per_s_per_gpu_ci_low, t.total_tokens_per_s_per_gpu_ci_high) if reads else None,
            )
            for t in sorted(tiers, key=lambda t: t.tier)
        )
        placed_probes = tuple(p for p in (_probe(r, per_gpu, on_axis) for r in probes) if p.placed)
        shown_probes = placed_probes if y == "throughput" else ()
        return cls(chart_points, tuple(given), chart_tiers, per_gpu, on_axis, y, shown_probes)

    @cached_property
    def curve(self) -> MonotoneCurve:
        """The monotone curve through the frontier, as the tiers are read from it."""
        xy = [(p.interactivity_p90, p.throughput) for p in self.points]
        return frontier_curve(xy, self.frontier)

    @property
    def placed(self) -> list[tuple[int, ChartPoint]]:
        """The points with both figures, each with its index."""
        return [(i, p) for i, p in enumerate(self.points) if p.placed]

    @property
    def intervals(self) -> bool:
        """Whether any point or tier read carries a 95% interval."""
        return any(p.interactivity_p90_ci or p.throughput_ci for p in self.points) or any(t.ci for t in self.tiers)


def _xy(point: PointFigures | None, per_gpu: bool, axis: FrontierAxis | None) -> tuple[float | None, float | None]:
    if point is None:
        return None, None
    y = point.total_tokens_per_s_per_gpu if per_gpu else point.total_tokens_per_s
    return _placeable(point_x(point, axis or DECODE)), _placeable(y)


def _point(
    point: PointFigures | None, per_gpu: bool, on_frontier: bool, axis: FrontierAxis | None, y_of: ChartY
) -> ChartPoint:
    if point is None:
        return ChartPoint()
    x, y = _xy(point, per_gpu, axis)
    x_ci = _span(*point_x_interval(point, axis or DECODE))
    y_ci = _span(*point.interval("total_tokens_per_s_per_gpu")) if per_gpu else None
    if y_of == "tasks":  # no interval is measured for it
        y, y_ci = _placeable(point.tasks_per_hour_per_gpu), None
    p50 = point.e2e_interactivity_p50_tokens_per_s if axis == NORTH_STAR else point.interactivity_p50_tokens_per_s
    return ChartPoint(
        users=point.users,
        interactivity_p90=x,
        throughput=y,
        interactivity_p50=_placeable(p50),
        interactivity_p90_ci=x_ci,
        throughput_ci=y_ci,
        on_frontier=on_frontier,
    )


def _probe(probe: ProbeRow, per_gpu: bool, axis: FrontierAxis) -> ChartPoint:
    """A probe where its window put it (x on `axis`, y as the points'), with no interval: it is a short look."""
    x = probe.e2e_interactivity_p90_tokens_per_s if axis == NORTH_STAR else probe.interactivity_p90_tokens_per_s
    y = probe.total_tokens_per_s_per_gpu if per_gpu else probe.total_tokens_per_s
    return ChartPoint(users=probe.users, interactivity_p90=_placeable(x), throughput=_placeable(y))


def nice_step(span: float, count: int) -> float:
    """A round step, 1, 2 or 5 × 10ⁿ, that cuts `span` into about `count` parts (no more, give or take
    float rounding): the axes of the Frontier pane and of the report's pictures."""
    raw = span / max(count, 1)
    if not raw > 0 or not math.isfinite(raw):
        return 1.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1.0, 2.0, 5.0, 10.0) if m * magnitude >= raw * 0.999)

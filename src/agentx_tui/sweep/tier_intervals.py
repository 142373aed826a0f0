"""95% intervals of the tier reads (docs/sweeps.md): the points' intervals carried through the frontier.

A tier's read depends on several points at once (the frontier they make, and the curve between the
two that bracket the tier), so its interval is found by Monte Carlo: each draw moves every point
that has intervals within them — x and y each from a split normal whose sides have the interval's
lower and upper half-widths as 1.96 σ — then recomputes the Pareto frontier, its monotone curve and
the read, exactly as `read_tiers` does; the interval is the 2.5 and 97.5 percentiles of the draws.
A draw whose frontier no longer reaches the tier reads the frontier's nearest end (held flat, never
extrapolated past a measured value). A point without intervals stays where it was measured; a tier
whose two bracketing frontier points lack them has no interval (null), as it cannot be told.

Pure: no clock, and a seeded random generator, so the same points always give the same intervals.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from agentx_tui.snapshot import PointFigures, TierRead
from agentx_tui.sweep.frontier import frontier_curve, pareto_front, point_xy
from agentx_tui.sweep.intervals import CONFIDENCE, Interval, percentile

DRAWS = 500
SEED = 2026
_Z = 1.959963984540054

_Ends = tuple[float, float, float]  # (low, value, high)


def _ends(value: float | None, low: float | None, high: float | None) -> _Ends | None:
    if value is None or low is None or high is None:
        return None
    if not all(math.isfinite(v) for v in (value, low, high)):
        return None
    return (min(low, value), value, max(high, value))


def _draw(rng: random.Random, ends: _Ends) -> float:
    """A split normal: below the value with σ = (value − low) / 1.96, above with σ = (high − value) / 1.96."""
    low, value, high = ends
    z = rng.gauss(0.0, 1.0)
    return value + z * ((value - low) if z < 0 else (high - value)) / _Z


def tier_intervals(
    points: Sequence[PointFigures], frontier: Sequence[int], reads: Sequence[TierRead], *, draws: int = DRAWS
) -> tuple[TierRead, ...]:
    """`reads` (from `read_tiers` on the same points) with `total_tokens_per_s_per_gpu_ci_low/high` set
    where a read exists and the points it stands on have intervals."""
    xs = [
        _ends(
            p.interactivity_p90_tokens_per_s,
            p.interactivity_p90_tokens_per_s_ci_low,
            p.interactivity_p90_tokens_per_s_ci_high,
        )
        for p in points
    ]
    ys = [
        _ends(p.total_tokens_per_s_per_gpu, p.total_tokens_per_s_per_gpu_ci_low, p.total_tokens_per_s_per_gpu_ci_high)
        for p in points
    ]
    known = [x is not None and y is not None for x, y in zip(xs, ys, strict=True)]
    wanted = [
        read
        for read in reads
        if read.total_tokens_per_s_per_gpu is not None and _bracketed(points, frontier, known, read.tier)
    ]
    if not wanted:
        return tuple(reads)
    rng = random.Random(SEED)
    found: dict[float, list[float]] = {read.tier: [] for read in wanted}
    base = [point_xy(p) for p in points]
    for _ in range(draws):
        moved = [
            (_draw(rng, x), _draw(rng, y)) if x is not None and y is not None else xy
            for xy, x, y in zip(base, xs, ys, strict=True)
        ]
        curve = frontier_curve(moved, pareto_front(moved))
        if not curve.xs:
            continue
        for read in wanted:
            at = min(max(read.tier, curve.xs[0]), curve.xs[-1])
            y = curve.at(at)
            if y is not None:
                found[read.tier].append(y)
    alpha = 1 - CONFIDENCE
    out = []
    for read in reads:
        values = sorted(found.get(read.tier, ()))
        value = read.total_tokens_per_s_per_gpu
        if len(values) < draws // 2 or value is None:  # too few draws made a frontier at all
            out.append(read)
            continue
        ci = Interval(percentile(values, alpha / 2), percentile(values, 1 - alpha / 2)).around(value)
        out.append(
            read.model_copy(
                update={"total_tokens_per_s_per_gpu_ci_low": ci.low, "total_tokens_per_s_per_gpu_ci_high": ci.high}
            )
        )
    return tuple(out)


def _bracketed(points: Sequence[PointFigures], frontier: Sequence[int], known: Sequence[bool], tier: float) -> bool:
    """Whether the frontier points on either side of `tier` (or the one it sits on) have intervals."""
    along = sorted((x, i) for i in frontier if (x := points[i].interactivity_p90_tokens_per_s) is not None)
    below = [i for x, i in along if x <= tier]
    above = [i for x, i in along if x >= tier]
    if not below or not above:
        return False
    return known[below[-1]] and known[above[0]]

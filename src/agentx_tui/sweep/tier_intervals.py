"""95% intervals of the tier reads (docs/sweeps.md): the points' intervals carried through the frontier.

A tier's read depends on several points at once (the frontier they make, and the curve between the
two that bracket the tier), so its interval is found by Monte Carlo: each draw moves every point
that has intervals within them — x and y each from a split normal whose sides have the interval's
lower and upper half-widths as 1.96 σ — then recomputes the Pareto frontier, its monotone curve and
the read, exactly as `read_tiers` does; the interval is the 2.5 and 97.5 percentiles of the draws
(linear between the closest ranks: `measure.linear_quantile`).
A draw whose frontier no longer reaches the tier reads the frontier's nearest end (held flat, never
extrapolated past a measured value). A point without intervals stays where it was measured; a tier
whose two bracketing frontier points lack them has no interval (null), as it cannot be told.
The x drawn is the point's p90 interactivity on the reads' axis; a view under the North Star policy
(`within`: the decode view beside the North Star) draws the point's E2E-normalized figure too, with
the same y, and keeps the draw's frontier to the points on both.

Pure: no clock, and a seeded random generator, so the same points always give the same intervals.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from agentx_tui.measure import linear_quantile
from agentx_tui.snapshot import FrontierAxis, PointFigures, TierRead
from agentx_tui.sweep.axes import DECODE, point_x, point_x_interval, point_xy
from agentx_tui.sweep.intervals import CONFIDENCE, Interval
from agentx_tui.sweep.pareto import frontier_curve, north_star_policy, pareto_front

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


def _x_ends(points: Sequence[PointFigures], axis: FrontierAxis) -> list[_Ends | None]:
    return [_ends(point_x(p, axis), *point_x_interval(p, axis)) for p in points]


def tier_intervals(
    points: Sequence[PointFigures],
    frontier: Sequence[int],
    reads: Sequence[TierRead],
    *,
    draws: int = DRAWS,
    axis: FrontierAxis = DECODE,
    within: FrontierAxis | None = None,
) -> tuple[TierRead, ...]:
    """`reads` (from `read_tiers` on the same points and `axis`) with `total_tokens_per_s_per_gpu_ci_low/high`
    set where a read exists and the points it stands on have intervals. `within`: the frontier of each
    draw keeps only the points also on the draw's frontier on that axis (the North Star policy)."""
    xs = _x_ends(points, axis)
    policy = _x_ends(points, within) if within is not None else None
    ys = [_ends(p.total_tokens_per_s_per_gpu, *p.interval("total_tokens_per_s_per_gpu")) for p in points]
    known = [x is not None and y is not None for x, y in zip(xs, ys, strict=True)]
    wanted = [
        read
        for read in reads
        if read.total_tokens_per_s_per_gpu is not None and _bracketed(points, frontier, known, read.tier, axis)
    ]
    if not wanted:
        return tuple(reads)
    rng = random.Random(SEED)
    found: dict[float, list[float]] = {read.tier: [] for read in wanted}
    base = [point_xy(p, axis) for p in points]
    policy_base = [point_xy(p, within) for p in points] if within is not None else []
    for _ in range(draws):
        moved: list[tuple[float | None, float | None]] = []
        moved_policy: list[tuple[float | None, float | None]] = []
        for i, (xy, x, y) in enumerate(zip(base, xs, ys, strict=True)):
            if x is None or y is None:
                moved.append(xy)
                if policy is not None:
                    moved_policy.append(policy_base[i])
                continue
            drawn_x = _draw(rng, x)  # x before y: the draws of a view without the policy stay as they were
            drawn_y = _draw(rng, y)
            moved.append((drawn_x, drawn_y))
            if policy is not None:
                other = policy[i]
                moved_policy.append((_draw(rng, other), drawn_y) if other is not None else (policy_base[i][0], drawn_y))
        front = pareto_front(moved)
        if policy is not None:
            front = north_star_policy(front, pareto_front(moved_policy))
        curve = frontier_curve(moved, front)
        if not curve.xs:
            continue
        for read in wanted:
            at = min(max(read.tier, curve.xs[0]), curve.xs[-1])
            tput = curve.at(at)
            if tput is not None:
                found[read.tier].append(tput)
    alpha = 1 - CONFIDENCE
    out = []
    for read in reads:
        values = sorted(found.get(read.tier, ()))
        value = read.total_tokens_per_s_per_gpu
        if len(values) < draws // 2 or value is None:  # too few draws made a frontier at all
            out.append(read)
            continue
        ci = Interval(linear_quantile(values, alpha / 2), linear_quantile(values, 1 - alpha / 2)).around(value)
        out.append(
            read.model_copy(
                update={"total_tokens_per_s_per_gpu_ci_low": ci.low, "total_tokens_per_s_per_gpu_ci_high": ci.high}
            )
        )
    return tuple(out)


def _bracketed(
    points: Sequence[PointFigures], frontier: Sequence[int], known: Sequence[bool], tier: float, axis: FrontierAxis
) -> bool:
    """Whether the frontier points on either side of `tier` (or the one it sits on) have intervals."""
    along = sorted((x, i) for i in frontier if (x := point_x(points[i], axis)) is not None)
    below = [i for x, i in along if x <= tier]
    above = [i for x, i in along if x >= tier]
    if not below or not above:
        return False
    return known[below[-1]] and known[above[0]]

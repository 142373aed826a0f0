"""The frontier of a sweep (docs/sweeps.md): the Pareto-optimal points, the monotone curve through
them (Steffen), and which points stand on each view's frontier.

Pure functions on numbers and `PointFigures`: no I/O, no clock, no Textual, so the live pane, the report,
the charts and `compare` all read the same frontier the same way. The North Star policy (docs/sweeps.md):
on the decode view beside the North Star, a point stands on the frontier only if it stands on the
E2E-normalized frontier too (`view_fronts`).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from agentx_tui.snapshot import FrontierAxis, PointFigures
from agentx_tui.sweep.axes import DECODE, NORTH_STAR, XY, finite, point_xy


def pareto_front(points: Sequence[XY]) -> tuple[int, ...]:
    """Indices of the Pareto-optimal points, sorted by x (interactivity) ascending.

    `points` are (p90 interactivity, total tok/s per GPU) pairs; higher is better on both. A point with
    either figure None (or NaN/inf) is never on the frontier. A point is dropped when another is at least
    as good on both axes and better on one. Ties, deterministically:
    - same x, different y: only the higher y stays (the other is dominated);
    - same y, different x: only the higher x stays;
    - exact duplicates: only the one with the lowest index stays, so the frontier never holds two points
      at the same x (the interpolation needs distinct knots).
    So along the returned frontier x strictly increases and y strictly decreases.
    """
    known: list[tuple[float, float, int]] = []
    for i, (raw_x, raw_y) in enumerate(points):
        x, y = finite(raw_x), finite(raw_y)
        if x is not None and y is not None:
            known.append((x, y, i))
    # Best x first; for one x the best y first; for exact duplicates the lowest index first. Walking that
    # order, a point is optimal exactly when its y beats every y seen so far (all of which have x >= its x).
    known.sort(key=lambda p: (-p[0], -p[1], p[2]))
    front: list[int] = []
    best_y = -math.inf
    for _x, y, i in known:
        if y > best_y:
            front.append(i)
            best_y = y
    front.reverse()
    return tuple(front)


@dataclass(frozen=True)
class MonotoneCurve:
    """Steffen's monotone cubic through knots (xs strictly increasing), as d3's `curveMonotoneX` draws it.

    M. Steffen, "A simple method for monotonic interpolation in one dimension", Astronomy and
    Astrophysics 239 (1990) 443–450. Each piece between two knots is a cubic Hermite polynomial; the
    slope at an interior knot i is

        p_i  = (s_{i-1} h_i + s_i h_{i-1}) / (h_{i-1} + h_i)
        y'_i = (sign s_{i-1} + sign s_i) · min(|s_{i-1}|, |s_i|, |p_i| / 2)

    (h: knot spacing, s: secant slope), so the curve passes through every knot, is monotone between two
    knots, and has no overshoot: a local extremum gets a flat tangent. The two end slopes are d3's
    one-sided ``(3 s - y'_neighbour) / 2``, as InferenceX uses (its roofline charts are d3's
    `curveMonotoneX`, and its tier reads use the same slopes). Two knots give the straight line (d3
    draws a line there too), one knot only its own value. The curve is never extrapolated: `at` is None
    outside [xs[0], xs[-1]].
    """

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    slopes: tuple[float, ...]

    @classmethod
    def through(cls, xs: Sequence[float], ys: Sequence[float]) -> MonotoneCurve:
        if len(xs) != len(ys):
            raise ValueError("xs and ys must have the same length")
        if any(b <= a for a, b in pairwise(xs)):
            raise ValueError("xs must be strictly increasing")
        return cls(tuple(xs), tuple(ys), _steffen_slopes(xs, ys))

    def at(self, x: float) -> float | None:
        """The curve's y at `x`; None outside the knots' range (no extrapolation)."""
        xs, ys, m = self.xs, self.ys, self.slopes
        if not xs or not math.isfinite(x) or x < xs[0] or x > xs[-1]:
            return None
        hi = bisect_right(xs, x)
        if xs[hi - 1] == x:  # on a knot: its own value, exactly
            return ys[hi - 1]
        lo = hi - 1
        h = xs[hi] - xs[lo]
        t = (x - xs[lo]) / h
        # Cubic Hermite basis on [0, 1].
        h00 = (1 + 2 * t) * (1 - t) ** 2
        h10 = t * (1 - t) ** 2
        h01 = t * t * (3 - 2 * t)
        h11 = t * t * (t - 1)
        return h00 * ys[lo] + h10 * h * m[lo] + h01 * ys[hi] + h11 * h * m[hi]

    def bezier(self) -> tuple[tuple[float, float, float, float, float, float], ...]:
        """Each piece as the control points (c1x, c1y, c2x, c2y, x1, y1) of a cubic Bézier from the
        previous knot: exactly the Hermite piece (x is linear in t), so a picture draws the same curve."""
        out = []
        for i in range(len(self.xs) - 1):
            x0, x1, y0, y1 = self.xs[i], self.xs[i + 1], self.ys[i], self.ys[i + 1]
            third = (x1 - x0) / 3
            out.append((x0 + third, y0 + third * self.slopes[i], x1 - third, y1 - third * self.slopes[i + 1], x1, y1))
        return tuple(out)


def _sign(v: float) -> float:
    return -1.0 if v < 0 else 1.0  # d3's sign: 0 counts as positive (the min() below makes it moot)


def _steffen_slopes(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, ...]:
    n = len(xs)
    if n < 2:
        return (0.0,) * n
    h = [xs[i + 1] - xs[i] for i in range(n - 1)]
    s = [(ys[i + 1] - ys[i]) / h[i] for i in range(n - 1)]
    if n == 2:
        return (s[0], s[0])  # a straight line
    m = [0.0] * n
    for i in range(1, n - 1):
        p = (s[i - 1] * h[i] + s[i] * h[i - 1]) / (h[i - 1] + h[i])
        m[i] = (_sign(s[i - 1]) + _sign(s[i])) * min(abs(s[i - 1]), abs(s[i]), 0.5 * abs(p))
    m[0] = (3 * s[0] - m[1]) / 2
    m[-1] = (3 * s[-1] - m[-2]) / 2
    return tuple(m)


def frontier_curve(points: Sequence[XY], frontier: Sequence[int]) -> MonotoneCurve:
    """The monotone curve through the frontier's points (by x; a point without both figures, or a second
    point at the same x, is left out so the knots stay distinct)."""
    knots: dict[float, float] = {}
    for i in frontier:
        x, y = (finite(v) for v in points[i])
        if x is not None and y is not None and y > knots.get(x, -math.inf):
            knots[x] = y
    xs = sorted(knots)
    return MonotoneCurve.through(xs, [knots[x] for x in xs])


def north_star_policy(front: Sequence[int], north_star_front: Sequence[int]) -> tuple[int, ...]:
    """The North Star policy (docs/sweeps.md): of a view's Pareto-optimal points, those that also stand
    on the E2E-normalized frontier. (A subset of a frontier is one too: x still rises, y still falls.)"""
    on = set(north_star_front)
    return tuple(i for i in front if i in on)


def view_fronts(points: Sequence[PointFigures], axis: FrontierAxis) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The frontier on `axis` (the sweep's view) and on the other one. The decode view beside the North
    Star keeps only points on the E2E-normalized frontier too (`north_star_policy`); with the decode axis
    chosen (`--frontier-axis decode`), the decode frontier is its own Pareto front and the North Star's
    stays its own."""
    north_star = pareto_front([point_xy(p, NORTH_STAR) for p in points])
    decode = pareto_front([point_xy(p, DECODE) for p in points])
    if axis == NORTH_STAR:
        return north_star, north_star_policy(decode, north_star)
    return decode, north_star

"""The frontier of a sweep (docs/sweeps.md): Pareto-optimal points, the monotone curve through
them, the throughput read at each interactivity tier, and `--sweep auto`'s stop rules.

Pure functions on numbers and `PointFigures`: no I/O, no clock, no Textual, so the live pane, the report,
the charts and `compare` all read the same frontier the same way.

Axes (AgentX): y = total tokens/s per GPU (cache + input + output); x, selectable (`FrontierAxis`):
AgentX's North Star, E2E-normalized interactivity (tok/s/user, 1 / p90 of E2E latency per output
token; `--frontier-axis e2e`, the default), or decode interactivity (1 / p90 of per-request ITL;
`--frontier-axis decode`). Higher is better on both. The North Star policy (docs/sweeps.md): on the
decode view beside the North Star, a point stands on the frontier only if it stands on the
E2E-normalized frontier too (`view_fronts`).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from agentx_tui.snapshot import FrontierAxis, PointFigures, TierRead
from agentx_tui.units import figure

NORTH_STAR: FrontierAxis = "e2e_interactivity"
DECODE: FrontierAxis = "decode_interactivity"
# --frontier-axis NAME → the axis; E2E-normalized interactivity is the default (docs/sweeps.md).
FRONTIER_AXES: dict[str, FrontierAxis] = {"e2e": NORTH_STAR, "decode": DECODE}
# A tier's report keys end in the axis's suffix: ``total_tokens_per_s_per_gpu_at_100`` on the North
# Star, ``total_tokens_per_s_per_gpu_at_100_decode`` on decode interactivity (docs/metrics.md).
TIER_AXIS_SUFFIX: dict[FrontierAxis, str] = {NORTH_STAR: "", DECODE: "_decode"}

GROWTH_MIN = 0.05  # --sweep auto: "total throughput grows less than 5% twice in a row"
ERROR_RATE_MAX = 0.10  # --sweep auto: "error rate passes 10%"
AUTO_MAX_POINTS = 12  # --sweep auto: "or 12 points are done"

XY = tuple[float | None, float | None]


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


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
        x, y = _finite(raw_x), _finite(raw_y)
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
        x, y = (_finite(v) for v in points[i])
        if x is not None and y is not None and y > knots.get(x, -math.inf):
            knots[x] = y
    xs = sorted(knots)
    return MonotoneCurve.through(xs, [knots[x] for x in xs])


def other_axis(axis: FrontierAxis) -> FrontierAxis:
    return DECODE if axis == NORTH_STAR else NORTH_STAR


def axis_name(axis: FrontierAxis | None) -> str:
    """A frontier axis's p90, in words (None: an older recording's, decode)."""
    return "p90 E2E-normalized interactivity" if axis == NORTH_STAR else "p90 interactivity"


def axis_title(axis: FrontierAxis | None) -> str:
    """A chart's x-axis title for a frontier axis (None: an older sweep's, decode)."""
    kind = "E2E-normalized interactivity" if axis == NORTH_STAR else "decode interactivity"
    return f"{kind}, tok/s/user (p90)"


def point_x(point: PointFigures, axis: FrontierAxis = DECODE) -> float | None:
    """The point's p90 interactivity on `axis` (tok/s/user)."""
    return point.e2e_interactivity_p90_tokens_per_s if axis == NORTH_STAR else point.interactivity_p90_tokens_per_s


def point_x_interval(point: PointFigures, axis: FrontierAxis = DECODE) -> tuple[float | None, float | None]:
    """The 95% interval (low, high) of the point's p90 interactivity on `axis`."""
    if axis == NORTH_STAR:
        return point.e2e_interactivity_p90_tokens_per_s_ci_low, point.e2e_interactivity_p90_tokens_per_s_ci_high
    return point.interactivity_p90_tokens_per_s_ci_low, point.interactivity_p90_tokens_per_s_ci_high


def point_xy(point: PointFigures, axis: FrontierAxis = DECODE) -> XY:
    return (point_x(point, axis), point.total_tokens_per_s_per_gpu)


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


def read_tiers(
    points: Sequence[PointFigures],
    frontier: Sequence[int],
    tiers: Sequence[float],
    *,
    usd_per_gpu_hour: float | None,
    axis: FrontierAxis | None = None,
) -> tuple[TierRead, ...]:
    """Throughput per GPU read on the frontier (on `axis`) at each tier T (p90 tok/s/user), and its cost.
    The reads carry their `axis`; None reads on decode interactivity and says no axis (a read of before
    the axis was chosen).

    usd_per_million_total_tokens = price × 10⁶ / (tput × 3600); tokens_per_dollar_total = 10⁶ / that.
    Outside the frontier's interactivity range every figure is None and `note` says why; without a price
    (None, or not a positive finite number) the throughput is read but the cost figures are None.
    """
    curve = frontier_curve([point_xy(p, axis or DECODE) for p in points], frontier)
    price = usd_per_gpu_hour if usd_per_gpu_hour is not None and math.isfinite(usd_per_gpu_hour) else None
    price = price if price is not None and price > 0 else None
    return tuple(_read_tier(curve, float(tier), price, axis) for tier in tiers)


def _read_tier(curve: MonotoneCurve, tier: float, price: float | None, axis: FrontierAxis | None) -> TierRead:
    words = axis_name(axis)
    if not curve.xs:
        return TierRead(tier=tier, note="no measured point", axis=axis)
    if tier > curve.xs[-1]:
        note = f"above the fastest measured point ({words} {figure(curve.xs[-1])} tok/s/user)"
        return TierRead(tier=tier, note=note, axis=axis)
    if tier < curve.xs[0]:
        note = f"below the slowest point on the frontier ({words} {figure(curve.xs[0])} tok/s/user)"
        return TierRead(tier=tier, note=note, axis=axis)
    tput = curve.at(tier)
    if tput is None:  # NaN tier: not in any range
        return TierRead(tier=tier, note="not a number", axis=axis)
    if price is None:
        return TierRead(
            tier=tier, total_tokens_per_s_per_gpu=tput, note="no price: set --gpu-price or --cost-profile", axis=axis
        )
    if not tput > 0:
        return TierRead(
            tier=tier, total_tokens_per_s_per_gpu=tput, note="no throughput, so no cost per token", axis=axis
        )
    usd_per_mtok = price * 1e6 / (tput * 3600)
    return TierRead(
        axis=axis,
        tier=tier,
        total_tokens_per_s_per_gpu=tput,
        usd_per_million_total_tokens=usd_per_mtok,
        tokens_per_dollar_total=1e6 / usd_per_mtok,
    )


TIER_KEY_PREFIXES = (
    "total_tokens_per_s_per_gpu_at_",
    "tokens_per_dollar_total_at_",
    "usd_per_million_total_tokens_at_",
)
# Agents per GPU at T (docs/sweeps.md): read on the sweep's own axis only, so its key has no axis suffix.
AGENTS_KEY_PREFIX = "agents_per_gpu_at_"
_CI_SUFFIXES = ("_ci_low", "_ci_high")


def tier_suffix(tier: float) -> str:
    """T as it appears in a report key: 100 → "100", 37.5 → "37.5"."""
    return f"{tier:g}"


def tier_report_keys(tiers: Sequence[TierRead], *, agents_axis: FrontierAxis | None = None) -> dict[str, float | None]:
    """The flat report keys of docs/metrics.md for each tier, so `--check 'tokens_per_dollar_total_at_100 >= 1e9'`
    works: ``total_tokens_per_s_per_gpu_at_T`` (and its 95% interval, ``…_at_T_ci_low``/``_ci_high``),
    ``tokens_per_dollar_total_at_T``, ``usd_per_million_total_tokens_at_T``, tier by tier in the given order.
    A read on decode interactivity has T followed by ``_decode`` (``…_at_100_decode``, ``…_at_100_decode_ci_low``;
    `TIER_AXIS_SUFFIX`); one on the North Star, or of an older recording (no axis), none. A read on
    `agents_axis` (the sweep's frontier axis) adds ``agents_per_gpu_at_T`` after its own keys."""
    out: dict[str, float | None] = {}
    for read in tiers:
        t = tier_suffix(read.tier) + (TIER_AXIS_SUFFIX[read.axis] if read.axis is not None else "")
        out[f"total_tokens_per_s_per_gpu_at_{t}"] = read.total_tokens_per_s_per_gpu
        out[f"total_tokens_per_s_per_gpu_at_{t}_ci_low"] = read.total_tokens_per_s_per_gpu_ci_low
        out[f"total_tokens_per_s_per_gpu_at_{t}_ci_high"] = read.total_tokens_per_s_per_gpu_ci_high
        out[f"tokens_per_dollar_total_at_{t}"] = read.tokens_per_dollar_total
        out[f"usd_per_million_total_tokens_at_{t}"] = read.usd_per_million_total_tokens
        if agents_axis is not None and read.axis == agents_axis:
            out[f"{AGENTS_KEY_PREFIX}{tier_suffix(read.tier)}"] = read.agents_per_gpu
    return out


@dataclass(frozen=True)
class TierKey:
    """A tier's flat report key, taken apart: `figure` is the `TierRead` field it holds."""

    figure: str  # total_tokens_per_s_per_gpu(_ci_low/_ci_high), tokens_per_dollar_total, …, agents_per_gpu
    tier: float
    decode: bool  # the key ends in ``_decode``: read on decode interactivity


def parse_tier_key(key: str) -> TierKey | None:
    """`total_tokens_per_s_per_gpu_at_100_decode_ci_low` → (total_tokens_per_s_per_gpu_ci_low, 100.0,
    decode); `agents_per_gpu_at_37.5` → (agents_per_gpu, 37.5, no suffix); None for any other key (T
    not a finite number included)."""
    for prefix in (*TIER_KEY_PREFIXES, AGENTS_KEY_PREFIX):
        if not key.startswith(prefix):
            continue
        rest, name = key.removeprefix(prefix), prefix.removesuffix("_at_")
        if prefix == TIER_KEY_PREFIXES[0]:  # only throughput reads have an interval
            for suffix in _CI_SUFFIXES:
                if rest.endswith(suffix):
                    rest, name = rest.removesuffix(suffix), name + suffix
                    break
        decode = prefix != AGENTS_KEY_PREFIX and rest.endswith(TIER_AXIS_SUFFIX[DECODE])
        rest = rest.removesuffix(TIER_AXIS_SUFFIX[DECODE]) if decode else rest
        try:
            tier = float(rest)
        except ValueError:
            return None
        return TierKey(name, tier, decode) if math.isfinite(tier) else None
    return None


def _throughputs(points: Sequence[PointFigures]) -> tuple[list[float | None], str]:
    # Per GPU when every point has it (the sweep's axis); else the plain total. The GPU count is the same
    # at every point, so the growth ratio is the same either way; mixing the two would not be.
    if all(p.total_tokens_per_s_per_gpu is not None for p in points):
        return [_finite(p.total_tokens_per_s_per_gpu) for p in points], "tok/s per GPU"
    return [_finite(p.total_tokens_per_s) for p in points], "tok/s"


def _grew_too_little(before: float, after: float) -> bool:
    if before <= 0:
        return after <= 0
    return after < before * (1 + GROWTH_MIN)


def auto_stop_reason(
    points: Sequence[PointFigures],
    *,
    lowest_tier: float | None,
    max_points: int = AUTO_MAX_POINTS,
    axis: FrontierAxis = DECODE,
) -> str | None:
    """Why `--sweep auto` stops after the points measured so far (docs/sweeps.md), or None to go on.

    The rules, checked on the latest point in this order (the first that holds is named): its error rate
    is above 10%; the load generator was saturated there (its figures measure the client, not the
    server); its p90 interactivity on the frontier's `axis` is below the lowest tier (more users only go
    further below); total
    throughput grew less than 5% on each of the last two steps; `max_points` points are done. A figure
    that is None never triggers its rule.
    """
    if not points:
        return None
    last = points[-1]
    at = f"at {last.users} users"
    if last.error_rate is not None and last.error_rate > ERROR_RATE_MAX:
        return f"The error rate {at} was {last.error_rate:.1%}, above the {ERROR_RATE_MAX:.0%} limit."
    if last.client_saturated:
        return f"The load generator itself was saturated {at}, so more users would measure the client, not the server."
    x = _finite(point_x(last, axis))
    if lowest_tier is not None and x is not None and x < lowest_tier:
        return (
            f"{axis_name(axis)} {at} was {figure(x)} tok/s/user, below the lowest tier "
            f"({tier_suffix(lowest_tier)} tok/s/user)."
        )
    if len(points) >= 3:
        values, unit = _throughputs(points[-3:])
        a, b, c = values
        # An unknown figure is not "no growth": the other rules stop a sweep that measures nothing.
        if a is not None and b is not None and c is not None and _grew_too_little(a, b) and _grew_too_little(b, c):
            users = ", ".join(str(p.users) for p in points[-3:])
            return (
                f"Total throughput grew less than {GROWTH_MIN:.0%} twice in a row: "
                f"{figure(a)} → {figure(b)} → {figure(c)} {unit} at {users} users."
            )
    if len(points) >= max_points:
        return f"{len(points)} points done, the most --sweep auto measures."
    return None


def next_auto_users(current: int) -> int:
    """`--sweep auto`'s next user count: double the current one (1 after 0). The 12-point rule bounds it:
    from 1 user the last point has 2,048 (`peak_auto_users`)."""
    return max(1, 2 * current)


def peak_auto_users(start: int) -> int:
    """The most users `--sweep auto` from `start` users can reach: its last point's."""
    return max(1, start) << (AUTO_MAX_POINTS - 1)

"""Tier reads (docs/sweeps.md): the throughput per GPU read on the frontier at each interactivity tier
T, and its cost; and how T is written (`tier_suffix`).

Pure functions on `PointFigures`: no I/O, no clock, no Textual.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence

from agentx_tui.snapshot import FrontierAxis, PointFigures, Pricing, TierRead, pricing
from agentx_tui.sweep.axes import DECODE, axis_name, point_xy
from agentx_tui.sweep.intervals import thin_words
from agentx_tui.sweep.pareto import MonotoneCurve, frontier_curve
from agentx_tui.units import figure


def read_tiers(
    points: Sequence[PointFigures],
    frontier: Sequence[int],
    tiers: Sequence[float],
    *,
    usd_per_gpu_hour: float | None,
    gpus: int | None,
    axis: FrontierAxis | None = None,
) -> tuple[TierRead, ...]:
    """Throughput per GPU read on the frontier (on `axis`) at each tier T (p90 tok/s/user), and its cost.
    The reads carry their `axis`; None reads on decode interactivity and says no axis (a read of before
    the axis was chosen).

    Its cost follows the one price rule (`snapshot.pricing`) at the read's throughput over all `gpus`, as
    a point's does: the same operating point reads the same tokens per dollar. Outside the frontier's
    interactivity range every figure is None and `note` says why; without a price or a GPU count the
    throughput is read but the cost figures are None, and `note` says which is missing. A read that
    stands on a thin point says so in its `note` too.
    """
    xy = [point_xy(p, axis or DECODE) for p in points]
    curve = frontier_curve(xy, frontier)
    price = pricing(usd_per_gpu_hour, gpus)
    reads = [_read_tier(curve, float(tier), price, gpus, axis) for tier in tiers]
    # Which point stands at each knot of the curve (the frontier's points have distinct x).
    at_knot = {xy[i][0]: points[i] for i in frontier}
    return tuple(_thin_note(read, curve, at_knot) for read in reads)


def _thin_note(read: TierRead, curve: MonotoneCurve, at_knot: Mapping[float | None, PointFigures]) -> TierRead:
    """A read that stands on a thin point (one with fewer requests than an interval needs, or the two it
    lies between) says so in its `note`: its figure is as unsure as that point, and no interval says how."""
    if read.total_tokens_per_s_per_gpu is None or not curve.xs:
        return read
    at = bisect_left(curve.xs, read.tier)
    on_knot = at < len(curve.xs) and curve.xs[at] == read.tier
    knots = curve.xs[at : at + 1] if on_knot else curve.xs[max(0, at - 1) : at + 1]
    thin = [p for x in knots if (p := at_knot.get(x)) is not None and p.thin]
    if not thin:
        return read
    said = ", ".join(f"{p.users} users ({thin_words(p.requests or 0)})" for p in sorted(thin, key=lambda p: p.users))
    note = f"stands on {'a thin point' if len(thin) == 1 else 'thin points'}: {said}"
    return read.model_copy(update={"note": f"{read.note}; {note}" if read.note else note})


def _read_tier(
    curve: MonotoneCurve, tier: float, price: Pricing, gpus: int | None, axis: FrontierAxis | None
) -> TierRead:
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
    if price.usd_per_hour is None or gpus is None:
        return TierRead(tier=tier, total_tokens_per_s_per_gpu=tput, note=price.missing, axis=axis)
    if not tput > 0:
        return TierRead(
            tier=tier, total_tokens_per_s_per_gpu=tput, note="no throughput, so no cost per token", axis=axis
        )
    return TierRead(
        axis=axis,
        tier=tier,
        total_tokens_per_s_per_gpu=tput,
        usd_per_million_total_tokens=price.usd_per_million_tokens(tput * gpus),
        tokens_per_dollar_total=price.tokens_per_dollar(tput * gpus),
    )


def tier_suffix(tier: float) -> str:
    """T as it appears in a report key: 100 → "100", 37.5 → "37.5"."""
    return f"{tier:g}"

"""Tier reads (docs/sweeps.md): the throughput per GPU read on the frontier at each interactivity tier
T, and its cost; and how T is written (`tier_suffix`).

Pure functions on `PointFigures`: no I/O, no clock, no Textual.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentx_tui.snapshot import FrontierAxis, PointFigures, Pricing, TierRead, pricing
from agentx_tui.sweep.axes import DECODE, axis_name, point_xy
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
    throughput is read but the cost figures are None, and `note` says which is missing.
    """
    curve = frontier_curve([point_xy(p, axis or DECODE) for p in points], frontier)
    price = pricing(usd_per_gpu_hour, gpus)
    return tuple(_read_tier(curve, float(tier), price, gpus, axis) for tier in tiers)


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

"""Agents per GPU at an interactivity tier (docs/metrics.md, "Tasks"): how many concurrent agents one
GPU carries while the sweep's frontier still gives p90 interactivity T.

Read like the throughput at a tier (`tiers.read_tiers`): the frontier's points as (p90 interactivity
on the frontier's axis, users) knots, Steffen's monotone curve through them (`MonotoneCurve`), read at
T, then ÷ GPUs. Never extrapolated: outside the frontier's interactivity range every figure is None and `note` says why.

Agents per megawatt at T: one GPU's mean board power read on the same frontier the same way (the points'
`gpu_power_w_per_gpu_mean` as knots), and agents per GPU ÷ that power in MW (`limits.agents_per_mw`).
Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agentx_tui.snapshot import FrontierAxis, PointFigures
from agentx_tui.snapshot.limits import agents_per_mw
from agentx_tui.sweep.axes import DECODE, XY, axis_name, point_x
from agentx_tui.sweep.pareto import MonotoneCurve, frontier_curve
from agentx_tui.units import figure


@dataclass(frozen=True, slots=True)
class AgentsRead:
    """Users (concurrent agents) on the frontier at tier T, in all and per GPU; None when not known."""

    tier: float  # tokens/s/user, p90 interactivity
    users: float | None = None
    agents_per_gpu: float | None = None
    note: str | None = None
    gpu_power_w_per_gpu: float | None = None  # one GPU's mean board power on the frontier at T
    agents_per_mw: float | None = None


def agents_at_tiers(
    frontier_users: Sequence[XY],
    tiers: Sequence[float],
    *,
    gpus: float | None,
    axis: FrontierAxis | None = None,
    frontier_power: Sequence[XY] = (),
) -> tuple[AgentsRead, ...]:
    """Users per GPU at each tier T, from the frontier's points as (p90 interactivity on `axis`, users)
    pairs (a pair without both figures is left out; of two at one interactivity, the one with more users).
    `axis` only names the interactivity in the notes. `frontier_power`, the same points as (p90
    interactivity, one GPU's mean power in W), gives the power at T and the agents per MW there."""
    curve = frontier_curve(frontier_users, range(len(frontier_users)))
    power = frontier_curve(frontier_power, range(len(frontier_power)))
    count = gpus if gpus is not None and math.isfinite(gpus) and gpus > 0 else None
    reads = (_read(curve, float(tier), count, axis) for tier in tiers)
    return tuple(_with_power(read, power) for read in reads)


def _with_power(read: AgentsRead, power: MonotoneCurve) -> AgentsRead:
    watts = power.at(read.tier)
    if watts is None or read.agents_per_gpu is None:
        return replace(read, gpu_power_w_per_gpu=watts)
    return replace(read, gpu_power_w_per_gpu=watts, agents_per_mw=agents_per_mw(read.agents_per_gpu, watts))


def read_agents(
    points: Sequence[PointFigures],
    frontier: Sequence[int],
    tiers: Sequence[float],
    *,
    gpus: float | None,
    axis: FrontierAxis = DECODE,
) -> tuple[AgentsRead, ...]:
    """`agents_at_tiers` over a sweep's points and its frontier on `axis` (indices into `points`, as
    `view_fronts` gives them): x is each point's p90 interactivity on that axis (`point_x`)."""
    pairs: list[XY] = [(point_x(points[i], axis), float(points[i].users)) for i in frontier]
    power: list[XY] = [(point_x(points[i], axis), points[i].gpu_power_w_per_gpu_mean) for i in frontier]
    return agents_at_tiers(pairs, tiers, gpus=gpus, axis=axis, frontier_power=power)


def _read(curve: MonotoneCurve, tier: float, gpus: float | None, axis: FrontierAxis | None) -> AgentsRead:
    words = axis_name(axis)
    if not curve.xs:
        return AgentsRead(tier=tier, note="no measured point")
    if tier > curve.xs[-1]:
        note = f"above the fastest measured point ({words} {figure(curve.xs[-1])} tok/s/user)"
        return AgentsRead(tier=tier, note=note)
    if tier < curve.xs[0]:
        note = f"below the slowest point on the frontier ({words} {figure(curve.xs[0])} tok/s/user)"
        return AgentsRead(tier=tier, note=note)
    users = curve.at(tier)
    if users is None:  # NaN tier: not in any range
        return AgentsRead(tier=tier, note="not a number")
    if gpus is None:
        return AgentsRead(tier=tier, users=users, note="no GPU count: set --gpus")
    return AgentsRead(tier=tier, users=users, agents_per_gpu=users / gpus)

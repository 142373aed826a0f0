"""Sweeps (docs/sweeps.md): one measured point per user count, then the frontier.

`frontier` holds the pure arithmetic: the Pareto front, Steffen's monotone curve through it, the
throughput and cost read at each interactivity tier, and `--sweep auto`'s stop rules; `points` turns
a point's measured window into its figures.
"""

from agentx_tui.sweep.frontier import (
    AUTO_MAX_POINTS,
    TIER_KEY_PREFIXES,
    MonotoneCurve,
    auto_stop_reason,
    frontier_curve,
    next_auto_users,
    pareto_front,
    peak_auto_users,
    point_xy,
    read_tiers,
    tier_report_keys,
    tier_suffix,
)
from agentx_tui.sweep.points import PointWindow

__all__ = [
    "AUTO_MAX_POINTS",
    "TIER_KEY_PREFIXES",
    "MonotoneCurve",
    "PointWindow",
    "auto_stop_reason",
    "frontier_curve",
    "next_auto_users",
    "pareto_front",
    "peak_auto_users",
    "point_xy",
    "read_tiers",
    "tier_report_keys",
    "tier_suffix",
]

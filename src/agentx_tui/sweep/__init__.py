"""Sweeps (docs/sweeps.md): one measured point per user count, then the frontier.

`frontier` holds the pure arithmetic: the Pareto front, Steffen's monotone curve through it, the
throughput and cost read at each interactivity tier, and `--sweep auto`'s stop rules.
"""

from agentx_tui.sweep.frontier import (
    AUTO_MAX_POINTS,
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

__all__ = [
    "AUTO_MAX_POINTS",
    "MonotoneCurve",
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

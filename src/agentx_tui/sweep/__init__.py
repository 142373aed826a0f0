"""Sweeps (docs/sweeps.md): one measured point per user count, then the frontier.

`frontier` holds the pure arithmetic: the Pareto front on either x-axis (the North Star, E2E-normalized
interactivity, or decode interactivity) and the North Star policy, Steffen's monotone curve through
it, the throughput and cost read at each interactivity tier, and `--sweep auto`'s stop rules; `points` turns
a point's measured window into its figures; `intervals` says how sure a point is (95% intervals,
`--precision`), and `tier_intervals` carries that through the frontier to the tier reads; `agents`
reads the users per GPU on the frontier at each tier, as the throughput is read; `chart` is the
sweep as the Frontier pane and the report's pictures draw it.
"""

from agentx_tui.sweep.agents import AgentsRead, agents_at_tiers, read_agents
from agentx_tui.sweep.chart import ChartPoint, ChartTier, ChartY, SweepChart, nice_step
from agentx_tui.sweep.frontier import (
    AGENTS_KEY_PREFIX,
    AUTO_MAX_POINTS,
    DECODE,
    FRONTIER_AXES,
    NORTH_STAR,
    TIER_AXIS_SUFFIX,
    TIER_KEY_PREFIXES,
    MonotoneCurve,
    TierKey,
    auto_stop_reason,
    axis_name,
    axis_title,
    frontier_curve,
    next_auto_users,
    north_star_policy,
    other_axis,
    pareto_front,
    parse_tier_key,
    peak_auto_users,
    point_x,
    point_x_interval,
    point_xy,
    read_tiers,
    tier_report_keys,
    tier_suffix,
    view_fronts,
)
from agentx_tui.sweep.intervals import Interval, PointIntervals, Precision, point_intervals
from agentx_tui.sweep.points import PointWindow, interval_sample
from agentx_tui.sweep.tier_intervals import tier_intervals

__all__ = [
    "AGENTS_KEY_PREFIX",
    "AUTO_MAX_POINTS",
    "DECODE",
    "FRONTIER_AXES",
    "NORTH_STAR",
    "TIER_AXIS_SUFFIX",
    "TIER_KEY_PREFIXES",
    "AgentsRead",
    "ChartPoint",
    "ChartTier",
    "ChartY",
    "Interval",
    "MonotoneCurve",
    "PointIntervals",
    "PointWindow",
    "Precision",
    "SweepChart",
    "TierKey",
    "agents_at_tiers",
    "auto_stop_reason",
    "axis_name",
    "axis_title",
    "frontier_curve",
    "interval_sample",
    "next_auto_users",
    "nice_step",
    "north_star_policy",
    "other_axis",
    "pareto_front",
    "parse_tier_key",
    "peak_auto_users",
    "point_intervals",
    "point_x",
    "point_x_interval",
    "point_xy",
    "read_agents",
    "read_tiers",
    "tier_intervals",
    "tier_report_keys",
    "tier_suffix",
    "view_fronts",
]

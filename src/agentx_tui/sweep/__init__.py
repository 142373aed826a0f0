"""Sweeps (docs/sweeps.md): one measured point per user count, then the frontier.

The pure arithmetic, one job a module: `axes` says which figure x is (the North Star, E2E-normalized
interactivity, or decode interactivity) and reads it off a point; `pareto` finds the Pareto front on
either axis, the North Star policy, and Steffen's monotone curve through the front; `tiers` reads the
throughput and cost at each interactivity tier on that curve; `auto` holds `--sweep auto`'s stop
rules. `points` turns a point's measured window into its figures; `intervals` says how sure a point
is (95% intervals, `--precision`), and `tier_intervals` carries that through the frontier to the tier
reads; `agents` reads the users per GPU on the frontier at each tier, as the throughput is read;
`chart` is the sweep as the Frontier pane and the report's pictures draw it; `agentx` judges a sweep (or
a plain run, its one point) by AgentX's rules. How a tier's reads are spelled as report keys is the
report's (report/_keys.py).
"""

from agentx_tui.sweep.agents import AgentsRead, agents_at_tiers, read_agents
from agentx_tui.sweep.agentx import (
    AGENTX_IDLE_CAP_S,
    AGENTX_POINT_S,
    AGENTX_TIERS,
    DRAM_CAP_BYTES,
    MAX_ERROR_RATE,
    MIN_POINT_S,
    TEST_MIN_POINT_ENV,
    WARMUP_REQUESTS,
    AgentXSetup,
    KvOffload,
    ServerMemory,
    judge,
)
from agentx_tui.sweep.auto import (
    AUTO_MAX_POINTS,
    auto_stop_reason,
    next_auto_users,
    peak_auto_users,
    stopped_growing,
)
from agentx_tui.sweep.axes import (
    DECODE,
    FRONTIER_AXES,
    NORTH_STAR,
    axis_name,
    axis_title,
    measured,
    other_axis,
    point_x,
    point_x_interval,
    point_xy,
)
from agentx_tui.sweep.chart import ChartPoint, ChartTier, ChartY, SweepChart, nice_step
from agentx_tui.sweep.intervals import (
    MIN_REQUESTS,
    Interval,
    PointIntervals,
    Precision,
    is_thin,
    point_intervals,
    thin_words,
)
from agentx_tui.sweep.pareto import MonotoneCurve, frontier_curve, north_star_policy, pareto_front, view_fronts
from agentx_tui.sweep.points import WARMED_KEYS, PointWindow, interval_sample
from agentx_tui.sweep.steady import BATCH_S, Steadiness, steadiness
from agentx_tui.sweep.targets import Step, TierPlanner
from agentx_tui.sweep.tier_intervals import tier_intervals
from agentx_tui.sweep.tiers import read_tiers, tier_suffix

__all__ = [
    "AGENTX_IDLE_CAP_S",
    "AGENTX_POINT_S",
    "AGENTX_TIERS",
    "AUTO_MAX_POINTS",
    "BATCH_S",
    "DECODE",
    "DRAM_CAP_BYTES",
    "FRONTIER_AXES",
    "MAX_ERROR_RATE",
    "MIN_POINT_S",
    "MIN_REQUESTS",
    "NORTH_STAR",
    "TEST_MIN_POINT_ENV",
    "WARMED_KEYS",
    "WARMUP_REQUESTS",
    "AgentXSetup",
    "AgentsRead",
    "ChartPoint",
    "ChartTier",
    "ChartY",
    "Interval",
    "KvOffload",
    "MonotoneCurve",
    "PointIntervals",
    "PointWindow",
    "Precision",
    "ServerMemory",
    "Steadiness",
    "Step",
    "SweepChart",
    "TierPlanner",
    "agents_at_tiers",
    "auto_stop_reason",
    "axis_name",
    "axis_title",
    "frontier_curve",
    "interval_sample",
    "is_thin",
    "judge",
    "measured",
    "next_auto_users",
    "nice_step",
    "north_star_policy",
    "other_axis",
    "pareto_front",
    "peak_auto_users",
    "point_intervals",
    "point_x",
    "point_x_interval",
    "point_xy",
    "read_agents",
    "read_tiers",
    "steadiness",
    "stopped_growing",
    "thin_words",
    "tier_intervals",
    "tier_suffix",
    "view_fronts",
]

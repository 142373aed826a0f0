"""The frontier's axes (docs/sweeps.md): which figure x is, in words and read off a point.

Axes (AgentX): y = total tokens/s per GPU (cache + input + output); x, selectable (`FrontierAxis`):
AgentX's North Star, E2E-normalized interactivity (tok/s/user, 1 / p90 of E2E latency per output
token; `--frontier-axis e2e`, the default), or decode interactivity (1 / p90 of per-request ITL;
`--frontier-axis decode`). Higher is better on both.

Pure functions on a point's figures (`PointFigures`, or any window's `Figures`): no I/O, no clock, no
Textual, so the live pane, the report, the charts and `compare` all read a point the same way.
"""

from __future__ import annotations

import math

from agentx_tui.snapshot import Figures, FrontierAxis, Span

NORTH_STAR: FrontierAxis = "e2e_interactivity"
DECODE: FrontierAxis = "decode_interactivity"
# --frontier-axis NAME → the axis; E2E-normalized interactivity is the default (docs/sweeps.md).
FRONTIER_AXES: dict[str, FrontierAxis] = {"e2e": NORTH_STAR, "decode": DECODE}
# The figure each axis reads, as the report names it: the p90 of either interactivity.
AXIS_FIGURE: dict[FrontierAxis, str] = {
    NORTH_STAR: "e2e_interactivity_p90_tokens_per_s",
    DECODE: "interactivity_p90_tokens_per_s",
}

XY = tuple[float | None, float | None]


def finite(value: float | None) -> float | None:
    """The figure, or None when it is None, NaN or infinite: such a figure places no point."""
    return value if value is not None and math.isfinite(value) else None


def other_axis(axis: FrontierAxis) -> FrontierAxis:
    return DECODE if axis == NORTH_STAR else NORTH_STAR


def axis_name(axis: FrontierAxis | None) -> str:
    """A frontier axis's p90, in words (None: an older recording's, decode)."""
    return "p90 E2E-normalized interactivity" if axis == NORTH_STAR else "p90 interactivity"


def axis_title(axis: FrontierAxis | None) -> str:
    """A chart's x-axis title for a frontier axis (None: an older sweep's, decode)."""
    kind = "E2E-normalized interactivity" if axis == NORTH_STAR else "decode interactivity"
    return f"{kind}, tok/s/user (p90)"


def point_x(point: Figures, axis: FrontierAxis = DECODE) -> float | None:
    """The p90 interactivity on `axis` (tok/s/user) of a point, or of any window's figures."""
    value: float | None = getattr(point, AXIS_FIGURE[axis])
    return value


def point_x_interval(point: Figures, axis: FrontierAxis = DECODE) -> Span:
    """The 95% interval (low, high) of the point's p90 interactivity on `axis`."""
    return point.interval(AXIS_FIGURE[axis])


def measured(point: Figures) -> bool:
    """Whether a point counted any request (docs/sweeps.md): one whose window completed none is not
    measured, so it is placed nowhere, stands on no frontier and feeds no tier read, whatever tokens its
    window saw. A point of before the count (an older report's) is taken as measured."""
    requests = getattr(point, "requests", None)
    return requests is None or requests > 0


def point_xy(point: Figures, axis: FrontierAxis = DECODE) -> XY:
    """Where a point stands: (p90 interactivity on `axis`, total tok/s per GPU); (None, None) when it
    was not `measured`."""
    if not measured(point):
        return (None, None)
    return (point_x(point, axis), point.total_tokens_per_s_per_gpu)

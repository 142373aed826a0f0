"""The frontier's axes (docs/sweeps.md): which figure x is, in words and read off a point.

Axes (AgentX): y = total tokens/s per GPU (cache + input + output); x, selectable (`FrontierAxis`):
AgentX's North Star, E2E-normalized interactivity (tok/s/user, 1 / p90 of E2E latency per output
token; `--frontier-axis e2e`, the default), or decode interactivity (1 / p90 of per-request ITL;
`--frontier-axis decode`). Higher is better on both.

Pure functions on `PointFigures`: no I/O, no clock, no Textual, so the live pane, the report, the
charts and `compare` all read a point the same way.
"""

from __future__ import annotations

import math

from agentx_tui.snapshot import FrontierAxis, PointFigures

NORTH_STAR: FrontierAxis = "e2e_interactivity"
DECODE: FrontierAxis = "decode_interactivity"
# --frontier-axis NAME → the axis; E2E-normalized interactivity is the default (docs/sweeps.md).
FRONTIER_AXES: dict[str, FrontierAxis] = {"e2e": NORTH_STAR, "decode": DECODE}

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

"""`--sweep auto`'s stop rules (docs/sweeps.md): why it stops after the points measured so far, the
next user count, and the most users it can reach.

Pure functions on `PointFigures`: no I/O, no clock, no Textual.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentx_tui.snapshot import FrontierAxis, PointFigures
from agentx_tui.sweep.axes import DECODE, axis_name, finite, measured, point_x
from agentx_tui.sweep.tiers import tier_suffix
from agentx_tui.units import figure

GROWTH_MIN = 0.05  # --sweep auto: "total throughput grows less than 5% twice in a row"
ERROR_RATE_MAX = 0.10  # --sweep auto: "error rate passes 10%"
AUTO_MAX_POINTS = 12  # --sweep auto: "or 12 points are done"


def _throughputs(points: Sequence[PointFigures]) -> tuple[list[float | None], str]:
    # Per GPU when every point has it (the sweep's axis); else the plain total. The GPU count is the same
    # at every point, so the growth ratio is the same either way; mixing the two would not be.
    # A point that was not measured has no throughput to grow from (its window's tokens were requests
    # still in flight): None, which triggers nothing.
    if all(p.total_tokens_per_s_per_gpu is not None for p in points):
        return [finite(p.total_tokens_per_s_per_gpu) if measured(p) else None for p in points], "tok/s per GPU"
    return [finite(p.total_tokens_per_s) if measured(p) else None for p in points], "tok/s"


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
    growth: bool = True,
) -> str | None:
    """Why `--sweep auto` stops after the points measured so far (docs/sweeps.md), or None to go on.

    The rules, checked on the latest point in this order (the first that holds is named): its error rate
    is above 10%; the load generator was saturated there (its figures measure the client, not the
    server); its p90 interactivity on the frontier's `axis` is below the lowest tier (more users only go
    further below); total throughput grew less than 5% on each of the last two steps (unless `growth` is
    False: a point's throughput is not final yet when its window ends, so a sweep judges it apart, with
    `stopped_growing`, once it is); `max_points` points are done. A figure that is None never triggers its
    rule.
    """
    if not points:
        return None
    last = points[-1]
    at = f"at {last.users} users"
    if last.error_rate is not None and last.error_rate > ERROR_RATE_MAX:
        return f"The error rate {at} was {last.error_rate:.1%}, above the {ERROR_RATE_MAX:.0%} limit."
    if last.client_saturated:
        return f"The load generator itself was saturated {at}, so more users would measure the client, not the server."
    x = finite(point_x(last, axis))
    if lowest_tier is not None and x is not None and x < lowest_tier:
        return (
            f"{axis_name(axis)} {at} was {figure(x)} tok/s/user, below the lowest tier "
            f"({tier_suffix(lowest_tier)} tok/s/user)."
        )
    flat = stopped_growing(points) if growth else None
    if flat is not None:
        return flat
    if len(points) >= max_points:
        return f"{len(points)} points done, the most --sweep auto measures."
    return None


def stopped_growing(points: Sequence[PointFigures]) -> str | None:
    """The growth rule, in words, when it holds on the last three points: total throughput grew less than
    5% twice in a row (where throughput stops growing); None otherwise."""
    if len(points) < 3:
        return None
    values, unit = _throughputs(points[-3:])
    a, b, c = values
    # An unknown figure is not "no growth": the other rules stop a sweep that measures nothing.
    if a is not None and b is not None and c is not None and _grew_too_little(a, b) and _grew_too_little(b, c):
        users = ", ".join(str(p.users) for p in points[-3:])
        return (
            f"Total throughput grew less than {GROWTH_MIN:.0%} twice in a row: "
            f"{figure(a)} → {figure(b)} → {figure(c)} {unit} at {users} users."
        )
    return None


def next_auto_users(current: int) -> int:
    """`--sweep auto`'s next user count: double the current one (1 after 0). The 12-point rule bounds it:
    from 1 user the last point has 2,048 (`peak_auto_users`)."""
    return max(1, 2 * current)


def peak_auto_users(start: int) -> int:
    """The most users `--sweep auto` from `start` users can reach: its last point's."""
    return max(1, start) << (AUTO_MAX_POINTS - 1)

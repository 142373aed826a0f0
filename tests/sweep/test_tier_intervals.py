"""The tier reads' 95% intervals (sweep/tier_intervals.py): the points' intervals through the frontier."""

from __future__ import annotations

from collections.abc import Sequence

from agentx_tui.snapshot import PointFigures
from agentx_tui.sweep import pareto_front, point_xy, read_tiers, tier_intervals

XY = ((40.0, 30_000.0), (80.0, 20_000.0), (120.0, 9_000.0), (160.0, 3_000.0))
TIERS = (50.0, 100.0, 150.0, 200.0)


def points(width: float | None = 0.05, *, without: Sequence[int] = ()) -> list[PointFigures]:
    """The points of XY, each with intervals of ±`width` on both figures (none for the `without` ones)."""
    out = []
    for i, (x, y) in enumerate(XY):
        ci = width is not None and i not in without
        out.append(
            PointFigures(
                index=i,
                users=2**i,
                warmup_s=5,
                duration_s=30,
                window_start_s=35.0 * i,
                interactivity_p90_tokens_per_s=x,
                total_tokens_per_s_per_gpu=y,
                interactivity_p90_tokens_per_s_ci_low=x * (1 - width) if ci and width else None,
                interactivity_p90_tokens_per_s_ci_high=x * (1 + width) if ci and width else None,
                total_tokens_per_s_per_gpu_ci_low=y * (1 - width) if ci and width else None,
                total_tokens_per_s_per_gpu_ci_high=y * (1 + width) if ci and width else None,
            )
        )
    return out


def reads(pts: list[PointFigures]) -> dict[float, tuple[float | None, float | None, float | None]]:
    front = pareto_front([point_xy(p) for p in pts])
    found = tier_intervals(pts, front, read_tiers(pts, front, TIERS, usd_per_gpu_hour=2.0, gpus=1))
    return {
        r.tier: (
            r.total_tokens_per_s_per_gpu_ci_low,
            r.total_tokens_per_s_per_gpu,
            r.total_tokens_per_s_per_gpu_ci_high,
        )
        for r in found
    }


def test_every_read_inside_the_range_gets_an_interval_around_it() -> None:
    found = reads(points(0.05))
    for tier in (50.0, 100.0, 150.0):
        low, value, high = found[tier]
        assert low is not None and value is not None and high is not None
        assert low <= value <= high and low < high
    assert found[200.0] == (None, None, None)  # no read beyond the fastest point: no interval either


def test_wider_point_intervals_give_wider_tier_intervals() -> None:
    narrow, wide = reads(points(0.02)), reads(points(0.10))
    for tier in (50.0, 100.0, 150.0):
        n_low, _, n_high = narrow[tier]
        w_low, _, w_high = wide[tier]
        assert n_low is not None and n_high is not None and w_low is not None and w_high is not None
        assert w_high - w_low > n_high - n_low


def test_a_tier_whose_bracketing_points_lack_intervals_has_none() -> None:
    found = reads(points(0.05, without=(1,)))  # 80 tok/s/user: tiers 50 and 100 stand on it
    assert found[50.0][0] is None and found[100.0][0] is None and found[50.0][1] is not None
    low, value, high = found[150.0]
    assert low is not None and value is not None and high is not None and low <= value <= high
    assert all(r[0] is None for r in reads(points(None)).values())


def test_the_monte_carlo_is_seeded_so_a_report_is_reproducible() -> None:
    assert reads(points(0.05)) == reads(points(0.05))

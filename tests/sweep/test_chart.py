"""The sweep as the Frontier pane and the report's pictures both draw it (sweep/chart.py)."""

from __future__ import annotations

import pytest

from agentx_tui.snapshot import PointFigures, TierRead
from agentx_tui.sweep import NORTH_STAR, ChartTier, SweepChart, frontier_curve, nice_step, pareto_front


def point(i: int, x: float | None, y: float | None, **kw: float | None) -> PointFigures:
    return PointFigures(
        index=i,
        users=2**i,
        warmup_s=10,
        duration_s=60,
        window_start_s=70.0 * i,
        interactivity_p90_tokens_per_s=x,
        total_tokens_per_s_per_gpu=y,
        total_tokens_per_s=None if y is None else 2 * y,
        **kw,
    )


def test_points_keep_their_places_and_the_frontier_marks_them() -> None:
    points = [point(0, 100.0, 1000.0), None, point(2, 50.0, 3000.0), point(3, 40.0, 2000.0), point(4, None, 1.0)]
    chart = SweepChart.of(points, (2, 0), ())
    assert chart.per_gpu and chart.frontier == (2, 0)
    assert [p.on_frontier for p in chart.points] == [True, False, True, False, False]
    assert [i for i, _ in chart.placed] == [0, 2, 3]  # the unknown point and the one without x are not placed
    assert chart.curve.xs == (50.0, 100.0) and chart.curve.ys == (3000.0, 1000.0)


def test_a_missing_or_broken_frontier_is_found_again() -> None:
    points = [point(0, 100.0, 1000.0), point(1, 50.0, 3000.0), point(2, 40.0, 2000.0)]
    expected = pareto_front([(100.0, 1000.0), (50.0, 3000.0), (40.0, 2000.0)])
    assert SweepChart.of(points, None, ()).frontier == expected
    assert SweepChart.of(points, (0, 7), ()).frontier == expected


def test_without_a_gpu_count_the_total_is_placed_and_no_tier_is_read() -> None:
    points = [
        PointFigures(
            index=0, users=1, warmup_s=0, duration_s=1, window_start_s=0,
            interactivity_p90_tokens_per_s=60.0, total_tokens_per_s=500.0,
        )
    ]  # fmt: skip
    chart = SweepChart.of(points, (0,), (TierRead(tier=50.0, total_tokens_per_s_per_gpu=400.0),))
    assert not chart.per_gpu and chart.points[0].throughput == 500.0
    assert chart.tiers == (ChartTier(50.0, None, None),)


def test_intervals_are_carried_when_sound_and_tiers_sorted() -> None:
    good = point(0, 100.0, 1000.0, total_tokens_per_s_per_gpu_ci_low=900.0, total_tokens_per_s_per_gpu_ci_high=1100.0)
    upside_down = point(
        1, 50.0, 3000.0, interactivity_p90_tokens_per_s_ci_low=60.0, interactivity_p90_tokens_per_s_ci_high=40.0
    )
    tiers = (
        TierRead(tier=100.0, total_tokens_per_s_per_gpu=1000.0),
        TierRead(
            tier=50.0,
            total_tokens_per_s_per_gpu=3000.0,
            total_tokens_per_s_per_gpu_ci_low=2800.0,
            total_tokens_per_s_per_gpu_ci_high=3100.0,
        ),
    )
    chart = SweepChart.of([good, upside_down], (1, 0), tiers)
    assert chart.points[0].throughput_ci == (900.0, 1100.0) and chart.points[1].interactivity_p90_ci is None
    assert chart.tiers == (ChartTier(50.0, 3000.0, (2800.0, 3100.0)), ChartTier(100.0, 1000.0, None))
    assert chart.intervals
    assert not SweepChart.of([point(0, 1.0, 1.0)], (0,), ()).intervals


def test_the_curve_is_the_frontier_curve() -> None:
    points = [point(i, x, y) for i, (x, y) in enumerate([(190.0, 800.0), (140.0, 9800.0), (66.0, 25500.0)])]
    chart = SweepChart.of(points, (2, 1, 0), ())
    expected = frontier_curve([(190.0, 800.0), (140.0, 9800.0), (66.0, 25500.0)], (2, 1, 0))
    assert chart.curve == expected


def test_on_the_north_star_points_are_placed_and_their_front_found_by_e2e_interactivity() -> None:
    # Decode puts the 2-user point first; end to end it waits and falls behind the 1-user one.
    points = [
        point(0, 100.0, 1000.0, e2e_interactivity_p90_tokens_per_s=90.0, e2e_interactivity_p50_tokens_per_s=95.0),
        point(
            1, 120.0, 2000.0, e2e_interactivity_p90_tokens_per_s=60.0,
            e2e_interactivity_p90_tokens_per_s_ci_low=50.0, e2e_interactivity_p90_tokens_per_s_ci_high=70.0,
        ),
    ]  # fmt: skip
    chart = SweepChart.of(points, None, (), axis=NORTH_STAR)
    assert chart.axis == NORTH_STAR and [p.interactivity_p90 for p in chart.points] == [90.0, 60.0]
    assert chart.frontier == (1, 0)  # both on the North Star's front; on decode, point 1 beats point 0
    assert SweepChart.of(points, None, ()).frontier == (1,)
    assert chart.points[1].interactivity_p90_ci == (50.0, 70.0) and chart.points[0].interactivity_p50 == 95.0


def test_by_tasks_per_hour_the_points_move_and_the_reads_are_not_placed() -> None:
    points = [
        point(0, 100.0, 1000.0, tasks_per_hour_per_gpu=2.0),
        point(1, 50.0, 3000.0, total_tokens_per_s_per_gpu_ci_low=2900.0, total_tokens_per_s_per_gpu_ci_high=3100.0),
    ]
    tiers = (TierRead(tier=75.0, total_tokens_per_s_per_gpu=2000.0),)
    chart = SweepChart.of(points, (1, 0), tiers, y="tasks")
    assert chart.y == "tasks" and [p.throughput for p in chart.points] == [2.0, None]
    assert chart.points[1].throughput_ci is None and [i for i, _ in chart.placed] == [0]
    assert chart.frontier == (1, 0)  # the frontier stays the one read on throughput
    assert chart.tiers == (ChartTier(75.0, None, None),)


@pytest.mark.parametrize(
    ("span", "count", "step"),
    [(100.0, 5, 20.0), (150.0, 8, 20.0), (28_560.0, 6, 5000.0), (1.0, 4, 0.5), (100.0, 10, 10.0), (0.0, 3, 1.0)],
)
def test_nice_steps_are_one_two_or_five_times_a_power_of_ten(span: float, count: int, step: float) -> None:
    assert nice_step(span, count) == pytest.approx(step)


def test_the_chart_is_on_the_frontier_axis_and_keeps_its_tier_reads_only() -> None:
    """A North Star sweep places each point by its E2E-normalized p90 and draws the tiers read on it;
    the decode reads beside them are the report's, not this picture's."""
    points = [
        PointFigures(
            index=i, users=u, warmup_s=1, duration_s=5, window_start_s=i * 6.0, total_tokens_per_s_per_gpu=y,
            interactivity_p90_tokens_per_s=decode, e2e_interactivity_p90_tokens_per_s=e2e,
            e2e_interactivity_p50_tokens_per_s=e2e * 1.2, e2e_interactivity_p90_tokens_per_s_ci_low=e2e * 0.9,
            e2e_interactivity_p90_tokens_per_s_ci_high=e2e * 1.1,
        )
        for i, (u, decode, e2e, y) in enumerate([(1, 100.0, 70.0, 500.0), (4, 95.0, 30.0, 1500.0)])
    ]  # fmt: skip
    tiers = (
        TierRead(tier=50.0, axis="e2e_interactivity", total_tokens_per_s_per_gpu=1000.0),
        TierRead(tier=97.0, axis="decode_interactivity", total_tokens_per_s_per_gpu=1000.0),
    )
    chart = SweepChart.of(points, None, tiers, "e2e_interactivity")
    assert chart.axis == "e2e_interactivity"
    assert [p.interactivity_p90 for p in chart.points] == [70.0, 30.0]
    assert chart.points[0].interactivity_p50 == pytest.approx(84.0)
    assert chart.points[1].interactivity_p90_ci == pytest.approx((27.0, 33.0))
    assert [t.tier for t in chart.tiers] == [50.0]
    on_decode = SweepChart.of(points, None, tiers, "decode_interactivity")
    assert [p.interactivity_p90 for p in on_decode.points] == [100.0, 95.0] and [t.tier for t in on_decode.tiers] == [
        97.0
    ]
    assert SweepChart.of(points, None, tiers).axis == "decode_interactivity"  # an older sweep's: decode

"""The frontier arithmetic of docs/sweeps.md: Pareto front, Steffen's monotone curve, tier reads, auto's stop rules.

Expected values are worked out by hand in the comments, from the formulas in the module's docstrings.
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx_tui.snapshot import PointFigures, TierRead
from agentx_tui.sweep.frontier import (
    MonotoneCurve,
    auto_stop_reason,
    frontier_curve,
    next_auto_users,
    pareto_front,
    read_tiers,
    tier_report_keys,
)


def point(index: int, users: int, x: float | None, y: float | None, **figures: Any) -> PointFigures:
    return PointFigures(
        index=index,
        users=users,
        warmup_s=20,
        duration_s=60,
        window_start_s=80.0 * index + 20,
        interactivity_p90_tokens_per_s=x,
        total_tokens_per_s_per_gpu=y,
        **figures,
    )


# --- Pareto front ---------------------------------------------------------------------------------


def test_the_frontier_drops_dominated_and_unknown_points_and_sorts_by_interactivity() -> None:
    points = [
        (190.0, 800.0),  # 0: fastest, least throughput: on the frontier
        (176.0, 3000.0),  # 1
        (140.0, 9800.0),  # 2
        (100.0, 9000.0),  # 3: slower AND less throughput than 2: the non-monotone point, dropped
        (80.0, 12000.0),  # 4
        (None, 15000.0),  # 5: no interactivity: never on the frontier
        (60.0, 11000.0),  # 6: dominated by 4
        (150.0, None),  # 7: no throughput
        (float("nan"), 1e9),  # 8: not a number
    ]
    assert pareto_front(points) == (4, 2, 1, 0)


def test_frontier_ties_are_broken_deterministically() -> None:
    # Same x: the higher y stays. Same y: the higher x stays. Exact duplicates: the lowest index stays.
    assert pareto_front([(100.0, 5.0), (100.0, 7.0)]) == (1,)
    assert pareto_front([(90.0, 5.0), (100.0, 5.0)]) == (1,)
    assert pareto_front([(50.0, 9.0), (100.0, 5.0), (100.0, 5.0), (50.0, 9.0)]) == (0, 1)


def test_frontier_of_nothing_is_empty() -> None:
    assert pareto_front([]) == ()
    assert pareto_front([(None, None), (1.0, None)]) == ()


finite = st.floats(min_value=0, max_value=1e6, allow_nan=False)


@given(st.lists(st.tuples(finite, finite), max_size=25))
def test_no_frontier_point_is_dominated_and_every_other_point_is(points: list[tuple[float, float]]) -> None:
    front = pareto_front(points)

    def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
        return a[0] >= b[0] and a[1] >= b[1] and a != b

    for i in front:
        assert not any(dominates(p, points[i]) for p in points)
    for j, p in enumerate(points):
        if j not in front:
            assert any(dominates(points[i], p) or points[i] == p for i in front)
    xs = [points[i][0] for i in front]
    ys = [points[i][1] for i in front]
    assert xs == sorted(set(xs))  # strictly increasing
    assert ys == sorted(set(ys), reverse=True)  # strictly decreasing


# --- Steffen's monotone curve ---------------------------------------------------------------------

# Four knots, uneven spacing. h = (10, 20, 10); secants s = (-20, -30, -10).
# Interior (Steffen): p1 = (-20·20 + -30·10)/30 = -70/3, slope1 = -2·min(20, 30, 35/3) = -70/3;
#                    p2 = (-30·10 + -10·20)/30 = -50/3, slope2 = -2·min(30, 10, 25/3) = -50/3.
# Ends (d3): slope0 = (3·-20 + 70/3)/2 = -55/3; slope3 = (3·-10 + 50/3)/2 = -20/3.
XS = (10.0, 20.0, 40.0, 50.0)
YS = (1000.0, 800.0, 200.0, 100.0)


def test_steffen_slopes_by_hand() -> None:
    curve = MonotoneCurve.through(XS, YS)
    assert curve.slopes == pytest.approx((-55 / 3, -70 / 3, -50 / 3, -20 / 3))


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        # t = 1/2 on [10, 20]: (1000 + 800)/2 + (h/8)(slope0 - slope1) = 900 + 1.25·(-55/3 + 70/3) = 906.25
        (15.0, 906.25),
        # t = 1/4 on [20, 40]: 0.84375·800 + 0.140625·20·(-70/3) + 0.15625·200 + 0.046875·20·(50/3) = 656.25
        (25.0, 656.25),
        # t = 1/2 on [20, 40]: 500 + 2.5·(-70/3 + 50/3) = 483.33…
        (30.0, 500 - 50 / 3),
        (10.0, 1000.0),
        (40.0, 200.0),
        (50.0, 100.0),
    ],
)
def test_steffen_values_by_hand(x: float, expected: float) -> None:
    assert MonotoneCurve.through(XS, YS).at(x) == pytest.approx(expected)


def test_three_points_match_d3_monotone_x() -> None:
    # d3's curveMonotoneX on (0,0) (1,1) (2,4): interior 2·min(1, 3, 1) = 2, ends (3·1-2)/2 and (3·3-2)/2.
    curve = MonotoneCurve.through([0.0, 1.0, 2.0], [0.0, 1.0, 4.0])
    assert curve.slopes == pytest.approx((0.5, 2.0, 3.5))
    # t = 1/2 on [0, 1]: 0.5·0 + 0.125·0.5 + 0.5·1 - 0.125·2 = 0.3125
    assert curve.at(0.5) == pytest.approx(0.3125)


def test_a_peak_gets_a_flat_tangent_and_no_overshoot() -> None:
    curve = MonotoneCurve.through([0.0, 1.0, 2.0], [0.0, 1.0, 0.0])
    assert curve.slopes[1] == 0
    assert max(curve.at(i / 100) or 0 for i in range(201)) == 1.0


def test_two_points_give_the_straight_line() -> None:
    curve = MonotoneCurve.through([10.0, 30.0], [300.0, 100.0])
    assert curve.at(15.0) == pytest.approx(250.0)
    assert curve.at(25.0) == pytest.approx(150.0)


def test_one_point_gives_only_its_own_value() -> None:
    curve = MonotoneCurve.through([42.0], [7.0])
    assert curve.at(42.0) == 7.0
    assert curve.at(41.9) is None


def test_the_curve_is_never_extrapolated() -> None:
    curve = MonotoneCurve.through(XS, YS)
    assert curve.at(9.999) is None
    assert curve.at(50.001) is None
    assert curve.at(math.nan) is None
    assert MonotoneCurve.through([], []).at(1.0) is None


def test_knots_must_be_strictly_increasing() -> None:
    with pytest.raises(ValueError, match="strictly increasing"):
        MonotoneCurve.through([1.0, 1.0], [2.0, 3.0])
    with pytest.raises(ValueError, match="same length"):
        MonotoneCurve.through([1.0, 2.0], [2.0])


def test_bezier_pieces_are_the_hermite_pieces() -> None:
    curve = MonotoneCurve.through(XS, YS)
    for (x0, y0), (c1x, c1y, c2x, c2y, x1, y1) in zip(zip(XS[:-1], YS[:-1], strict=True), curve.bezier(), strict=True):
        for t in (0.25, 0.5, 0.75):
            bx = (1 - t) ** 3 * x0 + 3 * (1 - t) ** 2 * t * c1x + 3 * (1 - t) * t * t * c2x + t**3 * x1
            by = (1 - t) ** 3 * y0 + 3 * (1 - t) ** 2 * t * c1y + 3 * (1 - t) * t * t * c2y + t**3 * y1
            assert curve.at(bx) == pytest.approx(by)


@st.composite
def knots(draw: st.DrawFn) -> tuple[list[float], list[float]]:
    n = draw(st.integers(min_value=2, max_value=8))
    gaps = draw(st.lists(st.floats(min_value=0.01, max_value=1000), min_size=n - 1, max_size=n - 1))
    start = draw(st.floats(min_value=-1000, max_value=1000))
    xs = [start]
    for gap in gaps:
        xs.append(xs[-1] + gap)
    ys = draw(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=n, max_size=n))
    return xs, ys


@given(knots())
def test_the_curve_passes_through_its_knots_and_is_monotone_between_them(data: tuple[list[float], list[float]]) -> None:
    xs, ys = data
    curve = MonotoneCurve.through(xs, ys)
    eps = 1e-9 * (max(abs(y) for y in ys) + 1)
    for x, y in zip(xs, ys, strict=True):
        assert curve.at(x) == y
    for i in range(len(xs) - 1):
        samples = [curve.at(xs[i] + (xs[i + 1] - xs[i]) * k / 16) for k in range(17)]
        values = [v for v in samples if v is not None]
        assert len(values) == 17
        lo, hi = min(ys[i], ys[i + 1]), max(ys[i], ys[i + 1])
        assert all(lo - eps <= v <= hi + eps for v in values)  # no overshoot
        step = 1 if ys[i + 1] >= ys[i] else -1
        assert all(step * (b - a) >= -eps for a, b in pairwise(values))


def test_frontier_curve_skips_unknown_points_and_repeated_x() -> None:
    curve = frontier_curve([(10.0, 5.0), (None, 9.0), (10.0, 3.0), (20.0, 1.0)], [0, 1, 2, 3])
    assert curve.xs == (10.0, 20.0)
    assert curve.ys == (5.0, 1.0)


# --- tier reads -----------------------------------------------------------------------------------


def sweep_points() -> list[PointFigures]:
    # The four knots above, plus a dominated point (it must not bend the curve).
    return [
        point(0, 1, 50.0, 100.0),
        point(1, 2, 40.0, 200.0),
        point(2, 4, 20.0, 800.0),
        point(3, 8, 10.0, 1000.0),
        point(4, 16, 15.0, 700.0),
    ]


def test_tiers_read_on_the_frontier_with_cost() -> None:
    points = sweep_points()
    front = pareto_front([(p.interactivity_p90_tokens_per_s, p.total_tokens_per_s_per_gpu) for p in points])
    assert front == (3, 2, 1, 0)
    below, on_knot, between, above = read_tiers(points, front, [5, 10, 15, 60], usd_per_gpu_hour=2.0)

    assert on_knot.total_tokens_per_s_per_gpu == 1000.0
    assert on_knot.note is None
    # 906.25 tok/s per GPU at 2 USD/GPU-hour: 906.25·3600/2 = 1,631,250 tokens per dollar,
    # and 2·10⁶/(906.25·3600) = 0.61303 USD per million tokens.
    assert between.total_tokens_per_s_per_gpu == pytest.approx(906.25)
    assert between.tokens_per_dollar_total == pytest.approx(1_631_250)
    assert between.usd_per_million_total_tokens == pytest.approx(2e6 / (906.25 * 3600))
    assert between.tier == 15.0

    for read, words in (
        (below, "below the slowest point on the frontier"),
        (above, "above the fastest measured point"),
    ):
        assert read.total_tokens_per_s_per_gpu is None
        assert read.tokens_per_dollar_total is None
        assert read.usd_per_million_total_tokens is None
        assert read.note is not None and words in read.note
    assert below.note is not None and "10 tok/s/user" in below.note
    assert above.note is not None and "(p90 interactivity 50 tok/s/user)" in above.note


def test_without_a_price_the_throughput_is_read_but_not_the_cost() -> None:
    points = sweep_points()
    (read,) = read_tiers(points, (3, 2, 1, 0), [15], usd_per_gpu_hour=None)
    assert read.total_tokens_per_s_per_gpu == pytest.approx(906.25)
    assert read.tokens_per_dollar_total is None
    assert read.usd_per_million_total_tokens is None
    assert read.note is not None and "no price" in read.note


def test_no_measured_point_reads_nothing() -> None:
    (read,) = read_tiers([point(0, 1, None, 500.0)], (), [100], usd_per_gpu_hour=2.0)
    assert read == TierRead(tier=100.0, note="no measured point")


def test_a_single_point_is_read_only_exactly_on_its_tier() -> None:
    points = [point(0, 8, 100.0, 5000.0)]
    on, off = read_tiers(points, (0,), [100, 50], usd_per_gpu_hour=3.6)
    assert on.total_tokens_per_s_per_gpu == 5000.0
    # 3.6·10⁶/(5000·3600) = 0.2 USD per million; 5·10⁶ tokens per dollar.
    assert on.usd_per_million_total_tokens == pytest.approx(0.2)
    assert on.tokens_per_dollar_total == pytest.approx(5e6)
    assert off.total_tokens_per_s_per_gpu is None and off.note is not None


def test_two_frontier_points_read_linearly() -> None:
    points = [point(0, 4, 30.0, 100.0), point(1, 2, 10.0, 300.0)]
    (read,) = read_tiers(points, (1, 0), [15], usd_per_gpu_hour=1.0)
    assert read.total_tokens_per_s_per_gpu == pytest.approx(250.0)


def test_tier_report_keys_use_the_tier_as_written() -> None:
    reads = (
        TierRead(
            tier=100.0,
            total_tokens_per_s_per_gpu=1.0,
            tokens_per_dollar_total=2.0,
            usd_per_million_total_tokens=3.0,
            total_tokens_per_s_per_gpu_ci_low=0.9,
            total_tokens_per_s_per_gpu_ci_high=1.2,
        ),
        TierRead(tier=37.5, note="above the fastest measured point"),
    )
    assert tier_report_keys(reads) == {
        "total_tokens_per_s_per_gpu_at_100": 1.0,
        "total_tokens_per_s_per_gpu_at_100_ci_low": 0.9,
        "total_tokens_per_s_per_gpu_at_100_ci_high": 1.2,
        "tokens_per_dollar_total_at_100": 2.0,
        "usd_per_million_total_tokens_at_100": 3.0,
        "total_tokens_per_s_per_gpu_at_37.5": None,
        "total_tokens_per_s_per_gpu_at_37.5_ci_low": None,
        "total_tokens_per_s_per_gpu_at_37.5_ci_high": None,
        "tokens_per_dollar_total_at_37.5": None,
        "usd_per_million_total_tokens_at_37.5": None,
    }


# --- --sweep auto ---------------------------------------------------------------------------------


def steady(n: int, **last: Any) -> list[PointFigures]:
    """n points whose throughput doubles each time, interactivity well above 30; `last` overrides the last."""
    points = [point(i, 2**i, 200.0 - i, 1000.0 * 2**i, error_rate=0.0) for i in range(n)]
    points[-1] = points[-1].model_copy(update=last)
    return points


def test_auto_goes_on_while_nothing_stops_it() -> None:
    assert auto_stop_reason([], lowest_tier=30) is None
    assert auto_stop_reason(steady(5), lowest_tier=30) is None


def test_auto_stops_above_ten_percent_errors() -> None:
    assert auto_stop_reason(steady(3, error_rate=0.10), lowest_tier=30) is None  # "passes 10%": not at 10%
    reason = auto_stop_reason(steady(3, error_rate=0.125), lowest_tier=30)
    assert reason == "The error rate at 4 users was 12.5%, above the 10% limit."


def test_auto_stops_when_the_client_saturates() -> None:
    reason = auto_stop_reason(steady(2, client_saturated=True), lowest_tier=30)
    assert reason is not None and reason.startswith("The load generator itself was saturated at 2 users")


def test_auto_stops_below_the_lowest_tier() -> None:
    reason = auto_stop_reason(steady(4, interactivity_p90_tokens_per_s=28.4), lowest_tier=30)
    assert reason == "p90 interactivity at 8 users was 28.4 tok/s/user, below the lowest tier (30 tok/s/user)."
    assert auto_stop_reason(steady(4, interactivity_p90_tokens_per_s=28.4), lowest_tier=None) is None
    assert auto_stop_reason(steady(4, interactivity_p90_tokens_per_s=None), lowest_tier=30) is None


def test_auto_stops_when_throughput_grew_less_than_five_percent_twice_in_a_row() -> None:
    points = steady(4)  # 1000, 2000, 4000, 8000
    once = [*points[:3], points[3].model_copy(update={"total_tokens_per_s_per_gpu": 4100.0})]
    assert auto_stop_reason(once, lowest_tier=30) is None  # only once
    twice = [*once, point(4, 16, 150.0, 4300.0)]
    # 4000 → 4100 (+2.5%) → 4300 (+4.9%)
    assert auto_stop_reason(twice, lowest_tier=30) == (
        "Total throughput grew less than 5% twice in a row: 4,000 → 4,100 → 4,300 tok/s per GPU at 4, 8, 16 users."
    )
    grew_enough = [*once, point(4, 16, 150.0, 4305.0)]  # +5.0% exactly is not "less than 5%"
    assert auto_stop_reason(grew_enough, lowest_tier=30) is None


def test_the_plateau_rule_uses_total_throughput_when_the_gpu_count_is_unknown() -> None:
    points = [point(i, 2**i, 100.0, None, total_tokens_per_s=t) for i, t in enumerate((900.0, 910.0, 905.0))]
    reason = auto_stop_reason(points, lowest_tier=30)
    assert reason is not None and "900 → 910 → 905 tok/s at 1, 2, 4 users" in reason


def test_an_unknown_throughput_is_not_a_plateau() -> None:
    points = [point(i, 2**i, 100.0, None) for i in range(3)]
    assert auto_stop_reason(points, lowest_tier=30) is None


def test_auto_stops_after_twelve_points() -> None:
    assert auto_stop_reason(steady(11), lowest_tier=30) is None
    assert auto_stop_reason(steady(12), lowest_tier=30) == "12 points done, the most --sweep auto measures."
    assert auto_stop_reason(steady(3), lowest_tier=30, max_points=3) is not None


def test_the_first_rule_that_holds_is_named() -> None:
    reason = auto_stop_reason(steady(12, error_rate=0.5, interactivity_p90_tokens_per_s=1.0), lowest_tier=30)
    assert reason is not None and reason.startswith("The error rate")


def test_auto_doubles_the_users() -> None:
    assert [next_auto_users(u) for u in (0, 1, 2, 48)] == [1, 2, 4, 96]

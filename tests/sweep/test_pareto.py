"""The Pareto front and Steffen's monotone curve through it (docs/sweeps.md; sweep/pareto.py).

Expected values are worked out by hand in the comments, from the formulas in the module's docstrings.
"""

from __future__ import annotations

import math
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx_tui.sweep.pareto import MonotoneCurve, frontier_curve, pareto_front

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

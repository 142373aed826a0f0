"""The one percentile rule (measure/percentile.py): linear between the closest ranks, numpy's default,
against a reference written another way and against values worked out by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentx_tui.measure import linear_quantile
from agentx_tui.measure.percentile import interpolated


def reference(values: list[float], q: float) -> float:
    """numpy's `method="linear"` as its documentation draws it: the broken line through the points
    (k / (n − 1), k-th smallest value), read at q."""
    xs = sorted(values)
    n = len(xs)
    if n == 1:
        return xs[0]
    for k in range(n - 1):
        left, right = k / (n - 1), (k + 1) / (n - 1)
        if left <= q <= right:
            return xs[k] + (xs[k + 1] - xs[k]) * (q - left) / (right - left)
    raise AssertionError(f"q {q} outside [0, 1]")


values_strategy = st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=60)


@settings(max_examples=300, deadline=None)
@given(values_strategy, st.floats(min_value=0.0, max_value=1.0))
def test_the_rule_is_the_broken_line_through_the_ordered_values(values: list[float], q: float) -> None:
    ordered = sorted(values)
    got = linear_quantile(ordered, q)
    assert got == pytest.approx(reference(values, q), rel=1e-9, abs=1e-6)
    # Always between the two closest ranks' values, so within the sample's range and rising with q.
    assert ordered[0] <= got <= ordered[-1]
    assert linear_quantile(ordered, min(1.0, q + 0.1)) >= got - 1e-6


def test_known_values() -> None:
    # The six tasks of the issue: h = 0.5 × 5 = 2.5 → 4.59 + 0.5 × (7.53 − 4.59) = 6.06;
    # h = 0.9 × 5 = 4.5 → 7.93 + 0.5 × (9.36 − 7.93) = 8.645 (nearest rank on 2% buckets read 4.55 for the p50).
    tasks = [3.53, 4.30, 4.59, 7.53, 7.93, 9.36]
    assert linear_quantile(tasks, 0.5) == pytest.approx(6.06)
    assert linear_quantile(tasks, 0.9) == pytest.approx(8.645)
    # numpy.percentile([1, 2, 3, 4], [0, 25, 50, 90, 100]) = 1, 1.75, 2.5, 3.7, 4.
    for q, want in ((0.0, 1.0), (0.25, 1.75), (0.5, 2.5), (0.9, 3.7), (1.0, 4.0)):
        assert linear_quantile([1.0, 2.0, 3.0, 4.0], q) == pytest.approx(want)
    assert linear_quantile([2.0, 10.0], 0.5) == 6.0  # a p50 of two is their mean
    assert linear_quantile([7.0], 0.99) == 7.0


def test_no_values_and_a_quantile_outside_0_to_1_are_refused() -> None:
    with pytest.raises(ValueError, match="no values"):
        linear_quantile([], 0.5)
    with pytest.raises(ValueError, match="within 0 to 1"):
        linear_quantile([1.0], 1.5)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(min_value=0, max_value=100, allow_nan=False), st.integers(1, 5)), min_size=1,
                max_size=20), st.floats(min_value=0.0, max_value=1.0))  # fmt: skip
def test_a_whole_weight_counts_as_that_many_repeated_values(pairs: list[tuple[float, int]], q: float) -> None:
    pairs.sort()
    repeated = [value for value, weight in pairs for _ in range(weight)]
    cumulative = [sum(w for _, w in pairs[: i + 1]) for i in range(len(pairs))]

    def value_at(rank: int) -> float:
        return pairs[next(i for i, c in enumerate(cumulative) if c > rank)][0]

    assert interpolated(q, float(len(repeated)), value_at) == pytest.approx(linear_quantile(repeated, q))


def test_a_total_weight_under_one_reads_the_first_rank() -> None:
    asked: list[int] = []

    def value_at(rank: int) -> float:
        asked.append(rank)
        return 3.0

    assert interpolated(0.99, 0.4, value_at) == 3.0 and asked == [0]
    assert math.isclose(interpolated(0.5, 3.0, lambda rank: float(rank)), 1.0)

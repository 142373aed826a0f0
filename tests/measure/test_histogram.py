"""Log histograms and `Samples` (measure/histogram.py): the linear rule on bucket middles, within 1% of
the exact values' linear percentile; exact values kept up to the limit, the histogram beyond."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentx_tui.measure import LogHistogram, linear_quantile
from agentx_tui.measure.histogram import EXACT_LIMIT, Samples

# Half a bucket: a bucket's middle is within √1.02 − 1 of every value in it (a hair more for a value
# the floating-point log puts in the next bucket).
HALF_BUCKET = math.sqrt(1.02) - 1 + 1e-9


def histogram_of(values: list[float]) -> LogHistogram:
    h = LogHistogram()
    for v in values:
        h.add(v)
    return h


def test_histogram_quantiles_are_within_half_a_bucket_of_the_exact_ones() -> None:
    rng = random.Random(0)
    values = sorted(rng.lognormvariate(-3, 1) for _ in range(20000))
    h = histogram_of(values)
    for q in (0.5, 0.9, 0.99):
        assert h.quantile(q) == pytest.approx(linear_quantile(values, q), rel=HALF_BUCKET)
    assert LogHistogram().quantile(0.5) is None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(min_value=1e-6, max_value=1e6, allow_nan=False), min_size=1, max_size=40),
    st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0]) | st.floats(0.0, 1.0),
)
def test_the_histogram_agrees_with_the_exact_linear_percentile(values: list[float], q: float) -> None:
    got = histogram_of(values).quantile(q)
    assert got is not None
    assert got == pytest.approx(linear_quantile(sorted(values), q), rel=HALF_BUCKET)


def test_small_counts_interpolate_as_the_exact_rule_does() -> None:
    # A p50 of two is their mean, not the lower one (nearest rank read 1.0 here).
    assert histogram_of([1.0, 3.0]).quantile(0.5) == pytest.approx(2.0, rel=HALF_BUCKET)
    # The six tasks of the issue: 6.06 s by the linear rule; nearest rank read the third, 4.55 s.
    tasks = [3.53, 4.30, 4.59, 7.53, 7.93, 9.36]
    assert histogram_of(tasks).quantile(0.5) == pytest.approx(6.06, rel=HALF_BUCKET)


def test_weights_count_as_repeated_values_and_merging_changes_nothing() -> None:
    weighted, repeated = LogHistogram(), LogHistogram()
    for value, weight in ((0.01, 3), (0.02, 1), (0.5, 2)):
        weighted.add(value, float(weight))
        for _ in range(weight):
            repeated.add(value)
    for q in (0.0, 0.3, 0.5, 0.8, 0.9, 1.0):
        assert weighted.quantile(q) == pytest.approx(repeated.quantile(q))
    # Six values, the p50 at rank h = 2.5: 0.01 + 0.5 × (0.02 − 0.01); one more 0.02 puts it at h = 3.
    assert weighted.quantile(0.5) == pytest.approx(0.015, rel=HALF_BUCKET)
    merged = LogHistogram(weighted.buckets)
    merged.merge(histogram_of([0.02]))
    assert merged.total == 7 and merged.quantile(0.5) == pytest.approx(0.02, rel=HALF_BUCKET)


def test_samples_are_exact_up_to_the_limit_then_the_histogram() -> None:
    samples = Samples()
    assert samples.quantile(0.5) is None
    values = [1.0 + (i * 7919 % EXACT_LIMIT) / 100 for i in range(EXACT_LIMIT)]  # every value once, shuffled
    for v in values:
        samples.add(v)
    assert samples.exact is not None and len(samples.exact) == EXACT_LIMIT
    for q in (0.5, 0.9, 0.99):
        assert samples.quantile(q) == linear_quantile(sorted(values), q)  # exact: no bucket in it
    samples.add(1000.0)  # one past the limit: the exact values are released, the histogram answers
    assert samples.exact is None and samples.count == EXACT_LIMIT + 1
    for q in (0.5, 0.9, 0.99):
        got = samples.quantile(q)
        assert got == samples.histogram.quantile(q)
        assert got == pytest.approx(linear_quantile(sorted([*values, 1000.0]), q), rel=HALF_BUCKET)


def test_samples_stay_bounded_whatever_their_count() -> None:
    samples = Samples()
    rng = random.Random(1)
    for _ in range(5 * EXACT_LIMIT):
        samples.add(rng.uniform(1.0, 100.0))
    # Past the limit only the buckets remain: 1 to 100 spans log(100) / log(1.02) ≈ 233 of them.
    assert samples.exact is None and len(samples.histogram.buckets) <= 234
    p90 = samples.quantile(0.9)
    assert p90 is not None and 85.0 < p90 < 95.0

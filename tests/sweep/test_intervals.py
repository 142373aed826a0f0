"""A sweep point's 95% intervals (sweep/intervals.py): the math on known distributions, the guards
against small samples, and the `--precision` rule."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from agentx_tui.sweep.intervals import (
    MIN_REQUESTS,
    Interval,
    PointIntervals,
    Precision,
    batch_quantile,
    batch_throughput,
    cluster_throughput,
    point_intervals,
    precision_of,
    t975,
)
from tests.sweep.samples import buckets, p90_exponential_trees, sample

# --- the pieces -------------------------------------------------------------------------------------


def test_t_quantiles_match_the_table_and_tend_to_the_normal() -> None:
    assert t975(1) == 12.706 and t975(9) == 2.262 and t975(30) == 2.042
    assert t975(31) == pytest.approx(2.040, abs=1e-3)
    assert t975(120) == pytest.approx(1.980, abs=1e-3)
    assert t975(10_000) == pytest.approx(1.960, abs=1e-3)
    with pytest.raises(ValueError):
        t975(0)


def test_an_interval_is_widened_to_hold_its_value_and_says_its_larger_half_width() -> None:
    assert Interval(10.0, 12.0).around(9.0) == Interval(9.0, 12.0)
    assert Interval(10.0, 12.0).around(11.0) == Interval(10.0, 12.0)
    assert Interval(9.0, 12.0).relative_half_width(10.0) == pytest.approx(0.2)
    assert Interval(9.0, 12.0).relative_half_width(0.0) is None
    assert Interval(9.0, 12.0).relative_half_width(None) is None


# --- known distributions ------------------------------------------------------------------------------


def test_batch_means_cover_the_true_rate_of_independent_sub_windows() -> None:
    rng = random.Random(11)
    trials, hits = 400, 0
    for _ in range(trials):
        slots = [rng.expovariate(1 / 500) for _ in range(20)]  # 20 s of a 500 tok/s Poisson-like stream
        ci = batch_throughput(sample(slot_tokens=slots, requests=100), 10)
        assert ci is not None
        hits += ci.low <= 500 <= ci.high
    assert 0.90 <= hits / trials <= 0.99


def test_a_steady_stream_has_an_interval_of_no_width() -> None:
    steady = sample(slot_tokens=[1000.0] * 20, slot_itls=[[0.01] * 5] * 20, requests=100)
    tput, itl = batch_throughput(steady), batch_quantile(steady)
    assert tput == Interval(1000.0, 1000.0)
    assert itl is not None and itl.high == pytest.approx(itl.low) == pytest.approx(0.01, rel=0.01)


# --- small samples and reproducibility -----------------------------------------------------------------


def test_too_few_requests_give_no_interval_at_all() -> None:
    few = sample([100.0] * 10, [[0.01]] * 10, slot_tokens=[100.0] * 10, slot_itls=[[0.01]] * 10)
    assert few.requests < MIN_REQUESTS
    assert point_intervals(few).method is None
    assert point_intervals(few).throughput is None and point_intervals(few).itl_p90 is None


def test_too_few_sub_windows_give_no_interval_by_batch_means() -> None:
    short = sample(slot_tokens=[10.0, 20.0, 30.0], slot_itls=[[0.01], [0.02], [0.03]], requests=30)
    assert batch_throughput(short) is None and batch_quantile(short) is None


def test_ci_method_names_each_figures_method() -> None:
    itls = p90_exponential_trees(random.Random(6), 12, 5, 0.3)
    s = sample([1000.0] * 12, itls, slot_tokens=[600.0] * 20, slot_itls=[[0.01] * 3] * 20)
    found = point_intervals(s)
    assert found.method is not None and "throughput" in found.method and "p90 interactivity" in found.method
    assert found.interactivity_p90() is not None and found.throughput is not None


# --- --precision ---------------------------------------------------------------------------------------


def test_precision_is_met_only_with_both_figures_within_it_after_20_requests() -> None:
    assert Precision(0.04, 0.03, 20).met(0.05)
    assert not Precision(0.04, 0.03, 19).met(0.05)
    assert not Precision(0.06, 0.03, 100).met(0.05)
    assert not Precision(0.04, None, 100).met(0.05)
    assert Precision(0.04, None, 100).words() == "throughput ±4.0%, p90 interactivity unknown after 100 requests"


def test_precision_of_a_steady_sample_is_zero_and_of_a_wild_one_large() -> None:
    rng = random.Random(2)
    steady_itls = [[0.01] * 5 for _ in range(12)]
    steady = sample([500.0] * 12, steady_itls, slot_tokens=[300.0] * 20, slot_itls=[[0.01] * 3] * 20)
    found = precision_of(steady)
    assert found.met(0.01) and found.throughput == 0.0
    wild_itls = [[rng.choice((0.005, 0.05)) for _ in range(5)] for _ in range(12)]
    wild_slots = [rng.choice((10.0, 5000.0)) for _ in range(20)]
    wild = sample([500.0] * 12, wild_itls, slot_tokens=wild_slots, slot_itls=[[0.01]] * 20)
    assert not precision_of(wild).met(0.05)


def test_cohorts_of_user_slots_are_strata_not_spread() -> None:
    """A sweep point's older slots (long contexts, many tokens) and the ones it added (few) differ by
    design: stratified, that difference is not counted as noise; a cohort of one slot pools them."""
    old, new = [20_000.0, 20_400.0, 19_800.0, 20_200.0], [5_000.0, 5_300.0, 4_900.0, 5_100.0, 5_200.0]
    tokens = old + new
    pooled = cluster_throughput(tokens, 60.0)
    by_cohort = cluster_throughput(tokens, 60.0, [0] * 4 + [1] * 5)
    assert pooled is not None and by_cohort is not None
    assert pooled.low + pooled.high == pytest.approx(by_cohort.low + by_cohort.high)  # the same rate
    assert by_cohort.high - by_cohort.low < (pooled.high - pooled.low) / 10
    lone = cluster_throughput(tokens, 60.0, [0] + [1] * 8)  # one old slot: no spread to tell, pooled
    assert lone == pooled
    s = sample(slot_tokens=[1000.0] * 20, slot_itls=[[0.01] * 2] * 20, requests=40)
    s = replace(s, user_tokens=tuple(tokens), user_cohorts=(0,) * 4 + (1,) * 5)
    found = point_intervals(s)
    assert found.method is not None and "over 9 user slots in 2 cohorts" in found.method


def test_user_slots_too_alike_to_show_the_noise_give_way_to_batch_means() -> None:
    """A workload of fixed lengths: every slot did the same in the window (clusters see no spread),
    while the window's rate still moved from one second to the next: batch means, which see that."""
    rates = [1000.0, 1400.0, 800.0, 1300.0, 900.0, 1200.0, 700.0, 1500.0, 1000.0, 1200.0]
    s = sample(slot_tokens=rates, slot_itls=[[0.01] * 4] * 10, requests=40)
    alike = replace(s, user_tokens=(1100.0,) * 9 + (1100.5,) * 1)
    found = point_intervals(alike)
    assert found.throughput == batch_throughput(alike, 10)
    assert found.method is not None and "10 user slots were too alike to show the noise" in found.method
    varied = replace(s, user_tokens=tuple(float(t) for t in range(600, 1600, 100)))  # a real spread: clusters
    kept = point_intervals(varied)
    assert kept.method is not None and "cluster standard error over 10 user slots" in kept.method
    assert kept.throughput == cluster_throughput(varied.user_tokens, varied.duration_s)


def test_a_sliver_of_a_last_slot_joins_the_sub_window_before_it() -> None:
    """A window of 10.02 s: its 11th one-second slot lasts 0.02 s; its tokens (a prompt counted as it
    arrived) would read as a rate fifty times the others' if it stood alone as a sub-window."""
    s = sample(slot_tokens=[1000.0] * 10 + [500.0], slot_itls=[[0.01] * 4] * 11, duration_s=10.02, requests=44)
    found = batch_throughput(s, 10)
    assert found is not None
    rate = 10_500 / 10.02
    assert found.low <= rate <= found.high
    assert found.high - found.low < 0.25 * rate  # alone, the sliver made it ten times the rate


# --- the North Star: the p90 of r_i (E2E per output token) ------------------------------------------------


def test_the_e2e_p90_has_its_own_interval_and_precision_checks_the_axis_in_use() -> None:
    """Steady decode (ITL 10 ms everywhere), end-to-end per token that moves from sub-window to
    sub-window: the ITL's interval has no width, r_i's does; `--precision` on the North Star is not met,
    on decode it is."""
    itls = [[0.01] * 5 for _ in range(12)]
    e2e_slots = [[0.02 * (1 + i // 4), 0.02] for i in range(20)]  # p90 of r_i grows from sub-window to sub-window
    base = sample([500.0] * 12, itls, slot_tokens=[300.0] * 20, slot_itls=[[0.01] * 2] * 20)
    s = replace(
        base,
        tree_e2e=(buckets([v for values in e2e_slots for v in values]),),  # pooled: what precision_of reads
        slot_e2e=sample(slot_itls=e2e_slots).slot_itl,
    )
    e2e = batch_quantile(s, 5, of="e2e")
    itl = batch_quantile(s, 5)
    assert itl is not None and itl.half_width == 0.0
    assert e2e is not None and e2e.half_width > 0.0
    found = point_intervals(s)
    assert found.e2e_p90 == e2e and found.e2e_interactivity_p90() == Interval(1 / e2e.high, 1 / e2e.low)
    assert found.method is not None and "p90 E2E-normalized interactivity: batch means of the p90" in found.method
    north_star = precision_of(s, "e2e_interactivity")
    decode = precision_of(s, "decode_interactivity")
    assert north_star.interactivity is not None and north_star.interactivity > 0.05 and not north_star.met(0.05)
    assert decode.interactivity == 0.0 and decode.met(0.05)
    assert north_star.words().startswith("throughput ±0.0%, p90 E2E-normalized interactivity ±")
    assert point_intervals(base).e2e_p90 is None  # no r_i in the sample: no interval


def test_a_null_interval_says_why() -> None:
    """Too few requests, no measured time: every interval is None and `note` says which it was."""
    thin = point_intervals(sample(slot_tokens=[10.0] * 10, requests=3))
    assert thin == PointIntervals(note="3 requests: an interval needs 20")
    assert point_intervals(sample(duration_s=0.0, requests=40)).note == "no measured time"
    one = point_intervals(sample(slot_tokens=[10.0] * 10, requests=1))
    assert one.note == "1 request: an interval needs 20"

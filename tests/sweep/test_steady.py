"""MSER-5 (sweep/steady.py): where a series' transient ends, and whether it has."""

from __future__ import annotations

import math
import random

from agentx_tui.measure import bucket_of
from agentx_tui.sweep.steady import BATCH_SLOTS, MIN_BATCHES, batch_series, mser_truncation, steadiness, truncation


def noise(n: int, *, seed: int, level: float = 100.0, sd: float = 5.0) -> list[float]:
    rng = random.Random(seed)
    return [rng.gauss(level, sd) for _ in range(n)]


def starts(n: int) -> list[float]:
    return [5.0 * i for i in range(n)]


def test_a_transient_then_stationary_noise_is_cut_where_the_transient_ends() -> None:
    # Ten batches climbing from 40 to ~100 (contexts and batches filling), then stationary noise.
    transient = [100.0 - 60.0 * math.exp(-i / 2.5) for i in range(10)]
    series = transient + noise(30, seed=1)
    d = mser_truncation(series)
    assert 6 <= d <= 11  # after the climb (its last batches are within the noise of the level)
    verdict = truncation(series, starts(len(series)))
    assert verdict.settled and verdict.start_s == 5.0 * d


def test_stationary_from_the_start_cuts_nothing() -> None:
    assert mser_truncation(noise(40, seed=3)) == 0
    # Over many seeds the cut stays near the start (the statistic grows as less is left; measured: d = 0
    # in 68% of 2,000 seeds, d ≤ 2 in 84%), and 40 batches of noise are judged settled (99.6%).
    cuts = [mser_truncation(noise(40, seed=s)) for s in range(200)]
    assert sum(1 for d in cuts if d == 0) >= 0.55 * len(cuts)
    assert sum(1 for d in cuts if d <= 2) >= 0.75 * len(cuts)
    assert sum(truncation(noise(40, seed=s), starts(40)).settled for s in range(200)) >= 190


def test_a_constant_series_is_steady_from_its_first_batch() -> None:
    verdict = truncation([7.0] * 8, starts(8))
    assert verdict.d == 0 and verdict.settled


def test_a_trend_that_never_settles_is_not_steady() -> None:
    rng = random.Random(5)
    for n in (8, 20, 60):
        trend = [10.0 + 3.0 * i + rng.gauss(0, 2.0) for i in range(n)]
        verdict = truncation(trend, starts(n))
        assert verdict.d == n // 2 and not verdict.settled
        assert "still drifting" in verdict.words("throughput")


def test_too_few_batches_are_not_judged() -> None:
    verdict = truncation([1.0, 1.0, 1.0], starts(3))
    assert not verdict.settled and f"too few to judge ({MIN_BATCHES})" in verdict.words("p90 r_i")
    assert mser_truncation([]) == 0 and mser_truncation([3.0]) == 0


def test_the_search_is_over_the_first_half_only() -> None:
    # Noise whose second half is quieter than its first would tempt a full search to cut far.
    series = noise(10, seed=2, sd=20.0) + noise(10, seed=9, sd=1.0)
    assert mser_truncation(series) <= 10


def test_batches_are_five_one_second_slots() -> None:
    # 23 s seen: 4 whole batches; slot 21 (a fifth batch, unfinished) is left out.
    ended = {0: 50.0, 4: 50.0, 5: 100.0, 12: 10.0, 21: 999.0}
    e2e = {1: {bucket_of(0.02): 1.0}, 6: {bucket_of(0.01): 3.0, bucket_of(0.03): 1.0}}
    throughput, at, p90, p90_at = batch_series(ended, e2e, 23.0)
    assert throughput == [20.0, 20.0, 2.0, 0.0] and at == [0.0, 5.0, 10.0, 15.0]
    assert BATCH_SLOTS == 5 and len(p90) == 2 and p90_at == [0.0, 5.0]  # batches without a request: none
    assert math.isclose(p90[0], 0.02, rel_tol=0.02)


def test_steady_needs_both_series_settled() -> None:
    # Throughput flat from the start, r_i still growing: not steady, and the words say which.
    ended = {slot: 100.0 for slot in range(60)}
    e2e = {slot: {bucket_of(0.01 * (1 + slot / 10)): 1.0} for slot in range(60)}
    verdict = steadiness(ended, e2e, 60.0)
    assert verdict.throughput.settled and not verdict.latency.settled and not verdict.steady
    assert verdict.words().startswith("p90 r_i still drifting")
    assert verdict.settled_at_s is None

"""The interval methods the coverage study rejected (bench/_rejected_intervals.py): still what the
study says they are, beside the chosen ones (sweep/intervals.py)."""

from __future__ import annotations

import random

import pytest
from bench._rejected_intervals import tree_bootstrap_quantile, tree_throughput

from agentx_tui.sweep.intervals import MIN_TREES, Sample, point_intervals
from tests.sweep.samples import p90_exponential_trees, sample


def test_the_tree_throughput_interval_covers_the_true_rate_about_95_times_in_100() -> None:
    rng = random.Random(7)
    trials, hits = 400, 0
    for _ in range(trials):
        tokens = [rng.gauss(10_000, 3_000) for _ in range(30)]  # 30 trees, 10 s: true rate 30 000 tok/s
        ci = tree_throughput(sample(tokens, duration_s=10.0, requests=300))
        assert ci is not None
        hits += ci.low <= 30_000 <= ci.high
    assert 0.92 <= hits / trials <= 0.98


def test_the_tree_bootstrap_covers_a_p90_when_requests_of_a_tree_are_alike() -> None:
    """Requests of one tree share a factor (a long context, a slow sub-agent): treated as independent
    requests the p90 looks far surer than it is; drawn as whole trees it is covered."""
    rng = random.Random(3)
    # The true p90 of the mixture, from a very large draw of the same process.
    big = sorted(v for t in p90_exponential_trees(random.Random(99), 4000, 10, 0.5) for v in t)
    truth = big[int(0.9 * len(big))]
    trials, by_tree, by_request = 60, 0, 0
    for i in range(trials):
        itls = p90_exponential_trees(rng, 30, 10, 0.5)
        trees = tree_bootstrap_quantile(sample(tree_itls=itls), resamples=200, seed=i)
        naive = tree_bootstrap_quantile(sample(tree_itls=[[v] for t in itls for v in t]), resamples=200, seed=i)
        assert trees is not None and naive is not None
        by_tree += trees.low <= truth <= trees.high
        by_request += naive.low <= truth <= naive.high
    assert by_tree / trials >= 0.88
    assert by_request < by_tree  # the naive one is too narrow


def test_too_few_trees_give_no_interval_by_trees() -> None:
    trees = [[0.01 * (1 + i % 3)] * 5 for i in range(MIN_TREES - 1)]
    few_trees = sample([100.0] * len(trees), trees)
    assert tree_throughput(few_trees) is None
    assert tree_bootstrap_quantile(few_trees) is None


def test_the_bootstrap_is_seeded_so_a_study_is_reproducible() -> None:
    itls = p90_exponential_trees(random.Random(5), 20, 8, 0.4)
    s = sample(tree_itls=itls)
    assert tree_bootstrap_quantile(s) == tree_bootstrap_quantile(s)
    other = tree_bootstrap_quantile(s, seed=2)  # another seed: other draws, the same answer within noise
    first = tree_bootstrap_quantile(s)
    assert other is not None and first is not None and other.low == pytest.approx(first.low, rel=0.1)


def test_the_bootstrap_of_many_trees_draws_groups_and_stays_cheap() -> None:
    import time

    itls = p90_exponential_trees(random.Random(8), 2000, 5, 0.3)
    started = time.process_time()
    ci = tree_bootstrap_quantile(sample(tree_itls=itls))
    assert ci is not None and ci.low < ci.high
    assert time.process_time() - started < 1.0  # bounded: 64 groups, whatever the trees (≈ 0.05 s here)


def test_user_slots_are_the_clusters_once_trees_start_and_end_inside_the_window() -> None:
    """Each of 12 users runs one tree after another: a tree cut by the window's edges has a part of its
    tokens, and the user's next tree makes up the rest. Over trees the spread looks large; over users,
    whose totals are steady, it is what it is."""
    rng = random.Random(12)
    trees, users = [], []
    for _ in range(12):
        total = rng.gauss(10_000, 300)
        cut = rng.uniform(0.1, 0.9)
        trees += [total * cut, total * (1 - cut)]
        users.append(total)
    s = Sample(
        duration_s=60.0, tree_tokens=tuple(trees), tree_itl=tuple({} for _ in trees), slot_s=1.0,
        slot_tokens=(2000.0,) * 60, slot_itl=({},) * 60, requests=200, user_tokens=tuple(users),
    )  # fmt: skip
    by_user, by_tree = point_intervals(s), tree_throughput(s)
    assert by_user.throughput is not None and by_tree is not None
    assert by_user.method is not None and "over 12 user slots" in by_user.method
    assert by_user.throughput.high - by_user.throughput.low < (by_tree.high - by_tree.low) / 3

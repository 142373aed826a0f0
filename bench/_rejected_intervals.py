"""The interval methods the coverage study measured and rejected (bench/ci_coverage.py; docs/sweeps.md
quotes the figures), kept here to be measured again; agentx-tui uses sweep/intervals.py's chosen ones.

- clusters of session trees (`tree_throughput`): honest while a window holds about one tree per
  user, far too wide once trees start and end inside it;
- clusters of user slots with their cohorts pooled (`user_throughput_pooled`): the added slots'
  difference from the older ones, fixed by the sweep's design, counted as noise;
- a bootstrap over session trees for the p90 of ITL (`tree_bootstrap_quantile`): far too narrow
  (~40% coverage), a p90 of ITL being mostly the server's state, which every tree shares; measured
  for the p90 of r_i (E2E per output token) too (`of="e2e"`).
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import accumulate

from agentx_tui.measure import LogHistogram, linear_quantile
from agentx_tui.sweep.intervals import (
    CONFIDENCE,
    MIN_TREES,
    QUANTILE,
    Interval,
    Latency,
    Sample,
    cluster_throughput,
)

RESAMPLES = 400  # bootstrap draws: a fixed, modest count keeps the cost bounded
MAX_CLUSTERS = 64  # beyond this many trees the bootstrap draws groups of trees (its cost stays bounded)
SEED = 2026  # the bootstrap's seed: a study is reproducible


def tree_throughput(sample: Sample) -> Interval | None:
    """Clusters = session trees. Honest while a window holds about one tree per user; conservative once
    trees start and end inside it (a cut tree's part looks like spread that the user's next tree undoes)."""
    return cluster_throughput(sample.tree_tokens, sample.duration_s)


def user_throughput_pooled(sample: Sample) -> Interval | None:
    """Clusters = user slots, cohorts pooled (for the coverage study)."""
    return cluster_throughput(sample.user_tokens, sample.duration_s)


def tree_bootstrap_quantile(
    sample: Sample, *, resamples: int = RESAMPLES, seed: int = SEED, q: float = QUANTILE, of: Latency = "itl"
) -> Interval | None:
    """The p90 ITL's (or, `of="e2e"`, r_i's) percentile interval from a bootstrap that draws whole
    session trees.

    Beyond `MAX_CLUSTERS` trees, trees are dealt into that many groups (tree i into group i mod G, an
    order that knows nothing of the figures) and whole groups are drawn: groups of independent trees
    are independent too, and the cost of a check stays bounded however many trees a window holds.
    Each draw's p90 is found by bisection over the groups' cumulative bucket counts."""
    trees = [t for t in (sample.tree_itl if of == "itl" else sample.tree_e2e) if t]
    if len(trees) < MIN_TREES:
        return None
    order = sorted({index for t in trees for index in t})
    position = {index: i for i, index in enumerate(order)}
    groups = min(len(trees), MAX_CLUSTERS)
    counts = [[0.0] * len(order) for _ in range(groups)]
    for i, tree in enumerate(trees):
        for index, count in tree.items():
            counts[i % groups][position[index]] += count
    cumulative = [list(accumulate(c)) for c in counts]
    rng = random.Random(seed)
    population = range(groups)
    values = []
    for _ in range(resamples):
        drawn = list(Counter(rng.choices(population, k=groups)).items())
        target = q * sum(times * cumulative[g][-1] for g, times in drawn)
        lo, hi = 0, len(order) - 1
        while lo < hi:  # the first bucket whose pooled cumulative count reaches the target
            mid = (lo + hi) // 2
            if sum(times * cumulative[g][mid] for g, times in drawn) >= target:
                hi = mid
            else:
                lo = mid + 1
        values.append(LogHistogram.value_of(order[lo]))
    values.sort()
    alpha = 1 - CONFIDENCE
    return Interval(linear_quantile(values, alpha / 2), linear_quantile(values, 1 - alpha / 2))

"""Prometheus histograms as counts per bucket, and their quantiles: one rule for every reader of a
server's histograms (the scraper's window, a run's or a sweep point's deltas of the run totals).

A histogram here is its cumulative counts by upper bound, ``+Inf`` last, as the exposition format
writes them. Several histograms merge, and a later one minus an earlier one gives the observations in
between, only bucket by bucket: where two sets of bounds differ there is no exact answer, so none.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def histogram_quantile(q: float, buckets: Iterable[tuple[float, float]]) -> float | None:
    """`histogram_quantile` of Prometheus: linear interpolation inside the bucket holding rank q·N.

    ``buckets`` are (upper bound, cumulative count) including ``+Inf``. None with no observation.
    A rank in the ``+Inf`` bucket gives the largest finite bound, as Prometheus does.
    """
    ordered = sorted(buckets)
    if not ordered or ordered[-1][0] != math.inf:
        return None
    total = ordered[-1][1]
    if not total > 0:
        return None
    rank = q * total
    lower_bound, lower_count = 0.0, 0.0
    for index, (upper, count) in enumerate(ordered):
        if count >= rank:
            if upper == math.inf:
                return ordered[index - 1][0] if index > 0 else None
            if index == 0 and upper <= 0:
                return upper
            in_bucket = count - lower_count
            if in_bucket <= 0:
                return upper
            return lower_bound + (upper - lower_bound) * (rank - lower_count) / in_bucket
        lower_bound, lower_count = upper, count
    return None

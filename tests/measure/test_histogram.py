from __future__ import annotations

import random

import pytest

from agentx_tui.measure import LogHistogram


def test_histogram_quantiles_are_within_two_percent() -> None:
    rng = random.Random(0)
    values = sorted(rng.lognormvariate(-3, 1) for _ in range(20000))
    h = LogHistogram()
    for v in values:
        h.add(v)
    for q in (0.5, 0.9, 0.99):
        assert h.quantile(q) == pytest.approx(values[int(q * len(values))], rel=0.02)
    assert LogHistogram().quantile(0.5) is None

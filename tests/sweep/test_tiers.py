"""Tier reads on the frontier, with their cost (docs/sweeps.md; sweep/tiers.py).

Expected values are worked out by hand in the comments, from the formulas in the module's docstrings.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentx_tui.snapshot import NO_GPUS, PointFigures, TierRead
from agentx_tui.sweep.axes import point_xy
from agentx_tui.sweep.pareto import pareto_front
from agentx_tui.sweep.tiers import read_tiers


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


def sweep_points() -> list[PointFigures]:
    # The four knots of test_pareto.py's Steffen tests (XS, YS), plus a dominated point (it must not bend the curve).
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
    below, on_knot, between, above = read_tiers(points, front, [5, 10, 15, 60], usd_per_gpu_hour=2.0, gpus=1)

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
    (read,) = read_tiers(points, (3, 2, 1, 0), [15], usd_per_gpu_hour=None, gpus=1)
    assert read.total_tokens_per_s_per_gpu == pytest.approx(906.25)
    assert read.tokens_per_dollar_total is None
    assert read.usd_per_million_total_tokens is None
    assert read.note is not None and "no price" in read.note


def test_without_a_gpu_count_no_cost_is_read_and_the_note_says_so() -> None:
    """The one price rule: the throughput per GPU is read, but a price per GPU-hour prices nothing without
    the GPUs it is for (as the meter and a point: none is assumed)."""
    (read,) = read_tiers(sweep_points(), (3, 2, 1, 0), [15], usd_per_gpu_hour=2.0, gpus=None)
    assert read.total_tokens_per_s_per_gpu == pytest.approx(906.25)
    assert (read.tokens_per_dollar_total, read.usd_per_million_total_tokens) == (None, None)
    assert read.note == NO_GPUS


def test_the_cost_of_a_read_does_not_depend_on_how_many_gpus_share_it() -> None:
    one, eight = (read_tiers(sweep_points(), (3, 2, 1, 0), [15], usd_per_gpu_hour=2.0, gpus=n)[0] for n in (1, 8))
    assert eight.tokens_per_dollar_total == pytest.approx(one.tokens_per_dollar_total)
    assert eight.usd_per_million_total_tokens == pytest.approx(one.usd_per_million_total_tokens)


def test_no_measured_point_reads_nothing() -> None:
    (read,) = read_tiers([point(0, 1, None, 500.0)], (), [100], usd_per_gpu_hour=2.0, gpus=1)
    assert read == TierRead(tier=100.0, note="no measured point")


def test_a_single_point_is_read_only_exactly_on_its_tier() -> None:
    points = [point(0, 8, 100.0, 5000.0)]
    on, off = read_tiers(points, (0,), [100, 50], usd_per_gpu_hour=3.6, gpus=1)
    assert on.total_tokens_per_s_per_gpu == 5000.0
    # 3.6·10⁶/(5000·3600) = 0.2 USD per million; 5·10⁶ tokens per dollar.
    assert on.usd_per_million_total_tokens == pytest.approx(0.2)
    assert on.tokens_per_dollar_total == pytest.approx(5e6)
    assert off.total_tokens_per_s_per_gpu is None and off.note is not None


def test_two_frontier_points_read_linearly() -> None:
    points = [point(0, 4, 30.0, 100.0), point(1, 2, 10.0, 300.0)]
    (read,) = read_tiers(points, (1, 0), [15], usd_per_gpu_hour=1.0, gpus=1)
    assert read.total_tokens_per_s_per_gpu == pytest.approx(250.0)


def test_a_read_that_stands_on_a_thin_point_says_so() -> None:
    """The knots at 20 and 40 tok/s/user bracket 30: one of them thin, the read says which; a read on a
    knot says only its own point's; reads on full points say nothing."""
    points = [
        point(0, 1, 50.0, 100.0, requests=200, thin=False),
        point(1, 2, 40.0, 200.0, requests=200, thin=False),
        point(2, 4, 20.0, 800.0, requests=7, thin=True),
        point(3, 8, 10.0, 1000.0, requests=300, thin=False),
    ]
    between, on_thin, full = read_tiers(points, (3, 2, 1, 0), [30, 20, 45], usd_per_gpu_hour=2.0, gpus=1)
    assert between.total_tokens_per_s_per_gpu is not None
    assert between.note == "stands on a thin point: 4 users (7 requests: an interval needs 20)"
    assert on_thin.note == between.note
    assert full.note is None and full.total_tokens_per_s_per_gpu is not None


def test_a_point_that_counted_no_request_stands_on_no_frontier_and_feeds_no_read() -> None:
    """Its window saw tokens (requests still in flight) but counted none: it is not measured, whatever its
    figures would place it at."""
    points = [point(0, 1, 50.0, 100.0, requests=40), point(1, 2, 60.0, 900.0, requests=0)]
    front = pareto_front([point_xy(p) for p in points])
    assert front == (0,)
    (read,) = read_tiers(points, front, [55], usd_per_gpu_hour=2.0, gpus=1)
    assert read.total_tokens_per_s_per_gpu is None and read.note is not None and "above the fastest" in read.note

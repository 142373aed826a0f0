"""Agents per GPU at a tier (docs/metrics.md, "Tasks"): users read on the frontier like throughput."""

from __future__ import annotations

import math

import pytest

from agentx_tui.snapshot import PointFigures
from agentx_tui.sweep import DECODE, NORTH_STAR, AgentsRead, agents_at_tiers, pareto_front, point_xy, read_agents


def point(index: int, users: int, x: float, y: float) -> PointFigures:
    return PointFigures(
        index=index,
        users=users,
        warmup_s=20,
        duration_s=60,
        window_start_s=80.0 * index + 20,
        interactivity_p90_tokens_per_s=x,
        total_tokens_per_s_per_gpu=y,
    )


def test_users_that_straddle_the_tier_give_a_value_between_them() -> None:
    # More users: slower per user, more throughput. T = 100 lies between 16 users (120) and 32 (80).
    points = [point(0, 8, 150.0, 500.0), point(1, 16, 120.0, 900.0), point(2, 32, 80.0, 1400.0)]
    (read,) = read_agents(points, pareto_front([point_xy(p) for p in points]), [100.0], gpus=2)
    assert read.users is not None and 16 < read.users < 32
    assert read.agents_per_gpu == pytest.approx(read.users / 2)
    assert read.note is None


def test_on_a_knot_the_read_is_that_points_users() -> None:
    pairs = [(80.0, 32.0), (120.0, 16.0), (150.0, 8.0)]
    assert agents_at_tiers(pairs, [120], gpus=4) == (AgentsRead(tier=120.0, users=16.0, agents_per_gpu=4.0),)


def test_two_points_give_the_straight_line() -> None:
    (read,) = agents_at_tiers([(50.0, 40.0), (100.0, 10.0)], [75.0], gpus=1)
    assert read.users == pytest.approx(25.0)


def test_never_extrapolated() -> None:
    pairs = [(80.0, 32.0), (120.0, 16.0)]
    above, below, nan = agents_at_tiers(pairs, [200.0, 50.0, math.nan], gpus=1)
    assert above.users is None and above.agents_per_gpu is None and "above the fastest" in (above.note or "")
    assert below.users is None and "below the slowest" in (below.note or "")
    assert nan.users is None and nan.note == "not a number"
    (empty,) = agents_at_tiers([], [100.0], gpus=1)
    assert empty.note == "no measured point"
    (unknown,) = agents_at_tiers([(None, 4.0), (90.0, None)], [90.0], gpus=1)
    assert unknown.note == "no measured point"


@pytest.mark.parametrize("gpus", [None, 0.0, -2.0, math.inf])
def test_without_a_gpu_count_the_users_are_read_but_not_per_gpu(gpus: float | None) -> None:
    (read,) = agents_at_tiers([(80.0, 32.0), (120.0, 16.0)], [100.0], gpus=gpus)
    assert read.users == pytest.approx(24.0)
    assert read.agents_per_gpu is None and read.note is not None


def test_read_on_the_axis_in_use() -> None:
    """Decode interactivity stays high while the queue grows: on the North Star, the same points cross
    the tier with fewer users (docs/sweeps.md)."""
    points = [
        point(0, 1, 150.0, 500.0).model_copy(update={"e2e_interactivity_p90_tokens_per_s": 120.0}),
        point(1, 4, 140.0, 1500.0).model_copy(update={"e2e_interactivity_p90_tokens_per_s": 60.0}),
        point(2, 16, 110.0, 4000.0).model_copy(update={"e2e_interactivity_p90_tokens_per_s": 20.0}),
    ]
    decode_front = pareto_front([point_xy(p, DECODE) for p in points])
    north_front = pareto_front([point_xy(p, NORTH_STAR) for p in points])
    (on_decode,) = read_agents(points, decode_front, [120.0], gpus=1, axis=DECODE)
    (on_north,) = read_agents(points, north_front, [120.0], gpus=1, axis=NORTH_STAR)
    assert on_decode.users is not None and 4 < on_decode.users < 16
    assert on_north.users == 1.0  # the one point that fast end to end
    (past,) = read_agents(points, north_front, [130.0], gpus=1, axis=NORTH_STAR)
    assert past.users is None and "E2E-normalized" in (past.note or "")

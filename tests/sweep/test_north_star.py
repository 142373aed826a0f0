"""The frontier on either x-axis (docs/sweeps.md): the North Star (E2E-normalized interactivity, the
default) or decode interactivity; the North Star policy on the decode view beside it; tier reads on
both; `--sweep auto`'s stop rule on the axis in use."""

from __future__ import annotations

from typing import Any

import pytest

from agentx_tui.report import Report
from agentx_tui.report._keys import tier_report_keys
from agentx_tui.snapshot import PointFigures
from agentx_tui.sweep import (
    DECODE,
    NORTH_STAR,
    auto_stop_reason,
    north_star_policy,
    read_agents,
    read_tiers,
    tier_intervals,
    view_fronts,
)


def point(index: int, decode: float | None, e2e: float | None, tput: float | None, **figures: Any) -> PointFigures:
    return PointFigures(
        index=index, users=2**index, warmup_s=20, duration_s=60, window_start_s=80.0 * index + 20,
        interactivity_p90_tokens_per_s=decode, e2e_interactivity_p90_tokens_per_s=e2e,
        total_tokens_per_s_per_gpu=tput, **figures,
    )  # fmt: skip


# A server that slows with load mostly before the first token (queueing): decode interactivity holds
# up, the E2E-normalized one, which counts the wait, falls fast.
SLOWING = [
    point(0, 110.0, 60.0, 1000.0),  # 1 user
    point(1, 100.0, 40.0, 3500.0),  # 2 users: TTFT grows
    point(2, 90.0, 20.0, 6000.0),  # 4 users: TTFT grows more
]


def test_a_tier_read_exists_on_decode_and_is_null_on_the_north_star_when_ttft_grows_with_load() -> None:
    north_star, decode = view_fronts(SLOWING, NORTH_STAR)
    assert north_star == (2, 1, 0) and decode == (2, 1, 0)
    (on_e2e,) = read_tiers(SLOWING, north_star, [100.0], usd_per_gpu_hour=2.0, gpus=1, axis=NORTH_STAR)
    (on_decode,) = read_tiers(SLOWING, decode, [100.0], usd_per_gpu_hour=2.0, gpus=1, axis=DECODE)
    assert on_decode.total_tokens_per_s_per_gpu == pytest.approx(3500.0)  # on a knot: its own value
    assert on_decode.tokens_per_dollar_total is not None and on_decode.axis == "decode_interactivity"
    assert on_e2e.total_tokens_per_s_per_gpu is None and on_e2e.axis == "e2e_interactivity"
    assert on_e2e.note == "above the fastest measured point (p90 E2E-normalized interactivity 60 tok/s/user)"
    keys = tier_report_keys([on_e2e, on_decode])
    assert keys["total_tokens_per_s_per_gpu_at_100"] is None
    assert keys["total_tokens_per_s_per_gpu_at_100_decode"] == pytest.approx(3500.0)
    assert "total_tokens_per_s_per_gpu_at_100_decode_ci_low" in keys
    assert "tokens_per_dollar_total_at_100_decode" in keys and "usd_per_million_total_tokens_at_100_decode" in keys


def test_the_north_star_policy_keeps_a_decode_point_only_if_it_is_on_the_e2e_frontier() -> None:
    points = [
        point(0, 100.0, 50.0, 1000.0),
        # Faster to decode than 0, but slower end to end and less throughput: dominated on the North Star.
        point(1, 120.0, 40.0, 900.0),
        point(2, 80.0, 30.0, 4000.0),
    ]
    assert view_fronts(points, NORTH_STAR) == ((2, 0), (2, 0))  # point 1 leaves the decode view too
    assert view_fronts(points, DECODE) == ((2, 0, 1), (2, 0))  # the decode axis chosen: its own front
    assert north_star_policy((2, 0, 1), (2, 0)) == (2, 0)
    # Read at 110 tok/s/user on decode: only under the policy is that beyond the frontier.
    (beside,) = read_tiers(points, (2, 0), [110.0], usd_per_gpu_hour=None, gpus=1, axis=DECODE)
    (chosen,) = read_tiers(points, (2, 0, 1), [110.0], usd_per_gpu_hour=None, gpus=1, axis=DECODE)
    assert beside.total_tokens_per_s_per_gpu is None and chosen.total_tokens_per_s_per_gpu is not None


def test_tier_intervals_are_read_on_the_axis_and_respect_the_policy() -> None:
    ci: dict[str, float] = {}
    points = []
    for i, (decode, e2e, tput) in enumerate([(110.0, 60.0, 1000.0), (100.0, 40.0, 3500.0), (90.0, 20.0, 6000.0)]):
        ci = {
            "interactivity_p90_tokens_per_s_ci_low": decode * 0.95,
            "interactivity_p90_tokens_per_s_ci_high": decode * 1.05,
            "e2e_interactivity_p90_tokens_per_s_ci_low": e2e * 0.95,
            "e2e_interactivity_p90_tokens_per_s_ci_high": e2e * 1.05,
            "total_tokens_per_s_per_gpu_ci_low": tput * 0.95,
            "total_tokens_per_s_per_gpu_ci_high": tput * 1.05,
        }
        points.append(point(i, decode, e2e, tput, **ci))
    north_star, decode = view_fronts(points, NORTH_STAR)
    e2e_reads = read_tiers(points, north_star, [30.0, 100.0], usd_per_gpu_hour=None, gpus=1, axis=NORTH_STAR)
    at_30, at_100 = tier_intervals(points, north_star, e2e_reads, axis=NORTH_STAR, draws=200)
    assert at_30.total_tokens_per_s_per_gpu is not None
    assert at_30.total_tokens_per_s_per_gpu_ci_low is not None and at_30.total_tokens_per_s_per_gpu_ci_high is not None
    assert at_30.total_tokens_per_s_per_gpu_ci_low <= at_30.total_tokens_per_s_per_gpu
    assert at_30.total_tokens_per_s_per_gpu <= at_30.total_tokens_per_s_per_gpu_ci_high
    assert at_100.total_tokens_per_s_per_gpu is None and at_100.total_tokens_per_s_per_gpu_ci_low is None
    decode_reads = read_tiers(points, decode, [95.0], usd_per_gpu_hour=None, gpus=1, axis=DECODE)
    (at_95,) = tier_intervals(points, decode, decode_reads, axis=DECODE, within=NORTH_STAR, draws=200)
    assert at_95.total_tokens_per_s_per_gpu_ci_low is not None and at_95.total_tokens_per_s_per_gpu_ci_high is not None
    assert at_95.total_tokens_per_s_per_gpu_ci_low < 4750.0 < at_95.total_tokens_per_s_per_gpu_ci_high


def test_auto_stops_when_the_axis_in_use_falls_below_the_lowest_tier() -> None:
    points = [point(0, 120.0, 70.0, 1000.0), point(1, 110.0, 40.0, 3000.0)]
    reason = auto_stop_reason(points, lowest_tier=50.0, axis=NORTH_STAR)
    assert reason == (
        "p90 E2E-normalized interactivity at 2 users was 40 tok/s/user, below the lowest tier (50 tok/s/user)."
    )
    assert auto_stop_reason(points, lowest_tier=50.0, axis=DECODE) is None  # decode still at 110
    assert auto_stop_reason([point(0, 40.0, None, 1000.0)], lowest_tier=50.0, axis=NORTH_STAR) is None


def test_the_report_of_such_a_sweep_has_the_decode_read_and_a_null_north_star_one() -> None:
    """The same reads as the report writes them (report/_model.py): both axes' keys, the agents on the
    frontier's axis only; the North Star's null where the decode one is known."""
    north_star, decode = view_fronts(SLOWING, NORTH_STAR)
    tiers = [30.0, 100.0]
    on_e2e = read_tiers(SLOWING, north_star, tiers, usd_per_gpu_hour=2.0, gpus=1, axis=NORTH_STAR)
    agents = read_agents(SLOWING, north_star, tiers, gpus=2, axis=NORTH_STAR)
    on_e2e = tuple(
        r.model_copy(update={"agents_per_gpu": a.agents_per_gpu}) for r, a in zip(on_e2e, agents, strict=True)
    )
    on_decode = read_tiers(SLOWING, decode, tiers, usd_per_gpu_hour=2.0, gpus=1, axis=DECODE)
    data = Report(frontier_axis=NORTH_STAR, tiers=[*on_e2e, *on_decode]).model_dump()
    assert data["total_tokens_per_s_per_gpu_at_100"] is None and data["agents_per_gpu_at_100"] is None
    assert data["total_tokens_per_s_per_gpu_at_100_decode"] == pytest.approx(3500.0)
    assert data["total_tokens_per_s_per_gpu_at_30"] is not None
    assert data["agents_per_gpu_at_30"] is not None and 1.0 < data["agents_per_gpu_at_30"] < 2.0  # 2–4 users on 2 GPUs
    assert "agents_per_gpu_at_30_decode" not in data

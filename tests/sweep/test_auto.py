"""`--sweep auto`'s stop rules and its next user count (docs/sweeps.md; sweep/auto.py)."""

from __future__ import annotations

from typing import Any

from agentx_tui.snapshot import PointFigures
from agentx_tui.sweep.auto import auto_stop_reason, next_auto_users


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


def steady(n: int, **last: Any) -> list[PointFigures]:
    """n points whose throughput doubles each time, interactivity well above 30; `last` overrides the last."""
    points = [point(i, 2**i, 200.0 - i, 1000.0 * 2**i, error_rate=0.0) for i in range(n)]
    points[-1] = points[-1].model_copy(update=last)
    return points


def test_auto_goes_on_while_nothing_stops_it() -> None:
    assert auto_stop_reason([], lowest_tier=30) is None
    assert auto_stop_reason(steady(5), lowest_tier=30) is None


def test_auto_stops_above_ten_percent_errors() -> None:
    assert auto_stop_reason(steady(3, error_rate=0.10), lowest_tier=30) is None  # "passes 10%": not at 10%
    reason = auto_stop_reason(steady(3, error_rate=0.125), lowest_tier=30)
    assert reason == "The error rate at 4 users was 12.5%, above the 10% limit."


def test_auto_stops_when_the_client_saturates() -> None:
    reason = auto_stop_reason(steady(2, client_saturated=True), lowest_tier=30)
    assert reason is not None and reason.startswith("The load generator itself was saturated at 2 users")


def test_auto_stops_below_the_lowest_tier() -> None:
    reason = auto_stop_reason(steady(4, interactivity_p90_tokens_per_s=28.4), lowest_tier=30)
    assert reason == "p90 interactivity at 8 users was 28.4 tok/s/user, below the lowest tier (30 tok/s/user)."
    assert auto_stop_reason(steady(4, interactivity_p90_tokens_per_s=28.4), lowest_tier=None) is None
    assert auto_stop_reason(steady(4, interactivity_p90_tokens_per_s=None), lowest_tier=30) is None


def test_auto_stops_when_throughput_grew_less_than_five_percent_twice_in_a_row() -> None:
    points = steady(4)  # 1000, 2000, 4000, 8000
    once = [*points[:3], points[3].model_copy(update={"total_tokens_per_s_per_gpu": 4100.0})]
    assert auto_stop_reason(once, lowest_tier=30) is None  # only once
    twice = [*once, point(4, 16, 150.0, 4300.0)]
    # 4000 → 4100 (+2.5%) → 4300 (+4.9%)
    assert auto_stop_reason(twice, lowest_tier=30) == (
        "Total throughput grew less than 5% twice in a row: 4,000 → 4,100 → 4,300 tok/s per GPU at 4, 8, 16 users."
    )
    grew_enough = [*once, point(4, 16, 150.0, 4305.0)]  # +5.0% exactly is not "less than 5%"
    assert auto_stop_reason(grew_enough, lowest_tier=30) is None


def test_the_plateau_rule_uses_total_throughput_when_the_gpu_count_is_unknown() -> None:
    points = [point(i, 2**i, 100.0, None, total_tokens_per_s=t) for i, t in enumerate((900.0, 910.0, 905.0))]
    reason = auto_stop_reason(points, lowest_tier=30)
    assert reason is not None and "900 → 910 → 905 tok/s at 1, 2, 4 users" in reason


def test_an_unknown_throughput_is_not_a_plateau() -> None:
    points = [point(i, 2**i, 100.0, None) for i in range(3)]
    assert auto_stop_reason(points, lowest_tier=30) is None


def test_auto_stops_after_twelve_points() -> None:
    assert auto_stop_reason(steady(11), lowest_tier=30) is None
    assert auto_stop_reason(steady(12), lowest_tier=30) == "12 points done, the most --sweep auto measures."
    assert auto_stop_reason(steady(3), lowest_tier=30, max_points=3) is not None


def test_the_first_rule_that_holds_is_named() -> None:
    reason = auto_stop_reason(steady(12, error_rate=0.5, interactivity_p90_tokens_per_s=1.0), lowest_tier=30)
    assert reason is not None and reason.startswith("The error rate")


def test_auto_doubles_the_users() -> None:
    assert [next_auto_users(u) for u in (0, 1, 2, 48)] == [1, 2, 4, 96]

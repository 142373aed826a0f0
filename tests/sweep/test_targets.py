"""`--sweep tiers`'s planner (sweep/targets.py): bracketing, bisection, the full points, fix-ups."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from agentx_tui.snapshot import PointFigures
from agentx_tui.sweep import NORTH_STAR, pareto_front, read_tiers
from agentx_tui.sweep.targets import BISECT_RATIO, MAX_PROBES, Step, TierPlanner

TIERS = (30.0, 50.0, 75.0, 100.0)


def figures(users: int, x: float | None, y: float, *, error_rate: float = 0.0) -> PointFigures:
    return PointFigures(
        index=0, users=users, warmup_s=0.0, duration_s=30.0, window_start_s=0.0, requests=100 if x else 0,
        e2e_interactivity_p90_tokens_per_s=x, total_tokens_per_s_per_gpu=y, error_rate=error_rate,
    )  # fmt: skip


def falling(users: float) -> float:
    """A server whose p90 interactivity halves every 4× users: 200 at 1 user, 100 at 4, 50 at 16, 25 at 64."""
    return float(200.0 / users**0.5)


def rising(users: float) -> float:
    """Throughput that grows with users and flattens."""
    return float(40_000 * users / (users + 16))


def run(
    planner: TierPlanner,
    x_of: Callable[[int], float | None],
    y_of: Callable[[int], float] = lambda u: rising(u),
    *,
    probe_x: Callable[[int], float | None] | None = None,
) -> tuple[list[Step], list[Step]]:
    """Drive the planner to its end: (probes, points) in the order it asked for them."""
    probes: list[Step] = []
    points: list[Step] = []
    for _ in range(100):
        step = planner.next_step()
        if step is None:
            return probes, points
        x = (probe_x or x_of)(step.users) if step.probe else x_of(step.users)
        (probes if step.probe else points).append(step)
        planner.record(step, figures(step.users, x, y_of(step.users)))
    raise AssertionError("the planner did not end")


def reads(planner: TierPlanner) -> dict[float, float | None]:
    points = [f for _, f in planner.points]
    front = pareto_front([(p.e2e_interactivity_p90_tokens_per_s, p.total_tokens_per_s_per_gpu) for p in points])
    found = read_tiers(points, front, TIERS, usd_per_gpu_hour=None, gpus=1, axis=NORTH_STAR)
    return {r.tier: r.total_tokens_per_s_per_gpu for r in found}


def test_a_monotone_server_is_bracketed_bisected_and_measured_on_both_sides_of_each_tier() -> None:
    planner = TierPlanner(TIERS, start_users=1, axis=NORTH_STAR)
    probes, points = run(planner, falling)
    doubling = [s.users for s in probes if s.purpose.startswith("bracketing")]
    assert doubling == [1, 2, 4, 8, 16, 32, 64]  # doubling until below 30 (25 at 64)
    # Each tier bisected as soon as a probe brackets it, before the users double again: they mostly grow.
    assert [s.users for s in probes] == [1, 2, 4, 8, 6, 16, 32, 23, 64, 45]
    assert "below the lowest tier" in (planner.bracket_reason or "")
    assert len(probes) <= 7 + len(TIERS)  # one bisection a tier (at most) takes a doubling's bracket to ≤ 1.5×
    assert all(s.probe for s in probes) and not any(s.probe for s in points)
    users = sorted(s.users for s in points)
    for tier in TIERS:
        found = planner.bracket(tier)
        assert found is not None and TierPlanner.tight(*found)
        lo, hi = found
        assert falling(lo) >= tier > falling(hi)
        # A full point on each side of it, next to each other among the full points.
        above = max(u for u in users if falling(u) >= tier)
        below = min(u for u in users if falling(u) < tier)
        assert users.index(below) == users.index(above) + 1
        assert tier in next(s for s in points if s.users == above).tiers
        assert tier in next(s for s in points if s.users == below).tiers
    # Neighbouring tiers share the point between them: five points for four tiers, the most users first.
    assert users == [3, 6, 11, 27, 56]
    assert [s.users for s in points] == sorted(users, reverse=True)
    assert next(s for s in points if s.users == 11).purpose == "tier 75 (below) · tier 50 (above)"
    assert all(v is not None for v in reads(planner).values())


def test_a_crossing_is_interpolated_inside_its_bracket() -> None:
    planner = TierPlanner(TIERS, start_users=1, axis=NORTH_STAR)
    run(planner, falling)
    for tier in TIERS:
        lo, hi = planner.bracket(tier) or (0, 0)
        # falling() is a power of the users, so the log-log interpolation finds its crossing exactly.
        assert lo * (1 - 1e-9) <= planner.crossing(tier) <= hi
        assert abs(planner.crossing(tier) - (200.0 / tier) ** 2) < 1e-6 * (200.0 / tier) ** 2


def test_no_user_count_is_probed_twice_and_the_probes_are_bounded() -> None:
    planner = TierPlanner(TIERS, start_users=1, axis=NORTH_STAR)
    probes, _ = run(planner, falling)
    users = [s.users for s in probes]
    assert len(users) == len(set(users)) <= MAX_PROBES


def test_bisection_is_labelled_with_its_tier() -> None:
    planner = TierPlanner(TIERS, start_users=1, axis=NORTH_STAR)
    probes, _ = run(planner, falling)
    bisecting = [s for s in probes if not s.purpose.startswith("bracketing")]
    assert bisecting and all(len(s.tiers) == 1 and s.purpose == f"tier {s.tiers[0]:g}" for s in bisecting)
    assert probes[0].purpose == "bracketing tiers 30 50 75 100"
    # Highest tier first: it is crossed at the fewest users.
    assert [s.tiers[0] for s in bisecting] == sorted((s.tiers[0] for s in bisecting), reverse=True)


def test_the_doubling_stop_rules_see_the_doubling_probes_only() -> None:
    # Throughput grows 4% a bisection step but 8% a doubling: bisection probes between the doubling's
    # must not read as "grew less than 5% twice".
    planner = TierPlanner(TIERS, start_users=1, axis=NORTH_STAR)
    probes, _ = run(planner, falling, lambda u: 1000.0 * 1.08 ** math.log2(u))
    assert [s.users for s in probes if s.purpose.startswith("bracketing")] == [1, 2, 4, 8, 16, 32, 64]


def test_a_flat_server_stops_doubling_where_throughput_stops_growing() -> None:
    # Interactivity never falls below 40; throughput flat from 8 users on.
    planner = TierPlanner(TIERS, start_users=1, axis=NORTH_STAR)
    probes, points = run(planner, lambda u: max(40.0, 120.0 / u**0.3), lambda u: 1000.0 * min(u, 8))
    assert "grew less than 5% twice" in (planner.bracket_reason or "")
    assert planner.bracket(30.0) is None  # never crossed
    assert "stayed at or above it" in planner.unbracketed()[30.0]
    assert any("throughput's top" in s.purpose for s in points)
    assert max(s.users for s in probes) == 32


def test_noisy_probes_still_bracket_and_fix_ups_catch_a_point_on_the_wrong_side() -> None:
    rng = random.Random(7)
    noisy: dict[int, float] = {}

    def probe_x(users: int) -> float:
        return noisy.setdefault(users, falling(users) * rng.uniform(0.9, 1.1))

    planner = TierPlanner(TIERS, start_users=1, axis=NORTH_STAR)
    probes, points = run(planner, falling, probe_x=probe_x)
    assert len({s.users for s in probes}) == len(probes)
    values = reads(planner)
    assert all(v is not None for v in values.values())
    # A planned point the noise put on the wrong side is followed by one more, labelled as such.
    again = [s for s in points if "again" in s.purpose]
    for step in again:
        assert step.users not in {s.users for s in points if s is not step}


def test_a_tier_never_crossed_is_said_and_gets_no_pair() -> None:
    # 120 tok/s/user at best: tier 150 is above every probe.
    planner = TierPlanner((50.0, 150.0), start_users=1, axis=NORTH_STAR)
    _, points = run(planner, lambda u: 120.0 / u**0.5)
    assert planner.bracket(150.0) is None
    assert planner.unbracketed()[150.0] == "p90 interactivity was below it already at 1 user"
    assert all(150.0 not in s.tiers for s in points)


def test_start_users_above_the_highest_tier_halve_first() -> None:
    planner = TierPlanner((50.0, 100.0), start_users=16, axis=NORTH_STAR)
    probes, _ = run(planner, falling)
    # Halve until at or above 100 (4), bisect tier 100's bracket (4, 8), then double.
    assert [s.users for s in probes[:5]] == [16, 8, 4, 6, 32]
    assert planner.bracket(100.0) is not None and planner.bracket(50.0) is not None


def test_two_close_tiers_share_a_point() -> None:
    # Tiers 75 and 80 are crossed between the same two probes (4 and 6: a bracket tight already): one pair.
    def x_of(users: int) -> float:
        return {1: 200.0, 2: 150.0, 3: 120.0, 4: 100.0, 5: 90.0, 6: 70.0, 7: 65.0, 8: 60.0}.get(users, 480.0 / users)

    planner = TierPlanner((75.0, 80.0), start_users=1, axis=NORTH_STAR)
    _, points = run(planner, x_of)
    assert planner.bracket(75.0) == planner.bracket(80.0) == (4, 6)  # overlapping: the same two probes
    assert len(points) == 2  # one pair for both
    for step, side in zip(points, ("below", "above"), strict=True):
        assert step.tiers == (75.0, 80.0) and step.purpose == f"tier 80 ({side}) · tier 75 ({side})"


def test_adjacent_brackets_touch_and_share_their_common_point() -> None:
    def x_of(users: int) -> float:
        return {1: 120.0, 2: 90.0, 3: 60.0, 4: 40.0}.get(users, 160.0 / users)

    planner = TierPlanner((50.0, 75.0, 100.0), start_users=1, axis=NORTH_STAR)
    _, points = run(planner, x_of)
    assert planner.bracket(100.0) == (1, 2) and planner.bracket(75.0) == (2, 3) and planner.bracket(50.0) == (3, 4)
    # Four points for three tiers, not six: the probes the brackets share are the shared points.
    assert sorted(s.users for s in points) == [1, 2, 3, 5]
    assert next(s for s in points if s.users == 2).tiers == (75.0, 100.0)


def test_errors_stop_the_bracketing() -> None:
    planner = TierPlanner(TIERS, start_users=1, axis=NORTH_STAR)
    step = planner.next_step()
    assert step is not None
    planner.record(step, figures(1, 150.0, 100.0))
    step = planner.next_step()
    assert step is not None and step.users == 2
    planner.record(step, figures(2, 120.0, 200.0, error_rate=0.2))
    assert "error rate" in str(planner.next_step() and planner.bracket_reason)


def test_a_tight_bracket_is_within_the_ratio() -> None:
    assert TierPlanner.tight(4, 5) and TierPlanner.tight(40, 60) and not TierPlanner.tight(40, 61)
    assert BISECT_RATIO == 1.5


def test_a_point_on_the_wrong_side_gets_one_more_and_saturation_gets_none() -> None:
    # The probe at 3 users read 98 tok/s/user, the point there 60 (a short look at a noisy p90): every full
    # point of tier 75 then reads below it, so one more point at fewer users (2, probed at 88).
    probe = {1: 94.0, 2: 88.0, 3: 98.0, 4: 70.0, 6: 56.0, 8: 41.0, 11: 39.0, 16: 26.0}
    point = {2: 84.0, 3: 60.0, 5: 67.0, 10: 35.0, 18: 24.0, 40: 19.0}

    def throughput(users: int) -> float:  # flat past 10 users: the throughput's top
        return 5000.0 * min(users, 10)

    planner = TierPlanner((30.0, 50.0, 75.0, 100.0), start_users=2, axis=NORTH_STAR)
    _, points = run(planner, lambda u: point.get(u, 480.0 / u), throughput, probe_x=lambda u: probe.get(u))
    again = [s for s in points if "again" in s.purpose]
    assert [(s.users, s.purpose) for s in again] == [(2, "tier 75 (above), again")]
    # Tier 30: 18 users read 24 but carry no more throughput than 10 (read 35): no point past it would.
    assert all(s.users <= 18 for s in points)


def test_a_point_past_a_collapse_gets_one_between_and_a_side_may_be_fixed_twice() -> None:
    """The measured bench's plan (docs/sweeps.md): the 23-user point fell past a collapse (KV cache full:
    7 tok/s/user at less throughput than 10 users), off the frontier, so tier 30 had no frontier point
    below it; probes between 10 and 23 users carried more throughput than the 10-user point, so one more
    point between them (15). Tier 75: the 3-user point, then the 2-user one, read below it (probes
    flattered the first users' short contexts): a second fix-up, at 1 user."""
    probe = {2: 94.0, 1: 94.0, 4: 75.5, 8: 47.0, 6: 45.1, 16: 31.0, 32: 19.7, 23: 20.5}
    probe_y = {2: 17.4, 1: 13.4, 4: 25.7, 8: 38.1, 6: 42.8, 16: 50.1, 32: 53.2, 23: 64.0}
    point = {23: 7.0, 10: 32.3, 3: 69.9, 2: 72.8, 1: 97.0, 15: 24.0}
    point_y = {23: 36.9, 10: 45.7, 3: 30.2, 2: 26.1, 1: 12.4, 15: 54.2}
    planner = TierPlanner(TIERS, start_users=2, axis=NORTH_STAR)
    probes: list[Step] = []
    points: list[Step] = []
    while (step := planner.next_step()) is not None:
        x, y = (probe, probe_y) if step.probe else (point, point_y)
        (probes if step.probe else points).append(step)
        planner.record(step, figures(step.users, x.get(step.users), 1000.0 * y.get(step.users, 1.0)))
        assert len(points) < 12
    assert [s.users for s in probes] == [2, 1, 4, 8, 6, 16, 32, 23]
    again = [(s.users, s.purpose) for s in points if "again" in s.purpose]
    assert again == [(2, "tier 75 (above), again"), (1, "tier 75 (above), again"), (15, "tier 30 (below), again")]
    found = reads(planner)
    assert found[30.0] is not None and found[75.0] is not None and found[100.0] is None


def test_a_tiers_side_is_fixed_at_most_twice() -> None:
    # Every point reads below 75 whatever its users: two fix-ups above it, then the planner gives up.
    planner = TierPlanner((75.0,), start_users=4, axis=NORTH_STAR)
    _, points = run(planner, lambda u: 60.0, probe_x=falling)
    assert [s.purpose for s in points].count("tier 75 (above), again") == 2

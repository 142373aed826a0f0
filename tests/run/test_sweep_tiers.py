"""A sweep point's window opens when its load is steady (MSER-5, sweep/steady.py), and `--sweep tiers`
probes before it measures (sweep/targets.py): the phases that run them, on fake requests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from agentx_tui.measure import Completed
from agentx_tui.run.sweep import SweepPhases, default_probe_s
from agentx_tui.snapshot import Snapshot
from tests.run.test_sweep import Clock, FakeRun, request, snap

# The r_i (s per output token) of a request by the number of users and the seconds since they were set.
Latency = Callable[[int, float], float]


def drive(
    phases: SweepPhases, run: FakeRun, clock: Clock, until: float, itl: Latency, *, every: int = 1
) -> list[Snapshot]:
    """Tick once a second; every `every` seconds each user (its own slot and tree) finishes one request."""
    out: list[Snapshot] = []
    t, since, users_then = 0.0, 0.0, 0
    while t <= until and run.stopped is None:
        clock.now = t
        users = run.users[-1] if run.users else 0
        if users != users_then:
            since, users_then = t, users
        for user in range(users if t >= every and int(t) % every == 0 else 0):
            done: Completed = replace(request(t - every, itl(users, t - since)), user=user, tree=user)
            run.load.stats.add(done)
        out.append(phases.advance(snap(t), run, final=False))  # type: ignore[arg-type]
        t += 1.0
    return out


def steady_itl(users: int, _since: float) -> float:
    return 0.002 * users


def growing_itl(users: int, since: float) -> float:
    """Contexts that keep growing: every request slower than the last, never settling."""
    return 0.002 * users * (1 + since / 10)


def test_a_steady_load_opens_its_window_before_the_most_it_may_wait() -> None:
    clock, run = Clock(), FakeRun()
    phases = SweepPhases((4,), start_users=4, warmup_s=120, point_duration_s=10, tiers=(50.0,), clock=clock)
    drive(phases, run, clock, 400, steady_itl)
    point = phases.advance(snap(clock.now + 1), run, final=True).sweep.points[0]  # type: ignore[union-attr]
    # Ten requests a user by 11 s; MSER-5 judges from 4 batches (20 s): the window opens then.
    assert point.steady is True and 20 <= point.warmup_s < 40
    assert point.window_start_s == point.warmup_s  # the users were set at 0 s
    assert point.steady_reason is not None and point.steady_reason.startswith(f"steady after {point.warmup_s:.0f} s")


def test_contexts_still_growing_open_the_window_later_than_a_fixed_shape_load() -> None:
    opened = {}
    for name, itl in (("fixed", steady_itl), ("growing", growing_itl)):
        clock, run = Clock(), FakeRun()
        phases = SweepPhases((4,), start_users=4, warmup_s=90, point_duration_s=10, tiers=(50.0,), clock=clock)
        drive(phases, run, clock, 400, itl)
        state = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
        assert state is not None
        opened[name] = state.points[0]
    fixed, growing = opened["fixed"], opened["growing"]
    assert fixed.warmup_s < growing.warmup_s
    # Growing for good: the window opened at --warmup, and the point says it never settled, and why.
    assert growing.steady is False and growing.warmup_s >= 90
    assert growing.steady_reason is not None
    assert growing.steady_reason.startswith("--warmup 90 s reached, p90 r_i still drifting")


def test_a_warm_up_of_zero_opens_at_once_and_is_not_steady() -> None:
    clock, run = Clock(), FakeRun()
    phases = SweepPhases((2,), start_users=2, warmup_s=0, point_duration_s=5, tiers=(50.0,), clock=clock)
    drive(phases, run, clock, 30, steady_itl)
    point = phases.advance(snap(clock.now + 1), run, final=True).sweep.points[0]  # type: ignore[union-attr]
    assert point.steady is False and point.warmup_s == 0
    assert "too few to judge" in (point.steady_reason or "")


def falling_itl(users: int, since: float) -> float:
    """With `request`'s 0.1 s first token and 11 tokens, p90 E2E-normalized interactivity 73 tok/s/user at 1
    user, 55 at 4, 37 at 16, 25 at 64."""
    return 0.005 * users**0.5


def test_a_tier_sweep_probes_then_measures_points_beside_the_crossings() -> None:
    clock, run = Clock(), FakeRun()
    phases = SweepPhases(
        (), start_users=1, warmup_s=2, point_duration_s=20, tiers=(30.0, 50.0), clock=clock, targeted=True,
        probe_duration_s=5,
    )  # fmt: skip
    ticks = drive(phases, run, clock, 3000, falling_itl)
    assert run.stopped is not None and run.stopped.startswith("sweep done: ")
    last = phases.advance(snap(clock.now + 1), run, final=True)  # type: ignore[arg-type]
    sweep = last.sweep
    assert sweep is not None and sweep.mode == "tiers"
    probes, points = sweep.probes, sweep.points
    # Every probe labelled with what it was for; none of them is a point or on the frontier.
    assert probes and all(p.purpose for p in probes)
    assert [p.index for p in probes] == list(range(1, len(probes) + 1))
    assert all(p.duration_s >= 5 and (p.requests or 0) >= 20 for p in probes)
    probe_windows = {p.window_start_s for p in probes}
    assert not probe_windows & {p.window_start_s for p in points}
    assert all(i < len(points) for i in sweep.frontier)
    assert all(p.duration_s == 20 for p in points)
    # Users change between probes and points without a restart: the load only saw set_users.
    assert run.users[: len(probes)] == [p.users for p in probes]
    assert run.users[len(probes) :] == [p.users for p in points]
    # Both tiers read, from the full points alone.
    assert all(t.total_tokens_per_s_per_gpu is not None for t in sweep.tiers)
    assert "after" in (sweep.stop_reason or "") and f"{len(probes)} probes" in (sweep.stop_reason or "")
    # The sweep's GPU time: its wall time × 2 GPUs (snap's cost), probes and warm-ups included.
    assert sweep.sweep_s == last.time - ticks[0].time and sweep.gpu_seconds == 2 * sweep.sweep_s
    # While a probe ran, the state said so.
    probing = [t.sweep for t in ticks if t.sweep is not None and t.sweep.probing]
    assert probing and all(s.step_for and s.probe_duration_s == 5 for s in probing)


def test_a_probe_lasts_a_tenth_of_a_point_at_least_30_s() -> None:
    assert default_probe_s(1800) == 180 and default_probe_s(60) == 30 and default_probe_s(20) == 20


def test_a_probes_throughput_is_final_when_it_ends_and_is_what_the_planner_decided_on() -> None:
    """A probe's throughput is the tokens of the requests that ended in its window ÷ its length: the
    planner reads it the moment the window ends, and the report's row says the same. Requests of 7.8 s,
    one a user every 8 s: by the tokens' times, the requests in flight at the window's end would be
    missing from it (0.80 of the true rate here)."""
    clock, run = Clock(), FakeRun()
    phases = SweepPhases(
        (), start_users=2, warmup_s=40, point_duration_s=60, tiers=(50.0,), targeted=True, probe_duration_s=5,
        clock=clock,
    )  # fmt: skip
    drive(phases, run, clock, 900, lambda users, since: 0.77, every=8)
    assert phases.planner is not None and phases.probes
    for row, (step, seen) in zip(phases.probes, phases.planner.probes, strict=True):
        assert row.users == step.users
        assert row.total_tokens_per_s == seen.total_tokens_per_s
        assert row.total_tokens_per_s_per_gpu == seen.total_tokens_per_s_per_gpu
        # Every user ends a request of 1,011 tokens every 8 s; the window's edges cut one or two.
        assert row.total_tokens_per_s is not None
        assert 0.88 <= row.total_tokens_per_s / (row.users * 1011 / 8) <= 1.12
        assert row.total_tokens_per_s_per_gpu == row.total_tokens_per_s / 2  # snap's cost: 2 GPUs


def test_users_that_join_midway_let_a_probe_open_once_steady_but_a_point_still_waits_for_its_requests() -> None:
    """One request a user every 8 s: 10 a user take 80 s. Joined midway (`--join midway`), new users
    bring a running load's contexts, so a probe opens as soon as MSER-5 finds the load steady; a point
    still waits for every user's 10 warm-up requests (AgentX's rule)."""
    swept = {}
    for midway in (False, True):
        clock, run = Clock(), FakeRun()
        phases = SweepPhases(
            (), start_users=2, warmup_s=200, point_duration_s=40, tiers=(50.0,), targeted=True,
            probe_duration_s=10, joined_midway=midway, clock=clock,
        )  # fmt: skip
        drive(phases, run, clock, 4000, falling_itl, every=8)
        last = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
        assert last is not None and last.points and last.join == ("midway" if midway else "start")
        swept[midway] = last
    # The doubling's probes (2, 4, 8 users) each add users with no requests yet.
    waited, joined = swept[False].probes[:3], swept[True].probes[:3]
    assert [p.users for p in joined] == [p.users for p in waited] == [2, 4, 8]
    assert all(p.warmup_s >= 80 and "every user had 10+ requests" in (p.steady_reason or "") for p in waited)
    assert all(20 <= p.warmup_s <= 40 and p.steady for p in joined)
    assert all("its users joined midway" in (p.steady_reason or "") for p in joined)
    # A point's users, new ones too, still need their 10 requests each.
    clock, run = Clock(), FakeRun()
    phases = SweepPhases(
        (2,), start_users=2, warmup_s=200, point_duration_s=10, tiers=(50.0,), joined_midway=True, clock=clock
    )
    drive(phases, run, clock, 400, falling_itl, every=8)
    point = phases.advance(snap(clock.now + 1), run, final=True).sweep.points[0]  # type: ignore[union-attr]
    assert point.warmup_s >= 80 and "every user had 10+ requests" in (point.steady_reason or "")

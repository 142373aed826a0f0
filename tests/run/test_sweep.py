"""A sweep's phases: users per point, warm-up then a measured window, points, the frontier, the end."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pytest

from agentx_tui.measure import ClientStats, Completed, e2e_per_token
from agentx_tui.run.collect import EventLog
from agentx_tui.run.sweep import SweepPhases
from agentx_tui.snapshot import CostReading, RunInfo, Snapshot
from agentx_tui.units import figure


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeLoad:
    stats: ClientStats = field(default_factory=lambda: ClientStats(10.0, 0.0))
    finished: bool = False


@dataclass
class FakeRun:
    load: FakeLoad = field(default_factory=FakeLoad)
    events: EventLog = field(default_factory=lambda: EventLog(()))
    users: list[int] = field(default_factory=list)
    stopped: str | None = None

    def set_users(self, users: int) -> None:
        self.users.append(users)

    def request_stop(self, reason: str, *, partial: bool = False) -> None:
        self.stopped = self.stopped or reason


def snap(t: float) -> Snapshot:
    return Snapshot(
        seq=int(t) + 1, time=1000.0 + t, elapsed_s=t, run=RunInfo(target="fake"),
        cost=CostReading(usd_per_gpu_hour=2.0, gpus=2, gpus_source="--gpus"),
    )  # fmt: skip


def request(sent: float, itl: float, out: int = 11, prompt: int = 1000, ttft: float = 0.1) -> Completed:
    """A request sent at `sent` whose tokens come `itl` apart after a TTFT of `ttft`."""
    first = sent + ttft
    last = first + itl * (out - 1)
    return Completed(
        sent_at=sent, first_token_at=first, last_token_at=last, ended_at=last, prompt_tokens=prompt,
        cached_tokens=prompt // 2, output_tokens=out, ceiling_tokens=prompt // 2, ttft_s=ttft,
        decode_tokens_per_s=out / (last - first), request_itl_s=itl,
        e2e_per_token_s=e2e_per_token(sent, last, last, out),
    )  # fmt: skip


def drive(phases: SweepPhases, run: FakeRun, clock: Clock, until: float, itl_by_users: dict[int, float]) -> None:
    """Tick once a second; each second every user finishes one request at its point's speed."""
    t = 0.0
    while t <= until and run.stopped is None:
        clock.now = t
        users = run.users[-1] if run.users else 0
        for _ in range(users):
            if t >= 1:
                run.load.stats.add(request(t - 1.0, itl_by_users.get(users, 0.01)))
        phases.advance(snap(t), run, final=False)  # type: ignore[arg-type]
        t += 1.0


def test_a_list_sweep_measures_each_point_after_its_warm_up() -> None:
    clock, run = Clock(), FakeRun()
    phases = SweepPhases((1, 2, 4), start_users=1, warmup_s=2, point_duration_s=5, tiers=(50.0, 100.0), clock=clock)
    drive(phases, run, clock, 60, {1: 0.005, 2: 0.008, 4: 0.02})
    assert run.users == [1, 2, 4]
    assert run.stopped == "sweep done: all 3 points measured"
    last = phases.advance(snap(clock.now + 1), run, final=True)  # type: ignore[arg-type]
    sweep = last.sweep
    assert sweep is not None and [p.users for p in sweep.points] == [1, 2, 4]
    p1, p2, p4 = sweep.points
    # Latency figures count the requests started after the warm-up and ended inside the 5 s window.
    assert (p1.requests_completed, p2.requests_completed, p4.requests_completed) == (5, 10, 20)
    assert p1.interactivity_p90_tokens_per_s is not None and p4.interactivity_p90_tokens_per_s is not None
    assert p1.interactivity_p90_tokens_per_s > p4.interactivity_p90_tokens_per_s  # more users, slower each
    assert p4.total_tokens_per_s_per_gpu is not None and p1.total_tokens_per_s_per_gpu is not None
    assert p4.total_tokens_per_s_per_gpu > p1.total_tokens_per_s_per_gpu
    assert p4.total_tokens_per_s_per_gpu == p4.total_tokens_per_s / 2  # two GPUs
    assert sweep.frontier == (2, 1, 0) and sweep.phase == "done" and sweep.current is None
    assert sweep.stop_reason == "all 3 points measured"
    assert p1.mean_prompt_tokens == 1000 and p1.tokens_per_dollar_total is not None


def test_an_interrupted_sweep_drops_the_partial_point_and_says_so() -> None:
    clock, run = Clock(), FakeRun()
    phases = SweepPhases((1, 2), start_users=1, warmup_s=1, point_duration_s=4, tiers=(50.0,), clock=clock)
    drive(phases, run, clock, 8, {})  # point 1 done at 5 s; point 2 still measuring at 8 s
    last = phases.advance(snap(9), run, final=True)  # type: ignore[arg-type]
    assert last.sweep is not None and len(last.sweep.points) == 1
    assert last.sweep.stop_reason == "interrupted after 1 point"


def test_auto_doubles_until_a_rule_stops_it() -> None:
    clock, run = Clock(), FakeRun()
    phases = SweepPhases((), start_users=1, warmup_s=1, point_duration_s=3, tiers=(50.0,), clock=clock)
    # Interactivity falls below the lowest tier (50 tok/s/user = ITL 20 ms) at 8 users.
    drive(phases, run, clock, 80, {1: 0.005, 2: 0.006, 4: 0.01, 8: 0.03, 16: 0.05})
    assert run.users == [1, 2, 4, 8]
    assert run.stopped is not None and "below the lowest tier" in run.stopped
    state = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
    assert state is not None and state.mode == "auto" and state.planned_users == (1, 2, 4, 8)


def test_each_tick_says_where_the_sweep_stands() -> None:
    clock, run = Clock(), FakeRun()
    phases = SweepPhases((4, 8), start_users=4, warmup_s=10, point_duration_s=30, tiers=(100.0,), clock=clock)
    first = phases.advance(snap(0), run, final=False).sweep  # type: ignore[arg-type]
    assert first is not None and (first.current, first.current_users, first.phase) == (0, 4, "warmup")
    assert first.phase_left_s == 10
    clock.now = 12
    measuring = phases.advance(snap(12), run, final=False).sweep  # type: ignore[arg-type]
    assert measuring is not None and measuring.phase == "measure" and measuring.phase_left_s == 30


# --- --precision: a point ends once it is sure enough, or at --point-duration ----------------------------


def drive_trees(
    phases: SweepPhases, run: FakeRun, clock: Clock, until: float, request_of: Callable[[int, float], Completed]
) -> None:
    """Tick once a second; each second every user (its own session tree) finishes one request."""
    t = 0.0
    while t <= until and run.stopped is None:
        clock.now = t
        users = run.users[-1] if run.users else 0
        if t >= 1:
            for user in range(users):
                run.load.stats.add(request_of(user, t - 1.0))
        phases.advance(snap(t), run, final=False)  # type: ignore[arg-type]
        t += 1.0


def steady(user: int, sent: float) -> Completed:
    return replace(request(sent, 0.01), tree=user, user=user)


def test_a_point_that_becomes_precise_ends_early_and_says_why() -> None:
    clock, run = Clock(), FakeRun()
    phases = SweepPhases(
        (12, 24), start_users=12, warmup_s=2, point_duration_s=60, tiers=(50.0,), precision=0.05, clock=clock
    )
    drive_trees(phases, run, clock, 200, steady)
    assert run.stopped == "sweep done: all 2 points measured"
    sweep = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
    assert sweep is not None and sweep.precision == 0.05
    for point in sweep.points:
        assert point.stopped_early and point.duration_s < 60
        assert point.stop_reason is not None and point.stop_reason.startswith("precision ±5% reached: throughput ±")
        assert point.requests_completed >= 20
        (low, high), value = point.interval("total_tokens_per_s_per_gpu"), point.total_tokens_per_s_per_gpu
        assert low is not None and value is not None and high is not None and low <= value <= high
        assert point.ci_method is not None
    # The second point's 12 slots from the first are a cohort apart from the 12 it added.
    assert "over 12 user slots;" in str(sweep.points[0].ci_method)
    assert "over 24 user slots in 2 cohorts" in str(sweep.points[1].ci_method)


def test_a_point_that_never_becomes_precise_runs_to_point_duration() -> None:
    rng = random.Random(4)

    def wild(user: int, sent: float) -> Completed:  # prompts of 10 or 20 000 tokens, ITL 5 or 50 ms
        return replace(request(sent, rng.choice((0.005, 0.05)), prompt=rng.choice((10, 20_000))), tree=user)

    clock, run = Clock(), FakeRun()
    phases = SweepPhases(
        (12,), start_users=12, warmup_s=2, point_duration_s=20, tiers=(50.0,), precision=0.05, clock=clock
    )
    drive_trees(phases, run, clock, 100, wild)
    sweep = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
    assert sweep is not None
    (point,) = sweep.points
    assert not point.stopped_early and point.duration_s == 20
    assert point.stop_reason is not None
    assert point.stop_reason.startswith("--point-duration 20 s reached before ±5%: throughput ±")


def test_without_precision_a_point_says_it_measured_its_duration() -> None:
    clock, run = Clock(), FakeRun()
    phases = SweepPhases((12,), start_users=12, warmup_s=2, point_duration_s=10, tiers=(50.0,), clock=clock)
    drive_trees(phases, run, clock, 100, steady)
    sweep = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
    assert sweep is not None
    (point,) = sweep.points
    assert not point.stopped_early and point.stop_reason == "--point-duration 10 s measured"
    assert point.interval("total_tokens_per_s_per_gpu")[0] is not None  # intervals whether or not --precision is set


# --- the frontier's axis: the North Star by default, decode beside it -----------------------------------


def queued(sent: float, ttft: float, itl: float = 0.01, out: int = 11) -> Completed:
    """A request whose first token waits `ttft` (a server queueing more with more users)."""
    return request(sent, itl, out, ttft=ttft)


def sweep_with_growing_ttft(**kw: object) -> tuple[SweepPhases, FakeRun, Clock]:
    clock, run = Clock(), FakeRun()
    phases = SweepPhases((1, 2, 4), start_users=1, warmup_s=2, point_duration_s=5, tiers=(50.0, 90.0), clock=clock,
                         **kw)  # type: ignore[arg-type]  # fmt: skip
    ttft = {1: 0.05, 2: 0.3, 4: 0.8}  # decode stays at 100 tok/s/user (ITL 10 ms); the wait grows
    t = 0.0
    while t <= 60 and run.stopped is None:
        clock.now = t
        users = run.users[-1] if run.users else 0
        for _ in range(users):
            if t >= 1:
                run.load.stats.add(queued(t - 1.0, ttft[users], itl=0.01 * (1 + 0.05 * users)))
        phases.advance(snap(t), run, final=False)  # type: ignore[arg-type]
        t += 1.0
    return phases, run, clock


def test_the_tiers_are_read_on_the_north_star_and_on_decode_beside_it() -> None:
    phases, run, clock = sweep_with_growing_ttft()
    sweep = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
    assert sweep is not None and sweep.frontier_axis == "e2e_interactivity"
    p1 = sweep.points[0]
    # r_i = (TTFT + 10 ITL) / 11 tokens: 1 user, (0.05 + 0.105) / 11 s per token, ≈ 71 tok/s/user
    assert p1.e2e_interactivity_p90_tokens_per_s == pytest.approx(11 / (0.05 + 0.105), rel=0.02)
    assert p1.interactivity_p90_tokens_per_s == pytest.approx(1 / 0.0105, rel=0.02)
    assert [t.axis for t in sweep.tiers] == ["e2e_interactivity"] * 2
    assert sweep.secondary_tiers is not None and [t.axis for t in sweep.secondary_tiers] == ["decode_interactivity"] * 2
    at_90, at_90_decode = sweep.tiers[1], sweep.secondary_tiers[1]
    assert at_90.total_tokens_per_s_per_gpu is None  # no point is that fast end to end
    assert at_90_decode.total_tokens_per_s_per_gpu is not None  # but decoding, every point is
    assert sweep.secondary_frontier is not None and set(sweep.secondary_frontier) <= set(sweep.frontier)
    assert any("at p90 E2E-normalized interactivity" in e for e in run.events.take())


def test_with_the_decode_axis_the_views_swap() -> None:
    phases, run, clock = sweep_with_growing_ttft(axis="decode_interactivity")
    sweep = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
    assert sweep is not None and sweep.frontier_axis == "decode_interactivity"
    assert [t.axis for t in sweep.tiers] == ["decode_interactivity"] * 2
    assert sweep.secondary_tiers is not None and sweep.secondary_tiers[1].axis == "e2e_interactivity"
    assert sweep.tiers[1].total_tokens_per_s_per_gpu is not None
    assert sweep.secondary_tiers[1].total_tokens_per_s_per_gpu is None


def test_the_agents_per_gpu_are_read_on_the_frontier_axis() -> None:
    """Each tier on the chosen axis carries the users on its frontier at T, and per GPU (2 here)."""
    phases, run, clock = sweep_with_growing_ttft()
    sweep = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
    assert sweep is not None and sweep.secondary_tiers is not None
    at_50, at_90 = sweep.tiers
    assert at_50.users is not None and 1 < at_50.users < 2  # the North Star falls through 50 between 1 and 2 users
    assert at_50.agents_per_gpu == pytest.approx(at_50.users / 2)
    assert at_90.users is None and at_90.agents_per_gpu is None  # no point is that fast end to end
    assert all(t.agents_per_gpu is None and t.users is None for t in sweep.secondary_tiers)
    phases, run, clock = sweep_with_growing_ttft(axis="decode_interactivity")
    decode = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
    assert decode is not None and decode.tiers[1].agents_per_gpu is not None  # on decode, 90 is on the frontier
    assert decode.tiers[0].agents_per_gpu is None


def test_auto_judges_growth_on_each_points_final_throughput() -> None:
    """Throughput flat from 4 users on (only 4 requests end a second, whatever the users). The growth rule
    waits for the 16-user point's final figures (its window closed when the next step's opened), names the
    numbers the points carry, and the 32-user step it began is not measured."""
    clock, run = Clock(), FakeRun()
    phases = SweepPhases((), start_users=1, warmup_s=2, point_duration_s=5, tiers=(10.0,), clock=clock)
    t = 0.0
    while t <= 200 and run.stopped is None:
        clock.now = t
        users = run.users[-1] if run.users else 0
        for _ in range(min(users, 4) if t >= 1 else 0):
            run.load.stats.add(request(t - 1.0, 0.005))
        phases.advance(snap(t), run, final=False)  # type: ignore[arg-type]
        t += 1.0
    assert run.users == [1, 2, 4, 8, 16, 32]
    state = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
    assert state is not None and [p.users for p in state.points] == [1, 2, 4, 8, 16]
    assert state.planned_users == (1, 2, 4, 8, 16)
    reason = state.stop_reason or ""
    assert reason.startswith("Total throughput grew less than 5% twice in a row") and "at 4, 8, 16 users" in reason
    for point in state.points[2:]:
        assert figure(point.total_tokens_per_s_per_gpu) in reason

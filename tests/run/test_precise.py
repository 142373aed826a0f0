"""A plain run with --precision (run/precise.py): it ends once sure enough, or at --duration, and its
last snapshot carries the intervals and why it ended."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from agentx_tui.measure import Completed
from agentx_tui.run.precise import PreciseRun
from agentx_tui.snapshot import Snapshot, WorkerLossRow
from tests.run.test_sweep import Clock, FakeRun, request, snap

USERS = 12


def drive(
    phases: PreciseRun, run: FakeRun, clock: Clock, until: float, request_of: Callable[[int, float], Completed]
) -> Snapshot:
    """Tick once a second; each second every user (its own session tree) finishes one request; then the
    final snapshot."""
    t = 0.0
    while t <= until and run.stopped is None:
        clock.now = t
        if t >= 1:
            for user in range(USERS):
                run.load.stats.add(request_of(user, t - 1.0))
        phases.advance(snap(t), run, final=False)  # type: ignore[arg-type]
        t += 1.0
    clock.now = t
    return phases.advance(snap(t), run, final=True)  # type: ignore[arg-type]


def test_a_run_that_becomes_precise_ends_early_with_its_intervals() -> None:
    clock, run = Clock(), FakeRun()
    last = drive(PreciseRun(300.0, 0.05, clock=clock), run, clock, 300, lambda u, t: replace(request(t, 0.01), tree=u))
    assert run.stopped is not None and run.stopped.startswith("precision ±5% reached: throughput ±")
    assert clock.now < 30
    iv = last.intervals
    assert iv is not None and iv.stopped_early and iv.precision == 0.05 and iv.requests >= 20
    assert iv.stop_reason == run.stopped
    for key in ("total_tokens_per_s_per_gpu", "interactivity_p90_tokens_per_s"):
        (low, high), value = iv.interval(key), getattr(iv, key)
        assert low is not None and value is not None and high is not None and low <= value <= high
    assert iv.ci_method is not None


def test_a_run_that_never_becomes_precise_ends_at_its_duration() -> None:
    rng = random.Random(9)

    def wild(user: int, sent: float) -> Completed:
        return replace(request(sent, rng.choice((0.005, 0.05)), prompt=rng.choice((10, 20_000))), tree=user)

    clock, run = Clock(), FakeRun()
    last = drive(PreciseRun(20.0, 0.05, clock=clock), run, clock, 100, wild)
    assert run.stopped == "duration reached"
    iv = last.intervals
    assert iv is not None and not iv.stopped_early
    assert iv.stop_reason is not None and iv.stop_reason.startswith("--duration reached before ±5%: throughput ±")


def test_precision_checks_the_p90_of_the_frontier_axis() -> None:
    """E2E-normalized by default: waits before the first token that vary widely leave the North Star
    imprecise while decode is steady; `--precision` says which p90 it checked."""
    rng = random.Random(3)

    def waits(user: int, sent: float) -> Completed:
        ttft = rng.lognormvariate(0.0, 1.0)  # a heavy tail of waits
        return replace(request(sent, 0.01, ttft=ttft), tree=user, user=user)

    clock, run = Clock(), FakeRun()
    last = drive(PreciseRun(20.0, 0.05, clock=clock), run, clock, 100, waits)
    iv = last.intervals
    assert iv is not None and not iv.stopped_early
    assert iv.stop_reason is not None and "p90 E2E-normalized interactivity ±" in iv.stop_reason
    assert "p90 E2E-normalized interactivity ±0.0%" not in iv.stop_reason  # end to end: far from steady
    assert iv.e2e_interactivity_p90_tokens_per_s is not None
    clock, run = Clock(), FakeRun()
    rng.seed(3)
    decode = drive(PreciseRun(20.0, 0.05, axis="decode_interactivity", clock=clock), run, clock, 100, waits)
    assert decode.intervals is not None and decode.intervals.stop_reason is not None
    assert "p90 interactivity ±0.0%" in decode.intervals.stop_reason  # decode: steady


def test_a_run_whose_every_load_worker_died_ends_cut_short() -> None:
    clock, run = Clock(), FakeRun()
    phases = PreciseRun(300.0, 0.05, clock=clock)
    phases.advance(snap(0), run, final=False)  # type: ignore[arg-type]
    last = WorkerLossRow(
        at_s=0.5, worker=1, workers=1, pid=77, how="SIGKILL", users=USERS, users_lost=USERS, users_left=0
    )
    tick = snap(1)
    tick = tick.model_copy(update={"run": tick.run.model_copy(update={"load_losses": (last,)})})
    final = phases.advance(tick, run, final=False)  # type: ignore[arg-type]
    assert run.stopped == "every load worker died: no user is left to measure"
    assert final.intervals is not None and final.intervals.stop_reason == run.stopped

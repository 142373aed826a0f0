"""A plain run's phases (run/phases.py): its duration, and with --warmup its measured window after the
warm-up, whose figures the last snapshot carries (docs/metrics.md, "Warm-up")."""

from __future__ import annotations

from dataclasses import replace

from agentx_tui.run.phases import TimedRun
from agentx_tui.run.precise import PreciseRun
from agentx_tui.snapshot import Snapshot
from tests.run.test_sweep import Clock, FakeRun, request, snap

USERS = 4


def drive(phases: TimedRun | PreciseRun, run: FakeRun, clock: Clock, until: float) -> Snapshot:
    """Tick once a second; each second every user finishes one request sent a second before, the first
    ones (each user's session's first) slow to their first token; then the final snapshot."""
    t = 0.0
    while t <= until and run.stopped is None:
        clock.now = t
        if t >= 1:
            for user in range(USERS):
                first = t == 1
                done = request(t - 1.0, 0.01, ttft=0.8 if first else 0.05)
                run.load.stats.add(replace(done, tree=user, user=user, idle_s=None if first else 0.1))
        phases.advance(snap(t), run, final=False)  # type: ignore[arg-type]
        t += 1.0
    clock.now = t
    return phases.advance(snap(t), run, final=True)  # type: ignore[arg-type]


def test_a_plain_run_without_a_warm_up_carries_no_window() -> None:
    clock, run = Clock(), FakeRun()
    last = drive(TimedRun(10.0, clock=clock), run, clock, 100)
    assert run.stopped == "duration reached" and last.measured is None
    assert not run.load.stats._windows  # nothing opened, nothing left counting


def test_the_warm_up_s_window_counts_the_requests_sent_after_it() -> None:
    clock, run = Clock(), FakeRun()
    last = drive(TimedRun(12.0, warmup_s=3.0, clock=clock), run, clock, 100)
    assert run.stopped == "duration reached"
    window = last.measured
    assert window is not None and window.warmup_s == 3.0 and window.window_start_s == 3.0
    # Sent at 3 s or later, ended inside: 9 seconds' worth of each user's requests, the slow first ones out.
    assert window.requests == USERS * 9 and window.ttft_p90_s is not None and window.ttft_p90_s < 0.06
    assert window.duration_s == 10.0  # from the tick at 3 s to the final one at 13 s
    # The run's own figures keep every request, the first ones too.
    assert run.load.stats.run.requests == USERS * 12 and not run.load.stats._windows
    said = run.events.take()
    assert any("warm-up: the first 3 s are not measured" in line for line in said)
    assert any("warm-up over" in line for line in said)


def test_a_run_that_ends_inside_its_warm_up_measured_nothing() -> None:
    clock, run = Clock(), FakeRun()
    run.load.finished = True  # its sessions ran out at once
    last = drive(TimedRun(None, warmup_s=30.0, clock=clock), run, clock, 100)
    assert run.stopped == "every session has ended"
    window = last.measured
    assert window is not None and window.requests == 0 and window.duration_s == 0.0
    assert window.ttft_p90_s is None and window.total_tokens_per_s is None


def test_a_precise_run_measures_its_precision_after_the_warm_up_too() -> None:
    clock, run = Clock(), FakeRun()
    last = drive(PreciseRun(20.0, 0.5, warmup_s=4.0, clock=clock), run, clock, 100)
    window, intervals = last.measured, last.intervals
    assert window is not None and intervals is not None and window.warmup_s == 4.0
    assert intervals.requests == window.requests and window.window_start_s == 4.0
    assert window.ttft_p90_s is not None and window.ttft_p90_s < 0.06

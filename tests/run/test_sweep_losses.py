"""A sweep whose load worker dies (docs/sweeps.md, "A lost load worker"): the point it died in is not
measured with its users, so its window is dropped, the users restarted and the point measured again
from a new warm-up; lost again in the same point, or not restartable, the sweep stops, cut short."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agentx_tui.run.sweep import SweepPhases
from agentx_tui.snapshot import RunInfo, Snapshot, WorkerLossRow
from tests.run.test_sweep import Clock, FakeLoad, FakeRun, request, snap


@dataclass
class LosingLoad(FakeLoad):
    restarts: list[float] = field(default_factory=list)  # the clock's time of each `restart_lost`
    clock: Clock = field(default_factory=Clock)

    def restart_lost(self) -> None:
        self.restarts.append(self.clock.now)


@dataclass
class LosingRun(FakeRun):
    partial: bool = False

    def request_stop(self, reason: str, *, partial: bool = False) -> None:
        self.partial = self.partial or (partial and self.stopped is None)
        super().request_stop(reason, partial=partial)


def loss(at_s: float, *, restarted_at_s: float | None = None, error: str | None = None) -> WorkerLossRow:
    return WorkerLossRow(
        at_s=at_s, worker=2, workers=2, pid=4242, how="SIGKILL", users=2, users_lost=1, users_left=1,
        restarted_at_s=restarted_at_s, restart_error=error,
    )  # fmt: skip


Losses = Callable[[float], tuple[WorkerLossRow, ...]]


def drive(phases: SweepPhases, run: LosingRun, clock: Clock, until: float, losses: Losses) -> list[Snapshot]:
    """Tick once a second, each user finishing a request a second; `losses(t)`: the run's lost workers
    as the tick at `t` carries them. Returns the published snapshots."""
    out = []
    t = 0.0
    while t <= until and run.stopped is None:
        clock.now = t
        users = run.users[-1] if run.users else 0
        for _ in range(users if t >= 1 else 0):
            run.load.stats.add(request(t - 1.0, 0.01))
        tick = snap(t)
        tick = tick.model_copy(update={"run": RunInfo(target="fake", users=users, load_losses=losses(t))})
        out.append(phases.advance(tick, run, final=False))  # type: ignore[arg-type]
        t += 1.0
    return out


def setup(users: tuple[int, ...] = (2, 4)) -> tuple[SweepPhases, LosingRun, Clock]:
    clock = Clock()
    run = LosingRun(load=LosingLoad(clock=clock))
    phases = SweepPhases(users, start_users=2, warmup_s=2, point_duration_s=5, tiers=(50.0,), clock=clock)
    return phases, run, clock


def test_a_worker_lost_mid_point_is_restarted_and_the_point_measured_again() -> None:
    phases, run, clock = setup()

    def losses(t: float) -> tuple[WorkerLossRow, ...]:  # lost at 4 s (point 1 measures 2–7 s), back at 7 s
        return () if t < 4 else (loss(4.0, restarted_at_s=7.0 if t >= 7 else None),)

    ticks = drive(phases, run, clock, 60, losses)
    assert run.load.restarts == [4.0]  # the lost users restarted once, at once
    held = [s.sweep for s in ticks[4:7]]
    # While the users are restarted the point waits: its warm-up begins once they run again.
    assert all(s is not None and s.current == 0 and s.phase == "warmup" and s.phase_left_s == 2 for s in held)
    assert run.stopped == "sweep done: all 2 points measured" and not run.partial
    sweep = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
    assert sweep is not None and [p.users for p in sweep.points] == [2, 4]
    # Measured again from the restart's tick (7 s) after a whole warm-up; the dropped window is no point.
    assert sweep.points[0].window_start_s == 9.0 and sweep.points[0].index == 0
    assert sweep.points[1].window_start_s == 16.0
    events = run.events.take()
    assert any("sweep point 1 (2 users): load workers lost; its window is dropped" in e for e in events)
    assert any(
        e.endswith("sweep point 1 (2 users): its users run again, warm-up until steady, at most 2 s") for e in events
    )


def test_lost_again_in_the_same_point_the_sweep_stops_cut_short() -> None:
    phases, run, clock = setup()

    def losses(t: float) -> tuple[WorkerLossRow, ...]:
        first = () if t < 4 else (loss(4.0, restarted_at_s=5.0 if t >= 5 else None),)
        return first + ((loss(8.0),) if t >= 8 else ())

    drive(phases, run, clock, 60, losses)
    assert run.load.restarts == [4.0]  # not a second time: a point that kills its workers is not luck
    assert run.partial and run.stopped is not None
    assert run.stopped.startswith("sweep stopped: load workers lost again in point 1 (2 users): load worker 2 of 2")
    sweep = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
    assert sweep is not None and sweep.points == () and sweep.phase == "done"
    assert sweep.stop_reason is not None and sweep.stop_reason.startswith("load workers lost again in point 1")


def test_a_loss_in_a_later_point_is_restarted_too() -> None:
    phases, run, clock = setup()

    def losses(t: float) -> tuple[WorkerLossRow, ...]:  # point 1: 2–7 s; point 2 warms up from 7 s
        first = () if t < 4 else (loss(4.0, restarted_at_s=5.0 if t >= 5 else None),)
        return first + ((loss(16.0, restarted_at_s=17.0 if t >= 17 else None),) if t >= 16 else ())

    drive(phases, run, clock, 80, losses)
    assert run.load.restarts == [4.0, 16.0] and not run.partial
    sweep = phases.advance(snap(clock.now + 1), run, final=True).sweep  # type: ignore[arg-type]
    assert sweep is not None and [p.users for p in sweep.points] == [2, 4]
    assert sweep.points[1].window_start_s == 19.0


def test_users_that_cannot_be_restarted_stop_the_sweep() -> None:
    phases, run, clock = setup()

    def losses(t: float) -> tuple[WorkerLossRow, ...]:
        failed = "Load worker 1 did not start within 60 s" if t >= 6 else None
        return () if t < 4 else (loss(4.0, error=failed),)

    drive(phases, run, clock, 60, losses)
    assert run.partial
    assert run.stopped == (
        "sweep stopped: the load workers lost in point 1 (2 users) could not be restarted: "
        "Load worker 1 did not start within 60 s"
    )

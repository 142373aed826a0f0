"""The tick loop: one snapshot per tick to every subscriber, then drain, one final snapshot, close."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace

import pytest

from agentx_tui.cli import parse_args
from agentx_tui.load.spreading.generator import LoadSample, WorkerLoss
from agentx_tui.measure import ClientStats
from agentx_tui.run import build_plan
from agentx_tui.run.agentx import AgentXWatch
from agentx_tui.run.collect import Collected, EventLog
from agentx_tui.run.live import LiveRun
from agentx_tui.run.phases import TimedRun
from agentx_tui.run.serving import Serving
from agentx_tui.run.subscribers import DashboardFeed, Fanout
from agentx_tui.run.traffic import Traffic
from agentx_tui.snapshot import (
    AgentXVerdict,
    ClientHealth,
    ClientReading,
    CostReading,
    Figures,
    GpuState,
    Snapshot,
)
from agentx_tui.sweep import AgentXSetup
from tests.helpers.waiting import until


class FakeCollectors:
    """Each collection is one interval later than the one before, on its own clock: a run of N
    seconds has N ÷ interval ticks however late a busy machine runs them."""

    def __init__(self, start: float = 0.0, interval_s: float = 0.05) -> None:
        self.collected = 0
        self.closed = False
        self.price: tuple[float | None, int | None] | None = None
        self.start, self.interval_s = start, interval_s

    async def collect(self) -> Collected:
        self.collected += 1
        now = self.start + (self.collected - 1) * self.interval_s
        return Collected(now, (), None, GpuState(), None, CostReading(), ())

    def set_price(self, usd_per_gpu_hour: float | None, gpus: int | None) -> None:
        self.price = (usd_per_gpu_hour, gpus)

    def reset_windows(self) -> None:
        pass

    async def close(self) -> None:
        self.closed = True


@dataclass
class Recorded:
    snaps: list[Snapshot] = field(default_factory=list)
    closed: int = 0

    def publish(self, snap: Snapshot) -> None:
        self.snaps.append(snap)

    def close(self) -> None:
        self.closed += 1


class Broken:
    def publish(self, snap: Snapshot) -> None:
        raise OSError("the terminal is gone")

    def close(self) -> None:
        raise OSError("still gone")


class Judging(AgentXWatch):
    """Records what each tick's verdict was asked with."""

    def __init__(self) -> None:
        super().__init__(AgentXSetup(), lambda _: None)
        self.asked: list[tuple[bool, str | None]] = []

    def verdict(self, snap: Snapshot, *, final: bool, partial_reason: str | None) -> AgentXVerdict | None:
        self.asked.append((final, partial_reason))
        return AgentXVerdict(final=final)


def _run(
    *argv: str, subscribers: list[object] | None = None, agentx: AgentXWatch | None = None
) -> tuple[LiveRun, Recorded, FakeCollectors]:
    plan = build_plan(parse_args(["--interval", "0.05", "-w", "none", *argv]))
    recorded = Recorded()
    events = EventLog(plan.secrets)
    fanout = Fanout([recorded, *(subscribers or [])], on_error=events.add)  # type: ignore[list-item]
    collectors = FakeCollectors()
    serving = Serving("fake target", True, [])
    live = LiveRun(plan, serving, None, TimedRun(plan.duration_s), fanout, events, collectors, agentx=agentx)
    collectors.start = live.started_at
    return live, recorded, collectors


async def test_ticks_until_the_duration_then_one_final_snapshot() -> None:
    live, recorded, collectors = _run("--duration", "0.3")
    outcome = await live.run()
    seqs = [s.seq for s in recorded.snaps]
    assert seqs == list(range(1, len(seqs) + 1)) and 6 <= len(seqs) <= 10
    assert outcome.reason == "duration reached" and outcome.partial_reason is None
    assert outcome.ticks == len(seqs) == collectors.collected
    assert recorded.snaps[-1].run.state == "stopping"  # the final snapshot, after the drain
    assert recorded.closed == 1


async def test_a_stop_request_ends_the_run_partial_and_mid_tick() -> None:
    live, recorded, _ = _run()
    task = asyncio.create_task(live.run())
    await until(lambda: len(recorded.snaps) >= 1)
    live.request_stop("stopped by SIGTERM", partial=True)
    live.request_stop("a second reason is ignored")
    outcome = await asyncio.wait_for(task, 2)
    assert outcome.reason == outcome.partial_reason == "stopped by SIGTERM"
    assert len(recorded.snaps) >= 2 and recorded.closed == 1


async def test_every_tick_carries_the_agentx_verdict_and_the_last_knows_the_run_was_cut_short() -> None:
    judging = Judging()
    live, recorded, _ = _run(agentx=judging)
    task = asyncio.create_task(live.run())
    await until(lambda: len(recorded.snaps) >= 2)
    live.request_stop("stopped by SIGTERM", partial=True)
    await asyncio.wait_for(task, 2)
    assert all(s.agentx is not None for s in recorded.snaps)
    assert recorded.snaps[-1].agentx == AgentXVerdict(final=True)
    assert judging.asked[0] == (False, None) and judging.asked[-1] == (True, "stopped by SIGTERM")


async def test_a_failing_subscriber_does_not_stop_the_others() -> None:
    live, recorded, _ = _run("--duration", "0.15", subscribers=[Broken()])
    await live.run()
    assert recorded.snaps and recorded.closed == 1
    assert any("Broken stopped: the terminal is gone" in e for s in recorded.snaps for e in s.events)


async def test_controls_reach_the_collectors_and_events_are_logged() -> None:
    live, recorded, collectors = _run("--duration", "0.15")
    live.set_price(3.5, 2)
    await live.run()
    assert collectors.price == (3.5, 2)
    assert any("cost price changed" in e for s in recorded.snaps for e in s.events)


async def test_the_dashboard_feed_keeps_the_newest_and_ends() -> None:
    feed = DashboardFeed(maxsize=2)
    live, _, _ = _run("--duration", "0.3", subscribers=[feed])
    await live.run()
    got = [s async for s in feed.snapshots()]
    assert 1 <= len(got) <= 2 and got[-1].run.state == "stopping"


@pytest.mark.parametrize("users", [0, 3])
async def test_users_without_load_stay_zero(users: int) -> None:
    live, _, _ = _run("--duration", "0.05")
    live.set_users(users)
    assert live.users == 0 and not live.paused


class LateReplay(FakeCollectors):
    """A timed replay whose users fall behind its schedule from the third tick on."""

    async def collect(self) -> Collected:
        base = await super().collect()
        behind = self.collected >= 3
        client = ClientReading(
            run=Figures(schedule_lag_p90_s=2.0 if behind else 0.001, schedule_behind=behind, schedule_users_needed=12)
        )
        return replace(base, load=LoadSample(client, ClientHealth()))


async def test_a_replay_behind_its_schedule_is_said_once() -> None:
    live, recorded, _ = _run("--duration", "0.4")
    collectors = live.collectors = LateReplay(live.started_at)
    await live.run()
    said = [e for s in recorded.snaps for e in s.events if "behind schedule" in e]
    assert collectors.collected > 3 and len(said) == 1
    assert "2.00 s after they were due" in said[0] and "about 12 users" in said[0]


class LosingLoad:
    """A load of two workers of 2 users each that loses them, one at a time (`lose`)."""

    on_event = None
    workers = 2
    paused = False
    finished = False

    def __init__(self) -> None:
        self.users, self.users_lost = 4, 0
        self.losses: tuple[WorkerLoss, ...] = ()
        self.stats = ClientStats(10.0, time.monotonic())

    def lose(self, worker: int) -> None:
        self.users_lost += 2
        loss = WorkerLoss(worker, 2, 4000 + worker, "SIGKILL", 4, 2, 4 - self.users_lost, time.time())
        self.losses = (*self.losses, loss)

    async def drain(self, timeout_s: float) -> bool:
        return True

    async def stop(self) -> None:
        pass


class Losing(FakeCollectors):
    """Worker 2 of 2 dies before the third tick, worker 1 before the sixth."""

    def __init__(self, load: LosingLoad, start: float) -> None:
        super().__init__(start)
        self.load = load

    async def collect(self) -> Collected:
        if self.collected == 2:
            self.load.lose(1)
        elif self.collected == 5:
            self.load.lose(0)
        return await super().collect()


async def test_a_plain_run_shows_the_users_it_drives_and_stops_when_none_is_left() -> None:
    plan = build_plan(parse_args(["--interval", "0.05", "--duration", "30"]))
    recorded, events = Recorded(), EventLog(plan.secrets)
    load = LosingLoad()
    traffic = Traffic(load, None, load.stats)  # type: ignore[arg-type]
    live = LiveRun(
        plan, Serving("fake", True, []), traffic, TimedRun(30), Fanout([recorded], on_error=events.add), events
    )
    live.collectors = Losing(load, live.started_at)
    outcome = await asyncio.wait_for(live.run(), 20)
    assert [s.run.users for s in recorded.snaps[:4]] == [4, 4, 2, 2]  # driven: the asked 4 less the lost
    assert [s.run.users_lost for s in recorded.snaps[:4]] == [0, 0, 2, 2]  # …said apart: not a ramp
    (row,) = recorded.snaps[2].run.load_losses
    assert (row.worker, row.workers, row.pid, row.users_left, row.point) == (2, 2, 4001, 2, None)
    assert 0 <= row.at_s < 5  # on the run's clock
    # With no worker left a plain run measures nothing more: it ends, cut short (a sweep restarts them).
    assert outcome.partial_reason == "every load worker died: no user is left to measure"
    assert recorded.snaps[-1].run.users == 0 and len(recorded.snaps[-1].run.load_losses) == 2
    assert recorded.snaps[-1].run.load_losses[0] == row  # rows keep their first stamps


class PausableLoad(LosingLoad):
    """A load that the dashboard's `p` pauses and resumes."""

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False


class WallClock(FakeCollectors):
    """Collections stamped with the wall clock, as the real collectors stamp them."""

    async def collect(self) -> Collected:
        return replace(await super().collect(), time=time.time())


async def test_a_pause_stops_the_runs_clock_and_its_duration() -> None:
    # A run of 1 s of clock, paused from before its first tick: a busy host may start it late, so the
    # pause is awaited past the run's length on the wall clock, not at a fixed moment.
    length_s = 1.0
    plan = build_plan(parse_args(["--interval", "0.05", "--duration", str(length_s)]))
    recorded, events = Recorded(), EventLog(plan.secrets)
    load = PausableLoad()
    traffic = Traffic(load, None, load.stats)  # type: ignore[arg-type]
    live = LiveRun(
        plan, Serving("fake", True, []), traffic, TimedRun(length_s), Fanout([recorded], on_error=events.add), events
    )
    live.collectors = WallClock(live.started_at)
    live.pause()
    task = asyncio.create_task(live.run())
    await until(lambda: len(recorded.snaps) >= 2 and recorded.snaps[-1].elapsed_s >= length_s + 0.3, timeout=20)
    first, paused = recorded.snaps[0], recorded.snaps[-1]
    assert paused.run.state == "paused" and paused.elapsed_s - first.elapsed_s >= 0.3
    # The clock stands still (read apart from the tick: 0.1 s on a busy host) while the wall clock runs on.
    assert paused.clock_s == pytest.approx(first.clock_s, abs=0.1)
    held = paused.run.paused_s
    assert held >= paused.elapsed_s - first.elapsed_s - 0.1
    assert not task.done()  # a run timed by the wall clock would have ended
    live.resume()
    await asyncio.wait_for(task, 20)
    last = recorded.snaps[-1]
    # It ran its length of clock after the pause, so it outlived the wall-clock moment it was paused at.
    assert last.clock_s >= length_s and last.run.paused_s >= held and last.elapsed_s > paused.elapsed_s
    # The pause ended: its length stays what it was.
    assert last.run.paused_s == pytest.approx(recorded.snaps[-2].run.paused_s)

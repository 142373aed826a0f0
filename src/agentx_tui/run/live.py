"""The live run: one tick loop that collects a Snapshot and pushes it to every subscriber, and the
controls the dashboard may use (docs/architecture.md, "The run's life").

Each tick: collect (run/collect.py), let the phases of the plan advance (a plain run's duration, a
sweep's points), publish. When the run ends — its duration, its sweep, `q`, a signal, a crashed
server — the load is drained, one final snapshot is published (so the last server counters and client
records cover the same requests), and the subscribers are closed. Stop, drain, final snapshot: here
and nowhere else.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Protocol

from agentx_tui.errors import AgentXError
from agentx_tui.load import WorkerLoss, fit_to_servers, list_presets, prepare_workload
from agentx_tui.run.agentx import AgentXWatch
from agentx_tui.run.collect import Collected, Collectors, EventLog
from agentx_tui.run.phases import Phases
from agentx_tui.run.plan import RunPlan
from agentx_tui.run.serving import Serving
from agentx_tui.run.subscribers import Fanout
from agentx_tui.run.traffic import Traffic
from agentx_tui.snapshot import RunInfo, RunState, Snapshot, TaskReading, WorkerLossRow
from agentx_tui.snapshot.bottleneck import schedule_behind, simulator_behind

_CRASH_LOG_LINES = 15  # as many as a failed start-up shows (engine/launcher.py)
_INTERRUPTED_DRAIN_S = 1.0  # a user who pressed Ctrl-C wants out, not a full drain
_FLEET_SETTLE_MAX_S = 45.0


class Collecting(Protocol):
    """What the loop needs of its collectors (run/collect.py; a fake in tests)."""

    async def collect(self) -> Collected: ...

    def set_price(self, usd_per_gpu_hour: float | None, gpus: int | None) -> None: ...

    def reset_windows(self) -> None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class Outcome:
    """How the run ended."""

    reason: str
    partial_reason: str | None  # set when the run was cut short (signal, crash)
    server_exit: tuple[int | None, list[str]] | None  # a launched server that died: (code, last lines)
    ticks: int


class LiveRun:
    """The tick loop and the `LiveControls` of a live run."""

    def __init__(
        self,
        plan: RunPlan,
        serving: Serving,
        traffic: Traffic | None,
        phases: Phases,
        subscribers: Fanout,
        events: EventLog,
        collectors: Collecting | None = None,
        agentx: AgentXWatch | None = None,
    ) -> None:
        self.plan = plan
        self.serving = serving
        self.traffic = traffic
        self.load = traffic.load if traffic is not None else None  # what the controls act on
        self.phases = phases
        self.subscribers = subscribers
        self.events = events
        self.started_at = time.time()
        self._workload = plan.load.workload
        self.collectors = collectors or Collectors(plan, serving, traffic, events, self.started_at)
        self.agentx = agentx  # the AgentX verdict of each tick (run/agentx.py); None: not judged
        self._stop = asyncio.Event()
        self._stop_reason: str | None = None
        self._partial_reason: str | None = None
        self._server_exit: tuple[int | None, list[str]] | None = None
        self._seq = 0
        self._client_saturated = False
        self._sim_behind = False
        self._schedule_behind = False
        self._first = asyncio.Event()
        self._losses: tuple[WorkerLossRow, ...] = ()  # the load workers that died, as the snapshots carry them
        self._seen_losses: tuple[WorkerLoss, ...] = ()  # …and as the load last said them
        self._point: int | None = None  # the sweep point (1-based) under way at the last tick; None: no sweep
        # The load's pauses on the run's (unix) clock: when the one under way began, the length of those ended.
        self._paused_since: float | None = None
        self._paused_before = 0.0

    # ---- LiveControls ----------------------------------------------------------------------------
    @property
    def paused(self) -> bool:
        return self.load.paused if self.load else False

    @property
    def users(self) -> int:
        return self.load.users if self.load else 0

    def pause(self) -> None:
        if self.load:
            self.load.pause()
            if self._paused_since is None:
                self._paused_since = time.time()
            self.events.add("load paused")

    def resume(self) -> None:
        if self.load:
            self.load.resume()
            if self._paused_since is not None:
                self._paused_before += max(0.0, time.time() - self._paused_since)
                self._paused_since = None
            self.events.add("load resumed")

    def _paused_s(self, now: float) -> float:
        """Seconds the load was paused until `now` (unix time), the pause under way included."""
        ongoing = now - self._paused_since if self._paused_since is not None else 0.0
        return self._paused_before + max(0.0, ongoing)

    def set_users(self, users: int) -> None:
        if self.load:
            users = max(0, users)
            self.load.set_users(users)
            self.events.add(f"users set to {users}")

    @property
    def workload(self) -> str:
        return self._workload.name

    def workloads(self) -> list[tuple[str, str]]:
        return list_presets() if self.load is not None else []

    def set_workload(self, name: str) -> str | None:
        """Switch to preset `name`, fitted to the servers' context like the run's first workload."""
        if self.load is None:
            return "this run sends no load"
        scale = self.plan.load.scale
        try:
            lens = [s.max_model_len for s in self.serving.endpoints]
            preset = prepare_workload(name, scale=scale, output_scale=self.plan.load.output_scale)
            prepared, _ = fit_to_servers(preset, lens, scale)
        except AgentXError as exc:
            return str(exc)
        if prepared.spec.is_none:
            return "`none` sends no load: pause (p) or take the users to 0 (-) instead"
        self._workload = prepared
        self.load.set_workload(prepared)
        self.events.add(f"workload switched to {name}: sessions finish their request, then start {name}")
        return None

    def set_price(self, usd_per_gpu_hour: float | None, gpus: int | None) -> None:
        self.collectors.set_price(usd_per_gpu_hour, gpus)
        self.events.add("cost price changed by the user")

    def reset_windows(self) -> None:
        self.collectors.reset_windows()
        if self.traffic is not None:
            self.traffic.reset_window()
        self.events.add("windows reset")

    async def shutdown(self, reason: str | None = None) -> None:
        self.request_stop(reason or "quit")

    # ---- the loop ----------------------------------------------------------------------------------
    def request_stop(self, reason: str, *, partial: bool = False) -> None:
        if self._stop_reason is None:
            self._stop_reason = reason
            if partial:
                self._partial_reason = reason
        self._stop.set()

    async def first_tick(self) -> None:
        """Until the first snapshot is out (or the run ended before it)."""
        await self._first.wait()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    async def run(self) -> Outcome:
        """Tick until the run ends, then drain, publish the final snapshot and close the subscribers."""
        try:
            next_tick = time.monotonic()
            while not self._stop.is_set():
                collected = await self._collect_unless_stopped()
                if collected is None:
                    break  # a stop came while collecting: go straight to the drain
                snap = self._snapshot(collected)
                self.subscribers.publish(snap)
                self._first.set()
                self._check_server(snap)
                next_tick += self.plan.output.interval_s
                delay = next_tick - time.monotonic()
                if delay < 0:  # fell behind (a slow tick): do not try to catch up with a burst
                    next_tick, delay = time.monotonic(), 0.0
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), timeout=delay)
            if self._seq:
                await self._drain()
                self.subscribers.publish(self._snapshot(await self.collectors.collect(), final=True))
        finally:
            self._first.set()
            self.subscribers.close()
        return Outcome(self._stop_reason or "quit", self._partial_reason, self._server_exit, self._seq)

    async def _collect_unless_stopped(self) -> Collected | None:
        """One tick's collection, abandoned if the run is stopped meanwhile: on a machine the load
        keeps busy a collection can take seconds, and a Ctrl-C must not wait for it."""
        collecting = asyncio.ensure_future(self.collectors.collect())
        stopping = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({collecting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
        if collecting.done() and not collecting.cancelled():
            return collecting.result()
        collecting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await collecting
        return None

    async def _drain(self) -> None:
        if self.traffic is None:
            return
        timeout = self.plan.drain_timeout_s if self._partial_reason is None else _INTERRUPTED_DRAIN_S
        if not await self.traffic.drain(timeout):
            self.events.add(f"requests still in flight after {timeout:g} s were left unfinished")
        fleet = self.serving.fleet
        if fleet is not None and self._partial_reason is None:
            # Prometheus holds the counters as of its last scrape: let it scrape once more, so the
            # final figures count the requests that just finished.
            await asyncio.sleep(min(fleet.scrape_interval_s * 1.5, _FLEET_SETTLE_MAX_S))

    async def close(self) -> None:
        """Stop the load, the proxy and the collectors (the launched server is the serving's to stop)."""
        if self.traffic is not None:
            await self.traffic.close()
        await self.collectors.close()

    def _snapshot(self, c: Collected, *, final: bool = False) -> Snapshot:
        self._seq += 1
        load = c.load
        snap = Snapshot(
            seq=self._seq,
            time=c.time,
            elapsed_s=c.time - self.started_at,
            run=RunInfo(
                target=self.serving.label,
                simulated=self.serving.simulated,
                workload=self._workload.name,
                output_scale=self.plan.load.output_scale,
                users=self.users - (self.load.users_lost if self.load else 0),
                users_lost=self.load.users_lost if self.load else 0,
                load_losses=self._lost_workers(),
                state=self._state(c),
                started_at=self.started_at,
                paused_s=self._paused_s(c.time),
                refresh_s=self.plan.output.refresh_s,
            ),
            endpoints=c.endpoints,
            aggregate=c.aggregate,
            gpu=c.gpu,
            client=load.client if load else None,
            client_health=load.health if load else None,
            sessions=load.rows if load else (),
            session_states=load.states if load else {},
            proxy=c.proxy,
            tasks=self._tasks(c),
            cost=c.cost,
            limits=c.limits,
            events=(),
            server_log=c.server_log,
        )
        self._note_client(snap)
        snap = self.phases.advance(snap, self, final=final)
        sweep = snap.sweep
        self._point = sweep.current + 1 if sweep is not None and sweep.current is not None else None
        if self.agentx is not None:  # after the phases: a sweep's points are in the snapshot now
            verdict = self.agentx.verdict(snap, final=final, partial_reason=self._partial_reason)
            snap = snap.model_copy(update={"agentx": verdict})
        # Events last: the phases (and the verdict) may have added some for this very tick.
        return snap.model_copy(update={"events": self.events.take()})

    def _lost_workers(self) -> tuple[WorkerLossRow, ...]:
        """The load's lost workers as rows on the run's clock: a new one in the sweep point under way when
        it was seen (the last tick's), a known one with its restart as it stands now."""
        losses = self.load.losses if self.load is not None else ()
        if losses == self._seen_losses:
            return self._losses
        self._seen_losses = losses
        rows = []
        for i, loss in enumerate(losses):
            point = self._losses[i].point if i < len(self._losses) else self._point
            restarted = loss.restarted_at
            rows.append(
                WorkerLossRow(
                    at_s=max(0.0, loss.at - self.started_at),
                    worker=loss.worker + 1,
                    workers=loss.workers,
                    pid=loss.pid,
                    how=loss.how,
                    users=loss.users,
                    users_lost=loss.users_lost,
                    users_left=loss.users_left,
                    point=point,
                    restarted_at_s=None if restarted is None else max(0.0, restarted - self.started_at),
                    restart_error=loss.restart_error,
                )
            )
        self._losses = tuple(rows)
        return self._losses

    def _tasks(self, c: Collected) -> TaskReading | None:
        """The run's task figures (measure/tasks.py), priced like the cost meter: None with no client traffic."""
        stats = self.traffic.stats if self.traffic is not None else None
        if stats is None:
            return None
        cost = c.cost
        return stats.tasks.figures(time.monotonic(), gpus=cost.gpus, tokens_per_dollar=cost.tokens_per_dollar_total)

    def _note_client(self, snap: Snapshot) -> None:
        """Say in words when the client (its health, or too few users for a timed replay's schedule) or the
        simulator starts (and stops) limiting the figures."""
        health = snap.client_health
        saturated = (health.reason or "client saturated") if health is not None and health.saturated else None
        self._client_saturated = self._note_change(self._client_saturated, saturated, "the client keeps up again")
        self._sim_behind = self._note_change(
            self._sim_behind, simulator_behind(snap), "the simulated engine keeps up again"
        )
        self._schedule_behind = self._note_change(
            self._schedule_behind, schedule_behind(snap), "the timed replay keeps its schedule again"
        )

    def _note_change(self, was: bool, now: str | None, over: str) -> bool:
        """An event when a limit starts (`now`: it holds, in words) or ends (`over`); whether it holds now."""
        if now and not was:
            self.events.add(now)
        elif was and not now:
            self.events.add(over)
        return now is not None

    def _state(self, c: Collected) -> RunState:
        if self._stop.is_set():
            return "server down" if self._server_exit is not None else "stopping"
        if c.endpoints and not any(e.up for e in c.endpoints):
            return "server down"
        if self.paused:
            return "paused"
        return "running"

    def _check_server(self, snap: Snapshot) -> None:
        launched = self.serving.launched
        if launched is None or launched.alive():
            return
        code = launched.process.poll()
        tail = launched.log.tail(_CRASH_LOG_LINES)
        self._server_exit = (code, tail)
        last = tail[-1].strip() if tail else "no output"
        self.events.add(f"the launched server exited (code {code}): {last}")
        self.request_stop(f"the launched server exited (code {code}): {last}", partial=True)

"""A sweep's phases (docs/sweeps.md): measured points at user counts, sessions kept running.

Per step: set the users (more are added, fewer retired, none restarted), warm up until the load is
steady — MSER-5 on the throughput and p90 r_i of 5-s batches since the users were set (sweep/steady.py)
and every user past its warm-up requests — or until `--warmup` seconds, the most a point waits (the
window then opens anyway, and the point says whether and why not steady); measure for `point_duration`
— or, with `--precision F`, until both 95% half-widths are within F (checked each tick once 20 requests
are counted; `point_duration` is then the longest) — and record the point. Which user counts: the
list's, doubling for `auto` until a stop rule says the curve is done, or, for `tiers`, the planner's
(sweep/targets.py): short **probes** first, never points, that find where p90 interactivity crosses each
tier, then full points only beside the crossings. A load worker that dies mid-step takes its users
with it: the window is dropped, the users restarted in a fresh worker, and the step measured again from
a new warm-up; lost again in the same step (or not restartable), the sweep stops. Each tick the Snapshot
carries the sweep's state, so the dashboard draws the frontier as points arrive and a recording
replays it: the frontier and tier reads on the chosen x-axis (`--frontier-axis`, the North Star by
default), with the agents per GPU at each tier read on that frontier too, and the other view's
frontier and tier reads beside them (docs/sweeps.md); a tier sweep's probes and plan; the sweep's GPU
time so far.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agentx_tui.measure import ClientStats, WindowBook, fewest_requests
from agentx_tui.run.phases import RunHandle
from agentx_tui.snapshot import (
    FrontierAxis,
    PointFigures,
    ProbeRow,
    Snapshot,
    SweepPhase,
    SweepState,
    TierRead,
)
from agentx_tui.sweep import (
    BATCH_S,
    MIN_REQUESTS,
    NORTH_STAR,
    WARMUP_REQUESTS,
    PointWindow,
    Steadiness,
    Step,
    TierPlanner,
    auto_stop_reason,
    axis_name,
    measured,
    next_auto_users,
    other_axis,
    point_x,
    point_x_interval,
    read_agents,
    read_tiers,
    steadiness,
    stopped_growing,
    thin_words,
    tier_intervals,
    view_fronts,
)
from agentx_tui.units import compact

PROBE_SHARE = 0.1  # a probe's window: a tenth of --point-duration …
PROBE_FLOOR_S = 30.0  # … and at least 30 s (at most --point-duration)


def default_probe_s(point_duration_s: float) -> float:
    """A probe's window when `--probe-duration` is not given (docs/sweeps.md): a tenth of a point's, at
    least 30 s, at most the point's."""
    return min(point_duration_s, max(PROBE_FLOOR_S, PROBE_SHARE * point_duration_s))


class SweepPhases:
    def __init__(
        self,
        users: tuple[int, ...],
        *,
        start_users: int,
        warmup_s: float,
        point_duration_s: float,
        tiers: tuple[float, ...],
        precision: float | None = None,
        axis: FrontierAxis = NORTH_STAR,
        targeted: bool = False,
        probe_duration_s: float | None = None,
        joined_midway: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.mode = "tiers" if targeted else "list" if users else "auto"
        self.auto = self.mode == "auto"
        self.axis = axis  # the frontier's x-axis: tier reads, the stop rules and --precision are on it
        self._clock = clock  # the load statistics' clock (monotonic), for the windows' edges
        # The tier sweep's plan (sweep/targets.py); the users of a list or auto sweep's points.
        self.planner = TierPlanner(tiers, start_users=start_users, axis=axis) if targeted else None
        self.planned = list(users) if users else [] if targeted else [start_users]
        self.warmup_s = warmup_s  # the most a step waits for its load to be steady
        self.point_duration_s = point_duration_s
        self.probe_duration_s = probe_duration_s or default_probe_s(point_duration_s)
        # `--join midway`: new users bring a running load's contexts, so a probe needs no warm-up requests
        # of its own, only a steady load (docs/sweeps.md, "Users that join"); a point still needs them.
        self.joined_midway = joined_midway
        self.tiers = tiers
        self.precision = precision
        self.points: list[PointFigures] = []
        self.probes: list[ProbeRow] = []
        # The tier reads and their intervals on both views (the chosen axis's, the other's), kept until
        # the points, the price or the GPU count change (a Monte Carlo each).
        self._reads: (
            tuple[
                tuple[tuple[PointFigures, ...], float | None, int | None],
                tuple[tuple[TierRead, ...], tuple[TierRead, ...]],
            ]
            | None
        ) = None
        self._step: Step | None = None  # what is measured now
        self._phase: SweepPhase = "warmup"
        self._phase_started: float | None = None  # snapshot time the phase began
        self._started: float | None = None  # snapshot time of the sweep's first tick
        self._window: PointWindow | None = None
        # The last point's window, still counting the tokens of the requests it counted half: (its window,
        # the statistics, its index in `points`).
        self._closing: tuple[PointWindow, ClientStats, int] | None = None
        self._users_set_at: float | None = None  # the stats' clock when this step's users were set
        # The steady rule's view of the step since its users were set (sweep/steady.py): a window the
        # statistics feed, and its verdict as of the last whole batch.
        self._watch: WindowBook | None = None
        self._verdict: Steadiness | None = None
        self._judged = -1  # whole batches the verdict is over
        self._warm = 0  # the fewest requests any of the step's users had completed, as last counted …
        self._warm_judged = -1  # … at that many whole batches
        self._stop_reason: str | None = None
        self._losses_seen = 0  # the run's lost load workers already acted on
        self._lost_in: dict[int, int] = {}  # a step's number → how often load workers were lost in it
        self._restarting = False  # the step waits for the lost users to run again
        self._growth_pending = False  # --sweep auto's growth rule waits for the last point's final figures

    # -- Phases -------------------------------------------------------------------------------------
    def advance(self, snap: Snapshot, run: RunHandle, *, final: bool) -> Snapshot:
        stats = run.load.stats if run.load is not None else None
        if stats is None:
            return snap
        if final:
            self._finish(snap, stats)
            return snap.model_copy(update={"sweep": self._state(snap)})
        if self._started is None:
            self._started = snap.time
            self._start_step(self._first_step(), snap, stats, run)
        if run.load is not None and run.load.finished:  # --sessions ran out before the sweep did
            self._stop_reason = self._stop_reason or "every session has ended"
            run.request_stop(f"sweep ended: {self._stop_reason}")
        if self._held_by_losses(snap, stats, run):
            return snap.model_copy(update={"sweep": self._state(snap)})
        assert self._phase_started is not None
        elapsed = snap.time - self._phase_started
        if self._phase == "warmup":
            if self._warm_up(snap, stats):
                self._judge_growth(stats, run)
        elif self._phase == "measure" and self._window is not None:
            self._window.tick(snap)
            if self._window_done(self._window, elapsed):
                self._end_step(snap, stats, run)
        return snap.model_copy(update={"sweep": self._state(snap)})

    # -- steps ----------------------------------------------------------------------------------------
    def _first_step(self) -> Step:
        if self.planner is not None:
            step = self.planner.next_step()
            assert step is not None  # a planner's first step is always a probe
            return step
        return Step(self.planned[0], False, "")

    @property
    def _index(self) -> int:
        """The index the point being measured (or the next one) gets in `points`."""
        return len(self.points)

    def _label(self, step: Step) -> str:
        """'sweep probe 3 (48 users, tier 50)' or 'sweep point 2 (64 users)'."""
        if step.probe:
            return f"sweep probe {len(self.probes) + 1} ({_users(step.users)}, {step.purpose})"
        purpose = f", {step.purpose}" if step.purpose else ""
        return f"sweep point {self._index + 1} ({_users(step.users)}{purpose})"

    def _start_step(self, step: Step, snap: Snapshot, stats: ClientStats, run: RunHandle) -> None:
        """Set the step's users and begin its warm-up: the steady rule watches from now."""
        self._step = step
        run.set_users(step.users)
        self._users_set_at = self._clock()
        self._watch_from(stats, self._users_set_at)
        run.events.add(f"{self._label(step)}: warm-up until steady, at most {self.warmup_s:g} s")
        self._phase, self._phase_started = "warmup", snap.time

    def _watch_from(self, stats: ClientStats, now: float) -> None:
        """Open the steady rule's window (closing the last one): its series begin `now`."""
        if self._watch is not None:
            stats.close_window(self._watch)
        self._watch = stats.open_window(now)
        self._verdict, self._judged = None, -1
        self._warm, self._warm_judged = 0, -1

    def _steadiness(self, now: float) -> Steadiness:
        """MSER-5 on the step's series since its users were set, judged again whenever a batch ends."""
        assert self._watch is not None
        seen = max(0.0, now - self._watch.start)
        batches = int(seen / BATCH_S + 1e-9)
        if self._verdict is None or batches != self._judged:
            slots = self._watch.sample.slots
            ended = {key: slot.ended_tokens for key, slot in slots.items()}
            e2e = {key: slot.e2e for key, slot in slots.items() if slot.e2e}
            self._verdict, self._judged = steadiness(ended, e2e, batches * BATCH_S), batches
        return self._verdict

    def _warm_up(self, snap: Snapshot, stats: ClientStats) -> bool:
        """Open the window once the load is steady and every user has its warm-up requests, or once
        `--warmup` seconds have gone by (the most a step waits). Whether it opened."""
        assert self._step is not None and self._watch is not None
        now = self._clock()
        verdict = self._steadiness(now)
        # On the statistics' clock, from the users' setting (or their restart): the warm-up the point records.
        waited = now - self._watch.start
        capped = waited >= self.warmup_s
        # The users' warm-up requests: O(users log users), so counted once a batch, and only when it can
        # decide (the load steady, or the most a step waits reached).
        needed = 0 if self._step.probe and self.joined_midway else WARMUP_REQUESTS
        if needed and ((verdict.steady and self._warm_judged != self._judged) or capped):
            self._warm_judged = self._judged
            self._warm = fewest_requests(stats.user_requests.values(), self._step.users)
        warm = self._warm if needed else 0
        if verdict.steady and warm >= needed:
            every = f"; every user had {needed}+ requests" if needed else "; its users joined midway"
            reason = f"steady after {waited:.0f} s: {verdict.words()}{every}"
        elif capped:
            fewest = f"; a user had {warm} of {needed} requests" if warm < needed else ""
            held = "the load steady" if verdict.steady else verdict.words()
            reason = f"--warmup {self.warmup_s:g} s reached, {held}{fewest}"
        else:
            return False
        self._begin_measure(snap, stats, waited, verdict.steady, reason)
        return True

    def _begin_measure(self, snap: Snapshot, stats: ClientStats, waited: float, steady: bool, why: str) -> None:
        assert self._step is not None
        self._close_previous()  # its in-flight requests have had the warm-up to finish
        if self._watch is not None:
            stats.close_window(self._watch)
            self._watch = None
        window: WindowBook = stats.open_window(self._clock())
        self._window = PointWindow(self._index, self._step.users, waited, snap, window, axis=self.axis)
        self._window.cohort_edge = self._users_set_at  # slots that sent before it came from earlier points
        self._window.steady, self._window.steady_reason = steady, why
        self._phase, self._phase_started = "measure", snap.time

    def _held_by_losses(self, snap: Snapshot, stats: ClientStats, run: RunHandle) -> bool:
        """A load worker died (docs/sweeps.md, "A lost load worker"): the step under way is not measured
        with its users, so its window (if open) is dropped, the lost users restarted in fresh workers, and
        the step measured again from a new warm-up once they run. Lost again in the same step, or not
        restartable, the sweep stops. Whether the step is held this tick (waiting, or stopped)."""
        losses = snap.run.load_losses
        if self._phase == "done" or self._step is None:
            return False
        label = self._label(self._step)
        number = len(self.points) + len(self.probes)
        if len(losses) > self._losses_seen:
            self._losses_seen = len(losses)
            self._lost_in[number] = self._lost_in.get(number, 0) + 1
            if self._window is not None:  # measured with fewer users than its label: not a point
                stats.close_window(self._window.client)
                self._window = None
            if self._lost_in[number] > 1:
                self._stop(run, f"load workers lost again in {label.removeprefix('sweep ')}: {losses[-1].words}")
                return True
            if run.load is not None:
                run.load.restart_lost()
            self._restarting = True
            self._phase = "warmup"
            run.events.add(
                f"{label}: load workers lost; its window is dropped and it is measured again once their users run again"
            )
        if not self._restarting:
            return False
        self._phase_started = snap.time  # its warm-up begins once every user runs again
        failed = next((loss for loss in losses if loss.restart_error is not None), None)
        if failed is not None:
            where = label.removeprefix("sweep ")
            self._stop(run, f"the load workers lost in {where} could not be restarted: {failed.restart_error}")
            return True
        if any(loss.restarted_at_s is None for loss in losses):
            return True
        # (The point's cohort edge stays when its users were set: the fresh worker's users began after it.)
        self._restarting = False
        self._watch_from(stats, self._clock())  # the steady rule watches the users running again
        run.events.add(f"{label}: its users run again, warm-up until steady, at most {self.warmup_s:g} s")
        return False

    def _stop(self, run: RunHandle, reason: str) -> None:
        """End the sweep early: it could not measure the step under way."""
        self._stop_reason = reason
        self._phase = "done"
        run.events.add(f"sweep ended: {reason}")
        run.request_stop(f"sweep stopped: {reason}", partial=True)

    def _window_done(self, window: PointWindow, elapsed: float) -> bool:
        """Whether the step's window ends now, and why (set on the window)."""
        assert self._step is not None
        if self._step.probe:
            # A probe: its length, and 20 counted requests (a p90 worth reading), at most a point's length.
            if elapsed >= self.point_duration_s:
                window.stop_reason = f"a probe: --point-duration {self.point_duration_s:g} s reached"
                return True
            if elapsed >= self.probe_duration_s and window.client.latency.requests >= MIN_REQUESTS:
                window.stop_reason = f"a probe: {self.probe_duration_s:g} s measured"
                return True
            return False
        if self.precision is not None:
            last = elapsed >= self.point_duration_s
            check = window.check_precision(self._clock(), force=last)
            if check is not None and check.met(self.precision):
                window.stopped_early = not last
                window.stop_reason = f"precision ±{self.precision:.0%} reached: {check.words()}"
                return True
            if last:
                words = check.words() if check is not None else "no request counted"
                window.stop_reason = (
                    f"--point-duration {self.point_duration_s:g} s reached before ±{self.precision:.0%}: {words}"
                )
                return True
            return False
        if elapsed >= self.point_duration_s:
            window.stop_reason = f"--point-duration {self.point_duration_s:g} s measured"
            return True
        return False

    def _end_step(self, snap: Snapshot, stats: ClientStats, run: RunHandle) -> None:
        assert self._window is not None and self._step is not None
        step, window = self._step, self._window
        stats.end_window(window.client, self._clock())
        if step.probe:
            # Final now (`_probe_figures`): the row says what the planner decided on, and nothing is left
            # to count.
            figures = _probe_figures(window)
            stats.close_window(window.client)
            self.probes.append(_probe_row(len(self.probes) + 1, step, figures))
            run.events.add(
                f"sweep probe {len(self.probes)} done: {_users(step.users)} ({step.purpose}), {axis_name(self.axis)} "
                f"{compact(point_x(figures, self.axis), trim=True)} tok/s/user, "
                f"{compact(figures.total_tokens_per_s_per_gpu, trim=True)} tok/s/GPU"
            )
        else:
            figures = window.figures()
            self.points.append(figures)
            self._closing = (window, stats, len(self.points) - 1)
            self._said_point(figures, run)
        self._window = None
        if not step.probe and not figures.steady:
            run.events.add(f"sweep point {len(self.points)} did not settle: {figures.steady_reason}")
        if self.planner is not None:
            self.planner.record(step, figures)
        following, reason = self._next_step()
        if following is None:
            self._stop_reason = reason
            self._phase = "done"
            run.events.add(f"sweep ended: {reason}")
            run.request_stop(f"sweep done: {reason}")
            return
        self._start_step(following, snap, stats, run)

    def _said_point(self, point: PointFigures, run: RunHandle) -> None:
        number = len(self.points)
        run.events.add(
            f"sweep point {number} done: {_users(point.users)}, "
            f"{compact(point.total_tokens_per_s_per_gpu, trim=True)}"
            f"{_span(*point.interval('total_tokens_per_s_per_gpu'))} tok/s/GPU "
            f"at {axis_name(self.axis)} {compact(point_x(point, self.axis), trim=True)}"
            f"{_span(*point_x_interval(point, self.axis))} tok/s/user"
        )
        if point.stopped_early and point.stop_reason:
            run.events.add(f"sweep point {number} ended early: {point.stop_reason}")
        if not measured(point):
            run.events.add(
                f"sweep point {number} not measured: no request started after its warm-up and ended "
                "inside its window (a longer --point-duration would count some)"
            )
        elif point.thin:
            run.events.add(f"sweep point {number} is thin: {thin_words(point.requests or 0)}")

    def _next_step(self) -> tuple[Step | None, str]:
        """The next step, or None and why the sweep ends."""
        if self.planner is not None:
            step = self.planner.next_step()
            if step is not None:
                self.planned = [s.users for s in self.planner.planned]
                return step, ""
            return None, self._tiers_done_reason()
        if not self.auto:
            if len(self.points) < len(self.planned):
                return Step(self.planned[len(self.points)], False, ""), ""
            unmeasured = sum(1 for p in self.points if not measured(p))
            if unmeasured:
                return None, f"all {len(self.planned)} points done, {unmeasured} not measured (no request counted)"
            return None, f"all {len(self.planned)} points measured"
        reason = auto_stop_reason(self.points, lowest_tier=min(self.tiers), axis=self.axis, growth=False)
        if reason is not None:
            return None, reason
        self._growth_pending = True  # judged once this point's figures are final (`_judge_growth`)
        self.planned.append(next_auto_users(self.planned[-1]))
        return Step(self.planned[-1], False, ""), ""

    def _judge_growth(self, stats: ClientStats, run: RunHandle) -> None:
        """`--sweep auto`'s growth rule, on the last point's final figures: its throughput counts tokens by
        when they came, so it is final only once its requests in flight at its end have ended, which the
        next step's warm-up waits for (its window's opening closes the last point's). Judged at their
        ends instead, 150-s coding-agent points read 4–18% low, enough to stop a sweep whose throughput
        still grew. Where it stopped growing, the sweep ends here, and the step under way is not
        measured."""
        if not self._growth_pending:
            return
        self._growth_pending = False
        flat = stopped_growing(self.points)
        if flat is None:
            return
        if self._window is not None:
            stats.close_window(self._window.client)
            self._window = None
        if self.planned:
            self.planned.pop()  # the step under way: not measured
        self._stop_reason = flat
        self._phase = "done"
        run.events.add(f"sweep ended: {flat}")
        run.request_stop(f"sweep done: {flat}")

    def _tiers_done_reason(self) -> str:
        assert self.planner is not None
        points, probes = len(self.points), len(self.probes)
        said = f"{points} point{'s' if points != 1 else ''} measured after {probes} probe{'s' if probes != 1 else ''}"
        if self.planner.bracket_reason:
            said += f"; probing ended: {self.planner.bracket_reason.rstrip('.')}"
        missing = self.planner.unbracketed()
        if missing:
            said += "; " + "; ".join(f"tier {t:g} not bracketed: {why}" for t, why in missing.items())
        return said

    def _close_previous(self) -> None:
        """Final token rates of the last point: requests it counted half have finished since."""
        if self._closing is None:
            return
        window, closing_stats, index = self._closing
        closing_stats.close_window(window.client)
        self.points[index] = window.figures()
        self._closing = None

    def _finish(self, snap: Snapshot, stats: ClientStats) -> None:
        """The run's last snapshot (after the drain): close what is open and say why the sweep ended."""
        self._close_previous()
        if self._watch is not None:
            stats.close_window(self._watch)
            self._watch = None
        if self._window is not None:  # interrupted mid-step: a partial window is not a point
            stats.close_window(self._window.client)
            self._window = None
        if self._stop_reason is None:
            measured = len(self.points)
            self._stop_reason = f"interrupted after {measured} point{'s' if measured != 1 else ''}"
            if self.probes:
                self._stop_reason += f" and {len(self.probes)} probe{'s' if len(self.probes) != 1 else ''}"
        self._phase = "done"

    # -- the state each tick carries --------------------------------------------------------------------
    def _tiers(
        self, fronts: tuple[tuple[int, ...], tuple[int, ...]], price: float | None, gpus: int | None
    ) -> tuple[tuple[TierRead, ...], tuple[TierRead, ...]]:
        """The tier reads on the chosen axis and on the other, both every time (docs/sweeps.md); the
        chosen axis's carry the agents per GPU at each tier, read on its frontier."""
        key = (tuple(self.points), price, gpus)
        if self._reads is None or self._reads[0] != key:
            found = []
            for axis, frontier in zip((self.axis, other_axis(self.axis)), fronts, strict=True):
                # The decode view beside the North Star: its frontier keeps the North Star's points only.
                within = NORTH_STAR if axis != NORTH_STAR and self.axis == NORTH_STAR else None
                reads = read_tiers(self.points, frontier, self.tiers, usd_per_gpu_hour=price, gpus=gpus, axis=axis)
                found.append(tier_intervals(self.points, frontier, reads, axis=axis, within=within))
            agents = read_agents(self.points, fronts[0], self.tiers, gpus=gpus, axis=self.axis)
            primary = tuple(
                read.model_copy(
                    update={
                        "users": a.users,
                        "agents_per_gpu": a.agents_per_gpu,
                        "gpu_power_w_per_gpu": a.gpu_power_w_per_gpu,
                        "agents_per_mw": a.agents_per_mw,
                    }
                )
                for read, a in zip(found[0], agents, strict=True)
            )
            self._reads = (key, (primary, found[1]))
        return self._reads[1]

    def _state(self, snap: Snapshot) -> SweepState:
        frontier, secondary = view_fronts(self.points, self.axis)
        gpus = snap.cost.gpus or next((p.gpus for p in reversed(self.points) if p.gpus), None)
        tiers, secondary_tiers = self._tiers((frontier, secondary), snap.cost.usd_per_gpu_hour, gpus)
        left = None
        step = self._step
        if self._phase != "done" and self._phase_started is not None and step is not None:
            span = self.warmup_s
            if self._phase == "measure":
                span = self.probe_duration_s if step.probe else self.point_duration_s
            left = max(0.0, span - (snap.time - self._phase_started))
        done = self._phase == "done" or step is None
        sweep_s = snap.time - self._started if self._started is not None else None
        return SweepState(
            mode="tiers" if self.planner is not None else "auto" if self.auto else "list",
            planned_users=tuple(self.planned),
            tiers=tiers,
            points=tuple(self.points),
            frontier=frontier,
            frontier_axis=self.axis,
            secondary_frontier=secondary,
            secondary_tiers=secondary_tiers,
            current=None if done else self._index,
            current_users=None if done or step is None else step.users,
            phase=self._phase,
            phase_left_s=left,
            warmup_s=self.warmup_s,
            point_duration_s=self.point_duration_s,
            join="midway" if self.joined_midway else "start",
            stop_reason=self._stop_reason,
            precision=self.precision,
            probes=tuple(self.probes),
            probing=not done and step is not None and step.probe,
            step_for=None if done or step is None else step.purpose or None,
            probe_duration_s=self.probe_duration_s if self.planner is not None else None,
            sweep_s=sweep_s,
            gpu_seconds=sweep_s * gpus if sweep_s is not None and gpus else None,
        )


_PROBE_OWN_KEYS = ("index", "users", "purpose", "tiers")  # the probe's place in the plan, not its window's
_PROBE_WINDOW_KEYS = tuple(
    key for key in ProbeRow.model_fields if key in PointFigures.model_fields and key not in _PROBE_OWN_KEYS
)


def _probe_figures(window: PointWindow) -> PointFigures:
    """A probe's window figures, its throughput the tokens (prompt + output) of the requests that ended in
    its window ÷ its length, as the steady rule's series counts them. That rate is final the moment the
    window ends, when the planner decides on it; the tokens counted by when they came still miss those
    of the requests in flight then, counted once they end: over half of them in a 14-s window at 16
    users, enough to read as throughput that stopped growing."""
    figures = window.figures()
    if not figures.duration_s:
        return figures
    ended = sum(slot.ended_tokens for slot in window.client.sample.slots.values())
    rate = ended / figures.duration_s
    intervals = {k: v for k, v in figures.intervals.items() if k != "total_tokens_per_s_per_gpu"}
    return figures.model_copy(
        update={
            "total_tokens_per_s": rate,
            "total_tokens_per_s_per_gpu": rate / figures.gpus if figures.gpus else None,
            "intervals": intervals,  # (the interval was the token times' rate's)
        }
    )


def _probe_row(index: int, step: Step, figures: PointFigures) -> ProbeRow:
    """A probe as the report lists it: what it was for, and its window's figures that tell where the tiers
    cross (each `ProbeRow` field a point declares too, read from the probe's figures)."""
    window = {key: getattr(figures, key) for key in _PROBE_WINDOW_KEYS}
    return ProbeRow(index=index, users=step.users, purpose=step.purpose, tiers=step.tiers, **window)


def _users(users: int) -> str:
    """'1 user', '8 users'."""
    return f"{users} user{'s' if users != 1 else ''}"


def _span(low: float | None, high: float | None) -> str:
    """A 95% interval for the log: ' [1.2K–1.5K]', or nothing when unknown."""
    if low is None or high is None:
        return ""
    return f" [{compact(low, trim=True)}–{compact(high, trim=True)}]"

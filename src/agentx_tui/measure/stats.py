"""Client-side figures from completed requests: windowed rates and percentiles, run-wide percentiles
(docs/metrics.md), and the sweep windows still counting (window.py).

Every load process hands its completed requests to one `ClientStats` as `Completed` summaries (local
ones directly, worker processes through their pipe), so one and many workers share one accounting.
Per-token work happens where the stream is read: a request's token gaps arrive already bucketed.

Memory is bounded whatever the run length: latencies go into log-bucketed histograms (histogram.py),
windows are a ring of one-second slots. A request's output tokens are spread over the seconds it was
decoding (the one rule of slots.py, which a sweep window's sample follows too) and its prompt tokens
are counted when its first token arrived, so rates do not jump when long requests finish.
"""

from __future__ import annotations

import math
from typing import Protocol

from agentx_tui.measure.agentx import ContextOverflows, output_coverage
from agentx_tui.measure.cold import cold_start
from agentx_tui.measure.headline import tally_figures
from agentx_tui.measure.record import Completed, Failed
from agentx_tui.measure.reuse import split_prompt
from agentx_tui.measure.schedule import ScheduleBook, behind_schedule
from agentx_tui.measure.slots import slot_of, spread_tokens
from agentx_tui.measure.tally import Tally
from agentx_tui.measure.tasks import TaskBook
from agentx_tui.measure.window import WindowFigures
from agentx_tui.snapshot import ClientFigures, ClientTotals


class StatsSink(Protocol):
    """Where a load loop hands what happened: `ClientStats` in this process, a worker's outbox in another."""

    def add(self, done: Completed) -> None: ...

    def error(self, failed: Failed) -> None: ...

    def session_ended(self, how: str, tree: int = -1) -> None:
        """A session ended: `how` is done, error, context or retired; `tree` is its session tree's id
        when it was a whole task (a top-level session), -1 for a sub-agent's own loop."""
        ...


# How a task ends by how its top-level session ended: done completes it, error fails it; one cut off
# (the model's context reached, a user retired) is neither, and leaves the figures.
_TASK_END = {"done": False, "error": True}


class ClientStats:
    def __init__(self, window_s: float, started_at: float) -> None:
        self.window_s = window_s
        self._slots: dict[int, Tally] = {}
        self._window_start = started_at
        self.started_at = started_at
        self.run = Tally()
        self.warm = Tally()  # the latencies of the requests that were not a session's first (measure/cold.py)
        self.schedule = ScheduleBook()  # a timed replay's requests (measure/schedule.py)
        self.requests_failed = 0
        self.output_tokens = 0
        self.sessions_completed = 0
        self.sessions_ended_by_context = 0
        self.cached_reported = False
        self.errors: dict[str, int] = {}
        self.in_flight = 0  # set by the load generator each tick
        self._windows: list[WindowFigures] = []  # sweep points still taking requests
        # When each user slot sent its first request: a sweep point's slots added before its warm-up
        # are a cohort apart from those it added (sweep/intervals.py stratifies by it). O(users).
        self.user_since: dict[int, float] = {}
        self.tasks = TaskBook(started_at)  # per session tree (measure/tasks.py)
        # AgentX's rules (measure/agentx.py): requests over the model's context; when output last came;
        # each user slot's completed requests (a sweep point's warm-up per user). O(users).
        self.overflows = ContextOverflows()
        self.last_output_at: float | None = None
        self.user_requests: dict[int, int] = {}

    # -- input ---------------------------------------------------------------------------------
    def _slot(self, key: int) -> Tally:
        """The one-second slot `key` (measure/slots.py `slot_of`), made if new; slots too old for the
        window are dropped as new ones come."""
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = Tally()
            horizon = key - int(self.window_s) - 2
            for old in [k for k in self._slots if k < horizon]:
                del self._slots[old]
        return slot

    def session_ended(self, how: str, tree: int = -1) -> None:
        if how == "context":
            self.sessions_ended_by_context += 1
        elif how == "done":
            self.sessions_completed += 1
        if tree >= 0:
            failed = _TASK_END.get(how)
            if failed is None:
                self.tasks.tree_dropped(tree)
            else:
                self.tasks.tree_ended(tree, failed=failed)

    def error(self, failed: Failed) -> None:
        self.errors[failed.kind] = self.errors.get(failed.kind, 0) + 1
        self.overflows.count(failed)
        for window in self._windows:
            window.overflows_of(failed)
        if failed.final:
            self.requests_failed += 1
            if failed.tree >= 0:
                self.tasks.call_ended(failed.tree, 0, failed.sent_at, failed.at, 0, 0, None, ok=False)
            for window in self._windows:
                window.error(failed)

    def add(self, done: Completed) -> None:
        """One completed request: whole into the run's tally; in the sliding window its prompt side
        when its first token came, the request and its latencies when it ended, its output tokens over
        the seconds they came in; into every open sweep window (window.py); into its task."""
        if done.user >= 0:
            if done.sent_at < self.user_since.get(done.user, math.inf):
                self.user_since[done.user] = done.sent_at
            self.user_requests[done.user] = self.user_requests.get(done.user, 0) + 1
        self.run.count(done)
        if not done.first_call:
            self.warm.count_answer(done)
        self.schedule.count(done)
        self.output_tokens += done.output_tokens
        if done.cached_tokens is not None:
            self.cached_reported = True
        first, last = done.decoded
        if done.output_tokens > 0 and (self.last_output_at is None or last > self.last_output_at):
            self.last_output_at = last
        self._slot(slot_of(first)).count_prompt(done)
        self._slot(slot_of(done.ended_at)).count_answer(done)
        self._spread_output(first, last, done.output_tokens)
        for window in self._windows:
            window.add(done)
        if done.tree >= 0:
            self.tasks.call_ended(
                done.tree, done.step, done.sent_at, done.ended_at, done.prompt_tokens, done.output_tokens,
                done.ttft_s, ok=True, e2e_s=done.e2e_s,
            )  # fmt: skip
            # Where its prompt went, for its task (the tallies count it with the prompt: `count_prompt`).
            self.tasks.call_reuse(done.tree, split_prompt(done.prompt_tokens, done.ceiling_tokens, done.cached_tokens))

    def _spread_output(self, first: float, last: float, tokens: int) -> None:
        """`tokens` decoded from `first` to `last` into the seconds they came in (measure/slots.py)."""
        for key, share in spread_tokens(first, last, tokens):
            self._slot(key).output += share

    # -- sweep windows ---------------------------------------------------------------------------
    def open_window(self, now: float) -> WindowFigures:
        window = WindowFigures(start=now)
        window.user_since = self.user_since  # the run's, read when the window's intervals are computed
        window.requests_before = tuple(self.user_requests.values())  # its warm-up per user slot
        window.tasks = self.tasks.open_window(now)
        window.task_book = self.tasks
        self._windows.append(window)
        return window

    def end_window(self, window: WindowFigures, now: float) -> None:
        """The window's end: later requests no longer count for its latencies; tokens decoded inside
        it still count for its rates until `close_window` (requests in flight at its end)."""
        window.end = now
        if window.tasks is not None:
            self.tasks.end_window(window.tasks, now)

    def close_window(self, window: WindowFigures) -> None:
        if window in self._windows:
            self._windows.remove(window)
        if window.tasks is not None:
            self.tasks.close_window(window.tasks)

    # -- output ------------------------------------------------------------------------------------
    def reset_window(self, now: float) -> None:
        self._slots.clear()
        self._window_start = now

    def figures(self, now: float) -> ClientFigures:
        lo = now - self.window_s
        merged = Tally()
        for key, slot in self._slots.items():
            if key + 1 > lo and key <= now:
                merged.merge(slot)
        span = min(self.window_s, now - self._window_start)
        window = tally_figures(merged, span=span if span > 0 else None, cached_reported=self.cached_reported)
        run = tally_figures(self.run, span=None, cached_reported=self.cached_reported)
        lag = self.run.schedule_lag.percentiles()
        totals = self.totals()
        agentx = {
            **self.overflows.figures(totals.requests_completed, totals.requests_failed),
            "output_coverage": output_coverage(self.started_at, now, self.last_output_at),
        }
        schedule = {
            "schedule_lag_p50_s": lag.p50,
            "schedule_lag_p90_s": lag.p90,
            "schedule_lag_p99_s": lag.p99,
            "schedule_behind": behind_schedule(self.schedule.requests, lag.p90, run.e2e_p90_s),
            "schedule_users_needed": self.schedule.users_needed(),
        }
        return ClientFigures(
            window=window,
            run=run.updated(**schedule, **agentx, **cold_start(run, self.run.requests, self.warm, advice=True)),
            requests_per_s=merged.requests / span if span > 0 else None,
            in_flight=self.in_flight,
            totals=totals,
        )

    def totals(self) -> ClientTotals:
        run = self.run
        return ClientTotals(
            requests_completed=run.requests,
            requests_failed=self.requests_failed,
            prompt_tokens=run.prompt,
            cached_prompt_tokens=run.cached,
            output_tokens=self.output_tokens,
            sessions_completed=self.sessions_completed,
            sessions_ended_by_context=self.sessions_ended_by_context,
            ceiling_cacheable_tokens=run.ceiling,
            ceiling_prompt_tokens=run.prompt_with_ceiling,
            cached_tokens_reported=self.cached_reported,
            errors_by_kind=dict(self.errors),
        )

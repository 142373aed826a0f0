"""Client-side figures from the requests the load sends: windowed rates and percentiles, run-wide
percentiles (docs/metrics.md), and the sweep windows still counting (window.py).

Every load process hands what happened to one `ClientStats`: its completed requests as `Completed`
summaries, and, each tick, the tokens its requests in flight streamed since the last (`Streamed`;
local ones directly, worker processes through their pipe), so one and many workers share one
accounting. Per-token work happens where the stream is read: a request's token gaps arrive already
bucketed, its tokens already counted per second.

Memory is bounded whatever the run length: latencies go into log-bucketed histograms (histogram.py),
windows are a ring of one-second slots. Tokens count in the window when they happened, by the one
rule of slots.py (which a sweep window's sample follows too): a request's prompt tokens at its first
token, its output tokens as they arrived, while it is still streaming; its completion adds the
difference between the server's counts and what was counted live. So rates neither jump when long
requests finish nor lag behind the server while they stream.
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
from agentx_tui.measure.slots import Streamed, slot_of, spread_tokens
from agentx_tui.measure.tally import Tally
from agentx_tui.measure.tasks import TaskBook
from agentx_tui.measure.window import WindowBook
from agentx_tui.snapshot import ClientReading, ClientTotals


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
        self._windows: list[WindowBook] = []  # sweep points still taking requests
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
        at its first token, the request and its latencies when it ended, and whatever of its tokens the
        window had not counted as they streamed (`count_streamed`: `done.live_prompt`, `live_output`),
        by the rule of slots.py; into every open sweep window (window.py); into its task."""
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
        at_first = self._slot(slot_of(first))
        at_first.count_prompt(done)
        at_first.prompt -= done.live_prompt  # counted as it streamed, at the same first token
        self._slot(slot_of(done.ended_at)).count_answer(done)
        for key, share in spread_tokens(
            first, last, done.output_tokens, arrivals=done.arrivals, live_events=done.live_events,
            live_tokens=done.live_output,
        ):  # fmt: skip
            self._slot(key).output += share
        for window in self._windows:
            window.add(done)
        if done.tree >= 0:
            self.tasks.call_ended(
                done.tree, done.step, done.sent_at, done.ended_at, done.prompt_tokens, done.output_tokens,
                done.ttft_s, ok=True, e2e_s=done.e2e_s,
            )  # fmt: skip
            # Where its prompt went, for its task (the tallies count it with the prompt: `count_prompt`).
            self.tasks.call_reuse(done.tree, split_prompt(done.prompt_tokens, done.ceiling_tokens, done.cached_tokens))

    def count_streamed(self, streamed: Streamed, shift: float = 0.0) -> None:
        """Tokens of requests still in flight, as they streamed (slots.py `LiveCount`), into the sliding
        window: each prompt at its first token, the content events in the second they came. `shift`
        moves another node's clock onto this one (a Ray actor's): a second then spreads over the two
        slots it straddles."""
        for at, prompt in streamed.prompts:
            self._slot(slot_of(at + shift)).prompt += prompt
        for second, events in streamed.output.items():
            if shift:
                for key, share in spread_tokens(second + shift, second + 1 + shift, events):
                    self._slot(key).output += share
            else:
                self._slot(second).output += events

    # -- sweep windows ---------------------------------------------------------------------------
    def open_window(self, now: float) -> WindowBook:
        window = WindowBook(start=now)
        window.user_since = self.user_since  # the run's, read when the window's intervals are computed
        window.requests_before = tuple(self.user_requests.values())  # its warm-up per user slot
        window.tasks = self.tasks.open_window(now)
        window.task_book = self.tasks
        self._windows.append(window)
        return window

    def end_window(self, window: WindowBook, now: float) -> None:
        """The window's end: later requests no longer count for its latencies; tokens decoded inside
        it still count for its rates until `close_window` (requests in flight at its end)."""
        window.end = now
        if window.tasks is not None:
            self.tasks.end_window(window.tasks, now)

    def close_window(self, window: WindowBook) -> None:
        if window in self._windows:
            self._windows.remove(window)
        if window.tasks is not None:
            self.tasks.close_window(window.tasks)

    # -- output ------------------------------------------------------------------------------------
    def reset_window(self, now: float) -> None:
        self._slots.clear()
        self._window_start = now

    def figures(self, now: float) -> ClientReading:
        """The sliding window's figures at `now` (the last `window_s` seconds; since the window's start
        while it is still filling) and the run's."""
        filling = now - self.window_s < self._window_start
        lo = self._window_start if filling else now - self.window_s
        first_key = math.floor(lo)
        merged, oldest = Tally(), None
        for key, slot in self._slots.items():
            if first_key <= key <= now:
                merged.merge(slot)
                if key == first_key:
                    oldest = slot
        span = now - lo
        # The oldest slot began before the window: only the share of it inside counts for the rates (its
        # tokens came evenly over it, as far as a slot knows). While the window fills, the slot it began
        # in holds only what came after (a reset emptied it).
        before = 0.0 if filling or oldest is None else lo - first_key
        prompt = merged.prompt - before * oldest.prompt if oldest is not None else merged.prompt
        output = merged.output - before * oldest.output if oldest is not None else merged.output
        requests = merged.requests - before * oldest.requests if oldest is not None else merged.requests
        window = tally_figures(
            merged, span=span if span > 0 else None, cached_reported=self.cached_reported, prompt=prompt, output=output
        )
        hit, prompt_per_s = window.prefix_cache_hit_rate_client, window.prompt_tokens_per_s
        if hit is not None and prompt_per_s is not None:
            # A prompt's cached tokens are known only when its request completes, while the window counts
            # the prompt from its first token: the cached share of the window's prompt tokens is its hit rate.
            window = window.updated(cached_prompt_tokens_per_s=prompt_per_s * hit)
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
        return ClientReading(
            window=window,
            run=run.updated(**schedule, **agentx, **cold_start(run, self.run.requests, self.warm, advice=True)),
            requests_per_s=requests / span if span > 0 else None,
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

"""Agents, not requests: the run's figures per task (docs/metrics.md, "Tasks").

A **task** is one session tree: a replayed session with its sub-agents, a synthetic agent session, or
a real agent's session seen by the proxy. A sub-agent's calls carry its parent's tree id, so its time
is inside its parent's task. Only completed tasks enter the figures; the figures say how many were
still running, and how many failed.

- **Task wall time** = the tree's first call sent → its last call ended.
- **Model share** = Σ model time / Σ wall time over the completed tasks (time-weighted: it reads as
  "what filled the tasks' time"), where a task's model time is the length of the union of its calls'
  [sent, ended] intervals (sub-agents' calls included, overlapping calls counted once): the time with
  at least one of its calls in flight. The rest is tools, thinking and the agent's own work.
- **Steps per task** = calls in the tree, sub-agents' included.
- **Tokens per task** = Σ (prompt + output) over its calls, cached prompt tokens included; **output
  tokens per task** = Σ output.
- **USD per task** = tokens per task ÷ the run's total tokens per dollar (None when that is unknown).
- **Tasks per hour per GPU** = tasks completed in the window ÷ the window's hours ÷ GPUs.
- **Prefix hit share per task** = Σ hit ÷ Σ reused prompt tokens of its calls (measure/reuse.py): how
  much of what the task sent again its server still had cached; over the completed tasks that reused
  something and whose server reported cached tokens, the mean and the p10 and p90 of those shares.
- **Step curve**: per step (the step the caller passes: a call's 1-based position in its tree, or in
  its own agent's loop) the completed calls, their mean context (prompt tokens), TTFT and E2E p50/p90.
  Steps 1 to 8 have a row each, then one row per power of two (9–16, 17–32, 33–64, …), so the rows
  stay few whatever the sessions' length.

Windows (a sweep point's, like `ClientStats`'s): a task counts in a window when its [first call sent,
last call ended] lies inside it; one that spans an edge (began before the window opened, or ended
after it closed) is counted in no window figure, only in the whole run's. A call counts for a window's
step curve when its own [sent, ended] lies inside. A failed call ends its task as failed: counted apart
(`tasks_failed`), never among the completed.

Memory: an open tree holds a few numbers and the union of its calls' intervals (bounded by its own
calls); once it ends it is folded into the run's and the open windows' tallies and released, so what
stays is O(open trees + open windows × step rows). Percentiles (task wall time; a step row's TTFT
and E2E) are linear between the closest ranks of the exact values while a figure has at most
`EXACT_LIMIT` of them, of its 2% log histogram beyond (`Samples`, histogram.py; docs/metrics.md,
"Percentiles"), so each figure holds at most that many doubles.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from agentx_tui.measure.histogram import LogHistogram, Samples
from agentx_tui.measure.reuse import PromptSplit
from agentx_tui.snapshot import StepRow, TaskReading, usd_per_task

STEPS_ALONE = 8  # steps 1..8 get a row each; beyond, one row per power of two


def step_bucket(step: int) -> tuple[int, int]:
    """The step curve's row of `step`, as (first, last) step: 1…8 alone, then 9–16, 17–32, 33–64, ….
    A step below 1 counts as step 1."""
    step = max(1, step)
    if step <= STEPS_ALONE:
        return step, step
    last = 1 << (step - 1).bit_length()
    return last // 2 + 1, last


class _Union:
    """A union of closed intervals, kept sorted and disjoint: a tree's time with a call in flight."""

    __slots__ = ("ends", "starts")

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []

    def add(self, lo: float, hi: float) -> None:
        # The intervals that meet [lo, hi] are those from the first that ends at or after lo to the last
        # that starts at or before hi; they become one. Calls mostly end in order, so this is an append.
        first = bisect_left(self.ends, lo)
        after = bisect_right(self.starts, hi)
        if first < after:
            lo = min(lo, self.starts[first])
            hi = max(hi, self.ends[after - 1])
        self.starts[first:after] = [lo]
        self.ends[first:after] = [hi]

    @property
    def length(self) -> float:
        return sum(hi - lo for lo, hi in zip(self.starts, self.ends, strict=True))


class _Tree:
    """An open session tree: what its figures need, until it ends."""

    __slots__ = ("busy", "failed", "first_sent", "hit", "last_ended", "output_tokens", "reused", "steps", "tokens")

    def __init__(self, sent_at: float, ended_at: float) -> None:
        self.first_sent = sent_at
        self.last_ended = ended_at
        self.steps = 0
        self.tokens = 0
        self.output_tokens = 0
        self.busy = _Union()
        self.failed = False  # already counted as failed; waits only for its end to be forgotten
        self.reused = 0  # reused prompt tokens of its calls whose server reported cached tokens
        self.hit = 0

    @property
    def wall_s(self) -> float:
        return self.last_ended - self.first_sent


@dataclass
class _StepTally:
    """One step row's calls (`_Tally.step_rows`). A type apart from `_Tally`, which counts tasks: the
    two share no figure (a row has no tasks, a set of tasks no latencies of its own), so one type for
    both would carry the other's fields unused in every instance. What they do share, a figure's
    values and their percentiles, is one type already (`Samples`)."""

    requests: int = 0
    context_tokens: int = 0
    ttft: Samples = field(default_factory=Samples)
    e2e: Samples = field(default_factory=Samples)

    def row(self, first: int, last: int) -> StepRow:
        return StepRow(
            step=first,
            step_last=last,
            requests=self.requests,
            context_tokens_mean=self.context_tokens / self.requests if self.requests else None,
            ttft_p50_s=self.ttft.quantile(0.5),
            ttft_p90_s=self.ttft.quantile(0.9),
            e2e_p50_s=self.e2e.quantile(0.5),
            e2e_p90_s=self.e2e.quantile(0.9),
        )


@dataclass
class _Tally:
    """The folded figures of a set of tasks (the whole run's, or a window's), and its calls by step row."""

    completed: int = 0
    failed: int = 0
    wall: Samples = field(default_factory=Samples)
    wall_s: float = 0.0
    model_s: float = 0.0
    steps: int = 0
    tokens: int = 0
    output_tokens: int = 0
    step_rows: dict[int, _StepTally] = field(default_factory=dict)  # by the bucket's first step
    hit_shares: Samples = field(default_factory=Samples)  # each task's Σ hit ÷ Σ reused (it reused some)
    hit_share_sum: float = 0.0

    def task(self, tree: _Tree) -> None:
        self.completed += 1
        if tree.reused > 0:
            share = tree.hit / tree.reused
            self.hit_shares.add(share)
            self.hit_share_sum += share
        wall = tree.wall_s
        self.wall.add(wall)
        self.wall_s += wall
        self.model_s += min(tree.busy.length, wall)
        self.steps += tree.steps
        self.tokens += tree.tokens
        self.output_tokens += tree.output_tokens

    def call(self, step: int, prompt_tokens: int, ttft_s: float | None, e2e_s: float) -> None:
        first, _last = step_bucket(step)
        row = self.step_rows.get(first)
        if row is None:
            row = self.step_rows[first] = _StepTally()
        row.requests += 1
        row.context_tokens += prompt_tokens
        if ttft_s is not None:
            row.ttft.add(ttft_s)
        row.e2e.add(e2e_s)


class TaskWindow:
    """A window of the run (a sweep point's): opened, ended, then closed by the `TaskBook` that made it."""

    __slots__ = ("end", "ran_past_end", "start", "tally")

    def __init__(self, start: float) -> None:
        self.start = start
        self.end: float | None = None
        self.tally = _Tally()
        self.ran_past_end = 0  # tasks begun inside that ended after the window closed

    def inside(self, first: float, last: float) -> bool:
        return first >= self.start and (self.end is None or last <= self.end)

    def began_inside(self, first: float) -> bool:
        return first >= self.start and (self.end is None or first <= self.end)

    @property
    def duration_s(self) -> float | None:
        return None if self.end is None else self.end - self.start


class TaskBook:
    """The run's task accounting: calls and tree ends in, `TaskReading` out (module docstring).

    The load side reports each call as it ends (`call_ended`, with its tree id; a sub-agent's calls
    carry its parent's) and each tree as it ends (`tree_ended`, or `tree_dropped` for one cut off:
    a user retired, the run stopped). Work per call is O(1) but for the tree's interval union (a
    bisect, an append in the usual order), and per window open. A call for a tree that has already
    ended starts a new task under the same id: the loops end a tree only after its sub-agents."""

    def __init__(self, started_at: float) -> None:
        self.started_at = started_at
        self.run = _Tally()
        self.tokens = 0  # Σ (prompt + output) of every completed call seen, whatever its task became
        self._open: dict[int, _Tree] = {}
        self._windows: list[TaskWindow] = []

    # -- input ---------------------------------------------------------------------------------
    def call_ended(
        self,
        tree: int,
        step: int,
        sent_at: float,
        ended_at: float,
        prompt_tokens: int,
        output_tokens: int,
        ttft_s: float | None,
        ok: bool,
        e2e_s: float | None = None,
    ) -> None:
        """One call of `tree` ended; `ok` False (it failed for good) ends the task as failed. `e2e_s`:
        the call's E2E as the run counts it (to its last content token); `ended_at − sent_at` if None."""
        ended_at = max(ended_at, sent_at)  # clocks of two processes may disagree by a hair: never a negative span
        found = self._open.get(tree)
        if found is None:
            found = self._open[tree] = _Tree(sent_at, ended_at)
        elif found.failed:
            return  # its task is already counted as failed; a straggling sub-agent call changes nothing
        found.first_sent = min(found.first_sent, sent_at)
        found.last_ended = max(found.last_ended, ended_at)
        if not ok:
            self._fail(found)
            return
        found.busy.add(sent_at, max(sent_at, ended_at))
        found.steps += 1
        tokens = prompt_tokens + output_tokens
        found.tokens += tokens
        found.output_tokens += output_tokens
        self.tokens += tokens
        if e2e_s is None:
            e2e_s = max(0.0, ended_at - sent_at)
        self.run.call(step, prompt_tokens, ttft_s, e2e_s)
        for window in self._windows:
            if window.inside(sent_at, ended_at):
                window.tally.call(step, prompt_tokens, ttft_s, e2e_s)

    def call_reuse(self, tree: int, split: PromptSplit | None) -> None:
        """The split of a completed call of `tree` (after its `call_ended`; measure/reuse.py); None, or
        a split without hits, when the client or the server did not know them."""
        found = self._open.get(tree)
        if found is None or found.failed or split is None or split.hit is None:
            return
        found.reused += split.reused
        found.hit += split.hit

    def tree_ended(self, tree: int, failed: bool = False) -> None:
        """The loop says `tree` is over (its sub-agents' calls all in): fold it into the figures."""
        found = self._open.pop(tree, None)
        if found is None or found.failed:
            return  # no call (nothing to count), or already counted as failed
        if failed:
            self._fail(found)
            return
        self.run.task(found)
        for window in self._windows:
            if window.inside(found.first_sent, found.last_ended):
                window.tally.task(found)
            elif window.began_inside(found.first_sent):
                window.ran_past_end += 1

    def tree_dropped(self, tree: int) -> None:
        """`tree` was cut off, neither completed nor failed (a retired user, a stopped run): forget it."""
        self._open.pop(tree, None)

    def _fail(self, tree: _Tree) -> None:
        tree.failed = True
        tree.busy = _Union()  # kept only as a marker until the tree's end: release its intervals
        self.run.failed += 1
        for window in self._windows:
            if window.inside(tree.first_sent, tree.last_ended):
                window.tally.failed += 1

    # -- windows -------------------------------------------------------------------------------
    def open_window(self, now: float) -> TaskWindow:
        window = TaskWindow(now)
        self._windows.append(window)
        return window

    def end_window(self, window: TaskWindow, now: float) -> None:
        """Tasks and calls that end after `now` no longer count in the window."""
        window.end = now

    def close_window(self, window: TaskWindow) -> None:
        """Stop following the window: its figures stay readable, but a task begun inside it that ends
        after this drops out of its `tasks_running` (close a window once its tasks are over)."""
        if window in self._windows:
            self._windows.remove(window)

    # -- output --------------------------------------------------------------------------------
    def figures(
        self,
        now: float,
        window: TaskWindow | None = None,
        *,
        gpus: float | None = None,
        tokens_per_dollar: float | None = None,
    ) -> TaskReading:
        """The whole run's figures up to `now`, or the window's (until its end, else until `now`).
        O(open trees): it counts the running ones."""
        running = [tree for tree in self._open.values() if not tree.failed]
        if window is None:
            tally, span_s, still = self.run, now - self.started_at, len(running)
        else:
            tally = window.tally
            span_s = window.duration_s if window.duration_s is not None else now - window.start
            still = window.ran_past_end + sum(window.began_inside(tree.first_sent) for tree in running)
        return _figures(tally, still, span_s, gpus, tokens_per_dollar)


def _positive(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and value > 0 else None


def _figures(
    tally: _Tally, running: int, span_s: float, gpus: float | None, tokens_per_dollar: float | None
) -> TaskReading:
    done = tally.completed
    tokens_mean = tally.tokens / done if done else None
    gpu_count, hours = _positive(gpus), _positive(span_s / 3600)
    rows = tuple(tally.step_rows[first].row(*step_bucket(first)) for first in sorted(tally.step_rows))
    return TaskReading(
        tasks_completed=done,
        tasks_running=running,
        tasks_failed=tally.failed,
        task_s_p50=tally.wall.quantile(0.5),
        task_s_p90=tally.wall.quantile(0.9),
        task_model_share=tally.model_s / tally.wall_s if tally.wall_s > 0 else None,
        steps_per_task_mean=tally.steps / done if done else None,
        tokens_per_task_mean=tokens_mean,
        output_tokens_per_task_mean=tally.output_tokens / done if done else None,
        usd_per_task=usd_per_task(tokens_mean, tokens_per_dollar),
        tasks_per_hour_per_gpu=done / hours / gpu_count if hours is not None and gpu_count is not None else None,
        step_curve=rows,
        task_s_histogram=_histogram(tally.wall.histogram),
        task_prefix_hit_share_mean=tally.hit_share_sum / tally.hit_shares.count if tally.hit_shares.count else None,
        task_prefix_hit_share_p10=tally.hit_shares.quantile(0.1),
        task_prefix_hit_share_p90=tally.hit_shares.quantile(0.9),
    )


_EDGES = tuple(m * 10.0**e for e in range(-1, 6) for m in (1, 2, 5))  # 0.1 s … 5·10⁵ s, 1-2-5


def _histogram(times: LogHistogram) -> tuple[tuple[float, int], ...]:
    """Task wall times regrouped on a 1-2-5 scale (upper edges in seconds), empty edges left out."""
    counts: dict[float, float] = {}
    for index, weight in times.buckets.items():
        value = LogHistogram.value_of(index)
        edge = next((e for e in _EDGES if value <= e), _EDGES[-1])
        counts[edge] = counts.get(edge, 0.0) + weight
    return tuple((edge, round(counts[edge])) for edge in sorted(counts))

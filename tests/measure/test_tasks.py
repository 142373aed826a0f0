"""The task accounting of docs/metrics.md ("Tasks"): session trees of a known shape, their arithmetic
worked out by hand in the comments, windows, failures, and the step curve."""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentx_tui.measure.histogram import EXACT_LIMIT
from agentx_tui.measure.tasks import StepRow, TaskBook, TaskReading, step_bucket

# Past `EXACT_LIMIT` values, percentiles come from 2% log buckets: within 1% of the exact ones.
BUCKET = 0.012


@dataclass(frozen=True)
class Call:
    step: int
    sent_at: float
    ended_at: float
    prompt: int = 100
    output: int = 10
    ttft_s: float | None = 0.1
    ok: bool = True


def feed(book: TaskBook, tree: int, calls: list[Call], *, end: bool = True) -> None:
    for c in calls:
        book.call_ended(tree, c.step, c.sent_at, c.ended_at, c.prompt, c.output, c.ttft_s, c.ok)
    if end:
        book.tree_ended(tree)


def shaped_tree(t0: float = 0.0, think_s: float = 0.0) -> list[Call]:
    """A parent call, a sub-agent of two calls, two more parent calls; each call 1 s long, `think_s`
    between one call's end and the next one's send."""
    calls, t = [], t0
    for step in (1, 1, 2, 2, 3):  # parent 1, sub-agent 1 and 2, parent 2 and 3 (steps as the loops number them)
        calls.append(Call(step, t, t + 1.0, prompt=1000 * (len(calls) + 1), output=50))
        t += 1.0 + think_s
    return calls


# -- one tree of a known shape -----------------------------------------------------------------


def test_a_tree_without_think_time_is_all_model_time() -> None:
    book = TaskBook(started_at=0.0)
    feed(book, 7, shaped_tree())
    f = book.figures(now=3600.0, gpus=1)
    # Five back-to-back 1 s calls: 5 s of wall time, all of it with a call in flight.
    assert (f.tasks_completed, f.tasks_running, f.tasks_failed) == (1, 0, 0)
    assert f.task_s_p50 == pytest.approx(5.0, rel=BUCKET)
    assert f.task_model_share == pytest.approx(1.0)
    assert f.steps_per_task_mean == 5
    # Prompts 1000 + 2000 + … + 5000 = 15 000, outputs 5 × 50 = 250.
    assert f.output_tokens_per_task_mean == 250
    assert f.tokens_per_task_mean == 15_250
    assert f.tasks_per_hour_per_gpu == pytest.approx(1.0)  # one task in one hour on one GPU


def test_think_gaps_are_the_agents_own_time() -> None:
    book = TaskBook(started_at=0.0)
    feed(book, 1, shaped_tree(think_s=0.5))
    f = book.figures(now=10.0)
    # 5 calls of 1 s with four 0.5 s gaps: wall 7 s, model 5 s.
    assert f.task_s_p50 == pytest.approx(7.0, rel=BUCKET)
    assert f.task_model_share == pytest.approx(5 / 7)


def test_parallel_sub_agents_are_counted_once_in_the_union() -> None:
    book = TaskBook(started_at=0.0)
    calls = [
        Call(1, 0.0, 1.0),  # parent
        Call(1, 2.0, 5.0),  # sub-agent A: 2 → 5
        Call(1, 3.0, 4.0),  # sub-agent B, inside A's call
        Call(2, 4.5, 6.0),  # sub-agent B again: overlaps A's end
        Call(2, 8.0, 9.0),  # parent, after a 2 s tool call
    ]
    feed(book, 3, calls)
    f = book.figures(now=10.0)
    # Wall 0 → 9; in flight [0, 1] ∪ [2, 6] ∪ [8, 9] = 1 + 4 + 1 = 6 s.
    assert f.task_model_share == pytest.approx(6 / 9)
    assert f.steps_per_task_mean == 5


def test_calls_reported_out_of_order_give_the_same_union() -> None:
    book = TaskBook(started_at=0.0)
    calls = [Call(1, 8.0, 9.0), Call(1, 0.0, 1.0), Call(1, 4.5, 6.0), Call(1, 2.0, 5.0), Call(1, 3.0, 4.0)]
    feed(book, 3, calls)
    assert book.figures(now=10.0).task_model_share == pytest.approx(6 / 9)


def test_model_share_is_time_weighted_over_tasks() -> None:
    book = TaskBook(started_at=0.0)
    feed(book, 1, [Call(1, 0.0, 1.0)])  # 1 s, all model
    feed(book, 2, [Call(1, 0.0, 1.0), Call(2, 9.0, 10.0)])  # 10 s, 2 s model
    # Σ model / Σ wall = (1 + 2) / (1 + 10), not the mean of 1 and 0.2.
    assert book.figures(now=20.0).task_model_share == pytest.approx(3 / 11)


def test_usd_per_task_is_tokens_per_task_over_tokens_per_dollar() -> None:
    book = TaskBook(started_at=0.0)
    feed(book, 1, shaped_tree())
    feed(book, 2, shaped_tree(t0=10.0, think_s=1.0))
    f = book.figures(now=100.0, tokens_per_dollar=1.3e9)
    assert f.usd_per_task is not None and f.tokens_per_task_mean is not None
    assert f.usd_per_task * 1.3e9 == pytest.approx(f.tokens_per_task_mean)
    for unknown in (None, 0.0, -1.0, math.nan, math.inf):
        assert book.figures(now=100.0, tokens_per_dollar=unknown).usd_per_task is None


def test_tasks_per_hour_per_gpu() -> None:
    book = TaskBook(started_at=100.0)
    for tree in range(6):
        feed(book, tree, [Call(1, 100.0 + tree, 101.0 + tree)])
    # 6 tasks in 1800 s on 4 GPUs: 6 / 0.5 h / 4 = 3 per hour per GPU.
    assert book.figures(now=1900.0, gpus=4).tasks_per_hour_per_gpu == pytest.approx(3.0)
    assert book.figures(now=1900.0, gpus=None).tasks_per_hour_per_gpu is None
    assert book.figures(now=100.0, gpus=4).tasks_per_hour_per_gpu is None  # no time yet


def test_an_empty_book_knows_nothing() -> None:
    f = TaskBook(started_at=0.0).figures(now=60.0, gpus=1, tokens_per_dollar=1e9)
    assert f == TaskReading(tasks_per_hour_per_gpu=0.0)


# -- running, failed, dropped ------------------------------------------------------------------


def test_trees_with_calls_and_no_end_are_running_not_completed() -> None:
    book = TaskBook(started_at=0.0)
    feed(book, 1, shaped_tree(), end=False)
    feed(book, 2, shaped_tree())
    book.tree_ended(99)  # a tree that never sent a call counts nowhere
    f = book.figures(now=60.0)
    assert (f.tasks_completed, f.tasks_running) == (1, 1)
    assert f.steps_per_task_mean == 5  # the running tree's calls are not in the task figures


def test_a_failed_call_ends_its_task_as_failed() -> None:
    book = TaskBook(started_at=0.0)
    feed(book, 1, [Call(1, 0.0, 1.0), Call(2, 1.0, 2.0, ok=False)], end=False)
    f = book.figures(now=10.0)
    assert (f.tasks_completed, f.tasks_running, f.tasks_failed) == (0, 0, 1)
    # A sub-agent call that lands after the failure, then the loop's end: still one failed task.
    feed(book, 1, [Call(2, 1.5, 2.5)])
    f = book.figures(now=10.0)
    assert (f.tasks_completed, f.tasks_running, f.tasks_failed) == (0, 0, 1)
    assert f.tokens_per_task_mean is None


def test_a_tree_the_loop_ends_as_failed_is_counted_apart() -> None:
    book = TaskBook(started_at=0.0)
    feed(book, 1, shaped_tree())
    feed(book, 2, shaped_tree(), end=False)
    book.tree_ended(2, failed=True)
    f = book.figures(now=60.0)
    assert (f.tasks_completed, f.tasks_running, f.tasks_failed) == (1, 0, 1)
    assert f.tokens_per_task_mean == 15_250  # the failed task's tokens stay out


def test_a_dropped_tree_counts_nowhere() -> None:
    book = TaskBook(started_at=0.0)
    feed(book, 1, shaped_tree(), end=False)
    book.tree_dropped(1)
    f = book.figures(now=60.0)
    assert (f.tasks_completed, f.tasks_running, f.tasks_failed) == (0, 0, 0)


# -- task time percentiles ---------------------------------------------------------------------


def one_call_tasks(book: TaskBook, walls: list[float], t0: float = 0.0) -> None:
    """A task per wall time, each one call from `t0` to `t0 + wall`."""
    for tree, wall in enumerate(walls):
        feed(book, tree, [Call(1, t0, t0 + wall)])


def test_task_percentiles_are_linear_between_the_closest_ranks() -> None:
    # Six proxied tasks as their agent timed them. Linear rule (numpy's default), n = 6:
    # p50: h = 0.5 × 5 = 2.5 → 4.59 + 0.5 × (7.53 − 4.59) = 6.06 s (nearest rank on 2% buckets read 4.55);
    # p90: h = 0.9 × 5 = 4.5 → 7.93 + 0.5 × (9.36 − 7.93) = 8.645 s.
    book = TaskBook(started_at=0.0)
    one_call_tasks(book, [7.53, 3.53, 9.36, 4.30, 7.93, 4.59])  # in no order
    f = book.figures(now=60.0)
    assert f.task_s_p50 == pytest.approx(6.06, abs=0.01)
    assert f.task_s_p90 == pytest.approx(8.645, abs=0.001)


def test_a_windows_task_percentiles_are_linear_too() -> None:
    book = TaskBook(started_at=0.0)
    window = book.open_window(10.0)
    one_call_tasks(book, [2.0, 4.0], t0=11.0)  # p50 of two: their mean; p90: 2 + 0.9 × 2
    book.end_window(window, 20.0)
    f = book.figures(now=20.0, window=window)
    assert (f.task_s_p50, f.task_s_p90) == (pytest.approx(3.0), pytest.approx(3.8))


def test_past_the_limit_the_figure_still_comes_out_from_bounded_memory() -> None:
    book = TaskBook(started_at=0.0)
    walls = [1.0 + (i * 7919 % 9973) / 100 for i in range(EXACT_LIMIT + 500)]  # 1 s to ~100 s, shuffled
    one_call_tasks(book, walls)
    f = book.figures(now=1e6)
    ordered = sorted(walls)
    # The reference: h = q × (n − 1), linear between the values at ⌊h⌋ and ⌊h⌋ + 1.
    for got, q in ((f.task_s_p50, 0.5), (f.task_s_p90, 0.9)):
        h = q * (len(ordered) - 1)
        lo = int(h)
        assert got == pytest.approx(ordered[lo] + (h - lo) * (ordered[lo + 1] - ordered[lo]), rel=BUCKET)
    assert f.tasks_completed == len(walls)
    # The exact values are released past the limit; what stays is buckets (1 to 100 s: ~233 of them).
    assert book.run.wall.exact is None and len(book.run.wall.histogram.buckets) <= 234
    assert sum(tasks for _, tasks in f.task_s_histogram) == len(walls)


def test_a_step_rows_percentiles_are_linear_over_its_calls() -> None:
    book = TaskBook(started_at=0.0)
    feed(book, 1, [Call(1, 0.0, 1.0, ttft_s=0.1), Call(2, 1.0, 2.0)])
    feed(book, 2, [Call(1, 0.0, 3.0, ttft_s=0.3), Call(2, 3.0, 4.0)])
    row = book.figures(now=10.0).step_curve[0]
    # Two calls at step 1: E2E 1 and 3 s, TTFT 0.1 and 0.3 s. p50 = the mean; p90 = low + 0.9 × the step.
    assert (row.e2e_p50_s, row.e2e_p90_s) == (pytest.approx(2.0), pytest.approx(2.8))
    assert (row.ttft_p50_s, row.ttft_p90_s) == (pytest.approx(0.2), pytest.approx(0.28))


# -- windows -----------------------------------------------------------------------------------


def test_a_window_counts_only_the_tasks_inside_it() -> None:
    book = TaskBook(started_at=0.0)
    feed(book, 1, [Call(1, 5.0, 15.0)], end=False)  # begins before the window opens
    window = book.open_window(10.0)
    feed(book, 1, [Call(2, 16.0, 17.0)])  # … and ends inside: spans the opening edge
    feed(book, 2, [Call(1, 11.0, 12.0), Call(2, 12.0, 14.0)])  # inside
    feed(book, 3, [Call(1, 20.0, 21.0)], end=False)  # begins inside, still running at the end
    feed(book, 4, [Call(1, 25.0, 26.0)], end=False)  # begins inside, ends after the window
    book.end_window(window, 30.0)
    feed(book, 4, [Call(2, 29.0, 31.0)])  # ends after the window: spans the closing edge
    feed(book, 5, [Call(1, 31.0, 32.0)])  # after the window
    f = book.figures(now=40.0, window=window, gpus=2)
    assert (f.tasks_completed, f.tasks_running, f.tasks_failed) == (1, 2, 0)  # tree 2; trees 3 and 4 ran on
    assert f.task_s_p50 == pytest.approx(3.0, rel=BUCKET)
    assert f.steps_per_task_mean == 2
    # 1 task in a 20 s window on 2 GPUs: 1 / (20/3600) / 2 = 90 per hour per GPU.
    assert f.tasks_per_hour_per_gpu == pytest.approx(90.0)
    # Calls inside the window (by their own times): trees 1's second, 2's two, 3's and 4's first.
    assert sum(row.requests for row in f.step_curve) == 5
    run = book.figures(now=40.0)
    assert (run.tasks_completed, run.tasks_running) == (4, 1)  # the whole run counts every edge


def test_an_open_window_runs_until_now() -> None:
    book = TaskBook(started_at=0.0)
    window = book.open_window(0.0)
    feed(book, 1, [Call(1, 1.0, 2.0)])
    feed(book, 2, [Call(1, 3.0, 4.0)], end=False)
    f = book.figures(now=1800.0, window=window, gpus=1)
    assert (f.tasks_completed, f.tasks_running) == (1, 1)
    assert f.tasks_per_hour_per_gpu == pytest.approx(2.0)


def test_a_failed_task_counts_in_the_window_it_lies_in() -> None:
    book = TaskBook(started_at=0.0)
    window = book.open_window(10.0)
    feed(book, 1, [Call(1, 11.0, 12.0), Call(2, 12.0, 13.0, ok=False)], end=False)
    feed(book, 2, [Call(1, 5.0, 6.0), Call(2, 12.0, 13.0, ok=False)], end=False)  # began before: an edge
    book.end_window(window, 20.0)
    f = book.figures(now=30.0, window=window)
    assert (f.tasks_completed, f.tasks_failed) == (0, 1)
    assert book.figures(now=30.0).tasks_failed == 2


def test_a_closed_window_stops_counting() -> None:
    book = TaskBook(started_at=0.0)
    window = book.open_window(0.0)
    feed(book, 1, [Call(1, 1.0, 2.0)])
    book.end_window(window, 10.0)
    book.close_window(window)
    book.close_window(window)  # twice is harmless
    feed(book, 2, [Call(1, 3.0, 4.0)])  # inside its times, but reported after it was closed
    assert book.figures(now=20.0, window=window).tasks_completed == 1
    assert book.figures(now=20.0).tasks_completed == 2


# -- the step curve ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "bucket"),
    [
        (-3, (1, 1)),
        (0, (1, 1)),
        (1, (1, 1)),
        (8, (8, 8)),
        (9, (9, 16)),
        (16, (9, 16)),
        (17, (17, 32)),
        (32, (17, 32)),
        (33, (33, 64)),
        (1000, (513, 1024)),
        (1025, (1025, 2048)),
    ],
)
def test_step_buckets(step: int, bucket: tuple[int, int]) -> None:
    assert step_bucket(step) == bucket


@given(st.integers(min_value=1, max_value=10**9))
def test_every_step_lies_in_its_bucket(step: int) -> None:
    first, last = step_bucket(step)
    assert first <= step <= last
    assert step_bucket(first) == step_bucket(last) == (first, last)


def test_the_rows_stay_few_whatever_the_sessions_length() -> None:
    # 8 single steps, then one row per power of two.
    assert len({step_bucket(s) for s in range(1, 1001)}) == 8 + 7  # … 257–512, 513–1024
    assert len({step_bucket(s) for s in range(1, 4097)}) == 8 + 9


def test_growing_sessions_have_rising_context_with_the_step() -> None:
    book = TaskBook(started_at=0.0)
    for tree in range(3):
        t = 100.0 * tree
        for step in range(1, 41):  # each step's prompt holds the whole history so far
            e2e = 0.5 + 0.01 * step
            book.call_ended(tree, step, t, t + e2e, 2000 + 900 * step, 100, 0.05 + 0.001 * step, True)
            t += e2e + 0.2
        book.tree_ended(tree)
    rows = book.figures(now=400.0).step_curve
    assert [(r.step, r.step_last) for r in rows] == [*((s, s) for s in range(1, 9)), (9, 16), (17, 32), (33, 64)]
    assert [r.requests for r in rows] == [3] * 8 + [24, 48, 24]  # steps 33–40 only, three trees
    means = [r.context_tokens_mean for r in rows]
    assert all(a is not None and b is not None and a < b for a, b in pairwise(means))
    assert rows[0].context_tokens_mean == 2900
    assert rows[8].context_tokens_mean == 2000 + 900 * 12.5  # steps 9–16: mean step 12.5
    ttft_p50 = [r.ttft_p50_s or 0.0 for r in rows]
    assert ttft_p50 == sorted(ttft_p50)
    assert rows[0].e2e_p50_s == pytest.approx(0.51, rel=BUCKET)


def test_step_rows_carry_the_report_keys() -> None:
    book = TaskBook(started_at=0.0)
    feed(book, 1, [Call(1, 0.0, 1.0, ttft_s=None)])
    (row,) = book.figures(now=10.0).step_curve
    assert list(row.model_dump()) == [
        "step",
        "step_last",
        "requests",
        "context_tokens_mean",
        "ttft_p50_s",
        "ttft_p90_s",
        "e2e_p50_s",
        "e2e_p90_s",
    ]
    assert row == StepRow(
        step=1, step_last=1, requests=1, context_tokens_mean=100.0, e2e_p50_s=row.e2e_p50_s, e2e_p90_s=row.e2e_p90_s
    )


def test_failed_calls_stay_out_of_the_step_curve() -> None:
    book = TaskBook(started_at=0.0)
    feed(book, 1, [Call(1, 0.0, 1.0), Call(2, 1.0, 2.0, ok=False)])
    assert [r.requests for r in book.figures(now=10.0).step_curve] == [1]


# -- a property over random trees --------------------------------------------------------------

call_strategy = st.builds(
    Call,
    step=st.integers(min_value=1, max_value=100),
    sent_at=st.floats(min_value=0, max_value=1000, allow_nan=False),
    ended_at=st.floats(min_value=0, max_value=1000, allow_nan=False),
    prompt=st.integers(min_value=0, max_value=100_000),
    output=st.integers(min_value=0, max_value=10_000),
    ttft_s=st.none() | st.floats(min_value=0, max_value=10, allow_nan=False),
    ok=st.booleans() | st.just(True),
)
tree_strategy = st.tuples(st.lists(call_strategy, min_size=1, max_size=8), st.sampled_from(["end", "fail", "open"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(tree_strategy, max_size=12))
def test_completed_tasks_never_hold_more_tokens_than_the_run(trees: list[tuple[list[Call], str]]) -> None:
    book = TaskBook(started_at=0.0)
    run_tokens = 0
    for tree, (calls, how) in enumerate(trees):
        feed(book, tree, calls, end=False)
        run_tokens += sum(c.prompt + c.output for c in calls if c.ok)
        if how != "open":
            book.tree_ended(tree, failed=how == "fail")
    f = book.figures(now=2000.0)
    assert book.tokens <= run_tokens  # calls after their tree failed are not counted
    per_task = (f.tokens_per_task_mean or 0) * f.tasks_completed
    assert per_task <= book.tokens + 1e-6 * max(1, book.tokens)
    assert f.tasks_completed + f.tasks_failed + f.tasks_running == len(trees)
    if f.task_model_share is not None:
        assert 0.0 <= f.task_model_share <= 1.0 + 1e-9


def merged_length(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, -math.inf
    for lo, hi in sorted(spans):
        if hi > end:
            total += hi - max(lo, end)
            end = hi
    return total


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 100), st.integers(0, 30)), min_size=1, max_size=20))
def test_model_time_is_the_union_of_the_calls(spans: list[tuple[int, int]]) -> None:
    book = TaskBook(started_at=0.0)
    calls = [Call(1, float(lo), float(lo + width)) for lo, width in spans]  # in any order, overlapping or not
    feed(book, 1, calls)
    f = book.figures(now=200.0)
    wall = max(c.ended_at for c in calls) - min(c.sent_at for c in calls)
    union = merged_length([(c.sent_at, c.ended_at) for c in calls])
    if wall == 0:
        assert f.task_model_share is None
    else:
        assert f.task_model_share == pytest.approx(union / wall)


def test_a_call_that_ends_before_it_was_sent_never_makes_a_negative_task() -> None:
    # Seen from two processes' clocks a call's end can read a hair before its send: the task's time
    # and model share must stay in range (hypothesis found this with ended < sent).
    book = TaskBook(started_at=0.0)
    feed(book, 1, [Call(1, 941.5, 839.0)])
    feed(book, 2, [Call(1, 0.0, 0.0), Call(1, 1.0, 103.0)])
    f = book.figures(now=2000.0)
    assert f.task_model_share is not None and 0.0 <= f.task_model_share <= 1.0
    assert f.task_s_p50 is not None and f.task_s_p50 >= 0.0

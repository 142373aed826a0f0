"""What a worker reports reaches the main process whole: a request's schedule (`due_at`, its lag) and
where its time went (r_i's first-token part, its decode stalls) through the pipe, and onto the main
clock when the worker runs on another node's; the tokens of its requests in flight, merged exactly as
one process counts them."""

from __future__ import annotations

import multiprocessing
from dataclasses import replace
from typing import Any

import pytest

from agentx_tui.load import LoadSettings, prepare_workload
from agentx_tui.load.sending.health import ProcessHealth
from agentx_tui.load.spreading.pool import WorkerPool, _shifted
from agentx_tui.load.spreading.protocol import WorkerAnswer, WorkerReport
from agentx_tui.measure import ClientStats, Completed, LiveCount, Streamed, arrivals_of


def _scheduled() -> Completed:
    return Completed(
        sent_at=12.0, first_token_at=12.5, last_token_at=13.0, ended_at=13.4, prompt_tokens=100,
        cached_tokens=None, output_tokens=10, ceiling_tokens=None, ttft_s=2.5, decode_tokens_per_s=20.0,
        e2e_per_token_s=0.3, ttft_per_token_s=0.25, stalls=2, stall_excess_s=0.125, due_at=10.0,
        schedule_lag_s=2.0,
    )  # fmt: skip


def _report(index: int, completed: list[Completed], streamed: Streamed | None = None) -> WorkerReport:
    return WorkerReport(
        index=index, completed=completed, failed=[], sessions_ended=[], rows=(), states={},
        health=ProcessHealth(None, None, None), in_flight=0, queued=0, finished=False, events=[],
        streamed=streamed or Streamed(),
    )  # fmt: skip


def _through_the_pipe(message: Any) -> Any:
    here, there = multiprocessing.get_context("spawn").Pipe()
    try:
        there.send(message)
        return here.recv()
    finally:
        here.close()
        there.close()


def test_a_scheduled_request_crosses_the_pipe_whole() -> None:
    kind, received = _through_the_pipe((WorkerAnswer.REPORT, _report(0, [_scheduled()])))
    assert kind == WorkerAnswer.REPORT
    (done,) = received.completed
    assert done == _scheduled()
    assert done.due_at == 10.0 and done.schedule_lag_s == 2.0 and done.e2e_s == pytest.approx(3.0)
    assert done.e2e_per_token_s == 0.3  # r_i, worked out once in the worker, carried as it was
    assert (done.ttft_per_token_s, done.stalls, done.stall_excess_s) == (0.25, 2, 0.125)  # and its split


def test_a_remote_workers_due_time_moves_onto_the_main_clock() -> None:
    moved = _shifted(_scheduled(), 100.0)
    assert moved.due_at == 110.0 and moved.sent_at == 112.0
    assert moved.schedule_lag_s == 2.0  # a duration: measured on one node, unchanged
    assert moved.ttft_s == 2.5 and moved.e2e_s == pytest.approx(3.0)
    assert moved.e2e_per_token_s == 0.3  # exactly as measured: not worked out again on the main clock
    assert (moved.ttft_per_token_s, moved.stall_excess_s) == (0.25, 0.125) and moved.decode_span_s == 0.5
    unscheduled = _shifted(replace(_scheduled(), due_at=None, schedule_lag_s=None), 100.0)
    assert unscheduled.due_at is None and unscheduled.started_at == 112.0


class _Stream:
    """A request streaming in a worker: its reads as its SSE scan records them, counted live."""

    def __init__(self, prompt_estimate: int) -> None:
        self.times: list[float] = []
        self.events: list[int] = []
        self.live = LiveCount(prompt_estimate)
        self.live.follow(self.times, self.events)

    def read(self, *reads: tuple[float, int]) -> None:
        for t, n in reads:
            self.times.append(t)
            self.events.append(n)

    def take(self, per_event: float) -> Streamed:
        streamed = Streamed()
        self.live.take(streamed, per_event)
        return streamed

    def done(self, prompt: int, output: int, ended_at: float) -> Completed:
        return Completed(
            sent_at=self.times[0] - 0.5, first_token_at=self.times[0], last_token_at=self.times[-1], ended_at=ended_at,
            prompt_tokens=prompt, cached_tokens=None, output_tokens=output, ceiling_tokens=None, ttft_s=0.5,
            decode_tokens_per_s=None, arrivals=arrivals_of(self.times, self.events), live_prompt=self.live.prompt,
            live_output=self.live.output, live_events=self.live.events,
        )  # fmt: skip


def test_the_tokens_of_requests_in_flight_cross_the_pipe_and_merge_exactly() -> None:
    """Two workers, a request each: one streams over two reports and completes, the other is still in
    flight. The pool's statistics, fed through the pipe, hold second by second what one process's hold,
    and once the first completes its window has exactly the server's counts of it."""
    alone = ClientStats(window_s=30.0, started_at=0.0)
    pool = WorkerPool(prepare_workload("chat"), (), LoadSettings(users=2), workers=2)
    pool.stats = ClientStats(window_s=30.0, started_at=0.0)
    a, b = _Stream(prompt_estimate=1000), _Stream(prompt_estimate=400)
    a.read((3.2, 1), (3.7, 2))
    b.read((3.5, 3))
    first = [_report(0, [], a.take(1.0)), _report(1, [], b.take(2.0))]
    a.read((4.1, 2), (4.6, 1))
    done = a.done(prompt=1010, output=12, ended_at=4.7)  # 2 tokens an event; its prompt a little longer
    b.read((4.8, 3))
    second = [_report(0, [done]), _report(1, [], b.take(2.0))]
    for report in first + second:
        alone.count_streamed(report.streamed)  # as one process would have counted them
        for completed in report.completed:
            alone.add(completed)
        pool._merge(_through_the_pipe(report))
    for now in (4.0, 4.5, 5.0, 6.0):
        here, merged = alone.figures(now).window, pool.stats.figures(now).window
        assert merged.prompt_tokens_per_s == pytest.approx(here.prompt_tokens_per_s)
        assert merged.output_tokens_per_s == pytest.approx(here.output_tokens_per_s)
    window = pool.stats.figures(30.0).window  # [0, 30]: every token so far
    assert window.prompt_tokens_per_s is not None and window.output_tokens_per_s is not None
    assert window.prompt_tokens_per_s * 30 == pytest.approx(1010 + 400)  # a's whole, b's estimate so far
    assert window.output_tokens_per_s * 30 == pytest.approx(12 + 2.0 * 6)
    assert pool.stats.totals().output_tokens == 12


def test_a_remote_workers_streamed_tokens_move_onto_the_main_clock() -> None:
    """A second of another node's clock straddles two of this one's: its tokens split between them by
    time; the request's prompt, counted at its first token, moves with it, and its completion's
    difference lands in the same slot."""
    stats = ClientStats(window_s=100.0, started_at=0.0)
    stream = _Stream(prompt_estimate=100)
    stream.read((3.2, 4))
    stats.count_streamed(stream.take(1.0), shift=10.5)
    slots = {key: (slot.prompt, slot.output) for key, slot in stats._slots.items()}
    assert slots == {13: (100, pytest.approx(2.0)), 14: (0, pytest.approx(2.0))}
    stats.add(_shifted(stream.done(prompt=90, output=4, ended_at=3.3), 10.5))
    assert stats._slots[13].prompt == 90  # the server's count, where the estimate was
    assert sum(slot.output for slot in stats._slots.values()) == pytest.approx(4.0)

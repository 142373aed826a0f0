"""What a worker reports reaches the main process whole: a request's schedule (`due_at`, its lag) and
where its time went (r_i's first-token part, its decode stalls) through the pipe, and onto the main
clock when the worker runs on another node's."""

from __future__ import annotations

import multiprocessing
from dataclasses import replace

import pytest

from agentx_tui.load.sending.health import ProcessHealth
from agentx_tui.load.spreading.pool import _shifted
from agentx_tui.load.spreading.protocol import WorkerAnswer, WorkerReport
from agentx_tui.measure import Completed


def _scheduled() -> Completed:
    return Completed(
        sent_at=12.0, first_token_at=12.5, last_token_at=13.0, ended_at=13.4, prompt_tokens=100,
        cached_tokens=None, output_tokens=10, ceiling_tokens=None, ttft_s=2.5, decode_tokens_per_s=20.0,
        e2e_per_token_s=0.3, ttft_per_token_s=0.25, stalls=2, stall_excess_s=0.125, due_at=10.0,
        schedule_lag_s=2.0,
    )  # fmt: skip


def test_a_scheduled_request_crosses_the_pipe_whole() -> None:
    report = WorkerReport(
        index=0, completed=[_scheduled()], failed=[], sessions_ended=[], rows=(), states={},
        health=ProcessHealth(None, None, None), in_flight=0, queued=0, finished=False, events=[],
    )  # fmt: skip
    here, there = multiprocessing.get_context("spawn").Pipe()
    try:
        there.send((WorkerAnswer.REPORT, report))
        kind, received = here.recv()
    finally:
        here.close()
        there.close()
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

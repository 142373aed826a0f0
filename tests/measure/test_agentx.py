"""What AgentX's rules measure of the client's requests (measure/agentx.py), over the run (`ClientStats`) and
a sweep point's window (`WindowBook`): requests over the model's context, output coverage, warm-up
requests per user."""

from __future__ import annotations

import pytest

from agentx_tui.measure import (
    AGENT_STEP_TOO_LONG,
    CONTEXT_OVERFLOW,
    SESSION_CALL_TOO_LONG,
    TRACE_TOO_LONG,
    ClientStats,
    Completed,
    ContextOverflows,
    Failed,
    fewest_requests,
    output_coverage,
)


def _done(sent: float, first: float, last: float, *, user: int = 0, out: int = 10) -> Completed:
    return Completed(
        sent_at=sent, first_token_at=first, last_token_at=last, ended_at=last, prompt_tokens=100,
        cached_tokens=None, output_tokens=out, ceiling_tokens=0, ttft_s=first - sent, decode_tokens_per_s=None,
        user=user,
    )  # fmt: skip


def test_refused_and_unsent_requests_over_the_context_are_counted_each_once() -> None:
    """A refused request is a final failure too; one never sent is in no other count, so it joins the
    denominator: completed + failed + not sent."""
    overflows = ContextOverflows()
    overflows.count(Failed(CONTEXT_OVERFLOW, True, 1.0, 1.1))
    for kind in (SESSION_CALL_TOO_LONG, TRACE_TOO_LONG, AGENT_STEP_TOO_LONG):
        overflows.count(Failed(kind, False, 2.0, 2.0))
    overflows.count(Failed("timeout", True, 3.0, 4.0))  # a failure, not an overflow
    assert (overflows.requests, overflows.not_sent) == (4, 3)
    # 95 completed, 2 failed (the refused one and the timeout), 3 not sent: 100 wanted
    assert overflows.figures(95, 2) == {"context_overflow_requests": 4, "context_overflow_share": 0.04}
    assert ContextOverflows().figures(0, 0) == {"context_overflow_requests": 0, "context_overflow_share": None}


def test_coverage_is_the_windows_start_to_its_last_output_token_over_its_length() -> None:
    """AIPerf's definition: a last token at 97 s into a 100-s window covers 97% of it, whenever the
    others came; none at all covers nothing; a window of no length has no coverage."""
    assert output_coverage(100.0, 200.0, 197.0) == pytest.approx(0.97)
    assert output_coverage(100.0, 200.0, 250.0) == 1.0
    assert output_coverage(100.0, 200.0, None) == 0.0
    assert output_coverage(100.0, 100.0, 100.0) is None


def test_the_fewest_requests_of_a_points_users_counts_a_user_with_none_as_0() -> None:
    assert fewest_requests([40, 12, 31], 3) == 12
    assert fewest_requests([40, 12, 31], 4) == 0  # a fourth user completed none
    assert fewest_requests([40, 12, 31, 2], 3) == 12  # the point's 3 users, not a slot beyond them
    assert fewest_requests([], 0) == 0


def test_the_run_carries_its_overflows_and_its_coverage() -> None:
    stats = ClientStats(window_s=10, started_at=0.0)
    for i in range(99):
        stats.add(_done(i * 0.5, i * 0.5 + 0.1, i * 0.5 + 0.4))
    stats.error(Failed(SESSION_CALL_TOO_LONG, False, 50.0, 50.0))
    run = stats.figures(100.0).run
    assert (run.context_overflow_requests, run.context_overflow_share) == (1, 1 / 100)
    # the last output token at 49.4 s of a run 100 s long so far
    assert run.output_coverage == pytest.approx(0.494)


def test_a_points_window_counts_its_overflows_coverage_and_its_users_warm_up() -> None:
    stats = ClientStats(window_s=10, started_at=0.0)
    for i in range(12):  # user 0: 12 requests before the window; user 1: 3
        stats.add(_done(i, i + 0.1, i + 0.5, user=0))
    for i in range(3):
        stats.add(_done(i, i + 0.1, i + 0.5, user=1))
    stats.error(Failed(TRACE_TOO_LONG, False, 5.0, 5.0))  # before the window: not the point's
    window = stats.open_window(20.0)
    stats.add(_done(19.0, 20.5, 21.0, user=0))  # sent in the warm-up: its tokens count, not its coverage
    stats.add(_done(25.0, 25.2, 40.0, user=1))
    stats.error(Failed(CONTEXT_OVERFLOW, True, 30.0, 30.1))
    stats.end_window(window, 70.0)
    stats.add(_done(50.0, 50.2, 80.0, user=0))  # decoding past the window's end: output through its end
    figures = window.agentx_figures(users=2)
    assert figures["warmup_requests_min"] == 3
    assert figures["output_coverage"] == 1.0
    # 1 counted (25 → 40; the one still decoding ended after the window), 1 failed (the refused one)
    assert (figures["context_overflow_requests"], figures["context_overflow_share"]) == (1, 0.5)
    assert window.agentx_figures(users=3)["warmup_requests_min"] == 0  # a third user had completed none


def test_a_window_whose_output_stopped_early_covers_only_that_far() -> None:
    stats = ClientStats(window_s=10, started_at=0.0)
    window = stats.open_window(100.0)
    stats.add(_done(101.0, 102.0, 160.0))
    stats.end_window(window, 200.0)
    assert window.agentx_figures(users=1)["output_coverage"] == pytest.approx(0.6)

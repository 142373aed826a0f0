"""AgentX's North Star, E2E-normalized interactivity (docs/metrics.md): r_i = E2E latency / output tokens
per successful request, worked out once from its answer and carried in its `Completed`, and the inverted
percentiles of r_i, in the tallies, the windows and a row."""

from __future__ import annotations

import pytest

from agentx_tui.measure import (
    CallTally,
    ClientStats,
    Completed,
    LogHistogram,
    Tally,
    answer_end,
    e2e_per_token,
    measure_answer,
)


def _done(
    sent: float, last: float | None, ended: float, out: int, *, tree: int = 1, user: int = 0, due: float | None = None
) -> Completed:
    """A request sent at `sent` (due at `due`) whose content came 0.1 s later and at `last` (None: not
    streamed), its body over at `ended`: built as the sender builds it, from its answer's figures."""
    start = sent if due is None else due
    reads = () if last is None else (sent + 0.1, last)
    events = () if last is None else (1, max(out - 1, 0))
    answer = measure_answer(start, reads, events, reported_output=out, counted_events=None, ended_at=ended)
    return Completed.of_answer(
        answer, sent_at=sent, ended_at=ended, prompt_tokens=100, cached_tokens=None, ceiling_tokens=None,
        tree=tree, user=user, due_at=due, schedule_lag_s=None if due is None else sent - due,
    )  # fmt: skip


def test_r_i_runs_from_the_start_to_the_last_content_token_over_the_output_tokens() -> None:
    assert e2e_per_token(10.0, 12.0, 13.0, 8) == pytest.approx(0.25)  # the usage chunk after it does not count
    assert e2e_per_token(10.0, None, 13.0, 6) == pytest.approx(0.5)  # no token time: the answer's end
    assert e2e_per_token(10.0, 12.0, 13.0, 1) == pytest.approx(2.0)  # one token is enough (OSL ≥ 1)
    assert e2e_per_token(10.0, 12.0, 13.0, 0) is None  # no output: not defined
    assert e2e_per_token(10.0, None, None, 5) is None
    assert e2e_per_token(10.0, 10.0, 10.0, 5) is None  # no time passed: not a latency


def test_e2e_ends_at_the_last_content_token_else_at_the_end_of_the_body() -> None:
    assert answer_end(12.0, 13.0) == 12.0
    assert answer_end(None, 13.0) == 13.0
    assert answer_end(None, None) is None  # a call still going, not streamed


def test_a_completed_request_carries_its_answers_r_i_from_its_start() -> None:
    plain = _done(1.0, 3.0, 3.5, 4)
    assert plain.e2e_per_token_s == pytest.approx(0.5)
    assert plain.e2e_per_token_s == pytest.approx(plain.e2e_s / plain.output_tokens)
    # A timed replay's request, due 2 s before a busy user sent it: r_i counts from when it was due.
    late = _done(1.0, 3.0, 3.5, 4, due=-1.0)
    assert late.started_at == -1.0 and late.e2e_per_token_s == pytest.approx(1.0)
    assert late.e2e_per_token_s == pytest.approx(late.e2e_s / late.output_tokens)
    assert late.ttft_s == pytest.approx(2.1)
    whole = _done(1.0, None, 3.0, 4)  # not streamed: from the start to the end of the body
    assert whole.e2e_per_token_s == pytest.approx(0.5) and whole.first_token_at is None
    assert _done(1.0, 3.0, 3.5, 0).e2e_per_token_s is None  # no output token: not defined


def test_an_answer_carries_its_r_i() -> None:
    streamed = measure_answer(10.0, [10.5, 10.7, 11.5], [1, 2, 2], reported_output=10, counted_events=5, ended_at=12)
    assert streamed.e2e_per_token_s == pytest.approx(1.5 / 10)
    whole = measure_answer(0.0, (), (), reported_output=4, counted_events=None, ended_at=2.0)  # not streamed
    assert whole.e2e_per_token_s == pytest.approx(0.5)
    assert measure_answer(0.0, (), (), reported_output=4, counted_events=None).e2e_per_token_s is None


def test_the_figure_is_one_over_the_percentile_of_r_i_not_a_ratio_of_percentiles() -> None:
    """Nine fast requests (long answers) and one slow one (a short answer after a long wait): the p90
    of r_i, linear between the closest ranks, lies between the fast r_i and the slow one; p90 E2E over
    p90 output tokens would be a different number (2.8 s / 100 tokens: 35.7 tok/s)."""
    stats = ClientStats(window_s=60, started_at=0.0)
    for i in range(9):
        stats.add(_done(float(i), i + 2.0, i + 2.0, 100))  # r = 0.02 s/token
    stats.add(_done(9.0, 19.0, 19.0, 10))  # r = 1.0 s/token
    f = stats.figures(20.0)
    assert f.window.e2e_interactivity_p50_tokens_per_s == pytest.approx(50, rel=0.02)
    assert f.window.e2e_interactivity_p75_tokens_per_s == pytest.approx(50, rel=0.02)
    # p90 of ten: rank h = 0.9 × 9 = 8.1, so 0.02 + 0.1 × (1.0 − 0.02) = 0.118 s/token → 8.47 tok/s.
    assert f.window.e2e_interactivity_p90_tokens_per_s == pytest.approx(1 / 0.118, rel=0.02)
    assert f.run.e2e_interactivity_p90_tokens_per_s == f.window.e2e_interactivity_p90_tokens_per_s
    stats.add(_done(10.0, 30.0, 30.0, 20))  # r = 1.0: two of eleven slow; h = 0.9 × 10 = 9, the first slow one
    g = stats.figures(30.0)
    assert g.window.e2e_interactivity_p90_tokens_per_s == pytest.approx(1.0, rel=0.02)
    assert g.window.e2e_interactivity_p50_tokens_per_s == pytest.approx(50, rel=0.02)
    later = stats.figures(200.0)  # the window has moved on; the run keeps them
    assert later.window.e2e_interactivity_p90_tokens_per_s is None
    assert later.run.e2e_interactivity_p90_tokens_per_s == pytest.approx(1.0, rel=0.02)


def test_tallies_merge_r_i_and_a_window_keeps_it_per_tree_and_slot() -> None:
    a, b = Tally(), Tally()
    a.count(_done(0.0, 1.0, 1.0, 10))
    b.count(_done(0.0, 2.0, 2.0, 10))
    a.merge(b)
    assert a.e2e_per_token.total == 2
    assert a.e2e_per_token.quantile(1.0) == pytest.approx(0.2, rel=0.02)
    stats = ClientStats(window_s=10, started_at=0.0)
    window = stats.open_window(10.0)
    stats.add(_done(8.0, 11.0, 11.0, 10, tree=1))  # started in the warm-up: not counted for latencies
    stats.add(_done(11.0, 12.0, 12.0, 10, tree=1))
    stats.add(_done(11.5, 13.5, 13.5, 4, tree=2))
    stats.end_window(window, 14.0)
    sample = window.sample
    assert [sum(t.e2e.values()) for t in sample.trees.values()] == [1, 1]
    assert sum(sum(s.e2e.values()) for s in sample.slots.values()) == 2
    assert window.latency.e2e_per_token.total == 2
    pooled = LogHistogram()
    for tree in sample.trees.values():
        pooled.merge(tree.e2e)
    assert pooled.quantile(1.0) == pytest.approx(0.5, rel=0.02)


def test_a_users_table_row_has_its_own_e2e_normalized_rate() -> None:
    row = CallTally()
    row.count(measure_answer(0.0, [0.5, 1.0], [1, 1], reported_output=2, counted_events=2, ended_at=1.1))  # 0.5
    row.count(measure_answer(0.0, [1.0, 1.5], [1, 3], reported_output=4, counted_events=4, ended_at=1.6))  # 0.375
    tallied = row.tallied()
    assert tallied["e2e_interactivity_tokens_per_s"] == pytest.approx(2 / (0.5 + 0.375))
    assert CallTally().tallied()["e2e_interactivity_tokens_per_s"] is None

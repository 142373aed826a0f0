"""The cold start (measure/cold.py, docs/metrics.md "Cold start"): which latency figures the sessions'
first requests set, by the 20% rule, and what the note says."""

from __future__ import annotations

import re

from agentx_tui.measure import ClientStats, Completed, Tally, cold_start, tally_figures


def _request(sent: float, ttft: float, *, first: bool) -> Completed:
    """A request of 11 output tokens 10 ms apart after `ttft`; `first`: its session's first (no idle time)."""
    last = sent + ttft + 0.1
    return Completed(
        sent_at=sent, first_token_at=sent + ttft, last_token_at=last, ended_at=last, prompt_tokens=100,
        cached_tokens=0 if first else 90, output_tokens=11, ceiling_tokens=None, ttft_s=ttft,
        decode_tokens_per_s=100.0, request_itl_s=0.01, e2e_per_token_s=(ttft + 0.1) / 11,
        idle_s=None if first else 1.0,
    )  # fmt: skip


def _tallies(first: int, warm: int, *, cold_ttft: float = 2.0) -> tuple[Tally, Tally]:
    every, warm_only = Tally(), Tally()
    for i in range(first + warm):
        done = _request(float(i), cold_ttft if i < first else 0.1, first=i < first)
        every.count(done)
        if not done.first_call:
            warm_only.count_answer(done)
    return every, warm_only


def test_a_session_s_first_request_is_the_one_with_no_idle_time_before_it() -> None:
    assert _request(0.0, 0.1, first=True).first_call and not _request(0.0, 0.1, first=False).first_call


def test_first_requests_that_are_a_fifth_of_the_run_set_its_ttft_p90() -> None:
    every, warm = _tallies(first=8, warm=32)
    figures = tally_figures(every, span=None, cached_reported=True)
    found = cold_start(figures, every.requests, warm, advice=True)
    assert found["ttft_p90_s_warm"] is not None and abs(found["ttft_p90_s_warm"] - 0.1) < 0.01
    keys = found["cold_start_figures"]
    assert "ttft_p90_s" in keys and "ttft_p50_s" not in keys  # a fifth moves the p90, not the p50
    assert keys.index("ttft_p90_s") < keys.index("e2e_interactivity_p90_tokens_per_s")  # times first
    note = found["cold_start_note"]
    # The log-bucketed p90s, within their 2%: about 2 s over all, 0.1 s over the others.
    assert re.match(r"ttft_p90_s (1\.9\d|2) s \(0\.(09\d*|1) s without them\), ", note), note
    assert "set by the sessions' cold first requests (8 of 40 requests)" in note
    assert note.endswith("; --warmup S leaves them out")
    assert "--warmup" not in cold_start(figures, every.requests, warm, advice=False)["cold_start_note"]


def test_a_figure_within_the_margin_is_not_set_by_them() -> None:
    """First requests only 10% slower than the others move no percentile by more than 20%."""
    every, warm = _tallies(first=8, warm=32, cold_ttft=0.11)
    figures = tally_figures(every, span=None, cached_reported=True)
    found = cold_start(figures, every.requests, warm, advice=True)
    assert found["cold_start_figures"] == [] and "cold_start_note" not in found


def test_without_first_requests_or_with_too_few_others_nothing_is_said() -> None:
    every, warm = _tallies(first=0, warm=30)
    figures = tally_figures(every, span=None, cached_reported=True)
    assert cold_start(figures, every.requests, warm, advice=True)["cold_start_figures"] == []
    every, warm = _tallies(first=8, warm=9)  # nine warm requests cannot tell their p90 apart
    figures = tally_figures(every, span=None, cached_reported=True)
    assert cold_start(figures, every.requests, warm, advice=True)["cold_start_figures"] is None
    empty = Tally()
    assert cold_start(tally_figures(empty, span=None, cached_reported=True), 0, Tally(), advice=True) == {
        "ttft_p90_s_warm": None,
        "cold_start_figures": None,
    }


def test_the_client_s_run_figures_carry_the_cold_start_every_tick() -> None:
    stats = ClientStats(window_s=10, started_at=0.0)
    for i in range(40):
        stats.add(_request(float(i), 2.0 if i < 8 else 0.1, first=i < 8))
    run = stats.figures(40.0).run
    assert run.cold_start_figures is not None and "ttft_p90_s" in run.cold_start_figures
    assert run.cold_start_note is not None and run.cold_start_note.endswith("--warmup S leaves them out")
    assert run.ttft_p90_s_warm is not None and run.ttft_p90_s_warm < 0.11

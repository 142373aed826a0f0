"""The servers' request phases and speculative decoding (snapshot/servertime.py, docs/metrics.md "Where the
time went"), read from /metrics pages whose counters have a known shape (tests/telemetry/pages.py: 0.1 s
queued, 0.3 s in prefill, 0.56 s in decode per request; acceptance length 2.5, rate 0.5, per position
[0.8, 0.5, 0.2]): the window's figures and the run's totals give exactly that shape, through a restart,
per data-parallel engine and over endpoints, and over a sweep point's window; null where nothing is
exported or nothing was observed."""

from __future__ import annotations

from typing import Any

import pytest

from agentx_tui.snapshot import (
    SERVER_TIME_KEYS,
    EndpointReading,
    EndpointTotals,
    server_time_figures,
    totals_server_time,
    totals_since,
    ttft_outside_server,
)
from agentx_tui.telemetry import MetricsReader, aggregate_endpoints
from agentx_tui.telemetry._parse import parse_page

from . import pages

SHAPE: dict[str, Any] = {
    "server_queue_s_mean": pages.QUEUE_S,
    "server_prefill_s_mean": pages.PREFILL_S,
    "server_decode_s_mean": pages.DECODE_S,
    "server_step_tokens_mean": pages.STEP_TOKENS,
    "server_prefill_computed_tokens_mean": pages.PREFILL_COMPUTED,
    "server_preemptions_per_request": pages.PREEMPTIONS,
    "spec_acceptance_length": 2.5,
    "spec_acceptance_rate": 0.5,
    "spec_acceptance_by_position": (0.8, 0.5, 0.2),
    "spec_draft_length": 3,
}


def read(*scrapes: tuple[str, float], window_s: float = 60.0) -> EndpointReading:
    """The figures of the last of `scrapes` (page text, time) read in turn by one reader."""
    reader = MetricsReader("http://server", window_s=window_s)
    figures = None
    for text, now in scrapes:
        figures = reader.read(text, now)
    assert figures is not None and figures.up, figures
    return figures


def served(requests: float, drafts: float | None, **kwargs: Any) -> str:
    """A page of a server that has finished `requests` and verified `drafts` drafts, 4 steps a request."""
    return pages.phases_and_spec(requests=requests, steps=4 * requests, drafts=drafts, **kwargs)


def of(figures: EndpointReading | dict[str, Any]) -> dict[str, Any]:
    values = figures if isinstance(figures, dict) else figures.model_dump()
    return {key: values[key] for key in SHAPE}


def test_the_page_s_phases_and_speculative_counters_are_read_by_name() -> None:
    page = parse_page(served(10, 100))
    names = {key[0] for key in page.counters}
    assert {"request_queue_s_sum", "request_queue_s_count", "iteration_tokens_sum", "spec_drafts"} <= names
    # one counter per draft position, the `position` label kept apart rather than summed over
    assert {"spec_accepted_at:0", "spec_accepted_at:1", "spec_accepted_at:2"} <= names
    assert ("spec_accepted_at:1", "0", (("model_name", "m"),)) in page.counters
    assert page.counters[("spec_accepted_at:1", "0", (("model_name", "m"),))] == pytest.approx(50)


def test_the_known_shape_comes_out_exactly_over_the_window_and_the_run() -> None:
    figures = read((served(0, 0), 0.0), (served(10, 100), 10.0))
    assert of(figures) == pytest.approx(SHAPE)
    assert (figures.engine_steps_per_s, figures.spec_drafts_per_s, figures.spec_draft_tokens_per_s) == (4, 10, 30)
    t = figures.totals
    assert (t.request_queue_s_count, t.iteration_tokens_count, t.spec_drafts, t.spec_draft_tokens) == (10, 40, 100, 300)
    assert t.spec_accepted_tokens == pytest.approx(150)
    assert t.spec_accepted_tokens_by_position == pytest.approx((80, 50, 20))
    # The run's totals give the same figures by the same rule (the report, an endpoint's row).
    assert of(totals_server_time(t)) == pytest.approx(SHAPE)


def test_a_restart_counts_the_new_values_whole() -> None:
    """Counters that go down mean the server restarted: its new values are the increase (`rate()`)."""
    figures = read((served(1000, 10_000), 0.0), (served(2000, 20_000), 10.0), (served(10, 100), 20.0))
    t = figures.totals
    assert (t.request_queue_s_count, t.spec_drafts) == (1010, 10_100)
    assert t.spec_accepted_tokens_by_position == pytest.approx((8080, 5050, 2020))
    assert of(figures) == pytest.approx(SHAPE)
    assert of(totals_server_time(t)) == pytest.approx(SHAPE)


def test_a_server_that_does_not_speculate_or_export_phases_gives_null_never_zero() -> None:
    plain = read((served(0, None), 0.0), (served(10, None), 10.0))
    assert plain.spec_acceptance_length is None and plain.spec_acceptance_rate is None
    assert plain.spec_acceptance_by_position is None and plain.spec_draft_length is None
    assert plain.spec_drafts_per_s is None and plain.totals.spec_drafts is None
    assert plain.server_queue_s_mean == pytest.approx(0.1)
    older = read((served(0, 100, with_phases=False), 0.0), (served(10, 200, with_phases=False), 10.0))
    assert older.server_queue_s_mean is None and older.server_step_tokens_mean is None
    assert older.totals.request_queue_s_sum is None
    assert older.spec_acceptance_length == pytest.approx(2.5)


def test_no_draft_and_no_finished_request_in_the_window_are_unknown_not_zero_nor_one() -> None:
    """Speculation configured but nothing proposed (ngram under sampling): k is known, the acceptance not."""
    idle = read((served(10, 100), 0.0), (served(10, 100), 10.0))
    assert idle.spec_draft_length == 3 and idle.spec_drafts_per_s == 0
    assert idle.spec_acceptance_length is None and idle.spec_acceptance_rate is None
    assert idle.spec_acceptance_by_position is None
    assert idle.server_queue_s_mean is None and idle.server_preemptions_per_request is None
    # Nothing is known of a window with one page, not even that it is empty.
    first = read((served(10, 100), 0.0))
    assert first.spec_acceptance_length is None and first.spec_draft_length == 3


def test_data_parallel_engines_each_and_pooled() -> None:
    """Two engines: a quarter of the drafts at the shape, three quarters accepting less; the endpoint's
    figures are the pooled counters' (Σ accepted ÷ Σ drafts), each engine row its own."""
    weak = (0.4, 0.2, 0.0)
    two = {"engines": 2, "draft_share": (0.25, 0.75), "accepted_at": (pages.ACCEPTED_AT, weak)}
    figures = read((served(0, 0, **two), 0.0), (served(10, 400, **two), 10.0))
    e0, e1 = figures.engines
    assert (e0.spec_acceptance_length, e1.spec_acceptance_length) == pytest.approx((2.5, 1.6))
    assert (e0.server_queue_s_mean, e1.server_queue_s_mean) == pytest.approx((0.1, 0.1))
    assert figures.spec_acceptance_length == pytest.approx(1 + 0.25 * 1.5 + 0.75 * 0.6)
    assert figures.spec_acceptance_rate == pytest.approx((0.25 * 1.5 + 0.75 * 0.6) / 3)
    assert figures.spec_acceptance_by_position == pytest.approx((0.5, 0.275, 0.05))
    assert figures.spec_draft_length == 3 and figures.server_decode_s_mean == pytest.approx(0.56)


def test_the_aggregate_over_endpoints_is_the_pooled_ratio() -> None:
    """Endpoints weighted by what each mean is over: the same pooled figures as one server with both."""
    a = read((served(0, 0), 0.0), (served(10, 100), 10.0))
    b = read(
        (served(0, 0, accepted_at=((0.4, 0.2, 0.0),)), 0.0), (served(30, 300, accepted_at=((0.4, 0.2, 0.0),)), 10.0)
    )
    agg = aggregate_endpoints([a, b])
    assert agg is not None
    assert agg.spec_acceptance_length == pytest.approx(1 + 0.25 * 1.5 + 0.75 * 0.6)
    assert agg.spec_acceptance_by_position == pytest.approx((0.5, 0.275, 0.05))
    assert agg.spec_draft_length == 3 and agg.spec_drafts_per_s == 40
    assert agg.server_queue_s_mean == pytest.approx(0.1) and agg.server_step_tokens_mean == pytest.approx(48)
    assert agg.totals.spec_accepted_tokens_by_position == pytest.approx((80 + 120, 50 + 60, 20))
    assert of(totals_server_time(agg.totals))["spec_acceptance_length"] == pytest.approx(agg.spec_acceptance_length)
    # Another draft length: the positions cannot be pooled, the acceptance length still can.
    c = read((served(0, 0, accepted_at=((0.8, 0.5),)), 0.0), (served(10, 100, accepted_at=((0.8, 0.5),)), 10.0))
    mixed = aggregate_endpoints([a, c])
    assert mixed is not None and mixed.spec_draft_length is None and mixed.spec_acceptance_by_position is None
    assert mixed.spec_acceptance_length == pytest.approx(1 + (150 + 130) / 200)
    assert mixed.totals.spec_accepted_tokens_by_position is None


def test_a_sweep_point_s_window_is_the_totals_increase() -> None:
    reader = MetricsReader("http://server", window_s=5.0)
    reader.read(served(0, 0, accepted_at=((0.1, 0.0, 0.0),)), 0.0)
    start = reader.read(served(50, 500, accepted_at=((0.1, 0.0, 0.0),)), 10.0).totals  # a different shape before
    # From here on the server accepts at the shape: 20 more requests and 200 more drafts at it.
    end_text = served(70, 700, accepted_at=((0.1 * 500 / 700 + 0.8 * 200 / 700, 0.5 * 200 / 700, 0.2 * 200 / 700),))
    end = reader.read(end_text, 20.0).totals
    window = totals_since(end, start)
    assert window.spec_drafts == 200 and window.request_queue_s_count == 20
    assert of(totals_server_time(window)) == pytest.approx(SHAPE)
    fewer = end.model_copy(update={"spec_accepted_tokens_by_position": (1.0, 2.0)})
    assert totals_since(fewer, start).spec_accepted_tokens_by_position is None  # k changed: unknown


def test_the_rule_itself_knows_none() -> None:
    assert all(value is None for value in server_time_figures(lambda _name: None, None).values())
    assert set(server_time_figures(lambda _name: None, None)) == set(SERVER_TIME_KEYS)
    zero_drafts = {"spec_drafts": 0.0, "spec_accepted_tokens": 0.0, "spec_draft_tokens": 0.0}
    figures = server_time_figures(zero_drafts.get, [0.0, 0.0])
    assert figures["spec_acceptance_length"] is None and figures["spec_draft_length"] == 2
    assert totals_server_time(EndpointTotals())["spec_acceptance_length"] is None


def test_ttft_outside_the_server_is_the_client_s_mean_less_queue_and_prefill() -> None:
    assert ttft_outside_server(0.45, 0.1, 0.3) == pytest.approx(0.05)
    assert ttft_outside_server(None, 0.1, 0.3) is None
    assert ttft_outside_server(0.45, None, 0.3) is None and ttft_outside_server(0.45, 0.1, None) is None


def test_the_real_engine_s_page_with_ngram_speculation() -> None:
    """vLLM 0.32's own page (CPU build, tiny model, ngram k = 3, six greedy requests of 40 tokens):
    its counters as recorded, and the figures from them by hand."""
    before, after = pages.REAL_SPEC_BEFORE.read_text(), pages.REAL_SPEC_AFTER.read_text()
    figures = read((before, 0.0), (after, 10.0))
    t = figures.totals
    assert (t.spec_drafts, t.spec_draft_tokens, t.spec_accepted_tokens) == (66, 174, 174)
    assert t.spec_accepted_tokens_by_position == (66, 54, 54)
    assert figures.spec_acceptance_length == pytest.approx(1 + 174 / 66)
    assert figures.spec_acceptance_rate == 1.0 and figures.spec_draft_length == 3
    assert figures.spec_acceptance_by_position == pytest.approx((1.0, 54 / 66, 54 / 66))
    assert (t.request_queue_s_count, t.request_decode_s_count, t.iteration_tokens_count) == (6, 6, 14)
    assert figures.server_step_tokens_mean == pytest.approx(444 / 14)  # 240 generated + 204 computed in 14 steps
    assert figures.server_prefill_computed_tokens_mean == pytest.approx(204 / 6)
    assert figures.server_preemptions_per_request == 0.0  # measured: none, not unknown

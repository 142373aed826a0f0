"""The servers' request phases and speculative decoding in the report (docs/metrics.md, "Where the time
went"): the run's figures and each endpoint's row from their run totals, against the golden acceptance
length; null where the servers export nothing; `--check` and `compare` name every new key."""

from __future__ import annotations

import pytest

from agentx_tui.report import NUMERIC_KEYS, Report, evaluate_checks, parse_check
from agentx_tui.report._compare import HEADLINE, compare_reports
from agentx_tui.snapshot import SERVER_TIME_KEYS, EndpointReading, Snapshot
from agentx_tui.telemetry import aggregate_endpoints

from ._snaps import stream
from .test_builder import build

GOLDEN = "DeepSeek V4 Pro MTP, thinking on, k = 3: InferenceX dsv4_mtp.yaml"


def _served(e: EndpointReading, requests: float, drafts: float) -> EndpointReading:
    """`e` having finished `requests` at 0.1 s queued, 0.3 s prefill, 0.56 s decode each, and verified
    `drafts` drafts of 3 tokens accepting 0.8, 0.5, 0.2 per draft by position; golden 2.49 at k = 3."""
    totals = e.totals.model_copy(
        update={
            "request_queue_s_sum": 0.1 * requests,
            "request_queue_s_count": requests,
            "request_prefill_s_sum": 0.3 * requests,
            "request_prefill_s_count": requests,
            "request_decode_s_sum": 0.56 * requests,
            "request_decode_s_count": requests,
            "iteration_tokens_sum": 48.0 * 4 * requests,
            "iteration_tokens_count": 4 * requests,
            "spec_drafts": drafts,
            "spec_draft_tokens": 3 * drafts,
            "spec_accepted_tokens": 1.5 * drafts,
            "spec_accepted_tokens_by_position": (0.8 * drafts, 0.5 * drafts, 0.2 * drafts),
        }
    )
    return e.model_copy(
        update={
            "totals": totals,
            "spec_draft_length": 3,
            "spec_golden_acceptance_length": 2.49,
            "spec_golden_source": GOLDEN,
        }
    )


def _with_server_time(snaps: list[Snapshot]) -> list[Snapshot]:
    """The stream's last tick with both endpoints' phase and speculative counters (the first tick's are 0),
    and the client's TTFT mean over the run, 0.45 s."""
    last = snaps[-1]
    a, b = last.endpoints
    endpoints = (_served(a, 20, 200), _served(b, 10, 100))
    assert last.client is not None
    client = last.client.model_copy(update={"run": last.client.run.updated(ttft_s_mean=0.45)})
    update = {"endpoints": endpoints, "aggregate": aggregate_endpoints(endpoints), "client": client}
    return [*snaps[:-1], last.model_copy(update=update)]


def test_the_run_s_figures_come_from_the_totals_and_meet_the_golden_length() -> None:
    r = build(_with_server_time(stream()))
    assert (r["server_queue_s_mean"], r["server_prefill_s_mean"], r["server_decode_s_mean"]) == pytest.approx(
        (0.1, 0.3, 0.56)
    )
    assert r["server_step_tokens_mean"] == pytest.approx(48)
    assert r["server_prefill_computed_tokens_mean"] is None  # not among these counters: unknown, not 0
    assert (r["spec_acceptance_length"], r["spec_acceptance_rate"]) == pytest.approx((2.5, 0.5))
    assert r["spec_acceptance_by_position"] == pytest.approx([0.8, 0.5, 0.2]) and r["spec_draft_length"] == 3
    assert (r["spec_golden_acceptance_length"], r["spec_golden_source"]) == (2.49, GOLDEN)
    assert r["spec_acceptance_vs_golden"] == pytest.approx(2.5 / 2.49)
    assert r["ttft_outside_server_s_mean"] == pytest.approx(0.45 - (0.1 + 0.3))  # the network, frontend, client
    row_a, row_b = r["endpoints"]
    assert row_a["server_decode_s_mean"] == pytest.approx(0.56)
    assert row_b["spec_acceptance_length"] == pytest.approx(2.5)
    assert row_a["spec_acceptance_by_position"] == pytest.approx([0.8, 0.5, 0.2])
    assert row_b["spec_golden_acceptance_length"] == 2.49


def test_servers_without_the_counters_leave_every_figure_null() -> None:
    r = build(stream())
    for key in (*SERVER_TIME_KEYS, "spec_golden_acceptance_length", "spec_acceptance_vs_golden"):
        assert r[key] is None, key
    assert r["ttft_outside_server_s_mean"] is None
    assert r["endpoints"][0]["spec_acceptance_length"] is None


def test_checks_and_compare_name_the_new_figures() -> None:
    numeric = {*SERVER_TIME_KEYS, "ttft_outside_server_s_mean", "spec_acceptance_vs_golden"}
    assert numeric - {"spec_acceptance_by_position"} <= set(NUMERIC_KEYS)
    report = Report.read(build(_with_server_time(stream())))
    (result,) = evaluate_checks([parse_check("spec_acceptance_length >= 3")], report)
    assert not result.passed and result.shown_value == "2.5"
    compared = {c.key for c in HEADLINE}
    assert {"server_queue_s_mean", "spec_acceptance_length", "spec_acceptance_vs_golden"} <= compared
    rows = {row.key: row for row in compare_reports(Report.read(build(stream())), report).headline}
    assert rows["spec_acceptance_length"].b == pytest.approx(2.5) and rows["spec_acceptance_length"].a is None

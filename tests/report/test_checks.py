"""`--check` parsing (said before the run) and evaluation (after it)."""

from __future__ import annotations

import pytest

from agentx_tui.errors import UsageError
from agentx_tui.report import NUMERIC_KEYS, REPORT_KEYS, Check, Report, evaluate_checks, parse_check


@pytest.mark.parametrize(
    ("expr", "key", "op", "threshold"),
    [
        ("output_tokens_per_s >= 500", "output_tokens_per_s", ">=", 500.0),
        ("ttft_p90_s <= 2", "ttft_p90_s", "<=", 2.0),
        ("error_rate == 0", "error_rate", "==", 0.0),
        ("  kv_cache_usage_max<0.95 ", "kv_cache_usage_max", "<", 0.95),
        ("tokens_per_dollar_total>1.3e9", "tokens_per_dollar_total", ">", 1.3e9),
        ("preemptions <= -1", "preemptions", "<=", -1.0),
    ],
)
def test_valid_expressions(expr: str, key: str, op: str, threshold: float) -> None:
    check = parse_check(expr)
    assert (check.key, check.op, check.threshold) == (key, op, threshold)
    assert check.expr == expr.strip()


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("output_tokens_per_s", "is not KEY OP NUMBER"),
        ("output_tokens_per_s => 5", "is not KEY OP NUMBER"),
        ("output_tokens_per_s != 5", "is not KEY OP NUMBER"),
        (">= 5", "is not KEY OP NUMBER"),
        ("", "is not KEY OP NUMBER"),
        ("output_tokens_per_s >= fast", "'fast' is not a finite number"),
        ("output_tokens_per_s >= nan", "'nan' is not a finite number"),
        ("output_tokens_per_s >= 5 6", "is not KEY OP NUMBER"),
    ],
)
def test_malformed_expressions_are_usage_errors(expr: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as err:
        parse_check(expr)
    assert err.value.exit_code == 2


def test_an_unknown_key_names_it_and_suggests_close_ones() -> None:
    with pytest.raises(UsageError) as err:
        parse_check("ttft_p95_s <= 2")
    text = str(err.value)
    assert "'ttft_p95_s' is not a report key" in text and "ttft_p90_s" in text
    with pytest.raises(UsageError, match="output_tokens_per_s"):
        parse_check("output_tokens_per_sec > 0")


def test_a_non_numeric_key_is_refused() -> None:
    with pytest.raises(UsageError, match="'target' is not a numeric report figure"):
        parse_check("target == 1")
    with pytest.raises(UsageError, match="not a numeric"):
        parse_check("partial == 0")


def test_numeric_keys_are_report_keys() -> None:
    assert set(NUMERIC_KEYS) <= set(REPORT_KEYS)
    assert "endpoints" not in NUMERIC_KEYS and "error_rate" in NUMERIC_KEYS


def test_evaluation_passes_fails_and_never_passes_an_unknown_figure() -> None:
    report = Report(
        output_tokens_per_s=600.0,
        ttft_p90_s=2.5,
        error_rate=0.0,
        gpu_util_mean=None,
        requests_completed=12,
    )
    checks = [
        parse_check(e)
        for e in (
            "output_tokens_per_s >= 500",
            "ttft_p90_s <= 2",
            "error_rate == 0",
            "gpu_util_mean >= 0",
            "requests_completed > 11",
            "preemptions < 1",
        )
    ]
    results = evaluate_checks(checks, report)
    assert [r.passed for r in results] == [True, False, True, False, True, False]
    assert [r.shown_value for r in results] == ["600", "2.5", "0", "n/a", "12", "n/a"]
    assert results[1].value == 2.5 and results[1].threshold == 2.0 and results[1].expr == "ttft_p90_s <= 2"


def test_equality_tolerates_float_rounding_only() -> None:
    (near,) = evaluate_checks(
        [parse_check("prefix_cache_hit_rate_server == 0.3")], Report(prefix_cache_hit_rate_server=0.1 + 0.2)
    )
    assert near.passed
    (far,) = evaluate_checks([Check("x", "error_rate", "==", 0.0)], Report(error_rate=1e-6))
    assert not far.passed


def test_a_boolean_is_not_a_measured_value() -> None:
    # Not through validation, which would make it 1.0: as if a file had it.
    report = Report.model_construct(error_rate=True)  # type: ignore[arg-type]
    (result,) = evaluate_checks([Check("x", "error_rate", ">=", 0.0)], report)
    assert result.value is None and not result.passed


def test_interval_ends_can_be_checked_too() -> None:
    """A gate can ask for the worst case, not the estimate: the low end of a tier's or a run's interval."""
    tier = parse_check("total_tokens_per_s_per_gpu_at_100_ci_low >= 7e5")
    run = parse_check("interactivity_p90_tokens_per_s_ci_low >= 95")
    assert (tier.key, run.key) == ("total_tokens_per_s_per_gpu_at_100_ci_low", "interactivity_p90_tokens_per_s_ci_low")
    report = Report.model_validate(
        {"total_tokens_per_s_per_gpu_at_100_ci_low": 7.2e5, "interactivity_p90_tokens_per_s_ci_low": None}
    )
    passed, unknown = evaluate_checks([tier, run], report)
    assert passed.passed and not unknown.passed
    with pytest.raises(UsageError):
        parse_check("tokens_per_dollar_total_at_100_ci_low >= 1")  # only throughput reads carry intervals
    with pytest.raises(UsageError):
        parse_check("ci_method == 1")  # words, not a figure


def test_a_renamed_key_is_checked_under_its_earlier_name_too() -> None:
    check = parse_check("sessions_started >= 1")
    assert check.key == "sessions_ended" and check.expr == "sessions_started >= 1"


def test_a_failed_check_on_a_figure_the_first_requests_set_says_so() -> None:
    """docs/metrics.md, "Cold start": the FAIL line names the cause and the way out; a passing check, or
    one on a figure they did not set, says nothing more; with a warm-up, no advice to take one."""
    report = Report(ttft_p90_s=0.898, e2e_p90_s=3.0, cold_start_figures=["ttft_p90_s"])
    slow, fine, other = evaluate_checks(
        [parse_check("ttft_p90_s <= 0.5"), parse_check("ttft_p90_s <= 1"), parse_check("e2e_p90_s <= 2")], report
    )
    assert slow.note == "set by the sessions' cold first requests; use --warmup S to leave them out"
    assert slow.verdict_detail == f"measured 0.898 — {slow.note}"
    assert fine.note is None and other.note is None and other.verdict_detail == "measured 3"
    assert "note" not in fine.model_dump()  # written only when there is one
    warmed = report.updated(warmup_s=10.0)
    (said,) = evaluate_checks([parse_check("ttft_p90_s <= 0.5")], warmed)
    assert said.note == "set by the sessions' cold first requests"

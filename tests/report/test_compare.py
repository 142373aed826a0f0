"""`agentx-tui compare A.json B.json [--tolerance F]`: B/A per figure and per tier, exit 1 on a regression."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentx_tui.errors import UsageError
from agentx_tui.report import Report
from agentx_tui.report._compare import compare_reports
from agentx_tui.report._compare_cli import compare_main
from agentx_tui.report._compare_text import render_comparison

RUN: dict[str, Any] = {
    "agentx_version": "0.1.0",
    "duration_s": 300.0,
    "model": "Qwen/Qwen3-8B",
    "workload": "coding-agent",
    "users": 8,
    "total_tokens_per_s": 12000.0,
    "total_tokens_per_s_per_gpu": 12000.0,
    "output_tokens_per_s": 450.0,
    "output_tokens_per_s_per_gpu": 450.0,
    "interactivity_p50_tokens_per_s": 88.0,
    "interactivity_p90_tokens_per_s": 71.0,
    "ttft_p90_s": 0.42,
    "itl_p90_s": 0.012,
    "prefix_cache_hit_rate_server": 0.91,
    "prefix_cache_hit_rate_client": 0.88,
    "tokens_per_dollar_total": 1.5e7,
    "tokens_per_dollar_output": 5.6e5,
    "usd_per_million_output_tokens": 1.76,
    "error_rate": 0.0,
}


def sweep(**tiers: float | None) -> dict[str, Any]:
    """A sweep report: `RUN`'s whole-run figures, two points, and the tier keys given (`at_100=…` sets all
    three figures of tier 100 from its throughput per GPU at 2 USD/GPU-hour)."""
    report: dict[str, Any] = {**RUN, "points": [{"users": 1}, {"users": 2}], "frontier": [1, 0]}
    for name, tput in tiers.items():
        t = name.removeprefix("at_")
        report[f"total_tokens_per_s_per_gpu_at_{t}"] = tput
        report[f"tokens_per_dollar_total_at_{t}"] = None if tput is None else tput * 3600 / 2
        report[f"usd_per_million_total_tokens_at_{t}"] = None if tput is None else 2e6 / (tput * 3600)
    return report


def write(tmp_path: Path, name: str, report: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(report), encoding="utf-8")
    return str(path)


def run(tmp_path: Path, a: Any, b: Any, *flags: str) -> int:
    return compare_main([write(tmp_path, "a.json", a), write(tmp_path, "b.json", b), *flags])


def test_equal_reports_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, RUN, RUN) == 0
    out = capsys.readouterr().out
    assert "No regression: B is within 5% of A on all 9 gated figures." in out
    assert "total_tokens_per_s_per_gpu" in out and "1.000" in out
    assert "\x1b[" not in out  # not a terminal: no colour


def test_a_ten_percent_throughput_drop_fails_at_the_default_tolerance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    worse = {**RUN, "total_tokens_per_s": 10800.0}
    assert run(tmp_path, RUN, worse) == 1
    out = capsys.readouterr().out
    assert "0.900  -10.0% REGRESSED (no interval: noise unknown)" in out
    assert "B regressed beyond the 5% tolerance on 1 figure: total_tokens_per_s (-10.0%)." in out
    assert "It lacks a 95% interval in one report or both, so whether it is noise is unknown" in out
    assert run(tmp_path, RUN, worse, "--tolerance", "0.2") == 0
    assert "No regression: B is within 20% of A" in capsys.readouterr().out


def test_a_change_of_exactly_the_tolerance_passes(tmp_path: Path) -> None:
    assert run(tmp_path, RUN, {**RUN, "total_tokens_per_s": 12000.0 * 0.95}) == 0
    assert run(tmp_path, RUN, {**RUN, "total_tokens_per_s": 12000.0 * 0.949}) == 1


def test_a_cost_rise_fails_and_a_gain_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, RUN, {**RUN, "usd_per_million_output_tokens": 1.9}) == 1  # +8%: lower is better
    assert "usd_per_million_output_tokens (+8.0%)" in capsys.readouterr().out
    better = {
        **RUN,
        "total_tokens_per_s": 24000.0,
        "usd_per_million_output_tokens": 0.9,
        "tokens_per_dollar_total": 3e7,
    }
    assert run(tmp_path, RUN, better) == 0


def test_figures_that_do_not_gate_are_shown_only(tmp_path: Path) -> None:
    slower_start = {**RUN, "ttft_p90_s": 4.2, "itl_p90_s": 0.5, "error_rate": 0.3, "prefix_cache_hit_rate_server": 0.1}
    assert run(tmp_path, RUN, slower_start) == 0


def test_null_figures_are_na_and_do_not_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    no_price = {**RUN, "tokens_per_dollar_total": None, "tokens_per_dollar_output": None}
    no_price["usd_per_million_output_tokens"] = None
    assert run(tmp_path, RUN, no_price) == 0
    out = capsys.readouterr().out
    assert "tokens_per_dollar_total" in out and "n/a, not gated" in out
    assert (
        "Not gated, null on one side or both (n/a): tokens_per_dollar_total, tokens_per_dollar_output, "
        "usd_per_million_output_tokens." in out
    )


def test_sweeps_are_compared_tier_by_tier(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = sweep(at_50=20000.0, at_100=10000.0, at_200=None)
    assert run(tmp_path, a, a) == 0
    capsys.readouterr()

    b = sweep(at_50=20000.0, at_100=9000.0, at_200=None)
    assert run(tmp_path, a, b) == 1
    out = capsys.readouterr().out
    assert "Tiers (read on the frontier at p90 interactivity T tok/s/user)" in out
    assert "total_tokens_per_s_per_gpu_at_100 (-10.0%)" in out
    assert "tokens_per_dollar_total_at_100 (-10.0%)" in out
    assert "usd_per_million_total_tokens_at_100 (+11.1%)" in out
    assert "All 3 lack a 95% interval in one report or both" in out
    assert "total_tokens_per_s_per_gpu_at_200" not in out.split("Higher is better")[0]  # no row of n/a only
    assert "Read in neither report (outside both frontiers' range): tier 200." in out
    assert "Not gated, null on one side or both" not in out
    assert run(tmp_path, a, b, "--tolerance", "0.2") == 0


def test_a_sweeps_whole_run_figures_do_not_gate_while_tiers_do(tmp_path: Path) -> None:
    # B's auto sweep stopped a point earlier: its whole-run average is lower, its frontier is the same.
    a = sweep(at_100=10000.0)
    b = {**sweep(at_100=10000.0), "total_tokens_per_s": 6000.0, "interactivity_p90_tokens_per_s": 140.0}
    comparison = compare_reports(Report.model_validate(a), Report.model_validate(b))
    assert comparison.gate == "tiers"
    assert not comparison.regressions
    text = render_comparison(comparison, a_name="a.json", b_name="b.json")
    assert "Whole run (shown, not gated: a sweep's whole-run figures mix every point's load)" in text


def test_sweeps_with_no_tier_known_on_both_sides_gate_on_the_whole_run(tmp_path: Path) -> None:
    a = sweep(at_100=None)
    b = {**sweep(at_100=None), "total_tokens_per_s": 6000.0}
    comparison = compare_reports(Report.model_validate(a), Report.model_validate(b))
    assert comparison.gate == "headline"
    assert [r.key for r in comparison.regressions] == ["total_tokens_per_s"]
    assert "no tier is known on both sides, so the whole-run figures gate" in render_comparison(
        comparison, a_name="a", b_name="b"
    )


def test_a_single_run_against_a_sweep_compares_the_headline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, RUN, {**sweep(at_100=10000.0), "total_tokens_per_s": 6000.0}) == 1
    out = capsys.readouterr().out
    assert "A is a single run and the other a sweep: the tiers are compared only between sweeps." in out


def test_colour_only_on_a_terminal_without_no_color(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    worse = {**RUN, "total_tokens_per_s": 6000.0}
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    run(tmp_path, RUN, worse)
    assert "\x1b[31m" in capsys.readouterr().out
    monkeypatch.setenv("NO_COLOR", "1")
    run(tmp_path, RUN, worse)
    assert "\x1b[" not in capsys.readouterr().out


def one_sentence(exc: UsageError) -> str:
    assert exc.exit_code == 2
    assert "\n" not in str(exc)
    assert exc.message.endswith(".")
    assert exc.message[0].isupper() or exc.message.startswith(("/", "--"))  # a sentence, or a path/flag first
    return exc.message


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "(B) does not exist."),
        ("not json at all", "(B) is not JSON."),
        ("[1, 2, 3]", "(B) is JSON but not an agentx-tui report (it lacks agentx_version and duration_s)."),
        ('{"users": 8}', "is JSON but not an agentx-tui report"),
        (
            '{"schema_version": 1, "seq": 0}\n{"schema_version": 1, "seq": 1}\n',
            "(B) is a recording (--record), not a report.",
        ),
        (b"\xff\xfe garbage", "(B) is not JSON."),
    ],
    ids=["missing", "text", "a list", "another JSON", "a recording", "binary"],
)
def test_a_bad_file_is_one_sentence_and_exit_2(tmp_path: Path, content: str | bytes | None, words: str) -> None:
    b = tmp_path / "b.json"
    if isinstance(content, bytes):
        b.write_bytes(content)
    elif content is not None:
        b.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        compare_main([write(tmp_path, "a.json", RUN), str(b)])
    assert words in one_sentence(caught.value)
    assert caught.value.message.startswith(str(b))


def test_a_folder_is_not_a_report(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        compare_main([str(tmp_path), write(tmp_path, "b.json", RUN)])
    assert "(A) is a folder, not a report." in one_sentence(caught.value)


@pytest.mark.parametrize("value", ["nan", "inf", "-0.1", "abc", "-inf"])
def test_a_bad_tolerance_is_refused_in_one_sentence(tmp_path: Path, value: str) -> None:
    a, b = write(tmp_path, "a.json", RUN), write(tmp_path, "b.json", RUN)
    with pytest.raises(UsageError) as caught:
        compare_main([a, b, f"--tolerance={value}"])
    message = one_sentence(caught.value)
    assert message.startswith("--tolerance: ") and repr(value) in message


def test_missing_arguments_are_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        compare_main([write(tmp_path, "a.json", RUN)])
    assert "B.json" in one_sentence(caught.value)


# --- intervals: noise is not a regression ----------------------------------------------------------------


def with_ci(report: dict[str, Any], width: float, *tiers: int) -> dict[str, Any]:
    """`report` with ±`width` 95% intervals on the throughput read at each of `tiers`."""
    out = dict(report)
    for t in tiers:
        tput = out[f"total_tokens_per_s_per_gpu_at_{t}"]
        out[f"total_tokens_per_s_per_gpu_at_{t}_ci_low"] = tput * (1 - width)
        out[f"total_tokens_per_s_per_gpu_at_{t}_ci_high"] = tput * (1 + width)
    return out


def test_a_drop_inside_overlapping_intervals_is_noise_not_a_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = with_ci(sweep(at_50=10_000.0, at_100=6_000.0), 0.08, 50, 100)
    b = with_ci(sweep(at_50=9_200.0, at_100=6_100.0), 0.08, 50, 100)  # -8% at 50: beyond 5%, inside the noise
    assert run(tmp_path, a, b) == 0
    out = capsys.readouterr().out
    assert "-8.0% within noise" in out
    assert "10,000 [9,200.0–10,800]" in out and "9,200.0 [8,464.0–9,936.0]" in out
    # Tokens per dollar and USD per Mtok at a tier carry its throughput's interval: noise too.
    assert out.count("within noise") >= 6
    assert "No regression: B is within 5% of A, or within noise, on all 6 gated figures" in out


def test_a_drop_beyond_both_intervals_regresses_and_names_both_intervals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = with_ci(sweep(at_50=10_000.0, at_100=6_000.0), 0.03, 50, 100)
    b = with_ci(sweep(at_50=8_000.0, at_100=6_000.0), 0.03, 50, 100)  # -20% at 50, intervals far apart
    assert run(tmp_path, a, b) == 1
    out = capsys.readouterr().out
    assert "-20.0% REGRESSED" in out
    assert "total_tokens_per_s_per_gpu_at_50 (-20.0%: A 10,000 [9,700.0–10,300], B 8,000.0 [7,760.0–8,240.0])" in out
    verdict = out.splitlines()[-2]
    assert verdict.startswith("B regressed beyond the 5% tolerance on 3 figures: ")
    assert "tokens_per_dollar_total_at_50" in verdict and "_at_100" not in verdict
    assert out.splitlines()[-1] == "3 other figures differed within noise."


def test_a_small_change_beyond_the_noise_but_within_the_tolerance_passes(tmp_path: Path) -> None:
    a = with_ci(sweep(at_50=10_000.0), 0.005, 50)
    b = with_ci(sweep(at_50=9_700.0), 0.005, 50)  # -3%: the intervals part, the tolerance holds
    comparison = compare_reports(Report.model_validate_json(json.dumps(a)), Report.model_validate_json(json.dumps(b)))
    assert not comparison.regressions
    assert run(tmp_path, a, b) == 0


def test_an_interval_on_one_side_only_keeps_the_tolerance_rule(tmp_path: Path) -> None:
    a = with_ci(sweep(at_50=10_000.0), 0.2, 50)
    b = sweep(at_50=9_000.0)  # a report from before the trust work: no interval
    comparison = compare_reports(Report.model_validate(a), Report.model_validate(b))
    row = next(r for r in comparison.tiers if r.key == "total_tokens_per_s_per_gpu_at_50")
    assert row.a_ci is not None and row.b_ci is None and not row.noise
    assert run(tmp_path, a, b) == 1


def test_single_runs_with_precision_intervals_compare_by_noise_too(tmp_path: Path) -> None:
    def precise(tput: float) -> dict[str, Any]:
        return {
            **RUN,
            "total_tokens_per_s": tput,
            "total_tokens_per_s_per_gpu": tput,
            "tokens_per_dollar_total": tput * 1250,
            "total_tokens_per_s_per_gpu_ci_low": tput * 0.9,
            "total_tokens_per_s_per_gpu_ci_high": tput * 1.1,
        }

    a, b = Report.model_validate(precise(12_000.0)), Report.model_validate(precise(11_000.0))
    comparison = compare_reports(a, b)  # -8.3%, inside ±10%
    noise = {r.key for r in comparison.within_noise}
    assert noise == {"total_tokens_per_s", "total_tokens_per_s_per_gpu", "tokens_per_dollar_total"}
    assert not comparison.regressions


def test_a_client_bound_report_is_said_before_the_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(tmp_path, RUN, {**RUN, "client_saturated": True})
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].startswith("B's load generator was saturated (client_saturated): its figures measure the client")
    run(tmp_path, RUN, RUN)
    assert "saturated" not in capsys.readouterr().out


# --- two sweeps of one configuration, no interval (measured: 12-s against 9-s points) ---------------------


def test_a_regression_without_intervals_says_its_noise_is_unknown_and_lists_only_real_nulls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two short sweeps of one configuration: -48.8% at tier 75 while the agents per GPU there rose 20%.
    The tolerance alone judges it (exit 1), each row says its noise is unknown, the agents (known on both
    sides) are not called null, and the closing lines are sentences."""
    a = {**sweep(at_75=10_000.0), "frontier_axis": "e2e_interactivity", "agents_per_gpu_at_75": 10.42}
    b = {**sweep(at_75=5_120.0), "frontier_axis": "e2e_interactivity", "agents_per_gpu_at_75": 12.54}
    assert run(tmp_path, a, b) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("total_tokens_per_s_per_gpu_at_75 "))
    assert row.endswith("-48.8% REGRESSED (no interval: noise unknown)")
    agents = next(line for line in out.splitlines() if line.startswith("agents_per_gpu_at_75 "))
    assert "10.42" in agents and "12.54" in agents and agents.endswith("+20.3%, not gated (no interval: noise unknown)")
    assert "null on one side or both" not in out
    assert "decode in two sweeps of before the frontier axis" not in out
    assert (
        "A …_at_T figure is read where the frontier crosses T tok/s/user of p90 interactivity: on the North Star "
        "(E2E-normalized interactivity), or, with _decode after T, on decode interactivity." in out
    )
    assert "one without an interval on both sides (no interval: noise unknown) is judged by the 5% tolerance" in out
    assert "No gated figure here carries an interval on both sides." in out


def test_the_null_list_names_a_figure_null_on_one_side_and_not_one_known_on_both(tmp_path: Path) -> None:
    a = {**sweep(at_75=10_000.0, at_100=8_000.0), "frontier_axis": "e2e_interactivity", "agents_per_gpu_at_75": 10.0}
    b = {**sweep(at_75=10_000.0, at_100=None), "frontier_axis": "e2e_interactivity", "agents_per_gpu_at_75": 10.0}
    comparison = compare_reports(Report.model_validate(a), Report.model_validate(b))
    assert {r.key for r in comparison.not_gated_na} == {
        "total_tokens_per_s_per_gpu_at_100",
        "tokens_per_dollar_total_at_100",
        "usd_per_million_total_tokens_at_100",
        "agents_per_gpu_at_100",  # A's read at 100 has no agents figure: null on both sides
    }
    text = render_comparison(comparison, a_name="a", b_name="b")
    assert "Not gated, null on one side or both (n/a): every figure at tier 100." in text


def test_figures_zero_on_both_sides_are_unchanged_not_na(tmp_path: Path) -> None:
    a = {**RUN, "tasks_completed": 0, "tasks_per_hour_per_gpu": 0.0}
    comparison = compare_reports(Report.model_validate(a), Report.model_validate(a))
    row = next(r for r in comparison.tasks if r.key == "tasks_per_hour_per_gpu")
    assert row.worse_by == 0.0 and row.gated and row not in comparison.not_gated_na


def test_among_regressions_those_without_intervals_are_named_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = with_ci(sweep(at_50=10_000.0, at_100=6_000.0), 0.03, 50)
    b = with_ci(sweep(at_50=8_000.0, at_100=5_000.0), 0.03, 50)  # both regress; only tier 50 has intervals
    assert run(tmp_path, a, b) == 1
    out = capsys.readouterr().out
    assert "total_tokens_per_s_per_gpu_at_50 (-20.0%: A 10,000 [9,700.0–10,300], B 8,000.0" in out
    assert "total_tokens_per_s_per_gpu_at_100 (-16.7%, no interval: noise unknown)" in out
    assert "3 of them lack a 95% interval in one report or both, so whether they are noise is unknown" in out

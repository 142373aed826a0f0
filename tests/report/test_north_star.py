"""The North Star in the report (docs/metrics.md, docs/sweeps.md): E2E-normalized interactivity over the
run, the frontier's axis, the tier reads on both axes (`…_at_T` on the North Star, `…_at_T_decode` on
decode interactivity), the agents per GPU at each tier; and what reads them: the writers, `--check`,
`compare`, the headless summary, the pictures."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentx_tui.report import (
    NUMERIC_KEYS,
    HeadlessPrinter,
    Report,
    ReportBuilder,
    evaluate_checks,
    parse_check,
    write_report,
)
from agentx_tui.report._charts import render_frontier_svg, render_points_svg
from agentx_tui.report._compare import compare_reports
from agentx_tui.report._compare_text import render_comparison
from agentx_tui.report._keys import is_tier_key, parse_tier_key, tier_of, unit
from agentx_tui.report._markdown import render_markdown
from agentx_tui.report._writers import render_csv
from agentx_tui.snapshot import RunIntervals, Snapshot, TierRead
from tests.report._snaps import stream
from tests.run.test_sweep import snap as sweep_tick
from tests.run.test_sweep import sweep_with_growing_ttft

TIER_FIGURES = (
    "total_tokens_per_s_per_gpu_at_{}",
    "total_tokens_per_s_per_gpu_at_{}_ci_low",
    "total_tokens_per_s_per_gpu_at_{}_ci_high",
    "tokens_per_dollar_total_at_{}",
    "usd_per_million_total_tokens_at_{}",
)


def sweep_report(axis: str = "e2e_interactivity") -> Report:
    """The report of a sweep on a server whose queue grows with load (tests/run/test_sweep.py): decode
    interactivity stays near 100 tok/s/user, the North Star falls from ~71 to ~12. Tiers 50 and 90."""
    phases, run, clock = sweep_with_growing_ttft(axis=axis)
    final: Snapshot = phases.advance(sweep_tick(clock.now + 1), run, final=True)  # type: ignore[arg-type]
    builder = ReportBuilder()
    builder.add(final.model_copy(update={"time": final.time - 60, "elapsed_s": final.elapsed_s - 60}))
    builder.add(final)
    return builder.build()


def test_a_sweep_report_reads_every_tier_on_both_axes_and_the_agents_on_its_own() -> None:
    data = sweep_report().model_dump()
    assert data["frontier_axis"] == "e2e_interactivity"
    for tier in ("50", "90"):
        for key in TIER_FIGURES:
            assert key.format(tier) in data and key.format(f"{tier}_decode") in data
        assert f"agents_per_gpu_at_{tier}" in data
    assert not any(k.startswith("agents_per_gpu_at_") and k.endswith("_decode") for k in data)
    # The queue: 90 tok/s/user is decoding speed at every point, but no point is that fast end to end.
    assert data["total_tokens_per_s_per_gpu_at_90"] is None
    assert data["total_tokens_per_s_per_gpu_at_90_decode"] is not None
    assert data["tokens_per_dollar_total_at_90_decode"] is not None
    # 50 is between the first two points end to end: 1 to 2 users on 2 GPUs.
    assert data["total_tokens_per_s_per_gpu_at_50"] is not None
    assert 0.5 < data["agents_per_gpu_at_50"] < 1.0
    assert data["agents_per_gpu_at_90"] is None
    # The keys' order: the frontier axis's tiers, each with its agents, then the other axis's.
    flat = [k for k in data if parse_tier_key(k)]
    assert flat[:6] == [*(k.format("50") for k in TIER_FIGURES), "agents_per_gpu_at_50"]
    assert flat[-5:] == [k.format("90_decode") for k in TIER_FIGURES]


def test_with_the_decode_axis_the_agents_are_read_on_decode() -> None:
    data = sweep_report("decode_interactivity").model_dump()
    assert data["frontier_axis"] == "decode_interactivity"
    assert (
        data["total_tokens_per_s_per_gpu_at_90_decode"] is not None and data["total_tokens_per_s_per_gpu_at_90"] is None
    )
    assert data["agents_per_gpu_at_90"] is not None  # on decode's frontier: every point decodes at ~90+
    assert data["agents_per_gpu_at_50"] is None  # below the slowest decode point


def test_a_north_star_sweep_report_read_back_and_written_again_is_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    report = sweep_report()
    checks = evaluate_checks([parse_check("agents_per_gpu_at_50 >= 0.5")], report)
    write_report(path, report, checks=checks)
    text = path.read_text(encoding="utf-8")
    again = Report.model_validate(json.loads(text))
    assert again.tiers == report.tiers
    assert json.dumps(again.model_dump(), indent=2, ensure_ascii=False) + "\n" == text


def test_flat_tier_keys_alone_make_reads_on_their_axes() -> None:
    report = Report.model_validate(
        {
            "frontier_axis": "e2e_interactivity",
            "total_tokens_per_s_per_gpu_at_100": 9000.0,
            "total_tokens_per_s_per_gpu_at_100_decode": 12000.0,
            "total_tokens_per_s_per_gpu_at_100_decode_ci_low": 11000.0,
            "agents_per_gpu_at_100": 24.0,
        }
    )
    assert report.tiers == [
        TierRead(tier=100.0, axis="e2e_interactivity", total_tokens_per_s_per_gpu=9000.0, agents_per_gpu=24.0),
        TierRead(
            tier=100.0, axis="decode_interactivity", total_tokens_per_s_per_gpu=12000.0,
            total_tokens_per_s_per_gpu_ci_low=11000.0,
        ),
    ]  # fmt: skip
    assert report.figure("total_tokens_per_s_per_gpu_at_100_decode_ci_low") == 11000.0
    assert report.figure("agents_per_gpu_at_100") == 24.0


def test_tier_keys_know_the_decode_suffix_and_the_agents() -> None:
    assert is_tier_key("total_tokens_per_s_per_gpu_at_100_decode")
    assert is_tier_key("total_tokens_per_s_per_gpu_at_37.5_decode_ci_high")
    assert is_tier_key("usd_per_million_total_tokens_at_100_decode") and is_tier_key("agents_per_gpu_at_100")
    assert not is_tier_key("agents_per_gpu_at_100_decode") and not is_tier_key("total_tokens_per_s_per_gpu_at_x")
    assert tier_of("tokens_per_dollar_total_at_50_decode", "tokens_per_dollar_total_at_") == 50.0
    assert tier_of("total_tokens_per_s_per_gpu_at_50_ci_low", "total_tokens_per_s_per_gpu_at_") is None
    assert unit("agents_per_gpu_at_100") == "agents/GPU"
    assert unit("total_tokens_per_s_per_gpu_at_100_decode") == "tokens/s/GPU"
    assert unit("e2e_interactivity_p90_tokens_per_s") == "tokens/s/user"


def test_checks_read_the_new_keys() -> None:
    report = Report.model_validate(
        {
            "e2e_interactivity_p90_tokens_per_s": 55.0,
            "frontier_axis": "e2e_interactivity",
            "total_tokens_per_s_per_gpu_at_100_decode": 12000.0,
            "agents_per_gpu_at_100": 9.0,
        }
    )
    exprs = (
        "e2e_interactivity_p90_tokens_per_s >= 50",
        "agents_per_gpu_at_100 >= 10",
        "total_tokens_per_s_per_gpu_at_100_decode > 1e4",
        "e2e_interactivity_p75_tokens_per_s > 0",
    )
    results = evaluate_checks([parse_check(e) for e in exprs], report)
    assert [r.passed for r in results] == [True, False, True, False]  # p75 unknown: a check never passes
    assert "frontier_axis" not in NUMERIC_KEYS  # a word, not a figure


def test_a_plain_run_has_the_north_star_and_no_frontier_axis() -> None:
    data = ReportBuilder()
    for s in stream():
        data.add(s)
    report = data.build().model_dump()
    assert report["frontier_axis"] is None
    assert report["e2e_interactivity_p50_tokens_per_s"] == 60.0
    assert report["e2e_interactivity_p75_tokens_per_s"] == 50.0
    assert report["e2e_interactivity_p90_tokens_per_s"] == 45.0
    assert report["e2e_interactivity_p90_tokens_per_s_ci_low"] is None  # no --precision
    assert not any(parse_tier_key(k) for k in report)
    observing = ReportBuilder()
    for s in stream(with_client=False):
        observing.add(s)
    assert observing.build().e2e_interactivity_p90_tokens_per_s is None  # no client: unknown, not 0


def test_a_run_with_precision_carries_the_north_stars_interval() -> None:
    snaps = stream()
    intervals = RunIntervals(
        precision=0.05,
        e2e_interactivity_p90_tokens_per_s=50.0,
        intervals={"e2e_interactivity_p90_tokens_per_s": (45.0, 52.0)},
        ci_method="bootstrap",
        stop_reason="precision ±5% reached",
    )
    snaps[-1] = snaps[-1].model_copy(update={"intervals": intervals})
    builder = ReportBuilder()
    for s in snaps:
        builder.add(s)
    report = builder.build()
    low, high = report.interval("e2e_interactivity_p90_tokens_per_s")
    assert low == pytest.approx(45.0 * 0.9) and high == pytest.approx(45.0 * 1.04)
    out = io.StringIO()
    HeadlessPrinter(out).summary(report, [])
    text = out.getvalue()
    assert "e2e_interactivity_p90_tokens_per_s 95%: 40.5–46.8 tokens/s/user" in text
    assert "p90 interactivity: 45 E2E-normalized (North Star), n/a decode tokens/s/user" in text


def test_the_markdown_report_reads_the_tiers_on_both_axes_with_the_agents() -> None:
    text = render_markdown(sweep_report(), images=["![frontier](r.frontier.svg)"])
    assert "| tier (tok/s/user, p90) | read on | total tok/s/GPU |" in text and "| agents/GPU |" in text
    rows = [line for line in text.splitlines() if re.match(r"\| (50|90) \| (North Star|decode)", line)]
    assert [row.split(" | ")[1] for row in rows] == ["North Star (E2E)", "North Star (E2E)", "decode", "decode"]
    assert re.search(r"\| 50 \| North Star \(E2E\) \|[^\n]*\| 0\.\d+ \|", text)  # its agents per GPU
    assert "North Star p90 tok/s/user" in text and "North Star p90 95%" in text and "decode p90 tok/s/user" in text
    assert "Drawn on the frontier's axis: E2E-normalized interactivity, tok/s/user (p90)." in text
    assert "| agents_per_gpu_at_50 |" in text and "| total_tokens_per_s_per_gpu_at_90_decode |" in text


def test_the_csv_run_row_has_both_axes_and_the_agents() -> None:
    header = render_csv(sweep_report()).splitlines()[0].split(",")
    for key in ("frontier_axis", "e2e_interactivity_p90_tokens_per_s", "agents_per_gpu_at_50"):
        assert key in header
    assert "total_tokens_per_s_per_gpu_at_90_decode" in header


@pytest.mark.parametrize(
    ("axis", "words"),
    [
        ("e2e_interactivity", "E2E-normalized interactivity, tok/s/user (p90)"),
        ("decode_interactivity", "decode interactivity, tok/s/user (p90)"),
    ],
)
def test_the_frontier_picture_is_drawn_on_the_frontier_axis(axis: str, words: str) -> None:
    report = sweep_report(axis)
    svg = render_frontier_svg(report)
    assert words in svg
    north_star = axis == "e2e_interactivity"
    assert ("against p90 E2E-normalized interactivity" in svg) == north_star
    assert ("p90 E2E-normalized" in render_points_svg(report)) == north_star


def _with(report: Report, **changes: Any) -> Report:
    return Report.model_validate({**report.model_dump(), **changes})


def test_compare_reads_the_north_star_both_axes_and_the_agents() -> None:
    a = sweep_report()
    assert a.tiers is not None
    # B carries 20% fewer agents per GPU at 50 tok/s/user (the reads are the tiers list, written flat).
    fewer_agents = [
        t.model_copy(update={"agents_per_gpu": t.agents_per_gpu * 0.8}) if t.agents_per_gpu else t for t in a.tiers
    ]
    fewer = _with(a, tiers=[t.model_dump() for t in fewer_agents], e2e_interactivity_p90_tokens_per_s=40.0)
    a = _with(a, e2e_interactivity_p90_tokens_per_s=50.0)
    c = compare_reports(a, fewer)
    keys = [r.key for r in c.rows]
    assert "e2e_interactivity_p90_tokens_per_s" in keys and "e2e_interactivity_p75_tokens_per_s" in keys
    assert "total_tokens_per_s_per_gpu_at_90_decode" in keys and "agents_per_gpu_at_50" in keys
    assert c.gate == "tiers"
    # The agents are shown, never gated (no interval: two runs of one configuration would flap).
    agents = next(r for r in c.rows if r.key == "agents_per_gpu_at_50")
    assert not agents.gated and agents.ratio is not None and abs(agents.ratio - 0.8) < 1e-9
    assert c.regressions == ()
    text = render_comparison(c, a_name="a.json", b_name="b.json")
    assert "or, with _decode after T, on decode interactivity" in text


def test_an_older_sweep_compares_its_decode_tiers_with_the_decode_reads() -> None:
    new = sweep_report()
    data = new.model_dump()
    old: dict[str, Any] = {
        k: v for k, v in data.items() if not parse_tier_key(k) and k not in ("tiers", "frontier_axis")
    }
    old = {k: v for k, v in old.items() if not k.startswith("e2e_interactivity")}
    for tier in ("50", "90"):  # an older report: its tiers, on decode, without a suffix
        old[f"total_tokens_per_s_per_gpu_at_{tier}"] = data[f"total_tokens_per_s_per_gpu_at_{tier}_decode"]
    c = compare_reports(Report.model_validate(old), new)
    assert c.decode_only == (True, False)
    rows = {r.key: r for r in c.rows}
    assert rows["total_tokens_per_s_per_gpu_at_90_decode"].ratio == pytest.approx(1.0)
    assert rows["total_tokens_per_s_per_gpu_at_50"].a is None  # no North Star read in the older one: n/a
    assert rows["e2e_interactivity_p90_tokens_per_s"].a is None
    assert not c.regressions
    assert "A is a sweep of before the frontier axis" in render_comparison(c, a_name="a", b_name="b")

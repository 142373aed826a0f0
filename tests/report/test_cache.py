"""Where the prefix went, in the report (docs/metrics.md §4): the client's keys from the run's figures, the
Markdown Cache section with the retention curve as a table and a picture, the CSV columns, the headless
summary, `compare` and `--check 'prefix_evicted_share <= 0.05'`."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from agentx_tui.report import (
    HeadlessPrinter,
    Report,
    evaluate_checks,
    parse_check,
    render_csv,
    write_report,
)
from agentx_tui.report._compare import compare_reports
from agentx_tui.report._retention_charts import bucket_label, position, render_retention_svg
from agentx_tui.snapshot import Figures, PointFigures, RetentionRow, Snapshot, SweepState
from tests.report._snaps import built, stream

CURVE = [
    RetentionRow(idle_s_low=0.0, idle_s_high=1.0, requests=40, reused_tokens=400_000, hit_share=1.0),
    RetentionRow(idle_s_low=2.0, idle_s_high=5.0, requests=30, reused_tokens=300_000, hit_share=0.9),
    RetentionRow(idle_s_low=30.0, idle_s_high=60.0, requests=10, reused_tokens=100_000, hit_share=0.1),
    RetentionRow(idle_s_low=120.0, idle_s_high=None, requests=2, reused_tokens=20_000, hit_share=0.0),
]
SPLIT = Figures(
    prefix_reused_tokens=820_000,
    prefix_evicted_share=0.1585,
    retention_curve=CURVE,
    think_s_p50=3.1,
    think_s_p90=44.0,
)


def with_split(snaps: list[Snapshot], split: Figures = SPLIT) -> list[Snapshot]:
    """The stream with the client's whole-run split on its last tick."""
    last = snaps[-1]
    assert last.client is not None
    client = last.client.model_copy(update={"run": last.client.run.updated(**split.set_values())})
    return [*snaps[:-1], last.model_copy(update={"client": client})]


def test_the_keys_come_from_the_clients_run_figures_and_are_null_when_observing_only() -> None:
    report = built(with_split(stream()))
    assert report.prefix_evicted_share == 0.1585 and report.prefix_reused_tokens == 820_000
    assert report.think_s_p50 == 3.1 and report.think_s_p90 == 44.0
    assert report.retention_curve == CURVE
    observing = built(stream(with_client=False)).model_dump()
    for key in ("prefix_reused_tokens", "prefix_evicted_share", "retention_curve", "think_s_p50", "think_s_p90"):
        assert key in observing and observing[key] is None, key  # null, never 0


def test_markdown_has_a_cache_section_with_the_curve_and_writes_its_picture(tmp_path: Path) -> None:
    path = tmp_path / "run.md"
    write_report(path, built(with_split(stream())))
    text = path.read_text()
    section = text.split("## Cache", 1)[1].split("\n## ", 1)[0]
    assert (
        "| Σ evicted ÷ Σ reused: reused prompt tokens the server no longer had cached | prefix_evicted_share |"
        in section
    )
    assert "![Retention curve: the hit share of reused tokens against the idle time](run.retention.svg)" in section
    assert "| 0–1 | 40 | 400K | 100.0% |" in section and "| > 120 | 2 | 20K | 0.0% |" in section
    picture = (tmp_path / "run.retention.svg").read_text()
    assert picture.startswith("<svg") and ">&gt; 120</text>" in picture and "think p90 44 s" in picture
    assert picture.count("<rect ") == 1 + 4  # the background, a bar for each bucket with calls (0%: a sliver)
    write_report(path, built(with_split(stream())))
    assert (tmp_path / "run.retention.svg").read_text() == picture  # deterministic


def test_each_sweep_point_shows_its_evicted_share_in_the_markdown_points_table(tmp_path: Path) -> None:
    points = (
        PointFigures(index=0, users=4, warmup_s=5.0, duration_s=60.0, window_start_s=5.0, prefix_evicted_share=0.02),
        PointFigures(index=1, users=32, warmup_s=5.0, duration_s=60.0, window_start_s=70.0),  # no reuse measured: n/a
    )
    snaps = stream()
    snaps[-1] = snaps[-1].model_copy(update={"sweep": SweepState(points=points, frontier=(0, 1))})
    path = tmp_path / "sweep.md"
    write_report(path, built(snaps))
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| point | users | client hit |"))
    head, _, first, second = (line.split(" | ") for line in lines[at : at + 4])
    column = head.index("evicted")
    assert head[column - 1] == "client hit"
    assert (first[column], second[column]) == ("2.0%", "n/a")


def test_markdown_says_why_the_shares_are_unknown(tmp_path: Path) -> None:
    path = tmp_path / "run.md"
    unknown = Figures(prefix_reused_tokens=1000, retention_curve=None, think_s_p50=1.0, think_s_p90=2.0)
    write_report(path, built(with_split(stream(), unknown)))
    text = path.read_text()
    assert "the server reported no cached tokens per request (vLLM: `--enable-prompt-tokens-details`)" in text
    assert not (tmp_path / "run.retention.svg").exists()
    write_report(path, built(stream(with_client=False)))
    assert "No split of the prompts" in path.read_text()


def test_the_picture_places_the_think_times_inside_their_buckets() -> None:
    assert bucket_label(2.0) == "2–5" and bucket_label(120.0) == "> 120"
    assert position(0.0) == -0.5 and position(3.5) == pytest.approx(2.0)  # the middle of 2–5 s
    assert position(45.0) == pytest.approx(5.0) and position(10_000.0) == 7.5
    empty = render_retention_svg(Report())
    assert "no call after an idle time" in empty


def test_csv_flattens_the_curve() -> None:
    (row,) = csv.DictReader(io.StringIO(render_csv(built(with_split(stream())))))
    assert row["prefix_evicted_share"] == "0.1585" and row["retention_curve[1].idle_s_low"] == "2.0"
    assert row["retention_curve[3].idle_s_high"] == "" and row["retention_curve[2].hit_share"] == "0.1"


def test_the_summary_prints_the_split_and_the_curve_in_words() -> None:
    out = io.StringIO()
    HeadlessPrinter(out).summary(built(with_split(stream())), [])
    text = out.getvalue()
    assert "  prefix_evicted_share" in text and "0.1585 fraction 0–1" in text
    assert "  think_s_p90" in text
    lines = text.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("  retention"))
    assert lines[at + 1] == "    0-1s 100.0%, 2-5s 90.0%, 30-60s 10.0%, >120s 0.0%"
    assert all(len(x) <= 79 for x in lines[at : at + 2])
    quiet = io.StringIO()
    HeadlessPrinter(quiet).summary(built(stream()), [])
    assert "retention" not in quiet.getvalue()


BASE: dict[str, Any] = {"agentx_version": "0.1.0", "duration_s": 300.0, "total_tokens_per_s": 12000.0}


def test_compare_shows_the_evicted_share_and_think_times_without_gating() -> None:
    a = Report.model_validate({**BASE, "prefix_evicted_share": 0.02, "think_s_p50": 3.0, "think_s_p90": 40.0})
    b = Report.model_validate({**BASE, "prefix_evicted_share": 0.2, "think_s_p50": 3.0, "think_s_p90": 40.0})
    comparison = compare_reports(a, b)
    rows = {r.key: r for r in comparison.headline}
    assert rows["prefix_evicted_share"].ratio == pytest.approx(10.0) and not rows["prefix_evicted_share"].gated
    assert "think_s_p90" in rows and not comparison.regressions
    assert "retention_curve" not in rows  # the curve is a picture, not a row


def test_a_check_on_the_evicted_share() -> None:
    checks = [parse_check("prefix_evicted_share <= 0.05"), parse_check("prefix_evicted_share <= 0.2")]
    assert [c.passed for c in evaluate_checks(checks, built(with_split(stream())))] == [False, True]
    # Unknown (no cached tokens, observing only): the check fails, as for any other key.
    assert [c.value for c in evaluate_checks(checks, built(stream(with_client=False)))] == [None, None]

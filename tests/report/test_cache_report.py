"""The servers' cache figures in the report (docs/metrics.md, "Cache"): prompt tokens by source over the
run, offload traffic and KV residency from the run totals' increase; null where the servers export
nothing; the Markdown's "Cache" section with its picture; `--check` and `compare` name them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentx_tui.report import NUMERIC_KEYS, Report, evaluate_checks, parse_check, write_report
from agentx_tui.report._cache_charts import render_sources_svg
from agentx_tui.report._compare import HEADLINE, compare_reports
from agentx_tui.snapshot import BucketCounts, EndpointTotals, PointFigures, Snapshot

from ._snaps import stream
from .test_builder import build
from .test_charts import sweep_report

IDLE = BucketCounts(bounds=(1.0, 10.0, 60.0), counts=(0.0, 40.0, 80.0, 80.0))  # 40 in (1, 10], 40 in (10, 60]


def _with_cache(snaps: list[Snapshot]) -> list[Snapshot]:
    """The stream's last tick, its aggregate's totals given the cache counters (the first tick's are 0):
    over its 8 s, 6000 prompt tokens, 3000 computed, 2000 from the GPU cache, 1000 offloaded; 8 GB
    loaded and 2 GB stored."""
    last = snaps[-1]
    assert last.aggregate is not None
    totals = last.aggregate.totals.model_copy(
        update={
            "prompt_tokens_computed": 3000.0,
            "prompt_tokens_gpu_cache": 2000.0,
            "prompt_tokens_offload": 1000.0,
            "kv_offload_load_bytes": 8e9,
            "kv_offload_store_bytes": 2e9,
            "kv_block_idle_before_evict": IDLE,
            "kv_block_reuse_gap": BucketCounts(bounds=(1.0,), counts=(0.0, 0.0)),
        }
    )
    agg = last.aggregate.model_copy(
        update={"totals": totals, "kv_offload_cpu": True, "kv_offload_cpu_bytes": 500e9, "kv_cache_metrics_sample": 0.1}
    )
    return [*snaps[:-1], last.model_copy(update={"aggregate": agg})]


def test_the_run_figures_come_from_the_totals_increase() -> None:
    r = build(_with_cache(stream()))
    assert (r["prompt_share_computed"], r["prompt_share_gpu_cache"], r["prompt_share_offload"]) == pytest.approx(
        (0.5, 1 / 3, 1 / 6)
    )
    assert r["kv_offload_load_gb_per_s"] == pytest.approx(1.0)  # 8 GB over the run's 8 s
    assert r["kv_offload_store_gb_per_s"] == pytest.approx(0.25)
    # Idle before eviction: rank 40 of 80 ends the (1, 10] bucket; rank 72 is 32/40 into (10, 60].
    assert r["kv_block_idle_before_evict_p50_s"] == pytest.approx(10.0)
    assert r["kv_block_idle_before_evict_p90_s"] == pytest.approx(10 + 50 * 32 / 40)
    assert r["kv_block_reuse_gap_p50_s"] is None  # no gap observed: unknown, not 0
    assert (r["kv_offload_cpu"], r["kv_offload_cpu_bytes"], r["kv_cache_metrics_sample"]) == (True, 500e9, 0.1)


def test_a_server_without_the_counters_leaves_every_cache_figure_null() -> None:
    r = build(stream())
    for key in ("prompt_share_offload", "kv_offload_load_gb_per_s", "kv_block_idle_before_evict_p50_s"):
        assert r[key] is None, key
    assert r["kv_offload_cpu"] is None


def test_checks_and_compare_name_the_cache_figures() -> None:
    assert {"prompt_share_offload", "kv_offload_load_gb_per_s", "kv_block_reuse_gap_p50_s"} <= set(NUMERIC_KEYS)
    report = Report.read(build(_with_cache(stream())))
    (result,) = evaluate_checks([parse_check("prompt_share_computed <= 0.4")], report)
    assert not result.passed and result.shown_value == "0.5"
    shown = {c.key for c in HEADLINE if c.better is None}
    assert {"prompt_share_computed", "prompt_share_gpu_cache", "prompt_share_offload"} <= shown
    rows = {row.key: row for row in compare_reports(Report.read(build(stream())), report).headline}
    assert rows["prompt_share_offload"].b == pytest.approx(1 / 6) and rows["prompt_share_offload"].a is None


def test_the_markdown_has_a_cache_section_and_its_picture(tmp_path: Path) -> None:
    path = tmp_path / "run.md"
    write_report(path, Report.read(build(_with_cache(stream()))))
    text = path.read_text()
    section = text.split("## Cache\n", 1)[1].split("\n## ", 1)[0]
    assert "| prompt_share_offload | 0.166667 | fraction 0–1 |" in section
    assert "![Prompt tokens by source" in section and "(run.sources.svg)" in section
    svg = (tmp_path / "run.sources.svg").read_text()
    assert svg == render_sources_svg(Report.read(build(_with_cache(stream()))))  # deterministic
    # Without the counters: the section says so, and no picture is written.
    write_report(tmp_path / "plain.md", Report.read(build(stream())))
    assert "they do not export it" in (tmp_path / "plain.md").read_text()
    assert not (tmp_path / "plain.sources.svg").exists()


def _widths(svg: str) -> list[float]:
    return [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)" height="26"', svg)]


def test_the_picture_has_one_bar_for_the_run_and_one_per_point_each_summing_to_its_width() -> None:
    base = Report.read(sweep_report())
    points = [
        p.updated(prompt_share_computed=c, prompt_share_gpu_cache=1 - c - 0.1, prompt_share_offload=0.1)
        for p, c in zip(
            (p for p in base.points or () if isinstance(p, PointFigures)), (0.2, 0.3, 0.5, 0.6), strict=False
        )
    ]
    report = base.model_copy(update={"points": points}).updated(
        prompt_share_computed=0.4, prompt_share_gpu_cache=0.5, prompt_share_offload=0.1
    )
    svg = render_sources_svg(report)
    widths = _widths(svg)
    assert len(widths) == 3 * (1 + len(points))  # every share above 0 is a segment
    span = 830.0 - 150.0
    for bar in range(1 + len(points)):
        assert sum(widths[3 * bar : 3 * bar + 3]) == pytest.approx(span, abs=0.01)
    assert widths[:3] == pytest.approx([0.4 * span, 0.5 * span, 0.1 * span], abs=0.01)
    assert "whole run" in svg and f"{points[0].users} users" in svg


def test_a_report_of_an_older_run_draws_a_picture_that_says_why_it_is_empty() -> None:
    svg = render_sources_svg(Report())
    assert "not exported by the servers" in svg and _widths(svg) == []
    assert EndpointTotals().prompt_tokens_offload is None

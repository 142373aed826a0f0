"""A tier sweep's probes and every sweep's GPU time in the report (docs/sweeps.md, "A tier sweep"): apart
from the points in the JSON, a table of their own in the Markdown, listed in the summary, hollow squares on
the frontier picture; and the points' steadiness."""

from __future__ import annotations

import json

from agentx_tui.report import Report, render_markdown
from agentx_tui.report._charts import render_frontier_svg
from agentx_tui.report._headless import gpu_time_lines, measured_lines, probe_lines
from agentx_tui.snapshot import ProbeRow
from tests.report.test_charts import sweep_report

DRIFTING = "--warmup 120 s reached, p90 r_i still drifting (truncated at the first half's end: 12 of 24 batches)"


def tier_sweep() -> Report:
    data = sweep_report()
    data["points"][-1] |= {"steady": False, "steady_reason": DRIFTING}
    for point in data["points"][:-1]:
        point |= {"steady": True, "steady_reason": "steady after 25 s: …"}
    probes = [
        ProbeRow(
            index=1, users=8, purpose="bracketing tiers 30 50 75 100", tiers=(30.0, 50.0, 75.0, 100.0), warmup_s=25.0,
            duration_s=30.0, window_start_s=25.0, requests=120, e2e_interactivity_p90_tokens_per_s=150.0,
            interactivity_p90_tokens_per_s=161.0, total_tokens_per_s=5500.0, total_tokens_per_s_per_gpu=5500.0,
            steady=True,
        ),
        ProbeRow(
            index=2, users=48, purpose="tier 75", tiers=(75.0,), warmup_s=41.0, duration_s=30.0,
            window_start_s=140.0, requests=300, e2e_interactivity_p90_tokens_per_s=88.0,
            interactivity_p90_tokens_per_s=91.0, total_tokens_per_s_per_gpu=22_000.0, steady=False,
        ),
    ]  # fmt: skip
    data |= {"probes": [p.model_dump() for p in probes], "sweep_gpu_seconds": 5400.0, "sweep_join": "midway"}
    return Report.read(json.loads(json.dumps(data)))


def test_probes_are_a_list_apart_from_the_points_read_back_as_written() -> None:
    report = tier_sweep()
    assert [type(p) for p in report.probes or ()] == [ProbeRow, ProbeRow]
    dumped = report.model_dump()
    assert [p["users"] for p in dumped["probes"]] == [8, 48] and dumped["sweep_gpu_seconds"] == 5400.0
    assert all("purpose" not in p for p in dumped["points"])
    assert Report.read(json.loads(json.dumps(dumped))).model_dump() == dumped


def test_the_markdown_has_a_table_of_probes_the_gpu_time_and_how_each_window_opened() -> None:
    text = render_markdown(tier_sweep())
    assert "The probes (`probes`): short windows" in text
    assert "| 1 | 8 | bracketing tiers 30 50 75 100 | 25 | 30 | 120 | 150 | 161 | 5.5K | true |" in text
    assert "| 2 | 48 | tier 75 | 41 | 30 | 300 | 88 | 91 | 22K | false |" in text
    assert "(`sweep_gpu_seconds`, its wall time × GPUs, probes and warm-ups included): 5,400 GPU·s (1.50 GPU·h)" in text
    assert "every user had 10 requests done, or at `--warmup`" in text and "after 20 s of warm-up." in text
    assert f"Not steady when its window opened:\n\n- point 12 (256 users), after 20 s: {DRIFTING}\n" in text
    assert "Users (`sweep_join` midway" in text and "a step drawn at random, its earlier steps built unsent." in text
    assert "Users (`sweep_join`" not in render_markdown(Report.read({**tier_sweep().model_dump(), "sweep_join": None}))


def test_the_summary_lists_the_probes_the_gpu_time_and_the_points_that_never_settled() -> None:
    report = tier_sweep()
    lines = probe_lines(report)
    assert lines[0] == "  probes (short windows that found where the tiers cross; not points):"
    assert lines[2].split()[:2] == ["8", "bracketing"] and lines[3].split()[:3] == ["48", "tier", "75"]
    assert gpu_time_lines(report) == ["  sweep GPU time: 5,400 GPU·s (1.50 GPU·h), probes and warm-ups included"]
    assert any(line.startswith("  not steady: 256 users") for line in measured_lines(report))
    no_count = Report.read({**tier_sweep().model_dump(), "sweep_gpu_seconds": None})
    assert gpu_time_lines(no_count) == ["  sweep GPU time: n/a (no GPU count)"]


def test_the_frontier_picture_draws_the_probes_as_hollow_squares_apart_from_the_points() -> None:
    svg = render_frontier_svg(tier_sweep())
    assert svg.count("<rect ") == 1 + 2 + 1  # the background, two probes, the legend's
    assert "probe: a short window that found where the tiers cross (not a point)" in svg
    assert "<rect " not in render_frontier_svg(Report.read(sweep_report())).replace("<rect width", "", 1)

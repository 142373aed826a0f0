"""Agents, not requests, in the report (docs/metrics.md, "Tasks"): the task keys, the Markdown section
and its pictures, the CSV columns, the headless summary, `compare` and `--check`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from agentx_tui.measure.tasks import TaskBook
from agentx_tui.report import (
    HeadlessPrinter,
    Report,
    evaluate_checks,
    parse_check,
    render_csv,
    unit,
    write_report,
)
from agentx_tui.report._compare import compare_reports
from agentx_tui.report._compare_cli import compare_main
from agentx_tui.report._compare_text import render_comparison
from agentx_tui.snapshot import PointFigures, Snapshot, StepRow, SweepState, TaskReading
from tests.report._snaps import built, stream

TASK_KEYS = (
    "tasks_completed",
    "tasks_running",
    "tasks_failed",
    "task_s_p50",
    "task_s_p90",
    "task_model_share",
    "steps_per_task_mean",
    "tokens_per_task_mean",
    "output_tokens_per_task_mean",
    "usd_per_task",
    "tasks_per_hour_per_gpu",
    "step_curve",
)
TASKS = TaskReading(
    tasks_completed=12,
    tasks_running=3,
    tasks_failed=1,
    task_s_p50=40.0,
    task_s_p90=95.0,
    task_model_share=0.62,
    steps_per_task_mean=14.5,
    tokens_per_task_mean=250_000.0,
    output_tokens_per_task_mean=4_000.0,
    usd_per_task=0.021,
    tasks_per_hour_per_gpu=36.0,
    step_curve=(
        StepRow(step=1, step_last=1, requests=12, context_tokens_mean=2_000.0, ttft_p50_s=0.2, ttft_p90_s=0.4),
        StepRow(step=2, step_last=2, requests=12, context_tokens_mean=6_000.0, e2e_p50_s=3.0, e2e_p90_s=5.0),
        StepRow(step=9, step_last=16, requests=40, context_tokens_mean=30_000.0, ttft_p90_s=1.1, e2e_p90_s=9.0),
    ),
    task_s_histogram=((50.0, 7), (200.0, 5)),
)


def with_tasks(snaps: list[Snapshot], tasks: TaskReading) -> list[Snapshot]:
    """The stream with `tasks` on its last tick (the report reads the last tick's whole-run figures)."""
    return [*snaps[:-1], snaps[-1].model_copy(update={"tasks": tasks})]


# --- the report's keys ------------------------------------------------------------------------------


def test_every_task_key_is_there_and_null_when_observing_only() -> None:
    report = built(stream(with_client=False)).model_dump()
    for key in TASK_KEYS:
        assert key in report and report[key] is None, key
    assert report["task_s_histogram"] is None


def test_the_task_figures_are_the_last_ticks_whole_run_ones() -> None:
    report = built(with_tasks(stream(), TASKS)).model_dump()
    for key in TASK_KEYS[:-1]:
        assert report[key] == getattr(TASKS, key), key
    assert [row["step"] for row in report["step_curve"]] == [1, 2, 9]
    assert report["step_curve"][2] == {
        "step": 9,
        "step_last": 16,
        "requests": 40,
        "context_tokens_mean": 30_000.0,
        "ttft_p50_s": None,
        "ttft_p90_s": 1.1,
        "e2e_p50_s": None,
        "e2e_p90_s": 9.0,
    }
    assert report["task_s_histogram"] == [{"upper_s": 50.0, "tasks": 7}, {"upper_s": 200.0, "tasks": 5}]
    # Read back from its JSON, the report is the same.
    assert Report.model_validate(json.loads(json.dumps(report))).model_dump() == report


@pytest.mark.parametrize(
    ("walls", "p50", "p90"),
    [
        # Linear between the closest ranks (numpy's default), worked by hand: h = q × (n − 1).
        # Six proxied tasks: h = 2.5 → 4.59 + 0.5 × 2.94 = 6.06; h = 4.5 → 7.93 + 0.5 × 1.43 = 8.645.
        ([3.53, 4.30, 4.59, 7.53, 7.93, 9.36], 6.06, 8.645),
        # 3 5 7 9 12 18 25 60: h = 3.5 → 9 + 0.5 × 3 = 10.5; h = 6.3 → 25 + 0.3 × 35 = 35.5.
        ([60.0, 3.0, 12.0, 25.0, 5.0, 18.0, 9.0, 7.0], 10.5, 35.5),
        ([42.0], 42.0, 42.0),
    ],
)
def test_the_reports_task_percentiles_are_linear_over_the_exact_task_times(
    walls: list[float], p50: float, p90: float
) -> None:
    book = TaskBook(started_at=0.0)
    for tree, wall in enumerate(walls):
        book.call_ended(tree, 1, 1.0, 1.0 + wall, 100, 10, 0.1, True)
        book.tree_ended(tree)
    report = built(with_tasks(stream(), book.figures(now=100.0)))
    assert report.task_s_p50 == pytest.approx(p50, abs=1e-9)
    assert report.task_s_p90 == pytest.approx(p90, abs=1e-9)


def test_an_older_report_without_the_task_keys_reads_back_as_it_was() -> None:
    old = {"agentx_version": "0.1.0", "duration_s": 60.0, "total_tokens_per_s": 100.0}
    report = Report.model_validate(old)
    assert report.model_dump() == old and report.tasks_completed is None and not report.has("step_curve")


def test_sweep_points_carry_their_task_figures() -> None:
    point = PointFigures(
        index=0,
        users=4,
        warmup_s=5.0,
        duration_s=60.0,
        window_start_s=5.0,
        tasks_completed=6,
        tasks_failed=0,
        task_s_p50=20.0,
        task_s_p90=45.0,
        usd_per_task=0.01,
        tasks_per_hour_per_gpu=180.0,
    )
    snaps = stream()
    snaps[-1] = snaps[-1].model_copy(update={"sweep": SweepState(points=(point,), frontier=(0,))})
    report = built(snaps).model_dump()
    first = report["points"][0]
    point_keys = ("tasks_completed", "tasks_failed", "task_s_p50", "task_s_p90", "usd_per_task")
    point_keys += ("tasks_per_hour_per_gpu",)
    for key in point_keys:
        assert first[key] == getattr(point, key), key
    # …and the CSV's point row has them too.
    rows = list(csv.DictReader(io.StringIO(render_csv(built(snaps)))))
    assert rows[1]["row"] == "point 1" and rows[1]["usd_per_task"] == "0.01" and rows[1]["tasks_completed"] == "6"


def test_units() -> None:
    assert unit("task_s_p90") == "s"
    assert unit("usd_per_task") == "USD/task"
    assert unit("tasks_per_hour_per_gpu") == "tasks/hour/GPU"
    assert unit("task_model_share") == "fraction 0–1"
    assert unit("step_curve") == ""


# --- the writers ------------------------------------------------------------------------------------


def test_markdown_has_a_tasks_section_and_writes_the_two_pictures(tmp_path: Path) -> None:
    path = tmp_path / "run.md"
    write_report(path, built(with_tasks(stream(), TASKS)))
    text = path.read_text()
    section = text.split("## Tasks", 1)[1].split("\n## ", 1)[0]
    assert "| USD per task | usd_per_task | 0.021 | USD/task |" in section
    assert "| task wall time p90 | task_s_p90 | 95 | s |" in section
    assert "![Step curve: TTFT, E2E and context against the step](run.steps.svg)" in section
    assert "![Task time: the completed tasks' wall times](run.task_time.svg)" in section
    assert "| 9–16 | 40 | 30K | n/a | 1.1 | n/a | 9 |" in section
    steps, times = (tmp_path / "run.steps.svg").read_text(), (tmp_path / "run.task_time.svg").read_text()
    assert steps.startswith("<svg") and ">9–16</text>" in steps and ">mean context</text>" in steps
    # Bars from 50 s to 200 s: the empty 100 s edge between them is drawn as an empty bar.
    assert times.count("<rect ") == 1 + 2 and ">20–50</text>" in times and ">50–100</text>" in times
    assert ">100–200</text>" in times and "p90 95 s" in times
    # Deterministic: the same report gives the same pictures.
    write_report(path, built(with_tasks(stream(), TASKS)))
    assert (tmp_path / "run.steps.svg").read_text() == steps
    # No sweep here: no frontier picture.
    assert not (tmp_path / "run.frontier.svg").exists()


def test_markdown_says_in_words_when_no_task_completed(tmp_path: Path) -> None:
    path = tmp_path / "run.md"
    write_report(path, built(with_tasks(stream(), TaskReading(tasks_running=4, tasks_failed=1))))
    text = path.read_text()
    assert "No task completed during the run (4 still running at its end, 1 failed)" in text
    assert not (tmp_path / "run.steps.svg").exists() and not (tmp_path / "run.task_time.svg").exists()
    write_report(path, built(stream(with_client=False)))
    assert "No task figures: the run sent no calls of its own (observing only)." in path.read_text()


def test_csv_has_the_task_columns_and_the_step_curve_flattened() -> None:
    rows = list(csv.DictReader(io.StringIO(render_csv(built(with_tasks(stream(), TASKS))))))
    assert len(rows) == 1
    run = rows[0]
    assert run["tasks_completed"] == "12" and run["usd_per_task"] == "0.021"
    assert run["step_curve[0].step"] == "1" and run["step_curve[2].step_last"] == "16"
    assert run["step_curve[2].ttft_p90_s"] == "1.1" and run["step_curve[1].ttft_p50_s"] == ""
    assert run["task_s_histogram[1].upper_s"] == "200.0" and run["task_s_histogram[1].tasks"] == "5"


# --- the headless summary ---------------------------------------------------------------------------


def summary(report: Report) -> str:
    out = io.StringIO()
    HeadlessPrinter(out).summary(report, [])
    return out.getvalue()


def test_the_summary_prints_the_task_figures() -> None:
    text = summary(built(with_tasks(stream(), TASKS)))
    assert "  tasks: 12 completed, 3 still running, 1 failed\n" in text
    assert "    task time p50 40s, p90 95s, 62.0% of it in the model\n" in text
    assert "    per task: 14.5 calls, 250K tokens (4K output)\n" in text
    assert "    0.021 USD per task, 36 tasks/hour/GPU\n" in text


def test_the_summary_says_when_no_task_completed_and_nothing_when_observing_only() -> None:
    text = summary(built(with_tasks(stream(), TaskReading(tasks_running=2))))
    assert "  tasks: 0 completed, 2 still running, 0 failed\n    no task completed" in text
    assert "tasks:" not in summary(built(stream(with_client=False)))


# --- compare ----------------------------------------------------------------------------------------

BASE: dict[str, Any] = {
    "agentx_version": "0.1.0",
    "duration_s": 300.0,
    "total_tokens_per_s": 12000.0,
    "tasks_completed": 40,
    "task_s_p50": 60.0,
    "task_s_p90": 120.0,
    "task_model_share": 0.5,
    "steps_per_task_mean": 20.0,
    "tokens_per_task_mean": 300_000.0,
    "output_tokens_per_task_mean": 5_000.0,
    "usd_per_task": 0.02,
    "tasks_per_hour_per_gpu": 30.0,
}


def rows(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    comparison = compare_reports(Report.model_validate(a), Report.model_validate(b))
    return {r.key: r for r in comparison.tasks}


def test_compare_gives_task_ratios_and_which_way_is_better() -> None:
    better = {
        **BASE,
        "task_s_p90": 60.0,
        "usd_per_task": 0.01,
        "tasks_per_hour_per_gpu": 60.0,
        "tokens_per_task_mean": 600_000.0,
    }
    r = rows(BASE, better)
    assert r["task_s_p90"].ratio == pytest.approx(0.5) and r["task_s_p90"].worse_by == pytest.approx(-0.5)
    assert r["usd_per_task"].worse_by == pytest.approx(-0.5)
    assert r["tasks_per_hour_per_gpu"].ratio == pytest.approx(2.0)
    assert r["tasks_per_hour_per_gpu"].worse_by == pytest.approx(-1.0)
    # Tokens and steps per task are context: shown with their ratio, never gated.
    context = r["tokens_per_task_mean"]
    assert context.ratio == pytest.approx(2.0) and context.better is None and not context.gated
    for key in ("task_s_p50", "task_s_p90", "usd_per_task", "tasks_per_hour_per_gpu"):
        assert r[key].gated, key
    for key in ("tasks_completed", "task_model_share", "steps_per_task_mean", "output_tokens_per_task_mean"):
        assert not r[key].gated, key


@pytest.mark.parametrize(
    ("key", "value"),
    [("usd_per_task", 0.025), ("task_s_p90", 150.0), ("task_s_p50", 70.0), ("tasks_per_hour_per_gpu", 24.0)],
)
def test_a_worse_task_figure_is_a_regression(tmp_path: Path, key: str, value: float) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(BASE))
    b.write_text(json.dumps({**BASE, key: value}))
    assert compare_main([str(a), str(b)]) == 1
    assert compare_main([str(a), str(b), "--tolerance", "0.3"]) == 0
    comparison = compare_reports(Report.model_validate(BASE), Report.model_validate({**BASE, key: value}))
    assert [r.key for r in comparison.regressions] == [key]


def test_more_tokens_per_task_is_no_regression_and_the_table_says_intervals_are_n_a() -> None:
    a, b = Report.model_validate(BASE), Report.model_validate({**BASE, "tokens_per_task_mean": 900_000.0})
    comparison = compare_reports(a, b)
    assert not comparison.regressions
    text = render_comparison(comparison, a_name="a.json", b_name="b.json")
    assert "Tasks (per session tree, over the whole run; no 95% interval yet: n/a)" in text
    line = next(x for x in text.splitlines() if x.startswith("tokens_per_task_mean"))
    assert line.split()[-1] == "3.000"  # B/A, no verdict: context
    assert "lower for task time and USD per task" in text


def test_reports_without_task_keys_give_no_task_rows() -> None:
    old = {"agentx_version": "0.1.0", "duration_s": 300.0, "total_tokens_per_s": 12000.0}
    comparison = compare_reports(Report.model_validate(old), Report.model_validate(old))
    assert comparison.tasks == ()
    assert "Tasks (" not in render_comparison(comparison, a_name="a", b_name="b")


def test_an_observe_only_side_leaves_the_task_figures_n_a_and_ungated() -> None:
    observe = {**BASE, **dict.fromkeys(BASE.keys() - {"agentx_version", "duration_s", "total_tokens_per_s"})}
    comparison = compare_reports(Report.model_validate(BASE), Report.model_validate(observe))
    assert not comparison.regressions
    assert "usd_per_task" in render_comparison(comparison, a_name="a", b_name="b").split("Not gated, null", 1)[1]


# --- --check ----------------------------------------------------------------------------------------


def test_checks_on_the_task_figures() -> None:
    report = built(with_tasks(stream(), TASKS))
    checks = [parse_check("usd_per_task <= 0.05"), parse_check("task_s_p90 <= 600"), parse_check("task_s_p90 <= 60")]
    assert [c.passed for c in evaluate_checks(checks, report)] == [True, True, False]
    # Unknown (observing only, or no task completed): the check fails, as for any other key.
    for unknown in (built(stream(with_client=False)), built(with_tasks(stream(), TaskReading()))):
        results = evaluate_checks(checks[:2], unknown)
        assert [(c.value, c.passed) for c in results] == [(None, False), (None, False)]


def test_step_curve_is_not_a_figure_a_check_may_name() -> None:
    from agentx_tui.errors import UsageError

    with pytest.raises(UsageError, match="not a numeric report figure"):
        parse_check("step_curve >= 1")


def test_two_sweeps_show_their_task_figures_without_gating_them() -> None:
    tiers = {"total_tokens_per_s_per_gpu_at_100": 9000.0}
    a = {**BASE, "points": [{"users": 1}], "frontier": [0], **tiers}
    b = {**a, "usd_per_task": 0.04}
    comparison = compare_reports(Report.model_validate(a), Report.model_validate(b))
    assert comparison.gate == "tiers" and not comparison.regressions
    assert not any(r.gated for r in comparison.tasks)
    assert "no 95% interval yet: n/a): shown, not gated" in render_comparison(comparison, a_name="a", b_name="b")


def test_the_markdown_points_table_has_each_points_tasks(tmp_path: Path) -> None:
    point = PointFigures(index=0, users=4, warmup_s=5.0, duration_s=60.0, window_start_s=5.0, tasks_completed=6)
    snaps = stream()
    snaps[-1] = snaps[-1].model_copy(update={"sweep": SweepState(points=(point,), frontier=(0,))})
    path = tmp_path / "sweep.md"
    write_report(path, built(snaps))
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| point | users | client hit |"))
    head, row = ([text.strip() for text in lines[n].strip("|").split("|")] for n in (at, at + 2))
    assert head.index("USD/task") == head.index("tasks") + 1  # the task figures declared for it, in their order
    assert row[head.index("tasks")] == "6"

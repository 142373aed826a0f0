"""Agents, not requests, end to end on the built-in simulated engine (docs/metrics.md, "Tasks"): a short
headless run whose chat sessions complete within it reports task figures that agree with its own
totals, checks on them pass, and the summary prints them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def test_a_headless_run_reports_its_tasks(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    run = subprocess.run(
        [sys.executable, "-m", "agentx_tui", "--sim", "-w", "chat", "--scale", "0.2", "--max-think", "0",
         "-u", "4", "--seed", "3", "--headless", "--duration", "8", "--report", str(report),
         "--check", "usd_per_task <= 0.05", "--check", "task_s_p90 <= 600"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "PASS usd_per_task <= 0.05" in run.stdout and "PASS task_s_p90 <= 600" in run.stdout
    assert " completed, " in run.stdout and " USD per task, " in run.stdout

    r = json.loads(report.read_text())
    done = r["tasks_completed"]
    assert done > 0 and r["tasks_failed"] == 0
    assert 0 < r["task_s_p50"] <= r["task_s_p90"] <= r["duration_s"]
    assert 0 < r["task_model_share"] <= 1
    assert r["steps_per_task_mean"] >= 1
    # USD per task is tokens per task at the run's tokens per dollar.
    assert r["usd_per_task"] * r["tokens_per_dollar_total"] == pytest.approx(r["tokens_per_task_mean"], rel=0.01)
    # The completed tasks' tokens are part of the run's.
    assert r["tokens_per_task_mean"] * done <= r["prompt_tokens"] + r["output_tokens"]
    assert r["output_tokens_per_task_mean"] * done <= r["output_tokens"]
    assert r["tasks_per_hour_per_gpu"] > 0
    # The step curve: rising steps, every row with calls, the context growing along a chat.
    curve = r["step_curve"]
    steps = [row["step"] for row in curve]
    assert steps[0] == 1 and steps == sorted(set(steps)) and len(steps) >= 2
    assert all(row["requests"] > 0 and row["step_last"] >= row["step"] for row in curve)
    assert curve[-1]["context_tokens_mean"] > curve[0]["context_tokens_mean"]
    assert sum(bar["tasks"] for bar in r["task_s_histogram"]) == done

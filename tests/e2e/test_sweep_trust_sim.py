"""Trust on the built-in simulated engine, end to end (docs/sweeps.md): a sweep with --precision writes
a 95% interval for every point and tier and ends a point early, saying why; `compare` calls two runs
of the same configuration within noise (exit 0) and the same sweep on a slower GPU a regression
(exit 1), naming the tiers with both intervals.

Three short sweeps run side by side (the same configuration twice on an H200 profile, once on an H100
profile), about 40 s in all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.long]

FAST, SLOW = "h200/llama-3.1-8b", "h100/llama-3.1-8b"
# Inside both profiles' measured range (p90 interactivity ~60–127 tok/s/user on the H200 profile,
# ~46–100 on the H100 one, from 4 to 32 users): every tier is read on both sides.
TIERS = "70,80,90"


def _workload(folder: Path) -> Path:
    # Short steps of varied lengths: a point sees a hundred requests of a dozen trees in a few seconds.
    # (Lengths that never vary make every user slot alike: intervals then fall back to batch means,
    # wide on windows this short; sweep/intervals.py TOO_ALIKE.)
    path = folder / "quick.yaml"
    path.write_text(
        "shared_prefix_tokens: 2000\n"
        "unique_prefix_tokens: {dist: uniform, min: 100, max: 300}\n"
        "first_message_tokens: {dist: uniform, min: 50, max: 150}\n"
        "steps: {dist: uniform, min: 20, max: 60}\n"
        "output_tokens: {dist: lognormal, mean: 60, std: 30, min: 10, max: 200}\n"
        "tool_result_tokens: {dist: uniform, min: 100, max: 500}\n"
        "tool_latency_s: {dist: uniform, min: 0.1, max: 0.4}\n"
    )
    return path


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("trust")
    workload = _workload(folder)
    runs = {}
    for name, profile in (("a", FAST), ("a2", FAST), ("slow", SLOW)):
        report = folder / f"{name}.json"
        cmd = [
            sys.executable, "-m", "agentx_tui", "--sim", profile, "--sweep", "users=4,12,32", "--warmup", "3",
            "--point-duration", "12", "--precision", "0.15", "--tiers", TIERS, "-w", str(workload),
            "--headless", "--report", str(report),
            "--join", "start",  # joined midway, new users' cold prompts would fill 3-s warm-ups and 12-s windows
        ]  # fmt: skip
        runs[name] = (report, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for report, proc in runs.values():
        out, _ = proc.communicate(timeout=240)
        assert proc.returncode == 0, out[-2000:]
        assert report.exists(), out[-2000:]
    return {name: report for name, (report, _) in runs.items()}


def _within(low: Any, value: Any, high: Any) -> bool:
    return low is not None and value is not None and high is not None and low <= value <= high


def test_a_precision_sweep_writes_intervals_and_ends_points_early(reports: dict[str, Path]) -> None:
    data = json.loads(reports["a"].read_text())
    assert data["precision"] == 0.15
    points = data["points"]
    assert [p["users"] for p in points] == [4, 12, 32]
    for p in points:
        assert _within(
            p["total_tokens_per_s_per_gpu_ci_low"],
            p["total_tokens_per_s_per_gpu"],
            p["total_tokens_per_s_per_gpu_ci_high"],
        ), p
        assert _within(
            p["interactivity_p90_tokens_per_s_ci_low"],
            p["interactivity_p90_tokens_per_s"],
            p["interactivity_p90_tokens_per_s_ci_high"],
        ), p
        assert p["ci_method"] and "p90 interactivity: batch means" in p["ci_method"]
        assert p["stop_reason"]
        assert p["duration_s"] <= 12 + 1.5  # ends at the first tick (1 s) past --point-duration
    early = [p for p in points if p["stopped_early"]]
    assert early, [p["stop_reason"] for p in points]
    assert all(p["stop_reason"].startswith("precision ±15% reached: throughput ±") for p in early)
    assert all(p["duration_s"] < 12 for p in early)
    read = [t for t in map(int, TIERS.split(",")) if data[f"total_tokens_per_s_per_gpu_at_{t}"] is not None]
    assert read
    for t in read:
        key = f"total_tokens_per_s_per_gpu_at_{t}"
        if data[f"{key}_ci_low"] is not None:
            assert _within(data[f"{key}_ci_low"], data[key], data[f"{key}_ci_high"])
    assert any(data[f"total_tokens_per_s_per_gpu_at_{t}_ci_low"] is not None for t in read)


def _compare(a: Path, b: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentx_tui", "compare", str(a), str(b)], capture_output=True, text=True, timeout=60
    )


def test_compare_calls_the_same_configuration_within_noise_and_a_slower_gpu_a_regression(
    reports: dict[str, Path],
) -> None:
    same = _compare(reports["a"], reports["a2"])
    assert same.returncode == 0, same.stdout
    assert "within noise" in same.stdout
    slower = _compare(reports["a"], reports["slow"])
    assert slower.returncode == 1, slower.stdout
    verdict = next(line for line in slower.stdout.splitlines() if line.startswith("B regressed beyond"))
    assert "total_tokens_per_s_per_gpu_at_" in verdict
    assert "A " in verdict and "B " in verdict and "[" in verdict  # both intervals, named

"""On the built-in simulated engine, end to end (docs/sweeps.md): a point's window opens once its load is
steady, later where contexts keep growing than on a fixed-shape workload, and a point that never settles
says so; `--sweep tiers` probes before it measures, labels every probe, keeps them out of the points and
the frontier, and every sweep report carries its GPU time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.long]

# One request a session, every length constant: the load is the same from its first seconds.
FIXED = """\
description: fixed shape - one request a session, constant lengths
shared_prefix_tokens: 2000
unique_prefix_tokens: 200
first_message_tokens: 100
steps: 1
output_tokens: 60
tool_result_tokens: 0
tool_latency_s: 0
"""
# Long sessions whose 2,000-token tool results pile up: every request's context longer than the last.
GROWING = """\
description: growing contexts - long sessions whose tool results pile up
shared_prefix_tokens: 2000
unique_prefix_tokens: 200
first_message_tokens: 100
steps: 400
output_tokens: 60
tool_result_tokens: 2000
tool_latency_s: 0.2
"""


def _start(folder: Path, name: str, workload: str, *args: str) -> subprocess.Popen[str]:
    """A headless run on the simulator of `workload` (a file's text; empty: the default, coding-agent)."""
    chosen: tuple[str, ...] = ()
    if workload:
        (folder / f"{name}.yaml").write_text(workload)
        chosen = ("-w", str(folder / f"{name}.yaml"))
    return subprocess.Popen(
        [
            sys.executable, "-m", "agentx_tui", "--sim", *chosen, "--headless",
            "--report", str(folder / f"{name}.json"), "--report", str(folder / f"{name}.md"), *args,
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _finish(folder: Path, name: str, run: subprocess.Popen[str]) -> tuple[dict[str, Any], str]:
    """The sweep's report and what it printed, once it has ended."""
    stdout, stderr = run.communicate(timeout=400)
    report = folder / f"{name}.json"
    assert report.exists(), stderr[-2000:]
    return json.loads(report.read_text()), stdout


def _sweep(folder: Path, name: str, workload: str, *args: str) -> tuple[dict[str, Any], str]:
    return _finish(folder, name, _start(folder, name, workload, *args))


def test_growing_contexts_open_the_window_later_than_a_fixed_shape_and_say_they_never_settled(tmp_path: Path) -> None:
    # Both at once, each on its own simulated engine: the growing one waits out its --warmup either way.
    # 90 s, not less: a busy machine's hiccup early in the fixed shape's series can keep MSER-5 cutting
    # at the first half's end for a few batches (CI once read it still drifting at 45 s, 9 batches).
    # Every session from its first step (`--join start`): users joining midway would bring grown contexts.
    point = ("--sweep", "users=8", "--warmup", "90", "--point-duration", "5", "--join", "start")
    fixed_run, growing_run = _start(tmp_path, "fixed", FIXED, *point), _start(tmp_path, "growing", GROWING, *point)
    try:
        fixed, _ = _finish(tmp_path, "fixed", fixed_run)
        growing, stdout = _finish(tmp_path, "growing", growing_run)
    finally:
        for run in (fixed_run, growing_run):
            run.kill()  # one that failed must not outlive the test (a no-op once it has ended)
    steady, drifting = fixed["points"][0], growing["points"][0]
    # The fixed shape: steady once MSER-5 can judge (4 batches of 5 s) and every user has its 10 requests.
    assert steady["steady"] is True and 20 <= steady["warmup_s"] < 90, steady["steady_reason"]
    assert steady["steady_reason"].startswith("steady after")
    # Growing contexts: still drifting when --warmup ran out, so the window opened then, and says why.
    assert drifting["warmup_s"] >= 90 > steady["warmup_s"]
    assert drifting["steady"] is False and "still drifting" in drifting["steady_reason"], drifting["steady_reason"]
    assert drifting["mean_prompt_tokens"] > 5 * steady["mean_prompt_tokens"]
    assert "not steady: 8 users" in stdout
    # Every sweep says its GPU time: its wall time × the simulated profile's one GPU.
    assert 0 < fixed["sweep_gpu_seconds"] < growing["sweep_gpu_seconds"] and fixed["gpus"] == 1
    assert fixed["probes"] is None  # a list or auto sweep probes nothing


def test_a_tier_sweep_probes_then_measures_only_beside_the_crossings(tmp_path: Path) -> None:
    data, stdout = _sweep(
        tmp_path, "tiers", FIXED, "--sweep", "tiers", "-u", "4", "--tiers", "100", "--warmup", "4",
        "--probe-duration", "3", "--point-duration", "6",
    )  # fmt: skip
    probes, points = data["probes"], data["points"]
    assert probes and points, stdout[-2000:]
    # Every probe labelled with what it was for; its window, its p90 on both axes, its throughput.
    for probe in probes:
        assert probe["purpose"].startswith(("bracketing tier", "tier ")), probe
        assert probe["duration_s"] >= 2.5 and probe["e2e_interactivity_p90_tokens_per_s"] > 0
        assert probe["interactivity_p90_tokens_per_s"] > 0 and probe["total_tokens_per_s_per_gpu"] > 0
    # No probe is a point or on the frontier: the points' windows are their own, the frontier indexes points.
    probe_windows = {p["window_start_s"] for p in probes}
    assert not probe_windows & {p["window_start_s"] for p in points}
    assert set(data["frontier"]) <= set(range(len(points)))
    assert all(p["duration_s"] >= 5.5 for p in points)
    # Tier 100 is crossed on this profile: a full point on each side of it, and its read from them alone.
    x = sorted(p["e2e_interactivity_p90_tokens_per_s"] for p in points)
    assert x[0] < 100 <= x[-1], x
    assert data["total_tokens_per_s_per_gpu_at_100"] is not None
    assert data["sweep_gpu_seconds"] > 0 and "probes" in data["sweep_stop_reason"]
    assert "probes (short windows that found where the tiers cross; not points):" in stdout
    markdown = (tmp_path / "tiers.md").read_text()
    assert "The probes (`probes`)" in markdown and "sweep_gpu_seconds" in markdown


def test_users_a_sweep_adds_join_midway_and_bring_a_running_loads_contexts(tmp_path: Path) -> None:
    """docs/sweeps.md, "Users that join": coding-agent sessions (30-45 steps) on the simulator, one point
    of 8 users. From their first steps the users' contexts are a fresh load's, short; joined midway (the
    sweep's default) a running load's, about twice as long (measured: mean prompt 68.8 K against 36.7 K)."""
    point = ("--sweep", "users=8", "--max-think", "1", "--warmup", "40", "--point-duration", "20")
    runs = {
        join: _start(tmp_path, join, "", *point, *(("--join", join) if join == "start" else ()))
        for join in ("start", "midway")
    }
    try:
        fresh, _ = _finish(tmp_path, "start", runs["start"])
        joined, _ = _finish(tmp_path, "midway", runs["midway"])
    finally:
        for run in runs.values():
            run.kill()
    assert (fresh["sweep_join"], joined["sweep_join"]) == ("start", "midway")
    short, grown = fresh["points"][0]["mean_prompt_tokens"], joined["points"][0]["mean_prompt_tokens"]
    assert grown > 1.5 * short, (short, grown)
    assert "`sweep_join` midway" in (tmp_path / "midway.md").read_text()

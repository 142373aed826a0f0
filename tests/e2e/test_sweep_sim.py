"""A sweep on the built-in simulated engine, end to end: throughput grows and interactivity falls with
users; the report carries the points, the frontier and the tier keys; a check on a tier works."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.long]


def _workload(folder: Path) -> Path:
    # Short agent steps with little thinking: a point sees dozens of requests in a few seconds.
    path = folder / "quick.yaml"
    path.write_text(
        "shared_prefix_tokens: 2000\nunique_prefix_tokens: 200\nfirst_message_tokens: 100\n"
        "steps: 40\noutput_tokens: 60\ntool_result_tokens: 300\ntool_latency_s: 0.2\n"
    )
    return path


def test_a_sweep_draws_a_frontier_on_the_simulated_engine(tmp_path: Path) -> None:
    report = tmp_path / "sweep.json"
    run = subprocess.run(
        [
            sys.executable, "-m", "agentx_tui", "--sweep", "users=2,16,96", "--warmup", "4",
            "--point-duration", "8", "--tiers", "50,100,1000", "-w", str(_workload(tmp_path)), "--headless",
            "--report", str(report), "--check", "total_tokens_per_s_per_gpu_at_100 > 0",
            "--check", "total_tokens_per_s_per_gpu_at_1000 > 0", "--check", "e2e_interactivity_p90_tokens_per_s > 0",
            # From their first steps: joined midway, 80 users' cold prompts would fill a 4-s warm-up and
            # an 8-s window with their prefill (such a point says it was not steady).
            "--join", "start",
        ],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    data = json.loads(report.read_text())
    points = data["points"]
    assert [p["users"] for p in points] == [2, 16, 96], run.stderr[-2000:]
    tput = [p["total_tokens_per_s_per_gpu"] for p in points]
    speed = [p["interactivity_p90_tokens_per_s"] for p in points]
    assert tput[0] < tput[1] < tput[2], tput
    assert speed[0] > speed[1] > speed[2], speed
    assert all(p["requests_completed"] > 0 and p["error_rate"] == 0 for p in points)
    assert data["sweep_stop_reason"] == "all 3 points measured"
    assert data["gpus_source"] == "simulated profile" and data["gpus"] == 1
    assert data["frontier"] and set(data["frontier"]) <= {0, 1, 2}
    # 100 tok/s/user lies inside the measured range on an H200 profile; 1000 lies far above it: null.
    assert data["total_tokens_per_s_per_gpu_at_100"] is not None
    assert data["total_tokens_per_s_per_gpu_at_1000"] is None
    assert run.returncode == 1  # the check on the unknown 1000 tier failed
    assert "total_tokens_per_s_per_gpu_at_1000 > 0 (the figure is unknown" in run.stdout
    # The North Star (docs/metrics.md, docs/sweeps.md): the frontier's axis, the tier reads on both axes,
    # the agents per GPU at each tier, E2E-normalized interactivity over the run and per point.
    assert data["frontier_axis"] == "e2e_interactivity"
    for tier in ("50", "100", "1000"):
        for key in ("total_tokens_per_s_per_gpu_at_", "tokens_per_dollar_total_at_", "agents_per_gpu_at_"):
            assert f"{key}{tier}" in data
        assert f"total_tokens_per_s_per_gpu_at_{tier}_decode" in data
        assert f"total_tokens_per_s_per_gpu_at_{tier}_decode_ci_low" in data
    assert data["total_tokens_per_s_per_gpu_at_1000_decode"] is None and data["agents_per_gpu_at_1000"] is None
    assert any(data[f"agents_per_gpu_at_{tier}"] is not None for tier in ("50", "100"))
    e2e = [data[f"e2e_interactivity_p{p}_tokens_per_s"] for p in (50, 75, 90)]
    assert all(v is not None and v > 0 for v in e2e) and e2e[0] >= e2e[1] >= e2e[2], e2e
    assert all(p["e2e_interactivity_p90_tokens_per_s"] for p in points)
    assert {t["axis"] for t in data["tiers"]} == {"e2e_interactivity", "decode_interactivity"}
    assert "PASS e2e_interactivity_p90_tokens_per_s > 0" in run.stdout
    assert "NS p90" in run.stdout.splitlines()[0]  # the headless line shows the North Star


def test_a_points_cached_share_and_hit_rates_are_one_set_and_thin_points_are_marked(tmp_path: Path) -> None:
    """docs/sweeps.md, "What counts in a point", on the simulated engine: coding-agent sessions (prompts
    of ~15 K tokens, ~90% cached; answers of ~400 tokens), 12 users joining at the second point with
    their cold first prompts in flight as its window opens. Each point's cached share of its prompt rate,
    the client's hit rate and the servers' agree; each carries its `requests`; too few for an interval
    is marked thin, in the report and the summary."""
    report = tmp_path / "sweep.json"
    run = subprocess.run(
        [
            sys.executable, "-m", "agentx_tui", "--sweep", "users=4,16", "--max-think", "2", "--warmup", "3",
            "--point-duration", "12", "--headless", "--report", str(report),
            # From their first steps: joined midway, 12 users' cold prompts of ~70 K tokens would outlast
            # these 12-s windows, and the servers' counters would count their prefill, not the client.
            "--join", "start",
        ],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    points = json.loads(report.read_text())["points"]
    assert [p["users"] for p in points] == [4, 16]
    for p in points:
        share = p["cached_prompt_tokens_per_s"] / p["prompt_tokens_per_s"]
        assert abs(share - p["prefix_cache_hit_rate_client"]) <= 0.05, p
        assert abs(share - p["prefix_cache_hit_rate_server"]) <= 0.05, p
        assert p["requests"] == p["requests_completed"] > 0
        assert p["thin"] is (p["requests"] < 20)
        if p["thin"]:
            assert p["ci_note"] == f"{p['requests']} requests: an interval needs 20" and p["ci_method"] is None
    # ~400-token answers at 30–100 tok/s: a 12-s window counts a handful of requests a user at most.
    thin = [str(p["users"]) for p in points if p["thin"]]
    assert thin and f"thin points: {', '.join(thin)} users" in run.stdout

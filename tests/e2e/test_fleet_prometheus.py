"""A fleet through a real Prometheus, end to end: load through one replica (as through a router),
telemetry of every replica from Prometheus, GPUs counted from their DCGM series; and observe-only."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agentx_tui.engine import LaunchedServer, start_sim
from tests.telemetry.prometheus_server import PrometheusServer, prometheus_server  # noqa: F401  (a fixture)

pytestmark = pytest.mark.slow
SELECTOR = '{agentx_group="e2e-fleet"}'


@pytest.fixture(scope="module")
def fleet(prometheus_server: PrometheusServer) -> Iterator[tuple[PrometheusServer, list[LaunchedServer]]]:  # noqa: F811
    sims = [asyncio.run(start_sim(profile)) for profile in ("h200/llama-3.1-8b", "h100/llama-3.1-8b")]
    try:
        for sim in sims:  # a request each, so every replica has series before the run starts
            httpx.post(
                sim.url + "/v1/chat/completions",
                json={"model": "x", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2},
                timeout=30,
            )
        targets = [s.url.removeprefix("http://") for s in sims]
        prometheus_server.set_targets("e2e-fleet", [{"targets": targets, "labels": {"agentx_group": "e2e-fleet"}}])
        prometheus_server.wait_scraped(SELECTOR, len(sims))
        yield prometheus_server, sims
    finally:
        prometheus_server.remove_targets("e2e-fleet")
        for sim in sims:
            sim.stop()


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentx_tui", *args], capture_output=True, text=True, timeout=180)


def test_load_through_one_replica_telemetry_of_all_from_prometheus(
    fleet: tuple[PrometheusServer, list[LaunchedServer]], tmp_path: Path
) -> None:
    prom, sims = fleet
    workload = tmp_path / "w.yaml"
    workload.write_text(
        "shared_prefix_tokens: 800\nunique_prefix_tokens: 50\nfirst_message_tokens: 50\n"
        "steps: 3\noutput_tokens: 24\ntool_result_tokens: 120\ntool_latency_s: 0.1\n"
    )
    report = tmp_path / "r.json"
    run = _run(
        "--prometheus", prom.url, "--selector", SELECTOR, "--attach", sims[0].url, "-w", str(workload),
        "-u", "4", "--sessions", "6", "--headless", "--report", str(report),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    data = json.loads(report.read_text())
    assert data["target"].startswith("prometheus ") and "load to" in data["target"]
    assert len(data["endpoints"]) == 2, run.stderr  # both replicas, read from Prometheus; load went to one
    by_load = sorted(data["endpoints"], key=lambda e: e["prompt_tokens"] or 0)
    assert by_load[0]["prompt_tokens"] == 0 and by_load[1]["prompt_tokens"] == data["prompt_tokens"] > 0
    assert by_load[1]["generation_tokens"] == data["output_tokens"]
    assert (data["gpus"], data["gpus_source"]) == (2, "DCGM series of Prometheus (distinct UUIDs)"), data["endpoints"]
    assert data["total_tokens_per_s_per_gpu"] == pytest.approx(data["total_tokens_per_s"] / 2)


def test_prometheus_alone_observes_the_fleet(fleet: tuple[PrometheusServer, list[LaunchedServer]]) -> None:
    prom, _ = fleet
    run = _run("--prometheus", prom.url, "--selector", SELECTOR, "--headless", "--duration", "3")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "2 replica(s)" in run.stderr
    assert "requests_completed" in run.stdout and "Traceback" not in run.stderr


def test_a_selector_that_matches_nothing_is_exit_3(fleet: tuple[PrometheusServer, list[LaunchedServer]]) -> None:
    prom, _ = fleet
    run = _run("--prometheus", prom.url, "--selector", '{agentx_group="nothing-here"}', "--headless")
    assert run.returncode == 3 and len(run.stderr.strip().splitlines()) == 1, run.stderr

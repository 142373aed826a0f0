"""End to end with the real vLLM engine: the CI sanity-check use (docs/architecture.md, docs/metrics.md),
attached to a running server as after a deploy. Headless runs that launch their own server
(`--serve tiny`) are checked by tests/reliability/, which stop them in every way they can end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentx_tui.report import REPORT_KEYS
from tests.helpers.workloads import write_small_agent_workload

pytestmark = [pytest.mark.vllm, pytest.mark.slow]


def _cli(*args: str, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentx_tui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kw,  # type: ignore[call-overload]
    )


def test_headless_attach_report_and_checks(tmp_path: Path, vllm_url: str) -> None:
    workload = write_small_agent_workload(tmp_path, steps=4)
    report = tmp_path / "r.json"
    record = tmp_path / "rec.jsonl"
    proc = _cli(
        "--attach",
        vllm_url,
        "-w",
        str(workload),
        "-u",
        "4",
        "--headless",
        "--duration",
        "14",
        "--report",
        str(report),
        "--record",
        str(record),
        "--check",
        "output_tokens_per_s > 0",
        "--check",
        "error_rate == 0",
    )
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    data = json.loads(report.read_text())
    missing = [k for k in REPORT_KEYS if k not in data]
    assert not missing
    assert data["partial"] is False
    assert data["requests_completed"] > 0 and data["error_rate"] == 0
    assert data["output_tokens_per_s"] > 0
    hits = (data["prefix_cache_hit_rate_client"], data["prefix_cache_hit_rate_ceiling"], data["errors_by_kind"])
    # Text drawn for two sessions can begin with the same word by chance: where their shared prefix
    # ends one token short of a KV block, the server then serves that block too, which the ceiling
    # (computed on whole segments of text) does not count. A block or two in a run: 0.2 points.
    assert 0 < hits[0] <= hits[1] + 0.002, hits
    assert data["prefix_cache_hit_rate_server"] is not None
    assert data["gpu_util_mean"] is None  # a CPU-only machine: unknown, never 0
    (endpoint,) = data["endpoints"]
    # The server's own counters over the run agree with what the client measured: the run ends by
    # draining in-flight requests before the last sample, and the counters are read as differences
    # from the run's first sample (the server has served other tests), so the totals match exactly.
    assert data["output_tokens_per_s_server"] == pytest.approx(data["output_tokens_per_s"], rel=1e-9)
    assert data["prompt_tokens_per_s_server"] == pytest.approx(data["prompt_tokens_per_s"], rel=1e-9)
    assert endpoint["url"] == vllm_url
    assert "PASS" in out
    assert record.read_text().count("\n") >= 10

"""End to end with the real vLLM engine: the CI sanity-check use (docs/architecture.md, docs/metrics.md),
attached to a running server as after a deploy. Headless runs that launch their own server
(`--serve tiny`) are checked by tests/reliability/, which stop them in every way they can end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

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


def _spec_counters(url: str) -> tuple[float, float]:
    """(drafts, accepted tokens) as the engine's /metrics says now."""
    text = httpx.get(url + "/metrics", timeout=10).text
    found = {s.name: s.value for family in text_string_to_metric_families(text) for s in family.samples}
    return found["vllm:spec_decode_num_drafts_total"], found["vllm:spec_decode_num_accepted_tokens_total"]


def test_a_speculating_engine_s_acceptance_is_reported_and_judged_against_spec_golden(
    tmp_path: Path, spec_vllm_url: str
) -> None:
    """The run's acceptance length is its engine's own 1 + Δaccepted ÷ Δdrafts over the run (the run's
    first sample comes before its load, its last after the drain), and `--spec-golden` pins it: an
    acceptance far from 1.5 breaks AgentX's rule, said with both lengths."""
    workload = write_small_agent_workload(tmp_path, steps=3)
    report = tmp_path / "r.json"
    drafts_before, accepted_before = _spec_counters(spec_vllm_url)
    proc = _cli(
        "--attach", spec_vllm_url, "-w", str(workload), "-u", "4", "--headless", "--duration", "10",
        "--spec-golden", "1.5", "--report", str(report), "--check", "spec_acceptance_length > 1",
    )  # fmt: skip
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    drafts_after, accepted_after = _spec_counters(spec_vllm_url)
    data = json.loads(report.read_text())
    drafts, accepted = drafts_after - drafts_before, accepted_after - accepted_before
    assert drafts > 0 and data["spec_acceptance_length"] == pytest.approx(1 + accepted / drafts)
    assert data["spec_draft_length"] == 3 and len(data["spec_acceptance_by_position"]) == 3
    assert (data["spec_golden_acceptance_length"], data["spec_golden_source"]) == (1.5, "--spec-golden")
    assert data["server_queue_s_mean"] is not None and data["server_prefill_s_mean"] is not None
    (reason,) = [r for r in data["agentx_invalid_reasons"] if r.startswith("acceptance not pinned")]
    assert f"{data['spec_acceptance_length']:.2f} over the run against the golden 1.5 at k = 3" in reason
    assert data["agentx_valid"] is False and "PASS" in out

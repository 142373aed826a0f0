"""The whole sink chain on a real run of the built-in simulated engine: headless lines, the report,
the recording, and a replay of that recording that rebuilds the very same report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentx_tui.recording import read_recording
from agentx_tui.report import REPORT_KEYS, ReportBuilder

pytestmark = pytest.mark.timeout(120)


def test_headless_sim_run_report_and_replay_agree(tmp_path: Path) -> None:
    report, record, markdown = tmp_path / "r.json", tmp_path / "rec.jsonl", tmp_path / "r.md"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentx_tui",
            "--headless",
            "--duration",
            "3",
            "-u",
            "2",
            "-w",
            "chat",
            "--report",
            str(report),
            "--report",
            str(markdown),
            "--record",
            str(record),
            "--check",
            "requests_failed == 0",
            "--check",
            "duration_s > 1000",
        ],
        capture_output=True,
        text=True,
        timeout=100,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)},
    )
    assert proc.returncode == 1, proc.stderr[-2000:]  # the impossible duration check fails
    assert "\x1b" not in proc.stdout  # stdout is a pipe: no escape sequences
    lines = proc.stdout.splitlines()
    assert lines[0].split()[0] == "elapsed" and len(lines) >= 4
    assert "PASS requests_failed == 0 (measured 0)" in proc.stdout
    assert "FAIL duration_s > 1000 (measured" in proc.stdout

    data = json.loads(report.read_text())
    assert all(k in data for k in REPORT_KEYS)
    # Both reports written (the last --report alone was, silently), the Markdown verdict first.
    head = "\n".join(markdown.read_text().splitlines()[:40])
    assert "**Checks: 1 of 2 passed** (1 FAILED: the run exits 1)" in head
    assert "| `duration_s > 1000` |" in head and "not AgentX-valid" in head
    # Nobody paused the run: no user says so (the drain held them at the pause gate).
    assert data["users_detail"] and all(row["state"] != "paused" for row in data["users_detail"])
    assert 0 <= data["drain_s"] < data["duration_s"]
    assert data["partial"] is False and data["simulated"] is True
    assert data["duration_s"] >= 2.5 and data["samples"] >= 4
    assert data["gpu_util_mean"] is not None  # the simulator reports a GPU

    recording = read_recording(record)
    assert recording.notice is None and recording.header.agentx_recording == 1
    assert len(recording.snapshots) == data["samples"]
    builder = ReportBuilder()
    for snap in recording.snapshots:
        builder.add(snap)
    rebuilt = builder.build().model_dump()
    assert {k: rebuilt[k] for k in REPORT_KEYS if k != "agentx_version"} == {
        k: data[k] for k in REPORT_KEYS if k != "agentx_version"
    }

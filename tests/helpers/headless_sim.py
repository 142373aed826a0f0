"""Headless runs on the built-in simulated engine, started as a user would start them, for the
end-to-end tests that run two at once (each on its own simulated GPU) and read their reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def start_headless(folder: Path, name: str, workload: str, *args: str) -> subprocess.Popen[str]:
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


def finish_headless(folder: Path, name: str, run: subprocess.Popen[str]) -> tuple[dict[str, Any], str]:
    """The sweep's report and what it printed, once it has ended."""
    stdout, stderr = run.communicate(timeout=400)
    report = folder / f"{name}.json"
    assert report.exists(), stderr[-2000:]
    return json.loads(report.read_text()), stdout

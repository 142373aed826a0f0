"""Signals under load: SIGTERM while 50,000 users start ends the run within seconds, with the report
written and no process left (docs/scale.md). Here rather than in tests/reliability/, whose real vLLM
servers run load of their own while the exit tests run and would share this test's two cores."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from tests.reliability._run import CliRun, assert_gone


@pytest.mark.slow
@pytest.mark.parametrize(("workers", "within_s"), [("auto", 10), ("1", 25)])
def test_sigterm_while_50000_users_start_exits_within_seconds_with_no_orphan(
    tmp_path: Path, workers: str, within_s: float
) -> None:
    # `auto` (the default) puts the users in a worker process, so the main loop stays free (~4 s to
    # exit, most of it the drain, the final tick and the simulator's stop); `--workers 1` keeps 50,000
    # users in agentx-tui's own event loop, whose turns then last seconds (~11 s here, more on a
    # loaded machine): slower, but the signal is still honoured and nothing survives.
    report = tmp_path / "r.json"
    args = ("-w", "chat", "-u", "50000", "--workers", workers, "--headless", "--report", str(report))
    with CliRun(*args, stderr_path=tmp_path / "err.txt") as run:
        run.wait_ticks(2, 60)  # the simulator is up and the users are starting (and sending)
        tree = run.remember_tree()
        sent = time.monotonic()
        run.signal(signal.SIGTERM)
        rc = run.wait(30)
        took = time.monotonic() - sent
    assert rc == 143, run.stderr[-2000:]
    assert took < within_s, f"SIGTERM took {took:.1f} s to end a run of 50,000 users"
    assert "Traceback" not in run.stderr
    assert_gone(tree, 15, "the simulator or a load worker survived SIGTERM")
    data = json.loads(report.read_text())
    assert data["partial"] is True and "SIGTERM" in data["partial_reason"]

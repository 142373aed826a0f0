"""A load worker process SIGKILLed mid-run, with real worker processes against the simulator
(docs/scale.md, "A lost load worker"): a plain run says so within a tick, reports the users it lost and
is not AgentX-valid; a sweep restarts the users and measures the point again."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.procs import descendants
from tests.helpers.sim import sim_server
from tests.reliability._run import TICK_ROW, CliRun, write_workload

# Sessions of six calls a second or so apart: long enough to kill a worker in the middle of them.
SESSIONS = """\
description: short calls, a pause between them
shared_prefix_tokens: 200
unique_prefix_tokens: 20
first_message_tokens: 40
steps: 6
output_tokens: 16
tool_result_tokens: 60
tool_latency_s: 0.5
"""


def _sending(line: str) -> bool:
    """A tick row whose output tokens/s is above zero: the workers have started and stream."""
    return bool(TICK_ROW.match(line)) and float(line.split()[2].rstrip("KMB")) > 0


def _workers(run: CliRun) -> list[int]:
    """The load worker processes below agentx-tui (spawned: `multiprocessing.spawn`, not its resource tracker)."""
    found = []
    for pid in descendants(run.pid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmdline:
            found.append(pid)
    return sorted(found)


def _kill_one(run: CliRun) -> tuple[int, float]:
    workers = _workers(run)
    assert len(workers) == 2, f"expected 2 load worker processes, found {workers}"
    victim = workers[-1]
    os.kill(victim, signal.SIGKILL)
    return victim, time.monotonic()


@pytest.mark.slow
def test_a_worker_killed_mid_run_is_said_within_a_tick_reported_and_not_agentx_valid(tmp_path: Path) -> None:
    workload = write_workload(tmp_path, SESSIONS)
    report = tmp_path / "r.json"
    with sim_server() as url:
        args = (
            "--attach", url, "-w", str(workload), "-u", "4", "--workers", "2", "--sessions", "16",
            "--headless", "--report", str(report),
        )  # fmt: skip
        with CliRun(*args, stderr_path=tmp_path / "err.txt") as run:
            run.wait_ticks(1, 120, _sending)
            victim, killed_at = _kill_one(run)
            said_at, said = run.wait_for(lambda line: f"(pid {victim}) died" in line, 30, after=killed_at)
            rc = run.wait(120)  # the other worker runs its sessions to their end
    # Within a tick: the tick under way when it died may miss it, the next one says it, under its row.
    rows = [(t, line) for t, line in run.ticks() if killed_at < t <= said_at]
    assert 1 <= len(rows) <= 2, f"said {len(rows)} ticks after the kill:\n{run.stdout[-2000:]}"
    assert rows[-1][1].split()[1] == "2"  # the users column: 2 of the 4 are driven now
    words = " ".join(run.stdout.split())  # the sentence, wrapped to 79 columns, read whole
    sentence = rf"load worker [12] of 2 \(pid {victim}\) died \(SIGKILL\): its 2 users are gone; 2 of 4 remain"
    assert re.search(sentence, words), said
    assert rc == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    data: dict[str, Any] = json.loads(report.read_text())
    assert data["partial"] is True
    assert "died at" in data["partial_reason"] and "(SIGKILL): 2 of 4 users were not driven" in data["partial_reason"]
    assert data["users_lost"] == 2 and data["users"] == 2 and data["users_max"] == 4
    (loss,) = data["worker_losses"]
    assert (loss["pid"], loss["how"], loss["workers"]) == (victim, "SIGKILL", 2)
    assert (loss["users"], loss["users_lost"], loss["users_left"]) == (4, 2, 2)
    assert loss["point"] is None and loss["restarted_at_s"] is None
    assert 0 < loss["at_s"] < data["duration_s"]
    assert data["agentx_valid"] is False
    assert any(reason.startswith("load workers lost: load worker") for reason in data["agentx_invalid_reasons"])
    assert "load workers lost: 1, 2 users in all" in run.stdout  # the summary


@pytest.mark.slow
@pytest.mark.long
def test_a_sweep_restarts_the_lost_users_and_measures_the_point_again(tmp_path: Path) -> None:
    workload = write_workload(tmp_path, SESSIONS)
    report = tmp_path / "r.json"
    warmup_s = 2.0
    with sim_server() as url:
        args = (
            "--attach", url, "-w", str(workload), "--sweep", "users=2,4", "--warmup", f"{warmup_s:g}",
            "--point-duration", "6", "--workers", "2", "--headless", "--report", str(report),
        )  # fmt: skip
        with CliRun(*args, stderr_path=tmp_path / "err.txt") as run:
            run.wait_ticks(1, 120, _sending)  # a point has begun (the first, unless the workers were slow)
            victim, killed_at = _kill_one(run)
            run.wait_for(lambda line: f"(pid {victim}) died" in line, 30, after=killed_at)
            run.wait_for(lambda line: "restarted: its" in line, 60, after=killed_at)
            rc = run.wait(180)
    assert rc == 0, run.stderr[-2000:]
    data: dict[str, Any] = json.loads(report.read_text())
    (loss,) = data["worker_losses"]
    assert loss["pid"] == victim and loss["point"] in (1, 2)
    assert loss["users_lost"] == loss["users"] // 2 == [2, 4][loss["point"] - 1] // 2
    assert loss["restarted_at_s"] is not None and loss["restarted_at_s"] >= loss["at_s"]
    # A clean sweep: both points measured, the one it was lost in again after the restart and a whole
    # warm-up.
    assert data["partial"] is False and data["users_lost"] == loss["users_lost"]
    assert [p["users"] for p in data["points"]] == [2, 4]
    again = data["points"][loss["point"] - 1]
    assert again["window_start_s"] >= loss["restarted_at_s"] + warmup_s - 1.0  # (a tick's rounding)
    assert again["requests_completed"] > 0
    # The fresh worker drives users: its rows are listed at the end, their ids (odd: worker 2 of 2) past
    # its predecessor's first user (1).
    fresh = [row["user"] for row in data["users_detail"] if row["user"] % 2]
    assert fresh and min(fresh) >= 3, data["users_detail"]
    rule = "every user driven to the end: 1 lost load worker restarted, the points they were lost in measured again"
    assert rule in data["agentx_rules_met"]

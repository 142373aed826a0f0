"""The tool's own exits: whatever ends agentx-tui, no server process it launched is left (the whole
tree is checked, docs/vllm.md) and what was recorded can be replayed.

With the real engine (`--serve tiny`):
- SIGHUP after the terminal went away (an SSH drop: stdout closed first): the run stops, the report
  is written and marked partial, the server tree is stopped;
- kill -9 of agentx-tui while recording: nothing can run in the tool, so the server's parent-death
  signal must stop it (vLLM's API server then stops its engine core and worker), and the recording,
  flushed line by line, must replay.
SIGTERM mid-run goes through the same handler (only the exit code differs); it is checked with the
launched simulator during a 50,000-user start-up (tests/load/test_scale_exits.py, away from the
real servers here, which would share its two cores). The servers start together (see conftest.py);
each test acts on its own agentx-tui.

Ctrl-C goes through the same handler as SIGHUP and SIGTERM once the run is going; it is checked here
mid-run with the launched simulator, and during start-up with a stand-in server (slow_server.py) that
never becomes healthy and has vLLM's shape (a leader and two helpers in its process group that ignore
SIGINT): a real start-up would cost ~35 s of the suite's time for the same code path in agentx-tui.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import pytest

from agentx_tui.recording import read_recording
from agentx_tui.report import REPORT_KEYS
from tests.helpers.procs import alive
from tests.reliability._run import CliRun, assert_gone, completed_requests, write_workload
from tests.reliability.conftest import Launches

STARTUP_S = 300  # several start-ups share two cores (see conftest.py)


def test_ctrl_c_during_startup_stops_the_half_started_server(tmp_path: Path) -> None:
    stand_in = f"{sys.executable} {Path(__file__).with_name('slow_server.py')}"
    args = ("--serve", "org/slow-model", "--vllm-cmd", stand_in, "-w", "none", "--headless")
    with CliRun(*args, stderr_path=tmp_path / "err.txt") as run:
        deadline = time.monotonic() + 30
        while len(alive(run.remember_tree())) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)  # wait until the leader has started its engine core and worker
        tree = run.remember_tree()
        assert len(alive(tree)) == 3, f"the stand-in server tree did not start: {run.stderr[-2000:]}"
        run.signal(signal.SIGINT)  # what a terminal's Ctrl-C sends: to agentx-tui, not to the server
        rc = run.wait(30)
        err = run.stderr
    assert rc == 130, err[-2000:]
    assert "stopped by Ctrl-C during start-up" in err and "Traceback" not in err
    assert_gone(tree, 15, "processes of the starting server survived Ctrl-C")


def test_ctrl_c_mid_run_stops_the_launched_server_and_writes_the_report(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    args = ("--sim", "-w", str(write_workload(tmp_path)), "-u", "2", "--headless", "--report", str(report))
    with CliRun(*args, stderr_path=tmp_path / "err.txt") as run:
        run.wait_ticks(2, 60)
        tree = run.remember_tree()
        assert tree
        run.signal(signal.SIGINT)
        rc = run.wait(30)
    assert rc == 130, run.stderr[-2000:]  # interrupted: the shell's code for Ctrl-C, never success
    assert "Traceback" not in run.stderr
    assert_gone(tree, 15, "the launched simulator survived Ctrl-C")
    data = json.loads(report.read_text())
    assert data["partial"] is True and "Ctrl-C" in data["partial_reason"]


@pytest.mark.vllm
@pytest.mark.slow
def test_sighup_after_the_terminal_is_gone_stops_everything_and_writes_the_report(
    serve_launches: Launches,
) -> None:
    run, folder = serve_launches.start("hangup"), serve_launches.folder
    run.wait_ticks(3, STARTUP_S)
    # A server sharing two cores with other start-ups may take a few ticks to finish its first request.
    deadline = time.monotonic() + 60
    while completed_requests(folder / "hup.jsonl") == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    tree = run.remember_tree()
    assert len(tree) >= 3, f"expected vLLM's API server, engine core and worker below agentx-tui, saw {tree}"
    run.hang_up_terminal()  # from now on every write to stdout fails (EPIPE), as after an SSH drop
    run.signal(signal.SIGHUP)
    rc = run.wait(60)
    assert rc == 128 + signal.SIGHUP, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    assert_gone(tree, 30, "vLLM processes survived SIGHUP")
    data = json.loads((folder / "hup.json").read_text())
    assert data["partial"] is True and "SIGHUP" in data["partial_reason"]
    assert all(k in data for k in REPORT_KEYS)  # a run cut short still has every key (null where unknown)
    assert data["requests_completed"] > 0
    rec = read_recording(folder / "hup.jsonl")
    assert rec.notice is None and len(rec.snapshots) >= 4
    assert rec.snapshots[-1].run.state == "stopping"  # stopped by the user's side, not a server fault


@pytest.mark.vllm
@pytest.mark.slow
def test_kill_9_while_recording_leaves_a_replayable_file_and_no_server(serve_launches: Launches) -> None:
    run, folder = serve_launches.start("killed"), serve_launches.folder
    run.wait_ticks(3, STARTUP_S)
    tree = run.remember_tree()
    assert tree
    run.signal(signal.SIGKILL)
    assert run.wait(10) == -signal.SIGKILL
    # Nothing in agentx-tui ran after SIGKILL: the server's parent-death signal (SIGTERM) stops it, and
    # vLLM's API server then stops its engine core and worker.
    assert_gone(tree, 45, "the launched vLLM outlived a kill -9 of agentx-tui")
    rec = read_recording(folder / "killed.jsonl")
    assert len(rec.snapshots) >= 3
    assert [s.seq for s in rec.snapshots] == list(range(1, len(rec.snapshots) + 1))

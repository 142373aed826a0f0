"""The server dies or freezes under a run (issue: reliability).

- Attach mode, server SIGKILLed then started again on the same URL: the run keeps going, shows
  "server down" within 2 s, counts the failed requests, and picks up again by itself with the new
  server's counters (which restart from zero) folded into the run totals. This uses the simulated
  engine: it speaks vLLM's API and metrics and restarts in a second, where a real vLLM restart costs
  35 s; the real engine's kill is covered with `--serve` below, where the crash is the tool's own
  server.
- `--serve` with the real engine: frozen with SIGSTOP then resumed (scrapes time out, ticks go on,
  figures come back), then its API server SIGKILLed (the crash is reported with the server's last log
  lines, exit 3, the report and the recording are complete and marked partial, no process is left:
  SIGKILL to the API server leaves its engine core and worker as orphans, docs/vllm.md).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import time
from pathlib import Path

import pytest

from agentx_tui.engine.ports import free_port
from agentx_tui.recording import read_recording
from tests.helpers.procs import in_group
from tests.reliability._run import (
    CliRun,
    assert_gone,
    completed_requests,
    listening_addresses,
    max_gap,
    sim_server,
    write_workload,
)
from tests.reliability.conftest import SECRET_KEY, Launches

SERVER_DOWN = "server down"
# The promise is 2 s; a loaded 2-core CI machine may start a tick a little late.
DOWN_WITHIN_S = 2.0 + 0.5


def _running(line: str) -> bool:
    return SERVER_DOWN not in line and "stopping" not in line


def _api_server(run: CliRun, timeout_s: float) -> int:
    """The PID of the vLLM API server agentx-tui launched (its direct child)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for pid in run.remember_tree():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            if ppid == run.pid and any(b"api_server" in part for part in cmdline):
                return pid
        time.sleep(0.2)
    raise AssertionError("no vLLM API server below agentx-tui")


@pytest.mark.vllm
@pytest.mark.slow
def test_serve_frozen_then_resumed_then_crashed(serve_launches: Launches) -> None:
    key = SECRET_KEY  # set in the launch's environment: checked nowhere in what the tool writes
    run, folder = serve_launches.start("crash"), serve_launches.folder
    report, record = folder / "crash.json", folder / "crash.jsonl"
    with run:
        run.wait_ticks(3, 300, lambda s: _running(s) and "n/a" not in s.split()[4])
        leader = _api_server(run, 10)
        tree = run.remember_tree()

        # The key reaches vLLM through its environment, never its command line; it is started from an
        # argument list (no shell in between) and listens on loopback only.
        cmdline = Path(f"/proc/{leader}/cmdline").read_bytes().split(b"\0")
        assert key.encode() not in b" ".join(cmdline)
        assert Path(cmdline[0].decode()).name.startswith("python")
        assert {addr for addr, _ in listening_addresses(leader)} == {"127.0.0.1"}

        # Frozen: every process of the server stops; scrapes time out, the ticks go on.
        os.killpg(leader, signal.SIGSTOP)
        frozen_at = time.monotonic()
        try:
            down_at, _ = run.wait_for(lambda s: SERVER_DOWN in s, 10, after=frozen_at)
            run.wait_ticks(3, 10, lambda s: SERVER_DOWN in s)
        finally:
            os.killpg(leader, signal.SIGCONT)
        resumed_at = time.monotonic()
        assert down_at - frozen_at <= DOWN_WITHIN_S, f"'server down' showed after {down_at - frozen_at:.2f} s"
        frozen_ticks = [(t, s) for t, s in run.ticks() if frozen_at <= t <= resumed_at + 1]
        assert max_gap(frozen_ticks) < 2.5, "the ticks stalled while the server was frozen"
        # Recovered: scraped again (KV % is the seventh column), and requests complete again.
        run.wait_for(lambda s: _running(s) and s.split()[6] != "n/a", 30, after=resumed_at)
        completed_at_resume = completed_requests(record)
        deadline = time.monotonic() + 30
        while completed_requests(record) <= completed_at_resume and time.monotonic() < deadline:
            time.sleep(0.5)
        assert completed_requests(record) > completed_at_resume, "no request completed after SIGCONT"

        # Crashed: SIGKILL to the API server alone, the case that orphans its children.
        os.kill(leader, signal.SIGKILL)
        rc = run.wait(60)
        err = run.stderr
    assert rc == 3, err[-3000:]
    assert "Traceback" not in err
    assert "last lines of the server's log:" in err and "exited during the run (exit -9)" in err
    assert len([line for line in err.splitlines() if line.startswith("  | ")]) >= 3

    data = json.loads(report.read_text())
    assert data["partial"] is True and "exited (code -9)" in data["partial_reason"]
    assert data["server_exit_code"] == -9 and data["server_log_tail"]
    assert data["requests_completed"] > 0

    rec = read_recording(record)
    assert rec.notice is None  # complete: the last line was written whole
    last = rec.snapshots[-1]
    assert last.run.state == "server down"
    assert any("the launched server exited (code -9)" in e for s in rec.snapshots for e in s.events)

    assert_gone(tree, 30, "processes of the crashed server are still running")
    assert not in_group(leader)
    for path in (report, record, run.stderr_path):
        assert key not in path.read_text(), f"the API key is in {path.name}"
    assert key not in run.stdout


@pytest.mark.slow
def test_attach_server_killed_then_back_on_the_same_url(tmp_path: Path) -> None:
    port = free_port()
    workload = write_workload(tmp_path)
    report, record = tmp_path / "r.json", tmp_path / "rec.jsonl"
    args = ("--attach", f"http://127.0.0.1:{port}", "-w", str(workload), "-u", "4", "--headless")
    args += ("--duration", "14", "--report", str(report), "--record", str(record))
    with CliRun(*args, stderr_path=tmp_path / "err.txt") as run:
        with sim_server(port, tmp_path / "sim1.log") as first:
            run.wait_ticks(3, 60, _running)
            os.killpg(first.pid, signal.SIGKILL)
            killed_at = time.monotonic()
            first.wait(10)
            down_at, _ = run.wait_for(lambda s: SERVER_DOWN in s, 10, after=killed_at)
            assert down_at - killed_at <= DOWN_WITHIN_S, f"'server down' showed after {down_at - killed_at:.2f} s"
            run.wait_ticks(2, 10, lambda s: SERVER_DOWN in s)  # it stays down, and the run goes on
        with sim_server(port, tmp_path / "sim2.log"):
            back_at = time.monotonic()
            run.wait_for(lambda s: _running(s) and not s.rstrip().endswith("n/a"), 15, after=back_at)
            rc = run.wait(40)
        ticks = run.ticks()
    assert rc == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    assert max_gap(ticks) < 2.5, "a tick was late while the server was down"

    data = json.loads(report.read_text())
    assert data["partial"] is False  # the run ended by its duration; the outage did not end it
    assert data["errors_by_kind"].get("connection", 0) > 0, data["errors_by_kind"]

    rec = read_recording(record)
    snaps = rec.snapshots
    down = [s for s in snaps if s.run.state == "server down"]
    assert down, "the recording shows no 'server down' tick"
    before, after = snaps[: snaps.index(down[0])], snaps[snaps.index(down[-1]) + 1 :]
    assert after and all(s.endpoints[0].up for s in after[:-1])
    events = [e for s in snaps for e in s.events]
    assert any("server down" in e for e in events) and any("server up again" in e for e in events)
    # Requests completed again on the new server, and the run totals never went backwards although the
    # new server's counters started again from zero.
    assert after[-1].client is not None and before[-1].client is not None
    assert after[-1].client.totals.requests_completed > before[-1].client.totals.requests_completed
    gen = [s.endpoints[0].totals.generation_tokens or 0.0 for s in snaps]
    assert all(b >= a for a, b in itertools.pairwise(gen)), "run totals went down after the restart"
    assert gen[-1] > (before[-1].endpoints[0].totals.generation_tokens or 0.0)

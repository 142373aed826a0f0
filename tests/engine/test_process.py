"""ManagedProcess stops whole trees, including children that ignore SIGTERM and orphans."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from agentx_tui.engine import LogBuffer, ManagedProcess, stopped_on_exit
from tests.helpers.procs import alive, descendants, in_group, wait_gone

# A parent that spawns two grandchildren, one of them ignoring SIGTERM, then prints "ready".
TREE = textwrap.dedent(
    """
    import signal, subprocess, sys, time
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    subprocess.Popen([sys.executable, "-c", stubborn])
    print("ready", flush=True)
    time.sleep(600)
    """
)


def _wait_for(predicate, timeout_s: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_stop_kills_the_whole_tree_even_a_sigterm_ignoring_child() -> None:
    proc = ManagedProcess([sys.executable, "-c", TREE])
    _wait_for(lambda: "ready" in proc.log.tail(5) and len(descendants(proc.pid)) >= 2)
    tree = descendants(proc.pid) | {proc.pid}
    started = time.monotonic()
    proc.stop(timeout_s=1.0)
    assert time.monotonic() - started < 8
    assert not alive(tree)
    assert not in_group(proc.pgid)
    proc.stop()  # idempotent


def test_orphans_of_a_killed_leader_are_still_stopped() -> None:
    proc = ManagedProcess([sys.executable, "-c", TREE])
    _wait_for(lambda: len(descendants(proc.pid)) >= 2)
    tree = descendants(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)  # what docs/vllm.md measured: children survive as orphans
    _wait_for(lambda: proc.poll() is not None)
    assert alive(tree), "the orphans are expected to outlive the leader"
    proc.stop(timeout_s=1.0)
    assert not alive(tree)


def test_parent_death_signal_stops_the_child_when_the_launcher_is_killed() -> None:
    launcher = textwrap.dedent(
        """
        import sys, time
        from agentx_tui.engine import ManagedProcess
        p = ManagedProcess([sys.executable, "-c", "import time; time.sleep(600)"])
        print(p.pid, flush=True)
        time.sleep(600)
        """
    )
    outer = subprocess.Popen([sys.executable, "-c", launcher], stdout=subprocess.PIPE, text=True)
    assert outer.stdout is not None
    child = int(outer.stdout.readline())
    assert alive({child})
    outer.kill()
    outer.wait()
    assert not wait_gone({child}, timeout_s=10)


def test_log_buffer_is_bounded_scrubs_secrets_and_reads_incrementally() -> None:
    log = LogBuffer(maxlen=3, secrets=["sk-secret"])
    for i in range(5):
        log.append(f"line {i} key=sk-secret")
    assert log.tail(10) == ["line 2 key=********", "line 3 key=********", "line 4 key=********"]
    lines, cursor = log.since(3)
    assert lines == ["line 3 key=********", "line 4 key=********"] and cursor == 5
    log.append("line 5")
    assert log.since(cursor) == (["line 5"], 6)


def test_stopped_on_exit_stops_what_the_block_started_and_only_that() -> None:
    # A run's last line of defence must not stop a server someone else started in the same process
    # (a test's shared vLLM, another run's server).
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
    outside = ManagedProcess(sleeper)
    try:
        try:
            with stopped_on_exit(timeout_s=2.0):
                inside = ManagedProcess(sleeper)
                raise RuntimeError("the run failed")
        except RuntimeError:
            pass
        assert not inside.group_alive()
        assert outside.poll() is None
    finally:
        outside.stop()

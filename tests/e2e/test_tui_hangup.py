"""`q`, then the terminal closes while the run winds down (an SSH window shut right after quitting):
nothing may stay behind. Textual's driver restarted its input thread on the SIGCONT that comes with a
hang-up, and that thread kept the process alive, spinning on the dead terminal (seen: 85% of a core)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.procs import descendants, kill_left, wait_gone
from tests.helpers.tmux import Tmux

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (scripts/test.sh installs it)"),
]


def test_a_terminal_closed_while_the_run_winds_down_leaves_nothing_running(tmp_path: Path) -> None:
    tmux = Tmux(f"agentx-hangup-{os.getpid()}")
    app = f"{sys.executable} -m agentx_tui -u 4 --refresh 0.5"  # the built-in simulated engine
    tmux("new-session", "-d", "-s", "ui", "-x", "80", "-y", "24", "-c", str(tmp_path), app)
    root = int(tmux.pane("pane_pid"))  # the app itself: no shell between it and the terminal
    tree: set[int] = {root}
    try:
        deadline, screen = time.monotonic() + 60, ""
        while time.monotonic() < deadline:
            screen = tmux.screen()
            if (m := re.search(r"total\s+([\d.]+)(?: [KMB])? tok/s", screen)) and float(m[1]) > 0:
                break
            time.sleep(0.3)
        else:
            pytest.fail(f"no live figures within 60 s\n{screen}")
        tree |= descendants(root)  # the simulator it launched
        tmux("send-keys", "-t", "ui", "q")
        time.sleep(0.3)  # the app has left the screen; the simulator is stopping, the report being made
        tmux("kill-server")  # the terminal is gone: SIGHUP and SIGCONT
        # 40 s: a process that spins on the dead terminal never ends; one slowed by a busy machine (4 test
        # processes and their simulators on 2 cores) may need more than 20 s to wind down.
        left = wait_gone(tree, timeout_s=40)
        assert not left, f"still running 40 s after the terminal closed: {_named(left)}"
    finally:
        with contextlib.suppress(Exception):
            tmux("kill-server")
        kill_left(tree)  # only if the test failed


def _named(pids: set[int]) -> list[str]:
    """Each pid with its command line (which process stayed behind: the app, or the simulator it ran)."""
    named = []
    for pid in sorted(pids):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            cmdline = "(gone)"
        named.append(f"{pid} {cmdline.strip()}")
    return named

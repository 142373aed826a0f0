"""The dashboard as a user runs it: `agentx-tui --serve tiny` in a real terminal (tmux), live figures
from real vLLM, then `q`, and nothing left running (the issue's tmux must-show)."""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.procs import descendants, kill_left
from tests.helpers.tmux import Tmux
from tests.helpers.workloads import write_small_agent_workload

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (scripts/test.sh installs it)"),
]

SIZE = (160, 48)  # the full layout: every pane on screen, no scrolling
START_DEADLINE_S = 150.0  # vLLM starts in about 35 s on these machines; slack for a busy one


def _live_figures(screen: str) -> dict[str, str]:
    """The three figures the test waits for, as shown; missing or zero ones are left out."""
    found: dict[str, str] = {}
    if (m := re.search(r"total\s+([\d.]+(?: [KMB])?) tok/s", screen)) and float(m[1].split()[0]) > 0:
        found["total tok/s"] = m[1]
    if m := re.search(r"server\s+(\d+\.\d%) window", screen):
        found["prefix hit rate"] = m[1]
    if m := re.search(r"usage [^\n%]*?(\d+\.\d%)", screen):
        found["KV usage"] = m[1]
    return found


def test_serve_tiny_in_tmux_shows_live_figures_and_q_stops_everything(tmux: Tmux, tmp_path: Path) -> None:
    workload = write_small_agent_workload(tmp_path, steps=6)
    app = f"{sys.executable} -m agentx_tui --serve tiny -w {workload} -u 4 --refresh 0.5"
    status_file = tmux.start(app, tmp_path, *SIZE)
    root = int(tmux.pane("pane_pid"))
    tree: set[int] = set()
    try:
        started = time.monotonic()
        deadline = started + START_DEADLINE_S
        screen, figures = "", {}
        while time.monotonic() < deadline and tmux.pane("pane_dead") != "1":
            screen = tmux.screen()
            figures = _live_figures(screen)
            if len(figures) == 3:
                break
            time.sleep(0.5)
        print(f"live figures {time.monotonic() - started:.1f} s after start: {figures}")  # shown with -s
        assert len(figures) == 3, f"no live figures within {START_DEADLINE_S:.0f} s: {figures}\n{screen}"
        assert "● running" in screen and "serve agentx-tiny" in screen, screen
        # The whole tree now: the app, the vLLM server it launched and that server's own children.
        tree = {root} | descendants(root)
        assert len(tree) >= 2, "the launched vLLM should be a child of agentx-tui"

        quit_at = time.monotonic()
        tmux.quit(status_file, tree)
        print(f"gone {time.monotonic() - quit_at:.1f} s after q")
    finally:
        kill_left(tree)  # only if the test failed: never leave a server behind

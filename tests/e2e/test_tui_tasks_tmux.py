"""Agents, not requests, on the dashboard (docs/metrics.md, "Tasks"): on the built-in simulated engine,
with chat sessions that finish in seconds, the Tasks pane (key 0) comes up within seconds of the first
tasks completing and shows dollars per task and the task time, in a real 80×24 terminal (tmux); then
`q` ends the app, with exit status 0 and nothing left running."""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.procs import descendants, kill_left
from tests.helpers.tmux import Tmux

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (scripts/test.sh installs it)"),
]

SHOW_DEADLINE_S = 60.0  # the simulator starts in a few seconds and chats at 0.2 scale end in seconds
USD_PER_TASK = re.compile(r"\$/task\s+(\$\d+(?:\.\d+)?(?:e-?\d+)?)")
TASK_TIME = re.compile(r"task time p50\s+(\d+(?:\.\d)? s|\d+m \d\ds|\d+h \d\dm)")


def _task_figures(screen: str) -> dict[str, str]:
    """Dollars per task and the task time p50, as shown; missing ones (or 'n/a') are left out."""
    found: dict[str, str] = {}
    if m := USD_PER_TASK.search(screen):
        found["$/task"] = m[1]
    if m := TASK_TIME.search(screen):
        found["task time p50"] = m[1]
    return found


def test_the_tasks_pane_shows_usd_per_task_and_task_time(tmux: Tmux, tmp_path: Path) -> None:
    app = f"{sys.executable} -m agentx_tui -w chat --scale 0.2 --max-think 0 -u 4 --gpu-price 2 --seed 3 --refresh 0.5"
    status_file = tmux.start(app, tmp_path, 80, 24)
    root = int(tmux.pane("pane_pid"))
    tree: set[int] = set()
    try:
        started = time.monotonic()
        screen, figures = "", {}
        while time.monotonic() < started + SHOW_DEADLINE_S and tmux.pane("pane_dead") != "1":
            screen = tmux.screen()
            figures = _task_figures(screen)
            if len(figures) == 2:
                break
            # Maximise the Tasks pane: its key does nothing until a task has completed and it shows.
            tmux("send-keys", "-t", "ui", "0")
            time.sleep(0.5)
        print(f"task figures {time.monotonic() - started:.1f} s after start: {figures}")  # shown with -s
        assert len(figures) == 2, f"no $/task and task time within {SHOW_DEADLINE_S:.0f} s: {figures}\n{screen}"
        assert float(figures["$/task"].lstrip("$")) > 0, screen
        assert "tasks done" in screen, screen
        tree = {root} | descendants(root)  # the shell, the app and the simulator it launched

        tmux.quit(status_file, tree)
    finally:
        kill_left(tree)  # only if the test failed: never leave a simulator behind

"""A real terminal for the dashboard's end-to-end tests: a tmux server of the test's own."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from tests.helpers.procs import wait_gone


class Tmux:
    """One tmux server of our own (its own socket, no user config), so a developer's tmux is untouched."""

    def __init__(self, name: str) -> None:
        self.base = ["tmux", "-L", name, "-f", os.devnull]

    def __call__(self, *args: str) -> str:
        done = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=10, check=True)
        return done.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "ui")

    def pane(self, field: str) -> str:
        return self("display-message", "-p", "-t", "ui", f"#{{{field}}}").strip()

    def start(self, app: str, cwd: Path, columns: int, rows: int) -> Path:
        """Run the shell command `app` in the session "ui", columns × rows, from `cwd`; returns the file the
        pane's shell writes the app's exit status to (tmux's own pane_dead_status is filled only once tmux
        reaps the process, and was seen still empty seconds after the pane died). The pane stays after
        the app exits, so that a failure can show its last screen."""
        status = cwd / "exit-status"
        self(
            "new-session",
            "-d",
            "-s",
            "ui",
            "-x",
            str(columns),
            "-y",
            str(rows),
            "-c",
            str(cwd),
            f"{app}; echo $? > {status}",
        )
        self("set-option", "-t", "ui", "remain-on-exit", "on")
        return status

    def quit(self, status: Path, tree: set[int]) -> None:
        """Press q: the app must exit with status 0 within 60 s, and every process of `tree` (the app and
        what it launched) be gone within 30 s more."""
        self("send-keys", "-t", "ui", "q")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.pane("pane_dead") != "1":
            time.sleep(0.2)
        assert self.pane("pane_dead") == "1", f"the app did not exit after q\n{self.screen()}"
        assert status.read_text().strip() == "0", self.screen()
        left = wait_gone(tree, timeout_s=30)
        assert not left, f"still running after q: {sorted(left)}"

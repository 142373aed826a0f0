"""A real terminal for the dashboard's end-to-end tests: a tmux server of the test's own."""

from __future__ import annotations

import os
import subprocess


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

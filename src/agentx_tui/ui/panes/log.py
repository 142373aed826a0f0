"""⁷ Log: the launched server's log tail and the app's own events, bounded."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import RichLog

from agentx_tui.telemetry.snapshot import Snapshot
from agentx_tui.ui.panes._base import Pane

MAX_LINES = 1000


class LogPane(Pane):
    KEY = 7
    TITLE = "Log"

    def compose(self) -> ComposeResult:
        yield RichLog(id="log", max_lines=MAX_LINES, wrap=True, markup=False, highlight=False)

    def write(self, lines: Iterable[tuple[str, str]]) -> None:
        """Append (kind, text) lines; kind 'event' lines are app events, 'server' the server's log."""
        log = self.query_one("#log", RichLog)
        for kind, text in lines:
            log.write(Text(f"» {text}", style="bold") if kind == "event" else Text(text))

    def show(self, snap: Snapshot) -> None:
        # Lines are written as they arrive (see `write`); nothing to redraw per tick.
        return

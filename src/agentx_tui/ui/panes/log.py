"""⁷ Log: the launched server's log tail and the app's own events, bounded."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import RichLog

from agentx_tui.snapshot import Snapshot
from agentx_tui.ui.panes._base import Pane

MAX_LINES = 1000


class TailLog(RichLog):
    """A RichLog whose new lines repaint the log, not the whole screen.

    `Widget.virtual_size` asks for a layout of the whole screen whenever it changes, so every batch
    of lines cost a layout of all the panes on top of the repaint (a launched server logs a line per
    request). The log's own size never depends on its lines, and its vertical scroll bar is always
    shown (app.tcss), so a repaint and a thumb update suffice.
    """

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._style: Style | None = None

    def watch_virtual_size(self, size: Size) -> None:
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.window_virtual_size = size.height

    @property
    def rich_style(self) -> Style:
        # RichLog asks for this once per visible line per repaint, and each answer walks every
        # ancestor's styles (a third of the log's drawing time). It changes only when styles do.
        if self._style is None:
            self._style = super().rich_style
        return self._style

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._style = None


class LogPane(Pane):
    KEY = 7
    TITLE = "Log"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The lines as text, so that a new width wraps them again (RichLog keeps them drawn).
        self._lines: deque[tuple[str, str]] = deque(maxlen=MAX_LINES)
        self._wrapped_at = 0
        self._follow = True

    def compose(self) -> ComposeResult:
        # min_width: RichLog wraps at 78 columns by default, which a narrower pane then crops.
        yield TailLog(id="log", max_lines=MAX_LINES, wrap=True, markup=False, highlight=False, min_width=20)

    @property
    def tail(self) -> RichLog:
        return self.query_one("#log", RichLog)

    @property
    def ready(self) -> bool:
        """Whether its log is mounted: on a loaded machine the UI clock can tick before it is."""
        return bool(self.query("#log"))

    def write(self, lines: Iterable[tuple[str, str]]) -> None:
        """Append (kind, text) lines; kind 'event' lines are app events, 'server' the server's log."""
        log = self.tail
        # Follow the tail unless the user scrolled up to read.
        self._follow = log.is_vertical_scroll_end
        for item in lines:
            self._lines.append(item)
            log.write(_text(*item), scroll_end=False)
        self._wrapped_at = log.scrollable_content_region.width
        self._to_tail()

    def on_resize(self) -> None:
        if not self.ready:
            return
        log = self.tail
        width = log.scrollable_content_region.width
        if self._lines and self._wrapped_at and width != self._wrapped_at:
            # Wrap again for the new width: rare (a resize), and at most MAX_LINES short lines.
            log.clear()
            for item in self._lines:
                log.write(_text(*item), scroll_end=False)
            self._wrapped_at = width
        # A log that got shorter keeps its newest lines in view.
        self._to_tail()

    def _to_tail(self) -> None:
        if self._follow:
            # force: the write that first overflows the log comes before its scrollbar exists, and
            # an unforced scroll is then refused, leaving the newest lines below the edge.
            self.tail.scroll_end(animate=False, force=True, x_axis=False)

    def show(self, snap: Snapshot) -> None:
        # Lines are written as they arrive (see `write`); nothing to redraw per tick.
        return


def _text(kind: str, text: str) -> Text:
    return Text(f"» {text}", style="bold") if kind == "event" else Text(text)

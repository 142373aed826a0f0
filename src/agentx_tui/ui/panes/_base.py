"""What every pane shares: a key-numbered title, a Snapshot reactive fed from the app, a history; the
layout of the panes of figures over one 0–1 history (`GaugePane`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Sparkline, Static

from agentx_tui.snapshot import Snapshot
from agentx_tui.ui._format import level, series
from agentx_tui.ui._history import History
from agentx_tui.ui.panes._spark import HistoryChart

_SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹"


class Pane(Vertical):
    """A dashboard pane; subclasses render `snapshot` in `show` (called on the UI clock, not per tick)."""

    ALLOW_MAXIMIZE = True
    KEY: ClassVar[int] = 0
    TITLE: ClassVar[str] = ""
    # For a pane shown only when the run has what it shows: when that is, in a few words.
    SHOWN_WHEN: ClassVar[str] = ""

    # repaint=False: a new Snapshot repaints only the widgets whose figures changed, not the whole screen.
    snapshot: reactive[Snapshot | None] = reactive(None, always_update=True, init=False, repaint=False)

    @classmethod
    def pane_id(cls) -> str:
        """Its widget id, by name (`GpuPane` → `pane-gpu`): app.tcss places panes by these, so that
        renumbering a key moves nothing."""
        return "pane-" + cls.__name__.removesuffix("Pane").lower()

    def __init__(self, history: History, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="pane")
        self.history = history
        self.border_title = f"{_SUPERSCRIPT[self.KEY]} {self.TITLE}"

    def watch_snapshot(self, snap: Snapshot | None) -> None:
        if snap is not None and self.is_mounted:
            self.show(snap)

    def on_resize(self) -> None:
        # Some panes lay their text out for the width they have.
        if self.snapshot is not None:
            self.show(self.snapshot)

    def show(self, snap: Snapshot) -> None:
        raise NotImplementedError

    def set_subtitle(self, text: str) -> None:
        # Setting the border text repaints the whole pane even when it is unchanged.
        if self.border_subtitle != text:
            self.border_subtitle = text

    def clear_history(self) -> None:
        """Called after the histories were cleared (key `r`)."""
        if self.snapshot is not None:
            self.show(self.snapshot)


class OptionalPane(Pane):
    """A pane shown only when the run has what it shows (`SHOWN_WHEN`): `show` calls `_activate`, which
    sets `BODY_CLASS` on the body, and app.tcss then shows the pane and gives it its row (one switch
    for both). Hidden, its key does nothing."""

    BODY_CLASS: ClassVar[str]

    def __init__(self, history: History, *, id: str | None = None) -> None:
        super().__init__(history, id=id)
        self._active = False

    @property
    def allow_maximize(self) -> bool:
        return self._active  # the key does nothing while the pane is hidden

    def _activate(self, active: bool) -> None:
        if active == self._active:
            return
        self._active = active
        if isinstance(self.parent, Widget):
            self.parent.set_class(active, self.BODY_CLASS)
        if not active and self.is_attached and self.screen.maximized is self:
            self.screen.minimize()


class GaugePane(Pane):
    """Figures over the history of one 0–1 figure (GPU utilisation, KV usage, prefix hits), the chart
    scaled to 1 (`HistoryChart`): `#<name>-figures` over `#<name>-history` (`GpuPane`: `#gpu-…`)."""

    def __init__(self, history: History, *, id: str | None = None) -> None:
        super().__init__(history, id=id)
        name = self.pane_id().removeprefix("pane-")
        self.figures = FigureLines(id=f"{name}-figures")
        self.chart = HistoryChart(ceiling=1.0, id=f"{name}-history")

    def compose(self) -> ComposeResult:
        yield self.figures
        yield self.chart


def load_style(fraction: float | None, warn: float = 0.75, crit: float = 0.92) -> str:
    """Theme colour for a 0–1 load figure."""
    return {"ok": "$success", "warn": "$warning", "crit": "bold $error", "na": "$text-muted"}[
        level(fraction, warn, crit)
    ]


def label(text: str) -> Content:
    return Content.styled(text, "$text-muted")


def value(text: str, style: str = "bold") -> Content:
    return Content.styled(text, style)


def line(*parts: Content | str) -> Content:
    return Content.assemble(*parts)


def pack(parts: list[Content], width: int, gap: int) -> list[list[Content]]:
    """Parts into lines of at most `width` cells with `gap` cells between parts, breaking only
    between parts: a figure never wraps away from its label, as plain word wrap would do."""
    lines: list[list[Content]] = [[]]
    used = 0
    for part in parts:
        size = part.cell_length + (gap if lines[-1] else 0)
        if lines[-1] and width > 0 and used + size > width:
            lines.append([])
            used, size = 0, part.cell_length
        lines[-1].append(part)
        used += size
    return lines


def flow(parts: list[Content], width: int, gap: str = "  ") -> Content:
    """Figures side by side while they fit in `width`, else on further lines (see `pack`)."""
    return Content("\n").join(Content(gap).join(items) for items in pack(parts, width, len(gap)))


class FigureLines(Static):
    """Text figures that redraw only when their text changed, and re-lay out only when it grew or shrank.

    A plain `Static.update` asks for a layout pass of the whole screen every time; at 2 Hz with a
    500-row table that is most of the UI's CPU.
    """

    def __init__(self, *, id: str | None = None, classes: str = "figures") -> None:
        super().__init__(id=id, classes=classes)
        self._shown: Content | None = None

    def show(self, content: Content) -> None:
        if content == self._shown:
            return
        relayout = self._shown is None or _shape(self._shown, self.size.width) != _shape(content, self.size.width)
        self._shown = content
        self.update(content, layout=relayout)


def _shape(content: Content, width: int) -> tuple[int, bool]:
    """What decides the height: the line count, and whether any line is too long for the width."""
    lines = content.plain.split("\n")
    return len(lines), any(len(text) > width for text in lines)


def plot(spark: Sparkline, history: Iterable[float | None]) -> None:
    """Feed a history chart one sample per column (the newest), skipping charts that are not shown."""
    width = spark.size.width
    if not spark.display or width <= 0:
        return
    data = series(list(history)[-width:])
    if data != spark.data:
        spark.data = data

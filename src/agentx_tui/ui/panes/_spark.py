"""A history chart: Textual's `Sparkline` widget (same data, CSS and colours), drawn cheaply.

Textual's renderable blends a colour and builds a style for every column and partitions the data
with `Fraction`s; with seven wide charts per tick that was a third of the UI's CPU. Here a chart
spans its whole width from the first samples on (each sample stretched over several columns while
there are fewer samples than columns), then runs at one column per sample, newest on the right; a
column's colour comes from eight precomputed levels, and the rows are drawn straight to `Strip`s
(Textual's line API), once per new history, not through a Rich console.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich.console import Console, ConsoleOptions
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.strip import Strip
from textual.widgets import Sparkline

_BARS = "▁▂▃▄▅▆▇█"


class HistoryChart(Sparkline):
    """A history from zero up: a chart scaled from its own minimum would show noise as swings.

    `ceiling` is the least top of the scale: 1.0 for a 0–1 fraction (KV usage, hit rate, GPU
    utilisation), so 3% reads as 3% and not as a full bar; rates scale to their own maximum.
    """

    def __init__(self, *, ceiling: float = 0.0, id: str | None = None, classes: str | None = None) -> None:
        super().__init__([], id=id, classes=classes)
        self.ceiling = ceiling
        self._colours: tuple[Style, Color, Color] | None = None  # base style, low and high colours
        self._drawn: tuple[object, tuple[int, int], list[Strip]] | None = None  # (data, size, rows)

    def notify_style_update(self) -> None:
        # A theme or CSS change: resolve the colours again and redraw.
        super().notify_style_update()
        self._colours = None
        self._drawn = None

    def render_line(self, y: int) -> Strip:
        width, height = self.size
        data = self.data
        drawn = self._drawn
        if drawn is None or drawn[0] is not data or drawn[1] != (width, height):
            if self._colours is None:
                _, base = self.background_colors
                low = base + self.get_component_styles("sparkline--min-color").color
                high = base + self.get_component_styles("sparkline--max-color").color
                self._colours = (self.rich_style, low, high)
            style, low, high = self._colours
            chart = _Chart(list(data or ()), width, max(height, 1), low, high, self.ceiling)
            rows = [Strip(Segment.simplify(row), width).apply_style(style) for row in chart.rows()]
            drawn = self._drawn = (data, (width, height), rows)
        rows = drawn[2]
        return rows[y] if 0 <= y < len(rows) else Strip.blank(width, self.rich_style)


class _Chart:
    def __init__(
        self, data: Sequence[float], width: int, height: int, low: Color, high: Color, ceiling: float = 0.0
    ) -> None:
        data = data[-width:] if width else []
        if 0 < len(data) < width:
            # Too few samples to fill the chart: stretch them rather than leave most of it blank.
            count = len(data)
            data = [data[column * count // width] for column in range(width)]
        self.data = data
        self.width = width
        self.height = height
        self.ceiling = ceiling
        self.styles = [Style(color=low.blend(high, level / 7).rich_color) for level in range(8)]

    def rows(self) -> list[list[Segment]]:
        """The chart's rows, top first, each exactly `width` cells."""
        data = self.data
        levels = len(_BARS) * self.height
        top = max(self.ceiling, *data) if data else self.ceiling
        # Each sample as a height in eighths of a cell, 1..levels (zero, or no data, sits at the bottom).
        heights = [1 + int(min(max(value, 0.0), top) / top * (levels - 1)) if top > 0 else 1 for value in data]
        pad = self.width - len(heights)
        rows: list[list[Segment]] = []
        for row in reversed(range(self.height)):
            segments: list[Segment] = [Segment(" " * pad)] if pad > 0 else []
            floor = row * len(_BARS)
            for eighths in heights:
                part = eighths - floor
                if part <= 0:
                    segments.append(Segment(" "))
                    continue
                char = _BARS[min(part, len(_BARS)) - 1]
                segments.append(Segment(char, self.styles[min(7, eighths * 8 // (levels + 1))]))
            rows.append(segments)
        return rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        for index, segments in enumerate(self.rows()):
            if index:
                yield Segment.line()
            yield from Segment.simplify(segments)

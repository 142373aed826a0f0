"""A history chart: Textual's `Sparkline` widget (same data, CSS and colours), drawn cheaply.

Textual's renderable blends a colour and builds a style for every column and partitions the data
with `Fraction`s; with seven wide charts per tick that was a third of the UI's CPU. Here a chart is
one column per sample, newest on the right (so time runs at one speed whatever the width), and a
column's colour comes from eight precomputed levels.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich.console import Console, ConsoleOptions
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.widgets import Sparkline

_BARS = "▁▂▃▄▅▆▇█"


class HistoryChart(Sparkline):
    def render(self) -> _Chart:
        _, base = self.background_colors
        low = base + self.get_component_styles("sparkline--min-color").color
        high = base + self.get_component_styles("sparkline--max-color").color
        return _Chart(list(self.data or ()), self.size.width, max(self.size.height, 1), low, high)


class _Chart:
    def __init__(self, data: Sequence[float], width: int, height: int, low: Color, high: Color) -> None:
        self.data = data[-width:] if width else []
        self.width = width
        self.height = height
        self.styles = [Style(color=low.blend(high, level / 7).rich_color) for level in range(8)]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        data = self.data
        levels = len(_BARS) * self.height
        top = max(data, default=0.0)
        bottom = min(data, default=0.0)
        extent = top - bottom
        # Each sample as a height in eighths of a cell, 1..levels (a flat series sits at the bottom).
        heights = [1 + int((value - bottom) / extent * (levels - 1)) if extent else 1 for value in data]
        pad = self.width - len(heights)
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
            yield from Segment.simplify(segments)
            if row:
                yield Segment.line()

"""A keyed, sortable table drawn with Textual's line API, for hundreds of live rows.

Why not `DataTable`: any `update_cell` there invalidates the render cache of every cell, and each
visible cell is then re-rendered through Rich (padding, wrapping, style stacking). Measured here at
200×60 with 40 visible rows that was 60–90 ms per redraw, more than the UI's whole CPU budget. This
table keeps one rendered `Strip` per row and re-renders only rows whose cells changed: a tick costs
one string join per changed visible row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


@dataclass(frozen=True)
class Cell:
    """Formatted text plus the raw value it sorts by (unknown values sort last)."""

    sort: tuple[int, Any]
    text: str
    style: str = ""  # a component-class suffix, e.g. "decoding" → session-table--decoding
    right: bool = True


@dataclass(frozen=True)
class Column:
    key: str
    heading: str
    width: int
    right: bool = True


class KeyedTable(ScrollView, can_focus=True):
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "keyed-table--header",
        "keyed-table--cursor",
        "keyed-table--stripe",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "up", show=False),
        Binding("down", "cursor(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
    ]
    DEFAULT_CSS = """
    KeyedTable > .keyed-table--header { text-style: bold; color: $text-primary; }
    KeyedTable > .keyed-table--cursor { background: $primary 30%; }
    KeyedTable > .keyed-table--stripe { background: $foreground 4%; }
    """

    def __init__(self, columns: Sequence[Column], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns = tuple(columns)
        self.rows: dict[str, tuple[Cell, ...]] = {}
        self.order: list[str] = []
        self.cursor = 0
        self.sort_index = 0
        self.sort_reverse = False
        self.adds = 0  # rows ever added: a test's proof that rows are updated, not rebuilt
        # One drawn line per row, with the (row style, width) it was drawn for.
        self._strips: dict[str, tuple[tuple[str, int], Strip]] = {}
        self._style_for: Callable[[str], Style] = lambda name: Style()
        self._width = sum(column.width + 1 for column in self.columns)
        self._frame_styles: dict[str, Style] = {}

    # --- data -----------------------------------------------------------------------------------

    def set_style_resolver(self, resolve: Callable[[str], Style]) -> None:
        """How a cell's `style` name becomes a Rich style (from the theme); forgets drawn rows."""
        self._style_for = resolve
        self._strips.clear()
        self.refresh()

    def update_rows(self, rows: Sequence[tuple[str, tuple[Cell, ...]]]) -> None:
        """Make the table hold exactly `rows`: add new keys, update changed ones in place, drop gone ones."""
        seen: set[str] = set()
        added = False
        for key, cells in rows:
            seen.add(key)
            old = self.rows.get(key)
            if old == cells:
                continue
            if old is None:
                added = True
                self.adds += 1
            self.rows[key] = cells
            self._strips.pop(key, None)
        gone = [key for key in self.rows if key not in seen]
        for key in gone:
            del self.rows[key]
            self._strips.pop(key, None)
        if added or gone or self.sort_index or self.sort_reverse:
            self._sort()
        self.virtual_size = Size(self._width, len(self.order) + 1)
        self.cursor = min(self.cursor, max(len(self.order) - 1, 0))
        self.refresh()

    def cell(self, key: str, column: str) -> Cell:
        return self.rows[key][self._column_index(column)]

    def sort_by(self, column_index: int, reverse: bool) -> None:
        self.sort_index, self.sort_reverse = column_index % len(self.columns), reverse
        self._sort()
        self.refresh()

    def _sort(self) -> None:
        index = self.sort_index
        self.order = sorted(self.rows, key=lambda key: self.rows[key][index].sort, reverse=self.sort_reverse)

    def _column_index(self, column: str) -> int:
        return next(i for i, item in enumerate(self.columns) if item.key == column)

    # --- keys -----------------------------------------------------------------------------------

    def action_cursor(self, delta: int) -> None:
        self._move(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move(self.cursor + direction * max(self.size.height - 2, 1))

    def _move(self, row: int) -> None:
        self.cursor = min(max(row, 0), max(len(self.order) - 1, 0))
        top = int(self.scroll_offset.y)
        visible = max(self.size.height - 1, 1)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + visible:
            self.scroll_to(y=self.cursor - visible + 1, animate=False)
        self.refresh()

    # --- drawing --------------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        # The CSS or the theme changed: resolve the row styles again and redraw every row.
        super().notify_style_update()
        self._frame_styles = {}
        self._strips.clear()

    def _styles(self) -> dict[str, Style]:
        # Resolving a widget's styles costs more than drawing a row: do it once per style change.
        if not self._frame_styles:
            base = self.rich_style
            self._frame_styles = {
                "plain": base,
                "stripe": base + self.get_component_rich_style("keyed-table--stripe"),
                "cursor": base + self.get_component_rich_style("keyed-table--cursor"),
                "header": self.get_component_rich_style("keyed-table--header"),
            }
        return self._frame_styles

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        styles = self._styles()
        if y == 0:
            text = "".join(_fit(c.heading, c.width, c.right) + " " for c in self.columns)
            return Strip([Segment(text, styles["header"])]).crop_extend(0, width, styles["header"])
        index = int(self.scroll_offset.y) + y - 1
        if index >= len(self.order):
            return Strip.blank(width, styles["plain"])
        key = self.order[index]
        kind = "cursor" if index == self.cursor and self.has_focus else ("stripe" if index % 2 else "plain")
        cached = self._strips.get(key)
        if cached is not None and cached[0] == (kind, width):
            return cached[1]
        strip = self._draw(self.rows[key], styles[kind], width)
        self._strips[key] = ((kind, width), strip)
        return strip

    def _draw(self, cells: tuple[Cell, ...], base: Style, width: int) -> Strip:
        segments: list[Segment] = []
        for column, cell in zip(self.columns, cells, strict=True):
            style = base + self._style_for(cell.style) if cell.style else base
            segments.append(Segment(_fit(cell.text, column.width, cell.right) + " ", style))
        if width > self._width:
            segments.append(Segment(" " * (width - self._width), base))
        return Strip(segments, max(width, self._width)).crop(0, width)


def _fit(text: str, width: int, right: bool) -> str:
    text = text[:width]
    return text.rjust(width) if right else text.ljust(width)

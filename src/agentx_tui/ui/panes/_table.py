"""A keyed, sortable table drawn with Textual's line API, for hundreds of live rows.

Why not `DataTable`: any `update_cell` there invalidates the render cache of every cell, and each
visible cell is then re-rendered through Rich (padding, wrapping, style stacking). Measured here at
200×60 with 40 visible rows that was 60–90 ms per redraw, more than the UI's whole CPU budget. This
table holds each row's data as given, formats a row's cells only when the row is drawn (or asked
for), keeps one rendered `Strip` per row, and repaints only the visible rows whose data changed: with
256 sessions a tick formats and draws the few dozen rows on screen, not all of them.
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
    min_width: int | None = None  # may shrink to this when the table is narrower than its columns
    optional: bool = False  # left out when the table is narrower than its columns even after shrinking


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

    def __init__(
        self,
        columns: Sequence[Column],
        format_row: Callable[[Any], tuple[Cell, ...]],
        sort_key: Callable[[Any, int], tuple[int, Any]] | None = None,
        *,
        id: str | None = None,
    ) -> None:
        """`format_row` makes a row's cells from its data; `sort_key(data, column index)` gives what
        the row sorts by without formatting it (by default, the formatted cell's `sort`)."""
        super().__init__(id=id)
        self.columns = tuple(columns)
        self.rows: dict[str, Any] = {}  # key → the row's data, as last given
        self.order: list[str] = []
        self.cursor = 0
        self.sort_index = 0
        self.sort_reverse = False
        self.adds = 0  # rows ever added: a test's proof that rows are updated, not rebuilt
        self._format_row = format_row
        self._sort_key = sort_key or (lambda data, index: format_row(data)[index].sort)
        self._cells: dict[str, tuple[Cell, ...]] = {}  # formatted rows, made when first needed
        self._position: dict[str, int] = {}  # key → index in `order`
        # One drawn line per row, with the (row style, width) it was drawn for.
        self._strips: dict[str, tuple[tuple[str, int], Strip]] = {}
        self._style_for: Callable[[str], Style] = lambda name: Style()
        self._width = sum(column.width + 1 for column in self.columns)
        self._fitted: tuple[int, tuple[int, ...]] = (-1, ())
        self._frame_styles: dict[str, Style] = {}

    # --- data -----------------------------------------------------------------------------------

    def set_style_resolver(self, resolve: Callable[[str], Style]) -> None:
        """How a cell's `style` name becomes a Rich style (from the theme); forgets drawn rows."""
        self._style_for = resolve
        self._strips.clear()
        self.refresh()

    def update_rows(self, rows: Sequence[tuple[str, Any]]) -> None:
        """Make the table hold exactly `rows` (key, data): add new keys, update changed ones in place,
        drop gone ones. Unchanged data (equal to the last given) costs one comparison."""
        seen: set[str] = set()
        added = False
        changed: list[str] = []
        for key, data in rows:
            seen.add(key)
            old = self.rows.get(key)
            if old is data or old == data:
                continue
            if old is None:
                added = True
                self.adds += 1
            self.rows[key] = data
            self._cells.pop(key, None)
            self._strips.pop(key, None)
            changed.append(key)
        gone = [key for key in self.rows if key not in seen]
        for key in gone:
            del self.rows[key]
            self._cells.pop(key, None)
            self._strips.pop(key, None)
        reordered = bool(added or gone or self.sort_index or self.sort_reverse)
        if reordered:
            self._sort()
        self._size_virtually()
        self.cursor = min(self.cursor, max(len(self.order) - 1, 0))
        if reordered:
            self.refresh()
            return
        # Same rows in the same order: repaint only the changed rows that are on screen.
        top = int(self.scroll_offset.y)
        bottom = top + max(self.size.height - 1, 0)
        for key in changed:
            index = self._position[key]
            if top <= index < bottom:
                self.refresh_line(index + 1)  # line 0 is the heading

    def on_resize(self) -> None:
        self._size_virtually()

    def _size_virtually(self) -> None:
        # As wide as the columns after shrinking: no sideways scroll bar when the shrunk columns fit.
        self.virtual_size = Size(sum(w + 1 for w in self._widths(self.size.width) if w), len(self.order) + 1)

    def shown(self, column_index: int) -> bool:
        """Whether the column has room at the table's width (an optional one may not)."""
        return self._widths(self.size.width)[column_index] > 0

    def _widths(self, width: int) -> tuple[int, ...]:
        """Column widths for a table `width` cells wide: where shrinking could not make the columns fit,
        optional columns are left out first (width 0), the last first; then shrinkable columns give
        way, the last first."""
        if self._fitted[0] == width:
            return self._fitted[1]
        widths = [column.width for column in self.columns]
        deficit = self._width - width if width > 0 else 0
        give = sum(c.width - c.min_width for c in self.columns if c.min_width is not None)
        for index in reversed(range(len(widths))):
            if deficit > give and self.columns[index].optional:  # shrinking alone would not do
                deficit -= widths[index] + 1
                widths[index] = 0
        for index in reversed(range(len(widths))):
            if deficit <= 0:
                break
            floor = self.columns[index].min_width
            if floor is not None and widths[index]:
                cut = min(deficit, widths[index] - floor)
                widths[index] -= cut
                deficit -= cut
        self._fitted = (width, tuple(widths))
        return self._fitted[1]

    def cell(self, key: str, column: str) -> Cell:
        return self._row_cells(key)[self._column_index(column)]

    def _row_cells(self, key: str) -> tuple[Cell, ...]:
        cells = self._cells.get(key)
        if cells is None:
            cells = self._cells[key] = self._format_row(self.rows[key])
        return cells

    def sort_by(self, column_index: int, reverse: bool) -> None:
        self.sort_index, self.sort_reverse = column_index % len(self.columns), reverse
        self._sort()
        self.refresh()

    def _sort(self) -> None:
        index, rows, sort_key = self.sort_index, self.rows, self._sort_key
        self.order = sorted(rows, key=lambda key: sort_key(rows[key], index), reverse=self.sort_reverse)
        self._position = {key: position for position, key in enumerate(self.order)}

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
            widths = self._widths(width)
            text = "".join(_fit(c.heading, w, c.right) + " " for c, w in zip(self.columns, widths, strict=True) if w)
            return Strip([Segment(text, styles["header"])]).crop_extend(0, width, styles["header"])
        index = int(self.scroll_offset.y) + y - 1
        if index >= len(self.order):
            return Strip.blank(width, styles["plain"])
        key = self.order[index]
        kind = "cursor" if index == self.cursor and self.has_focus else ("stripe" if index % 2 else "plain")
        cached = self._strips.get(key)
        if cached is not None and cached[0] == (kind, width):
            return cached[1]
        strip = self._draw(self._row_cells(key), styles[kind], width)
        self._strips[key] = ((kind, width), strip)
        return strip

    def _draw(self, cells: tuple[Cell, ...], base: Style, width: int) -> Strip:
        segments: list[Segment] = []
        widths = self._widths(width)
        for width_, cell in zip(widths, cells, strict=True):
            if not width_:  # an optional column with no room
                continue
            style = base + self._style_for(cell.style) if cell.style else base
            segments.append(Segment(_fit(cell.text, width_, cell.right) + " ", style))
        used = sum(w + 1 for w in widths if w)
        if width > used:
            segments.append(Segment(" " * (width - used), base))
        return Strip(segments, max(width, used)).crop(0, width)


def _fit(text: str, width: int, right: bool) -> str:
    text = text[:width]
    return text.rjust(width) if right else text.ljust(width)

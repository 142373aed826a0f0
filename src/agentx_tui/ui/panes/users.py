"""⁵ Users: one DataTable row per agent session slot, updated in place, sortable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable

from agentx_tui.telemetry.snapshot import SessionRow, Snapshot
from agentx_tui.ui._format import NA, compact, seconds
from agentx_tui.ui.panes._base import Pane

# (key, heading, width); widths are fixed so an update never re-measures 500 rows.
COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("user", "user", 6),
    ("state", "state", 8),
    ("step", "step", 6),
    ("context", "context", 7),
    ("ttft", "TTFT", 7),
    ("decode", "tok/s", 6),
    ("tokens", "tokens", 7),
    ("endpoint", "endpoint", 14),
)
_STATE_COLOUR = {
    "decoding": "success",
    "prefill": "accent",
    "tool": "secondary",
    "waiting": "warning",
    "paused": "warning",
    "error": "error",
    "done": "foreground-muted",
}


@dataclass(frozen=True, eq=True)
class Cell:
    """A table cell that shows formatted text but sorts by its raw value (None sorts last)."""

    sort: tuple[int, Any]
    text: Text

    def __rich__(self) -> Text:
        return self.text

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Cell):
            return NotImplemented
        return self.sort < other.sort


def _cell(raw: float | str | None, shown: str, style: Style | None = None, right: bool = True) -> Cell:
    key = (1, 0) if raw is None else (0, raw)
    return Cell(key, Text(shown, style=style or "", justify="right" if right else "left", end=""))


class UsersPane(Pane):
    KEY = 5
    TITLE = "Users"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._rows: dict[str, tuple[Cell, ...]] = {}
        self._sort_index = 0
        self._reverse = False
        self._styles: dict[str, Style] = {}

    def compose(self) -> ComposeResult:
        table: DataTable[Cell] = DataTable(id="users-table", cursor_type="row", zebra_stripes=True)
        for key, heading, width in COLUMNS:
            table.add_column(heading, key=key, width=width)
        yield table

    @property
    def sort_column(self) -> str:
        return COLUMNS[self._sort_index][0]

    @property
    def sort_reverse(self) -> bool:
        return self._reverse

    def cycle_sort(self) -> None:
        self._sort_index = (self._sort_index + 1) % len(COLUMNS)
        self._apply_sort()

    def reverse_sort(self) -> None:
        self._reverse = not self._reverse
        self._apply_sort()

    def restyle(self) -> None:
        """The theme changed: state colours are resolved from it, so rebuild those cells."""
        self._styles = {}
        self._rows = {key: (*cells[:1], _blank(), *cells[2:]) for key, cells in self._rows.items()}
        if self.snapshot is not None:
            self.show(self.snapshot)

    def show(self, snap: Snapshot) -> None:
        table = self.query_one("#users-table", DataTable)
        seen: set[str] = set()
        added = False
        for session in snap.sessions:
            key = str(session.user)
            seen.add(key)
            cells = self._cells(session)
            old = self._rows.get(key)
            if old is None:
                table.add_row(*cells, key=key)
                added = True
            else:
                for (column, _, _), before, after in zip(COLUMNS, old, cells, strict=True):
                    if before != after:
                        table.update_cell(key, column, after)
            self._rows[key] = cells
        for key in [key for key in self._rows if key not in seen]:
            table.remove_row(key)
            del self._rows[key]
        if added or self._sort_index or self._reverse:
            self._apply_sort()
        active = sum(1 for s in snap.sessions if s.state not in ("done", "paused"))
        self.border_subtitle = (
            f"{active}/{len(snap.sessions)} active · sort {COLUMNS[self._sort_index][1]}"
            f"{' ↓' if self._reverse else ' ↑'} (o/O)"
        )

    def _apply_sort(self) -> None:
        self.query_one("#users-table", DataTable).sort(self.sort_column, reverse=self._reverse)

    def _state_style(self, state: str) -> Style:
        style = self._styles.get(state)
        if style is None:
            colour = self.app.theme_variables.get(_STATE_COLOUR.get(state, "foreground"))
            style = Style(color=colour, bold=state == "error")
            self._styles[state] = style
        return style

    def _cells(self, s: SessionRow) -> tuple[Cell, ...]:
        who = f"{s.user}" if s.parent is None else f"{s.parent}›{s.user}"
        return (
            _cell(s.user, who, right=False),
            _cell(s.state, s.state, self._state_style(s.state), right=False),
            _cell(s.step / s.steps_total if s.steps_total else None, f"{s.step}/{s.steps_total}"),
            _cell(s.context_tokens, compact(s.context_tokens)),
            _cell(s.last_ttft_s, seconds(s.last_ttft_s)),
            _cell(s.decode_tokens_per_s, compact(s.decode_tokens_per_s)),
            _cell(s.output_tokens, compact(s.output_tokens)),
            _cell(s.endpoint or None, _short_url(s.endpoint), right=False),
        )


def _blank() -> Cell:
    return Cell((1, 0), Text(""))


def _short_url(url: str) -> str:
    if not url:
        return NA
    parts = urlsplit(url)
    return parts.netloc or url

"""⁵ Users: one table row per agent session slot, updated in place, sortable (o / O)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from rich.style import Style
from textual.app import ComposeResult

from agentx_tui.telemetry.snapshot import SessionRow, Snapshot
from agentx_tui.ui._format import NA, compact, seconds
from agentx_tui.ui.panes._base import Pane
from agentx_tui.ui.panes._table import Cell, Column, KeyedTable

COLUMNS: tuple[Column, ...] = (
    Column("user", "user", 6, right=False),
    Column("state", "state", 8, right=False),
    Column("step", "step", 6),
    Column("context", "context", 7),
    Column("ttft", "TTFT", 7),
    Column("decode", "tok/s", 6),
    Column("tokens", "tokens", 7),
    Column("endpoint", "endpoint", 21, right=False),
)
# Theme variable per session state (resolved when drawn, so a theme change recolours the table).
_STATE_COLOUR = {
    "decoding": "success",
    "prefill": "accent",
    "tool": "secondary",
    "waiting": "warning",
    "paused": "warning",
    "error": "error",
    "done": "foreground-muted",
}


def _cell(raw: float | str | None, shown: str, style: str = "", right: bool = True) -> Cell:
    return Cell((1, 0) if raw is None else (0, raw), shown, style, right)


class UsersPane(Pane):
    KEY = 5
    TITLE = "Users"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._styles: dict[str, Style] = {}
        # The cells last made for each session row: a session in think time does not change, so
        # its row is not formatted again.
        self._made: dict[int, tuple[SessionRow, tuple[Cell, ...]]] = {}

    def compose(self) -> ComposeResult:
        yield KeyedTable(COLUMNS, id="users-table")

    def on_mount(self) -> None:
        self.table.set_style_resolver(self._state_style)

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#users-table", KeyedTable)

    @property
    def sort_column(self) -> str:
        return COLUMNS[self.table.sort_index].key

    def cycle_sort(self) -> None:
        self.table.sort_by(self.table.sort_index + 1, self.table.sort_reverse)
        self._subtitle()

    def reverse_sort(self) -> None:
        self.table.sort_by(self.table.sort_index, not self.table.sort_reverse)
        self._subtitle()

    def restyle(self) -> None:
        """The theme changed: forget the resolved state colours."""
        self._styles = {}
        self.table.set_style_resolver(self._state_style)

    def show(self, snap: Snapshot) -> None:
        made: dict[int, tuple[SessionRow, tuple[Cell, ...]]] = {}
        for session in snap.sessions:
            last = self._made.get(session.user)
            made[session.user] = last if last is not None and last[0] == session else (session, _cells(session))
        self._made = made
        self.table.update_rows([(str(user), cells) for user, (_, cells) in made.items()])
        self._subtitle(snap)

    def _subtitle(self, snap: Snapshot | None = None) -> None:
        snap = snap or self.snapshot
        if snap is None:
            return
        active = sum(1 for s in snap.sessions if s.state not in ("done", "paused"))
        arrow = "↓" if self.table.sort_reverse else "↑"
        heading = COLUMNS[self.table.sort_index].heading
        self.set_subtitle(f"{active}/{len(snap.sessions)} active · sort {heading} {arrow} (o/O)")

    def _state_style(self, state: str) -> Style:
        style = self._styles.get(state)
        if style is None:
            colour = self.app.theme_variables.get(_STATE_COLOUR.get(state, "foreground"))
            style = Style(color=colour, bold=state == "error")
            self._styles[state] = style
        return style


def _cells(s: SessionRow) -> tuple[Cell, ...]:
    who = f"{s.user}" if s.parent is None else f"{s.parent}›{s.user}"
    return (
        _cell(s.user, who, right=False),
        _cell(s.state, s.state, s.state, right=False),
        _cell(s.step / s.steps_total if s.steps_total else None, f"{s.step}/{s.steps_total}"),
        _cell(s.context_tokens, compact(s.context_tokens)),
        _cell(s.last_ttft_s, seconds(s.last_ttft_s)),
        _cell(s.decode_tokens_per_s, compact(s.decode_tokens_per_s)),
        _cell(s.output_tokens, compact(s.output_tokens)),
        _cell(s.endpoint or None, _short_url(s.endpoint), right=False),
    )


def _short_url(url: str) -> str:
    if not url:
        return NA
    return urlsplit(url).netloc or url

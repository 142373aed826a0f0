"""⁵ Users: one table row per agent session slot, updated in place, sortable (o / O)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from rich.style import Style
from textual.app import ComposeResult
from textual.color import Color

from agentx_tui.snapshot import CHILD_ID_BASE, Snapshot, UserRow
from agentx_tui.ui._format import NA, compact, count, percent, seconds
from agentx_tui.ui.panes._base import Pane
from agentx_tui.ui.panes._table import Cell, Column, KeyedTable

COLUMNS: tuple[Column, ...] = (
    Column("user", "user", 6, right=False),
    Column("state", "state", 8, right=False),
    Column("step", "step", 6),
    Column("context", "context", 7),
    Column("ttft", "TTFT", 7),
    # A session's decode speed and interactivity (1 / mean ITL, nearly the same figure) where there is
    # room, and always the user-facing one, E2E-normalized (1 / mean E2E latency per output token, the
    # North Star's per-request figure): at 80 columns the cache's hit share takes their room.
    Column("decode", "tok/s", 6, optional=True),
    Column("interactivity", "1/ITL", 6, optional=True),
    Column("e2e_interactivity", "E2E", 6),
    Column("tokens", "tokens", 7),
    # Of the prompt tokens this session sent again, the share the server still had cached (Σ hit ÷
    # Σ reused, docs/metrics.md §4): low where its context was evicted while it was idle.
    Column("hit", "hit", 4),
    # What the user replays (an AgentX session file), else where it sends: one column, so the table
    # still fits 80 columns.
    Column("where", "session/host", 21, right=False, min_width=9),
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
    "real": "accent",  # a proxied session of a real agent (its `user` cell)
}


class UsersPane(Pane):
    KEY = 5
    TITLE = "Users"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._styles: dict[str, Style] = {}

    def compose(self) -> ComposeResult:
        # The table formats a session's row only when it is drawn: with hundreds of sessions most
        # are off screen, and formatting them all every tick was the pane's largest cost.
        yield KeyedTable(COLUMNS, _cells, _sort_key, id="users-table")

    def on_mount(self) -> None:
        self.table.set_style_resolver(self._state_style)

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#users-table", KeyedTable)

    @property
    def sort_column(self) -> str:
        return COLUMNS[self.table.sort_index].key

    def cycle_sort(self) -> None:
        # The next column shown: one left out at this width is skipped.
        following = (self.table.sort_index + step for step in range(1, len(COLUMNS) + 1))
        index = next(i for i in following if self.table.shown(i % len(COLUMNS)))
        self.table.sort_by(index, self.table.sort_reverse)
        self._subtitle()

    def reverse_sort(self) -> None:
        self.table.sort_by(self.table.sort_index, not self.table.sort_reverse)
        self._subtitle()

    def restyle(self) -> None:
        """The theme changed: forget the resolved state colours."""
        self._styles = {}
        self.table.set_style_resolver(self._state_style)

    def show(self, snap: Snapshot) -> None:
        self.table.update_rows([(str(session.user), session) for session in snap.sessions])
        self._subtitle(snap)

    def _subtitle(self, snap: Snapshot | None = None) -> None:
        snap = snap or self.snapshot
        if snap is None:
            return
        states = snap.session_states
        total = sum(states.values()) if states else len(snap.sessions)
        idle = states.get("done", 0) + states.get("paused", 0) if states else 0
        active = total - idle if states else sum(1 for s in snap.sessions if s.state not in ("done", "paused"))
        shown = f" · showing {len(snap.sessions):,} of {total:,}" if total > len(snap.sessions) else ""
        arrow = "↓" if self.table.sort_reverse else "↑"
        heading = COLUMNS[self.table.sort_index].heading
        self.set_subtitle(f"{active:,}/{total:,} active{shown} · sort {heading} {arrow} (o/O)")

    def _state_style(self, state: str) -> Style:
        style = self._styles.get(state)
        if style is None:
            variables = self.app.theme_variables
            # Some theme colours are translucent (foreground-muted), which Rich cannot draw: blend
            # them onto the surface first.
            colour = Color.parse(variables.get("surface", "black")) + Color.parse(
                variables.get(_STATE_COLOUR.get(state, "foreground"), "white")
            )
            style = Style(color=colour.rich_color, bold=state == "error")
            self._styles[state] = style
        return style


# What each column sorts by, in COLUMNS order: raw values, so sorting formats nothing.
_SORT_VALUES: tuple[Callable[[UserRow], float | str | tuple[bool, int] | None], ...] = (
    lambda s: (not s.real, s.user),  # real agents first
    lambda s: s.state,
    lambda s: s.step / s.steps_total if s.steps_total else None,
    lambda s: s.context_tokens,
    lambda s: s.last_ttft_s,
    lambda s: s.decode_tokens_per_s,
    lambda s: s.interactivity_tokens_per_s,
    lambda s: s.e2e_interactivity_tokens_per_s,
    lambda s: s.output_tokens,
    lambda s: s.prefix_hit_share,
    lambda s: s.name or s.label or s.endpoint or None,
)


def _sort_key(s: UserRow, column: int) -> tuple[int, Any]:
    raw = _SORT_VALUES[column](s)
    return (1, 0) if raw is None else (0, raw)  # unknown values sort last


def _where(s: UserRow) -> str:
    """A real session's own name (an ellipsis where the column cuts it), else its short id (a session
    the proxy inferred), the file a simulated user replays, or the host it sends to."""
    if s.name:
        width = COLUMNS[-1].width
        return s.name if len(s.name) <= width else s.name[: width - 1] + "…"
    return s.label or _short_url(s.endpoint)


def _who(s: UserRow) -> str:
    if s.real:  # a real agent through --proxy: its name (or short id) is in the last column
        return "real" if s.parent is None else "real›"
    # A sub-agent shows as parent›n: its own id is a large number that would say nothing.
    return f"{s.user}" if s.parent is None else f"{s.parent}›{s.user - CHILD_ID_BASE}"


def _cells(s: UserRow) -> tuple[Cell, ...]:
    texts = (
        _who(s),
        s.state,
        f"{s.step}/{s.steps_total}" if s.steps_total else f"{s.step}",  # a real agent's steps are unknown
        count(s.context_tokens),
        seconds(s.last_ttft_s),
        compact(s.decode_tokens_per_s),
        compact(s.interactivity_tokens_per_s),
        compact(s.e2e_interactivity_tokens_per_s),
        count(s.output_tokens),
        percent(s.prefix_hit_share, 0),
        _where(s),
    )
    styles = ("real" if s.real else "", s.state)
    return tuple(
        Cell(_sort_key(s, index), text, styles[index] if index < 2 else "", COLUMNS[index].right)
        for index, text in enumerate(texts)
    )


def _short_url(url: str) -> str:
    if not url:
        return NA
    return urlsplit(url).netloc or url

"""⁹ Fleet: one row per replica when the run has more than three endpoints (docs/scale.md).

Replicas behind a router, or read from the fleet's Prometheus: the aggregate on top, then every
replica, the ones not answering first and the rest by load (KV-cache usage, then running requests),
each with a short KV-usage history. Three endpoints or fewer fit in the KV pane; the pane stays hidden.

It must stay cheap with hundreds of replicas: rows live in a `KeyedTable`, which formats and draws
only the rows on screen and only when their figures changed, and each replica keeps a bounded
history (at most as many samples as the widest history column shows).
"""

from __future__ import annotations

import ipaddress
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any
from urllib.parse import urlsplit

from rich.style import Style
from textual.app import ComposeResult
from textual.color import Color

from agentx_tui.snapshot import EndpointReading, Snapshot
from agentx_tui.ui._format import compact, level, number, percent
from agentx_tui.ui.panes._base import OptionalPane
from agentx_tui.ui.panes._table import Cell, Column, KeyedTable

FLEET_MIN_ENDPOINTS = 4  # from this many endpoints on, the fleet pane is shown
AGGREGATE_KEY = "*"  # the aggregate row's key: no URL looks like it
HISTORY_MAX = 120  # samples kept per replica: the history column is never wider

COLUMNS: tuple[Column, ...] = (
    Column("replica", "replica", 18, right=False, min_width=10),
    Column("kv", "KV", 4),
    Column("running", "run", 4),
    Column("waiting", "wait", 4),
    Column("hit", "hit", 4),
    Column("tokens", "tok/s", 6),
    Column("gpu", "GPU", 4),
    Column("history", "KV history", HISTORY_MAX, right=True, min_width=6),
)
_KV_COLUMN = 1
# The columns before the history, with their one-cell gaps: the history gets the width left over.
_FIXED_WIDTH = sum(column.width + 1 for column in COLUMNS[:-1])
# No full block: a full cell would join the bar in the row above, and rows would read as one block.
_BARS = "▁▂▃▄▅▆▇"
# Theme variable (and boldness) per cell style name; resolved when drawn, so a theme change recolours.
_STYLE_COLOUR: dict[str, tuple[str, bool]] = {
    "aggregate": ("text-primary", True),
    "down": ("error", True),
    "starting": ("warning", False),
    "ok": ("success", False),
    "warn": ("warning", False),
    "crit": ("error", True),
    "na": ("foreground-muted", False),
    "history": ("accent", False),
}


@dataclass(frozen=True)
class FleetRow:
    """What one table row shows; equal rows are not redrawn."""

    name: str
    figures: EndpointReading
    history: tuple[float | None, ...]  # KV usage, oldest first, at most as many as the column shows
    aggregate: bool = False


class FleetPane(OptionalPane):
    KEY = 9
    TITLE = "Fleet"
    SHOWN_WHEN = "over 3 endpoints"
    BODY_CLASS = "-fleet"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._histories: dict[str, deque[float | None]] = {}
        self._recorded_seq: int | None = None
        self._names: tuple[tuple[str, ...], dict[str, str]] = ((), {})
        self._styles: dict[tuple[str, str], Style] = {}

    def compose(self) -> ComposeResult:
        yield KeyedTable(COLUMNS, row_cells, sort_key, id="fleet-table")

    def on_mount(self) -> None:
        self.table.set_style_resolver(self._style)
        # Sorted "by KV" (`sort_key` is the whole load order): with a sort column set, the table
        # re-sorts on every update and repaints once, which is what a fleet whose loads move every
        # tick needs (with none, it repaints changed rows one by one and keeps their order).
        self.table.sort_by(_KV_COLUMN, False)

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#fleet-table", KeyedTable)

    def show(self, snap: Snapshot) -> None:
        endpoints = snap.endpoints
        self._activate(len(endpoints) >= FLEET_MIN_ENDPOINTS)
        if not self._active:
            if self._histories or self.table.rows:
                self._histories.clear()
                self.table.update_rows([])
            return
        self._record(snap)
        width = self._history_width()
        names = self._short_names(endpoints)
        rows: list[tuple[str, FleetRow]] = []
        if snap.aggregate is not None:
            history = _tail(self.history.kv_usage, width)
            rows.append((AGGREGATE_KEY, FleetRow(f"all {len(endpoints)}", snap.aggregate, history, aggregate=True)))
        for endpoint in endpoints:
            history = _tail(self._histories.get(endpoint.url, ()), width)
            rows.append((endpoint.url, FleetRow(names[endpoint.url], endpoint, history)))
        self.table.update_rows(rows)
        down = sum(1 for endpoint in endpoints if not endpoint.up)
        self.set_subtitle(
            f"{len(endpoints)} replicas · {down} down · by KV then running · tok/s = prompt + generation"
            if down
            else f"{len(endpoints)} replicas · by KV then running · tok/s = prompt + generation"
        )

    def clear_history(self) -> None:
        for history in self._histories.values():
            history.clear()
        super().clear_history()

    def _record(self, snap: Snapshot) -> None:
        """One history sample per replica per Snapshot drawn (a resize redraws without recording).

        The pane sees the Snapshots the UI clock draws: every one in a live run (the clock is faster
        than the tick), not all of them in a fast replay, where the history is then sparser."""
        if snap.seq == self._recorded_seq:
            return
        if self._recorded_seq is not None and snap.seq < self._recorded_seq:
            self._histories.clear()  # a replay seeked backwards: the old history no longer leads here
        self._recorded_seq = snap.seq
        present = {endpoint.url for endpoint in snap.endpoints}
        for gone in self._histories.keys() - present:
            del self._histories[gone]  # a replica that left takes its history with it: memory stays bounded
        for endpoint in snap.endpoints:
            history = self._histories.get(endpoint.url)
            if history is None:
                history = self._histories[endpoint.url] = deque(maxlen=HISTORY_MAX)
            history.append(endpoint.kv_cache_usage if endpoint.up else None)

    def _history_width(self) -> int:
        # The history column takes what the others leave (as KeyedTable shrinks it), within its bounds.
        history = COLUMNS[-1]
        return max(history.min_width or 1, min(history.width, self.table.size.width - _FIXED_WIDTH - 1))

    def _short_names(self, endpoints: Sequence[EndpointReading]) -> dict[str, str]:
        urls = tuple(endpoint.url for endpoint in endpoints)
        if urls != self._names[0]:
            self._names = (urls, short_names(urls))
        return self._names[1]

    def _style(self, name: str) -> Style:
        key = (self.app.theme, name)  # per theme: a theme change must not keep the old colours
        style = self._styles.get(key)
        if style is None:
            variable, bold = _STYLE_COLOUR.get(name, ("foreground", False))
            variables = self.app.theme_variables
            # Some theme colours are translucent (foreground-muted): blend them onto the pane's
            # surface, as Textual does, since a terminal colour has no alpha.
            colour = Color.parse(variables.get("surface", "black")) + Color.parse(variables.get(variable, "white"))
            style = self._styles[key] = Style(color=colour.rich_color, bold=bold)
        return style


def _tail(history: Sequence[float | None], count: int) -> tuple[float | None, ...]:
    if len(history) <= count:
        return tuple(history)
    return tuple(islice(history, len(history) - count, None))


def short_names(urls: Sequence[str]) -> dict[str, str]:
    """Each URL's host, less what every replica shares: the port (':8000') and a domain
    ('.vllm.default.svc'), so a narrow column shows what tells replicas apart. Addresses keep all
    their numbers: '10.0.1.10' and '10.0.2.10' share '.10', which is no domain."""
    hosts = [urlsplit(url).netloc or url for url in urls]
    names = hosts
    if len(hosts) > 1:
        ports = {host.rpartition(":")[2] if _port(host) else None for host in hosts}
        if len(ports) == 1 and None not in ports:
            names = [host.rpartition(":")[0] for host in hosts]
        if not any(_is_address(name) for name in names):
            suffix = _common_suffix(names)
            cut = suffix.find(".")
            if cut >= 0:
                names = [name[: len(name) - len(suffix) + cut] for name in names]
    if any(not name for name in names) or len(set(names)) < len(set(hosts)):
        names = hosts  # shortening must never make two replicas look alike
    return dict(zip(urls, names, strict=True))


def _port(host: str) -> bool:
    head, colon, tail = host.rpartition(":")
    return bool(colon) and tail.isdigit() and not head.endswith(":")


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _common_suffix(texts: Sequence[str]) -> str:
    first = texts[0]
    length = 0
    while length < len(first) and all(len(text) > length and text[-1 - length] == first[-1 - length] for text in texts):
        length += 1
    return first[len(first) - length :] if length else ""


def sort_key(row: FleetRow, column: int) -> tuple[int, Any]:
    """The load order, whatever the column: the aggregate, then replicas not answering, then the
    rest by KV usage (whole percents, so noise does not shuffle rows) and running requests, most first."""
    figures = row.figures
    if row.aggregate:
        return (0, ())
    if not figures.up:
        return (1, (figures.url,))
    kv = figures.kv_cache_usage
    return (2, (-round(kv * 100) if kv is not None else 1, -(figures.running or 0.0), figures.url))


def spark(history: Sequence[float | None], width: int) -> str:
    """A 0–1 history as bars, newest on the right; unknown samples blank."""
    bars = [" " if v is None else _BARS[min(len(_BARS) - 1, max(0, int(v * len(_BARS))))] for v in history]
    return "".join(bars[-width:]) if width > 0 else ""


def _sum(*values: float | None) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if len(known) == len(values) else None


def row_cells(row: FleetRow) -> tuple[Cell, ...]:
    f = row.figures
    state = "aggregate" if row.aggregate else _state(f)
    answering = state in ("up", "aggregate")
    kv = f.kv_cache_usage
    texts = (
        (row.name, "" if state == "up" else state),
        (percent(kv, 0), level(kv)),
        (number(f.running), ""),
        (number(f.waiting), "warn" if f.waiting else ""),
        (percent(f.prefix_hit_rate_window, 0), ""),
        (compact(_sum(f.prompt_tokens_per_s, f.generation_tokens_per_s)), ""),
        (percent(f.gpu_utilization, 0), "na" if f.gpu_utilization is None else ""),
        # A replica that is not answering says why where its history would be.
        (spark(row.history, len(row.history)), "history") if answering else (f.status, state),
    )
    key = sort_key(row, 0)
    cells = [Cell(key, text, style, column.right) for column, (text, style) in zip(COLUMNS, texts, strict=True)]
    if not answering:
        cells[-1] = Cell(key, f.status, state, right=False)  # words read from the left, bars from the right
    return tuple(cells)


def _state(figures: EndpointReading) -> str:
    if figures.up:
        return "up"
    return "down" if figures.status.startswith("down") else "starting"

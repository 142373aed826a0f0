"""The Markdown report's tables and lists of figures: cells whose n/a says why, a table with one line per
column and reason under it, a figure's value as a list shows it (a time of day in UTC)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from agentx_tui.report._format import NA, Format, cell, si
from agentx_tui.report._keys import FIGURES, unit
from agentx_tui.report._model import Report
from agentx_tui.report._why import why

# A time of day is a figure whose unit says so (`started_at`, `ended_at`): the JSON keeps the number.
_UNIX_TIME = "unix time, s"

Cell = tuple[str, str | None]  # the text, and why it is n/a (None: it is not)


def escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def grid(head: Sequence[str], rows: Sequence[Sequence[Cell]], row_name: str = "row") -> list[str]:
    """A Markdown table, then one line per column and reason for its n/a cells: which rows, and why."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    reasons: dict[tuple[int, str], list[int]] = {}
    for n, row in enumerate(rows, 1):
        lines.append("| " + " | ".join(escape(text) for text, _ in row) + " |")
        for col, (_, reason) in enumerate(row):
            if reason is not None:
                reasons.setdefault((col, reason), []).append(n)
    if reasons:
        lines.append("")
        for (col, reason), at in sorted(reasons.items()):
            which = "" if len(at) == len(rows) else f" ({row_name} {', '.join(map(str, at))})"
            lines.append(f"- *{head[col]}* n/a{which}: {escape(reason)}.")
    return [*lines, ""]


def table_cell(value: Any, fmt: Format, reason: str | Callable[[], str]) -> Cell:
    """A value as a table cell; n/a with its reason (a function is asked only when the value is n/a)."""
    text = fmt(value)
    if value is not None and text != NA:
        return text, None
    return text, reason if isinstance(reason, str) else reason()


def figure_value(key: str, value: Any, report: Report) -> str:
    """A figure as a list of figures shows it: its value (a time of day in UTC), or n/a and why."""
    if value is None or (isinstance(value, float) and cell(value) == NA):
        return f"n/a ({why(key, report)})"
    if unit(key) == _UNIX_TIME:
        return when(value)
    return cell(value)


def figure_rows(keys: Sequence[str], data: dict[str, Any], report: Report, *, meaning: bool = True) -> list[str]:
    """Figures as table rows: (what it is,) its key, its value (n/a with why), its unit."""
    rows = []
    for key in keys:
        shown = escape(figure_value(key, data.get(key), report))
        words = f"{escape(FIGURES[key].meaning)} | " if meaning and key in FIGURES else ""
        rows.append(f"| {words}{key} | {shown} | {shown_unit(key)} |")
    return rows


def shown_unit(key: str) -> str:
    """A key's unit as the Markdown shows it: a time of day is in UTC here, a number in the JSON."""
    return "UTC" if unit(key) == _UNIX_TIME else unit(key)


def when(ts: Any) -> str:
    if not isinstance(ts, int | float) or isinstance(ts, bool):
        return NA
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def span(data: dict[str, Any], key: str) -> str:
    """A figure's 95% interval as `low–high` (compact), or n/a."""
    low, high = data.get(f"{key}_ci_low"), data.get(f"{key}_ci_high")
    return NA if low is None or high is None else f"{si(low)}–{si(high)}"

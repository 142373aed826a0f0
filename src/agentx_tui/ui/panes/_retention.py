"""The retention curve, live (docs/metrics.md §4, "Where the prefix went"): the hit share of reused prompt
tokens against how long the call's session had been idle before it, one bar per idle-time bucket (0–1,
1–2, 2–5, 5–10, 10–30, 30–60, 60–120, > 120 s), over the run so far; the agents' own idle times (think
p50 ▲ and p90 △) marked on its axis; the evicted share in words. Where the bars fall is where the server
stops holding an idle agent's context: the eviction cliff, and the markers say how much of the agents'
tool time falls past it.

Drawn with Textual's line API like the step and frontier charts (panes/_chart.py): `draw_retention` is a
pure function from a `RetentionView` to rows of (text, role) runs; `RetentionChart` styles them. Bars
differ from the empty buckets by glyph (█ against ·), and a bucket whose server reported no cached
tokens shows `?`, so it reads the same under NO_COLOR.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from agentx_tui.snapshot import IDLE_BUCKETS_S, RetentionRow, Snapshot, idle_place
from agentx_tui.ui._format import NA, percent
from agentx_tui.ui.panes._chart import Run, RunChart

# How the axis writes each bucket's lower edge.
_EDGE_LABELS = ("0", "1", "2", "5", "10", "30", "60", "120")
THINK_P50 = "▲"
THINK_P90 = "△"
EMPTY = "·"  # a bucket no call fell in
UNKNOWN = "?"  # calls, but no cached tokens reported: the hit share is unknown
_PARTS = " ▁▂▃▄▅▆▇█"  # a bar's top cell, in eighths
_GUTTER = 5  # "100%" and the axis
CACHED_TOKENS_HINT = "the server reports no cached_tokens (vLLM: --enable-prompt-tokens-details)"


@dataclass(frozen=True)
class RetentionView:
    """What the chart shows: the run's curve, its idle-time percentiles, the evicted share over the run
    and the rate window, and, when there is nothing to draw, why (`note`)."""

    rows: tuple[RetentionRow, ...] = ()
    evicted_run: float | None = None
    evicted_window: float | None = None
    think_p50_s: float | None = None
    think_p90_s: float | None = None
    note: str | None = None


def retention_view(snap: Snapshot) -> RetentionView:
    """The chart's data from a tick: the client's whole-run curve (a 10-second window holds too few calls
    after a long idle time to draw one), the evicted share of both."""
    client = snap.client
    if client is None:
        return RetentionView(note="no load sent")
    run, window = client.run, client.window
    rows = tuple(row for row in run.retention_curve or () if isinstance(row, RetentionRow))
    note = None
    if client.totals.requests_completed and not client.totals.cached_tokens_reported:
        note = CACHED_TOKENS_HINT
    elif not rows:
        note = "no call after an idle time yet"
    return RetentionView(
        rows=rows,
        evicted_run=run.prefix_evicted_share,
        evicted_window=window.prefix_evicted_share,
        think_p50_s=run.think_s_p50,
        think_p90_s=run.think_s_p90,
        note=note,
    )


def short_seconds(value: float | None) -> str:
    """An idle time, short: '0.4s', '3.2s', '41s', '4m'."""
    if value is None:
        return NA
    if value < 10:
        return f"{value:.1f}s"
    return f"{value:.0f}s" if value < 120 else f"{value / 60:.0f}m"


def words(view: RetentionView, width: int) -> list[Run]:
    """One line: the evicted share over the run (and now), the think-time markers' legend; what does not
    fit the width is left out, the window's share first."""
    parts: list[list[Run]] = [
        [("evicted ", "label"), (percent(view.evicted_run, 0), "value")],
        [(" (now ", "label"), (percent(view.evicted_window, 0), "value"), (")", "label")],
        [(" idle ", "label"), (THINK_P50, "think"), (f"p50 {short_seconds(view.think_p50_s)}", "label")],
        [(" ", "label"), (THINK_P90, "think"), (f"p90 {short_seconds(view.think_p90_s)}", "label")],
    ]
    kept = list(range(len(parts)))
    for dropped in (1, 3, 2):  # "now" first, then p90, then p50: the run's evicted share stays
        if sum(len(text) for i in kept for text, _ in parts[i]) <= width:
            break
        kept.remove(dropped)
    return [run for i in kept for run in parts[i]]


def band_starts(cols: int) -> list[int]:
    """Where each bucket's band begins in `cols` columns (and, last, where the bands end): the width
    shared out as evenly as whole cells allow, so the chart fills its width."""
    return [b * cols // len(IDLE_BUCKETS_S) for b in range(len(IDLE_BUCKETS_S) + 1)]


def _column(idle_s: float, starts: list[int]) -> int:
    """Where an idle time sits on the axis: its bucket's band, linearly inside it."""
    bucket, inside = idle_place(idle_s)
    band = starts[bucket + 1] - starts[bucket]
    return min(starts[bucket] + round(inside * band), starts[-1] - 1)


def draw_retention(view: RetentionView, width: int, height: int) -> list[list[Run]]:
    """The chart as `height` rows of `width` cells: the words, the bars (hit share 0–100%, one band per
    bucket), the axis with the think markers, the bucket edges in seconds. Under four rows, too narrow
    for two cells a band, or with nothing to draw: the words, and why."""
    lines: list[list[Run]] = [[("", "")] for _ in range(max(height, 0))]
    if height <= 0 or width <= 0:
        return lines
    lines[0] = words(view, width)
    cols = width - _GUTTER
    if view.note or height < 4 or cols < 2 * len(IDLE_BUCKETS_S):
        for y, said in enumerate(textwrap.wrap(view.note or "", width, break_on_hyphens=False)[: height - 1], 1):
            lines[y] = [(said, "label")]
        return lines
    starts = band_starts(cols)
    bar_rows = height - 3
    by_bucket = {IDLE_BUCKETS_S.index(row.idle_s_low): row for row in view.rows if row.idle_s_low in IDLE_BUCKETS_S}
    grid = [[(" ", "")] * cols for _ in range(bar_rows)]
    for b in range(len(IDLE_BUCKETS_S)):
        row = by_bucket.get(b)
        start, bar_w = starts[b] + 1, starts[b + 1] - starts[b] - 1  # a cell's gap after each band's tick
        if row is None or row.requests == 0 or row.hit_share is None:
            grid[-1][start + (bar_w - 1) // 2] = (EMPTY if row is None or row.requests == 0 else UNKNOWN, "label")
            continue
        eighths = round(max(0.0, min(1.0, row.hit_share)) * bar_rows * 8)
        eighths = max(eighths, 1)  # calls, none of their reused tokens hit: a floor, not an empty bucket
        for level in range(bar_rows):
            part = min(8, eighths - level * 8)
            if part > 0:
                for column in range(start, start + bar_w):
                    grid[bar_rows - 1 - level][column] = (_PARTS[part], "bar")
    out: list[list[Run]] = [lines[0]]
    for y, cells in enumerate(grid):
        label = "100%" if y == 0 else ("0%" if y == bar_rows - 1 and bar_rows > 2 else "")
        axis = "┤" if label else "│"
        out.append([(label.rjust(_GUTTER - 1), "label"), (axis, "axis"), *cells])
    out.append(_axis(view, starts))
    out.append([(" " * _GUTTER + _edge_labels(starts), "label")])
    return out


def _axis(view: RetentionView, starts: list[int]) -> list[Run]:
    """The x axis, a tick at each bucket's edge, the think markers on it (p50 over p90 where they meet)."""
    cells: list[Run] = [("─", "axis")] * starts[-1]
    for b in range(1, len(IDLE_BUCKETS_S)):
        cells[starts[b]] = ("┴", "axis")
    for value, glyph in ((view.think_p90_s, THINK_P90), (view.think_p50_s, THINK_P50)):
        if value is not None:
            cells[_column(value, starts)] = (glyph, "think")
    return [(" " * (_GUTTER - 1) + "└", "axis"), *cells]


def _edge_labels(starts: list[int]) -> str:
    """Each edge's seconds under its tick, left out where the previous label would be touched."""
    text = [" "] * (starts[-1] + 4)
    end = -1
    for at, label in zip(starts, _EDGE_LABELS, strict=False):
        if at <= end:
            continue
        text[at : at + len(label)] = list(label)
        end = at + len(label)
    return "".join(text).rstrip() + " s"


class RetentionChart(RunChart[RetentionView]):
    """The retention curve; redraws only when its data or its size changed."""

    ROLE_PREFIX = "retention-chart--"
    ROLES = ("axis", "label", "value", "bar", "think")

    def draw(self, data: RetentionView, width: int, height: int) -> list[list[Run]]:
        return draw_retention(data, width, height)

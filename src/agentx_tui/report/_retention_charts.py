"""The retention curve as a picture for the Markdown report's Cache section (docs/metrics.md §4, "Where
the prefix went"), written beside the report with the cache's other picture (report/_cache_charts.py),
with the same primitives (report/_svg.py).

``NAME.retention.svg``: one bar per idle-time bucket (0–1, 1–2, 2–5, 5–10, 10–30, 30–60, 60–120, > 120 s),
its height the hit share of the reused prompt tokens of the calls that came after that long idle, its
calls written over it; the agents' own idle times (think p50 and p90) as dashed lines across the buckets
they fall in. Where the bars fall is where the server stopped holding an idle agent's context.

Deterministic like the other pictures: same report → byte-identical file.
"""

from __future__ import annotations

from agentx_tui.report._charts import FRONTIER_COLOUR, OTHER_COLOUR, Chart, run_line
from agentx_tui.report._model import Report
from agentx_tui.report._svg import MUTED, Box, Linear, Svg, axes, coord, y_title
from agentx_tui.snapshot import IDLE_BUCKETS_S, RetentionRow, idle_place

_LEFT, _RIGHT = 96.0, 830.0


def bucket_label(low: float) -> str:
    """A bucket's idle times: '2–5', '> 120'."""
    i = IDLE_BUCKETS_S.index(low)
    return f"{low:g}–{IDLE_BUCKETS_S[i + 1]:g}" if i + 1 < len(IDLE_BUCKETS_S) else f"> {low:g}"


def _rows(report: Report) -> dict[int, RetentionRow]:
    # A row this version cannot read (a hand-written one) is left out of the picture, not guessed at.
    rows = [row for row in report.retention_curve or () if isinstance(row, RetentionRow)]
    return {IDLE_BUCKETS_S.index(row.idle_s_low): row for row in rows if row.idle_s_low in IDLE_BUCKETS_S}


def position(idle_s: float) -> float:
    """Where an idle time sits on the bucket axis: its bucket's index ± 0.5, linearly inside it."""
    bucket, inside = idle_place(idle_s)
    return bucket - 0.5 + inside


def _subtitle(report: Report) -> str:
    evicted = report.prefix_evicted_share
    return run_line(report, "" if evicted is None else f"{evicted * 100:.1f}% of the reused prompt tokens evicted")


def render_retention_svg(report: Report) -> str:
    """The retention curve with the agents' think times, as SVG text (deterministic)."""
    rows = _rows(report)
    title = "Retention: how long the server kept an idle agent's context"
    svg = Svg(860, 480, title)
    svg.heading(_LEFT, title, _subtitle(report))
    box: Box = (_LEFT, 100.0, _RIGHT, 360.0)  # room above it for the think times' labels
    sx = Linear(-0.5, len(IDLE_BUCKETS_S) - 0.5, box[0], box[2])
    sy = Linear(0.0, 1.0, box[3], box[1])
    x_ticks = [(float(i), bucket_label(low)) for i, low in enumerate(IDLE_BUCKETS_S)]
    y_ticks = [(v / 4, f"{v * 25:g}%") for v in range(5)]
    axes(svg, sx, sy, box, x_ticks, y_ticks)  # first: the grid lies under the bars
    # Under the bars; their labels above the box, clear of the bars': p50's left of its line, p90's right.
    for value, name, dash, anchor, dx in (
        (report.think_s_p50, "p50", "6 4", "end", -4.0),
        (report.think_s_p90, "p90", "2 3", "start", 4.0),
    ):
        if value is None:
            continue
        x = sx(position(value))
        svg.line(x, box[1] - 14, x, box[3], OTHER_COLOUR, 2, dash)
        svg.text(x + dx, box[1] - 18, f"think {name} {value:.3g} s", anchor=anchor, fill=OTHER_COLOUR)
    width = (box[2] - box[0]) / len(IDLE_BUCKETS_S) * 0.7
    for i in range(len(IDLE_BUCKETS_S)):
        row = rows.get(i)
        x = sx(i)
        if row is None or row.requests == 0:
            svg.text(x, box[3] - 8, "no call", anchor="middle", fill=MUTED)
            continue
        calls = f"{row.requests:,} call{'' if row.requests == 1 else 's'}"
        if row.hit_share is None:
            svg.text(x, box[3] - 26, "?", size=16, anchor="middle", fill=MUTED)
            svg.text(x, box[3] - 8, calls, anchor="middle", fill=MUTED)
            continue
        # A bucket of calls that kept nothing still shows a sliver: an empty bucket has no bar at all.
        y = min(sy(max(0.0, min(1.0, row.hit_share))), box[3] - 2)
        svg.add(
            f'<rect x="{coord(x - width / 2)}" y="{coord(y)}" width="{coord(width)}" '
            f'height="{coord(box[3] - y)}" fill="{FRONTIER_COLOUR}"/>'
        )
        label = f"{row.hit_share * 100:.0f}% · {calls}"  # on a white halo: a think line may pass behind it
        svg.text(x, y - 6, label, size=11, anchor="middle", stroke="#ffffff", stroke_width="3", paint_order="stroke")
    if not rows:
        svg.text(
            (box[0] + box[2]) / 2, (box[1] + box[3]) / 2, "no call after an idle time", anchor="middle", fill=MUTED
        )
    y_title(svg, 24, (box[1] + box[3]) / 2, "hit share of reused tokens")
    x_title = "the session's idle time before the call (s)"
    svg.text((box[0] + box[2]) / 2, box[3] + 44, x_title, size=13, anchor="middle")
    notes = (
        "bar: Σ hit ÷ Σ reused prompt tokens of the calls after that long idle (previous call's end → their start)",
        "dashed: the agents' own idle times, p50 and p90: how much of their tool time falls past the cliff",
    )
    for n, note in enumerate(notes):
        svg.text(box[0], box[3] + 80 + 18 * n, note, fill=MUTED)
    return svg.render()


RETENTION_CHART: Chart = (
    "retention",
    "Retention curve: the hit share of reused tokens against the idle time",
    render_retention_svg,
)


def has_retention(report: Report) -> bool:
    """Whether there is a curve to draw: a call came after an idle time."""
    return bool(_rows(report))

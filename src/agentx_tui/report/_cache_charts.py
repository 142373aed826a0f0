"""The Markdown report's "Cache" pictures (docs/metrics.md, "Cache"), written beside the report like the
sweep's and the tasks' (report/_charts.py, report/_task_charts.py), with the same primitives
(report/_svg.py): where the servers' prompt tokens came from (here), and the client's retention curve
(report/_retention_charts.py).

- ``NAME.sources.svg`` (``report.md`` → ``report.sources.svg``): the prompt tokens by source
  (computed, the GPU prefix cache, an offload tier) over the run as one stacked bar, and, for a sweep,
  one bar per point under it: how much of the prompt the cache served as the load grew, and how much
  of that came from the offload tier.

Deterministic like the other pictures: same report → byte-identical file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentx_tui.report._charts import (
    FRONTIER_COLOUR,
    OTHER_COLOUR,
    Chart,
    markdown_images,
    run_line,
    write_charts,
)
from agentx_tui.report._model import Report
from agentx_tui.report._retention_charts import RETENTION_CHART, has_retention
from agentx_tui.report._svg import MUTED, Svg, coord
from agentx_tui.snapshot import Figures, PointFigures

GPU_CACHE_COLOUR = "#2b8a3e"
# The sources, in the order their segments are drawn: report key, words, colour.
SOURCES = (
    ("prompt_share_computed", "computed (prefilled)", OTHER_COLOUR),
    ("prompt_share_gpu_cache", "GPU prefix cache", GPU_CACHE_COLOUR),
    ("prompt_share_offload", "offload tier (KV connector)", FRONTIER_COLOUR),
)
_LEFT, _RIGHT = 150.0, 830.0
_BAR, _GAP = 26.0, 12.0


def _shares(figures: Figures) -> tuple[float, float, float] | None:
    values = [getattr(figures, key) for key, _, _ in SOURCES]
    if any(v is None for v in values):
        return None
    return values[0], values[1], values[2]


def _rows(report: Report) -> list[tuple[str, tuple[float, float, float]]]:
    """(label, shares) for the run and each point that knows them, in the points' order."""
    rows = []
    if (whole := _shares(report)) is not None:
        rows.append(("whole run", whole))
    for point in report.points or ():
        # A point this version cannot read (a hand-written one) is left out, not guessed at.
        if isinstance(point, PointFigures) and (shares := _shares(point)) is not None:
            rows.append((f"{point.users} users", shares))
    return rows


def _subtitle(report: Report) -> str:
    offload = ""
    if report.kv_offload_cpu:
        size = report.kv_offload_cpu_bytes
        offload = "KV offload to CPU memory" + (f": {size / 1e9:,.0f} GB" if size is not None else "")
    elif report.kv_offload_cpu is False:
        offload = "no KV offload"
    return run_line(report, offload)


def render_sources_svg(report: Report) -> str:
    """The prompt tokens by source as stacked bars (the run's, then each point's), as SVG text."""
    rows = _rows(report)
    title = "Where the prompt tokens came from: computed, the GPU prefix cache, an offload tier"
    height = int(150 + max(len(rows), 1) * (_BAR + _GAP))
    svg = Svg(880, height, title)
    svg.heading(24, title, _subtitle(report))
    top = 72.0
    if not rows:
        svg.text(440, top + 30, "not exported by the servers (vLLM ≥ 0.16: prompt_tokens_by_source)", anchor="middle")
        return svg.render()
    span = _RIGHT - _LEFT
    for i, (name, shares) in enumerate(rows):
        y = top + i * (_BAR + _GAP)
        svg.text(_LEFT - 10, y + _BAR / 2 + 4, name, anchor="end", font_weight="bold" if i == 0 else "normal")
        x = _LEFT
        for (_, _, colour), share in zip(SOURCES, shares, strict=True):
            width = max(share, 0.0) * span
            if width <= 0:
                continue
            svg.add(
                f'<rect x="{coord(x)}" y="{coord(y)}" width="{coord(width)}" height="{coord(_BAR)}" fill="{colour}"/>'
            )
            if width >= 44:  # the share inside its segment, where it fits
                svg.text(x + width / 2, y + _BAR / 2 + 4, f"{share:.0%}", anchor="middle", fill="#ffffff")
            x += width
    bottom = top + len(rows) * (_BAR + _GAP)
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        tx = _LEFT + tick * span
        svg.line(tx, bottom - _GAP + 4, tx, bottom - _GAP + 9, MUTED)
        svg.text(tx, bottom + 10, f"{tick:.0%}", anchor="middle", fill=MUTED)
    svg.text(
        (_LEFT + _RIGHT) / 2,
        bottom + 32,
        "share of the prompt tokens (each bar sums to 100%)",
        size=13,
        anchor="middle",
    )
    x = _LEFT
    for _, words, colour in SOURCES:
        svg.add(f'<rect x="{coord(x)}" y="{coord(bottom + 46)}" width="14" height="14" fill="{colour}"/>')
        svg.text(x + 20, bottom + 58, words)
        x += 220
    return svg.render()


SOURCES_CHART: Chart = (
    "sources",
    "Prompt tokens by source: computed, the GPU prefix cache, an offload tier",
    render_sources_svg,
)
# Both of the Cache section's pictures, in their order (a report's, those it has data for).
CACHE_CHARTS: tuple[Chart, ...] = (SOURCES_CHART, RETENTION_CHART)


def _charts_of(report: Report) -> tuple[Chart, ...]:
    """The cache pictures `report` has data for: its sources when known, its retention curve when a call
    came after an idle time."""
    wanted = {SOURCES_CHART: bool(_rows(report)), RETENTION_CHART: has_retention(report)}
    return tuple(chart for chart in CACHE_CHARTS if wanted[chart])


def write_cache_charts(report_path: Path, report: Report) -> list[Path]:
    """Write the cache pictures beside `report_path` and return their paths; none (and nothing written)
    when there is nothing to draw. OSError propagates: the caller words it like the report's."""
    charts = _charts_of(report)
    return write_charts(report_path, report, charts) if charts else []


def cache_markdown_images(paths: Sequence[Path]) -> list[str]:
    """One Markdown image line per cache picture, linked relative to the report (beside it)."""
    return markdown_images(paths, CACHE_CHARTS)

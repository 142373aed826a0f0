"""Pictures of a run's tasks for the Markdown report (docs/metrics.md, "Tasks"): SVG files written beside
the report, like the sweep's (report/_charts.py), with the same primitives (report/_svg.py).

- ``NAME.steps.svg``: the step curve: TTFT p50/p90, E2E p50/p90 and the mean context (prompt tokens)
  against the step, one panel each (each its own scale: a first token takes a fraction of what a whole
  answer takes, and context is in tokens). The steps are the curve's rows, evenly spaced: 1 to 8 alone,
  then 9–16, 17–32, … (measure/tasks.py);
- ``NAME.task_time.svg``: how long the completed tasks took, one bar per edge of the 1-2-5 scale
  (`task_s_histogram`), empty edges between the shortest and the longest drawn as empty bars.

Deterministic like the sweep's pictures: same report → byte-identical files.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

from agentx_tui.report._charts import (
    FRONTIER_COLOUR,
    OTHER_COLOUR,
    Chart,
    chart_paths,
    markdown_images,
    run_line,
    write_charts,
)
from agentx_tui.report._model import Report
from agentx_tui.report._svg import MUTED, Box, Linear, Svg, axes, coord, labelled, nice_ticks, y_title
from agentx_tui.snapshot import StepRow

CONTEXT_COLOUR = "#2b8a3e"
_LEFT, _RIGHT = 96.0, 830.0


def _steps(report: Report) -> list[StepRow]:
    # A row this version cannot read (a hand-written one) is left out of the picture, not guessed at.
    return [row for row in report.step_curve or () if isinstance(row, StepRow)]


def step_label(row: StepRow) -> str:
    return str(row.step) if row.step_last == row.step else f"{row.step}–{row.step_last}"


def _subtitle(report: Report, *more: str) -> str:
    done = report.tasks_completed
    return run_line(report, "" if done is None else f"{done} task{'' if done == 1 else 's'} completed", *more)


# --- the step curve ---------------------------------------------------------------------------------

_Series = tuple[str, Callable[[StepRow], float | None], str, str]  # label, value, colour, dash


def render_steps_svg(report: Report) -> str:
    """TTFT, E2E and context against the step, one panel each, as SVG text (deterministic)."""
    rows = _steps(report)
    title = "Step curve: latency and context against the step in the agent's loop"
    svg = Svg(860, 720, title)
    svg.heading(_LEFT, title, _subtitle(report))
    if not rows:
        svg.text((_LEFT + _RIGHT) / 2, 300, "no completed call", anchor="middle", fill=MUTED)
        return svg.render()
    sx = Linear(-0.5, len(rows) - 0.5, _LEFT, _RIGHT)
    x_ticks = [(float(i), step_label(row)) for i, row in enumerate(rows)]
    panels: tuple[tuple[str, Sequence[_Series]], ...] = (
        (
            "TTFT (s)",
            (
                ("TTFT p90", lambda r: r.ttft_p90_s, FRONTIER_COLOUR, ""),
                ("TTFT p50", lambda r: r.ttft_p50_s, FRONTIER_COLOUR, "6 4"),
            ),
        ),
        (
            "E2E latency (s)",
            (
                ("E2E p90", lambda r: r.e2e_p90_s, OTHER_COLOUR, ""),
                ("E2E p50", lambda r: r.e2e_p50_s, OTHER_COLOUR, "6 4"),
            ),
        ),
        ("context (prompt tokens)", (("mean context", lambda r: r.context_tokens_mean, CONTEXT_COLOUR, ""),)),
    )
    top, height, gap = 78.0, 150.0, 40.0
    for n, (axis_title, series) in enumerate(panels):
        y0 = top + n * (height + gap)
        box: Box = (_LEFT, y0, _RIGHT, y0 + height)
        values = [v for _, value, _, _ in series for row in rows if (v := value(row)) is not None]
        y_ticks = nice_ticks(values, 4)
        sy = Linear(y_ticks[0], y_ticks[-1], box[3], box[1])
        axes(svg, sx, sy, box, x_ticks, labelled(y_ticks))
        y_title(svg, 24, (box[1] + box[3]) / 2, axis_title)
        for _, value, colour, dash in series:
            _line(svg, sx, sy, [value(row) for row in rows], colour, dash)
        if not values:
            svg.text((box[0] + box[2]) / 2, (box[1] + box[3]) / 2, "not measured", anchor="middle", fill=MUTED)
    bottom = top + 3 * height + 2 * gap
    svg.text((_LEFT + _RIGHT) / 2, bottom + 40, "step (a call's place in its agent's loop)", size=13, anchor="middle")
    y = bottom + 72
    x = _LEFT
    for _, series in panels:
        for label, _, colour, dash in series:
            svg.line(x, y - 4, x + 30, y - 4, colour, 2, dash)
            svg.text(x + 36, y, label)
            x += 130
    svg.text(_LEFT, y + 22, "each column: the completed calls at that step (steps past 8 are grouped)", fill=MUTED)
    return svg.render()


def _line(
    svg: Svg,
    sx: Callable[[float], float],
    sy: Callable[[float], float],
    values: Sequence[float | None],
    colour: str,
    dash: str,
) -> None:
    """A line through the known values, broken where one is missing, with a dot on each."""
    run: list[tuple[float, float]] = []
    for i, v in enumerate([*values, None]):
        if v is None:
            svg.polyline(run, colour, 2, dash)
            run = []
            continue
        run.append((sx(i), sy(v)))
        svg.circle(sx(i), sy(v), 3, fill="#ffffff" if dash else colour, stroke=colour)


# --- the task-time distribution ---------------------------------------------------------------------

_EDGES = tuple(m * 10.0**e for e in range(-1, 6) for m in (1, 2, 5))  # the 1-2-5 scale of measure/tasks.py


def _bars(report: Report) -> list[tuple[float, int]]:
    """(upper edge s, tasks) from the shortest bar to the longest, the empty edges between filled with 0."""
    counts = {bar.upper_s: bar.tasks for bar in report.task_s_histogram or ()}
    if not counts:
        return []
    lo, hi = min(counts), max(counts)
    edges = sorted({e for e in _EDGES if lo <= e <= hi} | set(counts))
    return [(edge, counts.get(edge, 0)) for edge in edges]


def bar_label(edge: float) -> str:
    """A bar's range of seconds: from the scale's edge below it (exclusive) to its own, `2–5`; `≤0.1` first."""
    below = [e for e in _EDGES if e < edge]
    return f"{below[-1]:,g}–{edge:,g}" if below else f"≤{edge:,g}"


def render_task_time_svg(report: Report) -> str:
    """The completed tasks' wall times as bars, as SVG text (deterministic)."""
    bars = _bars(report)
    title = "Task time: how long the completed tasks took"
    svg = Svg(860, 440, title)
    task_times = [
        f"{name} {value:.3g} s" for name in ("p50", "p90") if (value := report.figure(f"task_s_{name}")) is not None
    ]
    svg.heading(_LEFT, title, _subtitle(report, *task_times))
    box: Box = (_LEFT, 78.0, _RIGHT, 338.0)
    if not bars:
        svg.text((box[0] + box[2]) / 2, 200, "no task completed", anchor="middle", fill=MUTED)
        return svg.render()
    top = max(n for _, n in bars)
    y_ticks = _count_ticks(top)
    sy = Linear(y_ticks[0], y_ticks[-1], box[3], box[1])
    sx = Linear(-0.5, len(bars) - 0.5, box[0], box[2])
    x_ticks = [(float(i), bar_label(edge)) for i, (edge, _) in enumerate(bars)]
    axes(svg, sx, sy, box, x_ticks, labelled(y_ticks))  # first: the grid lies under the bars
    width = min(60.0, (box[2] - box[0]) / len(bars) * 0.8)
    for i, (_, n) in enumerate(bars):
        if n > 0:
            x, y = sx(i), sy(n)
            svg.add(
                f'<rect x="{coord(x - width / 2)}" y="{coord(y)}" width="{coord(width)}" '
                f'height="{coord(box[3] - y)}" fill="{FRONTIER_COLOUR}"/>'
            )
    y_title(svg, 24, (box[1] + box[3]) / 2, "tasks")
    x_title = "task wall time (s)"
    svg.text((box[0] + box[2]) / 2, box[3] + 44, x_title, size=13, anchor="middle")
    svg.text(box[0], box[3] + 80, "a task: one session tree, first call sent → last call ended", fill=MUTED)
    return svg.render()


def _count_ticks(top: int) -> list[float]:
    """Whole-number ticks from 0 past `top`: tasks come whole."""
    ticks = nice_ticks([float(top)], 4)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    if step >= 1:
        return ticks
    return [float(i) for i in range(math.ceil(top) + 2)]


# --- files and Markdown -----------------------------------------------------------------------------

TASK_CHARTS: tuple[Chart, ...] = (
    ("steps", "Step curve: TTFT, E2E and context against the step", render_steps_svg),
    ("task_time", "Task time: the completed tasks' wall times", render_task_time_svg),
)


def task_chart_paths(report_path: Path) -> list[Path]:
    """``report.md`` → ``report.steps.svg``, ``report.task_time.svg``."""
    return chart_paths(report_path, TASK_CHARTS)


def write_task_charts(report_path: Path, report: Report) -> list[Path]:
    """Write the task pictures beside `report_path` and return their paths; none (and nothing written)
    when no task completed. OSError propagates: the caller words it like the report's own."""
    return write_charts(report_path, report, TASK_CHARTS) if report.tasks_completed else []


def task_markdown_images(paths: Sequence[Path]) -> list[str]:
    """One Markdown image line per task picture, linked relative to the report (beside it)."""
    return markdown_images(paths, TASK_CHARTS)

"""⁰ Tasks: agents, not requests — what one agent's piece of work took (docs/metrics.md, "Tasks").

Shown once a task has completed (`Snapshot.tasks`); before that the layout is as if it were not there.
The figures are the whole run's, over the completed tasks only: how many are done, running and failed,
the task time and what filled it (the model, or tools and thinking), steps, tokens and dollars per
task, tasks per hour per GPU, how much of what a task sent again its server still had cached; then
the step curve: latency (TTFT p50, E2E p50 and p90) and context against the step, one column band per
row of the curve (steps 1…8 alone, then 9–16, 17–32, …).

The chart is drawn with Textual's line API, like the frontier chart (panes/frontier.py): the series
differ by glyph (× ● ○ █), not only by colour, so it reads the same under NO_COLOR and the mono theme.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.content import Content

from agentx_tui.snapshot import Snapshot, StepRow, TaskReading
from agentx_tui.ui._format import NA, compact, money, number, percent
from agentx_tui.ui.panes._base import FigureLines, OptionalPane, flow, label, line, value
from agentx_tui.ui.panes._chart import Run, RunChart
from agentx_tui.ui.panes.frontier import nice_scale

# Series glyphs: told apart by shape, so NO_COLOR and the mono theme read the same as colour does.
TTFT = "×"
E2E_P50 = "●"
E2E_P90 = "○"
WHISKER = "│"  # E2E from p50 up to p90, in the same column
CONTEXT = "█"
MODEL = "█"  # the split bar: the model's share, then the rest in a lighter shade
REST = "░"
_PARTS = " ▁▂▃▄▅▆▇█"  # a context bar's top cell, in eighths


# --- words ----------------------------------------------------------------------------------------


def task_time(seconds: float | None) -> str:
    """A task's wall time, short: '8.4 s', '4m 12s', '1h 05m'."""
    if seconds is None:
        return NA
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def usd_per_task(usd: float | None) -> str:
    """Dollars per task: '$0.0123', and three significant digits below a cent ('$0.000936')."""
    if usd is None or usd >= 0.01:
        return money(usd)
    return f"${usd:.3g}"


def bucket_label(row: StepRow) -> str:
    """The step curve row's steps: '3', '9–16'."""
    return str(row.step) if row.step == row.step_last else f"{row.step}–{row.step_last}"


def split_bar(share: float | None, width: int) -> Content:
    """The model's share of the task time as █ and the rest (tools and thinking) as ░: `width` cells."""
    if share is None or width <= 0:
        return Content(" " * max(width, 0))
    model = min(width, max(0, round(share * width)))
    return Content.assemble(
        Content.styled(MODEL * model, "$accent"), Content.styled(REST * (width - model), "$secondary")
    )


def figure_lines(tasks: TaskReading, width: int) -> Content:
    """The task figures, flowed to `width`: counts and time, the time's split, then per task."""
    failed_style = "bold $text-warning" if tasks.tasks_failed else "bold"
    counts = line(
        label("tasks done "),
        value(f"{tasks.tasks_completed}", "bold $accent"),
        label(" · running "),
        value(f"{tasks.tasks_running}"),
        label(" · failed "),
        value(f"{tasks.tasks_failed}", failed_style),
    )
    times = line(
        label("task time p50 "),
        value(task_time(tasks.task_s_p50), "bold $accent"),
        label("  p90 "),
        value(task_time(tasks.task_s_p90)),
    )
    share = tasks.task_model_share
    rest = None if share is None else max(0.0, 1.0 - share)
    split = line(
        label("model "),
        value(percent(share, 0)),
        " ",
        split_bar(share, min(20, max(4, width - 32))),
        " ",
        label("tools & thinking "),
        value(percent(rest, 0)),
    )
    usd = tasks.usd_per_task
    per_hour = tasks.tasks_per_hour_per_gpu
    per_task = [
        line(label("steps/task "), value(number(tasks.steps_per_task_mean, 1))),
        line(label("tokens/task "), value(compact(tasks.tokens_per_task_mean))),
        line(label("output/task "), value(compact(tasks.output_tokens_per_task_mean))),
        # Never a made-up figure: without a price (or a GPU count) these say n/a.
        line(label("$/task "), value(usd_per_task(usd), "bold $accent") if usd is not None else label(NA)),
        line(label("tasks/h/GPU "), value(_rate(per_hour)) if per_hour is not None else label(NA)),
        # How well the server kept each task's context (Σ hit ÷ Σ reused per task): the mean, and the
        # tenth of the tasks that kept least (p10).
        line(
            label("cache hit/task "),
            value(percent(tasks.task_prefix_hit_share_mean, 0)),
            label(" p10 "),
            value(percent(tasks.task_prefix_hit_share_p10, 0)),
        ),
    ]
    return flow([counts, times, split, *per_task], width)


def _rate(value: float) -> str:
    """Three significant digits, without an exponent: '7.9', '0.0123', '9.00 K'."""
    return compact(value) if value >= 1000 else f"{value:.3g}"


def legend(width: int) -> Content:
    parts = [
        line(Content.styled(TTFT, "bold $primary"), label(" TTFT p50")),
        line(Content.styled(E2E_P50, "bold $accent"), label(" E2E p50")),
        line(Content.styled(WHISKER + E2E_P90, "$accent"), label(" E2E p90")),
        line(Content.styled(CONTEXT, "$secondary"), label(" mean context")),
        label("x: step"),
    ]
    return flow(parts, width)


# --- the pure drawing: step rows → rows of (text, role) runs ----------------------------------------


def _seconds_tick(value: float) -> str:
    if value == 0:
        return "0"
    if value < 1:
        return f"{value * 1000:.0f} ms"
    return f"{value:g} s" if value < 100 else f"{value / 60:.3g} min"


def _tokens_tick(value: float) -> str:
    return compact(value, 2)


def latency_scale(highest: float, rows: int) -> tuple[int, float, float]:
    """(rows used, top, step) of the latency axis: the lowest round top (1, 2, 2.5 or 5 × 10ⁿ steps)
    at or above `highest` whose ticks each fall exactly on a row, at least two rows apart and eight at
    most; at the same top, the most ticks. A row or two may be left over where that gives a lower top
    or more ticks (a tall chart only: a short one needs every row)."""
    value = highest * 1.05 if highest > 0 else 1.0  # headroom: the highest marker off the frame
    best: tuple[float, int, int, float] | None = None  # (top, -steps, -rows used, step)
    for used in (rows, rows - 1, rows - 2) if rows >= 8 else (rows,):
        intervals = used - 1
        for count in range(1, min(8, intervals // 2) + 1):
            if intervals % count:
                continue
            raw = value / count
            magnitude = 10.0 ** math.floor(math.log10(raw))
            step = next(m * magnitude for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * magnitude >= raw * 0.999)
            candidate = (step * count, -count, -used, step)
            if best is None or candidate < best:
                best = candidate
    if best is None:  # too few rows for two ticks: one step from 0 to the top
        top, step = nice_scale(value, 1)
        return rows, top, step
    return -best[2], best[0], best[3]


def draw_steps(rows: Sequence[StepRow], width: int, height: int) -> list[list[Run]]:
    """The step curve as `height` rows of `width` cells: latency markers on top (seconds, y labels on
    the left), the mean context as bars under them, then the x axis with one band per step row."""
    blank = [[(" " * width, "")] for _ in range(height)]
    if width < 20 or height < 5:
        return blank
    context_h = max(1, min(4, (height - 1) // 5))  # context bar rows
    latencies = [v for r in rows for v in (r.ttft_p50_s, r.e2e_p50_s, r.e2e_p90_s) if v is not None]
    contexts = [r.context_tokens_mean for r in rows if r.context_tokens_mean is not None]
    latency_h, top, step = latency_scale(max(latencies, default=0.0), height - 2 - context_h)
    context_h = height - 2 - latency_h  # rows the latency scale left over go to the bars
    # The bars reach their area's top at the largest mean context, which labels them.
    context_top = max(contexts, default=0.0)
    y_labels: dict[int, str] = {}

    def py(seconds: float) -> int:
        return min(latency_h - 1, max(0, round((1 - seconds / top) * (latency_h - 1))))

    for index in range(round(top / step) + 1):
        y_labels.setdefault(py(step * index), _seconds_tick(step * index))
    context_label = _tokens_tick(context_top) if contexts else ""
    gutter = max([len(text) for text in y_labels.values()] + [len(context_label), 3]) + 1
    cols = width - gutter - 1
    count = len(rows)
    band = cols // count if count else cols
    if band < 2:  # too many rows for the width: the first ones that fit
        count, band = cols // 2, 2
        rows = rows[:count]

    grid: list[list[Run]] = [[(" ", "")] * cols for _ in range(latency_h + context_h)]
    ticks: list[tuple[int, str, int]] = []  # (column, label, band width)
    for index, row in enumerate(rows):
        start = index * band
        first = start + (band - 2) // 2 if band >= 3 else start  # the band's two columns: TTFT, E2E
        e2e = first + 1 if band >= 3 else first
        ticks.append((e2e, bucket_label(row), band))
        # The context bar under the pair: two cells, or half the band where bands are wide.
        bar_w = e2e - first + 1 if band < 6 else band // 2
        bar_start = max(start, first - (bar_w - 2) // 2)
        if row.e2e_p50_s is not None and row.e2e_p90_s is not None:
            for y in range(py(row.e2e_p90_s) + 1, py(row.e2e_p50_s)):
                grid[y][e2e] = (WHISKER, "e2e-p90")
        if row.e2e_p90_s is not None:
            grid[py(row.e2e_p90_s)][e2e] = (E2E_P90, "e2e-p90")
        if row.ttft_p50_s is not None and (first != e2e or grid[py(row.ttft_p50_s)][first][1] == ""):
            grid[py(row.ttft_p50_s)][first] = (TTFT, "ttft")
        if row.e2e_p50_s is not None:
            grid[py(row.e2e_p50_s)][e2e] = (E2E_P50, "e2e-p50")
        if row.context_tokens_mean is not None and context_top > 0:
            eighths = max(1, round(row.context_tokens_mean / context_top * context_h * 8))
            for level in range(context_h):
                part = min(8, eighths - level * 8)
                if part > 0:
                    for column in range(bar_start, bar_start + bar_w):
                        grid[latency_h + context_h - 1 - level][column] = (_PARTS[part], "context")
    if not rows:
        text = "no step completed yet"[:cols]
        offset = (cols - len(text)) // 2
        for i, char in enumerate(text):
            grid[latency_h // 2][offset + i] = (char, "label")

    out: list[list[Run]] = []
    for y, cells in enumerate(grid):
        if y < latency_h:
            text, axis = y_labels.get(y, ""), "┤" if y in y_labels else "│"
        else:
            first_context = y == latency_h
            text = context_label if first_context else ("ctx" if y == latency_h + context_h - 1 else "")
            axis = "┤" if first_context and context_label else "│"
        out.append([(text.rjust(gutter - 1), "label"), (axis, "axis"), *cells, (" ", "")])

    axis_line = ["─"] * cols
    labels = [" "] * (cols + 1)
    end = -1
    for column, text, room in ticks:
        axis_line[column] = "┬"
        shown = text if len(text) < room or len(text) == 1 else f"{text.split('–')[0]}…"
        begin = column - (len(shown) - 1) // 2
        if begin <= end or begin < 0 or begin + len(shown) > cols + 1:
            continue  # no room beside the previous label: this band goes unlabelled
        labels[begin : begin + len(shown)] = list(shown)
        end = begin + len(shown)
    out.append([(" " * (gutter - 1) + "└" + "".join(axis_line) + " ", "axis")])
    out.append([(" " * gutter + "".join(labels), "label")])
    return out


# --- the widgets ----------------------------------------------------------------------------------


class StepChart(RunChart[tuple[StepRow, ...]]):
    """The step curve; redraws only when its rows or its size changed."""

    ROLE_PREFIX = "step-chart--"
    ROLES = ("axis", "label", "ttft", "e2e-p50", "e2e-p90", "context")

    @property
    def rows(self) -> tuple[StepRow, ...]:
        return self.data

    def draw(self, data: tuple[StepRow, ...], width: int, height: int) -> list[list[Run]]:
        return draw_steps(data, width, height)


class TasksPane(OptionalPane):
    KEY = 0
    TITLE = "Tasks"
    SHOWN_WHEN = "tasks complete"
    BODY_CLASS = "-tasks"

    def compose(self) -> ComposeResult:
        # The figures above the chart in the compact layout, beside it in the full one (app.tcss).
        with Container(id="tasks-main"):
            yield FigureLines(id="tasks-figures")
            with Vertical(id="tasks-right"):
                yield StepChart((), id="tasks-chart")
                yield FigureLines(id="tasks-legend")

    def show(self, snap: Snapshot) -> None:
        tasks = snap.tasks
        self._activate(tasks is not None and tasks.tasks_completed > 0)
        if tasks is None or not self._active:
            return
        figures = self.query_one("#tasks-figures", FigureLines)
        figures.show(figure_lines(tasks, figures.size.width))
        self.query_one("#tasks-chart", StepChart).plot(tasks.step_curve)
        legend_figures = self.query_one("#tasks-legend", FigureLines)
        legend_figures.show(legend(legend_figures.size.width))
        self.set_subtitle("whole run · completed tasks only")

"""⁸ Frontier: a sweep's measured points, its Pareto frontier, the point in progress and the tier reads.

Shown only while the run is a sweep (`Snapshot.sweep`); an ordinary run's layout does not change. A tier
sweep (`--sweep tiers`) says its plan on the status line ("probing 48 users for tier 50 · probe 9", then
"point 3 of 5 · …") and draws its probes apart, hollow (◇), never joined to the frontier; every sweep
says its GPU time so far.
As in docs/sweeps.md, x is p90 interactivity (tok/s/user) and y total tokens/s per GPU; the frontier
is the monotone curve through the Pareto-optimal points, and the tiers are read off it. x is first the
sweep's own axis (`SweepState.frontier_axis`: E2E-normalized interactivity, the North Star, unless the
run chose decode); key `x` shows the other view (`secondary_frontier`, `secondary_tiers`), key `y`
places the points by tasks per hour per GPU instead of throughput (the tiers are still read on
throughput, so the table does not change).

The chart is drawn here with Textual's line API rather than by a plotting library: textual-plot
crashed under NO_COLOR and takes the app's `+`, `-`, `r` and arrow keys when focused; textual-plotext
cannot take theme colours for its series, pins plotext below 6, and rebuilds and re-parses an ANSI
string on every draw. A braille curve and a few marker glyphs are all this chart needs, and drawn
here they follow the theme, stay readable without colour (the markers differ by glyph, not only by
colour), and fit the 80×24 layout's small pane.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content

from agentx_tui.snapshot import FrontierAxis, Snapshot, SweepState, TierRead
from agentx_tui.snapshot.rates import rates
from agentx_tui.sweep import (
    DECODE,
    NORTH_STAR,
    ChartY,
    MonotoneCurve,
    SweepChart,
    measured,
    nice_step,
    other_axis,
    point_x,
)
from agentx_tui.ui._format import NA, compact, money
from agentx_tui.ui.panes._base import FigureLines, OptionalPane, flow, label, line, value
from agentx_tui.ui.panes._chart import Run, RunChart

# Marker glyphs: told apart by shape, so NO_COLOR and the mono theme read the same as colour does.
ON_FRONTIER = "●"
BELOW_FRONTIER = "○"
PROBE = "◇"  # a tier sweep's probe: a short look, never a point
LIVE = "×"
# Error bars (a point's 95% intervals): their own glyphs, not the curve's braille nor a marker.
BAR_X = "─"
BAR_Y = "│"
_BRAILLE = 0x2800
# Dot bit of each (column, row) inside a 2×4 braille cell.
_DOT_BITS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))
# Where the sweep's phases stand, in words.
_PHASE = {"warmup": "warm-up", "measure": "measuring"}
# Each x axis in words, longest first: the border subtitle takes the longest that fits.
AXIS_WORDS: dict[FrontierAxis, tuple[str, ...]] = {
    NORTH_STAR: ("x: E2E-normalized p90 (North Star)", "x: E2E-norm. p90 (North Star)", "x: E2E p90"),
    DECODE: ("x: decode p90",),
}
_Y_WORDS: dict[ChartY, str] = {"throughput": "tok/s/GPU", "tasks": "tasks/h/GPU"}


@dataclass(frozen=True)
class Marker:
    x: float
    y: float
    glyph: str
    role: str  # a component-class suffix: "point", "dominated", "probe" or "live"
    tag: str = ""  # drawn beside the marker where there is room (the point's users)
    x_span: tuple[float, float] | None = None  # the 95% interval of x, drawn as an error bar
    y_span: tuple[float, float] | None = None  # the 95% interval of y


@dataclass(frozen=True)
class ChartData:
    markers: tuple[Marker, ...] = ()
    curve: tuple[tuple[float, float], ...] = ()  # the frontier's knots, x strictly ascending
    x_ticks: tuple[float, ...] = ()  # preferred x ticks (the tiers); nice ticks when too few fit
    empty: str = "no point measured yet"


# --- the pure drawing: data → rows of (text, role) runs -------------------------------------------


def nice_scale(value: float, most: int) -> tuple[float, float]:
    """(top, step): the lowest round top at or above `value` cut into at most `most` round steps."""
    best = (value, value) if value > 0 else (1.0, 1.0)
    if value <= 0:
        return best
    found = False
    for count in range(1, most + 1):
        step = nice_step(value, count)
        top = math.ceil(value / step - 1e-9) * step
        # The lowest top wins; at the same top, the finer step (more labels).
        if round(top / step) <= most and (not found or top <= best[0]):
            best, found = (top, step), True
    return best


def _tick_text(value: float) -> str:
    """A round tick value, short: 50000 → '50 K', 2500000 → '2.5 M', 75 → '75'."""
    for scale, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g}"


def draw_chart(data: ChartData, width: int, height: int) -> list[list[Run]]:
    """The chart as `height` rows of `width` cells: y labels on the left, an x axis with labels below,
    the curve in braille dots, markers as glyphs over it."""
    blank = [[(" " * width, "")] for _ in range(height)]
    if width < 16 or height < 4:  # two plot rows at least: a wide layout on a short terminal has no more
        return blank
    rows_h = height - 2  # plot rows; then the axis line and its labels
    xs = [m.x for m in data.markers] + [x for x, _ in data.curve] + [m.x_span[1] for m in data.markers if m.x_span]
    ys = [m.y for m in data.markers] + [y for _, y in data.curve] + [m.y_span[1] for m in data.markers if m.y_span]
    # A little headroom, so the highest and fastest markers do not sit on the frame; a y label at
    # most every other row (eight in all), an x label at most every six columns.
    y_top, y_step = nice_scale(max(ys) * 1.05, min(8, max(1, (rows_h - 1) // 2))) if ys else (1.0, 1.0)
    y_ticks = [y_step * i for i in range(round(y_top / y_step) + 1)] if ys else []
    gutter = max((len(_tick_text(v)) for v in y_ticks), default=1) + 1
    cols = width - gutter - 1  # one spare column on the right, for a label centred on the last tick
    if cols < 8:
        return blank
    x_most = min(10, max(1, cols // 6))
    x_top, x_step = nice_scale(max(xs, default=data.x_ticks[-1] if data.x_ticks else 200.0) * 1.05, x_most)
    dots_w, dots_h = cols * 2, rows_h * 4

    def px(x: float) -> int:
        return min(dots_w - 1, max(0, round(x / x_top * (dots_w - 1))))

    def py(y: float) -> int:
        return min(dots_h - 1, max(0, round((1 - y / y_top) * (dots_h - 1))))

    cells = [[0] * cols for _ in range(rows_h)]

    def dot(x: int, y: int) -> None:
        cells[y // 4][x // 2] |= _DOT_BITS[x % 2][y % 4]

    if len(data.curve) >= 2:
        # The same monotone (Steffen) curve the tier reads come from, sampled at every dot column
        # between the first and last frontier points, and joined so that steep parts have no gaps.
        along = MonotoneCurve.through([x for x, _ in data.curve], [y for _, y in data.curve])
        start, end = px(data.curve[0][0]), px(data.curve[-1][0])
        previous: tuple[int, int] | None = None
        for column in range(start, end + 1):
            x = min(max(column / (dots_w - 1) * x_top, data.curve[0][0]), data.curve[-1][0])
            y = along.at(x)
            if y is None:
                continue
            here = (column, py(y))
            for point in _segment(previous or here, here):
                dot(*point)
            previous = here

    grid: list[list[Run]] = [[(chr(_BRAILLE + bits), "curve") if bits else (" ", "") for bits in row] for row in cells]
    taken = [[False] * cols for _ in range(rows_h)]
    for marker in data.markers:  # under the markers, over the curve: a point's bars are its own
        _error_bars(grid, marker, px(marker.x) // 2, py(marker.y) // 4, px, py)
    # The live point first: a measured point in the same cell is drawn over it.
    for marker in sorted(data.markers, key=lambda m: m.role != "live"):
        cx, cy = px(marker.x) // 2, py(marker.y) // 4
        grid[cy][cx] = (marker.glyph, marker.role)
        taken[cy][cx] = True
    if cols >= 30:
        for marker in data.markers:
            _tag(grid, taken, marker, px(marker.x) // 2, py(marker.y) // 4)
    if not data.markers and not data.curve:
        text = data.empty[:cols]
        row, start_col = rows_h // 2, (cols - len(text)) // 2
        for offset, char in enumerate(text):
            grid[row][start_col + offset] = (char, "label")

    # The y axis: a label at each tick's row, right-aligned against the axis line.
    y_labels: dict[int, str] = {}
    for tick in y_ticks:
        y_labels.setdefault(py(tick) // 4, _tick_text(tick))
    out: list[list[Run]] = []
    for row in range(rows_h):
        tick = row in y_labels
        runs: list[Run] = [(y_labels.get(row, "").rjust(gutter - 1), "label"), ("┤" if tick else "│", "axis")]
        runs += grid[row]
        runs.append((" ", ""))
        out.append(runs)

    # The x axis: ticks at the tiers where enough of them fit, else at round numbers.
    ticks = [t for t in data.x_ticks if 0 < t <= x_top]
    placed = _place_x_labels(ticks, px, cols)
    if len(placed) < 2:
        placed = _place_x_labels([x_step * i for i in range(1, round(x_top / x_step) + 1)], px, cols)
    axis = ["─"] * cols
    labels = [" "] * (cols + 1)
    for column, text in placed:
        axis[column] = "┬"
        start_col = column - (len(text) - 1) // 2
        labels[start_col : start_col + len(text)] = list(text)
    out.append([(" " * (gutter - 1) + "└" + "".join(axis) + " ", "axis")])
    out.append([(" " * gutter + "".join(labels), "label")])
    return out


def _segment(a: tuple[int, int], b: tuple[int, int]) -> list[tuple[int, int]]:
    """The dots from a to b, without gaps (Bresenham)."""
    (x0, y0), (x1, y1) = a, b
    dx, dy = abs(x1 - x0), -abs(y1 - y0)
    sx, sy = (1 if x1 > x0 else -1), (1 if y1 > y0 else -1)
    error = dx + dy
    points = []
    while True:
        points.append((x0, y0))
        if (x0, y0) == (x1, y1):
            return points
        double = 2 * error
        if double >= dy:
            error += dy
            x0 += sx
        if double <= dx:
            error += dx
            y0 += sy


def _error_bars(
    grid: list[list[Run]], marker: Marker, cx: int, cy: int, px: Callable[[float], int], py: Callable[[float], int]
) -> None:
    """The marker's 95% intervals as bars through its cell: ─ along x, │ along y (a bar shorter than a
    cell is hidden by the marker itself)."""
    if marker.x_span is not None:
        lo, hi = px(marker.x_span[0]) // 2, px(marker.x_span[1]) // 2
        for column in range(lo, hi + 1):
            if column != cx:
                grid[cy][column] = (BAR_X, "interval")
    if marker.y_span is not None:
        top, bottom = py(marker.y_span[1]) // 4, py(marker.y_span[0]) // 4
        for row in range(top, bottom + 1):
            if row != cy:
                grid[row][cx] = (BAR_Y, "interval")


def _tag(grid: list[list[Run]], taken: list[list[bool]], marker: Marker, cx: int, cy: int) -> None:
    """The marker's tag beside it, right if that is free (no marker, no curve), else left, else none."""
    text = marker.tag
    if not text:
        return
    row, cols = grid[cy], len(grid[cy])
    right, left = cx + 1, cx - 1  # beyond the marker's own error bar, if it has one
    while right < cols and row[right][1] == "interval":
        right += 1
    while left >= 0 and row[left][1] == "interval":
        left -= 1
    for start in (right, left - len(text) + 1):
        span = range(start, start + len(text))
        if start >= 0 and span.stop <= cols and all(not taken[cy][c] and row[c][1] == "" for c in span):
            for offset, column in enumerate(span):
                row[column] = (text[offset], "label")
                taken[cy][column] = True
            return


def _place_x_labels(ticks: Sequence[float], px: Callable[[float], int], cols: int) -> list[tuple[int, str]]:
    """(column, text) for the ticks whose labels fit without touching the previous one."""
    placed: list[tuple[int, str]] = []
    end = -1
    for tick in ticks:
        text = _tick_text(tick)
        column = px(tick) // 2
        start = column - (len(text) - 1) // 2
        if start <= end or start + len(text) > cols + 1 or start < 0:
            continue
        placed.append((column, text))
        end = start + len(text)
    return placed


# --- the widget -----------------------------------------------------------------------------------


class FrontierChart(RunChart[ChartData]):
    """The frontier chart; redraws only when its data or its size changed."""

    ROLE_PREFIX = "frontier-chart--"
    ROLES = ("axis", "label", "curve", "point", "dominated", "probe", "live", "interval")

    def draw(self, data: ChartData, width: int, height: int) -> list[list[Run]]:
        return draw_chart(data, width, height)


class FrontierPane(OptionalPane):
    KEY = 8
    TITLE = "Frontier"
    SHOWN_WHEN = "a sweep"
    BODY_CLASS = "-sweep"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.other_view = False  # key x: the sweep's other x axis (its secondary frontier and tiers)
        self.y_figure: ChartY = "throughput"  # key y: what places the points vertically

    def flip_x(self) -> str | None:
        """Show the other x axis (key x); None, or why there is none to show."""
        sweep = self.snapshot.sweep if self.snapshot is not None else None
        if sweep is not None and view(sweep, not self.other_view) is None:
            return f"this sweep has one view only ({AXIS_WORDS[sweep.frontier_axis or DECODE][0]})"
        self.other_view = not self.other_view
        self._redraw()
        return None

    def flip_y(self) -> None:
        """Place the points by tasks/hour/GPU, or back by total tokens/s per GPU (key y)."""
        self.y_figure = "tasks" if self.y_figure == "throughput" else "throughput"
        self._redraw()

    def _redraw(self) -> None:
        if self.snapshot is not None and self.is_mounted:
            self.show(self.snapshot)

    def compose(self) -> ComposeResult:
        yield FigureLines(id="frontier-status")
        with Horizontal(id="frontier-main"):
            with Vertical(id="frontier-left"):
                yield FrontierChart(ChartData(), id="frontier-chart")
                yield FigureLines(id="frontier-legend")
            with Vertical(id="frontier-right"):
                yield FigureLines(id="frontier-tiers")
                # Why tiers are n/a, under the table: the chart keeps the pane's rows.
                yield FigureLines(id="frontier-notes")

    def show(self, snap: Snapshot) -> None:
        sweep = snap.sweep
        self._activate(sweep is not None)
        if sweep is None:
            return
        status = [line(label("sweep "), value(progress(sweep), "bold $accent"))]
        if sweep.stop_reason:
            status.append(line(label("ended "), value(sweep.stop_reason, "bold $text-warning")))
        self.query_one("#frontier-status", FigureLines).show(Content("\n").join(status))
        shown = view(sweep, self.other_view)
        if shown is None:  # the other view went (a replay moved to where the sweep had only one)
            self.other_view, shown = False, view(sweep, False)
            assert shown is not None
        axis, frontier, tiers = shown
        chart = SweepChart.of(sweep.points, frontier, tiers, axis=axis, y=self.y_figure, probes=sweep.probes)
        data = chart_data(snap, sweep, chart)
        self.query_one("#frontier-chart", FrontierChart).plot(data)
        legend = self.query_one("#frontier-legend", FigureLines)
        bars = any(m.x_span or m.y_span for m in data.markers)
        live = any(m.role == "live" for m in data.markers)
        probes = any(m.role == "probe" for m in data.markers)
        # Without a GPU count the points are placed by their total throughput: the axis says so.
        y_words = _Y_WORDS[self.y_figure] if chart.per_gpu or not chart.placed or self.y_figure == "tasks" else "tok/s"
        # A point without its x or y (too few requests or tasks in its window) is not drawn: say which.
        unknown = [str(p.users) for p in chart.points if not p.placed and p.users is not None]
        # A point with fewer requests than an interval needs (docs/sweeps.md): drawn, but said.
        thin = [str(p.users) for p in sweep.points if p.thin and measured(p)]
        legend.show(
            _legend(legend.size.width, live=live, bars=bars, probes=probes, y_words=y_words, unknown=unknown, thin=thin)
        )
        table, notes = tier_lines(tiers)
        self.query_one("#frontier-tiers", FigureLines).show(Content("\n").join(table))
        self.query_one("#frontier-notes", FigureLines).show(Content("\n").join(notes))
        counted = sum(1 for p in sweep.points if measured(p))
        self.set_subtitle(_subtitle(axis, counted, len(frontier), self.size.width))


def view(sweep: SweepState, other: bool) -> tuple[FrontierAxis, tuple[int, ...], tuple[TierRead, ...]] | None:
    """The x axis, frontier and tier reads of the sweep's own view (`other` False: its `frontier_axis`;
    None, an older recording's, is decode) or of its other one (None when the sweep has none)."""
    axis = sweep.frontier_axis or DECODE
    if not other:
        return axis, sweep.frontier, sweep.tiers
    if sweep.secondary_frontier is None:
        return None
    return other_axis(axis), sweep.secondary_frontier, sweep.secondary_tiers or ()


def _subtitle(axis: FrontierAxis, measured: int, on_frontier: int, width: int) -> str:
    """The border's words: which x axis the chart shows, how many points, the keys that flip the axes;
    the first that fits `width` (the axis's name given up last)."""
    counts = (f"{measured} measured · {on_frontier} on the frontier", f"{measured} measured · {on_frontier} on it")
    candidates = [
        f"{words} · {count}{keys}" for words in AXIS_WORDS[axis] for keys in (" · x/y flip", "") for count in counts
    ]
    room = width - 6  # the border's corners and the spaces around the text
    return next((text for text in candidates if len(text) <= room), AXIS_WORDS[axis][-1])


def progress(sweep: SweepState) -> str:
    """Where the sweep stands, in words: 'point 3 of 6 · 64 users · measuring, 41 s left'; a tier sweep's
    plan: 'probing 48 users for tier 50 · probe 9 · warm-up, at most 80 s left', then 'point 3 of 5 ·
    64 users for tier 50 (below) · measuring, 41 s left'; and the sweep's GPU time so far."""
    probes = len(sweep.probes)
    gpu_time = gpu_time_words(sweep)
    if sweep.current is None or sweep.phase == "done":
        count = sum(1 for p in sweep.points if measured(p))  # one that counted no request is not
        after = f" after {probes} probe{'s' if probes != 1 else ''}" if sweep.mode == "tiers" else ""
        return " · ".join(filter(None, ("done", f"{count} point{'s' if count != 1 else ''} measured{after}", gpu_time)))
    number, planned = sweep.current + 1, len(sweep.planned_users)
    users = "" if sweep.current_users is None else f"{sweep.current_users} users"
    purpose = sweep.step_for or ""
    if sweep.probing:  # a tier sweep's probe
        joined = ", " if purpose.startswith("bracketing") else " for "
        parts = [f"probing {users}{joined + purpose if purpose else ''}", f"probe {probes + 1}"]
    elif sweep.mode == "auto":
        parts = [f"point {number} · auto", users]
    else:  # a list's points, or a tier sweep's (what each is for said beside its users)
        parts = [f"point {number} of {planned}" if planned else f"point {number}", users]
        if purpose and users:
            parts[-1] += f" for {purpose}"
    phase = _PHASE.get(sweep.phase, sweep.phase)
    if sweep.phase_left_s is not None:
        # A warm-up ends once the load is steady: its time left is the most it may take.
        most = "at most " if sweep.phase == "warmup" else ""
        phase += f", {most}{max(sweep.phase_left_s, 0.0):.0f} s left"
    parts += [phase, gpu_time]
    return " · ".join(filter(None, parts))


def gpu_time_words(sweep: SweepState) -> str:
    """The sweep's GPU time so far: '2.4 GPU·h', '950 GPU·s'; n/a without a GPU count."""
    seconds = sweep.gpu_seconds
    if seconds is None:  # a recording of before the figure says nothing
        return f"GPU time {NA}: no GPU count" if sweep.sweep_s is not None else ""
    return f"{seconds / 3600:.1f} GPU·h" if seconds >= 3600 else f"{seconds:.0f} GPU·s"


def chart_data(snap: Snapshot, sweep: SweepState, chart: SweepChart | None = None) -> ChartData:
    """What the chart draws: the sweep's points (sweep/chart.py, as the report's pictures place them) as
    glyphs, the point being measured, the frontier's knots and the tiers as x ticks."""
    chart = chart or SweepChart.of(
        sweep.points, sweep.frontier, sweep.tiers, axis=sweep.frontier_axis, probes=sweep.probes
    )
    # The probes first: a point in the same cell is drawn over a probe.
    markers: list[Marker] = [
        Marker(p.interactivity_p90, p.throughput, PROBE, "probe")
        for p in chart.probes
        if p.interactivity_p90 is not None and p.throughput is not None
    ]
    for _, point in chart.placed:
        assert point.interactivity_p90 is not None and point.throughput is not None
        markers.append(
            Marker(
                point.interactivity_p90,
                point.throughput,
                ON_FRONTIER if point.on_frontier else BELOW_FRONTIER,
                "point" if point.on_frontier else "dominated",
                str(point.users),
                point.interactivity_p90_ci,
                point.throughput_ci,
            )
        )
    # The point in progress has no tasks/hour of its own yet: it shows on the throughput chart only.
    live = _live_point(snap, sweep, chart.axis) if chart.y == "throughput" else None
    if live is not None:
        markers.append(Marker(live[0], live[1], LIVE, "live", str(sweep.current_users or "")))
    empty = "warming up for the first point" if sweep.phase == "warmup" else "no point measured yet"
    if sweep.probing:
        empty = "probing where the tiers cross"
    if chart.y == "tasks" and sweep.points and not markers:
        empty = f"tasks/h/GPU {NA}: no point has a task done"
    return ChartData(
        markers=tuple(markers),
        curve=tuple(zip(chart.curve.xs, chart.curve.ys, strict=True)),
        x_ticks=tuple(t.tier for t in chart.tiers),
        empty=empty,
    )


def _live_point(snap: Snapshot, sweep: SweepState, axis: FrontierAxis | None) -> tuple[float, float] | None:
    """Where the point being measured stands now (window figures on `axis`), once its warm-up is over."""
    if sweep.current is None or sweep.phase != "measure" or snap.client is None:
        return None
    x = point_x(snap.client.window, axis or DECODE)
    total = rates(snap).total
    gpus = snap.cost.gpus or next((p.gpus for p in reversed(sweep.points) if p.gpus), None)
    if x is None or total is None or not gpus or not _placeable(x, total / gpus):
        return None
    return x, total / gpus


def _placeable(x: float, y: float) -> bool:
    return math.isfinite(x) and math.isfinite(y) and x >= 0 and y >= 0


def _legend(
    width: int,
    *,
    live: bool,
    bars: bool,
    y_words: str,
    probes: bool = False,
    unknown: Sequence[str] = (),
    thin: Sequence[str] = (),
) -> Content:
    """The markers, then the axes' units (which x axis it is, the border says); `unknown`: the users of
    the points that could not be placed (their y is n/a); `thin`: of those with too few requests for an
    interval."""
    parts = [
        line(Content.styled(ON_FRONTIER, "bold $accent"), label(" frontier")),
        line(Content.styled(BELOW_FRONTIER, "$foreground"), label(" below it")),
    ]
    if probes:
        parts.append(line(Content.styled(PROBE, "$text-muted"), label(" probe")))
    if bars:
        parts.append(line(Content.styled(BAR_X + BAR_Y, "$secondary"), label(" 95%")))
    if live:
        parts.append(line(Content.styled(LIVE, "bold $warning"), label(" now")))
    parts += [label(f"y {y_words}"), label("x p90 tok/s/user")]
    if unknown:
        parts.append(label(f"{NA} at {' '.join(unknown)} users"))
    if thin:
        parts.append(Content.styled(f"thin at {' '.join(thin)} users", "$text-warning"))
    return flow(parts, width)


TIER_HEADING = f"{'tier':>4} {'tok/s/GPU':>9} {'±':>4} {'tok/$':>6} {'$/Mtok':>7}"


def plus_minus(read: TierRead) -> str:
    """The read's 95% interval as its larger half-width, in percent of the read: '±8%'; '' when unknown
    (the table's ± column: the interval itself is in the report)."""
    tput = read.total_tokens_per_s_per_gpu
    low, high = read.total_tokens_per_s_per_gpu_ci_low, read.total_tokens_per_s_per_gpu_ci_high
    if tput is None or low is None or high is None or not tput > 0:
        return ""
    half = max(tput - low, high - tput) / tput
    return f"±{half:.0%}" if half < 0.995 else "wide"  # four cells at most


def tier_lines(tiers: Sequence[TierRead]) -> tuple[list[Content], list[Content]]:
    """The tier table (each read with its 95% interval's half-width); then one line per reason some
    tiers are n/a (tiers often share one)."""
    if not tiers:
        return [label("no tiers to read")], []
    lines = [label(TIER_HEADING)]
    notes: dict[str, list[str]] = {}
    for tier in tiers:
        name = f"{tier.tier:g}"
        cells = (
            compact(tier.total_tokens_per_s_per_gpu),
            plus_minus(tier),
            compact(tier.tokens_per_dollar_total),
            money(tier.usd_per_million_total_tokens),
        )
        style = "$text-muted" if tier.total_tokens_per_s_per_gpu is None else "bold"
        lines.append(
            line(
                value(f"{name:>4}"),
                Content.styled(f" {cells[0]:>9}", style),
                Content.styled(f" {cells[1]:>4}", "$secondary"),
                Content.styled(f" {cells[2]:>6} {cells[3]:>7}", style),
            )
        )
        if tier.total_tokens_per_s_per_gpu is None:
            notes.setdefault(tier.note or "outside the measured range", []).append(name)
    return lines, [line(label(f"{NA} at {' '.join(names)}: "), Content(note)) for note, names in notes.items()]

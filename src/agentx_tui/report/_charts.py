"""Pictures of a sweep for the Markdown report (docs/sweeps.md): SVG files written beside the report.

- ``NAME.frontier.svg``: every point (total tokens/s per GPU against p90 interactivity on the sweep's
  frontier axis: the North Star, E2E-normalized interactivity, unless ``--frontier-axis decode``), the frontier
  drawn with the same Steffen curve the tiers are read from, the tiers as vertical guides with their
  reads, each point labelled with its user count;
- ``NAME.points.svg``: per point, throughput per GPU (top panel) and p90/p50 interactivity (bottom
  panel, tiers as horizontal guides) against users.

Written with the standard library alone. Measured for a 12-point frontier chart on the development
machine (Python 3.11, 2 cores; a fresh venv per library, `du` of what it added; median of 5 cold runs):

    library              adds to a venv                       import     one render
    matplotlib 3.11.2    173 MiB (numpy, pillow, fonttools…)  0.68 s     0.078 s  (+ a font cache on first use)
    pygal 3.1.3          1.8 MiB                              0.065 s    0.019 s  (random id + date in each file)
    leather 0.4.1        0.4 MiB                              0.043 s    0.005 s  (no point labels, no guides)
    this module          0                                    0.010 s    0.009 s  (import: beyond the report package)

pygal and leather are light, but neither keeps 12 point labels clear of each other, pygal's output
changes on every render, and leather draws no labels or guides; matplotlib does everything, for 173 MiB
and ~0.7 s. Two charts with fixed layouts are a few hundred lines of SVG: deterministic (same report →
byte-identical files: no ids, no timestamps, coordinates rounded to 0.1 px), readable (axis titles with
units, labels placed clear of each other, of the points and of the curve) and free.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import quote

from agentx_tui.report._model import Report
from agentx_tui.report._svg import (
    INK,
    LABEL_SIZE,
    MUTED,
    Box,
    Linear,
    Log2,
    Svg,
    axes,
    coord,
    drop_crowded,
    labelled,
    nice_ticks,
    place_labels,
    y_title,
)
from agentx_tui.snapshot import PointFigures, ProbeRow
from agentx_tui.sweep import NORTH_STAR, SweepChart, axis_name, axis_title

FRONTIER_COLOUR = "#1f5fa8"
OTHER_COLOUR = "#d9480f"

# --- reading the report ----------------------------------------------------------------------------


def _sweep(report: Report) -> SweepChart:
    # A point this version cannot read keeps its place (None), so `frontier` still points at the right ones.
    points = [p if isinstance(p, PointFigures) else None for p in report.points or ()]
    probes = [p for p in report.probes or () if isinstance(p, ProbeRow)]
    # On the report's frontier axis (None: a report of before the axis was chosen, decode).
    return SweepChart.of(points, report.frontier, report.tiers or (), report.frontier_axis, probes=probes)


def run_line(report: Report, *more: str) -> str:
    """The line under a chart's title: the run's model and workload, then what the chart adds (an empty
    part is left out)."""
    return " · ".join(part for part in (report.model, report.workload, *more) if part)


def _subtitle(report: Report) -> str:
    gpus = report.figure("gpus")
    return run_line(report, "" if gpus is None else f"{gpus:g} GPU" + ("" if gpus == 1 else "s"))


# --- the frontier chart -----------------------------------------------------------------------------


def render_frontier_svg(report: Report) -> str:
    """The frontier picture of a sweep report, as SVG text (deterministic)."""
    sweep, subtitle = _sweep(report), _subtitle(report)
    known = sweep.placed
    xs = [p.interactivity_p90 for _, p in known if p.interactivity_p90 is not None]
    ys = [p.throughput for _, p in known if p.throughput is not None]
    # A tier sweep's probes: inside the axes too, drawn apart (hollow squares, no curve through them).
    probe_x = [p.interactivity_p90 for p in sweep.probes if p.interactivity_p90 is not None]
    probe_y = [p.throughput for p in sweep.probes if p.throughput is not None]
    # The error bars' ends are inside the axes too (a bar is not cut off at the frame).
    x_ends = [end for _, p in known if p.interactivity_p90_ci for end in p.interactivity_p90_ci]
    y_ends = [end for _, p in known if p.throughput_ci for end in p.throughput_ci]
    curve = sweep.curve
    notes = []  # one line each under the legend
    if missing := len(sweep.points) - len(known):
        notes.append(f"{missing} point{'s' if missing > 1 else ''} without both figures, not drawn.")
    notes += _unread_tiers(sweep, curve.xs)

    box: Box = (96.0, 78.0, 830.0, 446.0)
    title = f"Frontier: total tokens/s per GPU against {axis_name(sweep.axis)}"
    legend_rows = 1 + bool(sweep.intervals) + bool(sweep.probes)
    svg = Svg(860, 540 + 18 * len(notes) + 20 * (legend_rows - 1), title)
    svg.heading(box[0], title, subtitle)
    # The axis reaches the tiers near the measured range (a gap to a tier is the message); reaching far
    # ones would squash the points. Every tier inside the axis is drawn; the note names those not read.
    near = [t.tier for t in sweep.tiers if xs and min(xs) / 1.3 <= t.tier <= max(xs) * 1.3]
    x_ticks = nice_ticks(xs or probe_x, 8, room=0.03, also=[*near, *x_ends, *probe_x])
    y_ticks = nice_ticks(ys or probe_y, 6, also=[*y_ends, *probe_y])
    shown_tiers = [t for t in sweep.tiers if x_ticks[0] <= t.tier <= x_ticks[-1]]
    sx = Linear(x_ticks[0], x_ticks[-1], box[0], box[2])
    sy = Linear(y_ticks[0], y_ticks[-1], box[3], box[1])
    axes(svg, sx, sy, box, labelled(x_ticks), labelled(y_ticks))
    svg.text((box[0] + box[2]) / 2, box[3] + 44, axis_title(sweep.axis), size=13, anchor="middle")
    unit = "total tokens/s per GPU (cache + input + output)" if sweep.per_gpu else "total tokens/s (GPU count unknown)"
    y_title(svg, 24, (box[1] + box[3]) / 2, unit)

    obstacles: list[Box] = []
    tier_labels = drop_crowded([(sx(t.tier), f"{t.tier:g}") for t in shown_tiers], 4)
    for t in shown_tiers:
        x = sx(t.tier)
        svg.line(x, box[1], x, box[3], MUTED, 1, "4 4")
        if t.ci is not None:  # the read's 95% interval, along the guide
            _error_bar(svg, (x, sy(t.ci[0])), (x, sy(t.ci[1])), INK)
            obstacles.append((x - 5, sy(t.ci[1]), x + 5, sy(t.ci[0])))
        if t.read is not None:  # the read on the frontier: a small diamond on the guide
            y = sy(t.read)
            svg.diamond(x, y, 6)
            obstacles.append((x - 7, y - 7, x + 7, y + 7))
    for x, label in tier_labels:
        svg.text(x, box[1] - 8, label, anchor="middle", fill=MUTED)
    if tier_labels:
        svg.text(box[2], box[1] - 24, "tiers (tokens/s per user)", size=11, anchor="end", fill=MUTED)

    if len(curve.xs) >= 2:
        d = [f"M{coord(sx(curve.xs[0]))},{coord(sy(curve.ys[0]))}"]
        for c1x, c1y, c2x, c2y, x1, y1 in curve.bezier():
            controls = ((c1x, c1y), (c2x, c2y), (x1, y1))
            d.append("C" + " ".join(f"{coord(sx(x))},{coord(sy(y))}" for x, y in controls))
        svg.add(f'<path d="{" ".join(d)}" fill="none" stroke="{FRONTIER_COLOUR}" stroke-width="2.5"/>')
        obstacles += _along(curve.bezier(), curve.xs[0], curve.ys[0], sx, sy)

    for probe in sweep.probes:  # under the points: a point in the same place is drawn over a probe
        assert probe.interactivity_p90 is not None and probe.throughput is not None
        x, y = sx(probe.interactivity_p90), sy(probe.throughput)
        svg.square(x, y, 3.5, stroke=MUTED)
        obstacles.append((x - 4, y - 4, x + 4, y + 4))
    for _, p in known:  # error bars first: the markers are drawn over their middles
        assert p.interactivity_p90 is not None and p.throughput is not None
        colour = FRONTIER_COLOUR if p.on_frontier else OTHER_COLOUR
        x, y = sx(p.interactivity_p90), sy(p.throughput)
        if p.interactivity_p90_ci is not None:
            lo, hi = sx(p.interactivity_p90_ci[0]), sx(p.interactivity_p90_ci[1])
            _error_bar(svg, (lo, y), (hi, y), colour)
            obstacles.append((lo, y - 5, hi, y + 5))
        if p.throughput_ci is not None:
            top, bottom = sy(p.throughput_ci[1]), sy(p.throughput_ci[0])
            _error_bar(svg, (x, bottom), (x, top), colour)
            obstacles.append((x - 5, top, x + 5, bottom))
    anchors = []
    for _, p in known:
        assert p.interactivity_p90 is not None and p.throughput is not None
        x, y = sx(p.interactivity_p90), sy(p.throughput)
        if p.on_frontier:
            svg.circle(x, y, 5, fill=FRONTIER_COLOUR, stroke="#ffffff")
        else:
            svg.circle(x, y, 4.5, fill="#ffffff", stroke=OTHER_COLOUR)
        obstacles.append((x - 6, y - 6, x + 6, y + 6))
        if p.users is not None:
            anchors.append((x, y, str(p.users)))
    for x, y, text in place_labels(anchors, obstacles, (box[0] + 2, box[1] + 2, box[2] - 2, box[3] - 2)):
        svg.text(x, y, text, size=LABEL_SIZE)
    if not known:
        svg.text((box[0] + box[2]) / 2, (box[1] + box[3]) / 2, "no point has both figures", anchor="middle", fill=MUTED)

    _frontier_legend(svg, box[0], box[3] + 76)
    row = box[3] + 96
    if sweep.intervals:
        _error_bar(svg, (box[0], row - 4), (box[0] + 30, row - 4), INK)
        svg.text(box[0] + 36, row, "95% intervals: each point's throughput and p90 interactivity, each tier's read")
        row += 20
    if sweep.probes:
        svg.square(box[0] + 5, row - 4, 3.5, stroke=MUTED)
        svg.text(box[0] + 16, row, "probe: a short window that found where the tiers cross (not a point)", fill=MUTED)
    for n, note in enumerate(notes):
        svg.text(box[0], box[3] + 80 + 20 * legend_rows + 18 * n, note, size=12, fill=MUTED)
    return svg.render()


def _error_bar(svg: Svg, start: tuple[float, float], end: tuple[float, float], colour: str) -> None:
    """A line with a short cap across each end."""
    (x0, y0), (x1, y1) = start, end
    svg.line(x0, y0, x1, y1, colour, 1.2)
    across = (0.0, 4.0) if y0 == y1 else (4.0, 0.0)
    for x, y in (start, end):
        svg.line(x - across[0], y - across[1], x + across[0], y + across[1], colour, 1.2)


def _unread_tiers(sweep: SweepChart, knots: Sequence[float]) -> list[str]:
    """Why tiers have no read, in words: no tier is extrapolated (docs/sweeps.md)."""
    unread = [t.tier for t in sweep.tiers if t.read is None]
    if not unread:
        return []
    if not sweep.per_gpu:
        return ["No tier read: the GPU count is unknown (set --gpus)."]
    if not knots:
        return ["No tier read: no point on the frontier."]
    notes = []
    for tiers, where in (
        ([t for t in unread if t < knots[0]], "below the slowest point on the frontier"),
        ([t for t in unread if t > knots[-1]], "beyond the fastest point"),
    ):
        if tiers:
            listed = ", ".join(f"{t:g}" for t in tiers)
            notes.append(f"Tier{'s' if len(tiers) > 1 else ''} {listed} tok/s/user: {where}, no read.")
    return notes


def _along(
    pieces: Sequence[tuple[float, float, float, float, float, float]],
    x0: float,
    y0: float,
    sx: Callable[[float], float],
    sy: Callable[[float], float],
) -> list[Box]:
    """Small boxes along the drawn curve, so that no label is written across it."""
    boxes = []
    for c1x, c1y, c2x, c2y, x1, y1 in pieces:
        for k in range(1, 13):
            t = k / 12
            a, b, c, d = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t * t, t**3
            x, y = sx(a * x0 + b * c1x + c * c2x + d * x1), sy(a * y0 + b * c1y + c * c2y + d * y1)
            boxes.append((x - 2, y - 2, x + 2, y + 2))
        x0, y0 = x1, y1
    return boxes


def _frontier_legend(svg: Svg, x: float, y: float) -> None:
    svg.circle(x + 5, y - 4, 5, fill=FRONTIER_COLOUR, stroke="#ffffff")
    svg.text(x + 16, y, "on the frontier")
    svg.circle(x + 131, y - 4, 4.5, fill="#ffffff", stroke=OTHER_COLOUR)
    svg.text(x + 142, y, "dominated")
    svg.line(x + 226, y - 4, x + 256, y - 4, FRONTIER_COLOUR, 2.5)
    svg.text(x + 262, y, "frontier (Steffen monotone)")
    svg.line(x + 452, y - 12, x + 452, y + 3, MUTED, 1, "4 4")
    svg.diamond(x + 466, y - 4, 5)
    svg.text(x + 476, y, "tier and its read")
    svg.text(x + 610, y, "numbers: users", fill=MUTED)


# --- the per-point chart ----------------------------------------------------------------------------


def render_points_svg(report: Report) -> str:
    """Throughput and interactivity against users, one panel each, as SVG text (deterministic)."""
    sweep, subtitle = _sweep(report), _subtitle(report)
    width, height = 860, 640
    title = "Per point: throughput and interactivity against users"
    svg = Svg(width, height, title)
    svg.heading(96, title, subtitle)
    pts = sorted((p for p in sweep.points if p.users is not None and p.users > 0), key=lambda p: p.users or 0)
    users = sorted({p.users for p in pts if p.users is not None})
    left, right = 96.0, 830.0
    if not users:
        svg.text((left + right) / 2, 300, "no point with a user count", anchor="middle", fill=MUTED)
        return svg.render()
    lo, hi = users[0], users[-1]
    sx: Linear
    if hi / lo >= 8:  # doubling sweeps (auto): a log scale spaces the points evenly
        sx = Log2(math.log2(lo) - 0.3, math.log2(hi) + 0.3, left, right)
    else:
        pad = (hi - lo) * 0.05 or max(1.0, lo * 0.1)
        sx = Linear(max(0.0, lo - pad), hi + pad, left, right)
    x_ticks = [(float(u), str(u)) for u in users]

    top: Box = (left, 70.0, right, 270.0)
    bottom: Box = (left, 340.0, right, 540.0)
    # Top: throughput.
    tput = [(p.users, p.throughput) for p in pts]
    y_ticks = nice_ticks([v for _, v in tput if v is not None], 4)
    sy = Linear(y_ticks[0], y_ticks[-1], top[3], top[1])
    axes(svg, sx, sy, top, x_ticks, labelled(y_ticks))
    _series(svg, sx, sy, tput, FRONTIER_COLOUR, "")
    unit = "total tok/s per GPU" if sweep.per_gpu else "total tok/s"
    y_title(svg, 24, (top[1] + top[3]) / 2, unit)

    # Bottom: interactivity, with the tiers as horizontal guides.
    p90 = [(p.users, p.interactivity_p90) for p in pts]
    p50 = [(p.users, p.interactivity_p50) for p in pts]
    y_ticks = nice_ticks([v for _, v in p90 + p50 if v is not None], 4)
    sy = Linear(y_ticks[0], y_ticks[-1], bottom[3], bottom[1])
    axes(svg, sx, sy, bottom, x_ticks, labelled(y_ticks))
    last_label_y = math.inf
    for t in (tier.tier for tier in sweep.tiers):  # ascending: labels go up the right edge, a crowded one is left out
        if y_ticks[0] <= t <= y_ticks[-1]:
            y = sy(t)
            svg.line(bottom[0], y, bottom[2], y, MUTED, 1, "4 4")
            if last_label_y - y >= 12:
                svg.text(bottom[2] + 4, y + 4, f"{t:g}", size=11, fill=MUTED)
                last_label_y = y
    _series(svg, sx, sy, p50, OTHER_COLOUR, "6 4")
    _series(svg, sx, sy, p90, OTHER_COLOUR, "")
    kind = "E2E-normalized" if sweep.axis == NORTH_STAR else "interactivity"
    y_label = "E2E-normalized interactivity" if sweep.axis == NORTH_STAR else "interactivity"
    y_title(svg, 24, (bottom[1] + bottom[3]) / 2, f"{y_label} (tok/s per user)")
    svg.text((left + right) / 2, bottom[3] + 40, "users (concurrent agent sessions)", size=13, anchor="middle")

    y = bottom[3] + 76
    svg.line(left, y - 4, left + 30, y - 4, FRONTIER_COLOUR, 2)
    svg.text(left + 36, y, "throughput (top)")
    svg.line(left + 170, y - 4, left + 200, y - 4, OTHER_COLOUR, 2)
    svg.text(left + 206, y, f"p90 {kind}")
    svg.line(left + 346, y - 4, left + 376, y - 4, OTHER_COLOUR, 2, "6 4")
    svg.text(left + 382, y, f"p50 {kind}")
    svg.line(left + 522, y - 4, left + 552, y - 4, MUTED, 1, "4 4")
    svg.text(left + 558, y, "tiers (tok/s per user)")
    return svg.render()


def _series(
    svg: Svg,
    sx: Callable[[float], float],
    sy: Callable[[float], float],
    values: Sequence[tuple[int | None, float | None]],
    colour: str,
    dash: str,
) -> None:
    """A line through the known values, broken where one is missing, with a dot on each."""
    run: list[tuple[float, float]] = []
    for u, v in [*values, (None, None)]:
        if u is None or v is None:
            svg.polyline(run, colour, 2, dash)
            run = []
            continue
        run.append((sx(u), sy(v)))
        svg.circle(sx(u), sy(v), 3.5, fill=colour if not dash else "#ffffff", stroke=colour)


# --- files and Markdown -----------------------------------------------------------------------------

# A picture of the report: its kind (the file's middle name), its Markdown alt text, and how it is drawn.
Chart = tuple[str, str, Callable[[Report], str]]
CHARTS: tuple[Chart, ...] = (
    ("frontier", "Frontier: total tokens/s per GPU against p90 interactivity", render_frontier_svg),
    ("points", "Per point: throughput and interactivity against users", render_points_svg),
)


def chart_paths(report_path: Path, charts: Sequence[Chart] = CHARTS) -> list[Path]:
    """Where the pictures of `report_path` go: ``report.md`` → ``report.frontier.svg``, ``report.points.svg``
    (for `charts`: ``report.<kind>.svg`` each)."""
    return [report_path.with_name(f"{report_path.stem}.{kind}.svg") for kind, _, _ in charts]


def write_svg_atomic(path: Path, text: str) -> None:
    # Same as the report itself: a killed run leaves the old picture or the new one, never half of one.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_sweep_charts(report_path: Path, report: Report) -> list[Path]:
    """Write the sweep's pictures beside `report_path` and return their paths; none (and nothing written)
    when the report has no `points`. OSError propagates: the caller words it like the report's own."""
    return write_charts(report_path, report, CHARTS) if report.points else []


def write_charts(report_path: Path, report: Report, charts: Sequence[Chart]) -> list[Path]:
    """Write `charts` of `report` beside `report_path` and return their paths."""
    paths = chart_paths(report_path, charts)
    for path, (_, _, render) in zip(paths, charts, strict=True):
        write_svg_atomic(path, render(report))
    return paths


def markdown_images(paths: Sequence[Path], charts: Sequence[Chart] = CHARTS) -> list[str]:
    """One Markdown image line per picture of `charts`, linked relative to the report (the pictures sit
    beside it). Put each on its own paragraph (a blank line between)."""
    alts = {f".{kind}.svg": alt for kind, alt, _ in charts}
    lines = []
    for path in paths:
        alt = next((a for suffix, a in alts.items() if path.name.endswith(suffix)), path.stem)
        lines.append(f"![{alt}]({quote(path.name)})")
    return lines

"""Pictures of a sweep for the Markdown report (docs/sweeps.md): SVG files written beside the report.

- ``NAME.frontier.svg``: every point (total tokens/s per GPU against p90 interactivity), the frontier
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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote
from xml.sax.saxutils import escape

from agentx_tui.sweep.frontier import frontier_curve, pareto_front

TIER_KEY = "total_tokens_per_s_per_gpu_at_"
FONT = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif"
FRONTIER_COLOUR = "#1f5fa8"
OTHER_COLOUR = "#d9480f"
MUTED = "#8a8a8a"
GRID = "#e6e6e6"
INK = "#222222"
TICK_SIZE = 12
LABEL_SIZE = 12

# --- reading the report ----------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


@dataclass(frozen=True)
class _Point:
    users: int | None
    interactivity_p90: float | None
    interactivity_p50: float | None
    tput: float | None  # per GPU when known, else total (see _Sweep.per_gpu)


@dataclass(frozen=True)
class _Sweep:
    points: tuple[_Point, ...]
    frontier: tuple[int, ...]
    tiers: tuple[tuple[float, float | None], ...]  # (tier, throughput per GPU read there)
    per_gpu: bool
    subtitle: str


def _sweep(report: dict[str, Any]) -> _Sweep:
    # Every entry keeps its place, so the report's `frontier` indices still point at the right ones.
    raw = [p if isinstance(p, dict) else {} for p in report.get("points") or []]
    per_gpu = any(_num(p.get("total_tokens_per_s_per_gpu")) is not None for p in raw)
    tput_key = "total_tokens_per_s_per_gpu" if per_gpu else "total_tokens_per_s"
    points = tuple(
        _Point(
            users=int(u) if (u := _num(p.get("users"))) is not None else None,
            interactivity_p90=_num(p.get("interactivity_p90_tokens_per_s")),
            interactivity_p50=_num(p.get("interactivity_p50_tokens_per_s")),
            tput=_num(p.get(tput_key)),
        )
        for p in raw
    )
    xy = [(p.interactivity_p90, p.tput) for p in points]
    given = report.get("frontier")
    valid = isinstance(given, list) and all(type(i) is int and 0 <= i < len(points) for i in given)
    frontier = tuple(given) if valid and given else pareto_front(xy)
    tiers = []
    for key, value in report.items():
        if key.startswith(TIER_KEY):
            try:
                tier = float(key.removeprefix(TIER_KEY))
            except ValueError:
                continue
            if math.isfinite(tier):
                tiers.append((tier, _num(value) if per_gpu else None))
    parts = [str(report[k]) for k in ("model", "workload") if report.get(k)]
    gpus = _num(report.get("gpus"))
    if gpus is not None:
        parts.append(f"{gpus:g} GPU" + ("" if gpus == 1 else "s"))
    return _Sweep(points, frontier, tuple(sorted(tiers)), per_gpu, " · ".join(parts))


# --- scales, ticks, numbers --------------------------------------------------------------------------


def _nice_step(span: float, count: int) -> float:
    """A step of 1, 2, 2.5 or 5 × 10ⁿ that cuts `span` into about `count` parts."""
    raw = span / max(1, count)
    mag = 10.0 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def _ticks(values: Sequence[float], count: int, *, room: float = 0.05, also: Sequence[float] = ()) -> list[float]:
    """Nice ticks around `values` (figures here are never negative) with `room` to spare above the highest,
    reaching `also` (e.g. tiers) too.

    From 0 up, unless several distinct values crowd into the top of that range (the lowest above 60% of
    the highest), where a zero-based axis would flatten them into a line: then from just below the
    lowest. The tick labels say where the axis starts."""
    top = max(values, default=0.0)
    if not top > 0:
        return [0.0, 1.0]
    lo, hi = min([*values, *also]), max([*values, *also])
    if len(set(values)) > 1 and lo > 0.6 * hi:  # crowded at the top: zoom in
        pad = (hi - lo) * 0.12
        lo, hi = lo - pad, hi + pad
    else:
        lo, hi = 0.0, max(hi, top * (1 + room))
    step = _nice_step(hi - lo, count)
    first = math.floor(lo / step + 1e-9)
    last = math.ceil(hi / step - 1e-9)
    return [i * step for i in range(first, last + 1)]


def _tick_labels(ticks: Sequence[float]) -> list[str]:
    """0, 5K, 10K … 30K; 0, 500, 1,000 … 3,000; 0, 2.5, 5: a suffix from 10 K up, as few decimals as the
    ticks need, and the same decimals on every tick."""
    top = ticks[-1]
    scale, suffix = next(((s, x) for s, x in ((1e9, "B"), (1e6, "M"), (1e3, "K")) if top >= 10 * s), (1.0, ""))
    decimals = next(
        (d for d in range(4) if all(abs(v / scale * 10**d - round(v / scale * 10**d)) < 1e-6 for v in ticks)), 3
    )
    return ["0" if v == 0 else f"{v / scale:,.{decimals}f}{suffix}" for v in ticks]


def _labelled(ticks: Sequence[float]) -> list[tuple[float, str]]:
    return list(zip(ticks, _tick_labels(ticks), strict=True))


def _c(v: float) -> str:
    """A coordinate: 0.1 px is finer than any screen, and short fixed text keeps files identical."""
    text = f"{v:.1f}"
    return text[:-2] if text.endswith(".0") else text


class _Linear:
    def __init__(self, lo: float, hi: float, px_lo: float, px_hi: float) -> None:
        self.lo, self.hi, self.px_lo, self.px_hi = lo, hi, px_lo, px_hi

    def __call__(self, v: float) -> float:
        return self.px_lo + (v - self.lo) / (self.hi - self.lo) * (self.px_hi - self.px_lo)


class _Log2(_Linear):
    def __call__(self, v: float) -> float:
        return super().__call__(math.log2(v))


# --- SVG text ---------------------------------------------------------------------------------------


def _text_width(text: str, size: float) -> float:
    # DejaVu Sans digits are 0.64 em, most letters less: an upper bound keeps placed labels apart.
    return len(text) * size * 0.64


class _Svg:
    def __init__(self, width: int, height: int, title: str) -> None:
        self.width, self.height = width, height
        self.parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="{FONT}" role="img">',
            f"<title>{escape(title)}</title>",
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        ]

    def add(self, element: str) -> None:
        self.parts.append(element)

    def text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        size: float = TICK_SIZE,
        anchor: str = "start",
        fill: str = INK,
        **attrs: str,
    ) -> None:
        extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
        self.add(
            f'<text x="{_c(x)}" y="{_c(y)}" font-size="{size:g}" text-anchor="{anchor}" fill="{fill}"{extra}>'
            f"{escape(text)}</text>"
        )

    def diamond(self, x: float, y: float, r: float) -> None:
        self.add(
            f'<path d="M{_c(x)},{_c(y - r)} L{_c(x + r)},{_c(y)} L{_c(x)},{_c(y + r)} L{_c(x - r)},{_c(y)} Z" '
            f'fill="#ffffff" stroke="{INK}" stroke-width="1.5"/>'
        )

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str, width: float = 1, dash: str = "") -> None:
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(
            f'<line x1="{_c(x1)}" y1="{_c(y1)}" x2="{_c(x2)}" y2="{_c(y2)}" stroke="{stroke}" '
            f'stroke-width="{width:g}"{d}/>'
        )

    def polyline(self, pts: Sequence[tuple[float, float]], stroke: str, width: float = 2, dash: str = "") -> None:
        if len(pts) < 2:
            return
        d = f' stroke-dasharray="{dash}"' if dash else ""
        coords = " ".join(f"{_c(x)},{_c(y)}" for x, y in pts)
        self.add(f'<polyline points="{coords}" fill="none" stroke="{stroke}" stroke-width="{width:g}"{d}/>')

    def circle(self, x: float, y: float, r: float, *, fill: str, stroke: str) -> None:
        self.add(f'<circle cx="{_c(x)}" cy="{_c(y)}" r="{r:g}" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>')

    def render(self) -> str:
        return "\n".join([*self.parts, "</svg>", ""])


Box = tuple[float, float, float, float]  # x0, y0, x1, y1 (y down)


def _overlap(a: Box, b: Box) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _place_labels(
    anchors: Sequence[tuple[float, float, str]], obstacles: Iterable[Box], bounds: Box
) -> list[tuple[float, float, str]]:
    """Put each label next to its point where it covers no other label, point or guide text: the first
    free spot of eight around it, else the least covered one. Returns (x, baseline y, text), start-anchored."""
    taken = list(obstacles)
    placed = []
    gap, h = 6.0, LABEL_SIZE * 0.8
    for px, py, text in anchors:
        w = _text_width(text, LABEL_SIZE)
        spots = [
            (px + gap, py - gap - h),  # above right
            (px + gap, py + gap),  # below right
            (px - gap - w, py - gap - h),  # above left
            (px - gap - w, py + gap),  # below left
            (px + gap + 2, py - h / 2),  # right
            (px - gap - 2 - w, py - h / 2),  # left
            (px - w / 2, py - gap - 2 - h),  # above
            (px - w / 2, py + gap + 2),  # below
        ]
        boxes = [(x0, y0, x0 + w, y0 + h) for x0, y0 in spots]

        def cost(box: Box) -> float:
            outside = box[0] < bounds[0] or box[1] < bounds[1] or box[2] > bounds[2] or box[3] > bounds[3]
            return sum(_overlap(box, t) for t in taken) + (1e6 if outside else 0.0)

        box = min(boxes, key=cost)  # the first of equally good spots: the order above is the preference
        taken.append(box)
        placed.append((box[0], box[3], text))
    return placed


def _drop_crowded(labels: Sequence[tuple[float, str]], min_gap: float) -> list[tuple[float, str]]:
    """Keep tick or guide labels (centre x, text) left to right, skipping any that would touch the previous."""
    kept: list[tuple[float, str]] = []
    right = -math.inf
    for x, text in sorted(labels):
        half = _text_width(text, TICK_SIZE) / 2
        if x - half >= right + min_gap:
            kept.append((x, text))
            right = x + half
    return kept


def _axes(
    svg: _Svg,
    sx: Callable[[float], float],
    sy: Callable[[float], float],
    box: Box,
    x_ticks: Sequence[tuple[float, str]],
    y_ticks: Sequence[tuple[float, str]],
) -> None:
    x0, y0, x1, y1 = box
    for v, label in y_ticks:
        y = sy(v)
        svg.line(x0, y, x1, y, GRID)
        svg.text(x0 - 8, y + 4, label, anchor="end")
    for x, label in _drop_crowded([(sx(v), label) for v, label in x_ticks], 8):
        svg.line(x, y1, x, y1 + 5, INK)
        svg.text(x, y1 + 20, label, anchor="middle")
    svg.line(x0, y1, x1, y1, INK)
    svg.line(x0, y0, x0, y1, INK)


def _y_title(svg: _Svg, x: float, y_mid: float, text: str) -> None:
    svg.text(x, y_mid, text, size=13, anchor="middle", transform=f"rotate(-90 {_c(x)} {_c(y_mid)})")


# --- the frontier chart -----------------------------------------------------------------------------


def render_frontier_svg(report: dict[str, Any]) -> str:
    """The frontier picture of a sweep report, as SVG text (deterministic)."""
    sweep = _sweep(report)
    known = [(i, p) for i, p in enumerate(sweep.points) if p.interactivity_p90 is not None and p.tput is not None]
    xs = [p.interactivity_p90 for _, p in known if p.interactivity_p90 is not None]
    ys = [p.tput for _, p in known if p.tput is not None]
    xy = [(p.interactivity_p90, p.tput) for p in sweep.points]
    curve = frontier_curve(xy, [i for i in sweep.frontier if i < len(xy)])
    notes = []  # one line each under the legend
    if missing := len(sweep.points) - len(known):
        notes.append(f"{missing} point{'s' if missing > 1 else ''} without both figures, not drawn.")
    notes += _unread_tiers(sweep, curve.xs)

    box: Box = (96.0, 78.0, 830.0, 446.0)
    title = "Frontier: total tokens/s per GPU against p90 interactivity"
    svg = _Svg(860, 540 + 18 * len(notes), title)
    svg.text(box[0], 28, title, size=17, font_weight="bold")
    if sweep.subtitle:
        svg.text(box[0], 48, sweep.subtitle, size=13, fill=MUTED)
    # The axis reaches the tiers near the measured range (a gap to a tier is the message); reaching far
    # ones would squash the points. Every tier inside the axis is drawn; the note names those not read.
    near = [t for t, _ in sweep.tiers if xs and min(xs) / 1.3 <= t <= max(xs) * 1.3]
    x_ticks = _ticks(xs, 8, room=0.03, also=near)
    y_ticks = _ticks(ys, 6)
    shown_tiers = [(t, read) for t, read in sweep.tiers if x_ticks[0] <= t <= x_ticks[-1]]
    sx = _Linear(x_ticks[0], x_ticks[-1], box[0], box[2])
    sy = _Linear(y_ticks[0], y_ticks[-1], box[3], box[1])
    _axes(svg, sx, sy, box, list(zip(x_ticks, _tick_labels(x_ticks), strict=True)), _labelled(y_ticks))
    svg.text((box[0] + box[2]) / 2, box[3] + 44, "p90 interactivity (tokens/s per user)", size=13, anchor="middle")
    unit = "total tokens/s per GPU (cache + input + output)" if sweep.per_gpu else "total tokens/s (GPU count unknown)"
    _y_title(svg, 24, (box[1] + box[3]) / 2, unit)

    obstacles: list[Box] = []
    tier_labels = _drop_crowded([(sx(t), f"{t:g}") for t, _ in shown_tiers], 4)
    for t, read in shown_tiers:
        x = sx(t)
        svg.line(x, box[1], x, box[3], MUTED, 1, "4 4")
        if read is not None:  # the read on the frontier: a small diamond on the guide
            y = sy(read)
            svg.diamond(x, y, 6)
            obstacles.append((x - 7, y - 7, x + 7, y + 7))
    for x, label in tier_labels:
        svg.text(x, box[1] - 8, label, anchor="middle", fill=MUTED)
    if tier_labels:
        svg.text(box[2], box[1] - 24, "tiers (tokens/s per user)", size=11, anchor="end", fill=MUTED)

    if len(curve.xs) >= 2:
        d = [f"M{_c(sx(curve.xs[0]))},{_c(sy(curve.ys[0]))}"]
        for c1x, c1y, c2x, c2y, x1, y1 in curve.bezier():
            d.append(f"C{_c(sx(c1x))},{_c(sy(c1y))} {_c(sx(c2x))},{_c(sy(c2y))} {_c(sx(x1))},{_c(sy(y1))}")
        svg.add(f'<path d="{" ".join(d)}" fill="none" stroke="{FRONTIER_COLOUR}" stroke-width="2.5"/>')
        obstacles += _along(curve.bezier(), curve.xs[0], curve.ys[0], sx, sy)

    on_front = set(sweep.frontier)
    anchors = []
    for i, p in known:
        assert p.interactivity_p90 is not None and p.tput is not None
        x, y = sx(p.interactivity_p90), sy(p.tput)
        if i in on_front:
            svg.circle(x, y, 5, fill=FRONTIER_COLOUR, stroke="#ffffff")
        else:
            svg.circle(x, y, 4.5, fill="#ffffff", stroke=OTHER_COLOUR)
        obstacles.append((x - 6, y - 6, x + 6, y + 6))
        if p.users is not None:
            anchors.append((x, y, str(p.users)))
    for x, y, text in _place_labels(anchors, obstacles, (box[0] + 2, box[1] + 2, box[2] - 2, box[3] - 2)):
        svg.text(x, y, text, size=LABEL_SIZE)
    if not known:
        svg.text((box[0] + box[2]) / 2, (box[1] + box[3]) / 2, "no point has both figures", anchor="middle", fill=MUTED)

    _frontier_legend(svg, box[0], box[3] + 76)
    for n, note in enumerate(notes):
        svg.text(box[0], box[3] + 100 + 18 * n, note, size=12, fill=MUTED)
    return svg.render()


def _unread_tiers(sweep: _Sweep, knots: Sequence[float]) -> list[str]:
    """Why tiers have no read, in words: no tier is extrapolated (docs/sweeps.md)."""
    unread = [t for t, read in sweep.tiers if read is None]
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


def _frontier_legend(svg: _Svg, x: float, y: float) -> None:
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


def render_points_svg(report: dict[str, Any]) -> str:
    """Throughput and interactivity against users, one panel each, as SVG text (deterministic)."""
    sweep = _sweep(report)
    width, height = 860, 640
    title = "Per point: throughput and interactivity against users"
    svg = _Svg(width, height, title)
    svg.text(96, 28, title, size=17, font_weight="bold")
    if sweep.subtitle:
        svg.text(96, 48, sweep.subtitle, size=13, fill=MUTED)
    pts = sorted((p for p in sweep.points if p.users is not None and p.users > 0), key=lambda p: p.users or 0)
    users = sorted({p.users for p in pts if p.users is not None})
    left, right = 96.0, 830.0
    if not users:
        svg.text((left + right) / 2, 300, "no point with a user count", anchor="middle", fill=MUTED)
        return svg.render()
    lo, hi = users[0], users[-1]
    sx: _Linear
    if hi / lo >= 8:  # doubling sweeps (auto): a log scale spaces the points evenly
        sx = _Log2(math.log2(lo) - 0.3, math.log2(hi) + 0.3, left, right)
    else:
        pad = (hi - lo) * 0.05 or max(1.0, lo * 0.1)
        sx = _Linear(max(0.0, lo - pad), hi + pad, left, right)
    x_ticks = [(float(u), str(u)) for u in users]

    top: Box = (left, 70.0, right, 270.0)
    bottom: Box = (left, 340.0, right, 540.0)
    # Top: throughput.
    tput = [(p.users, p.tput) for p in pts]
    y_ticks = _ticks([v for _, v in tput if v is not None], 4)
    sy = _Linear(y_ticks[0], y_ticks[-1], top[3], top[1])
    _axes(svg, sx, sy, top, x_ticks, _labelled(y_ticks))
    _series(svg, sx, sy, tput, FRONTIER_COLOUR, "")
    unit = "total tok/s per GPU" if sweep.per_gpu else "total tok/s"
    _y_title(svg, 24, (top[1] + top[3]) / 2, unit)

    # Bottom: interactivity, with the tiers as horizontal guides.
    p90 = [(p.users, p.interactivity_p90) for p in pts]
    p50 = [(p.users, p.interactivity_p50) for p in pts]
    y_ticks = _ticks([v for _, v in p90 + p50 if v is not None], 4)
    sy = _Linear(y_ticks[0], y_ticks[-1], bottom[3], bottom[1])
    _axes(svg, sx, sy, bottom, x_ticks, _labelled(y_ticks))
    last_label_y = math.inf
    for t, _ in sweep.tiers:  # ascending: labels go up the right edge, a crowded one is left out
        if y_ticks[0] <= t <= y_ticks[-1]:
            y = sy(t)
            svg.line(bottom[0], y, bottom[2], y, MUTED, 1, "4 4")
            if last_label_y - y >= 12:
                svg.text(bottom[2] + 4, y + 4, f"{t:g}", size=11, fill=MUTED)
                last_label_y = y
    _series(svg, sx, sy, p50, OTHER_COLOUR, "6 4")
    _series(svg, sx, sy, p90, OTHER_COLOUR, "")
    _y_title(svg, 24, (bottom[1] + bottom[3]) / 2, "interactivity (tok/s per user)")
    svg.text((left + right) / 2, bottom[3] + 40, "users (concurrent agent sessions)", size=13, anchor="middle")

    y = bottom[3] + 76
    svg.line(left, y - 4, left + 30, y - 4, FRONTIER_COLOUR, 2)
    svg.text(left + 36, y, "throughput (top)")
    svg.line(left + 170, y - 4, left + 200, y - 4, OTHER_COLOUR, 2)
    svg.text(left + 206, y, "p90 interactivity")
    svg.line(left + 346, y - 4, left + 376, y - 4, OTHER_COLOUR, 2, "6 4")
    svg.text(left + 382, y, "p50 interactivity")
    svg.line(left + 522, y - 4, left + 552, y - 4, MUTED, 1, "4 4")
    svg.text(left + 558, y, "tiers (tok/s per user)")
    return svg.render()


def _series(
    svg: _Svg,
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

CHARTS = (
    ("frontier", "Frontier: total tokens/s per GPU against p90 interactivity", render_frontier_svg),
    ("points", "Per point: throughput and interactivity against users", render_points_svg),
)


def chart_paths(report_path: Path) -> list[Path]:
    """Where the pictures of `report_path` go: ``report.md`` → ``report.frontier.svg``, ``report.points.svg``."""
    return [report_path.with_name(f"{report_path.stem}.{kind}.svg") for kind, _, _ in CHARTS]


def _write_atomic(path: Path, text: str) -> None:
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


def write_sweep_charts(report_path: Path, report: dict[str, Any]) -> list[Path]:
    """Write the sweep's pictures beside `report_path` and return their paths; none (and nothing written)
    when the report has no `points`. OSError propagates: the caller words it like the report's own."""
    if not report.get("points"):
        return []
    paths = chart_paths(report_path)
    for path, (_, _, render) in zip(paths, CHARTS, strict=True):
        _write_atomic(path, render(report))
    return paths


def markdown_images(paths: Sequence[Path]) -> list[str]:
    """One Markdown image line per picture, linked relative to the report (the pictures sit beside it).
    Put each on its own paragraph (a blank line between)."""
    alts = {f".{kind}.svg": alt for kind, alt, _ in CHARTS}
    lines = []
    for path in paths:
        alt = next((a for suffix, a in alts.items() if path.name.endswith(suffix)), path.stem)
        lines.append(f"![{alt}]({quote(path.name)})")
    return lines

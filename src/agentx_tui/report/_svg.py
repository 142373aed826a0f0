"""SVG primitives for the report's charts (report/_charts.py): nice axis ticks (the steps of
`sweep.nice_step`, as on the Frontier pane) and their labels, linear and log₂ scales, an SVG writer with
coordinates rounded to 0.1 px (same input → byte-identical file), and labels placed clear of each other."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from xml.sax.saxutils import escape

from agentx_tui.sweep import nice_step

FONT = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif"
GRID = "#e6e6e6"
INK = "#222222"
MUTED = "#8a8a8a"
TICK_SIZE = 12
LABEL_SIZE = 12

# --- scales, ticks, numbers --------------------------------------------------------------------------


def nice_ticks(values: Sequence[float], count: int, *, room: float = 0.05, also: Sequence[float] = ()) -> list[float]:
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
    step = nice_step(hi - lo, count)
    first = math.floor(lo / step + 1e-9)
    last = math.ceil(hi / step - 1e-9)
    return [i * step for i in range(first, last + 1)]


def tick_labels(ticks: Sequence[float]) -> list[str]:
    """0, 5K, 10K … 30K; 0, 500, 1,000 … 3,000; 0, 0.5, 1: a suffix from 10 K up, as few decimals as the
    ticks need, and the same decimals on every tick."""
    top = ticks[-1]
    scale, suffix = next(((s, x) for s, x in ((1e9, "B"), (1e6, "M"), (1e3, "K")) if top >= 10 * s), (1.0, ""))
    decimals = next(
        (d for d in range(4) if all(abs(v / scale * 10**d - round(v / scale * 10**d)) < 1e-6 for v in ticks)), 3
    )
    return ["0" if v == 0 else f"{v / scale:,.{decimals}f}{suffix}" for v in ticks]


def labelled(ticks: Sequence[float]) -> list[tuple[float, str]]:
    return list(zip(ticks, tick_labels(ticks), strict=True))


def coord(v: float) -> str:
    """A coordinate: 0.1 px is finer than any screen, and short fixed text keeps files identical."""
    text = f"{v:.1f}"
    return text[:-2] if text.endswith(".0") else text


class Linear:
    def __init__(self, lo: float, hi: float, px_lo: float, px_hi: float) -> None:
        self.lo, self.hi, self.px_lo, self.px_hi = lo, hi, px_lo, px_hi

    def __call__(self, v: float) -> float:
        return self.px_lo + (v - self.lo) / (self.hi - self.lo) * (self.px_hi - self.px_lo)


class Log2(Linear):
    def __call__(self, v: float) -> float:
        return super().__call__(math.log2(v))


# --- SVG text ---------------------------------------------------------------------------------------


def text_width(text: str, size: float) -> float:
    # DejaVu Sans digits are 0.64 em, most letters less: an upper bound keeps placed labels apart.
    return len(text) * size * 0.64


class Svg:
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

    def heading(self, x: float, title: str, subtitle: str = "") -> None:
        """Every chart's title, and the line under it that says what run it shows (left out when empty)."""
        self.text(x, 28, title, size=17, font_weight="bold")
        if subtitle:
            self.text(x, 48, subtitle, size=13, fill=MUTED)

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
            f'<text x="{coord(x)}" y="{coord(y)}" font-size="{size:g}" text-anchor="{anchor}" fill="{fill}"{extra}>'
            f"{escape(text)}</text>"
        )

    def diamond(self, x: float, y: float, r: float) -> None:
        corners = ((x, y - r), (x + r, y), (x, y + r), (x - r, y))
        d = "M" + " L".join(f"{coord(cx)},{coord(cy)}" for cx, cy in corners) + " Z"
        self.add(f'<path d="{d}" fill="#ffffff" stroke="{INK}" stroke-width="1.5"/>')

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str, width: float = 1, dash: str = "") -> None:
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(
            f'<line x1="{coord(x1)}" y1="{coord(y1)}" x2="{coord(x2)}" y2="{coord(y2)}" stroke="{stroke}" '
            f'stroke-width="{width:g}"{d}/>'
        )

    def polyline(self, pts: Sequence[tuple[float, float]], stroke: str, width: float = 2, dash: str = "") -> None:
        if len(pts) < 2:
            return
        d = f' stroke-dasharray="{dash}"' if dash else ""
        coords = " ".join(f"{coord(x)},{coord(y)}" for x, y in pts)
        self.add(f'<polyline points="{coords}" fill="none" stroke="{stroke}" stroke-width="{width:g}"{d}/>')

    def circle(self, x: float, y: float, r: float, *, fill: str, stroke: str) -> None:
        centre = f'cx="{coord(x)}" cy="{coord(y)}"'
        self.add(f'<circle {centre} r="{r:g}" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>')

    def square(self, x: float, y: float, r: float, *, stroke: str) -> None:
        """A hollow square of half-side `r`: a tier sweep's probe."""
        corner = f'x="{coord(x - r)}" y="{coord(y - r)}" width="{coord(2 * r)}" height="{coord(2 * r)}"'
        self.add(f'<rect {corner} fill="#ffffff" stroke="{stroke}" stroke-width="1.3"/>')

    def render(self) -> str:
        return "\n".join([*self.parts, "</svg>", ""])


Box = tuple[float, float, float, float]  # x0, y0, x1, y1 (y down)


def overlap(a: Box, b: Box) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def place_labels(
    anchors: Sequence[tuple[float, float, str]], obstacles: Iterable[Box], bounds: Box
) -> list[tuple[float, float, str]]:
    """Put each label next to its point where it covers no other label, point or guide text: the first
    free spot of eight around it, else the least covered one. Returns (x, baseline y, text), start-anchored."""
    taken = list(obstacles)
    placed = []
    gap, h = 6.0, LABEL_SIZE * 0.8
    for px, py, text in anchors:
        w = text_width(text, LABEL_SIZE)
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
            return sum(overlap(box, t) for t in taken) + (1e6 if outside else 0.0)

        box = min(boxes, key=cost)  # the first of equally good spots: the order above is the preference
        taken.append(box)
        placed.append((box[0], box[3], text))
    return placed


def drop_crowded(labels: Sequence[tuple[float, str]], min_gap: float) -> list[tuple[float, str]]:
    """Keep tick or guide labels (centre x, text) left to right, skipping any that would touch the previous."""
    kept: list[tuple[float, str]] = []
    right = -math.inf
    for x, text in sorted(labels):
        half = text_width(text, TICK_SIZE) / 2
        if x - half >= right + min_gap:
            kept.append((x, text))
            right = x + half
    return kept


def axes(
    svg: Svg,
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
    for x, label in drop_crowded([(sx(v), label) for v, label in x_ticks], 8):
        svg.line(x, y1, x, y1 + 5, INK)
        svg.text(x, y1 + 20, label, anchor="middle")
    svg.line(x0, y1, x1, y1, INK)
    svg.line(x0, y0, x0, y1, INK)


def y_title(svg: Svg, x: float, y_mid: float, text: str) -> None:
    svg.text(x, y_mid, text, size=13, anchor="middle", transform=f"rotate(-90 {coord(x)} {coord(y_mid)})")

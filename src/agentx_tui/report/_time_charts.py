"""The Markdown report's "Where the time went" picture of a sweep (docs/metrics.md, "Where the time went"),
written beside the report like its other pictures (report/_charts.py), with the same primitives
(report/_svg.py).

``NAME.time.svg`` (``report.md`` → ``report.time.svg``): one stacked bar per point, its users under it,
in the points' order: how the time of the requests that set the point's North Star (its own p90 tail)
split into the first token — cut into queued, prefill and outside the server where the servers export
their request phases — decode and decode stalls (snapshot/split.py), and how that split moves as the
users grow.

Deterministic like the other pictures: same report → byte-identical file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentx_tui.report._charts import FRONTIER_COLOUR, OTHER_COLOUR, Chart, markdown_images, run_line, write_charts
from agentx_tui.report._model import Report
from agentx_tui.report._svg import MUTED, Box, Linear, Svg, axes, coord, y_title
from agentx_tui.snapshot import Figures, PointFigures, TailSplit, tail_split


@dataclass(frozen=True)
class Part:
    """One segment of the bar: what it is in words, its share of a split (None: not in this split), its colour."""

    words: str
    share: Callable[[TailSplit], float | None]
    colour: str


# The bar's parts, bottom to top: the first token (whole, or cut by the servers' phases), decode, stalls.
FIRST_TOKEN = Part("first token", lambda s: None if s.phased else s.first_token, OTHER_COLOUR)
PARTS: tuple[Part, ...] = (
    Part("queued on the server", lambda s: s.queue, "#862e0b"),
    Part("prefill", lambda s: s.prefill, OTHER_COLOUR),
    Part("first token, outside the server", lambda s: s.outside, "#f59f00"),
    FIRST_TOKEN,
    Part("decode", lambda s: s.decode, FRONTIER_COLOUR),
    Part("decode stalls", lambda s: s.stalls, "#7048e8"),
)


def split_of(figures: Figures) -> TailSplit | None:
    """The North Star tail's split of a set of figures (the run's, a point's): snapshot/split.py's rule, its
    first token cut by the servers' phases where they export them."""
    return tail_split(
        figures.north_star_ttft_share,
        figures.north_star_stall_share,
        queue_s=figures.server_queue_s_mean,
        prefill_s=figures.server_prefill_s_mean,
        outside_s=figures.ttft_outside_server_s_mean,
    )


def point_splits(report: Report) -> list[tuple[PointFigures, TailSplit | None]]:
    """Each point this version can read with its split (None where its figures do not tell one)."""
    return [(p, split_of(p)) for p in report.points or () if isinstance(p, PointFigures)]


def parts_of(splits: Sequence[TailSplit | None]) -> list[Part]:
    """The parts some split has, in the bar's order: a picture shows no segment nobody has. With no split
    at all, the client's own parts (the first token whole, decode, stalls): what is n/a."""
    known = [s for s in splits if s is not None]
    if not known:
        return [part for part in PARTS if part is FIRST_TOKEN or part.words.startswith("decode")]
    return [part for part in PARTS if any(part.share(s) is not None for s in known)]


# A table's column of the whole first token, before its phases' (the bar draws those in its place).
WHOLE_FIRST_TOKEN = Part("first token", lambda s: s.first_token, OTHER_COLOUR)


def columns_of(splits: Sequence[TailSplit | None]) -> list[Part]:
    """A table's columns: the first token whole, then its phases where a split has them, decode, stalls."""
    return [WHOLE_FIRST_TOKEN, *(part for part in parts_of(splits) if part is not FIRST_TOKEN)]


_LEFT, _RIGHT = 96.0, 830.0


def render_time_svg(report: Report) -> str:
    """The points' splits as stacked bars against their users, as SVG text (deterministic)."""
    rows = point_splits(report)
    title = "Where the time went: the North Star's tail, point by point"
    svg = Svg(860, 480, title)
    svg.heading(_LEFT, title, run_line(report, "each point's requests with r_i ≥ its p90 of r_i"))
    box: Box = (_LEFT, 78.0, _RIGHT, 358.0)
    if not any(split is not None for _, split in rows):
        svg.text((box[0] + box[2]) / 2, 200, "no point streamed a request with an output token", anchor="middle")
        return svg.render()
    sx = Linear(-0.5, len(rows) - 0.5, box[0], box[2])
    sy = Linear(0.0, 1.0, box[3], box[1])
    x_ticks = [(float(i), f"{point.users}") for i, (point, _) in enumerate(rows)]
    y_ticks = [(t, f"{t:.0%}") for t in (0.0, 0.25, 0.5, 0.75, 1.0)]
    axes(svg, sx, sy, box, x_ticks, y_ticks)  # first: the grid lies under the bars
    width = min(64.0, (box[2] - box[0]) / len(rows) * 0.7)
    for i, (_, split) in enumerate(rows):
        x = sx(i) - width / 2
        if split is None:
            svg.text(sx(i), box[3] - 8, "n/a", anchor="middle", fill=MUTED)
            continue
        bottom = 0.0
        for part in PARTS:
            share = part.share(split)
            if not share:
                continue
            y_top, y_bottom = sy(bottom + share), sy(bottom)
            svg.add(
                f'<rect x="{coord(x)}" y="{coord(y_top)}" width="{coord(width)}" '
                f'height="{coord(y_bottom - y_top)}" fill="{part.colour}"/>'
            )
            if y_bottom - y_top >= 16:  # its share inside it, where it fits
                svg.text(sx(i), (y_top + y_bottom) / 2 + 4, f"{share:.0%}", anchor="middle", fill="#ffffff")
            bottom += share
    y_title(svg, 24, (box[1] + box[3]) / 2, "share of the tail's time (Σ r_i)")
    svg.text((box[0] + box[2]) / 2, box[3] + 44, "users (concurrent sessions) at the point", size=13, anchor="middle")
    x = box[0]
    for part in parts_of([split for _, split in rows]):
        svg.add(f'<rect x="{coord(x)}" y="{coord(box[3] + 64)}" width="14" height="14" fill="{part.colour}"/>')
        svg.text(x + 20, box[3] + 76, part.words)
        x += 34 + len(part.words) * 6.6  # a legend entry: its square, its words (DejaVu Sans at 12 px)
    return svg.render()


TIME_CHART: Chart = ("time", "Where the time went: the North Star's tail per point", render_time_svg)


def write_time_charts(report_path: Path, report: Report) -> list[Path]:
    """Write the picture beside `report_path` and return its path; none (and nothing written) for a plain run
    or a sweep whose points tell no split. OSError propagates: the caller words it like the report's."""
    if not any(split is not None for _, split in point_splits(report)):
        return []
    return write_charts(report_path, report, (TIME_CHART,))


def time_markdown_images(paths: Sequence[Path]) -> list[str]:
    """The picture's Markdown image line, linked relative to the report (beside it)."""
    return markdown_images(paths, (TIME_CHART,))

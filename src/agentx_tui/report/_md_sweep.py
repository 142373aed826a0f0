"""The Markdown report's sweep sections: the points (how fast, what they cost, their warm-ups), a tier sweep's
probes, and the tier reads."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from agentx_tui.report._format import NA, Format, by_unit, cell, si
from agentx_tui.report._md_table import Cell, escape, grid, span, table_cell
from agentx_tui.report._model import Report
from agentx_tui.report._why import NO_TIER_INTERVAL
from agentx_tui.snapshot import (
    AGENTS_GROUP,
    POINTS_SPEED,
    POINTS_USE,
    Figures,
    Place,
    PointFigures,
    TierRead,
    declared,
    shown,
)
from agentx_tui.snapshot.unknown import why_unknown
from agentx_tui.sweep import DECODE, NORTH_STAR

# The tier reads' axis, in the tiers table (a read without one is of before the axis was chosen: decode).
_AXIS_WORDS = {NORTH_STAR: "North Star (E2E)", DECODE: "decode"}


def _point_table(
    points: Sequence[PointFigures | dict[str, Any]],
    place: Place,
    *,
    intervals: bool,
    frontier: set[int],
) -> list[str]:
    """One table of the points: each point's users, then the figures declared for `place` (snapshot/figures.py,
    in their order), each interval after its figure (`intervals`)."""
    dumped = [p.model_dump() if isinstance(p, PointFigures) else p for p in points]
    columns = shown(PointFigures, place)
    head = ["point", "users"]
    for fig in columns:
        head.append(fig.head)
        if intervals and fig.interval:
            head.append(f"{fig.head.removesuffix(' tok/s/user').removesuffix(' tok/s/GPU')} 95%")
    if intervals:
        head += ["frontier", "window ended"]
    rows: list[list[Cell]] = []
    for i, (point, d) in enumerate(zip(points, dumped, strict=True)):
        figures = point if isinstance(point, PointFigures) else None
        row: list[Cell] = [(str(i + 1), None), table_cell(d.get("users"), cell, partial(point_why, "users", figures))]
        for fig in columns:
            row.append(table_cell(d.get(fig.key), by_unit(fig.unit), partial(point_why, fig.key, figures)))
            if intervals and fig.interval:
                text = span(d, fig.key)
                row.append((text, point_why(f"{fig.key}_ci_low", figures) if text == NA else None))
        if intervals:
            ended = ("early: " if d.get("stopped_early") else "") + str(d.get("stop_reason") or "")
            row += [("yes" if i in frontier else "", None), (ended, None)]
        rows.append(row)
    return grid(head, rows, "point")


def point_why(key: str, point: Figures | None) -> str:
    return why_unknown(key, point) if point is not None else "the point, of another version, does not have it"


def points_section(report: Report, data: dict[str, Any]) -> list[str]:
    points = report.points or []
    frontier = set(report.frontier or [])
    lines = ["How fast each point was:", ""]
    lines += _point_table(points, POINTS_SPEED, intervals=True, frontier=frontier)
    lines += ["What each point cost and how it used the servers:", ""]
    lines += _point_table(points, POINTS_USE, intervals=False, frontier=frontier)
    lines += _tiers_table(report)
    dumped = data.get("points") or []
    lines += _point_notes(dumped, "ci_method", "How each point's 95% intervals were computed")
    lines += _point_notes(dumped, "ci_note", "Why a point's interval is n/a", thin=True)
    lines += _warm_ups(dumped)
    lines += _joined(report.sweep_join)
    if report.sweep_stop_reason:
        lines += [f"The sweep ended: {escape(report.sweep_stop_reason.rstrip('.'))}.", ""]
    lines += _probes_table(data)
    if report.has("sweep_gpu_seconds"):
        gpu_s = report.sweep_gpu_seconds
        took = NA + " (no GPU count)" if gpu_s is None else f"{gpu_s:,.0f} GPU·s ({gpu_s / 3600:.2f} GPU·h)"
        what = "its wall time × GPUs, probes and warm-ups included"
        lines += [f"The sweep's GPU time (`sweep_gpu_seconds`, {what}): {took}.", ""]
    return lines


def _point_notes(points: Sequence[dict[str, Any]], key: str, title: str, *, thin: bool = False) -> list[str]:
    """A list of the points' words under `key` (`ci_method`, `ci_note`), each point that has some, under
    `title`; a thin point marked so (`thin`)."""
    notes = [
        f"- point {i + 1}{' (thin)' if thin and p.get('thin') else ''}: {escape(str(p[key]))}"
        for i, p in enumerate(points)
        if p.get(key)
    ]
    return [f"{title} (`{key}`):", "", *notes, ""] if notes else []


def _joined(join: str | None) -> list[str]:
    """How the users the sweep added began (`sweep_join`); nothing in a report from before it was said."""
    if join == "midway":
        how = "each user's first session joined at a step drawn at random, its earlier steps built unsent"
    elif join == "start":
        how = "each user's sessions started at their first step"
    else:
        return []
    return [f'Users (`sweep_join` {join}; docs/sweeps.md, "Users that join"): {how}.', ""]


def _warm_ups(points: Sequence[dict[str, Any]]) -> list[str]:
    """How long the points warmed up, and each one whose load had not settled when its window opened."""
    judged = [p for p in points if p.get("steady") is not None]
    if not judged:
        return []
    waits = [p.get("warmup_s") or 0.0 for p in judged]
    span = cell(min(waits)) if cell(min(waits)) == cell(max(waits)) else f"{cell(min(waits))}–{cell(max(waits))}"
    lines = [
        f"Each point's window opened once its load was steady (MSER-5) and every user had 10 requests done, "
        f'or at `--warmup` (`steady`, `steady_reason`; docs/sweeps.md, "Warm-up by the data"): after {span} s '
        "of warm-up.",
        "",
    ]
    unsteady = [
        f"- point {i + 1} ({p.get('users')} user{'s' if p.get('users') != 1 else ''}), after "
        f"{cell(p.get('warmup_s'))} s: {escape(str(p.get('steady_reason') or ''))}"
        for i, p in enumerate(points)
        if p.get("steady") is False
    ]
    if unsteady:
        lines += ["Not steady when its window opened:", "", *unsteady, ""]
    return lines


_PROBE_COLUMNS: tuple[tuple[str, str, Format], ...] = (
    ("users", "users", cell),
    ("purpose", "for", str),
    ("warmup_s", "warm-up s", cell),
    ("duration_s", "window s", cell),
    ("requests", "requests", cell),
    ("e2e_interactivity_p90_tokens_per_s", "North Star p90 tok/s/user", si),
    ("interactivity_p90_tokens_per_s", "decode p90 tok/s/user", si),
    ("total_tokens_per_s_per_gpu", "total tok/s/GPU", si),
    ("steady", "steady", cell),
)


def _probes_table(data: dict[str, Any]) -> list[str]:
    """A tier sweep's probes (docs/sweeps.md, "A tier sweep"): apart from the points, never on the frontier."""
    probes = data.get("probes") or []
    if not probes:
        return []
    lines = [
        "The probes (`probes`): short windows that found where p90 interactivity crosses each tier. They are "
        "not points: no frontier or tier read stands on them.",
        "",
    ]
    rows: list[list[Cell]] = [
        [(str(p.get("index", i + 1)), None)]
        + [table_cell(p.get(key), fmt, "not measured in its window") for key, _, fmt in _PROBE_COLUMNS]
        for i, p in enumerate(probes)
    ]
    return lines + grid(["probe", *(title for _, title, _ in _PROBE_COLUMNS)], rows, "probe")


def _tiers_table(report: Report) -> list[str]:
    """The tier reads on both axes (docs/sweeps.md): the frontier's own axis first, with the agents per
    GPU and per MW read there, then the other; every figure a read declares (`TierRead`), each interval
    after its figure. A read of before the axis was chosen is on decode interactivity."""
    primary = report.frontier_axis
    reads = declared(TierRead)
    head = ["tier (tok/s/user, p90)", "read on"]
    for fig in reads.values():
        head += [fig.head, "95% interval"] if fig.interval else [fig.head]
    head.append("note (why a read is n/a)")
    rows: list[list[Cell]] = []
    for tier in report.tiers or []:
        d = tier.model_dump()
        axis = tier.axis
        on_frontier = axis == primary if primary is not None else axis is None
        note = tier.note or ""

        def known(value: Any, fmt: Format, note: str = note) -> Cell:
            """A read's figure; its n/a is said by the row's note when it has one."""
            text, reason = table_cell(value, fmt, "not read at this tier")
            return text, None if note else reason

        row: list[Cell] = [
            (cell(tier.tier), None),
            (_AXIS_WORDS.get(axis, "decode") if axis is not None else "decode", None),
        ]
        for key, fig in reads.items():
            if fig.group == AGENTS_GROUP and not (on_frontier and primary is not None):  # read on its axis only
                row.append(("", None))
                continue
            value = getattr(tier, key)
            row.append(known(value, by_unit(fig.unit)))
            if fig.interval:  # n/a with the read's note, or because its points carry none
                interval = span(d, key)
                unread = value is None
                row.append(known(None, cell) if unread else (interval, NO_TIER_INTERVAL if interval == NA else None))
        rows.append([*row, (note, None)])
    return grid(head, rows, "tier row")


# --- where the time went --------------------------------------------------------------------------------

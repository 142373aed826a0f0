"""The sweep's pictures beside the Markdown report: written only for sweeps, deterministic, readable."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from agentx_tui.report import Report
from agentx_tui.report import _charts as charts
from agentx_tui.report._charts import chart_paths, markdown_images
from agentx_tui.report._keys import tier_report_keys
from agentx_tui.report._svg import text_width
from agentx_tui.snapshot import PointFigures
from agentx_tui.sweep import pareto_front, read_tiers


# The tests write each report as the JSON it is (a dict), and the charts read it as a `Report`, as from a file.
def render_frontier_svg(report: dict[str, Any]) -> str:
    return charts.render_frontier_svg(Report.model_validate(report))


def render_points_svg(report: dict[str, Any]) -> str:
    return charts.render_points_svg(Report.model_validate(report))


def write_sweep_charts(report_path: Path, report: dict[str, Any]) -> list[Path]:
    return charts.write_sweep_charts(report_path, Report.model_validate(report))


SVG = "{http://www.w3.org/2000/svg}"
USERS = (1, 2, 4, 8, 16, 32, 64, 96, 128, 160, 196, 256)
P90 = (190.0, 185.0, 176.0, 160.0, 140.0, 118.0, 95.0, 80.0, 66.0, 52.0, 40.0, 28.0)
TPUT = (800.0, 1550.0, 3000.0, 5600.0, 9800.0, 15000.0, 21000.0, 23500.0, 25500.0, 26800.0, 26000.0, 27200.0)
TIERS = (30, 50, 75, 100, 150, 200)


def sweep_report(
    users: tuple[int, ...] = USERS, p90: tuple[Any, ...] = P90, tput: tuple[Any, ...] = TPUT
) -> dict[str, Any]:
    points = [
        PointFigures(
            index=i,
            users=u,
            warmup_s=20,
            duration_s=60,
            window_start_s=80.0 * i + 20,
            interactivity_p90_tokens_per_s=x,
            interactivity_p50_tokens_per_s=None if x is None else x * 1.3,
            total_tokens_per_s_per_gpu=y,
            total_tokens_per_s=y,
        )
        for i, (u, x, y) in enumerate(zip(users, p90, tput, strict=True))
    ]
    front = pareto_front([(p.interactivity_p90_tokens_per_s, p.total_tokens_per_s_per_gpu) for p in points])
    tiers = read_tiers(points, front, TIERS, usd_per_gpu_hour=2.9, gpus=1)
    return {
        "agentx_version": "0.1.0",
        "model": "Qwen/Qwen3-8B",
        "workload": "coding-agent",
        "gpus": 1,
        "duration_s": 960.0,
        "points": [p.model_dump() for p in points],
        "frontier": list(front),
        **tier_report_keys(tiers),
    }


def texts(svg: str) -> list[ET.Element]:
    return list(ET.fromstring(svg).iter(f"{SVG}text"))


def test_a_single_run_gets_no_picture(tmp_path: Path) -> None:
    report_path = tmp_path / "report.md"
    assert write_sweep_charts(report_path, {"agentx_version": "0.1.0", "duration_s": 60.0}) == []
    assert write_sweep_charts(report_path, {"points": []}) == []
    assert list(tmp_path.iterdir()) == []


def test_the_pictures_sit_beside_the_report_and_are_linked_relatively(tmp_path: Path) -> None:
    report_path = tmp_path / "my run.md"
    paths = write_sweep_charts(report_path, sweep_report())
    assert paths == [tmp_path / "my run.frontier.svg", tmp_path / "my run.points.svg"] == chart_paths(report_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my run.frontier.svg", "my run.points.svg"]  # no temp left
    assert markdown_images(paths) == [
        "![Frontier: total tokens/s per GPU against p90 interactivity](my%20run.frontier.svg)",
        "![Per point: throughput and interactivity against users](my%20run.points.svg)",
    ]


def test_the_same_report_gives_byte_identical_files(tmp_path: Path) -> None:
    first = [p.read_bytes() for p in write_sweep_charts(tmp_path / "a.md", sweep_report())]
    again = [p.read_bytes() for p in write_sweep_charts(tmp_path / "b.md", sweep_report())]
    assert first == again
    shuffled = dict(reversed(list(sweep_report().items())))  # key order of the JSON does not matter
    assert [render_frontier_svg(shuffled), render_points_svg(shuffled)] == [f.decode() for f in first]
    assert not re.search(rb'\bid="', first[0] + first[1])  # no generated ids, no dates
    assert b"2026" not in first[0] + first[1]


@pytest.mark.parametrize("render", [render_frontier_svg, render_points_svg])
def test_the_pictures_are_well_formed_svg_with_axis_titles_and_units(render: Any) -> None:
    svg = render(sweep_report())
    words = " ".join(t.text or "" for t in texts(svg))
    assert "tok" in words and "per GPU" in words
    if render is render_frontier_svg:
        assert "decode interactivity, tok/s/user (p90)" in words  # a report of before the axis: decode
        assert "total tokens/s per GPU (cache + input + output)" in words
    else:
        assert "users (concurrent agent sessions)" in words
        assert "interactivity (tok/s per user)" in words


def test_the_frontier_draws_every_point_the_curve_and_the_tiers() -> None:
    report = sweep_report()
    root = ET.fromstring(render_frontier_svg(report))
    circles = [c for c in root.iter(f"{SVG}circle")]
    assert len(circles) == len(USERS) + 2  # the points, and two in the legend
    hollow = [c for c in circles if c.get("fill") == "#ffffff"]
    assert len(hollow) == 2  # the dominated point (196 users) and its legend entry
    curve = [p for p in root.iter(f"{SVG}path") if "C" in (p.get("d") or "")]
    assert len(curve) == 1
    assert (curve[0].get("d") or "").count("C") == len(report["frontier"]) - 1  # one Bézier piece per gap
    guides = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke-dasharray") == "4 4"]
    assert len(guides) == len(TIERS) + 1  # every tier (all within reach), and the legend's
    labels = {t.text for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "start" and (t.text or "").isdigit()}
    assert labels == {str(u) for u in USERS}


# Six points bunched at the fast end, 15 px apart: labelled naively, each would cover its neighbour.
CROWDED = (
    (190.0, 186.0, 182.0, 178.0, 174.0, 170.0, 100.0, 60.0, 40.0, 30.0, 25.0, 20.0),
    (800.0, 1100.0, 1400.0, 1700.0, 2000.0, 2300.0, 15000.0, 25000.0, 26000.0, 26500.0, 26800.0, 27000.0),
)


@pytest.mark.parametrize(("p90", "tput"), [(P90, TPUT), CROWDED], ids=["spread", "crowded"])
def test_twelve_point_labels_overlap_neither_each_other_nor_the_points(
    p90: tuple[float, ...], tput: tuple[float, ...]
) -> None:
    root = ET.fromstring(render_frontier_svg(sweep_report(USERS, p90, tput)))
    boxes = []
    for t in root.iter(f"{SVG}text"):
        if t.get("text-anchor") == "start" and (t.text or "").isdigit():
            x, y, size = float(t.get("x", 0)), float(t.get("y", 0)), float(t.get("font-size", 0))
            boxes.append((x, y - size * 0.8, x + text_width(t.text or "", size), y))
    assert len(boxes) == 12
    dots = [
        (float(c.get("cx", 0)) - 5, float(c.get("cy", 0)) - 5, float(c.get("cx", 0)) + 5, float(c.get("cy", 0)) + 5)
        for c in root.iter(f"{SVG}circle")
    ]

    def overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])

    assert not [pair for pair in combinations(boxes, 2) if overlap(*pair)]
    assert not [(b, d) for b in boxes for d in dots if overlap(b, d)]


def test_tiers_far_from_the_points_are_named_not_drawn() -> None:
    # A tiny model on a CPU: 3–22 tok/s/user, every tier out of reach.
    report = sweep_report((1, 2, 4, 8), (22.0, 20.0, 12.0, 3.5), (60.0, 110.0, 260.0, 300.0))
    root = ET.fromstring(render_frontier_svg(report))
    guides = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke-dasharray") == "4 4"]
    assert len(guides) == 1  # the legend's only
    words = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "Tiers 30, 50, 75, 100, 150, 200 tok/s/user: beyond the fastest point, no read." in words


def test_tiers_on_the_axis_without_a_read_are_drawn_and_explained() -> None:
    # A simulated sweep: 80–137 tok/s/user. Tiers 30 and 50 fit on the zero-based axis but have no read.
    report = sweep_report((2, 4, 8, 16), (137.0, 121.6, 116.9, 80.2), (5462.0, 9645.0, 7841.0, 15476.0))
    root = ET.fromstring(render_frontier_svg(report))
    guides = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke-dasharray") == "4 4"]
    assert len(guides) == 5 + 1  # 30, 50, 75, 100, 150 and the legend's; 200 is off the axis
    diamonds = [p for p in root.iter(f"{SVG}path") if (p.get("d") or "").endswith("Z")]
    assert len(diamonds) == 1 + 1  # only tier 100 is inside the frontier's range, and the legend's
    words = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "Tiers 30, 50, 75 tok/s/user: below the slowest point on the frontier, no read." in words
    assert "Tiers 150, 200 tok/s/user: beyond the fastest point, no read." in words


def test_points_without_figures_are_left_out_and_counted() -> None:
    report = sweep_report((1, 2, 4), (50.0, None, 30.0), (100.0, 200.0, None))
    frontier_words = " ".join(t.text or "" for t in texts(render_frontier_svg(report)))
    assert "2 points without both figures, not drawn." in frontier_words
    ET.fromstring(render_points_svg(report))  # a gap in a line, not a crash

    nothing = sweep_report((1,), (None,), (None,))
    assert "no point has both figures" in render_frontier_svg(nothing)


def test_without_a_gpu_count_the_throughput_axis_says_so() -> None:
    report = sweep_report((1, 2), (50.0, 40.0), (100.0, 180.0))
    for p in report["points"]:
        p["total_tokens_per_s_per_gpu"] = None
    del report["gpus"]
    words = " ".join(t.text or "" for t in texts(render_frontier_svg(report)))
    assert "total tokens/s (GPU count unknown)" in words
    assert "No tier read: the GPU count is unknown (set --gpus)." in words


def with_intervals(report: dict[str, Any], width: float) -> dict[str, Any]:
    """`report` with ±`width` intervals on every point's two figures and on every tier read."""
    out = dict(report)
    out["points"] = [
        {
            **p,
            "total_tokens_per_s_per_gpu_ci_low": p["total_tokens_per_s_per_gpu"] * (1 - width),
            "total_tokens_per_s_per_gpu_ci_high": p["total_tokens_per_s_per_gpu"] * (1 + width),
            "interactivity_p90_tokens_per_s_ci_low": p["interactivity_p90_tokens_per_s"] * (1 - width),
            "interactivity_p90_tokens_per_s_ci_high": p["interactivity_p90_tokens_per_s"] * (1 + width),
        }
        for p in report["points"]
    ]
    for t in TIERS:
        read = report.get(f"total_tokens_per_s_per_gpu_at_{t}")
        if read is not None:
            out[f"total_tokens_per_s_per_gpu_at_{t}_ci_low"] = read * (1 - width)
            out[f"total_tokens_per_s_per_gpu_at_{t}_ci_high"] = read * (1 + width)
    return out


def _bars(svg: str) -> list[ET.Element]:
    return [ln for ln in ET.fromstring(svg).iter(f"{SVG}line") if ln.get("stroke-width") == "1.2"]


def test_the_frontier_draws_each_intervals_as_capped_error_bars() -> None:
    plain = render_frontier_svg(sweep_report())
    assert _bars(plain) == [] and "95% intervals" not in plain
    svg = render_frontier_svg(with_intervals(sweep_report(), 0.1))
    reads = sum(1 for t in TIERS if sweep_report().get(f"total_tokens_per_s_per_gpu_at_{t}") is not None)
    # Per point two bars (x and y), per tier read one; each bar a line and two caps; and the legend's.
    assert len(_bars(svg)) == 3 * (2 * len(USERS) + reads) + 3
    assert "95% intervals: each point's throughput and p90 interactivity, each tier's read" in svg
    ET.fromstring(svg)  # well formed
    # A wider interval reaches further: the axes make room for the bars' ends.
    assert render_frontier_svg(with_intervals(sweep_report(), 0.3)) != svg

"""The Markdown report's "Where the time went" (docs/metrics.md): the North Star tail's split, the run's in
a table, a sweep's per point in a table and a picture of one stacked bar per point."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agentx_tui.report import Report, render_markdown, write_report
from agentx_tui.report._time_charts import PARTS, render_time_svg
from agentx_tui.snapshot import PointFigures
from tests.report._snaps import built, stream

SVG = "{http://www.w3.org/2000/svg}"
COLOURS = {part.words: part.colour for part in PARTS}
# A synthetic sweep: (users, first-token share, stall share) per point; decode is the rest.
SHARES = ((1, 0.1, 0.05), (4, 0.2, 0.1), (16, 0.4, 0.1), (64, 0.6, 0.2))


def _section(markdown: str) -> list[str]:
    lines = markdown.splitlines()
    start = lines.index("## Where the time went")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    return lines[start:end]


def _sweep(shares: tuple[tuple[int, float | None, float | None], ...] = SHARES) -> Report:
    points = [
        PointFigures(
            index=i,
            users=users,
            warmup_s=5.0,
            duration_s=30.0,
            window_start_s=5.0 + 35.0 * i,
            north_star_ttft_share=first,
            north_star_stall_share=stall,
            requests_completed=50,
        )
        for i, (users, first, stall) in enumerate(shares)
    ]
    return built(stream()).updated(points=points, frontier=list(range(len(points))))


def test_a_plain_run_says_its_tails_split_in_a_table() -> None:
    # docs/metrics.md's request: 0.4 s of its 0.96 s before the first token, 0.18 s of stalls.
    report = built(stream()).updated(north_star_ttft_share=0.4 / 0.96, north_star_stall_share=0.18 / 0.96)
    section = _section(render_markdown(report))
    at = section.index("| part | share of the tail's time |")
    assert section[at + 2 : at + 5] == ["| first token | 41.7% |", "| decode | 39.6% |", "| decode stalls | 18.8% |"]
    assert any("export no request phases" in line for line in section)  # the first token not cut, and why
    # The figures behind it (those declared for the section): | meaning | key | value | unit |.
    rows = {cells[1]: cells[2] for line in section if len(cells := line.strip("| ").split(" | ")) == 4}
    assert rows["north_star_ttft_share"] == "0.416667"
    assert rows["north_star_stall_share"] == "0.1875"


def test_the_servers_phases_cut_the_first_token_and_the_section_says_by_what_rule() -> None:
    # The same request on a server that queued it 0.1 s and prefilled it 0.3 s (docs/metrics.md).
    report = built(stream()).updated(
        north_star_ttft_share=0.4 / 0.96,
        north_star_stall_share=0.18 / 0.96,
        server_queue_s_mean=0.1,
        server_prefill_s_mean=0.3,
        ttft_outside_server_s_mean=0.0,
    )
    section = _section(render_markdown(report))
    at = section.index("| part | share of the tail's time |")
    assert section[at + 2 : at + 8] == [
        "| first token | 41.7% |",
        "| · queued on the server | 10.4% |",
        "| · prefill | 31.2% |",
        "| · outside the server (network, frontend, client) | 0.0% |",
        "| decode | 39.6% |",
        "| decode stalls | 18.8% |",
    ]
    rule = next(line for line in section if line.startswith("The first token's share is cut"))
    assert "in the proportions of the means over the same window" in rule and "not the tail's alone" in rule
    assert not any(line.startswith("**Speculative decoding**") for line in section)  # the server does not


def test_a_speculating_server_gets_its_acceptance_line() -> None:
    report = built(stream()).updated(
        north_star_ttft_share=0.3,
        north_star_stall_share=0.0,
        spec_acceptance_length=2.5,
        spec_acceptance_rate=0.5,
        spec_acceptance_by_position=[0.8, 0.5, 0.2],
        spec_draft_length=3,
        spec_golden_acceptance_length=2.49,
        spec_golden_source="golden.yaml: qwen3, k = 3",
        spec_acceptance_vs_golden=2.5 / 2.49,
    )
    line = next(line for line in _section(render_markdown(report)) if line.startswith("**Speculative decoding**"))
    assert "acceptance length 2.50 tokens per verify step (k = 3 draft tokens; accepted per draft by position " in line
    assert "0.80, 0.50, 0.20), 50.0% of the draft tokens accepted" in line
    assert "AgentX's golden length 2.49 (golden.yaml: qwen3, k = 3): measured ÷ golden 1.004" in line
    unpinned = report.updated(spec_golden_acceptance_length=None, spec_golden_source="no row for the model")
    line = next(line for line in _section(render_markdown(unpinned)) if line.startswith("**Speculative decoding**"))
    assert line.endswith("; no golden length to hold it to: no row for the model.")


def test_a_run_without_a_split_says_why_and_a_report_of_before_it_says_so() -> None:
    section = _section(render_markdown(built(stream()).updated(north_star_ttft_share=None)))
    assert any(line.startswith("No split: ") for line in section)
    older = Report.read({k: v for k, v in built(stream()).model_dump().items() if k != "north_star_ttft_share"})
    assert "Not in this report: it was written before the split was measured." in _section(render_markdown(older))


def test_a_sweeps_points_each_have_their_split_in_the_table() -> None:
    section = _section(render_markdown(_sweep()))
    at = section.index("| point | users | first token | decode | decode stalls |")
    assert section[at + 2 : at + 6] == [
        "| 1 | 1 | 10.0% | 85.0% | 5.0% |",
        "| 2 | 4 | 20.0% | 70.0% | 10.0% |",
        "| 3 | 16 | 40.0% | 50.0% | 10.0% |",
        "| 4 | 64 | 60.0% | 20.0% | 20.0% |",
    ]


def _bars(svg: str) -> dict[float, list[tuple[str, float, float]]]:
    """The stacked bars, by their centre x: (colour, top y, height) bottom to top (the legend's squares left out)."""
    bars: dict[float, list[tuple[str, float, float]]] = {}
    for rect in ET.fromstring(svg).iter(f"{SVG}rect"):
        if rect.get("fill") not in COLOURS.values() or rect.get("width") == "14":
            continue
        x, width = float(rect.get("x", 0)), float(rect.get("width", 0))
        bars.setdefault(round(x + width / 2, 1), []).append(
            (rect.get("fill", ""), float(rect.get("y", 0)), float(rect.get("height", 0)))
        )
    return {x: sorted(parts, key=lambda p: -p[1]) for x, parts in sorted(bars.items())}


def test_the_picture_has_one_stacked_bar_per_point_in_proportion_to_its_split() -> None:
    svg = render_time_svg(_sweep())
    bars = _bars(svg)
    assert len(bars) == len(SHARES)
    plot_bottom, plot_height = 358.0, 280.0  # the bars' box: 0 % at its bottom, 100 % at its top
    for (_, first, stall), parts in zip(SHARES, bars.values(), strict=True):
        assert stall is not None and first is not None
        expected = [
            (COLOURS["first token"], first),
            (COLOURS["decode"], 1 - first - stall),
            (COLOURS["decode stalls"], stall),
        ]
        assert [colour for colour, _, _ in parts] == [colour for colour, _ in expected]
        assert [height for _, _, height in parts] == pytest.approx([s * plot_height for _, s in expected], abs=0.2)
        assert parts[0][1] + parts[0][2] == pytest.approx(plot_bottom, abs=0.1)  # standing on 0 %
        assert parts[-1][1] == pytest.approx(plot_bottom - plot_height, abs=0.2)  # reaching 100 %
    # Under each bar its users, left to right in the points' order; each share written in its segment.
    texts = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    ticks = [t for t in ET.fromstring(svg).iter(f"{SVG}text") if t.get("y") == "378"]
    assert [t.text for t in ticks] == [str(users) for users, _, _ in SHARES]
    assert [round(float(t.get("x", 0)), 1) for t in ticks] == list(bars)
    assert {"60%", "20%", "85%"} <= set(texts)


def test_a_point_whose_servers_export_phases_has_its_first_token_cut_in_the_bar() -> None:
    report = _sweep(((2, 0.4, 0.1), (8, 0.6, 0.2)))
    points = [
        p.updated(server_queue_s_mean=0.1 * (i + 1), server_prefill_s_mean=0.2, ttft_outside_server_s_mean=0.1)
        for i, p in enumerate(report.points or ())
        if isinstance(p, PointFigures)
    ]
    report = report.updated(points=points)
    bars = list(_bars(render_time_svg(report)).values())
    # Point 1: queue 0.1 : prefill 0.2 : outside 0.1 of its 40% first token; point 2: 0.2 : 0.2 : 0.1 of 60%.
    shares = [(0.1, 0.2, 0.1, 0.5, 0.1), (0.24, 0.24, 0.12, 0.2, 0.2)]
    order = ["queued on the server", "prefill", "first token, outside the server", "decode", "decode stalls"]
    for parts, expected in zip(bars, shares, strict=True):
        assert [colour for colour, _, _ in parts] == [COLOURS[words] for words in order]
        assert [height for _, _, height in parts] == pytest.approx([s * 280.0 for s in expected], abs=0.2)
    section = _section(render_markdown(report))
    at = section.index(
        "| point | users | first token | queued on the server | prefill | first token, outside the server "
        "| decode | decode stalls |"
    )
    assert section[at + 3] == "| 2 | 8 | 60.0% | 24.0% | 24.0% | 12.0% | 20.0% | 20.0% |"


def test_a_point_without_a_split_is_n_a_in_the_table_and_the_picture() -> None:
    report = _sweep(((2, 0.3, 0.1), (8, None, None)))
    svg = render_time_svg(report)
    assert len(_bars(svg)) == 1
    assert "n/a" in [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    section = _section(render_markdown(report))
    assert "| 2 | 8 | n/a | n/a | n/a |" in section
    assert any(line.startswith("- *first token* n/a (point 2): ") for line in section)


def test_the_picture_is_written_beside_the_report_of_a_sweep_only(tmp_path: Path) -> None:
    write_report(tmp_path / "sweep.md", _sweep())
    assert (tmp_path / "sweep.time.svg").read_text() == render_time_svg(_sweep())  # deterministic
    assert (
        "![Where the time went: the North Star's tail per point](sweep.time.svg)" in (tmp_path / "sweep.md").read_text()
    )
    write_report(tmp_path / "run.md", built(stream()).updated(north_star_ttft_share=0.2, north_star_stall_share=0.0))
    assert not (tmp_path / "run.time.svg").exists()

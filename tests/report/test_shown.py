"""The report's tables and sections show the figures declared for them (snapshot/figures.py: `shown_in`,
`label`), in the declarations' order: no list of keys is kept beside the declarations."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import agentx_tui
from agentx_tui.report import HeadlessPrinter, render_markdown
from agentx_tui.report._keys import AGENTS_FIGURES, AGENTS_KEY_PREFIXES, TIER_FIGURES, TIER_KEY_PREFIXES
from agentx_tui.snapshot import (
    AGENTS_GROUP,
    CACHE_CLIENT,
    CACHE_SERVERS,
    POINTS_SPEED,
    POINTS_USE,
    SUMMARY_TABLE,
    TIME_SPLIT,
    Figures,
    PointFigures,
    TierRead,
    declared,
    figure,
    shown,
)
from agentx_tui.snapshot.base import Frozen
from agentx_tui.sweep import NORTH_STAR
from tests.report._snaps import built, stream
from tests.report.test_time_split import _sweep

SRC = Path(agentx_tui.__file__).parent


class _Declared(Frozen):
    plain: float | None = figure("s", "a figure no table names")
    second: float | None = figure("s", "the second in its table", shown_in=(POINTS_USE,))
    first: float | None = figure("tokens", "in both tables", shown_in=(POINTS_SPEED, POINTS_USE), label="first tok")


def test_a_declaration_names_its_places_and_its_head() -> None:
    figures = declared(_Declared)
    assert figures["plain"].shown_in == () and figures["plain"].head == "plain"  # no label: its key heads it
    assert figures["first"].shown_in == (POINTS_SPEED, POINTS_USE) and figures["first"].head == "first tok"
    assert [f.key for f in shown(_Declared, POINTS_USE)] == ["second", "first"]  # the declarations' order
    assert [f.key for f in shown(_Declared, POINTS_SPEED)] == ["first"]
    assert _Declared.model_json_schema()["properties"]["first"]["shown_in"] == [POINTS_SPEED, POINTS_USE]


def _table_head(markdown: str, first_cells: str) -> list[str]:
    line = next(line for line in markdown.splitlines() if line.startswith(first_cells))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_points_tables_are_the_figures_declared_for_them() -> None:
    markdown = render_markdown(_sweep())
    speed = ["point", "users"]
    for fig in shown(PointFigures, POINTS_SPEED):
        speed += [fig.head, f"{fig.head.split(' tok/s/')[0]} 95%"] if fig.interval else [fig.head]
    assert _table_head(markdown, "| point | users | total tok/s/GPU |") == [*speed, "frontier", "window ended"]
    use = ["point", "users", *(fig.head for fig in shown(PointFigures, POINTS_USE))]
    assert _table_head(markdown, "| point | users | client hit |") == use
    assert "requests" in speed and "mean prompt" in use  # a point's own count, a point's own figure


def test_the_tier_table_is_every_figure_a_tier_read_declares() -> None:
    head = _table_head(render_markdown(_sweep()), "| tier (tok/s/user, p90) |")
    reads = [
        h for fig in declared(TierRead).values() for h in ([fig.head, "95% interval"] if fig.interval else [fig.head])
    ]
    assert head == ["tier (tok/s/user, p90)", "read on", *reads, "note (why a read is n/a)"]


def _rows(markdown: str, heading: str) -> list[str]:
    """The keys of a section's table of figures (| meaning | key | value | unit |), in their order."""
    lines = markdown.splitlines()
    start = lines.index(heading)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    rows = [line[2:-2].split(" | ") for line in lines[start:end] if line.startswith("| ") and line.endswith(" |")]
    return [cells[1] for cells in rows if len(cells) == 4][1:]


def test_the_cache_and_time_sections_list_the_figures_declared_for_them() -> None:
    markdown = render_markdown(built(stream()))
    servers, client = ([f.key for f in shown(Figures, place)] for place in (CACHE_SERVERS, CACHE_CLIENT))
    assert _rows(markdown, "## Cache") == [*servers, *client]
    assert "prompt_share_computed" in servers and "prefix_evicted_share" in client
    assert _rows(markdown, "## Where the time went") == [f.key for f in shown(Figures, TIME_SPLIT)]


def test_the_summarys_tables_are_the_figures_declared_for_them() -> None:
    read = TierRead(tier=50.0, axis=NORTH_STAR, total_tokens_per_s_per_gpu=900.0, agents_per_gpu=3.0)
    out = io.StringIO()
    HeadlessPrinter(out).summary(_sweep().updated(tiers=[read], frontier_axis=NORTH_STAR), [])
    lines = out.getvalue().splitlines()
    points = lines[lines.index("  points (p90 interactivity in tok/s/user):") + 1]
    heads = [fig.head.removesuffix(" tok/s/user") for fig in shown(PointFigures, SUMMARY_TABLE)]
    assert points.split() == " ".join(["users", *heads, "frontier"]).split()
    tiers = lines[lines.index("  tiers (where the frontier crosses p90 interactivity T tok/s/user):") + 1]
    reads = [h for f in shown(TierRead, SUMMARY_TABLE) for h in ([f.head, "95% interval"] if f.interval else [f.head])]
    assert tiers.split() == " ".join(["tier", "read on", *reads]).split()


def test_a_tier_reads_keys_follow_its_declarations() -> None:
    assert tuple(f"{k}_at_" for k, f in TIER_FIGURES.items() if f.group != AGENTS_GROUP) == TIER_KEY_PREFIXES
    assert {"agents_per_gpu", "agents_per_mw"} == AGENTS_FIGURES
    assert AGENTS_KEY_PREFIXES == ("agents_per_gpu_at_", "agents_per_mw_at_")
    assert [k for k, f in TIER_FIGURES.items() if f.interval] == ["total_tokens_per_s_per_gpu"]


def test_every_figure_flagged_for_the_summary_is_one_it_prints() -> None:
    """The summary's list reads the run's and the proxy's flagged figures; AgentX's verdict has lines of its
    own. A flag no reader reads is a promise the summary does not keep."""
    flagged = {f.group for f in declared(Figures).values() if f.summary}
    assert flagged <= {"run", "proxy"}


def _declared_keys() -> set[str]:
    return {*declared(Figures), *declared(PointFigures), *declared(TierRead)}


def _hand_lists(path: Path, keys: set[str]) -> list[str]:
    """Literal tuples and lists of two or more strings that are all report keys, with their lines."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.List) and len(node.elts) >= 2:
            values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(values) == len(node.elts) and set(values) <= keys:
                found.append(f"{path.name}:{node.lineno} {values}")
    return found


def test_no_list_of_figure_keys_is_kept_beside_the_declarations() -> None:
    keys = _declared_keys()
    found = [
        hit
        for package in ("report", "sweep")
        for p in sorted((SRC / package).rglob("*.py"))
        for hit in _hand_lists(p, keys)
    ]
    assert found == [], "say it in the declarations (snapshot/figures.py: shown_in, label, group)"


def test_the_hand_list_check_sees_one(tmp_path: Path) -> None:
    (tmp_path / "listed.py").write_text('COLUMNS = ("ttft_p90_s", "itl_p90_s")\nWORDS = ("ttft_p90_s", "words")\n')
    assert len(_hand_lists(tmp_path / "listed.py", _declared_keys())) == 1

"""What a user sees at the sizes people use: the header's lines, the charts' extent, the log's wrap."""

from __future__ import annotations

import pytest
from rich.console import Console
from textual.color import Color
from textual.content import Content
from textual.widgets import RichLog, Sparkline

from agentx_tui.snapshot import AgentXRule, AgentXVerdict, Snapshot, UserRow
from agentx_tui.ui import AgentXApp
from agentx_tui.ui.header import RunHeader
from agentx_tui.ui.panes import UsersPane
from agentx_tui.ui.panes._base import flow, pack
from agentx_tui.ui.panes._spark import _Chart
from agentx_tui.ui.panes._table import Cell, KeyedTable
from tests.ui._helpers import pane, shown
from tests.ui.fakes import FakeLiveControls, FakeSource, make_snapshot

EVENT = "18:00:00 attach http://10.0.0.7:8000 ready; driving 12 users of coding-agent (a long line to wrap)"


def live_app() -> AgentXApp:
    snaps = [make_snapshot(seq, events=[EVENT] if seq == 1 else []) for seq in range(1, 4)]
    return AgentXApp(FakeSource(snaps), FakeLiveControls(), refresh_s=0.25)


def chart_rows(data: list[float], width: int, height: int = 1, ceiling: float = 0.0) -> list[str]:
    console = Console(width=width, color_system=None, legacy_windows=False)
    chart = _Chart(data, width, height, Color(0, 0, 0), Color(255, 255, 255), ceiling)
    with console.capture() as capture:
        console.print(chart, end="")
    return capture.get().split("\n")


def test_a_few_samples_are_stretched_over_the_whole_chart() -> None:
    (row,) = chart_rows([1.0, 2.0, 4.0, 8.0], 40)
    assert len(row) == 40 and " " not in row
    assert row == "▁" * 10 + "▂" * 10 + "▄" * 10 + "█" * 10


def test_a_long_history_shows_the_newest_sample_per_column() -> None:
    (row,) = chart_rows([0.0] * 50 + [8.0] * 10, 20)
    assert row == "▁" * 10 + "█" * 10


def test_a_fraction_chart_is_scaled_zero_to_one() -> None:
    # 3% KV usage must not draw as a full bar, as a chart scaled to its own range would.
    (row,) = chart_rows([0.03, 0.03, 0.04], 3, ceiling=1.0)
    assert row == "▁▁▁"
    (row,) = chart_rows([0.5, 1.0], 2, ceiling=1.0)
    assert row == "▄█"


def test_a_rate_chart_starts_at_zero_not_at_its_minimum() -> None:
    (row,) = chart_rows([1000.0, 1010.0], 2)
    assert row == "▇█"  # a steady rate is a steady, full chart, not noise blown up to ▁█


def test_header_parts_are_never_split_across_lines() -> None:
    parts = [Content(text) for text in ("agentx-tui", "● running 0:00:05", "x" * 30, "users 8")]
    lines = pack(parts, 40, 3)
    assert [[part.plain for part in line] for line in lines] == [
        ["agentx-tui", "● running 0:00:05"],
        ["x" * 30, "users 8"],
    ]


@pytest.mark.parametrize(("size", "lines"), [((80, 24), 2), ((120, 36), 2), ((200, 60), 1)])
async def test_header_fits_in_few_lines_and_leads_with_the_state(size: tuple[int, int], lines: int) -> None:
    app = live_app()
    async with app.run_test(size=size) as pilot:
        await shown(pilot, 3)
        header = app.query_one(RunHeader)
        text = str(header.render()).split("\n")
        assert len(text) == lines and header.region.height == lines
        assert "● running" in text[0]
        whole = " ".join(text)
        for item in ("attach http://10.0.0.7:8000", "meta-llama/Llama-3.1-8B-Instruct", "vLLM 0.32.0", "users 12"):
            assert item in whole


NOT_VALID = AgentXVerdict(
    rules=(
        AgentXRule(rule="point_length", state="broken", head="points shorter than 900 s", detail="--duration 20 s"),
        AgentXRule(rule="kv_offload", state="unknown", head="KV offload unknown", detail="the server does not say"),
    )
)
UNKNOWN = AgentXVerdict(rules=(NOT_VALID.rules[1],))
PENDING = AgentXVerdict(
    rules=(
        AgentXRule(
            rule="point_length",
            state="pending",
            head="points of at least 900 s",
            detail="the point at 32 users, 23 s of 900 s (no point measured yet)",
        ),
    )
)


@pytest.mark.parametrize(
    ("size", "verdict", "label"),
    [
        ((80, 24), NOT_VALID, "AgentX ✗"),
        ((100, 30), NOT_VALID, "not AgentX-valid: points shorter than 900 s (+1 more)"),
        ((120, 36), NOT_VALID, "not AgentX-valid: points shorter than 900 s (+1 more)"),
        ((200, 60), NOT_VALID, "not AgentX-valid"),
        ((120, 36), UNKNOWN, "AgentX validity unknown: KV offload unknown"),
        # Pending is never shown as valid, at any width.
        ((80, 24), PENDING, "AgentX pending"),
        ((120, 36), PENDING, "AgentX pending: the point at 32 users, 23 s of 900 s (no point measured yet)"),
        ((200, 60), PENDING, "AgentX pending"),
        ((120, 36), AgentXVerdict(), "AgentX pending: still running"),
        ((80, 24), AgentXVerdict(final=True), "AgentX-valid"),
    ],
)
async def test_the_agentx_verdict_takes_the_words_that_fit_without_a_line_more(
    size: tuple[int, int], verdict: AgentXVerdict, label: str
) -> None:
    snaps = [make_snapshot(seq).model_copy(update={"agentx": verdict}) for seq in range(1, 4)]
    app = AgentXApp(FakeSource(snaps), FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=size) as pilot:
        await shown(pilot, 3)
        header = app.query_one(RunHeader)
        text = str(header.render()).split("\n")
        assert len(text) == (1 if size[0] >= 200 else 2) and header.region.height == len(text)
        shown_parts = [part.strip() for line in text for part in line.split(" │ ")]
        assert label in shown_parts, text
        assert "● running" in text[0]


async def test_app_events_reach_the_log_wrapped_to_the_pane() -> None:
    app = live_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, 3)
        log = app.query_one("#log", RichLog)
        lines = [strip.text.rstrip() for strip in log.lines]
        assert lines[0].startswith("» 18:00:00 attach")
        assert max(len(line) for line in lines) <= log.scrollable_content_region.width
        assert " ".join(lines).replace("  ", " ").endswith("(a long line to wrap)")


@pytest.mark.parametrize("size", [(80, 24), (120, 36), (120, 50), (160, 48), (200, 60)])
async def test_panes_never_overlap_and_the_cost_row_is_not_stretched(size: tuple[int, int]) -> None:
    app = live_app()
    async with app.run_test(size=size) as pilot:
        await shown(pilot, 3)
        regions = [pane(app, key).virtual_region for key in range(1, 8)]
        for i, first in enumerate(regions):
            for second in regions[i + 1 :]:
                assert not first.overlaps(second), (first, second)
        cost, log = app.query_one("#pane-cost").region, app.query_one("#pane-log").region
        if size[0] < 150 or size[1] < 40:
            # Two abreast: the log is as tall as the cost pane beside it, not as tall as the screen.
            assert cost.height == log.height == 11
        else:
            assert cost.height <= 14


async def test_wide_history_charts_span_their_pane() -> None:
    app = live_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await shown(pilot, 3)
        for chart_id, pane_id, label_width in (
            ("#gpu-history", "#pane-gpu", 0),
            ("#kv-history", "#pane-kv", 0),
            ("#tps-total-history", "#pane-throughput", 22),
        ):
            chart = app.query_one(chart_id, Sparkline)
            pane = app.query_one(pane_id)
            assert chart.size.width == pane.size.width - label_width, chart_id
            # Three samples so far, yet the bottom row is drawn across the whole chart.
            bottom = chart.render_lines(chart.region.reset_offset)[-1].text
            assert len(bottom) == chart.size.width and " " not in bottom, (chart_id, bottom)
        # The cache pane's history gives its rows to the retention curve, as wide as the pane.
        assert app.query_one("#cache-history", Sparkline).size.width == 0
        assert app.query_one("#cache-retention").size.width == app.query_one("#pane-cache").size.width


async def test_the_log_follows_its_tail_through_a_layout_change() -> None:
    # 20 server lines arrive in one draw, then the log shrinks as the layout settles: it must still
    # show the newest line (RichLog alone leaves it below the edge).
    snaps = [
        make_snapshot(seq, server_log=[f"INFO engine step {seq}"], events=[EVENT] if seq == 1 else [])
        for seq in range(1, 21)
    ]
    app = AgentXApp(FakeSource(snaps), FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=(160, 48)) as pilot:
        await shown(pilot, 20)
        log = app.query_one("#log", RichLog)
        assert log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y


def test_flow_keeps_a_label_with_its_value() -> None:
    parts = [Content("per 1M output $0.1720"), Content("spent $0.0322")]
    assert flow(parts, 40).plain == "per 1M output $0.1720  spent $0.0322"
    assert flow(parts, 35).plain == "per 1M output $0.1720\nspent $0.0322"


async def test_the_log_wraps_again_when_the_terminal_is_resized() -> None:
    app = live_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await shown(pilot, 3)
        await pilot.resize_terminal(120, 36)
        await pilot.pause()
        log = app.query_one("#log", RichLog)
        lines = [strip.text.rstrip() for strip in log.lines]
        assert max(len(line) for line in lines) <= log.scrollable_content_region.width
        assert " ".join(lines).replace("  ", " ").endswith("(a long line to wrap)")


async def test_users_table_fits_80_columns_without_a_sideways_scroll_bar() -> None:
    app = live_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, 3)
        table = app.query_one("#users-table", KeyedTable)
        assert not table.show_horizontal_scrollbar
        assert table.virtual_size.width <= table.size.width
        heading = table.render_line(0).text
        assert heading.split() == [
            "user",
            "state",
            "step",
            "context",
            "TTFT",
            "E2E",  # the user-facing rate; decode's tok/s and 1/ITL are left out at this width
            "tokens",
            "hit",  # the share of its reused prompt tokens the server still had cached
            "session/host",
        ]
        assert "10.0.0.7:8000" in table.render_line(1).text


async def test_users_table_shows_both_interactivities_where_there_is_room_and_sorts_by_either() -> None:
    app = live_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await shown(pilot, 3)
        table = app.query_one("#users-table", KeyedTable)
        heading = table.render_line(0).text.split()
        assert heading[5:8] == ["tok/s", "1/ITL", "E2E"]
        users = app.query_one(UsersPane)
        await pilot.press(*"oooooo")  # user → state → step → context → TTFT → tok/s → 1/ITL
        assert users.sort_column == "interactivity"
        await pilot.press("o")
        assert users.sort_column == "e2e_interactivity"
        rates = [table.cell(key, "e2e_interactivity").sort for key in table.order]
        assert rates == sorted(rates)
        await pilot.press("O")
        assert [table.cell(key, "e2e_interactivity").sort for key in table.order] == sorted(rates, reverse=True)
        assert "sort E2E ↓" in str(users.border_subtitle)


async def test_the_sort_skips_a_column_left_out_at_80_columns() -> None:
    app = live_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, 3)
        users = app.query_one(UsersPane)
        await pilot.press(*"ooooo")  # … → TTFT → (tok/s and 1/ITL have no room) → E2E
        assert users.sort_column == "e2e_interactivity"


async def test_users_table_formats_only_the_rows_on_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentx_tui.ui.panes import users

    formatted: list[int] = []
    real = users._cells

    def counting(session: UserRow) -> tuple[Cell, ...]:
        formatted.append(session.user)
        return real(session)

    monkeypatch.setattr(users, "_cells", counting)
    snaps = [make_snapshot(seq, sessions=256) for seq in range(1, 4)]
    app = AgentXApp(FakeSource(snaps), FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=(200, 60)) as pilot:
        await shown(pilot, 3)
        table = app.query_one("#users-table", KeyedTable)
        assert len(table.order) == 256
        # 256 sessions changed on every tick, but only the rows on screen (about 35) were formatted.
        assert formatted and max(formatted) < 40
        await pilot.press("O")  # reversed: the last users come on screen, and only they are formatted
        await pilot.pause()
        assert table.order[0] == "255"
        assert len(set(formatted)) < 80


async def test_the_header_says_a_runs_output_scale_beside_its_workload() -> None:
    def scaled(seq: int) -> Snapshot:
        snap = make_snapshot(seq)
        return snap.model_copy(update={"run": snap.run.model_copy(update={"output_scale": 0.7})})

    app = AgentXApp(FakeSource([scaled(seq) for seq in range(1, 4)]), FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=(200, 60)) as pilot:
        await shown(pilot, 3)
        text = str(app.query_one(RunHeader).render())
        assert "outputs ×0.7" in text
        assert text.index("workload") < text.index("outputs ×0.7") < text.index("users")
    plain = live_app()
    async with plain.run_test(size=(200, 60)) as pilot:
        await shown(pilot, 3)
        assert "outputs" not in str(plain.query_one(RunHeader).render())


def _run_as(seq: int, **run: object) -> Snapshot:
    snap = make_snapshot(seq)
    return snap.model_copy(update={"run": snap.run.model_copy(update=run)})


async def test_the_header_clock_leaves_out_the_time_paused() -> None:
    """Pause stops the run's clock: 100 s since the first tick, 40 of them paused, reads 1:00."""
    snaps = [_run_as(seq, state="paused", paused_s=40.0).model_copy(update={"elapsed_s": 100.0}) for seq in (1, 2)]
    app = AgentXApp(FakeSource(snaps), FakeLiveControls(paused=True), refresh_s=0.25)
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, 2)
        assert "● paused 0:01:00" in str(app.query_one(RunHeader).render())


@pytest.mark.parametrize(
    ("asked", "shown_users"),
    [(16, "users 8 (8 lost)"), (20, "users 8→12 (8 lost)"), (12, "users 8→4 (8 lost)")],
    ids=["lost", "lost-and-more-asked", "lost-and-fewer-asked"],
)
async def test_users_a_dead_worker_took_are_said_apart_not_as_a_ramp(asked: int, shown_users: str) -> None:
    """16 users asked for, a load worker of two died with 8: `users 8 (8 lost)`, never `8→16`."""
    snaps = [_run_as(seq, users=8, users_lost=8) for seq in (1, 2)]
    app = AgentXApp(FakeSource(snaps), FakeLiveControls(users=asked), refresh_s=0.25)
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, 2)
        text = str(app.query_one(RunHeader).render())
        assert shown_users in text and "→16" not in text
    ramp = AgentXApp(FakeSource([_run_as(seq, users=8) for seq in (1, 2)]), FakeLiveControls(users=16))
    async with ramp.run_test(size=(80, 24)) as pilot:
        await shown(pilot, 2)
        text = str(ramp.query_one(RunHeader).render())
        assert "users 8→16" in text and "lost" not in text  # a ramp is still a ramp

"""⁸ Frontier: words for where a sweep stands, the chart as drawn, the tier table, and the screens.

Update the stored SVGs after an intended change with `pytest tests/ui --snapshot-update`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from agentx_tui.snapshot import ProbeRow, Snapshot, SweepState, TierRead
from agentx_tui.sweep import DECODE, NORTH_STAR, SweepChart
from agentx_tui.ui import AgentXApp
from agentx_tui.ui.panes.frontier import (
    BAR_X,
    BAR_Y,
    BELOW_FRONTIER,
    LIVE,
    ON_FRONTIER,
    PROBE,
    ChartData,
    FrontierChart,
    FrontierPane,
    Marker,
    _legend,
    _subtitle,
    chart_data,
    draw_chart,
    nice_scale,
    progress,
    tier_lines,
    view,
)
from tests.ui._helpers import pane, shown
from tests.ui.fakes import (
    FakeLiveControls,
    FakeSource,
    make_fleet_snapshot,
    make_north_star_sweep_snapshot,
    make_snapshot,
    make_sweep_snapshot,
    make_sweep_state,
)

SnapCompare = Callable[..., bool]
LAST = 20


def sweep_app() -> AgentXApp:
    return AgentXApp(FakeSource([make_sweep_snapshot(seq) for seq in range(1, LAST + 1)]), FakeLiveControls())


def text(rows: list[list[tuple[str, str]]]) -> list[str]:
    return ["".join(run for run, _ in row) for row in rows]


# --- words ------------------------------------------------------------------------------------------


def test_progress_says_which_point_how_many_users_and_time_left() -> None:
    assert progress(make_sweep_state(2, phase="measure", phase_left_s=41.2)) == (
        "point 3 of 6 · 32 users · measuring, 41 s left"
    )
    assert progress(make_sweep_state(2, phase="warmup", phase_left_s=12.0)) == (
        "point 3 of 6 · 32 users · warm-up, at most 12 s left"
    )


def test_progress_in_auto_mode_has_no_planned_total() -> None:
    assert progress(make_sweep_state(2, mode="auto", phase="warmup", phase_left_s=5)) == (
        "point 3 · auto · 32 users · warm-up, at most 5 s left"
    )


def test_progress_when_done_counts_the_points() -> None:
    assert progress(make_sweep_state(4, phase="done")) == "done · 4 points measured"
    assert progress(make_sweep_state(1, phase="done")) == "done · 1 point measured"


def test_tier_table_shows_n_a_and_groups_the_reasons() -> None:
    table, notes = tier_lines(make_sweep_state().tiers)
    rows = [line.plain for line in table]
    assert rows[0].split() == ["tier", "tok/s/GPU", "±", "tok/$", "$/Mtok"]
    assert rows[1].split() == ["30", "n/a", "n/a", "n/a"]
    assert rows[4].split() == ["100", "100", "K", "±8%", "124", "M", "$0.0080"]
    # Every row is as wide as the heading: the columns line up.
    assert {len(row) for row in rows} == {len(rows[0])}
    assert [note.plain for note in notes] == [
        "n/a at 30 50 75: below the slowest point measured (96 tok/s/user)",
        "n/a at 200: above the fastest point measured (186 tok/s/user)",
    ]


def test_tier_without_a_note_still_says_why() -> None:
    _, notes = tier_lines([TierRead(tier=30.0)])
    assert [note.plain for note in notes] == ["n/a at 30: outside the measured range"]


# --- the chart --------------------------------------------------------------------------------------


def test_chart_data_marks_frontier_points_apart_from_the_others_and_the_live_one() -> None:
    snap = make_sweep_snapshot()
    assert snap.sweep is not None
    data = chart_data(snap, snap.sweep)
    glyphs = {marker.tag: marker.glyph for marker in data.markers}
    assert glyphs == {"8": ON_FRONTIER, "16": BELOW_FRONTIER, "32": ON_FRONTIER, "64": ON_FRONTIER, "128": LIVE}
    # The curve runs through the frontier's points only, by interactivity.
    assert data.curve == ((96.0, 104_000.0), (142.0, 61_000.0), (186.0, 21_000.0))
    assert data.x_ticks == (30.0, 50.0, 75.0, 100.0, 150.0, 200.0)


def test_on_the_north_star_the_points_and_the_live_one_are_placed_by_their_e2e_interactivity() -> None:
    snap = make_sweep_snapshot()
    assert snap.sweep is not None and snap.client is not None
    # Every point, and the point being measured, waits before its answer: end to end, 60% of decode's speed.
    points = tuple(
        p.model_copy(update={"e2e_interactivity_p90_tokens_per_s": (p.interactivity_p90_tokens_per_s or 0) * 0.6})
        for p in snap.sweep.points
    )
    sweep = snap.sweep.model_copy(update={"points": points, "frontier_axis": "e2e_interactivity", "tiers": ()})
    client = snap.client.model_copy(
        update={"window": snap.client.window.updated(e2e_interactivity_p90_tokens_per_s=40.0)}
    )
    data = chart_data(snap.model_copy(update={"client": client}), sweep)
    xs = {marker.tag: marker.x for marker in data.markers}
    assert xs["128"] == 40.0  # the live point: the window's North Star, not its decode 64 tok/s/user
    assert xs["8"] == pytest.approx(0.6 * points[0].interactivity_p90_tokens_per_s)  # type: ignore[operator]


def test_no_live_marker_during_warm_up() -> None:
    snap = make_sweep_snapshot(sweep=make_sweep_state(phase="warmup", phase_left_s=12))
    assert snap.sweep is not None
    assert LIVE not in {marker.glyph for marker in chart_data(snap, snap.sweep).markers}


def test_chart_puts_each_marker_in_its_cell_and_labels_both_axes() -> None:
    data = ChartData(
        markers=(
            Marker(100.0, 50_000.0, ON_FRONTIER, "point", "64"),
            Marker(50.0, 20_000.0, BELOW_FRONTIER, "dominated"),
        ),
        x_ticks=(50.0, 100.0),
    )
    rows = text(draw_chart(data, 40, 12))
    assert len(rows) == 12 and {len(row) for row in rows} == {40}
    assert rows[-2].lstrip().startswith("└") and "┬" in rows[-2]
    assert rows[-1].split() == ["50", "100"]
    # y labels on the left, from 0 at the bottom up to a round top above the highest point.
    assert rows[-3].startswith("   0┤") and rows[0].startswith("60 K┤")
    assert any(f"{ON_FRONTIER}64" in row for row in rows)
    assert sum(row.count(BELOW_FRONTIER) for row in rows) == 1


def test_each_point_with_intervals_gets_error_bars_through_its_marker() -> None:
    data = ChartData(
        markers=(
            Marker(100.0, 50_000.0, ON_FRONTIER, "point", "", x_span=(70.0, 130.0), y_span=(35_000.0, 65_000.0)),
            Marker(50.0, 20_000.0, BELOW_FRONTIER, "dominated"),  # no intervals: no bars
        ),
        x_ticks=(50.0, 100.0),
    )
    rows = draw_chart(data, 40, 14)
    plain = text(rows)
    (row,) = [i for i, r in enumerate(plain) if ON_FRONTIER in r]
    column = plain[row].index(ON_FRONTIER)
    # ─ on both sides of the marker on its row, │ above and below it in its column.
    assert f"{BAR_X}{ON_FRONTIER}{BAR_X}" in plain[row]
    assert plain[row - 1][column] == BAR_Y and plain[row + 1][column] == BAR_Y
    bars = [char for r in rows for char, role in r if role == "interval"]
    assert len(bars) >= 4 and set(bars) == {BAR_X, BAR_Y}
    below = next(i for i, r in enumerate(plain) if BELOW_FRONTIER in r)
    assert BAR_X not in plain[below]


def test_chart_data_carries_each_points_intervals() -> None:
    snap = make_sweep_snapshot()
    assert snap.sweep is not None
    spans = {m.tag: (m.x_span, m.y_span) for m in chart_data(snap, snap.sweep).markers}
    assert spans["64"] == (pytest.approx((96.0 * 0.88, 96.0 * 1.12)), pytest.approx((78_000.0, 130_000.0)))
    assert spans["128"] == (None, None)  # the live point has no interval yet


def test_curve_is_drawn_without_gaps_between_frontier_points() -> None:
    curve = ((20.0, 90_000.0), (100.0, 50_000.0), (180.0, 10_000.0))
    data = ChartData(markers=tuple(Marker(x, y, ON_FRONTIER, "point") for x, y in curve), curve=curve)
    rows = draw_chart(data, 60, 16)
    plot = [row[2:-1] for row in rows[:-2]]  # the plot's cells, without the y axis and the margin
    columns = {
        index for row in plot for index, (char, role) in enumerate(row) if role in ("curve", "point") and char != " "
    }
    first, last = min(columns), max(columns)
    assert columns == set(range(first, last + 1))  # every column from the first point to the last


def test_curve_falls_as_interactivity_rises_and_meets_its_points() -> None:
    # The frontier's y only falls as x rises, and the monotone curve drawn through it never turns back up.
    curve = ((30.0, 120_000.0), (60.0, 110_000.0), (140.0, 40_000.0), (180.0, 5_000.0))
    data = ChartData(markers=tuple(Marker(x, y, ON_FRONTIER, "point") for x, y in curve), curve=curve)
    rows = draw_chart(data, 70, 20)
    plot = [row[2:-1] for row in rows[:-2]]
    top_row: dict[int, int] = {}
    for y, row in enumerate(plot):
        for x, (_, role) in enumerate(row):
            if role in ("curve", "point"):
                top_row.setdefault(x, y)
    columns = sorted(top_row)
    assert all(top_row[a] <= top_row[b] for a, b in itertools.pairwise(columns))
    marker_columns = [x for row in plot for x, (_, role) in enumerate(row) if role == "point"]
    assert min(columns) == min(marker_columns) and max(columns) == max(marker_columns)


def test_empty_chart_says_what_it_waits_for() -> None:
    rows = text(draw_chart(ChartData(x_ticks=(30.0, 100.0), empty="warming up for the first point"), 50, 10))
    assert any("warming up for the first point" in row for row in rows)


def test_too_small_a_chart_draws_nothing_rather_than_garbage() -> None:
    assert text(draw_chart(ChartData(), 10, 3)) == [" " * 10] * 3


@pytest.mark.parametrize(
    ("value", "most", "expected"),
    [(135_000.0, 3, (150_000.0, 50_000.0)), (95_000.0, 3, (100_000.0, 50_000.0)), (195.0, 5, (200.0, 50.0))],
)
def test_nice_scale_picks_the_lowest_round_top(value: float, most: int, expected: tuple[float, float]) -> None:
    assert nice_scale(value, most) == expected


# --- in the dashboard -------------------------------------------------------------------------------


async def test_an_ordinary_run_hides_frontier_and_fleet_and_their_keys_do_nothing() -> None:
    app = AgentXApp(FakeSource([make_snapshot(seq) for seq in range(1, 4)]), FakeLiveControls())
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot, 3)
        body = app.query_one("#body")
        assert not body.has_class("-sweep") and not body.has_class("-fleet")
        for key in (8, 9):
            assert not pane(app, key).display
            await pilot.press(str(key))
            assert app.screen.maximized is None


async def test_a_sweep_shows_the_frontier_and_key_8_maximises_it() -> None:
    app = sweep_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot, LAST)
        pane = app.query_one("#pane-frontier", FrontierPane)
        assert pane.display and not app.query_one("#pane-fleet").display
        await pilot.press("8")
        assert app.screen.maximized is pane
        await pilot.press("escape")
        assert app.screen.maximized is None


async def test_the_frontier_leaves_when_the_sweep_does() -> None:
    snaps = [make_sweep_snapshot(1), make_snapshot(2)]
    source = FakeSource(snaps, manual=True)
    app = AgentXApp(source, FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot, 1)
        await pilot.press("8")
        assert app.screen.maximized is app.query_one("#pane-frontier")
        source.release()
        await shown(pilot, 2)
        assert not app.query_one("#pane-frontier").display and app.screen.maximized is None


async def _scroll_to_frontier(pilot: Pilot[None]) -> None:
    await shown(pilot, LAST)
    app = pilot.app
    app.query_one("#body").scroll_to_widget(app.query_one("#pane-frontier"), animate=False, top=True)
    await pilot.pause()


def test_frontier_mid_sweep_80x24(snap_compare: SnapCompare) -> None:
    # The compact layout scrolls: this is the screen after scrolling down to the pane.
    assert snap_compare(sweep_app(), terminal_size=(80, 24), run_before=_scroll_to_frontier)


def test_frontier_mid_sweep_160x48(snap_compare: SnapCompare) -> None:
    async def settle(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)

    assert snap_compare(sweep_app(), terminal_size=(160, 48), run_before=settle)


async def test_error_bars_fit_the_80x24_pane_with_and_without_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    for no_color in ("", "1"):
        monkeypatch.setenv("NO_COLOR", no_color)
        async with sweep_app().run_test(size=(80, 24)) as pilot:
            app = await shown(pilot, LAST)
            chart = app.query_one(FrontierChart)
            width, height = chart.size
            rows = draw_chart(chart.data, width, height)
            bars = [char for row in rows for char, role in row if role == "interval"]
            assert BAR_X in bars and BAR_Y in bars, (no_color, width, height)


def test_frontier_maximised_no_color(snap_compare: SnapCompare, monkeypatch: pytest.MonkeyPatch) -> None:
    # Without colour the markers still differ: ● on the frontier, ○ below it, × the point being measured;
    # the error bars are ─ and │.
    monkeypatch.setenv("NO_COLOR", "1")

    async def maximise(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)
        await pilot.press("8")
        await pilot.pause()

    assert snap_compare(sweep_app(), terminal_size=(80, 24), run_before=maximise)


def _with_fleet(seq: int) -> Snapshot:
    sweep = make_sweep_snapshot(seq)
    return make_fleet_snapshot(seq).model_copy(update={"sweep": sweep.sweep, "client": sweep.client})


@pytest.mark.parametrize("kind", ["sweep", "fleet", "both"])
@pytest.mark.parametrize("size", [(80, 24), (120, 50), (150, 40), (160, 48), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_panes_never_overlap_with_a_frontier_or_fleet(kind: str, size: tuple[int, int]) -> None:
    make = {"sweep": make_sweep_snapshot, "fleet": make_fleet_snapshot, "both": _with_fleet}[kind]
    app = AgentXApp(FakeSource([make(seq) for seq in range(1, 4)]), FakeLiveControls())
    async with app.run_test(size=size) as pilot:
        await shown(pilot, 3)
        shown_panes = [pane for pane in app.query(".pane") if pane.display]
        assert len(shown_panes) == (9 if kind == "both" else 8)
        regions = [pane.virtual_region for pane in shown_panes]
        for i, first in enumerate(regions):
            for second in regions[i + 1 :]:
                assert not first.overlaps(second), (first, second)
        # No pane is squeezed to its border. The full layout's fractions are tight only on the
        # shortest terminals it is used for (150×40); from 160×48 up every pane has room.
        roomy = size[1] >= 48 and kind != "both"
        assert min(region.height for region in regions) >= 3, regions
        for pane in shown_panes:
            if pane.id in ("pane-users", "pane-frontier", "pane-fleet"):
                assert pane.region.height >= (8 if roomy else 3), (pane.id, pane.region)
        if kind != "fleet":
            assert app.query_one("#frontier-chart").size.height >= (8 if roomy else 4)


# --- the North Star and decode views; tasks per hour per GPU ----------------------------------------


def north_star_app() -> AgentXApp:
    snaps = [make_north_star_sweep_snapshot(seq) for seq in range(1, LAST + 1)]
    return AgentXApp(FakeSource(snaps), FakeLiveControls())


def test_a_sweep_is_drawn_on_its_own_axis_first_and_the_other_view_beside_it() -> None:
    snap = make_north_star_sweep_snapshot()
    sweep = snap.sweep
    assert sweep is not None
    axis, frontier, tiers = view(sweep, False) or (None, (), ())
    assert axis == NORTH_STAR and frontier == sweep.frontier and tiers == sweep.tiers
    axis, frontier, tiers = view(sweep, True) or (None, (), ())
    assert axis == DECODE and frontier == sweep.secondary_frontier and tiers == sweep.secondary_tiers
    # An older recording (no axis, no second view): decode, and nothing to flip to.
    old = make_sweep_state()
    assert view(old, False) == (DECODE, old.frontier, old.tiers) and view(old, True) is None


def test_on_the_north_star_points_are_placed_by_their_e2e_normalized_p90() -> None:
    snap = make_north_star_sweep_snapshot()
    sweep = snap.sweep
    assert sweep is not None
    chart = SweepChart.of(sweep.points, sweep.frontier, sweep.tiers, axis=NORTH_STAR)
    data = chart_data(snap, sweep, chart)
    xs = {marker.tag: marker.x for marker in data.markers}
    assert xs == {"8": 150.0, "16": 118.0, "32": 101.0, "64": 58.0, "128": 41.0}  # 128: the live window's
    glyphs = {marker.tag: marker.glyph for marker in data.markers}
    assert glyphs["16"] == ON_FRONTIER  # on the North Star's frontier, below decode's
    decode_axis, decode_front, decode_tiers = view(sweep, True) or (DECODE, (), ())
    decode = chart_data(snap, sweep, SweepChart.of(sweep.points, decode_front, decode_tiers, axis=decode_axis))
    assert {m.tag: m.glyph for m in decode.markers}["16"] == BELOW_FRONTIER
    assert {m.tag: m.x for m in decode.markers}["128"] == 64.0


def test_by_tasks_per_hour_the_points_move_and_the_live_one_and_tier_reads_leave() -> None:
    snap = make_north_star_sweep_snapshot()
    sweep = snap.sweep
    assert sweep is not None
    chart = SweepChart.of(sweep.points, sweep.frontier, sweep.tiers, axis=NORTH_STAR, y="tasks")
    data = chart_data(snap, sweep, chart)
    assert {m.tag: m.y for m in data.markers} == {"8": 2.1, "16": 3.4, "32": 5.6, "64": 7.9}
    assert all(m.y_span is None for m in data.markers)  # no interval is measured for tasks/h
    assert all(t.read is None for t in chart.tiers)  # the reads are throughput, not tasks
    # No point with a task done: the chart says so rather than drawing nothing.
    unknown = tuple(p.model_copy(update={"tasks_per_hour_per_gpu": None}) for p in sweep.points)
    bare = sweep.model_copy(update={"points": unknown})
    chart = SweepChart.of(unknown, bare.frontier, bare.tiers, axis=NORTH_STAR, y="tasks")
    assert chart_data(snap, bare, chart).empty == "tasks/h/GPU n/a: no point has a task done"


def test_the_legend_says_which_points_could_not_be_placed() -> None:
    text = _legend(80, live=False, bars=False, y_words="tasks/h/GPU", unknown=["1", "2"]).plain
    assert "y tasks/h/GPU" in text and text.endswith("n/a at 1 2 users")
    assert "n/a" not in _legend(80, live=False, bars=False, y_words="tok/s/GPU").plain


@pytest.mark.parametrize(
    ("width", "expected"),
    [
        (160, "x: E2E-normalized p90 (North Star) · 4 measured · 4 on the frontier · x/y flip"),
        (80, "x: E2E-normalized p90 (North Star) · 4 measured · 4 on it · x/y flip"),
        (60, "x: E2E-norm. p90 (North Star) · 4 measured · 4 on it"),
        (20, "x: E2E p90"),
    ],
)
def test_the_border_names_the_x_axis_in_the_words_that_fit(width: int, expected: str) -> None:
    assert _subtitle(NORTH_STAR, 4, 4, width) == expected


async def test_keys_x_and_y_flip_the_frontiers_axes() -> None:
    app = north_star_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await shown(pilot, LAST)
        frontier = app.query_one(FrontierPane)
        assert str(frontier.border_subtitle).startswith("x: E2E-normalized p90 (North Star)")
        await pilot.press("x")
        await pilot.pause()
        assert frontier.other_view and str(frontier.border_subtitle).startswith("x: decode p90")
        assert "100 K" in frontier.query_one("#frontier-tiers", Static).render().plain.split("\n")[4]
        await pilot.press("y")
        await pilot.pause()
        assert frontier.y_figure == "tasks"
        assert "y tasks/h/GPU" in frontier.query_one("#frontier-legend", Static).render().plain
        assert max(m.y for m in app.query_one(FrontierChart).data.markers) == 7.9
        await pilot.press("x", "y")
        await pilot.pause()
        assert not frontier.other_view and frontier.y_figure == "throughput"
        help_rows = dict(app.key_help())
        assert help_rows["x y"].startswith("frontier: x North Star / decode; y ")


async def test_a_sweep_with_one_view_says_so_and_an_ordinary_run_has_no_x_or_y_keys() -> None:
    app = sweep_app()  # an older recording's sweep: decode only
    async with app.run_test(size=(160, 48)) as pilot:
        await shown(pilot, LAST)
        frontier = app.query_one(FrontierPane)
        await pilot.press("x")
        await pilot.pause()
        assert not frontier.other_view and str(frontier.border_subtitle).startswith("x: decode p90")
        assert any("one view only" in str(n.message) for n in app._notifications)
    plain = AgentXApp(FakeSource([make_snapshot(seq) for seq in range(1, 4)]), FakeLiveControls())
    async with plain.run_test(size=(120, 40)) as pilot:
        await shown(pilot, 3)
        assert not any(words.startswith("frontier:") for _, words in plain.key_help())
        await pilot.press("x", "y")
        assert plain.query_one(FrontierPane).y_figure == "throughput"


def test_frontier_north_star_80x24(snap_compare: SnapCompare) -> None:
    assert snap_compare(north_star_app(), terminal_size=(80, 24), run_before=_scroll_to_frontier)


def test_frontier_flipped_to_decode_80x24(snap_compare: SnapCompare) -> None:
    async def flip(pilot: Pilot[None]) -> None:
        await _scroll_to_frontier(pilot)
        await pilot.press("x")
        await pilot.pause()

    assert snap_compare(north_star_app(), terminal_size=(80, 24), run_before=flip)


def test_frontier_north_star_160x48(snap_compare: SnapCompare) -> None:
    async def settle(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)

    assert snap_compare(north_star_app(), terminal_size=(160, 48), run_before=settle)


def test_frontier_decode_by_tasks_per_hour_160x48(snap_compare: SnapCompare) -> None:
    async def flip(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)
        await pilot.press("x", "y")
        await pilot.pause()

    assert snap_compare(north_star_app(), terminal_size=(160, 48), run_before=flip)


def test_the_legend_says_which_points_are_thin() -> None:
    text = _legend(80, live=False, bars=False, y_words="tok/s/GPU", thin=["4", "16"]).plain
    assert text.endswith("thin at 4 16 users")
    assert "thin" not in _legend(80, live=False, bars=False, y_words="tok/s/GPU").plain


def test_a_point_that_counted_no_request_is_not_counted_as_measured() -> None:
    sweep = make_sweep_state()
    unmeasured = sweep.points[0].model_copy(update={"requests": 0})
    done = sweep.model_copy(update={"points": (unmeasured, *sweep.points[1:]), "current": None, "phase": "done"})
    assert progress(done) == f"done · {len(sweep.points) - 1} points measured"


# --- a tier sweep: its plan, its probes, its GPU time ------------------------------------------------------

# Probes of a tier sweep over the fake points' server: (users, what for, decode p90, tok/s/GPU).
TIER_PROBES = (
    (8, "bracketing tiers 30 50 75 100 150 200", 180.0, 20_000.0),
    (16, "bracketing tiers 30 50 75 100 150", 150.0, 38_000.0),
    (32, "bracketing tiers 30 50 75 100", 104.0, 58_000.0),
    (64, "bracketing tiers 30 50 75", 70.0, 100_000.0),
    (128, "bracketing tiers 30 50", 44.0, 112_000.0),
    (48, "tier 75", 80.0, 90_000.0),
)


def tier_sweep_state(*, probing: bool, **kwargs: object) -> SweepState:
    """The fake sweep as a tier sweep: probes, then (not `probing`) its points, with 2 GPUs for 1.3 hours."""
    base = make_sweep_state(**kwargs)  # type: ignore[arg-type]
    probes = tuple(
        ProbeRow(
            index=i + 1, users=users, purpose=purpose, warmup_s=25.0, duration_s=30.0, window_start_s=60.0 * i,
            requests=80, interactivity_p90_tokens_per_s=x, total_tokens_per_s_per_gpu=y,
        )
        for i, (users, purpose, x, y) in enumerate(TIER_PROBES)
    )  # fmt: skip
    update: dict[str, object] = {
        "mode": "tiers",
        "probes": probes,
        "sweep_s": 2400.0,
        "gpu_seconds": 4800.0,
        "probe_duration_s": 30.0,
    }
    if probing:
        update |= {
            "points": (), "frontier": (), "tiers": (), "planned_users": (), "current": 0, "current_users": 96,
            "probing": True, "step_for": "tier 50", "phase": "warmup", "phase_left_s": 80.0,
        }  # fmt: skip
    else:
        update |= {"step_for": "tier 100 (below) · tier 75 (above)"}
    return base.model_copy(update=update)


def test_a_tier_sweep_says_its_plan_and_its_gpu_time() -> None:
    assert progress(tier_sweep_state(probing=True)) == (
        "probing 96 users for tier 50 · probe 7 · warm-up, at most 80 s left · 1.3 GPU·h"
    )
    bracketing = tier_sweep_state(probing=True).model_copy(update={"step_for": "bracketing tiers 30 50"})
    assert progress(bracketing).startswith("probing 96 users, bracketing tiers 30 50 · probe 7")
    assert progress(tier_sweep_state(probing=False, measured=2)) == (
        "point 3 of 6 · 32 users for tier 100 (below) · tier 75 (above) · measuring, 41 s left · 1.3 GPU·h"
    )
    assert progress(tier_sweep_state(probing=False, phase="done")) == (
        "done · 4 points measured after 6 probes · 1.3 GPU·h"
    )
    no_count = tier_sweep_state(probing=False, phase="done").model_copy(update={"gpu_seconds": None})
    assert progress(no_count).endswith("GPU time n/a: no GPU count")
    short = make_sweep_state(phase="done").model_copy(update={"sweep_s": 600.0, "gpu_seconds": 1200.0})
    assert progress(short) == "done · 4 points measured · 1200 GPU·s"


def test_probes_are_drawn_apart_hollow_and_never_on_the_curve() -> None:
    snap = make_sweep_snapshot(sweep=tier_sweep_state(probing=False))
    assert snap.sweep is not None
    data = chart_data(snap, snap.sweep)
    probes = [m for m in data.markers if m.role == "probe"]
    assert [(m.x, m.y, m.glyph) for m in probes] == [(x, y, PROBE) for _, _, x, y in TIER_PROBES]
    assert all(m.x_span is None and m.y_span is None and not m.tag for m in probes)
    assert not {(m.x, m.y) for m in probes} & set(data.curve)
    # The points are the sweep's own: a probe is none of them.
    assert {m.tag for m in data.markers if m.role in ("point", "dominated")} == {"8", "16", "32", "64"}
    assert "◇ probe" in _legend(80, live=False, bars=False, probes=True, y_words="tok/s/GPU").plain
    while_probing = make_sweep_snapshot(sweep=tier_sweep_state(probing=True))
    assert while_probing.sweep is not None
    drawn = chart_data(while_probing, while_probing.sweep)
    assert drawn.curve == () and {m.role for m in drawn.markers} == {"probe"}


def tier_app(*, probing: bool) -> AgentXApp:
    snaps = [make_sweep_snapshot(seq, sweep=tier_sweep_state(probing=probing)) for seq in range(1, LAST + 1)]
    return AgentXApp(FakeSource(snaps), FakeLiveControls())


def test_frontier_tier_sweep_probing_120x40(snap_compare: SnapCompare) -> None:
    async def settle(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)

    assert snap_compare(tier_app(probing=True), terminal_size=(120, 40), run_before=settle)


def test_frontier_tier_sweep_points_80x24(snap_compare: SnapCompare) -> None:
    assert snap_compare(tier_app(probing=False), terminal_size=(80, 24), run_before=_scroll_to_frontier)

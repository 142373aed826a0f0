"""⁰ Tasks: the task figures in words, the step curve as drawn, when the pane shows, and the screens.

Update the stored SVGs after an intended change with `pytest tests/ui --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from agentx_tui.snapshot import Snapshot, StepRow
from agentx_tui.ui import AgentXApp
from agentx_tui.ui.app import _pane_keys
from agentx_tui.ui.panes.tasks import (
    CONTEXT,
    E2E_P50,
    E2E_P90,
    MODEL,
    REST,
    TTFT,
    WHISKER,
    StepChart,
    TasksPane,
    bucket_label,
    draw_steps,
    figure_lines,
    latency_scale,
    split_bar,
    task_time,
    usd_per_task,
)
from tests.ui._helpers import pane, shown
from tests.ui.fakes import (
    FakeLiveControls,
    FakeSource,
    make_fleet_snapshot,
    make_snapshot,
    make_sweep_snapshot,
    make_task_figures,
    make_tasks_snapshot,
)

SnapCompare = Callable[..., bool]
LAST = 20


def tasks_app(**kwargs: object) -> AgentXApp:
    snaps = [make_tasks_snapshot(seq, **kwargs) for seq in range(1, LAST + 1)]  # type: ignore[arg-type]
    return AgentXApp(FakeSource(snaps), FakeLiveControls(), refresh_s=0.25)


def text(rows: list[list[tuple[str, str]]]) -> list[str]:
    return ["".join(run for run, _ in row) for row in rows]


# --- words ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(None, "n/a"), (8.44, "8.4 s"), (42.0, "42 s"), (252.0, "4m 12s"), (3900.0, "1h 05m")],
)
def test_task_time_is_short(seconds: float | None, expected: str) -> None:
    assert task_time(seconds) == expected


def test_bucket_labels_say_which_steps() -> None:
    assert bucket_label(StepRow(step=3, step_last=3, requests=1)) == "3"
    assert bucket_label(StepRow(step=9, step_last=16, requests=1)) == "9–16"


def test_usd_per_task_keeps_three_digits_below_a_cent() -> None:
    assert usd_per_task(None) == "n/a"
    assert usd_per_task(0.000936) == "$0.000936"
    assert usd_per_task(0.0123) == "$0.0123"
    assert usd_per_task(1.5) == "$1.50"


def test_split_bar_shows_the_model_share_by_glyph() -> None:
    assert split_bar(0.62, 10).plain == MODEL * 6 + REST * 4
    assert split_bar(None, 5).plain == " " * 5


def test_figures_say_everything_the_pane_promises() -> None:
    plain = figure_lines(make_task_figures(42), 200).plain
    for words in (
        "tasks done 42 · running 12 · failed 1",
        "task time p50 4m 12s  p90 6m 21s",
        "model 62%",
        "tools & thinking 38%",
        "steps/task 37.4",
        "tokens/task 1.02 M",
        "output/task 14.9 K",
        "$/task $0.000936",
        "tasks/h/GPU 7.9",
    ):
        assert words in plain, words


def test_without_a_price_or_a_gpu_count_the_figures_say_n_a() -> None:
    plain = figure_lines(make_task_figures(42, price=False, gpus=None), 200).plain
    assert "$/task n/a" in plain and "tasks/h/GPU n/a" in plain
    assert "$0" not in plain


def test_figures_fit_the_compact_width_without_breaking_a_figure() -> None:
    lines = figure_lines(make_task_figures(42), 74).plain.split("\n")
    assert len(lines) <= 4 and max(len(line) for line in lines) <= 74


# --- the chart --------------------------------------------------------------------------------------


def test_chart_has_its_size_labels_both_axes_and_every_bucket() -> None:
    curve = make_task_figures(42).step_curve
    rows = text(draw_steps(curve, 74, 12))
    assert len(rows) == 12 and {len(row) for row in rows} == {74}
    assert rows[-2].lstrip().startswith("└") and rows[-2].count("┬") == len(curve)
    assert rows[-1].split() == ["1", "2", "3", "4", "5", "6", "7", "8", "9–16", "17–32", "33–64"]
    assert any(row.lstrip().startswith("0┤") for row in rows)  # the latency axis from 0
    assert any(row.lstrip().startswith("83 K┤") for row in rows)  # the largest mean context labels the bars


@pytest.mark.parametrize("rows", range(2, 50))
def test_latency_ticks_fall_exactly_on_rows_at_least_two_apart(rows: int) -> None:
    used, top, step = latency_scale(6.31, rows)
    assert rows - 2 <= used <= rows and top >= 6.31
    ticks = round(top / step)
    assert 1 <= ticks <= 8
    if ticks > 1:
        assert (used - 1) % ticks == 0 and (used - 1) // ticks >= 2
    if rows >= 8:
        assert top <= 10  # never far above the highest marker where the rows allow a finer scale


def test_series_differ_by_glyph_not_only_by_colour() -> None:
    drawn = draw_steps(make_task_figures(42).step_curve, 74, 14)
    glyphs: dict[str, set[str]] = {}
    for row in drawn:
        for char, role in row:
            if role in ("ttft", "e2e-p50", "e2e-p90", "context"):
                glyphs.setdefault(role, set()).add(char)
    assert glyphs["ttft"] == {TTFT} and glyphs["e2e-p50"] == {E2E_P50}
    assert glyphs["e2e-p90"] == {E2E_P90, WHISKER}
    assert CONTEXT in glyphs["context"] and not glyphs["context"] & {TTFT, E2E_P50, E2E_P90, WHISKER}


def test_each_bucket_puts_p90_above_p50_above_ttft() -> None:
    rows = text(draw_steps(make_task_figures(42).step_curve[:1], 40, 14))
    column = next(row.index(E2E_P50) for row in rows if E2E_P50 in row)
    top = next(y for y, row in enumerate(rows) if E2E_P90 in row)
    middle = next(y for y, row in enumerate(rows) if E2E_P50 in row)
    bottom = next(y for y, row in enumerate(rows) if TTFT in row)
    assert top < middle < bottom and rows[top][column] == E2E_P90
    assert all(rows[y][column] == WHISKER for y in range(top + 1, middle))


def test_context_bars_grow_with_the_step() -> None:
    drawn = draw_steps(make_task_figures(42).step_curve, 74, 16)
    heights: dict[int, float] = {}
    for row in drawn:
        column = 0
        for char, role in row:
            if role == "context":
                heights[column] = heights.get(column, 0) + " ▁▂▃▄▅▆▇█".index(char) / 8
            column += len(char)
    columns = sorted(heights)
    assert [heights[c] for c in columns] == sorted(heights[c] for c in columns)


def test_narrow_bands_shorten_the_bucket_labels_rather_than_overlap() -> None:
    rows = text(draw_steps(make_task_figures(42).step_curve, 60, 10))
    assert rows[-1].split()[-3:] == ["9…", "17…", "33…"]
    # Narrower still, a label that would touch the one before it is left out.
    labels = text(draw_steps(make_task_figures(42).step_curve, 50, 10))[-1].split()
    assert labels[:8] == [str(step) for step in range(1, 9)] and "17…" not in labels


def test_empty_and_too_small_charts() -> None:
    assert any("no step completed yet" in row for row in text(draw_steps((), 50, 10)))
    assert text(draw_steps(make_task_figures(42).step_curve, 10, 4)) == [" " * 10] * 4


# --- in the dashboard -------------------------------------------------------------------------------


async def test_hidden_until_a_task_completes_then_shown_and_key_0_maximises_it() -> None:
    plain = make_snapshot(1)
    none_done = make_tasks_snapshot(2, completed=0)
    done = make_tasks_snapshot(3)
    source = FakeSource([plain, none_done, done], manual=True)
    app = AgentXApp(source, FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=(120, 40)) as pilot:
        for seq in (1, 2):
            await shown(pilot, seq)
            assert not pane(app, 0).display and not app.query_one("#body").has_class("-tasks")
            await pilot.press("0")
            assert app.screen.maximized is None
            source.release()
        await shown(pilot, 3)
        tasks = app.query_one("#pane-tasks", TasksPane)
        assert tasks.display and app.query_one("#body").has_class("-tasks")
        await pilot.press("0")
        assert app.screen.maximized is tasks
        await pilot.press("escape")
        assert app.screen.maximized is None


async def test_without_a_price_the_pane_says_n_a() -> None:
    async with tasks_app(price=False).run_test(size=(120, 40)) as pilot:
        app = await shown(pilot, LAST)
        shown_text = str(app.query_one("#tasks-figures").render())
        assert "$/task n/a" in shown_text
        assert app.query_one(StepChart).rows == make_task_figures(42).step_curve


def test_help_lists_key_0_after_the_other_sometimes_panes() -> None:
    rows = _pane_keys()
    assert rows[-2] == ("8 9 0", "maximise 8 Frontier (a sweep) · 9 Fleet (over 3 endpoints)")
    assert rows[-1] == ("", "0 Tasks (tasks complete)")


def _with(kind: str, seq: int) -> Snapshot:
    tasks = make_task_figures(42)
    base = {
        "tasks": make_snapshot,
        "sweep": make_sweep_snapshot,
        "fleet": make_fleet_snapshot,
    }
    if kind == "all":
        sweep = make_sweep_snapshot(seq)
        snap = make_fleet_snapshot(seq).model_copy(update={"sweep": sweep.sweep, "client": sweep.client})
    else:
        snap = base[kind](seq)
    return snap.model_copy(update={"tasks": tasks})


@pytest.mark.parametrize("kind", ["tasks", "sweep", "fleet", "all"])
@pytest.mark.parametrize("size", [(80, 24), (80, 60), (150, 40), (160, 48), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_panes_never_overlap_with_the_tasks_pane(kind: str, size: tuple[int, int]) -> None:
    app = AgentXApp(FakeSource([_with(kind, seq) for seq in range(1, 4)]), FakeLiveControls())
    async with app.run_test(size=size) as pilot:
        await shown(pilot, 3)
        shown_panes = [p for p in app.query(".pane") if p.display]
        assert len(shown_panes) == {"tasks": 8, "sweep": 9, "fleet": 9, "all": 10}[kind]
        regions = [p.virtual_region for p in shown_panes]
        for i, first in enumerate(regions):
            for second in regions[i + 1 :]:
                assert not first.overlaps(second), (first, second)
        # With all three such panes the full layout's shortest size (150×40) has 11 rows for four
        # rows of panes: they shrink to their borders there (maximise one to read it); from 160×48 on
        # every pane has room.
        if not (kind == "all" and size == (150, 40)):
            assert min(region.height for region in regions) >= 3, regions
        # The users table keeps rows whatever else is shown (in the compact layout at its fixed height).
        assert app.query_one("#pane-users").region.height >= 3
        chart = app.query_one("#tasks-chart")
        if size[0] < 150 or kind == "tasks":
            assert chart.size.height >= 5, (kind, size, chart.size)


# --- screens ----------------------------------------------------------------------------------------


async def _scroll_to_tasks(pilot: Pilot[None]) -> None:
    await shown(pilot, LAST)
    app = pilot.app
    app.query_one("#body").scroll_to_widget(app.query_one("#pane-tasks"), animate=False, top=True)
    await pilot.pause()


def test_tasks_80x24(snap_compare: SnapCompare) -> None:
    # The compact layout scrolls: this is the screen after scrolling down to the pane.
    assert snap_compare(tasks_app(), terminal_size=(80, 24), run_before=_scroll_to_tasks)


def test_tasks_maximised_80x24_no_color(snap_compare: SnapCompare, monkeypatch: pytest.MonkeyPatch) -> None:
    # Without colour the series still differ: × TTFT, ● E2E p50, │○ E2E p90, █ context.
    monkeypatch.setenv("NO_COLOR", "1")

    async def maximise(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)
        await pilot.press("0")
        await pilot.pause()

    assert snap_compare(tasks_app(price=False), terminal_size=(80, 24), run_before=maximise)


def test_tasks_200x60(snap_compare: SnapCompare) -> None:
    async def settle(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)

    assert snap_compare(tasks_app(), terminal_size=(200, 60), run_before=settle)

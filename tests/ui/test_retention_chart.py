"""The retention curve in the prefix pane (ui/panes/_retention.py): drawn as promised, why it is n/a, the
users table's hit column, and the screens at 80×24 and 200×60.

Update the stored SVGs after an intended change with `pytest tests/ui --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from agentx_tui.snapshot import RetentionRow
from agentx_tui.ui import AgentXApp
from agentx_tui.ui.panes._retention import (
    CACHED_TOKENS_HINT,
    EMPTY,
    THINK_P50,
    THINK_P90,
    UNKNOWN,
    RetentionChart,
    RetentionView,
    band_starts,
    draw_retention,
    retention_view,
    short_seconds,
    words,
)
from agentx_tui.ui.panes.users import UsersPane
from tests.ui._helpers import shown
from tests.ui.fakes import FakeLiveControls, FakeSource, make_snapshot

SnapCompare = Callable[..., bool]
LAST = 20


def text(rows: list[list[tuple[str, str]]]) -> list[str]:
    return ["".join(run for run, _ in row) for row in rows]


def view(**kwargs: object) -> RetentionView:
    return retention_view(make_snapshot(7, **kwargs))  # type: ignore[arg-type]


def test_the_view_is_the_runs_curve_with_its_idle_times_and_both_evicted_shares() -> None:
    shown_view = view()
    assert len(shown_view.rows) == 7 and shown_view.rows[0].hit_share == 1.0
    assert shown_view.think_p50_s == 4.2 and shown_view.think_p90_s == 38.0
    assert shown_view.evicted_window == 0.08 and shown_view.evicted_run is not None and shown_view.note is None


def test_without_cached_tokens_it_says_which_flag_and_draws_no_bar() -> None:
    shown_view = view(cached_reported=False)
    assert shown_view.note == CACHED_TOKENS_HINT and "--enable-prompt-tokens-details" in CACHED_TOKENS_HINT
    lines = text(draw_retention(shown_view, 60, 7))
    assert lines[0].startswith("evicted n/a") and " ".join(lines[1:]).split() == CACHED_TOKENS_HINT.split()


def test_observing_only_says_no_load_was_sent() -> None:
    snap = make_snapshot(7).model_copy(update={"client": None})
    assert retention_view(snap).note == "no load sent"


def test_bars_fall_past_the_cliff_and_every_bucket_has_a_band() -> None:
    lines = text(draw_retention(view(), 45, 9))
    bar_rows = lines[1:7]
    assert bar_rows[0].startswith("100%┤") and bar_rows[-1].startswith("  0%┤")
    starts = band_starts(45 - 5)
    assert starts[-1] == 40  # the bands fill the width

    def middle(bucket: int) -> int:
        return 5 + (starts[bucket] + starts[bucket + 1] + 1) // 2

    heights = [sum(1 for row in bar_rows if row[middle(b)] not in " ·") for b in range(8)]
    assert heights[0] == 6 and heights[:4] == sorted(heights[:4], reverse=True)  # full while idle is short
    assert heights[4] < heights[3] and heights[5] <= 1 and heights[6] == 1  # the cliff; a floor, not empty
    assert EMPTY in bar_rows[-1][5 + starts[7] :]  # > 120 s: no call
    assert lines[-1].split() == ["0", "1", "2", "5", "10", "30", "60", "120", "s"]


def test_the_think_markers_sit_in_their_buckets_on_the_axis() -> None:
    lines = text(draw_retention(view(), 85, 8))
    axis = lines[-2]
    starts = band_starts(85 - 5)
    p50, p90 = axis.index(THINK_P50) - 5, axis.index(THINK_P90) - 5
    assert starts[2] <= p50 < starts[3]  # 4.2 s: in 2–5 s
    assert starts[5] <= p90 < starts[6]  # 38 s: in 30–60 s
    assert THINK_P50 in lines[0] and "p50 4.2s" in lines[0] and "p90 38s" in lines[0]


def test_an_unknown_share_is_a_question_mark_not_an_empty_bucket() -> None:
    rows = (RetentionRow(idle_s_low=0.0, idle_s_high=1.0, requests=3, reused_tokens=10, hit_share=None),)
    lines = text(draw_retention(RetentionView(rows=rows), 45, 6))
    assert UNKNOWN in lines[3] and lines[3].count(EMPTY) == 7


def test_words_leave_out_what_does_not_fit_the_now_figure_first() -> None:
    shown_view = view()
    full = "".join(t for t, _ in words(shown_view, 80))
    assert "(now 8%)" in full and "p90 38s" in full
    narrow = "".join(t for t, _ in words(shown_view, 30))
    assert narrow.startswith("evicted") and "now" not in narrow and len(narrow) <= 30


def test_short_heights_and_widths_draw_only_words() -> None:
    assert len(draw_retention(view(), 40, 3)) == 3
    assert not any(text(draw_retention(view(), 12, 6))[1:])  # no room for eight bands
    assert draw_retention(view(), 0, 0) == []


@pytest.mark.parametrize(("seconds", "shown_text"), [(None, "n/a"), (0.42, "0.4s"), (41.2, "41s"), (300.0, "5m")])
def test_idle_times_are_short(seconds: float | None, shown_text: str) -> None:
    assert short_seconds(seconds) == shown_text


# --- in the dashboard -------------------------------------------------------------------------------


def live_app(**kwargs: object) -> AgentXApp:
    snaps = [make_snapshot(seq, **kwargs) for seq in range(1, LAST + 1)]  # type: ignore[arg-type]
    return AgentXApp(FakeSource(snaps), FakeLiveControls(), refresh_s=0.25)


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_the_chart_has_rows_and_the_users_table_its_hit_column(size: tuple[int, int]) -> None:
    async with live_app().run_test(size=size) as pilot:
        app = await shown(pilot, LAST)
        chart = app.query_one("#cache-retention", RetentionChart)
        # Four rows in the full layout (one of bars); in the compact one its line of words, so that the
        # cache pane is no taller than the throughput pane beside it (the whole curve: key 3).
        assert chart.size.height == (4 if size[0] >= 150 else 1) and chart.data.rows
        table = app.query_one(UsersPane).table
        hit = next(i for i, c in enumerate(table.columns) if c.key == "hit")
        assert table.shown(hit)  # it fits 80 columns


def test_retention_80x24(snap_compare: SnapCompare) -> None:
    async def settle(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)

    assert snap_compare(live_app(), terminal_size=(80, 24), run_before=settle)


def test_retention_200x60(snap_compare: SnapCompare) -> None:
    async def settle(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)

    assert snap_compare(live_app(), terminal_size=(200, 60), run_before=settle)


def test_retention_maximised_80x24_no_color(snap_compare: SnapCompare, monkeypatch: pytest.MonkeyPatch) -> None:
    # Without colour the bars, the empty buckets (·) and the think markers (▲ △) still read.
    monkeypatch.setenv("NO_COLOR", "1")

    async def maximise(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)
        await pilot.press("3")
        await pilot.pause()

    assert snap_compare(live_app(), terminal_size=(80, 24), run_before=maximise)

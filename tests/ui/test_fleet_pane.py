"""⁹ Fleet: the load order, the row formats, short replica names, bounded histories, and the screens.

Update the stored SVGs after an intended change with `pytest tests/ui --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from agentx_tui.snapshot import EndpointReading, Snapshot
from agentx_tui.ui import AgentXApp
from agentx_tui.ui.panes import fleet
from agentx_tui.ui.panes._table import Cell, KeyedTable
from agentx_tui.ui.panes.fleet import AGGREGATE_KEY, FleetPane, FleetRow, row_cells, short_names, sort_key, spark
from tests.ui._helpers import shown
from tests.ui.fakes import FLEET_DOWN, FakeLiveControls, FakeSource, fleet_url, make_fleet_snapshot, make_snapshot

SnapCompare = Callable[..., bool]
TICKS = 12  # each drawn, so every replica's history has this many samples


def fleet_app(snaps: list[Snapshot]) -> tuple[AgentXApp, FakeSource]:
    source = FakeSource(snaps, manual=True)
    return AgentXApp(source, FakeLiveControls(), refresh_s=0.25), source


async def draw_each(pilot: Pilot[None], source: FakeSource, last: int) -> None:
    """Let the dashboard draw every Snapshot in turn: the pane samples its histories as it draws."""
    for seq in range(1, last + 1):
        await shown(pilot, seq)
        source.release()


def up(url: str, kv: float | None, running: float = 0.0) -> EndpointReading:
    return EndpointReading(url=url, up=True, status="up", kv_cache_usage=kv, running=running)


# --- order and format -------------------------------------------------------------------------------


def test_load_order_is_aggregate_then_down_then_kv_then_running() -> None:
    rows = {
        "agg": FleetRow("all 5", up("all", 0.5), (), aggregate=True),
        "down": FleetRow("d", EndpointReading(url="http://d:1", up=False, status="down: refused"), ()),
        "hot": FleetRow("h", up("http://h:1", 0.912, 3), ()),
        "busy": FleetRow("b", up("http://b:1", 0.908, 9), ()),  # same whole percent as "hot", more running
        "cold": FleetRow("c", up("http://c:1", 0.10, 30), ()),
        "unknown": FleetRow("u", up("http://u:1", None, 50), ()),
    }
    order = sorted(rows, key=lambda key: sort_key(rows[key], 0))
    assert order == ["agg", "down", "busy", "hot", "cold", "unknown"]


def test_an_answering_replica_row() -> None:
    figures = EndpointReading(
        url=fleet_url(3),
        up=True,
        status="up",
        kv_cache_usage=0.934,
        running=31.0,
        waiting=2.0,
        prefix_hit_rate_window=0.871,
        prompt_tokens_per_s=78_000.0,
        generation_tokens_per_s=2_400.0,
        gpu_utilization=None,
    )
    cells = row_cells(FleetRow("10.0.1.13", figures, (0.2, None, 0.95, 1.0)))
    assert [cell.text for cell in cells] == ["10.0.1.13", "93%", "31", "2", "87%", "80.4 K", "n/a", "▂ ▇▇"]
    assert [cell.style for cell in cells] == ["", "crit", "", "warn", "", "", "na", "history"]


def test_a_down_replica_says_so_in_words() -> None:
    figures = EndpointReading(url=fleet_url(5), up=False, status="down: connection refused")
    cells = row_cells(FleetRow("10.0.1.15", figures, (None, None)))
    assert cells[0].style == "down"
    assert cells[-1] == Cell(cells[-1].sort, "down: connection refused", "down", right=False)
    assert {cell.text for cell in cells[1:-1]} == {"n/a"}


def test_spark_draws_newest_last_within_its_width() -> None:
    assert spark((0.0, 0.5, 1.0, None), 10) == "▁▄▇ "
    assert spark((0.0, 0.5, 1.0), 2) == "▄▇"


@pytest.mark.parametrize(
    ("urls", "names"),
    [
        (["http://10.0.1.10:8000", "http://10.0.2.10:8000"], ["10.0.1.10", "10.0.2.10"]),
        (["http://vllm-0.vllm.svc:8000", "http://vllm-1.vllm.svc:8000"], ["vllm-0", "vllm-1"]),
        (["http://a:8000", "http://a:8001"], ["a:8000", "a:8001"]),
        (["http://[::1]:8000", "http://[::2]:8000"], ["[::1]", "[::2]"]),
        (["http://only:8000"], ["only:8000"]),
    ],
)
def test_short_names_drop_only_what_every_replica_shares(urls: list[str], names: list[str]) -> None:
    assert list(short_names(urls).values()) == names


# --- in the dashboard -------------------------------------------------------------------------------


async def test_fleet_is_shown_from_four_endpoints_and_key_9_maximises_it() -> None:
    snaps = [make_fleet_snapshot(1, replicas=3), make_fleet_snapshot(2, replicas=4)]
    app, source = fleet_app(snaps)
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot, 1)
        pane = app.query_one("#pane-fleet", FleetPane)
        assert not pane.display
        await pilot.press("9")
        assert app.screen.maximized is None
        source.release()
        await shown(pilot, 2)
        assert pane.display and not app.query_one("#pane-frontier").display
        await pilot.press("9")
        assert app.screen.maximized is pane
        await pilot.press("escape")
        assert app.screen.maximized is None


async def test_rows_are_updated_in_place_and_only_rows_on_screen_are_formatted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    formatted: list[str] = []
    real = fleet.row_cells

    def counting(row: FleetRow) -> tuple[Cell, ...]:
        formatted.append(row.figures.url)
        return real(row)

    monkeypatch.setattr(fleet, "row_cells", counting)
    app, source = fleet_app([make_fleet_snapshot(seq, replicas=256, down=()) for seq in range(1, 5)])
    async with app.run_test(size=(80, 24)) as pilot:
        await draw_each(pilot, source, 4)
        table = app.query_one("#fleet-table", KeyedTable)
        assert len(table.order) == 257 and table.order[0] == AGGREGATE_KEY
        assert table.adds == 257  # four ticks of 257 rows, each row added once
        # Every row changed on every tick, but only those on screen were formatted.
        assert len(set(formatted)) < 40


async def test_histories_are_bounded_and_leave_with_their_replica(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fleet, "HISTORY_MAX", 3)
    snaps = [make_fleet_snapshot(seq, replicas=8, down=()) for seq in range(1, 6)]
    snaps.append(make_fleet_snapshot(6, replicas=6, down=()))
    app, source = fleet_app(snaps)
    async with app.run_test(size=(120, 40)) as pilot:
        await draw_each(pilot, source, 5)
        pane = app.query_one(FleetPane)
        assert {len(history) for history in pane._histories.values()} == {3}
        await shown(pilot, 6)
        assert set(pane._histories) == {fleet_url(i) for i in range(6)}
        await pilot.resize_terminal(100, 40)  # a redraw without a new Snapshot records nothing
        await pilot.pause()
        assert {len(history) for history in pane._histories.values()} == {3}


async def test_the_kv_pane_leaves_the_per_replica_list_to_the_fleet() -> None:
    app, _source = fleet_app([make_fleet_snapshot(1)])
    async with app.run_test(size=(200, 60)) as pilot:
        await shown(pilot, 1)
        assert app.query_one("#kv-figures").size.height == 4


def _fleet_stream() -> tuple[AgentXApp, FakeSource]:
    return fleet_app([make_fleet_snapshot(seq, gpus=4) for seq in range(1, TICKS + 1)])


def test_fleet_64_replicas_80x24(snap_compare: SnapCompare) -> None:
    app, source = _fleet_stream()

    async def scroll_to_fleet(pilot: Pilot[None]) -> None:
        # The compact layout scrolls: this is the screen after scrolling down to the pane.
        await draw_each(pilot, source, TICKS)
        app.query_one("#body").scroll_to_widget(app.query_one("#pane-fleet"), animate=False, top=True)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=scroll_to_fleet)


def test_fleet_64_replicas_200x60(snap_compare: SnapCompare) -> None:
    app, source = _fleet_stream()

    async def settle(pilot: Pilot[None]) -> None:
        await draw_each(pilot, source, TICKS)

    assert snap_compare(app, terminal_size=(200, 60), run_before=settle)


def test_fixtures_have_the_down_replicas_the_screens_show() -> None:
    # The screens above show these two first, in red, with the reason in words.
    snap = make_fleet_snapshot()
    assert [ep.url for ep in snap.endpoints if not ep.up] == [fleet_url(i) for i in FLEET_DOWN]
    assert len(make_snapshot().endpoints) == 1  # an ordinary run: no fleet

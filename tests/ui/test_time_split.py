"""Where the North-Star-setting requests' time went, in the throughput pane (⁴): one bar with the first-token
share in words (its legend and the servers' phases where the pane is wide or maximised), and the
acceptance length when the server speculates, nothing about speculation when it does not. At 80×24 the
bar and the acceptance length are on the first screen, a line each."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from agentx_tui.snapshot import Snapshot
from agentx_tui.ui import AgentXApp
from agentx_tui.ui.panes import ThroughputPane
from agentx_tui.ui.panes._time import GLYPHS, RULE, time_lines
from tests.ui._helpers import shown
from tests.ui.fakes import FakeLiveControls, FakeSource, make_snapshot

SnapCompare = Callable[..., bool]
LAST = 20
NARROW = 35  # the throughput pane's figures at 80×24
WIDTHS = (NARROW, 56, 76, 100)  # 80×24, 120 columns, maximised at 80, the full layout at 160


def shaped(seq: int = 20, *, spec: bool = False, **server: object) -> Snapshot:
    """The shaped server's request (docs/metrics.md): the first token after 0.4 s of which 0.1 s queued and
    0.3 s in prefill (the client's TTFT mean 0.4 s: nothing outside the server), 0.18 s of stalls in 0.96 s."""
    snap = make_snapshot(seq, spec=spec)
    assert snap.client is not None and snap.aggregate is not None
    window = snap.client.window.updated(
        ttft_s_mean=0.4, north_star_ttft_share=0.4 / 0.96, north_star_stall_share=0.18 / 0.96
    )
    agg = snap.aggregate.model_copy(
        update={"server_queue_s_mean": 0.1, "server_prefill_s_mean": 0.3, "server_decode_s_mean": 0.56, **server}
    )
    return snap.model_copy(update={"client": snap.client.model_copy(update={"window": window}), "aggregate": agg})


def text(snap: Snapshot, width: int, **kwargs: bool) -> list[str]:
    return [row for content in time_lines(snap, width, **kwargs) for row in content.plain.split("\n")]


def test_at_80x24_one_line_holds_the_bar_and_the_first_token_share() -> None:
    (row,) = text(shaped(), NARROW)
    assert row.startswith("p90 ") and row.endswith(" TTFT 42% stall 19%") and len(row) == NARROW
    bar = row.removeprefix("p90 ").removesuffix(" TTFT 42% stall 19%")
    # 12 cells: queue 0.104, prefill 0.313, decode 0.396, stalls 0.188 of them; nothing outside the server.
    assert bar == "▒" * 1 + "▓" * 4 + "█" * 5 + "▚" * 2


@pytest.mark.parametrize("width", WIDTHS)
def test_every_line_fits_and_speculation_is_said_only_when_the_server_speculates(width: int) -> None:
    plain, speculating = text(shaped(), width), text(shaped(spec=True), width)
    assert not any("spec" in row or "AL" in row for row in plain)
    assert any(row.startswith("spec") and "AL 2.50" in row for row in speculating)
    # In detail only where a pane has it: maximised (76 columns at 80×24) or wide.
    detailed = text(shaped(spec=True), width, detail=True, rule=True) if width > NARROW else []
    for rows in (plain, speculating, detailed):
        assert max((len(row) for row in rows), default=0) <= width, rows


def test_the_acceptance_length_at_80x24_takes_the_words_that_fit() -> None:
    assert text(shaped(spec=True), NARROW)[1] == "spec AL 2.50 · golden 2.49 · ▇▅▂"
    assert text(shaped(spec=True), 56)[1] == "spec     AL 2.50 · 0.80 0.50 0.20 · golden 2.49"
    unknown = shaped(spec=True, spec_golden_acceptance_length=None, spec_acceptance_vs_golden=None)
    assert text(unknown, NARROW)[1] == "spec AL 2.50 · 0.80 0.50 0.20"
    idle = shaped(spec=True, spec_acceptance_length=None)
    assert text(idle, NARROW)[1] == "spec k 3: n/a: no draft in the window"
    # Where there is room, the report's words for it (`spec_unknown`).
    assert text(idle, 76)[1] == "spec     k 3: n/a: no draft was verified in the window"


def test_an_acceptance_length_off_the_golden_one_by_more_than_2_percent_is_in_the_warning_colour() -> None:
    def styles(snap: Snapshot) -> set[str]:
        (_, spec) = time_lines(snap, NARROW)
        return {str(span.style) for span in spec.spans if "2.50" in spec.plain[span.start : span.end]}

    assert styles(shaped(spec=True)) == {"bold $accent"}  # ×1.004
    assert styles(shaped(spec=True, spec_acceptance_vs_golden=2.5 / 2.7)) == {"bold $warning"}


def test_detail_gives_the_legend_the_servers_phases_and_where_the_golden_length_came_from() -> None:
    rows = text(shaped(spec=True), 100)
    assert " ".join(rows[1].split()) == "░ outside 0% ▒ queue 10% ▓ prefill 31% █ decode 40% ▚ stalls 19%"
    assert (
        " ".join(rows[2].split()) == "server queue 100 ms prefill 300 ms decode 560 ms outside 0.0 ms 2.05 K tok/step"
    )
    assert rows[3].startswith("spec     AL 2.50 tok/step, k 3 · accepted 50% · by position 0.80 0.50 0.20")
    assert "golden 2.49, measured ×1.00 (DeepSeek-V4 MTP, on, k = 3" in rows[4]
    words = " ".join(" ".join(text(shaped(), 76, detail=True, rule=True)).split())
    assert RULE in words


def test_without_the_servers_phases_the_first_token_part_is_one_segment() -> None:
    snap = shaped(server_queue_s_mean=None, server_prefill_s_mean=None, server_decode_s_mean=None)
    snap = snap.model_copy(update={"aggregate": snap.aggregate.model_copy(update={"server_step_tokens_mean": None})})  # type: ignore[union-attr]
    rows = text(snap, 100)
    assert rows[1].split()[:3] == ["▓", "first", "token"] and not any(row.startswith("server") for row in rows)


@pytest.mark.parametrize(
    ("case", "why"),
    [
        ("observing", "p90 n/a: observing only"),
        ("nothing yet", "p90 n/a: no request completed yet"),
        ("quiet window", "p90 n/a: none in the window"),
    ],
)
def test_no_split_says_why(case: str, why: str) -> None:
    snap = make_snapshot()
    assert snap.client is not None
    window = snap.client.window.updated(north_star_ttft_share=None, north_star_stall_share=None)
    client = snap.client.model_copy(update={"window": window})
    if case == "observing":
        client = None  # type: ignore[assignment]
    elif case == "nothing yet":
        client = client.model_copy(update={"totals": client.totals.model_copy(update={"requests_completed": 0})})
    (row,) = text(snap.model_copy(update={"client": client}), NARROW)
    assert row == why


def stream(spec: bool) -> FakeSource:
    return FakeSource([make_snapshot(seq, spec=spec) for seq in range(1, LAST + 1)])


@pytest.mark.parametrize("spec", [True, False], ids=["speculating", "not-speculating"])
async def test_at_80x24_the_split_and_the_acceptance_length_are_on_the_first_screen(spec: bool) -> None:
    app = AgentXApp(stream(spec), FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, LAST)
        figures = app.query_one("#tps-latency", Static)
        rows = str(figures.render()).split("\n")
        split = next(i for i, row in enumerate(rows) if row.startswith("p90 "))
        last = split + 1 if spec else split
        assert rows[split].endswith("TTFT 38% stall 7%")
        assert ("spec AL 2.50" in rows[split + 1]) is spec
        assert figures.region.y + last < 24 - 1  # above the footer, no scrolling


async def test_maximised_at_80x24_everything_shows_whole() -> None:
    app = AgentXApp(stream(True), FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, LAST)
        await pilot.press(str(ThroughputPane.KEY))
        await pilot.pause()
        pane = app.query_one(ThroughputPane)
        figures = pane.query_one("#tps-latency", Static)
        words = str(figures.render())
        assert figures.region.bottom <= pane.region.bottom - 1  # inside the border: nothing cut
        for said in ("p90 time", f"{GLYPHS['queue'][0]} queue", "server   queue 30 ms", "golden 2.49", "req/s"):
            assert said in words, said


@pytest.mark.parametrize("spec", [True, False], ids=["speculating", "not-speculating"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_time_split(snap_compare: SnapCompare, size: tuple[int, int], spec: bool) -> None:
    app = AgentXApp(stream(spec), FakeLiveControls())

    async def settle(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)

    assert snap_compare(app, terminal_size=size, run_before=settle)


def test_time_split_maximised_80x24(snap_compare: SnapCompare) -> None:
    async def maximise(pilot: Pilot[None]) -> None:
        await shown(pilot, LAST)
        await pilot.press(str(ThroughputPane.KEY))
        await pilot.pause()

    assert snap_compare(AgentXApp(stream(True), FakeLiveControls()), terminal_size=(80, 24), run_before=maximise)

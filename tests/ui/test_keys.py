"""Pilot tests: every key does what the help says, and reaches the controls."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, RichLog

from agentx_tui.ui import AgentXApp
from agentx_tui.ui.header import RunHeader
from agentx_tui.ui.panes import UsersPane
from agentx_tui.ui.panes._table import KeyedTable
from agentx_tui.ui.screens import CostScreen, HelpScreen, WorkloadScreen
from tests.ui._helpers import pane, shown
from tests.ui.fakes import SECRET, FakeLiveControls, FakeReplayControls, FakeSource, make_snapshot

SIZE = (120, 40)


def live_app(controls: FakeLiveControls, tmp_path: Path, **kwargs: object) -> AgentXApp:
    snaps = [make_snapshot(1, server_log=[f"vllm args: --api-key {SECRET}"]), make_snapshot(2)]
    return AgentXApp(
        FakeSource(snaps),
        controls,
        refresh_s=0.25,
        screenshot_dir=tmp_path,
        secrets=[SECRET],
        **kwargs,  # type: ignore[arg-type]
    )


def header_text(app: AgentXApp) -> str:
    return str(app.query_one(RunHeader).render())


async def test_pause_and_resume_reach_the_controls(tmp_path: Path) -> None:
    controls = FakeLiveControls()
    app = live_app(controls, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        await pilot.press("p")
        assert controls.calls[-1] == ("pause", ())
        assert "paused" in header_text(app)
        await pilot.press("p")
        assert controls.calls[-1] == ("resume", ())
        assert "running" in header_text(app)


async def test_w_switches_the_workload_from_a_list(tmp_path: Path) -> None:
    controls = FakeLiveControls()
    app = live_app(controls, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        await pilot.press("w")
        assert isinstance(app.screen, WorkloadScreen)
        await pilot.press("up", "enter")  # from coding-agent (highlighted: the current one) up to chat
        assert controls.calls[-1] == ("set_workload", ("chat",))
        assert not isinstance(app.screen, WorkloadScreen)
        await pilot.press("w", "escape")
        assert controls.calls[-1] == ("set_workload", ("chat",))  # esc changed nothing


async def test_plus_and_minus_change_users_and_show_the_target_at_once(tmp_path: Path) -> None:
    controls = FakeLiveControls(users=12)
    app = live_app(controls, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        await pilot.press("plus")
        assert controls.calls[-1] == ("set_users", (13,))
        assert "12→13" in header_text(app)
        await pilot.press("minus", "minus")
        assert controls.calls[-1] == ("set_users", (11,))
        assert "12→11" in header_text(app)


async def test_minus_never_goes_below_zero_users(tmp_path: Path) -> None:
    controls = FakeLiveControls(users=0)
    app = live_app(controls, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        await pilot.press("minus")
        assert controls.calls[-1] == ("set_users", (0,))


@pytest.mark.parametrize("key", range(1, 8))
async def test_digit_maximises_its_pane_and_escape_restores(tmp_path: Path, key: int) -> None:
    app = live_app(FakeLiveControls(), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        await pilot.press(str(key))
        assert app.screen.maximized is pane(app, key)
        await pilot.press("escape")
        assert app.screen.maximized is None


async def test_t_cycles_through_every_bundled_theme(tmp_path: Path) -> None:
    app = live_app(FakeLiveControls(), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        assert app.theme == "agentx-dark"
        seen = [app.theme]
        for _ in app.theme_names:
            await pilot.press("t")
            seen.append(app.theme)
        assert set(seen) >= {"agentx-dark", "agentx-light", "agentx-mono"}
        assert seen[-1] == "agentx-dark"


async def test_c_edits_the_price(tmp_path: Path) -> None:
    controls = FakeLiveControls()
    app = live_app(controls, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, CostScreen)
        price = app.screen.query_one("#price-input", Input)
        assert price.value == "2.9"  # prefilled from the meter
        price.value = ""
        price.focus()
        await pilot.press(*"3.5", "tab")
        gpus = app.screen.query_one("#gpus-input", Input)
        gpus.value = ""
        await pilot.press("8", "enter")
        await pilot.pause()
        assert controls.calls[-1] == ("set_price", (3.5, 8))
        assert not isinstance(app.screen, CostScreen)


async def test_c_rejects_a_bad_price_and_escape_cancels(tmp_path: Path) -> None:
    controls = FakeLiveControls()
    app = live_app(controls, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        await pilot.press("c")
        await pilot.pause()
        app.screen.query_one("#price-input", Input).value = "-1"
        app.screen.query_one("#gpus-input", Input).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CostScreen)
        assert "price" in str(app.screen.query_one("#cost-error").render())
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CostScreen)
        assert not any(name == "set_price" for name, _ in controls.calls)


async def test_s_saves_an_svg_without_the_secret(tmp_path: Path) -> None:
    app = live_app(FakeLiveControls(), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        # Put the raw key on screen on purpose: the SVG scrub is the last line of defence.
        app.query_one("#log", RichLog).write(f"raw {SECRET}")
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        files = list(tmp_path.glob("agentx-tui-*.svg"))
        assert len(files) == 1
        text = files[0].read_text(encoding="utf-8")
        assert "<svg" in text
        assert SECRET not in text
        assert "sk-test" not in text
        # The notification fades; the log keeps the path (written on the next UI tick).
        log = app.query_one("#log", RichLog)
        for _ in range(100):
            if any("screenshot saved to" in strip.text for strip in log.lines):
                break
            await pilot.pause(0.02)
        assert any("screenshot saved to" in strip.text for strip in log.lines)
        await pilot.press("s")
        await pilot.pause()
        assert len(list(tmp_path.glob("agentx-tui-*.svg"))) == 2


async def test_server_log_reaches_the_log_pane_scrubbed(tmp_path: Path) -> None:
    app = live_app(FakeLiveControls(), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        lines = [strip.text for strip in app.query_one("#log", RichLog).lines]
        assert any("vllm args: --api-key" in line for line in lines)
        assert not any(SECRET in line for line in lines)


async def test_r_resets_windows_and_histories(tmp_path: Path) -> None:
    controls = FakeLiveControls()
    app = live_app(controls, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        assert len(app.history.output_tps) == 2
        await pilot.press("r")
        assert controls.calls[-1] == ("reset_windows", ())
        assert len(app.history.output_tps) == 0


async def test_question_mark_lists_every_key(tmp_path: Path) -> None:
    app = live_app(FakeLiveControls(), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text").render())
        for key in ("q", "p", "+", "-", "1–7", "esc", "t", "c", "s", "r", "o", "O", "?"):
            assert f"\n{key}" in f"\n{text}" or f" {key} " in text, key
        assert "step one tick" not in text  # replay keys are hidden in a live run
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_q_shuts_down_then_exits(tmp_path: Path) -> None:
    controls = FakeLiveControls()
    app = live_app(controls, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 2)
        await pilot.press("q")
        await pilot.pause()
    assert controls.calls[-1][0] == "shutdown"
    assert app.return_code == 0


async def test_ended_source_keeps_the_final_state_until_q(tmp_path: Path) -> None:
    controls = FakeLiveControls()
    source = FakeSource([make_snapshot(1), make_snapshot(7, state="finished")], end=True)
    app = AgentXApp(source, controls, refresh_s=0.25)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 7)
        await pilot.pause(0.3)
        assert app.is_running
        text = header_text(app)
        assert "finished" in text and "run ended" in text
        await pilot.press("q")
        await pilot.pause()
    assert ("shutdown", ("quit from the dashboard",)) in controls.calls


async def test_failing_source_is_reported_not_raised(tmp_path: Path) -> None:
    class Broken:
        async def snapshots(self):  # type: ignore[no-untyped-def]
            yield make_snapshot(1)
            raise ConnectionError(f"lost {SECRET}")

    app = AgentXApp(Broken(), None, refresh_s=0.25, secrets=[SECRET])
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 1)
        await pilot.pause(0.3)
        assert "source failed" in header_text(app)
        lines = [strip.text for strip in app.query_one("#log", RichLog).lines]
        assert any("ConnectionError" in line for line in lines)
        assert not any(SECRET in line for line in lines)


async def test_users_table_updates_rows_in_place_and_sorts(tmp_path: Path) -> None:
    source = FakeSource([make_snapshot(1), make_snapshot(2)], manual=True)
    app = AgentXApp(source, FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 1)
        table = app.query_one("#users-table", KeyedTable)
        assert table.order == [str(n) for n in range(12)]
        assert table.cell("3", "step").text == "5/30"
        source.release()
        await shown(pilot, 2)
        assert table.adds == 12  # updated in place, never re-added
        assert table.cell("3", "step").text == "6/30"
        pane = app.query_one(UsersPane)
        await pilot.press("o", "o", "o")  # user → state → step → context
        assert pane.sort_column == "context"
        contexts = [table.cell(key, "context").sort for key in table.order]
        assert contexts == sorted(contexts)
        await pilot.press("O")
        contexts = [table.cell(key, "context").sort for key in table.order]
        assert contexts == sorted(contexts, reverse=True)
        assert "sort context ↓" in str(pane.border_subtitle)


async def test_users_table_drops_rows_of_sessions_that_are_gone(tmp_path: Path) -> None:
    source = FakeSource([make_snapshot(1), make_snapshot(2, sessions=5)], manual=True)
    app = AgentXApp(source, FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 1)
        source.release()
        await shown(pilot, 2)
        table = app.query_one("#users-table", KeyedTable)
        assert table.order == [str(n) for n in range(5)]


async def test_replay_keys_drive_the_replay_and_live_keys_are_hidden(tmp_path: Path) -> None:
    controls = FakeReplayControls(length=50, position=10)
    app = AgentXApp(FakeSource([make_snapshot(1)]), controls, refresh_s=0.25)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, 1)
        await pilot.press("space")
        assert controls.paused
        await pilot.press("full_stop")
        assert controls.calls[-1] == ("step", (1,))
        await pilot.press("comma")
        assert controls.calls[-1] == ("step", (-1,))
        await pilot.press("right_square_bracket")
        assert controls.speed == 2.0
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert controls.speed == 0.5
        await pilot.press("end")
        assert controls.calls[-1] == ("seek", (49,))
        await pilot.press("home")
        assert controls.calls[-1] == ("seek", (0,))
        assert "replay 1/50 ×0.5" in header_text(app)
        await pilot.press("plus", "c", "r")
        assert not isinstance(app.screen, CostScreen)
        assert all(name in {"pause", "resume", "step", "seek", "set_speed"} for name, _ in controls.calls)
        await pilot.press("question_mark")
        await pilot.pause()
        help_text = str(app.screen.query_one("#help-text").render())
        assert "step one tick forward / back" in help_text and "concurrent user" not in help_text
        await pilot.press("escape", "q")
        await pilot.pause()
    assert app.return_code == 0

"""Theme files: the bundled ones load, a broken one gives one notice, NO_COLOR picks monochrome."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentx_tui.ui import AgentXApp
from agentx_tui.ui._themes import BUNDLED_DIR, load_theme_file, load_themes
from tests.helpers.paths import REPO
from tests.ui._helpers import shown
from tests.ui.fakes import FakeLiveControls, FakeSource, make_snapshot

REPO_THEMES = REPO / "themes"
GOOD = """\
name: {name}
dark: true
primary: "#4aa3ff"
secondary: "#7c8cff"
accent: "#ffb347"
warning: "#ffb000"
error: "#ff5f5f"
success: "#4cd07d"
background: "#0f1419"
surface: "#161c24"
panel: "#1f2833"
foreground: "#e6e6e6"
"""


def test_bundled_themes_load_and_include_dark_light_and_mono() -> None:
    loaded = load_themes([BUNDLED_DIR])
    assert loaded.problems == ()
    by_name = {theme.name: theme for theme in loaded.themes}
    assert {"agentx-dark", "agentx-light", "agentx-mono"} <= set(by_name)
    assert by_name["agentx-dark"].dark and not by_name["agentx-light"].dark


def test_the_bundled_themes_are_the_repositorys_themes_folder() -> None:
    # Shipped from there (setup.py): no second copy to drift apart.
    assert BUNDLED_DIR.resolve() == REPO_THEMES.resolve()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: x\ndark: [", "not valid YAML"),
        ("- a\n- b\n", "expected a mapping"),
        (
            GOOD.format(name="x").replace('"#ff5f5f"', '"reddish"'),
            "error: Value error, 'reddish' is not a colour",
        ),
        (GOOD.format(name="x").replace('panel: "#1f2833"\n', ""), "panel: Field required"),
        (GOOD.format(name="Bad Name"), "name: Value error"),
        (GOOD.format(name="x") + "extra: 1\n", "extra: Extra inputs are not permitted"),
    ],
)
def test_broken_theme_file_gives_one_reason(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace("[", r"\[")):
        load_theme_file(path)


async def test_broken_user_theme_notifies_once_and_app_runs_on_default(clean_environment: Path) -> None:
    themes = clean_environment / "agentx-tui" / "themes"
    themes.mkdir(parents=True)
    (themes / "mine.yaml").write_text(GOOD.format(name="mine"))
    (themes / "broken.yaml").write_text("name: broken\ndark: maybe\n")
    app = AgentXApp(FakeSource([make_snapshot(1)]), FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=(100, 30)) as pilot:
        await shown(pilot, 1)
        notices = list(app._notifications)
        assert len(notices) == 1
        assert "broken.yaml" in notices[0].message and "dark" in notices[0].message
        assert app.theme == "agentx-dark"
        assert "mine" in app.theme_names
        app.theme = "mine"  # a good user theme is usable
        await pilot.pause()


async def test_unknown_theme_argument_falls_back_with_a_notice() -> None:
    app = AgentXApp(FakeSource([make_snapshot(1)]), None, theme="neon", refresh_s=0.25)
    async with app.run_test(size=(100, 30)) as pilot:
        await shown(pilot, 1)
        assert app.theme == "agentx-dark"
        assert any("neon" in notice.message for notice in app._notifications)


async def test_no_color_selects_the_monochrome_theme(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = AgentXApp(FakeSource([make_snapshot(1)]), None, refresh_s=0.25)
    async with app.run_test(size=(100, 30)) as pilot:
        await shown(pilot, 1)
        assert app.theme == "agentx-mono"
        assert app.no_color  # Textual's own monochrome filter is on as well


async def test_light_theme_by_name() -> None:
    app = AgentXApp(FakeSource([make_snapshot(1)]), None, theme="agentx-light", refresh_s=0.25)
    async with app.run_test(size=(100, 30)) as pilot:
        await shown(pilot, 1)
        assert app.theme == "agentx-light"
        assert not app.current_theme.dark

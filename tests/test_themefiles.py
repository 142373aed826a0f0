"""`--theme` is checked against the theme files before anything starts, in every mode, without textual
(agentx_tui/themefiles.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentx_tui.cli import main, parse_args
from agentx_tui.themefiles import bundled_theme_dir, theme_names

BUNDLED = ("agentx-dark", "agentx-light", "agentx-mono")


@pytest.fixture(autouse=True)
def no_user_themes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's theme folder, empty: whatever the developer's own holds is not read."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    folder = tmp_path / "agentx-tui" / "themes"
    folder.mkdir(parents=True)
    return folder


@pytest.mark.parametrize(
    "args",
    [
        ["--theme", "nosuchtheme", "--headless", "--duration", "1"],  # exited 0 without a word
        ["--theme", "nosuchtheme", "--duration", "1"],  # the dashboard
        ["--web", "127.0.0.1:8765", "--theme", "nosuchtheme"],  # refused before a page is served
        ["replay", "no-such-recording.jsonl", "--theme", "nosuchtheme"],  # before the file is opened
    ],
)
def test_an_unknown_theme_is_one_sentence_naming_the_themes_exit_2(
    args: list[str], no_user_themes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("error: --theme: no theme is named 'nosuchtheme': the themes are ")
    assert "agentx-dark, agentx-light, agentx-mono" in error
    assert str(no_user_themes) in error  # where a theme of one's own goes
    assert error.count("\n") == 0 and "no-such-recording" not in error


def test_the_names_are_the_files_own_and_a_users_theme_counts(no_user_themes: Path) -> None:
    assert theme_names() == BUNDLED
    assert all((bundled_theme_dir() / f"{name}.yaml").is_file() for name in BUNDLED)
    (no_user_themes / "mine.yaml").write_text("name: solarized-mine\ndark: true\n", encoding="utf-8")
    (no_user_themes / "broken.yaml").write_text("name: [unclosed\n", encoding="utf-8")  # the dashboard says why
    (no_user_themes / "nameless.yaml").write_text("dark: true\n", encoding="utf-8")
    (no_user_themes / "again.yaml").write_text("name: agentx-dark\ndark: false\n", encoding="utf-8")  # an override
    assert theme_names() == (*BUNDLED, "solarized-mine")
    assert parse_args(["--theme", "solarized-mine"]).theme == "solarized-mine"


def test_checking_a_theme_does_not_load_the_dashboard() -> None:
    code = (
        "import sys\n"
        "from agentx_tui.cli import parse_args\n"
        "assert parse_args(['--theme', 'agentx-mono', '--headless']).theme == 'agentx-mono'\n"
        "assert 'textual' not in sys.modules and 'agentx_tui.ui' not in sys.modules, sorted(sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr

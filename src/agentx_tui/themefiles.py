"""Where the dashboard's theme files are, and the names they give, read without the dashboard: `--theme` is
checked against them before anything starts, in every mode (the dashboard, `--headless`, `--web`,
`agentx-tui replay`), without importing textual.

The bundled themes are the repository's top-level ``themes/*.yaml``, shipped as the package
``agentx_tui.ui.themes`` (setup.py). The user's are ``$XDG_CONFIG_HOME/agentx-tui/themes/*.yaml``
(``~/.config`` when unset) and may override a bundled theme by using its name. A theme's name is its
file's ``name:``; ui/_themes.py reads the colours and says which files cannot be used.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentx_tui.yamlfile import YamlFileError, read_yaml

BUNDLED_PACKAGE = "agentx_tui.ui.themes"


def bundled_theme_dir() -> Path:
    """The bundled themes' folder, found as an import of their package would find it (an editable install
    maps it to the repository's ``themes/``) but without importing `agentx_tui.ui`, which loads textual."""
    parent, _, _ = BUNDLED_PACKAGE.rpartition(".")
    ui = importlib.util.find_spec(parent)  # found, not run
    if ui is not None and ui.submodule_search_locations is not None:
        search = list(ui.submodule_search_locations)
        for finder in sys.meta_path:
            spec = finder.find_spec(BUNDLED_PACKAGE, search) if hasattr(finder, "find_spec") else None
            if spec is not None and spec.submodule_search_locations:
                return Path(next(iter(spec.submodule_search_locations)))
    raise RuntimeError(f"the package {BUNDLED_PACKAGE} is not installed: reinstall agentx-tui")


def user_theme_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".config")
    return Path(base) / "agentx-tui" / "themes"


def theme_names(directories: Sequence[Path] | None = None) -> tuple[str, ...]:
    """The names the theme files in `directories` (the bundled, then the user's) give, each once, in their
    order; a file that cannot be read or gives no name is left out (the dashboard says which)."""
    names: dict[str, None] = {}
    for directory in (bundled_theme_dir(), user_theme_dir()) if directories is None else directories:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.yaml")):
            try:
                data = read_yaml(path)
            except YamlFileError:
                continue
            if isinstance(data, dict) and isinstance(name := data.get("name"), str):
                names[name] = None
    return tuple(names)


def theme_name(text: str) -> str:
    """`--theme`'s argparse `type=`: a theme a file gives, else one sentence naming those there are."""
    names = theme_names()
    if text in names:
        return text
    raise argparse.ArgumentTypeError(
        f"no theme is named {text!r}: the themes are {', '.join(names) or 'none'} (a theme file of your own goes "
        f"in {user_theme_dir()})"
    )

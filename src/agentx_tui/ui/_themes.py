"""Theme data files → Textual `Theme`s.

The bundled themes are the repository's top-level ``themes/*.yaml``, shipped as the package
``agentx_tui.ui.themes`` (setup.py) so that an installed tool finds them. User themes come from
``$XDG_CONFIG_HOME/agentx-tui/themes/*.yaml`` (``~/.config`` when unset) and may override a bundled
theme by using its name. Where both are is said once, in agentx_tui/themefiles.py (which `--theme` is
checked against before anything starts).

A file that cannot be used becomes one problem line naming the file and what is wrong with it; the
caller shows it and carries on with the themes that did load.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError
from textual.color import Color, ColorParseError
from textual.theme import Theme

from agentx_tui.themefiles import bundled_theme_dir
from agentx_tui.themefiles import user_theme_dir as user_theme_dir  # where the app looks for the user's
from agentx_tui.yamlfile import YamlFileError, read_yaml

DEFAULT_THEME = "agentx-dark"
MONO_THEME = "agentx-mono"
BUNDLED_DIR = bundled_theme_dir()


def _colour(value: str) -> str:
    try:
        return Color.parse(value).hex
    except ColorParseError as exc:
        raise ValueError(f"{value!r} is not a colour") from exc


ColourStr = Annotated[str, AfterValidator(_colour)]
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def _name(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError("use lower-case letters, digits, '-' or '_'")
    return value


class ThemeFile(BaseModel):
    """The schema of one theme file (every colour required, so a theme never half-applies)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, AfterValidator(_name)]
    dark: bool
    primary: ColourStr
    secondary: ColourStr
    accent: ColourStr
    warning: ColourStr
    error: ColourStr
    success: ColourStr
    background: ColourStr
    surface: ColourStr
    panel: ColourStr
    foreground: ColourStr

    def to_theme(self) -> Theme:
        return Theme(**self.model_dump())  # the fields are Theme's own


@dataclass(frozen=True)
class LoadedThemes:
    themes: tuple[Theme, ...]
    problems: tuple[str, ...]


def load_theme_file(path: Path) -> Theme:
    """One theme file; raises ValueError with a one-line, user-facing reason."""
    try:
        data = read_yaml(path)
    except YamlFileError as exc:
        raise ValueError(exc.reason) from exc
    if not isinstance(data, dict):
        raise ValueError("expected a mapping of name, dark and colours")
    try:
        return ThemeFile.model_validate(data).to_theme()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "file"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise ValueError(f"{field}: {first['msg']}{more}") from exc


def load_themes(directories: Sequence[Path]) -> LoadedThemes:
    """Every ``*.yaml`` theme in `directories`, in order; later files override earlier names."""
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for directory in directories:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.yaml")):
            try:
                theme = load_theme_file(path)
            except ValueError as exc:
                problems.append(f"theme file {path}: {exc}; using the default theme")
                continue
            themes[theme.name] = theme
    return LoadedThemes(tuple(themes.values()), tuple(problems))


def choose_theme(requested: str | None, available: Sequence[str], no_color: bool) -> tuple[str, str | None]:
    """The theme to start with and, when the request cannot be met, why."""
    if requested is not None:
        if requested in available:
            return requested, None
        fallback = MONO_THEME if no_color else DEFAULT_THEME
        return fallback, f"unknown theme {requested!r}; using {fallback} (have: {', '.join(available)})"
    return (MONO_THEME if no_color else DEFAULT_THEME), None

"""Reading a user's YAML file (a workload, cost presets, a theme) with a one-line reason on failure.

PyYAML's own message spans several lines with a caret drawing; users get the problem and its place in
one sentence instead. Each caller words the sentence's subject ("The workload file …").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class YamlFileError(Exception):
    """`reason` completes "<path> is …" / "<path>: …" in a caller's sentence, e.g. "not valid YAML at
    line 3, column 5: found character '\\t' that cannot start any token"."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise YamlFileError(f"cannot be read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise YamlFileError("not a text (UTF-8) file") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise YamlFileError(f"not valid YAML{where}: {problem}") from exc

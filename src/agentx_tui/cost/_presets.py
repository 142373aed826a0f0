"""The cost presets file: load, validate, merge the user's override (docs/metrics.md)."""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentx_tui.errors import UsageError
from agentx_tui.yamlfile import YamlFileError, read_yaml

USER_FILE = Path("agentx-tui") / "cost-presets.yaml"
_WHAT = "cost presets"
Model = TypeVar("Model", bound=BaseModel)


def names_gpu(words: tuple[str, ...], gpu_name: str) -> bool:
    """Whether one of `words` is in `gpu_name` as a whole word, so "B200" does not match "NVIDIA GB200"
    (the rule by which a cost preset and a peak row each find the GPU NVML or DCGM names)."""
    return any(
        re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", gpu_name, re.IGNORECASE) for word in words
    )


def best_match(rows: dict[str, tuple[str, ...]], gpu_name: str) -> str | None:
    """The key whose match words name `gpu_name` (or that equals it); of several, the one with the longest
    word ("H100 PCIe" over "H100")."""
    lowered = gpu_name.strip().lower()
    if lowered in rows:
        return lowered
    hits = [key for key, words in rows.items() if names_gpu(words, gpu_name)]
    return max(hits, key=lambda k: max(len(w) for w in rows[k])) if hits else None


class GpuPreset(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    match: tuple[str, ...] = Field(min_length=1)  # words in the GPU's name, e.g. "H200"
    owned_usd_per_gpu_hour: float = Field(gt=0)
    rental_usd_per_gpu_hour: float = Field(gt=0)
    board_power_w: float | None = Field(default=None, gt=0)

    def matches(self, gpu_name: str) -> bool:
        return names_gpu(self.match, gpu_name)


class Presets(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    date: str
    pue: float = Field(ge=1)
    usd_per_kwh: float = Field(ge=0)
    gpus: dict[str, GpuPreset] = Field(min_length=1)
    files: tuple[str, ...] = ()  # the files these presets came from, built-in first

    def profile_names(self) -> list[str]:
        return [name for key in self.gpus for name in (key, f"{key}-rental", f"{key}-owned")]

    def for_gpu_name(self, gpu_name: str) -> str | None:
        """The preset key whose match words appear in ``gpu_name`` (or equal the key)."""
        return best_match({key: preset.match for key, preset in self.gpus.items()}, gpu_name)


def read_mapping(path: Path, what: str, fields: str) -> dict[str, Any]:
    """A user's YAML file of `what` ("cost presets") that must be a mapping (of `fields`); `UsageError`
    in one sentence naming the file otherwise."""
    try:
        data = read_yaml(path)
    except YamlFileError as exc:
        raise UsageError(f"The {what} file {path} {_verb(exc.reason)}.") from exc
    if not isinstance(data, dict):
        raise UsageError(f"The {what} file {path} must be a mapping ({fields}).")
    return data


def _verb(reason: str) -> str:
    return reason if reason.startswith("cannot") else f"is {reason}"


def validated(model: type[Model], data: dict[str, Any], path: Path | str, what: str) -> Model:
    """`data` as `model`; `UsageError` naming the file and the first bad field otherwise."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "(top level)"
        raise UsageError(
            f"The {what} file {path} has a bad field `{where}`: {error['msg']}.",
            hint=f"Fix or delete that file; the built-in {what} are used without it.",
        ) from exc


def builtin_path() -> str:
    return str(resources.files("agentx_tui.cost") / "presets.yaml")


def user_path(name: Path = USER_FILE) -> Path:
    """Where the user's override of a built-in file lives: `$XDG_CONFIG_HOME/agentx-tui/…`."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / name


def load_presets(path: Path | None = None) -> Presets:
    """The built-in presets, overlaid with ``path`` (default: the user's file, when it exists).

    The override's top-level settings replace the built-in ones; its ``gpus`` entries replace or add
    to the built-in ones key by key. A bad file raises `UsageError` naming the file and the field.
    """
    builtin_text = (resources.files("agentx_tui.cost") / "presets.yaml").read_text(encoding="utf-8")
    builtin = yaml.safe_load(builtin_text)
    merged = dict(builtin)
    files = [builtin_path()]
    override = path if path is not None else user_path()
    if path is not None or override.is_file():
        data = read_mapping(override, _WHAT, "source, date, gpus, …")
        user_gpus = data.pop("gpus", {})
        if not isinstance(user_gpus, dict):
            raise UsageError(f"The cost presets file {override} has a bad field `gpus`: must be a mapping.")
        merged.update(data)
        merged["gpus"] = {**builtin["gpus"], **{str(k).lower(): v for k, v in user_gpus.items()}}
        files.append(str(override))
        return validated(Presets, {**merged, "files": files}, override, _WHAT)
    return validated(Presets, {**merged, "files": files}, builtin_path(), _WHAT)

"""AgentX's golden acceptance lengths (docs/sweeps.md, "AgentX validity"): the speculative-decoding
acceptance length a run of a model is pinned to, per thinking mode and draft length k (`golden.yaml`,
each model citing its InferenceX source run), with the user's override, and which one a served model is
measured against.

Beside the cost presets and the GPU peaks because it is read the same way: a built-in file, a user's file
overlaid key by key (`_presets.read_mapping`, `validated`, `user_path`).
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentx_tui.cost._presets import read_mapping, user_path, validated
from agentx_tui.errors import UsageError

USER_FILE = Path("agentx-tui") / "golden-acceptance.yaml"
_WHAT = "golden acceptance lengths"
HINT = "pass --spec-golden AL"
Thinking = Literal["on", "off"]


class GoldenModel(BaseModel):
    """One model's golden curve: k → AL, for thinking on and (where measured) off."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    method: str  # the draft that measured it: MTP, EAGLE3…
    match: tuple[str, ...] = Field(min_length=1)  # regular expressions searched in the served model's name
    file: str  # the InferenceX file the values come from
    run: str  # its source Actions run
    thinking_on: dict[int, float] = Field(default_factory=dict)
    thinking_off: dict[int, float] = Field(default_factory=dict)

    @field_validator("match")
    @classmethod
    def _patterns(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression ({exc})") from exc
        return patterns

    @field_validator("thinking_on", "thinking_off")
    @classmethod
    def _lengths(cls, curve: dict[int, float]) -> dict[int, float]:
        for k, length in curve.items():
            if k < 1 or not 1 <= length <= k + 1:
                raise ValueError(f"k = {k}: a golden length must be between 1 and k + 1, not {length}")
        return curve

    def curve(self, thinking: Thinking) -> dict[int, float]:
        return self.thinking_on if thinking == "on" else self.thinking_off

    def matched(self, served: str) -> int:
        """How long a text of `served` its patterns match (the longest; 0: none)."""
        found = (re.search(pattern, served, re.IGNORECASE) for pattern in self.match)
        return max((len(m.group(0)) or 1 for m in found if m is not None), default=0)


class GoldenTable(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    date: str
    thinking: Thinking = "on"  # the mode a run is judged by
    models: dict[str, GoldenModel] = Field(min_length=1)
    files: tuple[str, ...] = ()  # the files these rows came from, built-in first

    @field_validator("thinking", mode="before")
    @classmethod
    def _yaml_on_off(cls, value: object) -> object:
        """YAML 1.1 reads a bare `on`/`off` as a boolean: take it as the word it was."""
        return {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value

    def for_model(self, served: str) -> str | None:
        """The key of the model whose patterns match the served model's name (the longest match wins)."""
        scored = [(row.matched(served), key) for key, row in self.models.items()]
        best = max(scored, default=(0, ""))
        return best[1] if best[0] > 0 else None


class GoldenLength(BaseModel):
    """The golden acceptance length a run measures against, and where it came from (or why there is none)."""

    model_config = ConfigDict(frozen=True)

    length: float | None
    source: str


def builtin_golden_path() -> str:
    return str(resources.files("agentx_tui.cost") / "golden.yaml")


def load_golden(path: Path | None = None) -> GoldenTable:
    """The built-in golden lengths, overlaid with ``path`` (default: the user's file, when it exists): its
    models replace or add to the built-in ones key by key, its top-level settings replace theirs. A bad
    file raises `UsageError` naming the file and the field."""
    builtin = yaml.safe_load((resources.files("agentx_tui.cost") / "golden.yaml").read_text(encoding="utf-8"))
    merged = dict(builtin)
    files = [builtin_golden_path()]
    override = path if path is not None else user_path(USER_FILE)
    where: Path | str = builtin_golden_path()
    if path is not None or override.is_file():
        data = read_mapping(override, _WHAT, "source, date, thinking, models")
        models = data.pop("models", {})
        if not isinstance(models, dict):
            raise UsageError(f"The {_WHAT} file {override} has a bad field `models`: must be a mapping.")
        merged.update(data)
        merged["models"] = {**builtin["models"], **{str(k).lower(): v for k, v in models.items()}}
        files.append(str(override))
        where = override
    return validated(GoldenTable, {**merged, "files": files}, where, _WHAT)


def golden_length(
    served: str | None, k: int | None, *, override: float | None = None, table: GoldenTable | None = None
) -> GoldenLength:
    """The golden acceptance length of the served model at draft length `k`: `--spec-golden` (`override`)
    for any model; else the table's row whose patterns name the model, at the thinking mode it judges by;
    else none, and `source` says why and what to pass."""
    if override is not None:
        return GoldenLength(length=override, source="--spec-golden")
    if k is None:
        return GoldenLength(length=None, source="no speculative decoding seen: no draft length")
    if not served:
        return GoldenLength(length=None, source=f"the served model is not known ({HINT})")
    table = table or load_golden()
    key = table.for_model(served)
    if key is None:
        return GoldenLength(length=None, source=f"no golden acceptance length for {served!r} ({HINT})")
    row = table.models[key]
    mode = f"thinking {table.thinking}"
    length = row.curve(table.thinking).get(k)
    if length is None:
        return GoldenLength(length=None, source=f"{row.name} {row.method} has no golden length at k = {k}, {mode}")
    return GoldenLength(length=length, source=f"{row.name} {row.method}, {mode}, k = {k}: InferenceX {row.file}")

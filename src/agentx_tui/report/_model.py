"""The report as a typed model (docs/metrics.md): what `ReportBuilder` builds, the writers write,
`--check` reads and `compare` loads back from a file.

Its JSON is the contract, and it is flat: one key per figure (`REPORT_KEYS`, in that order), then, for
a sweep, `points`, `frontier`, `tiers`, `sweep_stop_reason` and every tier's own keys
(`total_tokens_per_s_per_gpu_at_100` and its `_ci_low`/`_ci_high`, `tokens_per_dollar_total_at_100`,
`usd_per_million_total_tokens_at_100`; read on the North Star, and again with `_decode` after T on
decode interactivity; then `agents_per_gpu_at_100` and `agents_per_mw_at_100`, on the frontier's own
axis). Those per-tier keys are the `tiers` list written flat (the frontier axis's reads, then the other
axis's), so the model keeps the list only (`tiers`, typed `TierRead`) and writes the keys from it; a file
that has the keys without the list (a hand-written one) gets its tiers from the keys.

Reading a file back (`Report.read(json.load(f))`) and dumping it (`model_dump()`) gives the same JSON,
keys and order: a key the file does not have reads as None and is not written back, one this version
does not know is dropped, so an older report (one without the newer keys) loads and stays as it was.
Building (`Report(...)`, `model_validate`) refuses a key that is not declared; the builder sets every
key. A list entry this version cannot read as its model (an older report's endpoint, a hand-written
point) is kept as the JSON object it is.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from agentx_tui.report._keys import AGENTS_FIGURES, RENAMED_KEYS, parse_tier_key, tier_report_keys
from agentx_tui.snapshot import Figures, FrontierAxis, PointFigures, TierRead
from agentx_tui.sweep import DECODE, NORTH_STAR

JsonObject = dict[str, Any]
# Written after the tiers' flat keys, as they always were: what the run and the writer add at the end.
_LAST_KEYS = ("server_exit_code", "server_log_tail", "checks")


class CheckRow(BaseModel):
    """One `--check` and its outcome (`CheckResult`), as the report file keeps it (`checks`)."""

    model_config = ConfigDict(frozen=True)

    expr: str
    key: str
    op: str
    threshold: float
    value: float | None
    passed: bool
    # Why a failed check's figure is what it is, where the run knows (the sessions' cold first requests);
    # written only when there is one.
    note: str | None = None

    @model_serializer(mode="wrap")
    def _note_only_when_said(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if out.get("note") is None:
            out.pop("note", None)
        return out

    @property
    def shown_value(self) -> str:
        return "n/a" if self.value is None else f"{self.value:.6g}"

    @property
    def verdict_detail(self) -> str:
        """What the summary says after the check: the figure, or that it is unknown (a failure); and why,
        where the run knows."""
        if self.value is None:
            return "the figure is unknown: the run could not measure it, so the check fails"
        return f"measured {self.shown_value}" + (f" — {self.note}" if self.note else "")


Point = Annotated[PointFigures | JsonObject, Field(union_mode="left_to_right")]


class Report(Figures):
    """The run's report: every figure of docs/metrics.md (`Figures`, declared in snapshot/figures.py),
    None where unknown; a sweep's points, frontier and tier reads; the `--check`s."""

    # --- a sweep only (SWEEP_KEYS; the tiers' flat keys follow `sweep_stop_reason`) ---
    points: list[Point] | None = None
    frontier: list[int] | None = None
    tiers: list[TierRead] | None = None
    sweep_stop_reason: str | None = None

    # --- added at the end: a launched server that died under the run, and the `--check`s ---
    server_exit_code: int | None = None
    server_log_tail: list[str] | None = None
    checks: list[CheckRow] | None = None
    # A file's keys of an earlier name (`RENAMED_KEYS`), new name → the name it was read under.
    read_as: dict[str, str] = Field(default_factory=dict, exclude=True)

    @classmethod
    def _absorb(cls, data: dict[str, Any], *, lenient: bool) -> dict[str, Any]:
        """The tiers' flat keys taken out of the input; they make the tiers where the list is missing. In a
        file's read, a key of an earlier name is read under its new one."""
        flat = {k: data.pop(k) for k in list(data) if parse_tier_key(k)}
        if flat and data.get("tiers") is None:
            data["tiers"] = _tiers_of(flat, data.get("frontier_axis"), has_axis="frontier_axis" in data)
        if lenient:
            renamed = {new: old for old, new in RENAMED_KEYS.items() if old in data and new not in data}
            if renamed:
                data = {next((n for n, o in renamed.items() if o == k), k): v for k, v in data.items()}
                data["read_as"] = renamed
        return super()._absorb(data, lenient=lenient)

    def _flat_extra(self, out: dict[str, Any]) -> dict[str, Any]:
        """The tiers written flat after `sweep_stop_reason` too, before the keys added at the end; a key
        read under an earlier name written back under it."""
        last = {k: out.pop(k) for k in _LAST_KEYS if k in out}
        if self.tiers is not None:
            out.update(tier_report_keys(self.tiers, agents_axis=self.frontier_axis))
        if self.read_as:
            out = {self.read_as.get(k, k): v for k, v in out.items()}
        return {**out, **last}

    @property
    def is_sweep(self) -> bool:
        return bool(self.points) or bool(self.tiers)

    def has(self, key: str) -> bool:
        """Whether the report has `key` at all (an older one lacks the newer keys)."""
        return key in self.model_fields_set

    def figure(self, key: str) -> float | None:
        """The number under `key` in the report's JSON (a tier's flat key too); None when it is null,
        missing, not a number (true/false, text) or not finite."""
        value = self.model_dump().get(self.read_as.get(key, key))  # as written: under a key's earlier name
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return None
        return float(value)


def _tiers_of(flat: JsonObject, frontier_axis: Any, *, has_axis: bool) -> list[JsonObject]:
    """`{"total_tokens_per_s_per_gpu_at_100": 9e3, …}` → `[{"tier": 100.0, "total_tokens_per_s_per_gpu": 9e3, …}]`.

    A key with `_decode` after T is a read on decode interactivity; one without, on the North Star in a
    report that names its frontier axis, else (an older report) of no axis. `agents_per_gpu_at_T` (and per MW) goes
    to the read at T on the frontier's axis."""
    plain: FrontierAxis | None = NORTH_STAR if has_axis else None
    agents_axis: FrontierAxis | None = frontier_axis if frontier_axis in (NORTH_STAR, DECODE) else plain
    tiers: dict[tuple[float, FrontierAxis | None], JsonObject] = {}
    for key, value in flat.items():
        parsed = parse_tier_key(key)
        if parsed is None:
            continue
        axis = agents_axis if parsed.figure in AGENTS_FIGURES else DECODE if parsed.decode else plain
        read = tiers.setdefault((parsed.tier, axis), {"tier": parsed.tier})
        if axis is not None:
            read["axis"] = axis
        read[parsed.figure] = value
    return list(tiers.values())

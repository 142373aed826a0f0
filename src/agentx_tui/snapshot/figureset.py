"""How a figure is declared, and the set of figures over one window (snapshot/figures.py declares them).

`figure(...)` makes a pydantic field whose schema extra carries the declaration (unit, which way is better,
a 95% interval or not, compare's role, the summary, the group, the report's places that show it and its
head there); `declared(model)` reads them back as `Figure`s, and the report's keys, CSV columns,
`--check` vocabulary, Markdown, headless and compare rows and tables derive from those (`shown`
lists a place's figures). `FigureSet` writes the figures it holds flat, only those set, each interval after
its figure as `<key>_ci_low`/`<key>_ci_high`, a file's own key order kept when it is read back; building
refuses a key that is not declared, reading a file of another version (`read`) drops the keys it does
not know.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, ClassVar, Literal, Self, get_args

from pydantic import (
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.config import JsonDict
from pydantic.fields import FieldInfo

from agentx_tui.snapshot.base import Frozen

Better = Literal["higher", "lower"]
# How `agentx-tui compare` treats a figure: "gate" (B worse than A by more than the tolerance is a
# regression), "show" (side by side, never a regression), or None (not compared).
CompareRole = Literal["gate", "show"]
GATE: CompareRole = "gate"
SHOW: CompareRole = "show"
# The interval keys a figure with `interval=True` carries, after its own key.
CI_SUFFIXES = ("_ci_low", "_ci_high")
# Units, spelled once (the Markdown report, the headless summary and docs/metrics.md show them).
FRACTION = "fraction 0–1"
TOKENS_PER_S = "tokens/s"
TOKENS_PER_S_PER_GPU = "tokens/s/GPU"
TOKENS_PER_S_PER_USER = "tokens/s/user"
SECONDS = "s"
COUNT = "count"
TOKENS = "tokens"
USD = "USD"
# The report's places that show a chosen few figures (a figure's `shown_in`), each in the declarations'
# order, a table's column headed by the figure's `label`. Every figure is in the report's list of all
# figures besides; the headline figures are `summary`'s, the Tasks section's the "tasks" group's.
Place = Literal["points_speed", "points_use", "summary_table", "cache_servers", "cache_client", "time_split"]
POINTS_SPEED: Place = "points_speed"  # the Markdown's table of how fast each sweep point was (intervals beside)
POINTS_USE: Place = "points_use"  # …of what each point cost and how it used the servers
SUMMARY_TABLE: Place = "summary_table"  # the headless summary's tables of a sweep's points and tier reads
CACHE_SERVERS: Place = "cache_servers"  # the Markdown's Cache section: the servers' figures…
CACHE_CLIENT: Place = "cache_client"  # …then the client's split of its prompts
TIME_SPLIT: Place = "time_split"  # the Markdown's "Where the time went" section


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure's declaration (`figure` makes the field; `declared` reads them back)."""

    key: str
    unit: str  # "" for a word, a flag or a list
    meaning: str  # one line, as docs/metrics.md shows it
    better: Better | None = None
    compare: CompareRole | None = None
    interval: bool = False  # carries a 95% interval: `<key>_ci_low`, `<key>_ci_high`
    summary: bool = False  # printed in the headless summary
    # The part of the report it belongs to: `compare` and the headless summary show one table or block
    # per group, in the declarations' order.
    group: str = "run"
    numeric: bool = False  # a number (not a flag, a word or a list): what a `--check` may name
    shown_in: tuple[Place, ...] = ()  # the report's places that show it (`Place`)
    label: str = ""  # its column's head in a table: a few words, with the unit where the cells need it
    # A plain run with --warmup takes it from its measured window, not the whole run (the client's
    # figures of the requests started after the warm-up, and what follows from their rates).
    warmed: bool = False

    @property
    def head(self) -> str:
        """What heads its column in a table: its label, else its key."""
        return self.label or self.key

    @property
    def interval_keys(self) -> tuple[str, str]:
        low, high = (self.key + suffix for suffix in CI_SUFFIXES)
        return low, high


def figure(
    unit: str,
    meaning: str,
    *,
    better: Better | None = None,
    compare: CompareRole | None = None,
    interval: bool = False,
    summary: bool = False,
    group: str = "run",
    shown_in: Sequence[Place] = (),
    label: str = "",
    warmed: bool = False,
    default: Any = None,
) -> Any:
    """A declared figure's field (None until set: a figure that cannot be known is null, never 0).

    The declaration rides in the field's JSON-schema extras, so `Figures.model_json_schema()` documents
    every key with its unit and meaning too."""
    extra: JsonDict = {
        "unit": unit,
        "better": better,
        "compare": compare,
        "interval": interval,
        "summary": summary,
        "group": group,
        "shown_in": list(shown_in),
        "label": label,
        "warmed": warmed,
    }
    return Field(default, description=meaning, json_schema_extra=extra)


def _in(group: str) -> Callable[..., Any]:
    """`figure` for the figures of one `group` (compare's tables, the summary's blocks)."""
    return functools.partial(figure, group=group)


# The groups beside the run's own, each figure of them declared through its one maker.
task_figure = _in("tasks")
limits_figure = _in("limits")
proxy_figure = _in("proxy")
agentx_figure = _in("agentx")
point_figure = _in("point")
# A tier read's figures read on the sweep's own frontier axis only (the agents per GPU and per MW): their
# report keys carry no axis suffix (report/_keys.py).
AGENTS_GROUP = "agents"
agents_figure = _in(AGENTS_GROUP)


def _is_numeric(info: FieldInfo) -> bool:
    """int or float (optional), never a flag: `bool` is an `int` to Python, not a figure to check."""
    kinds = get_args(info.annotation) or (info.annotation,)
    return any(kind in (int, float) for kind in kinds) and bool not in kinds


@functools.cache
def declared(model: type[Frozen]) -> dict[str, Figure]:
    """The figures `model` declares, by key, in their order (fields made otherwise are left out)."""
    out: dict[str, Figure] = {}
    for key, info in model.model_fields.items():
        extra = info.json_schema_extra
        if not isinstance(extra, dict) or "unit" not in extra:
            continue
        out[key] = Figure(
            key=key,
            unit=str(extra["unit"]),
            meaning=info.description or "",
            better=extra["better"],  # type: ignore[arg-type]
            compare=extra["compare"],  # type: ignore[arg-type]
            interval=bool(extra["interval"]),
            summary=bool(extra["summary"]),
            group=str(extra["group"]),
            numeric=_is_numeric(info),
            shown_in=tuple(extra["shown_in"]),  # type: ignore[arg-type]
            label=str(extra["label"]),
            warmed=bool(extra.get("warmed", False)),
        )
    return out


@functools.cache
def shown(model: type[Frozen], place: Place) -> tuple[Figure, ...]:
    """The figures `model` declares for `place`, in their order: what that table or section shows."""
    return tuple(fig for fig in declared(model).values() if place in fig.shown_in)


Span = tuple[float | None, float | None]  # a 95% interval (low, high); None where unknown


@functools.cache
def _written_rank(model: type[Frozen]) -> dict[str, int]:
    """Each key's place in the JSON this version writes for `model` (its fields, intervals after theirs)."""
    keys: list[str] = []
    figures = declared(model)
    for key in model.model_fields:
        keys.append(key)
        if key in figures and figures[key].interval:
            keys.extend(figures[key].interval_keys)
    leading = getattr(model, "_LEADING", ())
    keys = [*leading, *(k for k in keys if k not in leading)]
    return {k: i for i, k in enumerate(keys)}


class FigureSet(Frozen):
    """Declared figures over one window, written flat (module docstring): only the figures set, each
    interval after its figure, a file's own key order kept when it is read back."""

    # The 95% intervals of the figures declared with `interval=True`, by figure key. In JSON they are
    # the flat `<key>_ci_low` / `<key>_ci_high` keys, not this field.
    intervals: dict[str, Span] = Field(default_factory=dict, exclude=True)
    _key_order: tuple[str, ...] = PrivateAttr(default=())
    # Keys written first, whatever their place among the fields (a point's index and window).
    _LEADING: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def read(cls, data: Any) -> Self:
        """A file's figures, of whatever version: keys this version does not know are dropped (a newer
        report's), keys it lacks stay unset (an older one's) and are not written back."""
        return cls.model_validate(data, context={"lenient": True})

    def __repr_args__(self) -> Any:
        """Only the figures set (a set declares about a hundred): what a failing test needs to read."""
        return [(k, v) for k, v in super().__repr_args__() if k in self.model_fields_set]

    def interval(self, key: str) -> Span:
        """The 95% interval (low, high) of figure `key`; (None, None) when it has none. A key not declared
        with an interval is a programming error, not an unknown figure."""
        if not declared(type(self))[key].interval:
            raise KeyError(f"{key} carries no 95% interval")
        return self.intervals.get(key, (None, None))

    def set_values(self) -> dict[str, Any]:
        """The fields this set has (as Python values, its intervals included), in their order: for a copy
        or a set of another kind to take over."""
        values = {k: getattr(self, k) for k in type(self).model_fields if k in self.model_fields_set}
        return {**values, "intervals": dict(self.intervals)}

    def updated(self, **values: Any) -> Self:
        """A copy with `values` set, validated as when building: a key not declared is refused."""
        intervals = {**self.intervals, **values.pop("intervals", {})}
        return type(self).model_validate({**self.set_values(), **values, "intervals": intervals})

    @classmethod
    def _absorb(cls, data: dict[str, Any], *, lenient: bool) -> dict[str, Any]:
        """The flat input's interval keys into `intervals`; in a lenient read, unknown keys dropped.
        A subclass with flat keys of its own (the report's tier keys) takes them here too."""
        figures = declared(cls)
        intervals = dict(data.pop("intervals", None) or {})
        for key, fig in figures.items():
            if not fig.interval:
                continue
            low_key, high_key = fig.interval_keys
            if low_key in data or high_key in data:
                low, high = data.pop(low_key, None), data.pop(high_key, None)
                if low is not None or high is not None:
                    intervals[key] = (low, high)
        if lenient:
            data = {k: v for k, v in data.items() if k in cls.model_fields}
        data["intervals"] = intervals
        return data

    @model_validator(mode="wrap")
    @classmethod
    def _read_flat(cls, data: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        if not isinstance(data, dict):
            return handler(data)
        lenient = bool(info.context and info.context.get("lenient"))
        order = tuple(data)
        model = handler(cls._absorb(dict(data), lenient=lenient))
        if lenient and not cls._in_written_order(order):  # a file of another order: written back in its own
            model._key_order = order
        return model

    @classmethod
    def _in_written_order(cls, keys: tuple[str, ...]) -> bool:
        """Whether `keys` come in the order this version writes them (the usual case: nothing to keep)."""
        rank = _written_rank(cls)
        ranks = [rank[k] for k in keys if k in rank]
        return all(a <= b for a, b in pairwise(ranks))

    def _flat_extra(self, out: dict[str, Any]) -> dict[str, Any]:
        """What a subclass writes besides its declared fields (the report: its tiers' flat keys)."""
        return out

    @model_serializer(mode="wrap")
    def _write_flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        raw = handler(self)
        figures = declared(type(self))
        out: dict[str, Any] = {}
        for key in type(self).model_fields:
            if key not in self.model_fields_set or key not in raw:
                continue
            out[key] = raw[key]
            fig = figures.get(key)
            if fig is not None and fig.interval:
                low, high = self.intervals.get(key, (None, None))
                out.update(zip(fig.interval_keys, (low, high), strict=True))
        out = self._flat_extra(out)
        first = self._key_order or self._LEADING
        if first:
            kept = {k: out[k] for k in first if k in out}
            out = {**kept, **{k: v for k, v in out.items() if k not in kept}}
        return out

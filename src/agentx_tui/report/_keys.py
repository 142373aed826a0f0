"""The report's keys (docs/metrics.md, a contract), derived from the figures' declarations.

Every key is a figure declared once in snapshot/figures.py (`Figures`, for a sweep's tiers `TierRead`):
`REPORT_KEYS` lists them in the report's order, each figure with a 95% interval followed by its
`_ci_low`/`_ci_high`; `NUMERIC_KEYS` are those a `--check` may name; `unit` gives a key's unit as the
Markdown report and the headless summary show it. A sweep adds `SWEEP_KEYS` and, per tier, the flat
keys spelled here (`tier_report_keys` writes them, `parse_tier_key` takes one apart).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agentx_tui.snapshot import (
    AGENTS_GROUP,
    CI_SUFFIXES,
    Figure,
    Figures,
    FrontierAxis,
    PointFigures,
    TierRead,
    declared,
)
from agentx_tui.sweep import DECODE, NORTH_STAR, tier_suffix

FIGURES: dict[str, Figure] = declared(Figures)
# Keys renamed since a release, old name → new (`sessions_started` always counted the sessions that
# ended). A report of before is read under the new name and written back under its own (report/_model.py);
# `--check` and `unit` know the old name too.
RENAMED_KEYS = {"sessions_started": "sessions_ended"}


def _with_intervals(figures: dict[str, Figure], *, numeric_only: bool = False) -> tuple[str, ...]:
    keys: list[str] = []
    for key, fig in figures.items():
        if numeric_only and not fig.numeric:
            continue
        keys.append(key)
        if fig.interval:
            keys.extend(fig.interval_keys)
    return tuple(keys)


REPORT_KEYS: tuple[str, ...] = _with_intervals(FIGURES)
# Keys whose value is a number (or null): the only ones a --check may name (a tier's too, `is_tier_key`).
NUMERIC_KEYS: tuple[str, ...] = _with_intervals(FIGURES, numeric_only=True)
# A sweep adds these (and, for every tier T, the flat keys of `tier_report_keys`: on both axes, and the
# agents per GPU on the frontier's).
SWEEP_KEYS: tuple[str, ...] = ("points", "frontier", "tiers", "sweep_stop_reason")
# The figures behind an interval key (`total_tokens_per_s_per_gpu_ci_low` → its figure).
_INTERVAL_OF = {ci: fig for fig in FIGURES.values() if fig.interval for ci in fig.interval_keys}
# A tier read's figures (`TierRead`): each is a flat key per tier, `<figure>_at_T`.
TIER_FIGURES: dict[str, Figure] = declared(TierRead)


# A tier's report keys end in the axis's suffix: ``total_tokens_per_s_per_gpu_at_100`` on the North
# Star, ``total_tokens_per_s_per_gpu_at_100_decode`` on decode interactivity (docs/metrics.md).
TIER_AXIS_SUFFIX: dict[FrontierAxis, str] = {NORTH_STAR: "", DECODE: "_decode"}

# The reads on either axis: throughput per GPU (with its 95% interval), tokens per dollar, USD per million
# tokens. The agents per GPU and per megawatt at T (docs/sweeps.md, their group) are read on the sweep's own
# axis only, so their keys have no axis suffix.
TIER_KEY_PREFIXES = tuple(f"{key}_at_" for key, fig in TIER_FIGURES.items() if fig.group != AGENTS_GROUP)
AGENTS_FIGURES = frozenset(key for key, fig in TIER_FIGURES.items() if fig.group == AGENTS_GROUP)
AGENTS_KEY_PREFIXES = tuple(f"{key}_at_" for key in TIER_FIGURES if key in AGENTS_FIGURES)


def tier_report_keys(tiers: Sequence[TierRead], *, agents_axis: FrontierAxis | None = None) -> dict[str, float | None]:
    """The flat report keys of docs/metrics.md for each tier, so `--check 'tokens_per_dollar_total_at_100 >= 1e9'`
    works: each figure `TierRead` declares as ``<figure>_at_T``, in their order, tier by tier in the given
    order: ``total_tokens_per_s_per_gpu_at_T`` (and its 95% interval, ``…_at_T_ci_low``/``_ci_high``),
    ``tokens_per_dollar_total_at_T``, ``usd_per_million_total_tokens_at_T``.
    A read on decode interactivity has T followed by ``_decode`` (``…_at_100_decode``, ``…_at_100_decode_ci_low``;
    `TIER_AXIS_SUFFIX`); one on the North Star, or of an older recording (no axis), none. A read on
    `agents_axis` (the sweep's frontier axis) adds ``agents_per_gpu_at_T`` and ``agents_per_mw_at_T``
    after its own keys."""
    out: dict[str, float | None] = {}
    for read in tiers:
        t = tier_suffix(read.tier) + (TIER_AXIS_SUFFIX[read.axis] if read.axis is not None else "")
        on_agents_axis = agents_axis is not None and read.axis == agents_axis
        values = read.model_dump()  # without a figure newer than the report it was read from: none written back
        for key, fig in TIER_FIGURES.items():
            if key not in values:
                continue
            if key in AGENTS_FIGURES:
                if on_agents_axis:
                    out[f"{key}_at_{tier_suffix(read.tier)}"] = values[key]
                continue
            out[f"{key}_at_{t}"] = values[key]
            for suffix in CI_SUFFIXES if fig.interval else ():
                out[f"{key}_at_{t}{suffix}"] = values[key + suffix]
    return out


@dataclass(frozen=True)
class TierKey:
    """A tier's flat report key, taken apart: `figure` is the `TierRead` field it holds."""

    figure: str  # total_tokens_per_s_per_gpu(_ci_low/_ci_high), tokens_per_dollar_total, …, agents_per_mw
    tier: float
    decode: bool  # the key ends in ``_decode``: read on decode interactivity


def parse_tier_key(key: str) -> TierKey | None:
    """`total_tokens_per_s_per_gpu_at_100_decode_ci_low` → (total_tokens_per_s_per_gpu_ci_low, 100.0,
    decode); `agents_per_gpu_at_37.5` → (agents_per_gpu, 37.5, no suffix); None for any other key (T
    not a finite number included)."""
    for prefix in (*TIER_KEY_PREFIXES, *AGENTS_KEY_PREFIXES):
        if not key.startswith(prefix):
            continue
        rest, name = key.removeprefix(prefix), prefix.removesuffix("_at_")
        if TIER_FIGURES[name].interval:  # only throughput reads have an interval
            for suffix in CI_SUFFIXES:
                if rest.endswith(suffix):
                    rest, name = rest.removesuffix(suffix), name + suffix
                    break
        decode = prefix not in AGENTS_KEY_PREFIXES and rest.endswith(TIER_AXIS_SUFFIX[DECODE])
        rest = rest.removesuffix(TIER_AXIS_SUFFIX[DECODE]) if decode else rest
        try:
            tier = float(rest)
        except ValueError:
            return None
        return TierKey(name, tier, decode) if math.isfinite(tier) else None
    return None


def is_tier_key(key: str) -> bool:
    """`total_tokens_per_s_per_gpu_at_100` and its kin: a sweep's read at an interactivity tier (and the
    95% interval of the throughput read, `…_at_100_ci_low` / `_ci_high`), on the North Star or, with
    `_decode` after T, on decode interactivity; and `agents_per_gpu_at_100`, `agents_per_mw_at_100`."""
    return parse_tier_key(key) is not None


def _without_ci(name: str) -> str:
    for suffix in CI_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def unit(key: str) -> str:
    """The unit of a report key, as its declaration gives it ("" for a word, a flag or a list)."""
    tier = parse_tier_key(key)
    key = RENAMED_KEYS.get(key, key)
    fig = TIER_FIGURES.get(_without_ci(tier.figure)) if tier else FIGURES.get(key) or _INTERVAL_OF.get(key)
    return fig.unit if fig is not None else ""


def tier_of(key: str, prefix: str) -> float | None:
    """The tier T of a report key `prefix` + T, on either axis (`…_at_100`, `…_at_100_decode` → 100.0);
    None for any other key (an interval's `…_at_100_ci_low` included)."""
    parsed = parse_tier_key(key) if key.startswith(prefix) else None
    if parsed is None or parsed.figure != prefix.removesuffix("_at_"):
        return None
    return parsed.tier


# docs/metrics.md's table of report keys sits between these lines, written by `key_table` (a test holds
# the page to the declarations; scripts/update-key-table.py rewrites it).
KEY_TABLE_START = "<!-- report keys: written from the declarations (scripts/update-key-table.py) -->"
KEY_TABLE_END = "<!-- end of report keys -->"


def _rows(figures: dict[str, Figure], *, name: str = "`{key}`") -> list[str]:
    rows = []
    for key, fig in figures.items():
        shown = name.format(key=key)
        if fig.interval:
            shown += ", `_ci_low`, `_ci_high`"
        cells = (shown, fig.unit or "—", fig.better or "—", fig.meaning)
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return rows


def key_table() -> str:
    """The report's keys as docs/metrics.md shows them: every declared figure with its unit, the way
    that is better, and its meaning; then a sweep point's own figures and a tier's flat keys."""
    head = ["| key | unit | better | meaning |", "|---|---|---|---|"]
    point = {k: f for k, f in declared(PointFigures).items() if k not in FIGURES}
    tiers = {k: f for k, f in TIER_FIGURES.items()}
    return "\n".join(
        [
            *head,
            *_rows(FIGURES),
            "",
            "A sweep point (`points`) has the figures above over its window, and:",
            "",
            *head,
            *_rows(point),
            "",
            "A sweep's tier T (`tiers`, and flat; `_decode` after T for a read on decode interactivity):",
            "",
            *head,
            *_rows(tiers, name="`{key}_at_T`"),
        ]
    )


def keys_listing() -> str:
    """`agentx-tui keys`: every report key with its unit and meaning, from the declarations, the figures a
    `--check` may name marked; then a sweep's point figures and its tier keys (T the tier)."""

    def rows(figures: dict[str, Figure], *, name: str = "{key}", checkable: bool = True) -> list[tuple[str, str, str]]:
        out = []
        for key, fig in figures.items():
            mark = "* " if checkable and fig.numeric else "  "
            out.append((mark + name.format(key=key), fig.unit or "—", fig.meaning))
            if fig.interval:  # a tier's: of its throughput read only (`parse_tier_key`)
                low = name.format(key=key) + CI_SUFFIXES[0]
                out.append((mark + f"{low}, {CI_SUFFIXES[1]}", fig.unit or "—", f"the 95% interval of {key}"))
        return out

    def table(found: list[tuple[str, str, str]]) -> list[str]:
        width = max(len(k) for k, _, _ in found)
        units = max(len(u) for _, u, _ in found)
        return [f"{k.ljust(width)}  {u.ljust(units)}  {m}" for k, u, m in found]

    point = {k: f for k, f in declared(PointFigures).items() if k not in FIGURES}
    renamed = [f"  {old}: the earlier name of {new} (still read, and checked)" for old, new in RENAMED_KEYS.items()]
    return "\n".join(
        [
            "The report's keys (--report NAME.json; docs/metrics.md gives each one's formula). *: a number a",
            "--check may name, e.g. --check 'ttft_p90_s <= 2'. A figure that cannot be known is null, and fails",
            "a check.",
            "",
            *table(rows(FIGURES)),
            "",
            "Renamed keys:",
            *renamed,
            "",
            "A sweep's points (`points`) have the figures above over their window, and:",
            "",
            *table(rows(point, checkable=False)),
            "",
            "A sweep's tier T (flat keys, e.g. total_tokens_per_s_per_gpu_at_100; _decode after T for a read on",
            "decode interactivity, e.g. total_tokens_per_s_per_gpu_at_100_decode; the agents' on the frontier's",
            "own axis only, no _decode):",
            "",
            *table(rows(TIER_FIGURES, name="{key}_at_T")),
        ]
    )

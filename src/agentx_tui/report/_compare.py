"""Comparing two reports (`agentx-tui compare A.json B.json [--tolerance F]`, docs/architecture.md): B/A
per figure and per tier, and which figures regressed (the command line: _compare_cli.py; the text:
_compare_text.py).

Gated (higher is better): throughput (total and output, per GPU too), interactivity p50/p90 (decode) and
the North Star's p50/p75/p90 (E2E-normalized interactivity, docs/metrics.md), tokens per dollar; (lower is
better): USD per million tokens. Shown, never gated: TTFT and ITL p90, prefix-cache hit
rates, error rate; and, in words, whether each run is AgentX-valid and why not. How close to the limit
(docs/metrics.md, "Roofline", "Energy"): MFU gates (higher is better) and joules per token (lower is
better); MBU, the mean power per GPU, joules per output token and per task and tokens per joule are
shown. A figure null on either side is n/a and gates nothing; the output says which.

Per task (docs/metrics.md, "Tasks"; a table of their own): tasks per hour per GPU (higher is better), task
wall time p50/p90 and USD per task (lower is better) gate with the headline figures; tasks completed,
the model share, calls and tokens per task are context, shown and never gated (a change there is what
the workload did, not better or worse). No task figure carries a 95% interval yet (not the run's, not a
sweep point's): the tolerance alone decides, and the output says so.

For two sweeps the tiers gate (throughput per GPU, tokens per dollar and USD per million tokens at each
interactivity tier, on the North Star and on decode interactivity, docs/sweeps.md): that is the
methodology's like-for-like comparison. The agents per GPU (and per MW) at each tier are shown beside
them, not gated: they carry no 95% interval yet, and two sweeps of one configuration differ in them by more
than the tolerance often enough (6.5% once, in the same-configuration sweeps of tests/e2e) that a gate
on them would flap. The sweeps' whole-run
figures average every point's load, so they differ whenever the two sweeps' schedules do (an auto sweep
that stopped one point earlier); they are shown for context, and gate only when no tier is known on both
sides. In every other case (two single runs, or one of each) the headline figures gate.

Noise (docs/sweeps.md, "compare as a CI gate"): a gated figure that carries a 95% interval in both
reports regresses only when B is worse by more than the tolerance *and* the two intervals do not
overlap; overlapping intervals are "within noise", whatever the change. A figure that is the
throughput times a price (tokens per dollar, USD per million tokens, at a tier or over the run) or
total rather than per GPU carries the throughput's interval, scaled to its own value. A figure with
an interval on one side only, or on neither (a plain run without --precision, sweep points too short
for one, reports from before the trust work), keeps the plain tolerance rule and says so on its row
("no interval: noise unknown"): nothing tells its noise, so a change beyond the tolerance regresses
whatever its cause, and the closing lines say which regressions were judged that way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentx_tui.report._keys import (
    AGENTS_FIGURES,
    FIGURES,
    TIER_AXIS_SUFFIX,
    TIER_FIGURES,
    parse_tier_key,
)
from agentx_tui.report._model import Report
from agentx_tui.snapshot import COUNT, FRACTION, GATE, SECONDS, USD, Figure
from agentx_tui.sweep import DECODE, tier_suffix
from agentx_tui.units import outputs_scaled

EXIT_SAME = 0
EXIT_REGRESSED = 1
DEFAULT_TOLERANCE = 0.05
_SLACK = 1e-9  # "more than F": a change of exactly F (give or take float rounding) passes

Better = Literal["higher", "lower"] | None  # None: shown, not gated
Kind = Literal["rate", "fraction", "seconds", "tokens_per_dollar", "usd", "count"]


@dataclass(frozen=True)
class Compared:
    """A figure as compare reads it: gated ones carry the way that is better, shown ones none."""

    key: str
    better: Better
    kind: Kind


def _kind(unit: str) -> Kind:
    """How compare writes a figure of `unit`."""
    if unit == FRACTION:
        return "fraction"
    if unit == SECONDS:
        return "seconds"
    if unit.startswith(USD):
        return "usd"
    if unit == "tokens/USD":
        return "tokens_per_dollar"
    if unit in (COUNT, "calls/task", "tokens/task"):
        return "count"
    return "rate"


def _compared(figure: Figure) -> Compared:
    return Compared(figure.key, figure.better if figure.compare == GATE else None, _kind(figure.unit))


# The declarations say which figures compare shows and gates (snapshot/figures.py): the tasks' in a table
# of their own, every other group's with the headline figures.
HEADLINE = tuple(_compared(f) for f in FIGURES.values() if f.compare is not None and f.group != "tasks" and f.numeric)
TASKS = tuple(_compared(f) for f in FIGURES.values() if f.compare is not None and f.group == "tasks" and f.numeric)
# A flag or a list (AgentX validity and its reasons): shown side by side in words, never gated.
WORDS = tuple(key for key, f in FIGURES.items() if f.compare is not None and not f.numeric)
# A sweep's tier reads (`TierRead`), each with the way that is better: the reads on either axis gate when the
# tiers do, the agents' are shown beside them, never gated (module docstring).
_TIER_READS = tuple(Compared(k, f.better, _kind(f.unit)) for k, f in TIER_FIGURES.items() if k not in AGENTS_FIGURES)
_AGENTS_READS = tuple(Compared(k, f.better, _kind(f.unit)) for k, f in TIER_FIGURES.items() if k in AGENTS_FIGURES)
# The tier keys of the throughput read and of those that carry its interval (`_carrier`).
_TPUT_AT = "total_tokens_per_s_per_gpu_at_"
_TPD_AT = "tokens_per_dollar_total_at_"
_USD_AT = "usd_per_million_total_tokens_at_"


# --- comparing --------------------------------------------------------------------------------------


Span = tuple[float, float]  # a 95% interval (low, high)


@dataclass(frozen=True)
class Row:
    key: str
    kind: Kind
    better: Better
    a: float | None
    b: float | None
    gated: bool  # counts towards the exit code (known on both sides, in the gated section)
    worse_by: float | None  # relative change in B's disfavour (negative: B is better); None when n/a
    a_ci: Span | None = None
    b_ci: Span | None = None

    @property
    def ratio(self) -> float | None:
        return None if self.a is None or self.b is None or self.a == 0 else self.b / self.a

    @property
    def noise_known(self) -> bool:
        """Both sides carry a 95% interval: whether a difference is noise can be told."""
        return self.a_ci is not None and self.b_ci is not None

    @property
    def noise(self) -> bool:
        """Both sides carry an interval and the two overlap: the difference is within the noise."""
        if self.a_ci is None or self.b_ci is None:
            return False
        return self.a_ci[0] <= self.b_ci[1] and self.b_ci[0] <= self.a_ci[1]

    @property
    def known(self) -> bool:
        """A value on both sides: B/A can be read."""
        return self.a is not None and self.b is not None

    def regressed(self, tolerance: float) -> bool:
        return self.gated and (self.worse_by or 0.0) > tolerance + _SLACK and not self.noise


@dataclass(frozen=True)
class Comparison:
    tolerance: float
    headline: tuple[Row, ...]
    tiers: tuple[Row, ...]
    gate: Literal["headline", "tiers"]
    sweeps: tuple[bool, bool]
    about: tuple[str, str]  # model, workload, users or points, duration of A and of B
    client_bound: tuple[bool, bool] = (False, False)  # the report says its load generator was saturated
    tasks: tuple[Row, ...] = ()  # per task, over the whole run: gated with the headline figures
    # A sweep of before the frontier axis (no `frontier_axis` key) beside one with it: its tiers, read on
    # decode interactivity, are compared as `…_at_T_decode`.
    decode_only: tuple[bool, bool] = (False, False)
    words: tuple[tuple[str, Any, Any], ...] = ()  # (key, A's value, B's value) of the figures shown in words
    # Two sweeps of before the frontier axis: their tier keys without a suffix were read on decode interactivity.
    tiers_on_decode: bool = False

    @property
    def rows(self) -> tuple[Row, ...]:
        return self.headline + self.tasks + self.tiers

    @property
    def regressions(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.regressed(self.tolerance))

    @property
    def within_noise(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.gated and r.noise)

    @property
    def not_gated_na(self) -> tuple[Row, ...]:
        """Figures of the gated section that gate nothing because a side has no value (a figure shown
        beside the gated ones, known on both sides, is not one of them)."""
        gated_section = self.headline + self.tasks if self.gate == "headline" else self.tiers
        return tuple(r for r in gated_section if r.better is not None and not r.known)

    @property
    def regressed_noise_unknown(self) -> tuple[Row, ...]:
        """The regressions judged by the tolerance alone: no 95% interval on both sides tells their noise."""
        return tuple(r for r in self.regressions if not r.noise_known)


def _tiers(report: Report) -> set[tuple[str, float]]:
    """The report's tiers as (axis suffix of their keys, T): `""` on the North Star (or, in a report of
    before the axis was chosen, decode), `"_decode"` on decode interactivity."""
    return {
        (TIER_AXIS_SUFFIX[t.axis] if t.axis is not None else "", t.tier)
        for t in report.tiers or ()
        if math.isfinite(t.tier)
    }


def _agents_tiers(report: Report, prefix: str) -> set[float]:
    """The tiers T the report has `prefix` + T for (`agents_per_gpu_at_`, `agents_per_mw_at_`: a report of
    before them has none)."""
    return {parsed.tier for k in report.model_dump() if k.startswith(prefix) and (parsed := parse_tier_key(k))}


_PER_GPU = "total_tokens_per_s_per_gpu"
# Figures that are the run's throughput per GPU times a constant (GPUs, a price) or its inverse: they
# carry its interval, scaled to their own value (+1 proportional, -1 inverse).
_CARRIED_RUN = {"total_tokens_per_s": (_PER_GPU, 1), "tokens_per_dollar_total": (_PER_GPU, 1)}


def _carrier(key: str) -> tuple[str, int] | None:
    """The figure whose interval `key` carries, and how (proportional or inverse)."""
    if key in _CARRIED_RUN:
        return _CARRIED_RUN[key]
    if key.startswith(_TPD_AT):
        return f"{_TPUT_AT}{key.removeprefix(_TPD_AT)}", 1
    if key.startswith(_USD_AT):
        return f"{_TPUT_AT}{key.removeprefix(_USD_AT)}", -1
    return None


def _interval(report: Report, key: str) -> Span | None:
    """The figure's 95% interval in `report`: its own `_ci_low`/`_ci_high`, or the throughput's it carries."""
    low, high = report.figure(f"{key}_ci_low"), report.figure(f"{key}_ci_high")
    if low is not None and high is not None:
        return (low, high)
    carrier = _carrier(key)
    value = report.figure(key)
    if carrier is None or value is None:
        return None
    base_key, power = carrier
    base, span = report.figure(base_key), _interval(report, base_key)
    if base is None or span is None or not base > 0 or not span[0] > 0:
        return None
    if power > 0:
        return (value * span[0] / base, value * span[1] / base)
    return (value * base / span[1], value * base / span[0])


def _row(a: Report, b: Report, key: str, better: Better, kind: Kind, gating: bool) -> Row:
    va, vb = a.figure(key), b.figure(key)
    worse_by = None
    if va is not None and vb is not None and better is not None:
        if va != 0:
            change = (vb - va) / abs(va)
            worse_by = -change if better == "higher" else change
        elif vb == 0:  # nothing on both sides (no task completed in either): no change, not n/a
            worse_by = 0.0
    gated = gating and better is not None and worse_by is not None
    return Row(key, kind, better, va, vb, gated, worse_by, _interval(a, key), _interval(b, key))


def compare_reports(a: Report, b: Report, *, tolerance: float = DEFAULT_TOLERANCE) -> Comparison:
    """B against A, figure by figure (the pure part of `compare_main`)."""
    sweeps = (a.is_sweep, b.is_sweep)
    decode_only = (False, False)
    if all(sweeps) and a.has("frontier_axis") != b.has("frontier_axis"):
        decode_only = (not a.has("frontier_axis"), not b.has("frontier_axis"))
        a, b = (_on_decode(r) if older else r for r, older in zip((a, b), decode_only, strict=True))
    tiers = sorted(_tiers(a) | _tiers(b))  # the North Star's (no suffix) first, then decode's
    agents = [(f, sorted(_agents_tiers(a, f"{f.key}_at_") | _agents_tiers(b, f"{f.key}_at_"))) for f in _AGENTS_READS]

    def tier_rows(gating: bool) -> tuple[Row, ...]:
        reads = tuple(
            _row(a, b, f"{f.key}_at_{tier_suffix(t)}{axis}", f.better, f.kind, gating)
            for axis, t in tiers
            for f in _TIER_READS
        )
        # Shown, never gated: no interval tells their noise from a change (module docstring).
        return reads + tuple(
            _row(a, b, f"{f.key}_at_{tier_suffix(t)}", f.better, f.kind, False) for f, ts in agents for t in ts
        )

    def headline_rows(figures: Sequence[Compared], gating: bool) -> tuple[Row, ...]:
        return tuple(
            _row(a, b, f.key, f.better, f.kind, gating)
            for f in figures
            if a.has(f.key) or b.has(f.key)  # older reports lack the newer keys: no row of n/a for them
        )

    gate: Literal["headline", "tiers"] = "headline"
    if all(sweeps) and any(r.gated for r in tier_rows(True)):
        gate = "tiers"
    about = (_describe(a), _describe(b))
    bound = (a.client_saturated is True, b.client_saturated is True)
    return Comparison(
        tolerance,
        headline_rows(HEADLINE, gate == "headline"),
        tier_rows(gate == "tiers"),
        gate,
        sweeps,
        about,
        bound,
        headline_rows(TASKS, gate == "headline"),
        decode_only,
        tuple((key, getattr(a, key), getattr(b, key)) for key in WORDS if a.has(key) or b.has(key)),
        all(sweeps) and not a.has("frontier_axis") and not b.has("frontier_axis"),
    )


def _on_decode(report: Report) -> Report:
    """A sweep of before the frontier axis, its tier reads (on decode interactivity) named as such."""
    tiers = [t.model_copy(update={"axis": DECODE}) for t in report.tiers or ()]
    return report.model_copy(update={"tiers": tiers})


def _describe(report: Report) -> str:
    parts = [text for text in (report.model, report.workload) if text]
    if outputs := outputs_scaled(report.output_scale):
        parts.append(outputs)
    if report.points:
        n = len(report.points)
        parts.append(f"sweep of {n} point{'s' if n != 1 else ''}")
    elif report.users is not None:
        parts.append(f"{report.users} users")
    duration = report.figure("duration_s")
    if duration is not None:
        parts.append(f"{duration:.0f} s")
    if report.partial:
        parts.append("PARTIAL")
    return " · ".join(parts) or "(no description)"

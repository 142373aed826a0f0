"""`agentx-tui compare A.json B.json [--tolerance F]` (docs/architecture.md): two reports side by side, B/A per figure
and per tier, exit 1 when B is worse than A by more than F.

Gated (higher is better): throughput (total and output, per GPU too), interactivity p50/p90 (decode) and
the North Star's p50/p75/p90 (E2E-normalized interactivity, docs/metrics.md), tokens per dollar; (lower is
better): USD per million tokens. Shown, never gated: TTFT and ITL p90, prefix-cache hit
rates, error rate. A figure null on either side is n/a and gates nothing; the output says which.

Per task (docs/metrics.md, "Tasks"; a table of their own): tasks per hour per GPU (higher is better), task
wall time p50/p90 and USD per task (lower is better) gate with the headline figures; tasks completed,
the model share, calls and tokens per task are context, shown and never gated (a change there is what
the workload did, not better or worse). No task figure carries a 95% interval yet (not the run's, not a
sweep point's): the tolerance alone decides, and the output says so.

For two sweeps the tiers gate (throughput per GPU, tokens per dollar and USD per million tokens at each
interactivity tier, on the North Star and on decode interactivity, docs/sweeps.md): that is the
methodology's like-for-like comparison. The agents per GPU at each tier are shown beside them, not
gated: they carry no 95% interval yet, and two sweeps of one configuration differ in them by more
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
an interval on one side only, or on neither (reports from before the trust work), keeps the plain
tolerance rule: nothing tells its noise on the other side.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from agentx_tui.args import Parser
from agentx_tui.errors import UsageError
from agentx_tui.report._format import NA
from agentx_tui.report._model import Report
from agentx_tui.sweep import AGENTS_KEY_PREFIX, DECODE, TIER_AXIS_SUFFIX, TIER_KEY_PREFIXES, parse_tier_key, tier_suffix
from agentx_tui.terminal import wants_color
from agentx_tui.units import compact, outputs_scaled

EXIT_SAME = 0
EXIT_REGRESSED = 1
DEFAULT_TOLERANCE = 0.05
_SLACK = 1e-9  # "more than F": a change of exactly F (give or take float rounding) passes

Better = Literal["higher", "lower"] | None  # None: shown, not gated
Kind = Literal["rate", "fraction", "seconds", "tokens_per_dollar", "usd", "count"]


@dataclass(frozen=True)
class Figure:
    key: str
    better: Better
    kind: Kind


HEADLINE = (
    Figure("total_tokens_per_s", "higher", "rate"),
    Figure("total_tokens_per_s_per_gpu", "higher", "rate"),
    Figure("output_tokens_per_s", "higher", "rate"),
    Figure("output_tokens_per_s_per_gpu", "higher", "rate"),
    Figure("interactivity_p50_tokens_per_s", "higher", "rate"),
    Figure("interactivity_p90_tokens_per_s", "higher", "rate"),
    Figure("e2e_interactivity_p50_tokens_per_s", "higher", "rate"),
    Figure("e2e_interactivity_p75_tokens_per_s", "higher", "rate"),
    Figure("e2e_interactivity_p90_tokens_per_s", "higher", "rate"),
    Figure("ttft_p90_s", None, "seconds"),
    Figure("itl_p90_s", None, "seconds"),
    Figure("prefix_cache_hit_rate_server", None, "fraction"),
    Figure("prefix_cache_hit_rate_client", None, "fraction"),
    Figure("tokens_per_dollar_total", "higher", "tokens_per_dollar"),
    Figure("tokens_per_dollar_output", "higher", "tokens_per_dollar"),
    Figure("usd_per_million_output_tokens", "lower", "usd"),
    Figure("error_rate", None, "fraction"),
)
TASKS = (
    Figure("tasks_completed", None, "count"),
    Figure("tasks_per_hour_per_gpu", "higher", "rate"),
    Figure("task_s_p50", "lower", "seconds"),
    Figure("task_s_p90", "lower", "seconds"),
    Figure("usd_per_task", "lower", "usd"),
    Figure("task_model_share", None, "fraction"),
    Figure("steps_per_task_mean", None, "count"),
    Figure("tokens_per_task_mean", None, "count"),
    Figure("output_tokens_per_task_mean", None, "count"),
)
_TPUT_AT, _TPD_AT, _USD_AT = TIER_KEY_PREFIXES  # the sweep's own names for the tier keys
_TIER_FIGURES: tuple[tuple[str, Better, Kind], ...] = (
    (_TPUT_AT, "higher", "rate"),
    (_TPD_AT, "higher", "tokens_per_dollar"),
    (_USD_AT, "lower", "usd"),
)


# --- the command line -------------------------------------------------------------------------------


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative: give a fraction such as 0.05 for 5%")
    return value


def build_compare_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="agentx-tui compare",
        description="Two reports (single runs or sweeps) side by side with B/A per figure and per tier. "
        "Exit 1 when B is worse than A by more than the tolerance on any throughput, interactivity or "
        "tokens-per-dollar figure (or costs more per million tokens), or on tasks per hour per GPU, task "
        "time or USD per task; 0 otherwise; 2 for a bad file.",
    )
    p.add_argument("a", type=Path, metavar="A.json", help="the reference report (--report NAME.json)")
    p.add_argument("b", type=Path, metavar="B.json", help="the report compared with it")
    p.add_argument(
        "--tolerance",
        type=_tolerance,
        default=DEFAULT_TOLERANCE,
        metavar="F",
        help=f"how much worse B may be, as a fraction (default {DEFAULT_TOLERANCE:g} = 5%%)",
    )
    return p


def compare_main(argv: Sequence[str]) -> int:
    """`agentx-tui compare`: print the comparison; 0 when B is no worse than A beyond the tolerance, 1 when
    it is. A bad flag or file raises `UsageError` (exit 2, one sentence)."""
    args = build_compare_parser().parse_args(list(argv))
    a, b = load_report(args.a, "A"), load_report(args.b, "B")
    comparison = compare_reports(a, b, tolerance=args.tolerance)
    colour = wants_color(sys.stdout)
    print(render_comparison(comparison, a_name=str(args.a), b_name=str(args.b), colour=colour))
    return EXIT_REGRESSED if comparison.regressions else EXIT_SAME


# --- reading the files ------------------------------------------------------------------------------

_HINT = "Compare reads the JSON reports that `agentx-tui --report NAME.json` writes."


def load_report(path: Path, side: str) -> Report:
    """The report in `path` (an older one too: the keys it lacks are None), or a `UsageError` saying in
    one sentence why it is not one."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path} ({side}) does not exist.", _HINT) from None
    except IsADirectoryError:
        raise UsageError(f"{path} ({side}) is a folder, not a report.", _HINT) from None
    except OSError as exc:
        raise UsageError(f"{path} ({side}) could not be read: {exc.strerror or exc}.") from exc
    try:
        report = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        if _is_recording(data):
            raise UsageError(f"{path} ({side}) is a recording (--record), not a report.", _HINT) from None
        raise UsageError(f"{path} ({side}) is not JSON.", _HINT) from None
    if not isinstance(report, dict) or "agentx_version" not in report or "duration_s" not in report:
        raise UsageError(
            f"{path} ({side}) is JSON but not an agentx-tui report (it lacks agentx_version and duration_s).", _HINT
        )
    try:
        return Report.model_validate(report)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the report"
        raise UsageError(f"{path} ({side}) is not a valid report: {where}: {first['msg']}.", _HINT) from None


def _is_recording(data: bytes) -> bool:
    """A recording is JSON lines, one Snapshot each: its first line has `seq` and `schema_version`."""
    try:
        first = json.loads(data.split(b"\n", 1)[0])
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(first, dict) and "seq" in first and "schema_version" in first


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
    def noise(self) -> bool:
        """Both sides carry an interval and the two overlap: the difference is within the noise."""
        if self.a_ci is None or self.b_ci is None:
            return False
        return self.a_ci[0] <= self.b_ci[1] and self.b_ci[0] <= self.a_ci[1]

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
        """Figures of the gated section that gate nothing because a side has no value."""
        gated_section = self.headline + self.tasks if self.gate == "headline" else self.tiers
        return tuple(r for r in gated_section if r.better is not None and not r.gated)


def _tiers(report: Report) -> set[tuple[str, float]]:
    """The report's tiers as (axis suffix of their keys, T): `""` on the North Star (or, in a report of
    before the axis was chosen, decode), `"_decode"` on decode interactivity."""
    return {
        (TIER_AXIS_SUFFIX[t.axis] if t.axis is not None else "", t.tier)
        for t in report.tiers or ()
        if math.isfinite(t.tier)
    }


def _agents_tiers(report: Report) -> set[float]:
    """The tiers T the report has `agents_per_gpu_at_T` for (a report of before them has none)."""
    return {
        parsed.tier for k in report.model_dump() if k.startswith(AGENTS_KEY_PREFIX) and (parsed := parse_tier_key(k))
    }


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
    if va is not None and vb is not None and va != 0 and better is not None:
        change = (vb - va) / abs(va)
        worse_by = -change if better == "higher" else change
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
    agents = sorted(_agents_tiers(a) | _agents_tiers(b))

    def tier_rows(gating: bool) -> tuple[Row, ...]:
        reads = tuple(
            _row(a, b, f"{prefix}{tier_suffix(t)}{axis}", better, kind, gating)
            for axis, t in tiers
            for prefix, better, kind in _TIER_FIGURES
        )
        # Shown, never gated: no interval tells their noise from a change (module docstring).
        return reads + tuple(
            _row(a, b, f"{AGENTS_KEY_PREFIX}{tier_suffix(t)}", "higher", "rate", False) for t in agents
        )

    def headline_rows(figures: Sequence[Figure], gating: bool) -> tuple[Row, ...]:
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
    )


def _on_decode(report: Report) -> Report:
    """A sweep of before the frontier axis, its tier reads (on decode interactivity) named as such."""
    tiers = [t.model_copy(update={"axis": DECODE}) for t in report.tiers or ()]
    return report.model_copy(update={"tiers": tiers})


# --- printing ---------------------------------------------------------------------------------------


def _fmt(value: float | None, kind: Kind) -> str:
    if value is None:
        return NA
    if kind == "fraction":
        return f"{value * 100:.1f}%"
    if kind == "seconds":
        return f"{value:.3g} s"
    if kind == "usd":
        return f"{value:.4g} USD"
    if abs(value) >= 1e6:
        return compact(value, 4, sep="", trim=True)
    if abs(value) >= 10_000:
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.4g}"


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


def _change(better: Better, worse_by: float) -> str:
    """B against A as a signed percentage of A (+ is up, whichever way is better)."""
    return f"{-worse_by if better == 'higher' else worse_by:+.1%}"


def _verdict(row: Row, tolerance: float) -> str:
    if row.better is None:
        return ""
    if row.worse_by is None:
        return "n/a, not gated"
    change = _change(row.better, row.worse_by)
    if not row.gated:
        return f"{change}, not gated"
    if row.noise:
        return f"{change} within noise"
    return f"{change} {'REGRESSED' if row.regressed(tolerance) else 'ok'}"


def _with_span(value: float | None, span: Span | None, kind: Kind) -> str:
    text = _fmt(value, kind)
    if span is None or value is None:
        return text
    low, high = (_fmt(end, kind).removesuffix(" USD").removesuffix(" s") for end in span)  # the unit once
    return f"{text} [{low}–{high}]"


def _table(rows: Sequence[Row], tolerance: float, colour: bool) -> list[str]:
    cells = [("figure", "A", "B", "B/A", "")]
    for r in rows:
        ratio = NA if r.ratio is None else f"{r.ratio:.3f}"
        a, b = _with_span(r.a, r.a_ci, r.kind), _with_span(r.b, r.b_ci, r.kind)
        cells.append((r.key, a, b, ratio, _verdict(r, tolerance)))
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    lines = []
    for c in cells:
        line = f"{c[0]:<{widths[0]}}  {c[1]:>{widths[1]}}  {c[2]:>{widths[2]}}  {c[3]:>{widths[3]}}  {c[4]}".rstrip()
        if colour and c[4].endswith("REGRESSED"):
            line = f"\x1b[31m{line}\x1b[0m"
        lines.append(line)
    return lines


def _na_listing(rows: Sequence[Row], section: Sequence[Row]) -> str:
    """The n/a figures by name, a tier with all of its figures n/a by its number (and axis suffix): the
    figures at a tier come in threes, four with the agents per GPU, of `section`'s rows."""
    plain: list[str] = []
    by_tier: dict[str, list[str]] = {}
    for r in rows:
        if parse_tier_key(r.key) is None:
            plain.append(r.key)
        else:
            by_tier.setdefault(_tier_of_key(r.key), []).append(r.key)
    count: dict[str, int] = {}
    for r in section:
        if parse_tier_key(r.key) is not None:
            count[_tier_of_key(r.key)] = count.get(_tier_of_key(r.key), 0) + 1
    whole = [t for t, keys in by_tier.items() if len(keys) == count.get(t)]
    parts = plain + [k for t, keys in by_tier.items() if t not in whole for k in keys]
    if whole:
        parts.append(f"every figure at tier{'s' if len(whole) > 1 else ''} {', '.join(whole)}")
    return ", ".join(parts)


def _tier_of_key(key: str) -> str:
    """`…_at_100_decode` → "100_decode", `agents_per_gpu_at_100` → "100": a tier as its keys name it."""
    prefix = next(p for p in (*TIER_KEY_PREFIXES, AGENTS_KEY_PREFIX) if key.startswith(p))
    return key.removeprefix(prefix)


def render_comparison(comparison: Comparison, *, a_name: str, b_name: str, colour: bool = False) -> str:
    """The comparison as text: who is compared, the table(s), and one closing sentence."""
    c = comparison
    tol = f"{c.tolerance:.0%}" if (c.tolerance * 100).is_integer() else f"{c.tolerance:.2%}"
    lines = [f"A  {a_name}  ({c.about[0]})", f"B  {b_name}  ({c.about[1]})"]
    for side, bound in zip("AB", c.client_bound, strict=True):
        if bound:  # measured on the simulator: such runs made every false alarm (docs/sweeps.md)
            lines.append(
                f"{side}'s load generator was saturated (client_saturated): its figures measure the client as "
                "much as the server, and its intervals do not know it."
            )
    for side, older in zip("AB", c.decode_only, strict=True):
        if older:
            lines.append(
                f"{side} is a sweep of before the frontier axis: its tiers, read on decode interactivity, are "
                "compared as …_at_T_decode; it has no read on the North Star."
            )
    lines.append("")
    if c.sweeps[0] != c.sweeps[1]:
        single = "A" if not c.sweeps[0] else "B"
        lines += [f"{single} is a single run and the other a sweep: the tiers are compared only between sweeps.", ""]
    head = "Whole run" if any(c.sweeps) else "Figures"
    if c.gate == "tiers":
        head += " (shown, not gated: a sweep's whole-run figures mix every point's load)"
    lines += [head, *(_table(c.headline, c.tolerance, colour) if c.headline else ["(none in either report)"])]
    if c.tasks:
        tasks_head = "Tasks (per session tree, over the whole run; no 95% interval yet: n/a)"
        if c.gate == "tiers":
            tasks_head += ": shown, not gated, like the whole-run figures"
        lines += ["", tasks_head, *_table(c.tasks, c.tolerance, colour)]
    if c.tiers:
        tiers_head = "Tiers (read on the frontier at p90 interactivity T tok/s/user)"
        if c.gate == "headline" and all(c.sweeps):
            tiers_head += ": no tier is known on both sides, so the whole-run figures gate"
        lines += ["", tiers_head, *_table(c.tiers, c.tolerance, colour)]
    per_task = " (per task: higher for tasks per hour per GPU, lower for task time and USD per task)" if c.tasks else ""
    lines += [
        "",
        f"Higher is better for throughput, interactivity and tokens per dollar, lower for USD per million "
        f"tokens{per_task}; B may be up to {tol} worse. The other figures are shown, not gated.",
    ]
    if c.tiers:
        lines.append(
            "…_at_T: read on the North Star (E2E-normalized interactivity; decode in two sweeps of before the "
            "frontier axis); …_at_T_decode: on decode interactivity; agents_per_gpu_at_T (higher is better): "
            "on each report's frontier axis."
        )
    if any(r.a_ci or r.b_ci for r in c.rows):
        lines.append(
            "[low–high]: 95% interval. A figure with one in both reports regresses only when the two do not "
            "overlap; overlapping ones are within noise."
        )
    if c.not_gated_na:
        section = c.headline if c.gate == "headline" else c.tiers
        lines.append(f"Not gated, null on one side or both (n/a): {_na_listing(c.not_gated_na, section)}.")
    noise = len(c.within_noise)
    if c.regressions:
        listed = ", ".join(_regression(r) for r in c.regressions)
        n = len(c.regressions)
        lines.append(f"B regressed beyond the {tol} tolerance on {n} figure{'s' if n > 1 else ''}: {listed}.")
        if noise:
            lines.append(f"{noise} other figure{'s' if noise > 1 else ''} differed within noise.")
    else:
        compared = sum(1 for r in c.rows if r.gated)
        if compared and noise:
            lines.append(
                f"No regression: B is within {tol} of A, or within noise, on all {compared} gated figures "
                f"({noise} within noise: their 95% intervals overlap)."
            )
        elif compared:
            lines.append(f"No regression: B is within {tol} of A on all {compared} gated figures.")
        else:
            lines.append("Nothing to gate: no gated figure is known in both reports.")
    return "\n".join(lines)


def _regression(r: Row) -> str:
    """A regressed figure in words: its change, and both intervals when it has them."""
    change = _change(r.better, r.worse_by or 0.0)
    if r.a_ci is None and r.b_ci is None:
        return f"{r.key} ({change})"
    a, b = _with_span(r.a, r.a_ci, r.kind), _with_span(r.b, r.b_ci, r.kind)
    return f"{r.key} ({change}: A {a}, B {b})"

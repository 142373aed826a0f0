"""`agentx-tui compare`'s output: who is compared, the tables of B/A with their verdicts, and one closing
sentence (what the rows mean: _compare.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentx_tui.report._compare import Better, Comparison, Kind, Row, Span
from agentx_tui.report._format import NA, cell
from agentx_tui.report._keys import AGENTS_KEY_PREFIXES, TIER_KEY_PREFIXES, parse_tier_key
from agentx_tui.units import compact


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


def _words(value: Any) -> str:
    """A flag or a list as the comparison shows it: a list's entries joined, "(none)" for an empty one."""
    if isinstance(value, list):
        return "; ".join(cell(v) for v in value) or "(none)"
    return cell(value)


def _change(better: Better, worse_by: float) -> str:
    """B against A as a signed percentage of A (+ is up, whichever way is better)."""
    return f"{-worse_by if better == 'higher' else worse_by:+.1%}"


# Said on a row whose change no 95% interval on both sides can tell from noise (module docstring of
# _compare.py: the tolerance alone judges it).
NOISE_UNKNOWN = "no interval: noise unknown"


def _verdict(row: Row, tolerance: float) -> str:
    if row.better is None:
        return ""
    if row.worse_by is None:
        return "n/a, not gated"
    change = _change(row.better, row.worse_by)
    if not row.gated:
        verdict = f"{change}, not gated"
    elif row.noise:
        return f"{change} within noise"
    else:
        verdict = f"{change} {'REGRESSED' if row.regressed(tolerance) else 'ok'}"
    return verdict if row.noise_known else f"{verdict} ({NOISE_UNKNOWN})"


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
        if colour and "REGRESSED" in c[4]:
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
    prefix = next(p for p in (*TIER_KEY_PREFIXES, *AGENTS_KEY_PREFIXES) if key.startswith(p))
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
    unread = _unread_tiers(c.tiers)
    head = "Whole run" if any(c.sweeps) else "Figures"
    if c.gate == "tiers":
        head += " (shown, not gated: a sweep's whole-run figures mix every point's load)"
    lines += [head, *(_table(c.headline, c.tolerance, colour) if c.headline else ["(none in either report)"])]
    if c.words:
        lines += ["", "In words (shown, not gated)"]
        lines += [f"{key}: A {_words(a)} | B {_words(b)}" for key, a, b in c.words]
    if c.tasks:
        tasks_head = "Tasks (per session tree, over the whole run; no 95% interval yet: n/a)"
        if c.gate == "tiers":
            tasks_head += ": shown, not gated, like the whole-run figures"
        lines += ["", tasks_head, *_table(c.tasks, c.tolerance, colour)]
    if c.tiers:
        tiers_head = "Tiers (read on the frontier at p90 interactivity T tok/s/user)"
        if c.gate == "headline" and all(c.sweeps):
            tiers_head += ": no tier is known on both sides, so the whole-run figures gate"
        shown = [r for r in c.tiers if r.a is not None or r.b is not None]
        table = _table(shown, c.tolerance, colour) if shown else ["(no tier read in either report)"]
        lines += ["", tiers_head, *table]
        if unread:
            tiers = f"tier{'s' if len(unread) > 1 else ''} {', '.join(unread)}"
            lines.append(f"Read in neither report (outside both frontiers' range): {tiers}.")
    per_task = " (per task: higher for tasks per hour per GPU, lower for task time and USD per task)" if c.tasks else ""
    lines += [
        "",
        f"Higher is better for throughput, interactivity, tokens per dollar and MFU, lower for USD per million "
        f"tokens and joules per token{per_task}; B may be up to {tol} worse. The other figures are shown, not "
        "gated.",
    ]
    if any(r.known for r in c.tiers):
        lines.append(_tier_words(c))
    lines.append(_noise_rule(c, tol))
    na = [r for r in c.not_gated_na if parse_tier_key(r.key) is None or _tier_of_key(r.key) not in unread]
    if na:
        section = c.headline + c.tasks if c.gate == "headline" else c.tiers
        lines.append(f"Not gated, null on one side or both (n/a): {_na_listing(na, section)}.")
    noise = len(c.within_noise)
    if c.regressions:
        n, unknown = len(c.regressions), len(c.regressed_noise_unknown)
        listed = ", ".join(_regression(r, tag=0 < unknown < n) for r in c.regressions)
        lines.append(f"B regressed beyond the {tol} tolerance on {n} figure{'s' if n > 1 else ''}: {listed}.")
        if unknown:
            which = "It lacks" if n == 1 else f"All {n} lack" if unknown == n else f"{unknown} of them lack"
            lines.append(
                f"{which} a 95% interval in one report or both, so whether {'it is' if n == 1 else 'they are'} "
                "noise is unknown: longer points (or --precision) give each figure an interval that tells a change "
                "from noise."
            )
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


def _tier_words(c: Comparison) -> str:
    """What the tier keys are read on, as sentences (docs/sweeps.md, "compare as a CI gate")."""
    if c.tiers_on_decode:
        return (
            "Both are sweeps of before the frontier axis: their …_at_T figures were read on decode interactivity "
            "(1 / p90 ITL). agents_per_gpu_at_T and agents_per_mw_at_T (higher is better) are shown, never gated."
        )
    return (
        "A …_at_T figure is read where the frontier crosses T tok/s/user of p90 interactivity: on the North Star "
        "(E2E-normalized interactivity), or, with _decode after T, on decode interactivity. agents_per_gpu_at_T "
        "and agents_per_mw_at_T (higher is better) are read on each report's own frontier axis, shown and never "
        "gated."
    )


def _noise_rule(c: Comparison, tol: str) -> str:
    """The verdict rule for noise, as this comparison applies it."""
    rule = (
        f"A gated figure with a 95% interval ([low–high]) in both reports regresses only when B is more than {tol} "
        "worse and the two intervals do not overlap (overlapping: within noise); one without an interval on both "
        f"sides ({NOISE_UNKNOWN}) is judged by the {tol} tolerance alone."
    )
    if not any(r.noise_known for r in c.rows if r.gated):
        rule += " No gated figure here carries an interval on both sides."
    return rule


def _unread_tiers(rows: Sequence[Row]) -> list[str]:
    """The tiers, as their keys name them (`100`, `100_decode`), at which neither report has any figure."""
    seen: dict[str, bool] = {}
    for r in rows:
        if parse_tier_key(r.key) is None:
            continue
        tier = _tier_of_key(r.key)
        seen[tier] = seen.get(tier, True) and r.a is None and r.b is None
    return [t for t, none in seen.items() if none]


def _regression(r: Row, *, tag: bool) -> str:
    """A regressed figure in words: its change, and both intervals when it has them (`tag`: say so when it
    has none, as some of the others do)."""
    change = _change(r.better, r.worse_by or 0.0)
    if r.a_ci is None and r.b_ci is None:
        return f"{r.key} ({change}, {NOISE_UNKNOWN})" if tag else f"{r.key} ({change})"
    a, b = _with_span(r.a, r.a_ci, r.kind), _with_span(r.b, r.b_ci, r.kind)
    return f"{r.key} ({change}: A {a}, B {b})"

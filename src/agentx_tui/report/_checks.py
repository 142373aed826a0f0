"""SLO checks on the final report (`--check 'ttft_p90_s <= 2'`), parsed before the run starts.

A check names one numeric report key, an operator and a number. An unknown figure (null) never
passes: a CI job must not go green because the figure could not be measured. ``==`` allows a relative
tolerance of 1e-9 so that a figure computed as a ratio can equal a decimal threshold.
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from agentx_tui.errors import UsageError
from agentx_tui.report._keys import NUMERIC_KEYS, RENAMED_KEYS, REPORT_KEYS, is_tier_key
from agentx_tui.report._model import CheckRow, Report


def _equal(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": _equal,
}

_EXPR = re.compile(r"^\s*(?P<key>[A-Za-z_][A-Za-z0-9_.]*)\s*(?P<op>>=|<=|==|>|<)\s*(?P<num>\S+)\s*$")
_EXAMPLE = "for example 'output_tokens_per_s >= 500' or 'ttft_p90_s <= 2'"


@dataclass(frozen=True)
class Check:
    expr: str
    key: str
    op: str
    threshold: float


# A check's outcome is the row the report file keeps (`checks`).
CheckResult = CheckRow


def _close(key: str) -> str:
    matches = difflib.get_close_matches(key, NUMERIC_KEYS, n=3, cutoff=0.5)
    if not matches:
        matches = [k for k in NUMERIC_KEYS if key.split("_")[0] in k][:3]
    return f" Did you mean {', '.join(matches)}?" if matches else ""


def parse_check(expr: str) -> Check:
    m = _EXPR.match(expr)
    if m is None:
        raise UsageError(
            f"--check {expr!r} is not KEY OP NUMBER with OP one of >=, <=, >, <, ==.", f"Write it {_EXAMPLE}."
        )
    key, op, num = m["key"], m["op"], m["num"]
    key = RENAMED_KEYS.get(key, key)  # a key's earlier name checks the same figure (a CI job of before)
    if key not in NUMERIC_KEYS and not is_tier_key(key):
        why = "is not a numeric report figure" if key in REPORT_KEYS else "is not a report key"
        raise UsageError(f"--check {expr!r}: {key!r} {why}.{_close(key)}", "`agentx-tui keys` lists the report keys.")
    try:
        threshold = float(num)
    except ValueError:
        threshold = math.nan
    if not math.isfinite(threshold):
        raise UsageError(f"--check {expr!r}: {num!r} is not a finite number.", f"Write it {_EXAMPLE}.")
    return Check(expr=expr.strip(), key=key, op=op, threshold=threshold)


def cold_start_words(report: Report) -> str:
    """Why a figure the sessions' first requests set reads as it does (docs/metrics.md, "Cold start")."""
    words = "set by the sessions' cold first requests"
    return words if report.warmup_s else f"{words}; use --warmup S to leave them out"


def evaluate_checks(checks: Iterable[Check], report: Report) -> list[CheckResult]:
    results = []
    cold = set(report.cold_start_figures or ())
    for check in checks:
        value = report.figure(check.key)
        passed = value is not None and OPERATORS[check.op](value, check.threshold)
        results.append(
            CheckResult(
                expr=check.expr,
                key=check.key,
                op=check.op,
                threshold=check.threshold,
                value=value,
                passed=passed,
                note=cold_start_words(report) if not passed and check.key in cold else None,
            )
        )
    return results

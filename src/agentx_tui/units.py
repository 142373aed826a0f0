"""How a figure is written as text, in one place for the dashboard, the headless lines, the reports,
the log and `compare`: `n/a` for what cannot be known, K/M/B/T for thousands to trillions (billions
are "B" everywhere: 1.3 B tokens per dollar), percentages of 0–1 fractions, latencies in ms or s."""

from __future__ import annotations

import math

NA = "n/a"
_UNITS = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"))


def compact(value: float | None, digits: int = 3, *, sep: str = " ", trim: bool = False) -> str:
    """1234 → '1.23 K', 830000 → '830 K', 1.3e9 → '1.30 B' (`digits` significant digits); `sep` goes
    between number and unit; `trim` drops trailing zeros ('1.3B', for narrow columns and reports)."""
    if value is None or not math.isfinite(value):
        return NA
    magnitude = abs(value)
    for scale, unit in _UNITS:
        if magnitude >= scale:
            return f"{_digits(value / scale, digits, trim)}{sep}{unit}"
    return _digits(value, digits, trim)


def figure(value: float) -> str:
    """A figure inside a sentence: three significant digits, no exponent, thousands with commas."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def outputs_scaled(factor: float | None) -> str | None:
    """'outputs ×0.7' for a run with `--output-scale 0.7`, so a screenshot or a report of it is not taken
    for a plain run; None for a plain run (factor 1, or none recorded)."""
    if factor is None or factor == 1.0 or not math.isfinite(factor):
        return None
    return f"outputs ×{factor:g}"


def percent(fraction: float | None, decimals: int = 1) -> str:
    return NA if fraction is None else f"{fraction * 100:.{decimals}f}%"


def _digits(value: float, digits: int, trim: bool) -> str:
    if trim:
        return f"{value:.{digits}g}"
    if value == 0:
        return "0"
    decimals = max(0, min(digits - 1 - math.floor(math.log10(abs(value))), 6))
    return f"{value:.{decimals}f}"

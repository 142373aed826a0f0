"""Compact, n/a-aware formatting of the figures on screen (pure functions, no Textual); the numbers
themselves are written as everywhere else (agentx_tui/units.py)."""

from __future__ import annotations

from collections.abc import Sequence

from agentx_tui.units import NA, compact, percent

__all__ = [
    "NA",
    "bar",
    "cells",
    "compact",
    "count",
    "duration",
    "level",
    "money",
    "number",
    "percent",
    "seconds",
    "series",
]

_EIGHTHS = " ▏▎▍▌▋▊▉█"


def count(value: float | None) -> str:
    """A whole number of things (tokens, blocks, preemptions): '48', '341', then '1.23 K' like `compact`."""
    if value is None:
        return NA
    return f"{value:.0f}" if abs(value) < 1000 else compact(value)


def split_compact(value: float | None, digits: int = 3) -> tuple[str, str]:
    """The number and its unit apart ('1.30', 'B'), for the large-digit meter whose font has no K/M."""
    text = compact(value, digits)
    number, _, unit = text.partition(" ")
    return number, unit


def seconds(value: float | None) -> str:
    """Latencies: '830 ms' below a second, '1.25 s' above."""
    if value is None:
        return NA
    if value < 1:
        return f"{value * 1000:.0f} ms" if value >= 0.01 else f"{value * 1000:.1f} ms"
    return f"{value:.2f} s"


def duration(value: float | None) -> str:
    """Elapsed time as H:MM:SS."""
    if value is None:
        return NA
    total = max(0, int(value))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def money(value: float | None) -> str:
    if value is None:
        return NA
    if abs(value) >= 1000:
        return f"${compact(value)}"
    return f"${value:.4f}" if abs(value) < 1 else f"${value:.2f}"


def number(value: float | None, decimals: int = 0) -> str:
    return NA if value is None else f"{value:.{decimals}f}"


def bar(fraction: float | None, width: int) -> str:
    """A fixed-width bar in eighth blocks; blank when unknown (the figure beside it says n/a)."""
    if fraction is None or width <= 0:
        return " " * max(width, 0)
    clamped = min(max(fraction, 0.0), 1.0)
    eighths = round(clamped * width * 8)
    full, part = divmod(eighths, 8)
    text = "█" * full + (_EIGHTHS[part] if part and full < width else "")
    return text.ljust(width)


def cells(shares: Sequence[float], width: int) -> list[int]:
    """Shares that add up to 1 as whole cells of a stacked bar exactly `width` wide (largest remainders:
    each share gets its whole cells, the cells left over go to the largest fractions left)."""
    raw = [share * width for share in shares]
    whole = [int(r) for r in raw]
    for i in sorted(range(len(raw)), key=lambda i: raw[i] - whole[i], reverse=True)[: max(width - sum(whole), 0)]:
        whole[i] += 1
    return whole


def level(fraction: float | None, warn: float = 0.75, crit: float = 0.92) -> str:
    """The component class suffix for a 0–1 load figure: ok / warn / crit / na."""
    if fraction is None:
        return "na"
    if fraction >= crit:
        return "crit"
    if fraction >= warn:
        return "warn"
    return "ok"


def series(values: Sequence[float | None]) -> list[float]:
    """History as the Sparkline wants it: unknown samples drawn as 0 (the pane's figure says n/a)."""
    return [0.0 if value is None else value for value in values]

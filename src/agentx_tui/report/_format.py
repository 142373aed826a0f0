"""How report figures are written as text (Markdown table, CSV cells, the headless summary)."""

from __future__ import annotations

import json
import math
from typing import Any

NA = "n/a"


def cell(value: Any) -> str:
    """A value as one text cell: exact enough to read back the same figure (6 significant digits)."""
    if value is None:
        return NA
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return NA
        if abs(value) >= 1e6 or (value == int(value) and abs(value) < 1e15):
            return f"{value:.0f}"  # large figures (tokens per dollar, timestamps) in full
        return f"{value:.6g}"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def si(value: float | None, digits: int = 3) -> str:
    """A compact number for narrow columns: 1.23K, 4.5M, 1.3B."""
    if value is None or not math.isfinite(value):
        return NA
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g}{suffix}"
    return f"{value:.{digits}g}"


def percent(value: float | None) -> str:
    return NA if value is None else f"{value * 100:.1f}%"


def elapsed(seconds: float) -> str:
    seconds = max(0, round(seconds))  # ticks ~1 s apart: rounding keeps consecutive lines distinct
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"

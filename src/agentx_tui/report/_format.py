"""How report figures are written as text (Markdown table, CSV cells, the headless summary)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from agentx_tui.snapshot import FRACTION
from agentx_tui.units import NA, compact, percent

__all__ = ["NA", "Format", "by_unit", "cell", "elapsed", "percent", "si"]

Format = Callable[[Any], str]


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


def si(value: float | None) -> str:
    """A compact number for narrow columns: 1.23K, 4.5M, 1.3B (agentx_tui/units.py)."""
    return compact(value, sep="", trim=True)


def elapsed(seconds: float) -> str:
    seconds = max(0, round(seconds))  # ticks ~1 s apart: rounding keeps consecutive lines distinct
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def by_unit(unit: str) -> Format:
    """How a table's cell writes a figure of `unit` (its declaration's): a share as a percentage, tokens or
    agents (per second, per GPU, per dollar…) compactly, anything else exactly."""
    if unit == FRACTION:
        return percent
    if unit.split("/")[0] in ("tokens", "agents"):
        return si
    return cell

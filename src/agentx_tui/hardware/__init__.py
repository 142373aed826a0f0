"""The GPUs' datasheet figures, one table for the whole tool (`peaks.yaml` in this package): dense tensor
TFLOP/s per dtype and HBM bandwidth per GPU model, each row citing its datasheet.

Two readers: `cost` measures MFU and MBU against these rows (with the user's override file laid over
them, cost/_peaks.py), and the simulator's profiles take their GPUs' BF16 peak and HBM bandwidth from
them (sim/profiles.py), so a datasheet figure is written once. A leaf: it imports nothing of the
project, and hands out the rows as read; each reader checks what it uses.

peaks_path() -> str                       where the built-in table is
peak_rows() -> dict[str, dict[str, Any]]  its rows by key (h100, h200, b200, …), as written
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml


def peaks_path() -> str:
    return str(resources.files("agentx_tui.hardware") / "peaks.yaml")


def peak_rows() -> dict[str, dict[str, Any]]:
    """The built-in table's rows by key, a fresh copy on every call (a reader may change its own)."""
    text = (resources.files("agentx_tui.hardware") / "peaks.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    rows = data.get("gpus") if isinstance(data, dict) else None
    if not isinstance(rows, dict) or not all(isinstance(row, dict) for row in rows.values()):
        raise RuntimeError(f"{peaks_path()} is invalid: it must hold `gpus`, a mapping of rows")  # a broken package
    return {str(key): dict(row) for key, row in rows.items()}

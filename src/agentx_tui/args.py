"""Parsing the command line of every subcommand: usage errors are one sentence (exit 2), never argparse's
usage block, and the numbers a user types are finite and in a sane range.

argparse's own `type=float` takes "nan", "inf" and "-5"; these parsers refuse them with a sentence that
names the flag and the range, before anything starts.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from agentx_tui.errors import UsageError

# A typo like `-u 1000000000` must be refused, not eat memory; 200,000 sessions is beyond what one
# node can serve and what `--workers` on one machine can drive (docs/scale.md).
MAX_USERS = 200_000
DEFAULT_USERS = 8  # -u: concurrent users when none is asked for
MAX_SECONDS = 30 * 24 * 3600.0  # a month: longer is a typo


class Parser(argparse.ArgumentParser):
    """argparse, but usage errors raise (one sentence, exit 2) instead of printing the usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        message = message.removeprefix("argument ")
        raise UsageError(f"{message[0].upper()}{message[1:].rstrip('.')}.", f"See `{self.prog} --help`.")


def _fmt(value: float) -> str:
    return f"{int(value):,}" if value == int(value) else f"{value:g}"


def number(
    what: str,
    lo: float,
    hi: float,
    *,
    integer: bool = False,
    lo_open: bool = False,
) -> Callable[[str], float]:
    """An argparse `type=`: a finite number in [lo, hi] (or (lo, hi] with `lo_open`); `what` names it
    for the sentence "… is out of range: {what} must be …", e.g. "seconds", "users", "the scale"."""

    def parse(text: str) -> float:
        try:
            value = float(int(text)) if integer else float(text)
        except ValueError:
            kind = "a whole number" if integer else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        low_ok = value > lo if lo_open else value >= lo
        if not low_ok or value > hi:
            above = "more than" if lo_open else "at least"
            raise argparse.ArgumentTypeError(
                f"{text!r} is out of range: {what} must be {above} {_fmt(lo)} and at most {_fmt(hi)}"
            )
        return value

    return parse


def whole(what: str, lo: int, hi: int) -> Callable[[str], int]:
    inner = number(what, lo, hi, integer=True)

    def parse(text: str) -> int:
        return int(inner(text))

    return parse


def seconds(lo: float = 0.0, hi: float = MAX_SECONDS, *, lo_open: bool = True) -> Callable[[str], float]:
    return number("seconds", lo, hi, lo_open=lo_open)


# --spec-golden AL: an acceptance length is at most k + 1; no server drafts a hundred tokens a step.
MAX_ACCEPTANCE_LENGTH = 100.0

# --gpu-peak TFLOPS,TBPS: a GPU's dense TFLOP/s and HBM TB/s; a typo of a thousand times is refused.
MAX_PEAK_TFLOPS = 1_000_000.0
MAX_PEAK_TB_S = 1_000.0


def gpu_peak(text: str) -> tuple[float, float]:
    """An argparse `type=` for `--gpu-peak TFLOPS,TBPS`: two positive finite numbers, comma-separated."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"{text!r} is not TFLOPS,TBPS: two numbers, e.g. 989,3.35")
    tflops = number("the peak TFLOP/s", 0, MAX_PEAK_TFLOPS, lo_open=True)(parts[0].strip())
    tb_s = number("the peak TB/s", 0, MAX_PEAK_TB_S, lo_open=True)(parts[1].strip())
    return tflops, tb_s

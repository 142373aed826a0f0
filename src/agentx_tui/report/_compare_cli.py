"""`agentx-tui compare A.json B.json [--tolerance F]`: the command line, reading the two report files
(one sentence and exit 2 for a file that is not one), and the exit code (1 when B regressed)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from agentx_tui.args import Parser
from agentx_tui.errors import UsageError
from agentx_tui.report._compare import DEFAULT_TOLERANCE, EXIT_REGRESSED, EXIT_SAME, compare_reports
from agentx_tui.report._compare_text import render_comparison
from agentx_tui.report._model import Report
from agentx_tui.terminal import wants_color


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
        return Report.read(report)
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

"""An auto sweep at `--precision 0.05` against the same sweep with fixed 60-s points (docs/sweeps.md).

    .venv/bin/python bench/precision_sweep.py [--precision 0.05] [--point-duration 60] [--warmup 10]
                                              [--sim h200] [--seed 0] [--dir DIR]

Both sweeps run `--sweep auto` from 1 user with the same sessions (the study workload of
bench/ci_coverage.py, the same `--seed`), the same simulator profile and warm-up, one after the
other (never together: they would share the CPU). The fixed one measures every point for
`--point-duration`; the other ends a point once its 95% half-widths are within `--precision` (at most
`--point-duration`). Printed: the wall time of each (the command's own, start-up included), each
point's window and why it ended, and per tier both reads with their intervals and how far apart
they are. Reports are kept in `--dir` (default /tmp/agentx-precision-sweep) and reused. Prints
figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ci_coverage import WORKLOAD


def sweep(folder: Path, name: str, extra: list[str], args: argparse.Namespace) -> tuple[dict[str, Any], float]:
    out, timing = folder / f"{name}.json", folder / f"{name}.wall"
    if not out.exists():
        cmd = [
            sys.executable, "-m", "agentx_tui", "--sim", args.sim, "--sweep", "auto", "--warmup", str(args.warmup),
            "--point-duration", str(args.point_duration), "--seed", str(args.seed), "-w", str(folder / "study.yaml"),
            "--headless", "--report", str(out), *extra,
        ]  # fmt: skip
        started = time.monotonic()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=3600, check=False)
        timing.write_text(f"{time.monotonic() - started:.1f}")
    return json.loads(out.read_text()), float(timing.read_text())


def pm(report: dict[str, Any], key: str) -> str:
    value, low, high = report.get(key), report.get(f"{key}_ci_low"), report.get(f"{key}_ci_high")
    if value is None:
        return "n/a"
    if low is None or high is None:
        return f"{value:,.0f} (no interval)"
    return f"{value:,.0f} [{low:,.0f}–{high:,.0f}]"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--precision", type=float, default=0.05)
    p.add_argument("--point-duration", type=float, default=60)
    p.add_argument("--warmup", type=float, default=10)
    p.add_argument("--sim", default="h200")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", type=Path, default=Path("/tmp/agentx-precision-sweep"))
    args = p.parse_args()
    folder = (
        args.dir
        / f"{args.sim.replace('/', '_')}-p{args.precision:g}-d{args.point_duration:g}-w{args.warmup:g}-s{args.seed}"
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "study.yaml").write_text(WORKLOAD)
    fixed, fixed_wall = sweep(folder, "fixed", [], args)
    precise, precise_wall = sweep(folder, "precise", ["--precision", str(args.precision)], args)
    print(
        f"wall time: fixed {args.point_duration:g}-s points {fixed_wall:.0f} s, "
        f"--precision {args.precision:g} {precise_wall:.0f} s ({precise_wall / fixed_wall:.0%} of it)"
    )
    for name, report in (("fixed", fixed), ("precise", precise)):
        print(f"\n{name}: {len(report['points'])} points, ended: {report['sweep_stop_reason']}")
        for point in report["points"]:
            print(
                f"  {point['users']:>4} users  {point['duration_s']:5.1f} s  {point['requests_completed']:>5} req  "
                f"tput {pm(point, 'total_tokens_per_s_per_gpu')}  p90 {pm(point, 'interactivity_p90_tokens_per_s')}  "
                f"{'EARLY ' if point['stopped_early'] else ''}{point['stop_reason']}"
            )
    print("\ntier reads (total tok/s/GPU), fixed vs precise:")
    diffs = []
    for tier in fixed["tiers"]:
        key = f"total_tokens_per_s_per_gpu_at_{tier['tier']:g}"
        a, b = fixed.get(key), precise.get(key)
        diff = "" if a is None or b is None else f"{(b - a) / a:+.1%}"
        if a is not None and b is not None:
            diffs.append(abs(b - a) / a)
            lo, hi = fixed.get(f"{key}_ci_low"), fixed.get(f"{key}_ci_high")
            plo, phi = precise.get(f"{key}_ci_low"), precise.get(f"{key}_ci_high")
            if None not in (lo, hi, plo, phi):
                diff += ", intervals overlap" if lo <= phi and plo <= hi else ", intervals apart"
        print(f"  {tier['tier']:>5g}: fixed {pm(fixed, key)}  precise {pm(precise, key)}  {diff}")
    if diffs:
        print(f"largest tier difference {max(diffs):.1%}, mean {sum(diffs) / len(diffs):.1%} over {len(diffs)} tiers")


if __name__ == "__main__":
    main()

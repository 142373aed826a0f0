"""How often does `agentx-tui compare` cry wolf, and does it catch a slower GPU? (docs/sweeps.md)

    .venv/bin/python bench/compare_noise.py [--same 16] [--slower 4] [--parallel 2] [--dir DIR]
                                            [--users 4,16,64] [--warmup 5] [--duration 20]

Runs `--same` sweeps of one configuration (`--sweep users=…`, the study workload of
bench/ci_coverage.py, default seed, simulated h200/llama-3.1-8b) and `--slower` sweeps of the same
configuration on a slower simulated GPU (h100/llama-3.1-8b), each a fresh simulator, then compares:

- every disjoint pair of the identical runs (1 vs 2, 3 vs 4, …) and, for a steadier figure, every
  ordered pair: the false-alarm rate is the share that exit 1. Printed twice: with the reports'
  intervals (today's rule: overlapping intervals are noise) and with the intervals stripped (the
  plain 5% tolerance rule, as before the trust work);
- every identical run (A) against every slower run (B): the share that exit 1 (caught), and which
  tiers were named.

Reports are kept in `--dir` (default /tmp/agentx-compare-noise) and reused. Prints figures,
asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agentx_tui.report import Report
from agentx_tui.report._compare import Comparison, compare_reports
from ci_coverage import WORKLOAD

FAST, SLOW = "h200/llama-3.1-8b", "h100/llama-3.1-8b"


def run_sweep(folder: Path, profile: str, n: int, args: argparse.Namespace) -> Path:
    out = folder / f"{profile.split('/')[0]}-{n}.json"
    if out.exists():
        return out
    cmd = [
        sys.executable, "-m", "agentx_tui", "--sim", profile, "--sweep", f"users={args.users}",
        "--warmup", str(args.warmup), "--point-duration", str(args.duration), "--tiers", args.tiers,
        "-w", str(folder / "study.yaml"), "--headless", "--report", str(out),
    ]  # fmt: skip
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900, check=False)
    return out


def compared(a: dict[str, Any], b: dict[str, Any]) -> Comparison:
    """`compare` of two reports as it reads them from their files."""
    return compare_reports(Report.model_validate(a), Report.model_validate(b))


def stripped(report: dict[str, Any]) -> dict[str, Any]:
    """The report as one from before the trust work: no interval anywhere."""
    return {k: v for k, v in report.items() if not k.endswith(("_ci_low", "_ci_high"))}


def rate(pairs: list[tuple[dict[str, Any], dict[str, Any]]], *, intervals: bool) -> tuple[int, int]:
    alarms = 0
    for a, b in pairs:
        if not intervals:
            a, b = stripped(a), stripped(b)
        alarms += bool(compared(a, b).regressions)
    return alarms, len(pairs)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--same", type=int, default=16)
    p.add_argument("--slower", type=int, default=4)
    p.add_argument("--parallel", type=int, default=2)
    p.add_argument("--users", default="4,16,64")
    p.add_argument("--warmup", type=float, default=5)
    p.add_argument("--duration", type=float, default=20)
    p.add_argument("--tiers", default="30,50,75,100,150,200")
    p.add_argument("--dir", type=Path, default=Path("/tmp/agentx-compare-noise"))
    args = p.parse_args()
    folder = args.dir / f"u{args.users.replace(',', '-')}-w{args.warmup:g}-d{args.duration:g}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "study.yaml").write_text(WORKLOAD)
    jobs = [(FAST, n) for n in range(args.same)] + [(SLOW, n) for n in range(args.slower)]
    started = time.monotonic()
    with ThreadPoolExecutor(args.parallel) as pool:
        paths = list(pool.map(lambda job: run_sweep(folder, job[0], job[1], args), jobs))
    print(f"{len(jobs)} sweeps ready in {time.monotonic() - started:.0f} s ({folder})")
    reports = {path.stem: json.loads(path.read_text()) for path in paths if path.exists()}
    names = [name for name in sorted(reports, key=lambda n: (n.split("-")[0], int(n.split("-")[1])))]
    same = [reports[name] for name in names if name.startswith("h200")]
    slow = [reports[name] for name in names if name.startswith("h100")]
    print(f"identical runs: {len(same)}, slower-GPU runs: {len(slow)}")

    tiers = sorted({k for r in same for k in r if k.startswith("total_tokens_per_s_per_gpu_at_") and "_ci_" not in k})
    for key in tiers:
        values = [r[key] for r in same if r.get(key) is not None]
        widths = [
            (r[f"{key}_ci_high"] - r[f"{key}_ci_low"]) / 2 / r[key]
            for r in same
            if r.get(key) and r.get(f"{key}_ci_low") is not None and r.get(f"{key}_ci_high") is not None
        ]
        if len(values) >= 2:
            mean = sum(values) / len(values)
            spread = (max(values) - min(values)) / mean
            shown = f"mean ±{sum(widths) / len(widths):.1%} ({len(widths)} with one)" if widths else "none"
            print(f"  {key}: {len(values)} reads, range {spread:.1%} of the mean; intervals {shown}")

    disjoint = [(same[i], same[i + 1]) for i in range(0, len(same) - 1, 2)]
    ordered = list(itertools.permutations(same, 2))
    bound = [f"h200-{i}" for i, r in enumerate(same) if r.get("client_saturated")]
    steady = [r for r in same if not r.get("client_saturated")]
    print(f"identical runs whose own report says the client was saturated: {bound or 'none'}")
    sets = [("disjoint pairs", disjoint), ("all ordered pairs", ordered)]
    if bound:
        sets.append(("ordered pairs of unsaturated runs", list(itertools.permutations(steady, 2))))
    for name, pairs in sets:
        for intervals in (True, False):
            alarms, total = rate(pairs, intervals=intervals)
            rule = "with intervals (noise rule)" if intervals else "intervals stripped (5% rule only)"
            print(f"false alarms, {name}, {rule}: {alarms}/{total} = {alarms / max(total, 1):.1%}")

    caught, named = 0, Counter[str]()
    pairs = [(a, b) for a in same for b in slow]
    for a, b in pairs:
        regressions = compared(a, b).regressions
        caught += bool(regressions)
        named.update(r.key for r in regressions if r.key.startswith("total_tokens_per_s_per_gpu_at_"))
    print(f"slower GPU (h100 vs h200) caught: {caught}/{len(pairs)} = {caught / max(len(pairs), 1):.1%}")
    missed = [i for i, a in enumerate(same) for b in slow if not compared(a, b).regressions]
    if missed:
        print(f"  missed with identical run(s) {[f'h200-{i}' for i in sorted(set(missed))]} as A")
    print(
        "  tiers named: "
        + ", ".join(f"{k.removeprefix('total_tokens_per_s_per_gpu_at_')} ({n})" for k, n in sorted(named.items()))
    )


if __name__ == "__main__":
    main()

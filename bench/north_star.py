"""The North Star against decode interactivity on one sweep (docs/sweeps.md, docs/metrics.md).

    .venv/bin/python bench/north_star.py [--users 1,2,4,8,16,32] [--warmup 10] [--point-duration 20]
                                         [--tiers 30,50,75,100,150,200] [--sim h200/llama-3.1-8b]
                                         [-w coding-agent] [--seed 0] [--dir DIR]

One headless sweep on the built-in simulated engine (`--sweep users=…`, the North Star axis, the
default), then both axes' figures from its one report, side by side: per point the p90 decode
interactivity (1 / p90 ITL) and the p90 E2E-normalized interactivity (1 / p90 of E2E latency per output
token) and their ratio; per tier T the throughput per GPU read on each axis's frontier
(`total_tokens_per_s_per_gpu_at_T` and `…_at_T_decode`), their ratio, and the agents per GPU at T. So
the difference between the two axes is measured on the same points, not argued. The report is kept in
`--dir` (default /tmp/agentx-north-star) and reused. Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"


def run_sweep(folder: Path, args: argparse.Namespace) -> tuple[dict[str, Any], float]:
    out, timing = folder / "sweep.json", folder / "sweep.wall"
    if not out.exists():
        cmd = [
            sys.executable, "-m", "agentx_tui", "--sim", args.sim, "--sweep", f"users={args.users}",
            "--warmup", str(args.warmup), "--point-duration", str(args.point_duration), "--tiers", args.tiers,
            "--seed", str(args.seed), "-w", args.workload, "--headless", "--report", str(out),
        ]  # fmt: skip
        # This checkout's code, whichever venv runs the bench.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
        started = time.monotonic()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=3600, check=False, env=env)
        timing.write_text(f"{time.monotonic() - started:.1f}")
    return json.loads(out.read_text()), float(timing.read_text())


def fmt(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.2f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", default="1,2,4,8,16,32")
    p.add_argument("--warmup", type=float, default=10)
    p.add_argument("--point-duration", type=float, default=20)
    p.add_argument("--tiers", default="30,50,75,100,150,200")
    p.add_argument("--sim", default="h200/llama-3.1-8b")
    p.add_argument("-w", "--workload", default="coding-agent")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", type=Path, default=Path("/tmp/agentx-north-star"))
    args = p.parse_args()
    name = f"{args.sim.replace('/', '_')}-{args.workload}-u{args.users}-w{args.warmup:g}-d{args.point_duration:g}"
    folder = args.dir / f"{name}-t{args.tiers}-s{args.seed}"
    folder.mkdir(parents=True, exist_ok=True)
    report, wall = run_sweep(folder, args)
    print(
        f"{args.sim}, -w {args.workload}, users {args.users}, {args.warmup:g} s warm-up + {args.point_duration:g} s "
        f"per point; frontier axis {report.get('frontier_axis')}; {wall:.0f} s wall; "
        f"ended: {report['sweep_stop_reason']}"
    )
    print("\nper point (p90 interactivity, tok/s/user):")
    print(f"  {'users':>5}  {'tok/s/GPU':>10}  {'decode':>7}  {'North Star':>10}  {'NS/decode':>9}  {'TTFT p90 s':>10}")
    for point in report["points"]:
        decode, north_star = point["interactivity_p90_tokens_per_s"], point["e2e_interactivity_p90_tokens_per_s"]
        print(
            f"  {point['users']:>5}  {fmt(point['total_tokens_per_s_per_gpu'], 0):>10}  {fmt(decode):>7}  "
            f"{fmt(north_star):>10}  {ratio(north_star, decode):>9}  {fmt(point['ttft_p90_s'], 3):>10}"
        )
    print("\nper tier T (total tok/s per GPU read on each axis's frontier; agents per GPU on the North Star's):")
    print(f"  {'T':>5}  {'decode':>9}  {'North Star':>10}  {'NS/decode':>9}  {'agents/GPU':>10}")
    for tier in sorted({t["tier"] for t in report["tiers"]}):
        key = f"total_tokens_per_s_per_gpu_at_{tier:g}"
        decode, north_star = report.get(f"{key}_decode"), report.get(key)
        agents = report.get(f"agents_per_gpu_at_{tier:g}")
        print(
            f"  {tier:>5g}  {fmt(decode, 0):>9}  {fmt(north_star, 0):>10}  {ratio(north_star, decode):>9}  "
            f"{fmt(agents):>10}"
        )


if __name__ == "__main__":
    main()

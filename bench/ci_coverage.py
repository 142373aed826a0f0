"""Coverage of the sweep point's confidence intervals on the simulator: which method is honest?

    .venv/bin/python bench/ci_coverage.py [--users 4,32] [--repeats 40] [--warmup 5] [--duration 15]
                                          [--parallel 2] [--seeds vary|same] [--sim h200] [--dir DIR]
                                          [--before M] [--tag SUFFIX]

One short point (`--sweep users=N`, `--warmup` then `--duration` seconds; with `--before M`, a point
of M users first, so that the studied one holds two cohorts of users) is run `--repeats` times per
user count on the built-in simulator, each a fresh simulator and fresh sessions (`--seed` = the
repeat's number with `--seeds vary`, the same seed 0 every time with `same`), with the study's
workload below (short agent steps with sub-agents, so that a 15-s window holds about a hundred
requests from a few dozen session trees). Every run keeps its point's raw sample
(bench/_point_samples.py), so every method is computed offline from the same runs.

Figures studied: the throughput, the p90 of per-request ITL (decode interactivity) and the p90 of
r_i, the E2E latency per output token (E2E-normalized interactivity, the North Star).

The reference is the mean of the repeats' figures (its own noise is about sd/√repeats, small beside
the intervals). A method's coverage is the share of repeats whose 95% interval holds the
reference: honest is ~95%; much lower means too narrow (a gate would flap), much higher too wide (a
`--precision` point would run longer than it needs). Also printed: the mean relative half-width, the
repeats' own spread (1.96 · sd / mean: what an honest half-width should be on average), how many
repeats had no interval (too few trees or requests), and each method's CPU time per point.

Runs are kept in `--dir` (default /tmp/agentx-ci-coverage) and reused: a second call with more
repeats runs only the missing ones. Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _point_samples import sample_from_json
from _rejected_intervals import tree_bootstrap_quantile, tree_throughput, user_throughput_pooled
from agentx_tui.sweep.intervals import (
    Interval,
    Sample,
    batch_quantile,
    batch_throughput,
    point_intervals,
    user_throughput,
)

HERE = Path(__file__).resolve().parent
WORKLOAD = """\
description: CI study - short agent steps with sub-agents (a 15 s window holds ~100 requests of dozens of trees)
shared_prefix_tokens: 2000
unique_prefix_tokens: {dist: uniform, min: 100, max: 400}
first_message_tokens: {dist: uniform, min: 100, max: 600}
steps: {dist: uniform, min: 10, max: 30}
output_tokens: {dist: lognormal, mean: 120, std: 80, min: 20, max: 600}
tool_result_tokens: {dist: uniform, min: 200, max: 1200}
tool_latency_s: {dist: uniform, min: 0.2, max: 1.5}
subagents:
  every_steps: 6
  children: {dist: uniform, min: 1, max: 3}
  steps: {dist: uniform, min: 2, max: 5}
  task_tokens: {dist: uniform, min: 100, max: 300}
"""


def run_one(folder: Path, users: int, repeat: int, args: argparse.Namespace) -> Path:
    out = folder / f"u{users}-r{repeat}.json"
    if out.exists():
        return out
    seed = repeat if args.seeds == "vary" else 0
    cmd = [
        sys.executable, str(HERE / "_point_samples.py"), str(out), "--",
        "--sweep", f"users={args.before},{users}" if args.before else f"users={users}",
        "--warmup", str(args.warmup), "--point-duration", str(args.duration),
        "-w", str(folder / "study.yaml"), "--headless", "--seed", str(seed), "--sim", args.sim,
    ]  # fmt: skip
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300, check=False)
    return out


Method = Callable[[Sample], Interval | None]


def methods() -> dict[str, tuple[str, Method]]:
    """name → (figure, method): every variant measured."""
    out: dict[str, tuple[str, Method]] = {
        "throughput: trees (cluster SE)": ("tput", tree_throughput),
        "throughput: user slots, by cohort": ("tput", user_throughput),
        "throughput: user slots, pooled": ("tput", user_throughput_pooled),
    }
    for k in (5, 10, 20):
        out[f"throughput: batch means k={k}"] = ("tput", lambda s, k=k: batch_throughput(s, k))
    for b in (200, 400):
        out[f"p90: tree bootstrap B={b}"] = ("itl", lambda s, b=b: tree_bootstrap_quantile(s, resamples=b))
    for k in (5, 6, 8, 10, 20):
        out[f"p90: batch means k={k}"] = ("itl", lambda s, k=k: batch_quantile(s, k))
    # The North Star: the p90 of r_i (E2E latency per output token), by the same candidates.
    out["E2E p90: tree bootstrap B=400"] = ("e2e", lambda s: tree_bootstrap_quantile(s, resamples=400, of="e2e"))
    for k in (5, 10, 20):
        out[f"E2E p90: batch means k={k}"] = ("e2e", lambda s, k=k: batch_quantile(s, k, of="e2e"))
    out["throughput: chosen (ci_method)"] = ("tput", lambda s: point_intervals(s).throughput)
    out["p90: chosen (ci_method)"] = ("itl", lambda s: point_intervals(s).itl_p90)
    out["E2E p90: chosen (ci_method)"] = ("e2e", lambda s: point_intervals(s).e2e_p90)
    return out


def study(points: list[dict[str, Any]]) -> list[str]:
    samples = [sample_from_json(p["sample"]) for p in points]
    tput = [p["figures"]["total_tokens_per_s"] for p in points]
    itl = [1.0 / p["figures"]["interactivity_p90_tokens_per_s"] for p in points]
    e2e = [1.0 / (p["figures"].get("e2e_interactivity_p90_tokens_per_s") or float("nan")) for p in points]
    values = {"tput": tput, "itl": itl, "e2e": e2e}
    lines = []
    for figure, vs in values.items():
        ref = statistics.fmean(vs)
        sd = statistics.stdev(vs)
        name = {"tput": "throughput", "itl": "p90 ITL", "e2e": "p90 r_i (E2E per token)"}[figure]
        honest = 1.96 * sd / ref
        lines.append(
            f"  {name}: mean {ref:.4g}, repeats' sd {sd / ref:.1%} of the mean -> honest half-width ~{honest:.1%}"
        )
    trees = [s.trees for s in samples]
    reqs = [s.requests for s in samples]
    lines.append(
        f"  trees per window {min(trees)}-{max(trees)} (median {statistics.median(trees):g}), "
        f"requests {min(reqs)}-{max(reqs)} (median {statistics.median(reqs):g})"
    )
    lines.append(f"  {'method':<34} {'coverage':>9} {'mean ±':>8} {'null':>5} {'ms/point':>9}")
    for name, (figure, method) in methods().items():
        ref = statistics.fmean(values[figure])
        hits, widths, nulls = 0, [], 0
        started = time.process_time()
        cis = [method(s) for s in samples]
        cost_ms = (time.process_time() - started) / len(samples) * 1000
        for ci, v in zip(cis, values[figure], strict=True):
            if ci is None:
                nulls += 1
                continue
            ci = ci.around(v)
            hits += ci.low <= ref <= ci.high
            widths.append((ci.high - ci.low) / 2 / v)
        known = len(samples) - nulls
        cover = f"{hits / known:.0%} ({hits}/{known})" if known else "n/a"
        width = f"{statistics.fmean(widths):.1%}" if widths else "n/a"
        lines.append(f"  {name:<34} {cover:>9} {width:>8} {nulls:>5} {cost_ms:>9.1f}")
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", default="4,32")
    p.add_argument("--repeats", type=int, default=40)
    p.add_argument("--warmup", type=float, default=5)
    p.add_argument("--duration", type=float, default=15)
    p.add_argument("--parallel", type=int, default=2)
    p.add_argument("--seeds", choices=("vary", "same"), default="vary")
    p.add_argument("--sim", default="h200")
    p.add_argument("--dir", type=Path, default=Path("/tmp/agentx-ci-coverage"))
    p.add_argument("--tag", default="", help="a suffix for the runs' folder (a new set of runs)")
    p.add_argument(
        "--before", type=int, default=0, help="users of a point measured first: the study's point then has two cohorts"
    )
    args = p.parse_args()
    users = [int(u) for u in args.users.split(",")]
    before = f"-after{args.before}" if args.before else ""
    folder = (
        args.dir / f"{args.sim.replace('/', '_')}-w{args.warmup:g}-d{args.duration:g}-{args.seeds}{before}{args.tag}"
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "study.yaml").write_text(WORKLOAD)
    started = time.monotonic()
    jobs = [(u, r) for u in users for r in range(args.repeats)]
    with ThreadPoolExecutor(args.parallel) as pool:
        outs = list(pool.map(lambda job: run_one(folder, job[0], job[1], args), jobs))
    print(f"{len(jobs)} runs ready in {time.monotonic() - started:.0f} s ({folder})")
    for u in users:
        points = []
        for out in outs:
            if out.name.startswith(f"u{u}-") and out.exists():
                found = json.loads(out.read_text())
                figures = found[-1]["figures"] if found else {}
                if figures.get("interactivity_p90_tokens_per_s") and figures.get("e2e_interactivity_p90_tokens_per_s"):
                    points.append(found[-1])  # the studied point: the last (after `--before`'s)
        after = f", after a point of {args.before} users" if args.before else ""
        print(
            f"\n{u} users, {len(points)} repeats of a {args.duration:g}-s point after {args.warmup:g} s warm-up{after}:"
        )
        if len(points) >= 3:
            print("\n".join(study(points)))


if __name__ == "__main__":
    main()

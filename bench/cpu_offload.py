"""What would CPU memory for KV do to our frontier and our $ per task? Two sweeps on the simulated engine,
the same sessions, without and with a CPU KV tier (docs/sim.md, "CPU KV tier").

    .venv/bin/python bench/cpu_offload.py [--profile h200/llama-3.1-8b] [--cpu-kv-gb 500] [--cpu-kv-gbps G]
                                          [--gpu-blocks N] [-w WORKLOAD] [--users 8,16,32] [--warmup 30]
                                          [--point-duration 120] [--tiers 20,30,40] [--gpu-price 2.90]
                                          [--seed 0] [--dir DIR]

Each sweep runs `agentx-tui --attach` against its own simulator (`python -m agentx_tui.sim`, with
`--cpu-kv-gb` for the second), one after the other (never together: they would share the CPU), and
writes its report as JSON and Markdown (with the report writer's pictures: the frontier, the prompt
tokens by source) in `--dir` (default /tmp/agentx-cpu-offload), reused when already there. Printed:
each point (users, throughput per GPU, the North Star p90, $ per task, the share of prompt tokens
computed / from the GPU cache / from the tier, GB/s loaded), then per tier the throughput per GPU read
on each frontier and their ratio, and $ per task over each sweep. The default workload is the
coding-agent preset with sessions of 4–6 steps, so that tasks end inside a point's window. On a whole
H200 these agents fill less than the GPU's KV cache below ~100 users, which this 2-core machine
cannot simulate in real time: `--gpu-blocks` gives both simulators a smaller GPU cache (docs/sim.md
quotes a run with 12,000 blocks, 192 K tokens). Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _serve import start_reporting_port

# The coding-agent preset's contexts (a 12 K shared prefix, 1–3 K tool results) in sessions short
# enough (4–6 steps, about a minute) that tasks begin and end inside a point's window.
WORKLOAD = """\
description: coding-agent sessions of 4-6 steps (bench/cpu_offload.py)
shared_prefix_tokens: 12000
unique_prefix_tokens: {dist: uniform, min: 200, max: 800}
first_message_tokens: {dist: lognormal, mean: 600, std: 400, min: 50, max: 3000}
steps: {dist: uniform, min: 4, max: 6}
output_tokens: {dist: normal, mean: 300, std: 100, min: 50, max: 800}
tool_result_tokens: {dist: uniform, min: 1000, max: 3000}
tool_latency_s: {dist: uniform, min: 1, max: 6}
temperature: 0.0
"""


def sweep(name: str, sim_args: list[str], args: argparse.Namespace, workload: str) -> dict[str, Any]:
    report = args.dir / f"{name}.json"
    if not report.exists():
        sim, url = start_reporting_port(
            lambda fd: [sys.executable, "-m", "agentx_tui.sim", "--port", "0", "--ready-fd", str(fd), *sim_args],
            f"the simulator ({name})",
        )
        try:
            cmd = [
                sys.executable, "-m", "agentx_tui", "--attach", url, "-w", workload, "--seed", str(args.seed),
                "--sweep", f"users={args.users}", "--warmup", str(args.warmup),
                "--point-duration", str(args.point_duration), "--tiers", args.tiers,
                "--gpu-price", str(args.gpu_price), "--gpus", "1", "--headless", "--report", str(report),
            ]  # fmt: skip
            started = time.monotonic()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=7200, check=False)
            print(f"{name}: swept in {time.monotonic() - started:.0f} s", file=sys.stderr)
        finally:
            sim.terminate()
            sim.wait(timeout=30)
    data: dict[str, Any] = json.loads(report.read_text())
    markdown = report.with_suffix(".md")
    if not markdown.exists():  # the same report with the report writer's pictures beside it
        from agentx_tui.report import Report, write_report

        write_report(markdown, Report.read(data))
    return data


def fmt(value: Any, spec: str = ",.0f") -> str:
    return "n/a" if value is None else format(value, spec)


def ratio(a: Any, b: Any) -> str:
    return "n/a" if a is None or b is None or not a else f"×{b / a:.2f}"


def points(name: str, report: dict[str, Any]) -> None:
    print(f"\n{name}: {report.get('target')}, {report.get('sweep_stop_reason')}")
    print("  users  tok/s/GPU  NS p90  $/task    computed  GPU cache  tier  load GB/s  tasks")
    for p in report.get("points") or []:
        shares = (p.get("prompt_share_computed"), p.get("prompt_share_gpu_cache"), p.get("prompt_share_offload"))
        print(
            f"  {p['users']:>5}  {fmt(p.get('total_tokens_per_s_per_gpu')):>9}  "
            f"{fmt(p.get('e2e_interactivity_p90_tokens_per_s'), '.1f'):>6}  {fmt(p.get('usd_per_task'), '.4f'):>7}  "
            + "  ".join(f"{fmt(s, '.0%'):>8}" for s in shares)
            + f"  {fmt(p.get('kv_offload_load_gb_per_s'), '.2f'):>9}  {fmt(p.get('tasks_completed'), 'd'):>5}"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--profile", default="h200/llama-3.1-8b")
    p.add_argument("--cpu-kv-gb", type=float, default=500.0)
    p.add_argument("--cpu-kv-gbps", type=float, help="the tier's link per direction (default: the profile's)")
    p.add_argument("--gpu-blocks", type=int, help="--num-gpu-blocks-override for both simulators")
    p.add_argument("-w", "--workload", help="a preset, YAML file or folder of sessions (default: see above)")
    p.add_argument("--users", default="8,16,32")
    p.add_argument("--warmup", type=float, default=30)
    p.add_argument("--point-duration", type=float, default=120)
    p.add_argument("--tiers", default="20,30,40", help="interactivity tiers, tok/s/user (North Star p90)")
    p.add_argument("--gpu-price", type=float, default=2.90, help="USD per GPU-hour")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", type=Path, default=Path("/tmp/agentx-cpu-offload"))
    args = p.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    workload = args.workload
    if workload is None:
        (args.dir / "sessions.yaml").write_text(WORKLOAD)
        workload = str(args.dir / "sessions.yaml")
    common = ["--profile", args.profile]
    if args.gpu_blocks:
        common += ["--num-gpu-blocks-override", str(args.gpu_blocks)]
    tier = ["--cpu-kv-gb", f"{args.cpu_kv_gb:g}"]
    if args.cpu_kv_gbps:
        tier += ["--cpu-kv-gbps", f"{args.cpu_kv_gbps:g}"]
    without = sweep("gpu-only", common, args, workload)
    with_tier = sweep(f"cpu-{args.cpu_kv_gb:g}gb", [*common, *tier], args, workload)
    points("without a CPU tier", without)
    points(f"with {args.cpu_kv_gb:g} GB of CPU memory for KV", with_tier)
    print("\nthroughput per GPU on the frontier at each tier (North Star p90, tok/s/user):")
    for t in without.get("tiers") or []:
        if t.get("axis") not in (None, "e2e_interactivity"):
            continue
        key = f"total_tokens_per_s_per_gpu_at_{t['tier']:g}"
        a, b = without.get(key), with_tier.get(key)
        print(f"  {t['tier']:>5g}: without {fmt(a):>7}  with {fmt(b):>7}  {ratio(a, b)}")
    a, b = without.get("usd_per_task"), with_tier.get("usd_per_task")
    print(f"$ per task over the sweep: without {fmt(a, '.4f')}  with {fmt(b, '.4f')}  {ratio(a, b)}")
    print(f"reports and pictures: {args.dir}")


if __name__ == "__main__":
    main()

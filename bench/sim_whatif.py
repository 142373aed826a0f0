"""What would speculative decoding do to our frontier, and what does the chunked-prefill budget trade? Three
short sweeps on the simulated engine, the same agent sessions each time (docs/sim.md, "What if: speculation
and the prefill budget"):

- `base`: no speculation, vLLM's default budget on H100/H200 (`--max-num-batched-tokens 8192`);
- `spec`: the same with speculative decoding (`--spec 3:2.5`: 3 draft tokens, acceptance length 2.5);
- `budget`: no speculation, a small prefill budget (`--max-num-batched-tokens 2048`).

    .venv/bin/python bench/sim_whatif.py [--profile h200/llama-3.1-8b] [--spec 3:2.5] [--budgets 8192,2048]
                                         [-w WORKLOAD] [--users 4,12,32] [--warmup 5] [--point-duration 25]
                                         [--tiers 50,70,100,150] [--seed 0] [--dir DIR] [--images DIR]

Each sweep runs `agentx-tui --attach` against its own simulator (`python -m agentx_tui.sim`), one after the
other (never together: they would share the CPU), and writes its report as JSON in `--dir` (default
/tmp/agentx-sim-whatif), reused when already there. The simulator's own /metrics is read before and
after each sweep for the acceptance length it measured (1 + Δaccepted ÷ Δdrafts). Printed: each point
(users, total tok/s per GPU, North Star p90, decode interactivity p90, TTFT p90, ITL p90 and p99), then
per tier the throughput per GPU read on each frontier, against the base's. Each sweep's frontier is drawn
by the report's own chart code (`report.write_sweep_charts`) as `sim-whatif-NAME.frontier.svg` in
`--images` (default: `--dir`). The default sweep is sized for a 2-core machine: three points of 25 s after
5 s of warm-up, about 100 s a sweep and 5 minutes in all; its windows are short, so its figures move by
a few per cent from run to run. Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from _serve import start_reporting_port

# The coding-agent preset's contexts (a 12 K shared prefix, 1–3 K tool results: prefills longer than a
# small budget) in sessions of 4–6 steps, so that tasks begin and end inside a point's window.
WORKLOAD = """\
description: coding-agent sessions of 4-6 steps (bench/sim_whatif.py)
shared_prefix_tokens: 12000
unique_prefix_tokens: {dist: uniform, min: 200, max: 800}
first_message_tokens: {dist: lognormal, mean: 600, std: 400, min: 50, max: 3000}
steps: {dist: uniform, min: 4, max: 6}
output_tokens: {dist: normal, mean: 300, std: 100, min: 50, max: 800}
tool_result_tokens: {dist: uniform, min: 1000, max: 3000}
tool_latency_s: {dist: uniform, min: 1, max: 6}
temperature: 0.0
"""
SPEC_COUNTERS = ("vllm:spec_decode_num_drafts", "vllm:spec_decode_num_accepted_tokens")


def counters(url: str) -> dict[str, float]:
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as resp:
        page = resp.read().decode()
    return {
        f.name: sum(s.value for s in f.samples if s.name.endswith("_total"))
        for f in text_string_to_metric_families(page)
        if f.name in SPEC_COUNTERS
    }


def sweep(name: str, sim_args: list[str], args: argparse.Namespace, workload: str) -> dict[str, Any]:
    report = args.dir / f"{name}.json"
    if not report.exists():
        sim, url = start_reporting_port(
            lambda fd: [sys.executable, "-m", "agentx_tui.sim", "--port", "0", "--ready-fd", str(fd), *sim_args],
            f"the simulator ({name})",
        )
        try:
            before = counters(url)
            cmd = [
                sys.executable, "-m", "agentx_tui", "--attach", url, "-w", workload, "--seed", str(args.seed),
                "--sweep", f"users={args.users}", "--warmup", str(args.warmup),
                "--point-duration", str(args.point_duration), "--tiers", args.tiers,
                "--gpus", "1", "--headless", "--report", str(report),
            ]  # fmt: skip
            started = time.monotonic()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=3600, check=False)
            print(f"{name}: swept in {time.monotonic() - started:.0f} s", file=sys.stderr)
            after = counters(url)
        finally:
            sim.terminate()
            sim.wait(timeout=30)
        drafts = after.get(SPEC_COUNTERS[0], 0.0) - before.get(SPEC_COUNTERS[0], 0.0)
        accepted = after.get(SPEC_COUNTERS[1], 0.0) - before.get(SPEC_COUNTERS[1], 0.0)
        # Beside the report (whose keys do not hold it): the acceptance length the simulator measured.
        length = 1 + accepted / drafts if drafts else None
        (args.dir / f"{name}.al.json").write_text(json.dumps({"acceptance_length": length}))
    data: dict[str, Any] = json.loads(report.read_text())
    data["_acceptance_length"] = json.loads((args.dir / f"{name}.al.json").read_text())["acceptance_length"]
    return data


def draw(name: str, label: str, data: dict[str, Any], images: Path) -> Path:
    """The sweep's frontier by the report's chart code, its configuration in the subtitle."""
    from agentx_tui.report import Report, write_sweep_charts

    report = Report.read({k: v for k, v in data.items() if not k.startswith("_")})
    report = report.model_copy(update={"workload": f"{report.workload} · {label}"})
    paths = write_sweep_charts(images / f"sim-whatif-{name}.json", report)
    for path in paths[1:]:  # the per-point chart is not what docs/sim.md shows
        path.unlink()
    return paths[0]


def fmt(value: Any, spec: str = ",.0f") -> str:
    return "n/a" if value is None else format(value, spec)


def points(label: str, report: dict[str, Any]) -> None:
    length = report["_acceptance_length"]
    measured = "" if length is None else f", acceptance length {length:.2f} on the simulator's counters"
    print(f"\n{label}{measured}")
    print("  users  tok/s/GPU  NS p90  decode p90  TTFT p90  ITL p90  ITL p99  requests")
    for p in report.get("points") or []:
        print(
            f"  {p['users']:>5}  {fmt(p.get('total_tokens_per_s_per_gpu')):>9}  "
            f"{fmt(p.get('e2e_interactivity_p90_tokens_per_s'), '.1f'):>6}  "
            f"{fmt(p.get('interactivity_p90_tokens_per_s'), '.1f'):>10}  {fmt(p.get('ttft_p90_s'), '.3f'):>8}  "
            f"{fmt(p.get('itl_p90_s'), '.4f'):>7}  {fmt(p.get('itl_p99_s'), '.4f'):>7}  "
            f"{fmt(p.get('requests_completed'), 'd'):>8}"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--profile", default="h200/llama-3.1-8b")
    p.add_argument("--spec", default="3:2.5", help="K:AL for the speculating sweep")
    p.add_argument("--budgets", default="8192,2048", help="the base's prefill budget, then the small one")
    p.add_argument("-w", "--workload", help="a preset, YAML file or folder of sessions (default: see above)")
    p.add_argument("--users", default="4,12,32")
    p.add_argument("--warmup", type=float, default=5)
    p.add_argument("--point-duration", type=float, default=25)
    p.add_argument("--tiers", default="50,70,100,150", help="interactivity tiers, tok/s/user (North Star p90)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", type=Path, default=Path("/tmp/agentx-sim-whatif"))
    p.add_argument("--images", type=Path, help="where the frontier pictures go (default: --dir)")
    args = p.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    images = args.images or args.dir
    workload = args.workload
    if workload is None:
        workload = str(args.dir / "coding-agent-short.yaml")  # its name is the charts' workload
        Path(workload).write_text(WORKLOAD)
    large, small = (int(b) for b in args.budgets.split(","))
    common = ["--profile", args.profile]
    runs = {
        "base": (f"no speculation, budget {large}", ["--max-num-batched-tokens", str(large)]),
        "spec": (f"--spec {args.spec}, budget {large}", ["--max-num-batched-tokens", str(large), "--spec", args.spec]),
        "budget": (f"no speculation, budget {small}", ["--max-num-batched-tokens", str(small)]),
    }
    reports = {name: sweep(name, [*common, *flags], args, workload) for name, (_, flags) in runs.items()}
    for name, (label, _) in runs.items():
        points(label, reports[name])
    print("\nthroughput per GPU on the frontier at each tier (North Star p90, tok/s/user), against the base:")
    base = reports["base"]
    for t in base.get("tiers") or []:
        if t.get("axis") not in (None, "e2e_interactivity"):
            continue
        key = f"total_tokens_per_s_per_gpu_at_{t['tier']:g}"
        cells = []
        for name in runs:
            value, ref = reports[name].get(key), base.get(key)
            ratio = "" if name == "base" or value is None or not ref else f" ×{value / ref:.2f}"
            cells.append(f"{name} {fmt(value):>7}{ratio:<6}")
        print(f"  {t['tier']:>5g}: " + "  ".join(cells))
    for name, (label, _) in runs.items():
        print(f"{name}: {draw(name, label, reports[name], images)}")


if __name__ == "__main__":
    main()

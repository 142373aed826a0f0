"""A tier sweep against a dense fixed grid: the same tier reads in a fraction of the GPU time (docs/sweeps.md).

    .venv/bin/python bench/tier_sweep.py [--dense 1,2,3,…] [--start 2] [--tiers 30,50,75,100]
                                         [--point-duration 150] [--warmup 40] [--probe-duration 10]
                                         [--sim h200] [-w coding-agent] [--max-think 1] [--seed 0]
                                         [--sequential] [--dir DIR] [--svg PATH]

Two headless sweeps on the built-in simulated engine, the same workload, seed, warm-up rule and point
length: a dense fixed grid (`--sweep users=<--dense>`, by default every user count from 1 to 20) and a
tier sweep (`--sweep tiers -u <--start>`). With the defaults (150-s points, 40-s warm-up cap) the grid
takes about 65 minutes.
By default they run at the same time, each with its own simulated GPU (so the bench fits its time on a
small machine; each sweep's GPU time is its own wall time × its GPUs either way); `--sequential` runs one
after the other. Printed: each sweep's points (users, warm-up, steady), the tier sweep's probes, per tier
both reads with their 95% intervals, how far apart they are and whether each lies inside the other's
interval, and the two sweeps' GPU time (`sweep_gpu_seconds`) and its ratio; the point length from which
the same plans, the probes as measured, would cost a third of the grid's; then the same two plans at
AgentX's lengths (1800-s points, 180-s probes, the warm-ups measured here), a projection from the
measured plans, not a measurement. An SVG (`--svg`) draws both
frontiers, the tier sweep's probes and the tiers. Reports are kept in `--dir` (default
/tmp/agentx-tier-sweep) and reused. Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentx_tui.report import Report
from agentx_tui.report._svg import MUTED, Linear, Svg, axes, labelled, nice_ticks, y_title
from agentx_tui.snapshot import PointFigures, ProbeRow
from agentx_tui.sweep import NORTH_STAR, SweepChart, axis_title

SRC = Path(__file__).resolve().parents[1] / "src"
DENSE = ",".join(str(users) for users in range(1, 21))  # every user count from 1 to 20
DENSE_COLOUR = "#868e96"
TIERED_COLOUR = "#1f5fa8"


def sweep(folder: Path, name: str, extra: Sequence[str], args: argparse.Namespace) -> subprocess.Popen[bytes] | None:
    """Start one sweep (None when its report is there already)."""
    if (folder / f"{name}.json").exists():
        return None
    cmd = [
        sys.executable, "-m", "agentx_tui", "--sim", args.sim, "-w", args.workload, "--max-think", str(args.max_think),
        "--seed", str(args.seed), "--warmup", str(args.warmup), "--point-duration", str(args.point_duration),
        "--tiers", args.tiers, "--headless", "--report", str(folder / f"{name}.json"), *extra,
        *(["--join", args.join] if args.join else []),
    ]  # fmt: skip
    # This checkout's code, whichever venv runs the bench.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    log = (folder / f"{name}.log").open("wb")
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)


def run(folder: Path, args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    jobs = [
        ("dense", ["--sweep", f"users={args.dense}"]),
        ("tiers", ["--sweep", "tiers", "-u", str(args.start), "--probe-duration", str(args.probe_duration)]),
    ]
    started = time.monotonic()
    running = []
    for name, extra in jobs:
        process = sweep(folder, name, extra, args)
        if process is not None:
            running.append(process)
            if args.sequential:
                process.wait(timeout=7200)
    for process in running:
        process.wait(timeout=7200)
    if running:
        print(f"ran {len(running)} sweep(s) in {time.monotonic() - started:.0f} s ({folder})")
    return tuple(json.loads((folder / f"{name}.json").read_text()) for name, _ in jobs)  # type: ignore[return-value]


def si(value: float | None) -> str:
    if value is None:
        return "n/a"
    for scale, unit in ((1e6, "M"), (1e3, "K")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}"


def read(report: dict[str, Any], tier: str) -> tuple[float | None, float | None, float | None]:
    key = f"total_tokens_per_s_per_gpu_at_{tier}"
    return report.get(key), report.get(f"{key}_ci_low"), report.get(f"{key}_ci_high")


def inside(value: float | None, low: float | None, high: float | None) -> str:
    if value is None or low is None or high is None:
        return "n/a"
    return "yes" if low <= value <= high else "no"


def show_points(name: str, report: dict[str, Any]) -> None:
    gpu_s = report.get("sweep_gpu_seconds")
    print(f"\n{name}: {len(report['points'])} points, {gpu_s:,.0f} GPU·s; {report['sweep_stop_reason']}")
    for p in report["points"]:
        steady = "steady" if p.get("steady") else "NOT steady"
        x = si(p.get("e2e_interactivity_p90_tokens_per_s"))
        print(
            f"  {p['users']:>4} users  warm-up {p['warmup_s']:5.1f} s ({steady})  {p['duration_s']:5.1f} s  "
            f"{p.get('requests') or 0:>5} req  tput {si(p.get('total_tokens_per_s_per_gpu'))}  North Star p90 {x}"
        )
    for p in report.get("probes") or ():
        print(
            f"  probe {p['index']:>2}: {p['users']:>4} users ({p['purpose']}), warm-up {p['warmup_s']:5.1f} s, "
            f"window {p['duration_s']:5.1f} s: North Star p90 {si(p.get('e2e_interactivity_p90_tokens_per_s'))}, "
            f"tput {si(p.get('total_tokens_per_s_per_gpu'))}"
        )


def compare(dense: dict[str, Any], tiered: dict[str, Any], tiers: Sequence[str]) -> None:
    print("\ntier  dense grid read [95%]        tier sweep read [95%]        apart   inside each other's")
    for tier in tiers:
        d, t = read(dense, tier), read(tiered, tier)
        apart = "n/a" if d[0] is None or t[0] is None else f"{(t[0] / d[0] - 1) * 100:+.1f}%"
        both = f"{inside(t[0], d[1], d[2])} / {inside(d[0], t[1], t[2])}"
        print(f"{tier:>4}  {si(d[0]):>6} [{si(d[1])}–{si(d[2])}]{'':8}{si(t[0]):>6} [{si(t[1])}–{si(t[2])}]{'':8}"
              f"{apart:>7}   {both}")  # fmt: skip
    dense_s, tiered_s = dense.get("sweep_gpu_seconds"), tiered.get("sweep_gpu_seconds")
    if dense_s and tiered_s:
        print(
            f"\nGPU time: dense grid {dense_s:,.0f} GPU·s ({len(dense['points'])} points), tier sweep "
            f"{tiered_s:,.0f} GPU·s ({len(tiered['points'])} points, {len(tiered.get('probes') or ())} probes): "
            f"{tiered_s / dense_s:.2f} of it"
        )
    length = third_at(dense, tiered)
    if length is not None:
        print(f"the same plans (probes as measured) cost a third of the grid's GPU time from {length:.0f}-s points")
    # The same plans at AgentX's lengths: every point 1800 s, every probe 180 s (a tenth), each warm-up as
    # measured here. A projection from the measured plans, not a measurement.
    agentx = [projected(report, 1800.0, 180.0) for report in (dense, tiered)]
    print(
        f"the same plans at AgentX's lengths (1800-s points, 180-s probes, these warm-ups): dense grid "
        f"{agentx[0]:,.0f} GPU·s, tier sweep {agentx[1]:,.0f} GPU·s: {agentx[1] / agentx[0]:.2f} of it (a projection)"
    )


def third_at(dense: dict[str, Any], tiered: dict[str, Any]) -> float | None:
    """The point length at which the tier sweep's plan, its probes as measured and each warm-up as
    measured, costs a third of the grid's GPU time (None when no length would: too many points)."""
    n_dense, n_tiered = len(dense["points"]), len(tiered["points"])
    if n_dense <= 3 * n_tiered:
        return None
    fixed = sum(p["warmup_s"] + p["duration_s"] for p in tiered.get("probes") or ())
    fixed += sum(p["warmup_s"] for p in tiered["points"])
    return max(0.0, (3 * fixed - sum(p["warmup_s"] for p in dense["points"])) / (n_dense - 3 * n_tiered))


def projected(report: dict[str, Any], point_s: float, probe_s: float) -> float:
    """GPU-seconds of the sweep's plan with points and probes of these lengths, its warm-ups as measured."""
    gpus = report.get("gpus") or 1
    steps = [(p, point_s) for p in report["points"]] + [(p, probe_s) for p in report.get("probes") or ()]
    return gpus * sum(step["warmup_s"] + length for step, length in steps)


def picture(dense: dict[str, Any], tiered: dict[str, Any], path: Path) -> None:
    """Both frontiers (the dense grid's grey, the tier sweep's blue), the tier sweep's probes (hollow
    squares), the tiers and the tier sweep's reads on them."""
    charts = []
    for data in (dense, tiered):
        report = Report.read(data)
        points = [p if isinstance(p, PointFigures) else None for p in report.points or ()]
        probes = [p for p in report.probes or () if isinstance(p, ProbeRow)]
        charts.append(SweepChart.of(points, report.frontier, report.tiers or (), NORTH_STAR, probes=probes))
    grid, tier = charts
    placed = [p for c in charts for _, p in c.placed] + list(tier.probes)
    xs = [p.interactivity_p90 for p in placed if p.interactivity_p90 is not None]
    ys = [p.throughput for p in placed if p.throughput is not None]
    box = (96.0, 78.0, 830.0, 446.0)
    title = "A tier sweep against a dense grid, on the North Star"
    svg = Svg(860, 600, title)
    gpu = [data.get("sweep_gpu_seconds") or math.nan for data in (dense, tiered)]
    svg.heading(
        box[0], title, f"{data_words(dense)} · GPU time: dense grid {gpu[0]:,.0f} GPU·s, tier sweep {gpu[1]:,.0f}"
    )
    x_ticks = nice_ticks(xs, 8, room=0.03, also=[t.tier for t in tier.tiers])
    y_ticks = nice_ticks(ys, 6)
    sx, sy = Linear(x_ticks[0], x_ticks[-1], box[0], box[2]), Linear(y_ticks[0], y_ticks[-1], box[3], box[1])
    axes(svg, sx, sy, box, labelled(x_ticks), labelled(y_ticks))
    svg.text((box[0] + box[2]) / 2, box[3] + 44, axis_title(NORTH_STAR), size=13, anchor="middle")
    y_title(svg, 24, (box[1] + box[3]) / 2, "total tokens/s per GPU (cache + input + output)")
    for t in tier.tiers:
        x = sx(t.tier)
        svg.line(x, box[1], x, box[3], MUTED, 1, "4 4")
        svg.text(x, box[1] - 8, f"{t.tier:g}", anchor="middle", fill=MUTED)
        if t.read is not None:
            svg.diamond(x, sy(t.read), 6)
    for chart, colour, width in ((grid, DENSE_COLOUR, 1.5), (tier, TIERED_COLOUR, 2.5)):
        curve = chart.curve
        if len(curve.xs) >= 2:
            svg.polyline(
                [(sx(x), sy(y)) for x, y in _sampled(curve, 60) if y is not None], colour, width
            )  # the same Steffen curve the reads are made on
        for _, p in chart.placed:
            assert p.interactivity_p90 is not None and p.throughput is not None
            x, y = sx(p.interactivity_p90), sy(p.throughput)
            if chart is grid:
                svg.circle(x, y, 3.5, fill="#ffffff", stroke=colour)
            else:
                svg.circle(x, y, 5, fill=colour, stroke="#ffffff")
                svg.text(x + 8, y - 6, str(p.users), size=11)
    for p in tier.probes:
        assert p.interactivity_p90 is not None and p.throughput is not None
        svg.square(sx(p.interactivity_p90), sy(p.throughput), 3.5, stroke=TIERED_COLOUR)
    y = box[3] + 76
    svg.circle(box[0] + 5, y - 4, 3.5, fill="#ffffff", stroke=DENSE_COLOUR)
    svg.text(box[0] + 14, y, f"dense grid ({len(dense['points'])} points) and its frontier")
    svg.circle(box[0] + 300, y - 4, 5, fill=TIERED_COLOUR, stroke="#ffffff")
    svg.text(box[0] + 310, y, f"tier sweep ({len(tiered['points'])} points; numbers: users)")
    svg.square(box[0] + 5, y + 16, 3.5, stroke=TIERED_COLOUR)
    svg.text(box[0] + 14, y + 20, f"its probes ({len(tiered.get('probes') or ())}): short windows, not points")
    svg.diamond(box[0] + 305, y + 16, 5)
    svg.text(box[0] + 314, y + 20, "the tier sweep's read at each tier")
    path.write_text(svg.render())
    print(f"\npicture: {path}")


def _sampled(curve: Any, steps: int) -> list[tuple[float, float | None]]:
    lo, hi = curve.xs[0], curve.xs[-1]
    return [(lo + (hi - lo) * k / steps, curve.at(lo + (hi - lo) * k / steps)) for k in range(steps + 1)]


def data_words(report: dict[str, Any]) -> str:
    """'coding-agent, simulated Llama-3.1-8B-Instruct'."""
    model = str(report.get("model") or "").rsplit("/", 1)[-1]
    return f"{report.get('workload')}, simulated {model or 'engine'}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dense", default=DENSE, help="the dense grid's user counts")
    p.add_argument("--start", type=int, default=2, help="the tier sweep's first probe (-u)")
    p.add_argument("--tiers", default="30,50,75,100")
    p.add_argument("--point-duration", type=float, default=150)
    p.add_argument("--warmup", type=float, default=40)
    p.add_argument("--probe-duration", type=float, default=10)
    p.add_argument("--sim", default="h200")
    p.add_argument("-w", "--workload", default="coding-agent")
    p.add_argument("--max-think", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--join", choices=("start", "midway"), help="how added users begin (default: the sweep's, midway)")
    p.add_argument("--sequential", action="store_true", help="one sweep after the other, not both at once")
    p.add_argument("--dir", type=Path, default=Path("/tmp/agentx-tier-sweep"))
    p.add_argument("--svg", type=Path, default=None, help="where to write the picture (default: in --dir)")
    args = p.parse_args()
    folder = args.dir / (
        f"{args.sim.replace('/', '_')}-{args.workload}-d{args.point_duration:g}-w{args.warmup:g}"
        f"-p{args.probe_duration:g}-t{args.max_think:g}-s{args.seed}-u{args.start}-g{len(args.dense.split(','))}"
        f"{'-j' + args.join if args.join else ''}"
    )
    folder.mkdir(parents=True, exist_ok=True)
    dense, tiered = run(folder, args)
    show_points("dense grid", dense)
    show_points("tier sweep", tiered)
    compare(dense, tiered, args.tiers.split(","))
    picture(dense, tiered, args.svg or folder / "tier_sweep.svg")


if __name__ == "__main__":
    main()

"""Soak: a long headless run against the simulated engine; is memory flat and the event loop prompt?

    .venv/bin/python bench/soak.py [--minutes 30] [--users 256] [--workload coding-agent]
                                   [--time-scale 10] [--warmup-minutes M] [--json PATH]

The simulated engine (`python -m agentx_tui.sim`) runs in a subprocess, started and stopped by the
launcher agentx-tui itself uses. This process runs what `agentx-tui --attach URL --headless` runs,
under uvloop like the app: the load driver with `--users` agent sessions, the runtime's one-second
tick (scrape, figures, cost), the report builder and the headless printer (writing to nowhere).

Warm-up. An agent session's context (and so the driver's memory for it) grows every step until the
session ends; 256 `coding-agent` sessions hold ~100K-token contexts near their ends. Memory can only be
flat once sessions end and restart, so warm-up lasts until as many sessions have ended as there are
users (or `--warmup-minutes`). `--time-scale` runs the simulated GPU faster so that this happens well
within the run (at real H200 speed on a shared 2-core machine a first `coding-agent` session lasts
longer than 30 minutes); the client then has more tokens per second to handle, not fewer.

Measured:
- memory: this process's RSS every 5 s; growth = RSS at the end / RSS when warm-up ended − 1
  (goal: within 10%); the largest RSS after warm-up and the simulator's RSS are shown too;
- event-loop lag: a task asks to sleep 50 ms over and over; the lag is how much later than asked it
  wakes (everything else on the loop delays it). p50/p99/max after warm-up (goal: p99 under 50 ms);
- what the run did (requests, tokens/s, errors) and the largest gap between ticks (should be ~1 s).

Exit code 0 when both goals are met, 1 otherwise. The machine's other work competes for the same
cores and raises the lag: run it on a quiet machine, and read the load average printed with it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import itertools
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentx_tui.cli import parse_args
from agentx_tui.engine import start_sim
from agentx_tui.load import Driver, LocalLoad, fit_to_servers
from agentx_tui.report import HeadlessPrinter, ReportBuilder
from agentx_tui.run import build_plan
from agentx_tui.run.collect import EventLog
from agentx_tui.run.live import LiveRun
from agentx_tui.run.phases import TimedRun
from agentx_tui.run.serving import open_serving
from agentx_tui.run.subscribers import Fanout
from agentx_tui.snapshot import Snapshot

LAG_PERIOD_S = 0.05
RSS_EVERY_S = 5.0
GOAL_GROWTH = 0.10
GOAL_LAG_P99_S = 0.050


def rss_mib(pid: int | str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Samples:
    lag: list[tuple[float, float]] = field(default_factory=list)  # (elapsed, lag)
    rss: list[tuple[float, float, float]] = field(default_factory=list)  # (elapsed, self MiB, sim MiB)
    ticks: list[float] = field(default_factory=list)  # elapsed of every tick


async def lag_monitor(samples: Samples, t0: float) -> None:
    # perf_counter, not loop.time(): uvloop's clock is cached per loop iteration at 1 ms resolution.
    while True:
        start = time.perf_counter()
        await asyncio.sleep(LAG_PERIOD_S)
        now = time.perf_counter()
        samples.lag.append((now - t0, now - start - LAG_PERIOD_S))


async def rss_monitor(samples: Samples, t0: float, sim_pid: int) -> None:
    while True:
        sim = rss_mib(sim_pid) if Path(f"/proc/{sim_pid}").exists() else float("nan")
        samples.rss.append((time.perf_counter() - t0, rss_mib(), sim))
        await asyncio.sleep(RSS_EVERY_S)


class SoakWatcher:
    """A subscriber of the run's tick loop (like the dashboard): records ticks, finds the warm-up's
    end, prints progress once a minute, and formats a headless line each tick (the UI's work)."""

    def __init__(self, args: argparse.Namespace, samples: Samples, t0: float, warmup_s: float | None) -> None:
        self.args, self.samples, self.t0, self.warmup_s = args, samples, t0, warmup_s
        self.printer = HeadlessPrinter(io.StringIO(), color=False)
        self.last_print = 0.0

    def publish(self, snap: Snapshot) -> None:
        elapsed = time.perf_counter() - self.t0
        self.samples.ticks.append(elapsed)
        client = snap.client
        if self.warmup_s is None and client is not None:
            ended = client.totals.sessions_completed + client.totals.sessions_ended_by_context
            if ended >= self.args.users:  # every user's state has turned over once, on average
                self.warmup_s = elapsed
        self.printer.line(snap)
        self.printer.stream = io.StringIO()  # write to nowhere, but do the formatting work
        if elapsed - self.last_print >= 60:
            self.last_print = elapsed
            done = client.totals.requests_completed if client else 0
            print(
                f"{elapsed / 60:5.1f} min  RSS {rss_mib():6.1f} MiB  requests {done}  "
                f"lag p99 (last min) {1000 * _recent_lag_p99(self.samples, elapsed):.1f} ms",
                flush=True,
            )

    def close(self) -> None:
        pass


async def soak(args: argparse.Namespace) -> dict[str, Any]:
    duration_s = args.minutes * 60
    warmup_s: float | None = args.warmup_minutes * 60 if args.warmup_minutes is not None else None
    server = await start_sim(args.profile, time_scale=args.time_scale)
    try:
        argv = ["--attach", server.url, "-w", args.workload, "-u", str(args.users), "--seed", str(args.seed)]
        plan = build_plan(parse_args([*argv, "--duration", str(duration_s), "--workers", "1", "--headless"]))
        serving = await open_serving(plan.target, api_key=None)
        workload, _ = fit_to_servers(plan.load.workload, [e.max_model_len for e in serving.endpoints], None)
        load = LocalLoad(Driver(workload, serving.endpoints, plan.load.settings))
        builder = ReportBuilder()
        samples = Samples()
        t0 = time.perf_counter()
        watcher = SoakWatcher(args, samples, t0, warmup_s)
        events = EventLog(())
        live = LiveRun(plan, serving, load, TimedRun(duration_s), Fanout([builder, watcher], events.add), events)
        monitors = [
            asyncio.create_task(lag_monitor(samples, t0)),
            asyncio.create_task(rss_monitor(samples, t0, server.process.pid)),
        ]
        await load.start()
        try:
            await live.run()
        finally:
            for task in monitors:
                task.cancel()
            await asyncio.gather(*monitors, return_exceptions=True)
            await live.close()
        report = builder.build().model_dump()
    finally:
        await asyncio.to_thread(server.stop)
    return summarise(args, samples, report, watcher.warmup_s)


def _recent_lag_p99(samples: Samples, now: float) -> float:
    return quantile([lag for t, lag in samples.lag if t >= now - 60], 0.99)


def summarise(
    args: argparse.Namespace, samples: Samples, report: dict[str, Any], warmup_s: float | None
) -> dict[str, Any]:
    if warmup_s is None:  # no turnover within the run: measure from its last third, and say so
        reached = False
        warmup_s = 2 * args.minutes * 60 / 3
    else:
        reached = True
    after = [(t, own, sim) for t, own, sim in samples.rss if t >= warmup_s]
    warm_rss = after[0][1] if after else float("nan")
    end_rss = samples.rss[-1][1] if samples.rss else float("nan")
    lags = [lag for t, lag in samples.lag if t >= warmup_s]
    # The last tick comes after the drain (up to 10 s by design): it is not a late tick.
    ticks = samples.ticks[:-1]
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    result = {
        "minutes": args.minutes,
        "users": args.users,
        "workload": args.workload,
        "warmup_s": warmup_s,
        "warmup_reached": reached,
        "rss_start_mib": samples.rss[0][1] if samples.rss else None,
        "rss_after_warmup_mib": warm_rss,
        "rss_end_mib": end_rss,
        "rss_max_after_warmup_mib": max((own for _, own, _ in after), default=None),
        "rss_growth": end_rss / warm_rss - 1 if after else None,
        "sim_rss_end_mib": samples.rss[-1][2] if samples.rss else None,
        "lag_samples": len(lags),
        "lag_p50_ms": 1000 * quantile(lags, 0.5),
        "lag_p99_ms": 1000 * quantile(lags, 0.99),
        "lag_max_ms": 1000 * max(lags, default=float("nan")),
        "tick_gap_max_s": max(gaps, default=None),
        "requests_completed": report.get("requests_completed"),
        "requests_failed": report.get("requests_failed"),
        "errors_by_kind": report.get("errors_by_kind"),
        "output_tokens_per_s": report.get("output_tokens_per_s"),
        "total_tokens_per_s": report.get("total_tokens_per_s"),
        "load_average": os.getloadavg(),
        "rss_series": [(round(t), round(own, 1), round(sim, 1)) for t, own, sim in samples.rss],
    }
    result["memory_ok"] = reached and result["rss_growth"] is not None and result["rss_growth"] <= GOAL_GROWTH
    result["lag_ok"] = result["lag_p99_ms"] < GOAL_LAG_P99_S * 1000
    return result


def print_summary(result: dict[str, Any]) -> None:
    def f(value: Any, spec: str) -> str:
        return "n/a" if value is None else format(value, spec)

    print()
    print(f"soak: {result['minutes']:g} min, {result['users']} sessions of {result['workload']} against the simulator")
    print(
        f"  memory   RSS {f(result['rss_start_mib'], '.1f')} MiB at start, "
        f"{f(result['rss_after_warmup_mib'], '.1f')} after warm-up ({result['warmup_s'] / 60:.1f} min), "
        f"{f(result['rss_end_mib'], '.1f')} at the end (max {f(result['rss_max_after_warmup_mib'], '.1f')}): "
        f"growth {f(result['rss_growth'] and 100 * result['rss_growth'], '+.1f')}%  "
        f"[goal <= {100 * GOAL_GROWTH:.0f}%: {'ok' if result['memory_ok'] else 'MISSED'}]"
    )
    print(
        f"  loop lag p50 {result['lag_p50_ms']:.1f} ms, p99 {result['lag_p99_ms']:.1f} ms, "
        f"max {result['lag_max_ms']:.1f} ms over {result['lag_samples']} samples after warm-up  "
        f"[goal p99 < {1000 * GOAL_LAG_P99_S:.0f} ms: {'ok' if result['lag_ok'] else 'MISSED'}]"
    )
    print(
        f"  run      {result['requests_completed']} requests completed, {result['requests_failed']} failed, "
        f"{f(result['output_tokens_per_s'], '.0f')} output tok/s, {f(result['total_tokens_per_s'], '.0f')} total "
        f"tok/s; largest tick gap {f(result['tick_gap_max_s'], '.2f')} s; simulator RSS "
        f"{f(result['sim_rss_end_mib'], '.0f')} MiB"
    )
    if not result["warmup_reached"]:
        print(
            "  warm-up  NOT REACHED: fewer sessions ended than there are users, so session state was still"
            " growing;\n           memory was measured over the last third. Run longer, raise --time-scale or"
            " pass --warmup-minutes."
        )
    if result["errors_by_kind"]:
        print(f"  errors   {result['errors_by_kind']}")
    load = result["load_average"]
    print(f"  machine  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30.0, help="length of the run (default 30)")
    parser.add_argument("--users", type=int, default=256, help="concurrent agent sessions (default 256)")
    parser.add_argument("--workload", default="coding-agent", help="preset or file (default coding-agent)")
    parser.add_argument("--profile", default="h200/llama-3.1-8b", help="simulator profile")
    parser.add_argument(
        "--time-scale",
        type=float,
        default=10.0,
        help="run the simulated GPU N× faster, so that sessions end and restart within the run (default 10)",
    )
    parser.add_argument(
        "--warmup-minutes",
        type=float,
        default=None,
        help="default: until as many sessions have ended as there are users (session state has turned over)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures (and the RSS series) here")
    args = parser.parse_args()
    try:
        import uvloop

        runner = asyncio.Runner(loop_factory=uvloop.new_event_loop)
    except ImportError:  # pragma: no cover - not on Windows
        runner = asyncio.Runner()
    with runner, contextlib.suppress(KeyboardInterrupt):
        result = runner.run(soak(args))
        print_summary(result)
        if args.json:
            args.json.write_text(json.dumps(result, indent=2) + "\n")
        return 0 if result["memory_ok"] and result["lag_ok"] else 1
    return 130


if __name__ == "__main__":
    raise SystemExit(main())

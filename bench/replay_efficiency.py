"""Client cost of replaying real agent sessions: the whole AgentX (Weka) folder against the synthetic
`coding-agent` preset, in the same run, on the built-in simulated engine.

    .venv/bin/python bench/replay_efficiency.py [--users 256] [--seconds 40] [--traces PATH]

For each workload the real `Driver` (under uvloop, as the app runs it) drives `--users` sessions
against one simulated engine for `--seconds`; the first quarter is left out as warm-up. Printed per
workload: streamed output tokens/s, requests/s, the client's CPU per streamed token and per request
(user + system time of this process over the window), and its event-loop lag (a 100 ms timer's
lateness: p50, p99, max). The simulator runs in its own process, pinned to another core where the
machine has one, with a faster simulated GPU (`--time-scale`) so that the client, not the engine,
is what is measured. Replay builds each call's prompt from its recorded hash blocks (thousands of
64-token blocks at full scale), which is the work this compares.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

from agentx_tui.engine import probe_server, start_sim
from agentx_tui.load import Driver, LoadSettings, fit_to_servers, prepare_workload

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TRACES = ROOT.parent / "shared" / "traces" / "agentx-weka"


def _pin(cpu: int) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {cpu})


async def _lag_probe(samples: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        due = time.monotonic() + 0.1
        await asyncio.sleep(0.1)
        samples.append(max(0.0, time.monotonic() - due))


async def _measure(name: str, workload: str, url: str, users: int, seconds: float, scale: float | None) -> None:
    info = await probe_server(url)
    prepared = prepare_workload(workload, scale=scale)
    prepared, note = fit_to_servers(prepared, [info.max_model_len], scale)
    if note:
        print(f"  ({note})", file=sys.stderr)
    driver = Driver(prepared, [info], LoadSettings(users=users, seed=1, max_think_s=1.0))
    lags: list[float] = []
    stop = asyncio.Event()
    await driver.start()
    probe = asyncio.create_task(_lag_probe(lags, stop))
    assert driver.stats is not None
    await asyncio.sleep(seconds / 4)
    t0, cpu0 = time.monotonic(), sum(os.times()[:2])
    out0, req0 = driver.stats.output_tokens, driver.stats.run.requests
    lag0 = len(lags)
    await asyncio.sleep(seconds * 3 / 4)
    wall, cpu = time.monotonic() - t0, sum(os.times()[:2]) - cpu0
    tokens, requests = driver.stats.output_tokens - out0, driver.stats.run.requests - req0
    window = sorted(lags[lag0:])
    stop.set()
    await probe
    await driver.stop()
    p = (lambda q: window[min(len(window) - 1, int(q * len(window)))] * 1000) if window else (lambda q: float("nan"))
    print(
        f"{name:<13} {users:>5} {tokens / wall:>10,.0f} {requests / wall:>7.1f} "
        f"{cpu / max(tokens, 1) * 1e6:>9.1f} {cpu / max(requests, 1) * 1e3:>9.2f} {cpu / wall:>6.2f} "
        f"{p(0.5):>6.1f} {p(0.99):>6.1f} {max(window, default=0) * 1000:>7.1f}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--traces", type=Path, default=DEFAULT_TRACES)
    parser.add_argument("--time-scale", type=float, default=8.0, help="simulated GPU speed-up (default 8)")
    args = parser.parse_args()
    if not args.traces.is_dir():
        raise SystemExit(f"no AgentX traces at {args.traces}: pass --traces PATH")
    sim = await start_sim("h200/llama-3.1-8b", time_scale=args.time_scale)
    try:
        pid = sim.process.pgid  # the simulator leads its own process group
        if (os.cpu_count() or 1) > 1:
            os.sched_setaffinity(pid, {0})
            _pin(1)
        print(f"simulated engine at {sim.url} (pid {pid}, time scale {args.time_scale:g}); client pid {os.getpid()}")
        print(
            f"{'workload':<13} {'users':>5} {'out tok/s':>10} {'req/s':>7} {'µs/token':>9} {'ms/req':>9} "
            f"{'cores':>6} {'lag50':>6} {'lag99':>6} {'lagmax':>7}   (lag in ms)"
        )
        await _measure("agentx-weka", str(args.traces), sim.url, args.users, args.seconds, None)
        await _measure("coding-agent", "coding-agent", sim.url, args.users, args.seconds, None)
    finally:
        sim.stop()


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.run(main())
    except ImportError:
        asyncio.run(main())

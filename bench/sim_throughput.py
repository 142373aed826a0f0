"""How many streamed tokens/s the simulated engine serves on one core, and the calibration table.

    .venv/bin/python bench/sim_throughput.py [--clients 64] [--duration 10] [--time-scale 20]

The simulator runs in its own process, pinned to one CPU; the load (aiohttp streaming clients, the
client the driver uses) runs in this process on the other CPUs. ``--time-scale`` speeds the simulated
GPU up so that the serving path, not the simulated GPU, is what limits the rate. Reported:
- streamed tokens/s at the client (wall clock) and events/s;
- server CPU seconds used (from /proc) and tokens per server CPU-second, i.e. what one core sustains.
Then the calibration table (published vLLM figures against the engine model) and per-profile figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

from _serve import start_reporting_port
from agentx_tui.sim.calibration import calibration_rows, profile_figures

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def start_server(profile: str, time_scale: float, cpu: int | None) -> tuple[subprocess.Popen[bytes], str]:
    def cmd(ready_fd: int) -> list[str]:
        return [sys.executable, "-m", "agentx_tui.sim", "--port", "0", "--ready-fd", str(ready_fd),
                "--profile", profile, "--time-scale", str(time_scale)]  # fmt: skip

    def pin() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})

    return start_reporting_port(cmd, "the simulator", preexec_fn=pin)


async def client(session: aiohttp.ClientSession, url: str, stop: float, tokens: int, out: list[int]) -> None:
    body = {
        "messages": [{"role": "user", "content": "stream tokens as fast as you can " * 8}],
        "max_tokens": tokens,
        "min_tokens": tokens,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    while time.monotonic() < stop:
        async with session.post(f"{url}/v1/chat/completions", json=body) as resp:
            async for raw in resp.content:
                if not raw.startswith(b"data: {"):
                    continue
                out[1] += 1
                if b'"usage"' in raw:
                    out[0] += json.loads(raw[6:])["usage"]["completion_tokens"]


async def load(url: str, clients: int, duration: float, tokens: int) -> tuple[int, int, float]:
    counts = [0, 0]
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None)) as s:
        await (await s.get(f"{url}/health")).read()
        start = time.monotonic()
        await asyncio.gather(*(client(s, url, start + duration, tokens, counts) for _ in range(clients)))
        elapsed = time.monotonic() - start
    return counts[0], counts[1], elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--tokens", type=int, default=512, help="output tokens per request")
    parser.add_argument("--time-scale", type=float, default=20.0)
    parser.add_argument("--profile", default="h200/llama-3.1-8b")
    parser.add_argument("--skip-load", action="store_true", help="only print the calibration table")
    args = parser.parse_args()

    if not args.skip_load:
        cpus = sorted(os.sched_getaffinity(0))
        server_cpu = cpus[0] if len(cpus) > 1 else None
        if server_cpu is not None:
            os.sched_setaffinity(0, set(cpus[1:]))
        proc, url = start_server(args.profile, args.time_scale, server_cpu)
        try:
            try:
                import uvloop

                runner = uvloop.run
            except ImportError:
                runner = asyncio.run
            cpu0 = cpu_seconds(proc.pid)
            tokens, events, elapsed = runner(load(url, args.clients, args.duration, args.tokens))
            server_cpu_s = cpu_seconds(proc.pid) - cpu0
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)
        print(
            f"profile {args.profile}, time scale {args.time_scale:g}, {args.clients} streaming clients "
            f"(aiohttp), {args.tokens} tokens per request, server pinned to CPU {server_cpu}"
        )
        print(f"  streamed tokens/s (client wall clock)  {tokens / elapsed:12,.0f}")
        print(f"  SSE events/s                           {events / elapsed:12,.0f}")
        print(f"  tokens per event                       {tokens / max(events, 1):12.1f}")
        print(f"  server CPU use                         {server_cpu_s / elapsed:12.0%} of one core")
        print(f"  tokens per server CPU-second           {tokens / max(server_cpu_s, 1e-9):12,.0f}")
        print()

    print("Calibration against published vLLM figures (engine model replayed in simulated time)")
    print(f"  {'case':<16} {'profile':<19} {'figure':<46} {'published':>10} {'sim':>10} {'error':>7}")
    for row in calibration_rows():
        print(
            f"  {row.id:<16} {row.profile:<19} {row.figure:<46} {row.published:>10.4g} "
            f"{row.simulated:>10.4g} {row.error:>+7.1%}"
        )
    print()
    print("Per-profile figures of the time model")
    print(f"  {'profile':<22} {'single-user ITL (1K ctx)':>26} {'peak output tok/s (1K/1K)':>27}")
    for name, itl, peak in profile_figures():
        print(f"  {name:<22} {itl * 1000:>23.2f} ms {peak:>27,.0f}")


if __name__ == "__main__":
    main()

"""Client CPU per streamed token: agentx-tui's load driver against `vllm bench serve` and AIPerf 0.13.

    .venv/bin/python bench/driver_efficiency.py [--streams 64,512] [--rate 2000] [--clients agentx,vllm,...]

About 5 minutes with the defaults (plus about a minute, once, to install AIPerf).

One fast local streaming server (bench/_serve.py, in its own process) answers every client
alike: OpenAI chat completions streamed as vLLM streams them, one SSE event per token in vLLM's chunk
format, every request exactly as long as its `max_tokens` / `max_completion_tokens` asks. It paces
tokens like an engine's decode steps: every step, each open stream gets its next token. The step
length is `streams / rate`, so each client sees the same aggregate token rate, low enough for the
clients to keep up: a client that lags gets several events per socket read and looks cheaper than it
is. The achieved tok/s column shows whether each kept up (AIPerf falls a little behind, which if
anything flatters its figures).

Each client runs as its own process tree, closed loop with N requests in flight:
- agentx-tui: the real `Driver` (under uvloop, as the app runs it) with one-step sessions of the same
  input and output lengths, so it builds, sends and parses the same requests as the others; and the
  same again on asyncio's own loop (`agentx-asyncio`), the loop `vllm bench serve` runs on;
- `vllm bench serve` from the vLLM environment (random dataset, tiny model's tokenizer);
- AIPerf 0.13, installed by this script into its own environment (see --aiperf-env).

CPU is user + system time of the client's whole process tree (from /proc), read every 0.2 s. Start-up
(imports, tokenizers, datasets, calibration) and wind-down are left out: the figures cover only the
window in which the server streamed the middle 70% of the run's tokens (15% to 85%), counted by the
server (bench/_common.py). CPU per request is that CPU over the requests the server finished in the
window.

Everything runs on this machine's cores, which other work shares: CPU time (not wall time) is what is
compared, so contention matters less, but it is not zero (caches, scheduling); the machine's busy
cores during each window are printed so a noisy run shows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from _common import (
    Window,
    client_parsers,
    measure_window,
    one_step_workload,
    raise_fd_limit,
    vllm_bench_cmd,
    vllm_python_and_tokenizer,
)
from _serve import MODEL, StreamServer, run_fast, start_stream_server

AIPERF_VERSION = "0.13.0"

# ---------------------------------------------------------------------------------------------------
# agentx-tui's driver as a client (`agentx-client` mode)
# ---------------------------------------------------------------------------------------------------


async def agentx_client(url: str, streams: int, requests: int, input_tokens: int, output_tokens: int) -> None:
    from agentx_tui.engine import ServerInfo
    from agentx_tui.load import Driver, LoadSettings

    # One-step sessions: every request is a fresh prompt of `input_tokens`, like the peers' datasets.
    workload = one_step_workload(input_tokens, output_tokens, sessions=requests)
    driver = Driver(workload, [ServerInfo(url, MODEL)], LoadSettings(users=streams, seed=1))
    await driver.start()
    while not driver.finished:
        await asyncio.sleep(0.2)
    await driver.stop()
    totals = driver.figures(time.monotonic()).totals
    print(json.dumps({"completed": totals.requests_completed, "failed": totals.requests_failed}))


# ---------------------------------------------------------------------------------------------------
# The orchestrator
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    streams: int
    requests: int
    input_tokens: int
    output_tokens: int
    rate: float

    @property
    def step_s(self) -> float:
        return self.streams / self.rate

    @property
    def tokens(self) -> int:
        return self.requests * self.output_tokens


@dataclass(frozen=True)
class Result:
    client: str
    plan: Plan
    cpu_s: float
    tokens: int
    requests: int
    wall_s: float
    server_cpu_s: float
    machine_busy_cores: float
    request_bytes: float  # mean request body size the client sent
    error: str | None = None

    @property
    def us_per_token(self) -> float:
        return self.cpu_s / self.tokens * 1e6 if self.tokens else float("nan")

    @property
    def ms_per_request(self) -> float:
        return self.cpu_s / self.requests * 1e3 if self.requests else float("nan")


def measure(name: str, cmd: list[str], plan: Plan, server: StreamServer, log: Path, timeout_s: float) -> Result:
    """Run one client to its end; CPU and tokens over the window of the middle of its tokens."""
    window = measure_window(cmd, plan.tokens, server, log, timeout_s)
    if not isinstance(window, Window):
        return Result(name, plan, 0.0, 0, 0, 0.0, 0.0, 0.0, 0.0, window)
    return Result(
        client=name,
        plan=plan,
        cpu_s=window.cpu_s,
        tokens=window.tokens,
        requests=window.requests,
        wall_s=window.wall_s,
        server_cpu_s=window.server_cpu_s,
        machine_busy_cores=window.machine_busy_cores,
        request_bytes=window.request_bytes,
    )


def _vllm_cmd(python: str, tokenizer: Path, url: str, plan: Plan) -> list[str]:
    return vllm_bench_cmd(
        python,
        tokenizer,
        url,
        streams=plan.streams,
        requests=plan.requests,
        input_tokens=plan.input_tokens,
        output_tokens=plan.output_tokens,
    )


def _aiperf_cmd(env: Path, tokenizer: Path, url: str, plan: Plan, artifacts: Path) -> list[str]:
    return [
        str(env / "bin" / "aiperf"), "profile", "--model", MODEL, "--url", url, "--endpoint-type", "chat",
        "--streaming", "--concurrency", str(plan.streams), "--request-count", str(plan.requests),
        "--isl", str(plan.input_tokens), "--isl-stddev", "0", "--osl", str(plan.output_tokens),
        "--osl-stddev", "0", "--extra-inputs", "ignore_eos:true", "--tokenizer", str(tokenizer),
        "--ui", "none", "--no-server-metrics", "--no-gpu-telemetry", "--random-seed", "1",
        "--artifact-dir", str(artifacts),
    ]  # fmt: skip


def _agentx_cmd(url: str, plan: Plan, loop: str) -> list[str]:
    return [
        sys.executable, __file__, "agentx-client", "--url", url, "--streams", str(plan.streams),
        "--requests", str(plan.requests), "--input-tokens", str(plan.input_tokens),
        "--output-tokens", str(plan.output_tokens), "--loop", loop,
    ]  # fmt: skip


def ensure_aiperf(env: Path) -> Path:
    """AIPerf in its own virtual environment (its pins are not the project's); installed once."""
    aiperf = env / "bin" / "aiperf"
    if aiperf.exists():
        got = subprocess.run([str(env / "bin" / "pip"), "show", "aiperf"], capture_output=True, text=True)
        if f"Version: {AIPERF_VERSION}" in got.stdout:
            return env
    print(f"installing aiperf=={AIPERF_VERSION} into {env} (about a minute, once) ...", flush=True)
    env.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(env)], check=True)
    subprocess.run([str(env / "bin" / "pip"), "install", "--quiet", f"aiperf=={AIPERF_VERSION}"], check=True)
    return env


def _default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentx-tui"


LABELS = {
    "agentx": "agentx-tui driver",  # under uvloop, as the app runs it
    "agentx-asyncio": "agentx-tui, asyncio",  # the same on asyncio's own loop, as vllm bench serve runs
    "vllm": "vllm bench serve",
    "aiperf": f"aiperf {AIPERF_VERSION}",
}
PEERS = ("vllm", "aiperf")


def print_table(results: Sequence[Result]) -> None:
    header = (
        f"{'streams':>7}  {'client':<20} {'CPU s/M tok':>11} {'CPU ms/req':>10} "
        f"{'vs best peer':>12} {'tok/s':>7} {'window':>7} {'req bytes':>9} {'server CPU':>10} {'busy cores':>10}"
    )
    print(header)
    print("-" * len(header))
    for streams in sorted({r.plan.streams for r in results}):
        rows = [r for r in results if r.plan.streams == streams]
        peers = [r.us_per_token for r in rows if r.client in PEERS and r.error is None]
        best = min(peers) if peers else None
        for r in rows:
            if r.error is not None:
                print(f"{streams:>7}  {LABELS[r.client]:<20} failed: {r.error}")
                continue
            ratio = f"{r.us_per_token / best:.2f}x" if best else "-"
            print(
                f"{streams:>7}  {LABELS[r.client]:<20} {r.us_per_token:>11.1f} "
                f"{r.ms_per_request:>10.2f} {ratio:>12} {r.tokens / r.wall_s:>7.0f} {r.wall_s:>6.1f}s "
                f"{r.request_bytes:>9.0f} {r.server_cpu_s / r.wall_s:>9.0%} {r.machine_busy_cores:>10.2f}"
            )
    for streams in sorted({r.plan.streams for r in results}):
        ours = next((r for r in results if r.plan.streams == streams and r.client == "agentx" and not r.error), None)
        peers = [r for r in results if r.plan.streams == streams and r.client in PEERS and r.error is None]
        if ours is not None and peers:
            best = min(peers, key=lambda r: r.us_per_token)
            verdict = "met" if ours.us_per_token < best.us_per_token else "NOT met"
            print(
                f"goal at {streams} streams (less CPU per token than the best peer, {LABELS[best.client]}): "
                f"{verdict} ({ours.us_per_token:.1f} vs {best.us_per_token:.1f} µs per token)"
            )
    print(
        "CPU s/M tok = CPU seconds per million streamed tokens (= µs per token); CPU ms/req = window CPU over "
        "the requests finished in it; "
        "vs best peer = µs/token over the lower of vllm bench serve and AIPerf (below 1 is better); "
        "tok/s = streamed in the window (the server's pace: a client that lags shows less); "
        "server CPU = the server's share of one core; busy cores = the whole machine's, of "
        f"{os.cpu_count()}."
    )


def orchestrate(args: argparse.Namespace) -> None:
    raise_fd_limit()
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    unknown = set(clients) - set(LABELS)
    if unknown:
        raise SystemExit(f"unknown client(s) {sorted(unknown)}; choose from {', '.join(LABELS)}")
    vllm_python = None
    tokenizer: Path | None = None
    if "vllm" in clients or "aiperf" in clients:
        vllm_python, tokenizer = vllm_python_and_tokenizer()
    aiperf_env = ensure_aiperf(Path(args.aiperf_env)) if "aiperf" in clients else None
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="driver-eff-") as tmp:
        for streams in [int(s) for s in args.streams.split(",")]:
            plan = Plan(
                streams=streams,
                requests=streams * (args.rounds_64 if streams <= 64 else args.rounds_many),
                input_tokens=args.input_tokens,
                output_tokens=args.output_tokens if streams <= 64 else args.output_tokens_many,
                rate=args.rate,
            )
            print(
                f"\n{streams} streams: {plan.requests} requests of {plan.input_tokens} -> {plan.output_tokens} "
                f"tokens, one token per stream every {plan.step_s * 1e3:.0f} ms ({plan.rate:.0f} tok/s in all)",
                flush=True,
            )
            server = start_stream_server(plan.step_s)
            try:
                for client in clients:
                    if client in ("agentx", "agentx-asyncio"):
                        cmd = _agentx_cmd(server.url, plan, "asyncio" if client == "agentx-asyncio" else "uvloop")
                    elif client == "vllm":
                        assert vllm_python is not None and tokenizer is not None
                        cmd = _vllm_cmd(vllm_python, tokenizer, server.url, plan)
                    else:
                        assert aiperf_env is not None and tokenizer is not None
                        cmd = _aiperf_cmd(aiperf_env, tokenizer, server.url, plan, Path(tmp) / f"aiperf-{streams}")
                    log = Path(tmp) / f"{client}-{streams}.log"
                    timeout = 120 + 2 * plan.tokens / plan.rate
                    result = measure(client, cmd, plan, server, log, timeout)
                    results.append(result)
                    status = result.error or f"{result.us_per_token:.1f} µs CPU/token"
                    print(f"  {LABELS[client]:<20} {status}", flush=True)
            finally:
                server.stop()
    print()
    print_table(results)


def main(argv: Sequence[str] | None = None) -> None:
    parser, cli = client_parsers(__doc__, "(internal) agentx-tui's driver as a client")
    cli.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    parser.add_argument("--streams", default="64,512", help="concurrent streams, comma-separated")
    parser.add_argument("--clients", default=",".join(LABELS), help=f"of: {', '.join(LABELS)}")
    parser.add_argument("--rate", type=float, default=2000.0, help="tokens/s the server streams in all")
    parser.add_argument("--input-tokens", type=int, default=128)
    parser.add_argument("--output-tokens", type=int, default=128, help="per request, at up to 64 streams")
    parser.add_argument("--output-tokens-many", type=int, default=48, help="per request, above 64 streams")
    parser.add_argument("--rounds-64", type=int, default=5, help="requests per stream, at up to 64 streams")
    parser.add_argument("--rounds-many", type=int, default=3, help="requests per stream, above 64 streams")
    parser.add_argument("--aiperf-env", default=str(_default_cache() / "bench-aiperf"))
    args = parser.parse_args(argv)
    if args.mode == "agentx-client":
        client = agentx_client(args.url, args.streams, args.requests, args.input_tokens, args.output_tokens)
        if args.loop == "asyncio":
            asyncio.run(client)
        else:
            run_fast(client)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()

"""What the proxy (`--proxy`) costs: TTFT it adds (p50, p99) and its CPU per streamed token, at 1, 64 and
512 concurrent streams, beside a direct connection to the same upstream in the same run.

    .venv/bin/python bench/proxy_overhead.py [--streams 1,64,512] [--rate 3000] [--capture]

About two minutes with the defaults. Prints figures; asserts nothing.

Three processes, as in a real deployment: a streaming upstream, the proxy (`LiveProxy`: forwarding,
session tracking, statistics; with `--capture` also tokenizing and hashing every prompt), and a client
of N concurrent agent loops (each resends its growing history, as an agent does). Each point runs the
client twice, straight at the upstream and then through the proxy.

The upstream is a minimal aiohttp streaming server in this file, not the simulator: at 512 streams the
simulator itself needs most of a core (bench/sim_saturation.py), which on a 2-core machine would leave
the proxy and the client fighting it for CPU and blur what is measured. It paces tokens like an
engine's decode steps (every `streams / rate` seconds each open stream gets its next token, one SSE
event in vLLM's shape) and stamps each event with the time it wrote it (`created`, in monotonic
nanoseconds; the role event carries the time the request arrived): so the client can split its TTFT
into what the network path took and what the engine's pacing took, and the pacing (up to a whole
decode step: 256 ms at 512 streams) does not drown the proxy's share.

- TTFT added = (request path + first-token path) through the proxy − the same direct, at p50 and p99,
  where request path = the upstream got the request − the client sent it, and first-token path = the
  client read the first content event − the upstream wrote it.
- CPU per token = the proxy process's user + system CPU over the measured window / the tokens the
  upstream streamed in it (the first seconds of each run, connection set-up included, are left out).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from _common import TreeCpu, machine_busy, raise_fd_limit
from _serve import get_json, run_fast, start_reporting_port

MODEL = "bench-upstream"
WORDS = [
    "agent",
    "reads",
    "file",
    "calls",
    "tool",
    "writes",
    "tests",
    "patch",
    "build",
    "index",
    "cache",
    "query",
    "token",
    "stream",
    "value",
]

# ---------------------------------------------------------------------------------------------------
# The upstream
# ---------------------------------------------------------------------------------------------------


async def upstream(port_fd: int, step_s: float) -> None:
    from aiohttp import web

    stats = {"tokens": 0, "requests": 0}
    loop = asyncio.get_running_loop()
    tick: asyncio.Future[None] = loop.create_future()

    async def clock() -> None:
        nonlocal tick
        next_at = loop.time()
        while True:
            next_at += step_s
            await asyncio.sleep(max(0.0, next_at - loop.time()))
            fired, tick = tick, loop.create_future()
            fired.set_result(None)

    def event(created: int, delta: str, finish: str = "null") -> bytes:
        return (
            f'data: {{"id":"chatcmpl-b","object":"chat.completion.chunk","created":{created},"model":"{MODEL}",'
            f'"choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{finish}}}]}}\n\n'
        ).encode()

    async def chat(request: web.Request) -> web.StreamResponse:
        arrived = time.monotonic_ns()
        body = json.loads(await request.read())
        out = int(body.get("max_tokens") or 16)
        prompt = sum(len(str(m.get("content", "")).split()) + 4 for m in body["messages"])
        stats["requests"] += 1
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(event(arrived, '{"role":"assistant","content":""}'))
        try:
            for i in range(out):
                await tick
                last = i == out - 1
                data = event(
                    time.monotonic_ns(), f'{{"content":" {WORDS[i % len(WORDS)]}"}}', '"length"' if last else "null"
                )
                if last:
                    usage = {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out,
                             "prompt_tokens_details": {"cached_tokens": 0}}  # fmt: skip
                    data += f'data: {{"choices":[],"usage":{json.dumps(usage)}}}\n\ndata: [DONE]\n\n'.encode()
                await resp.write(data)
                stats["tokens"] += 1
            await resp.write_eof()
        except ConnectionResetError:
            pass
        return resp

    async def tokenize(request: web.Request) -> web.Response:
        body = await request.json()
        words = " ".join(str(m.get("content", "")) for m in body.get("messages", [])).split()
        ids = [hash(w) % 50_000 for w in words]
        return web.json_response({"count": len(ids), "tokens": ids, "max_model_len": 1_000_000})

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": MODEL, "max_model_len": 1_000_000}]})

    async def bench_stats(request: web.Request) -> web.Response:
        return web.json_response(stats)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/tokenize", tokenize)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/bench/stats", bench_stats)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    os.write(port_fd, f"{port}\n".encode())
    os.close(port_fd)
    clock_task = asyncio.create_task(clock())
    try:
        await asyncio.Event().wait()
    finally:
        clock_task.cancel()
        await runner.cleanup()


# ---------------------------------------------------------------------------------------------------
# The proxy, in its own process, as a run hosts it (under uvloop)
# ---------------------------------------------------------------------------------------------------


async def proxy(port_fd: int, upstream_url: str, capture: str | None, bare: bool) -> None:
    """`LiveProxy` as a run hosts it; `bare`: only the forwarding (`ProxyServer` with no observer)."""
    from agentx_tui.measure import ClientStats
    from agentx_tui.proxy import LiveProxy, ProxyServer

    if bare:
        server = ProxyServer(upstream_url)
        await server.start()
        port, close = server.port, server.close
    else:
        stats = ClientStats(10.0, time.monotonic())
        live = LiveProxy(upstream_url, sink=stats, capture_dir=Path(capture) if capture else None, model=MODEL)
        await live.start()
        port, close = live.server.port, live.close
    os.write(port_fd, f"{port}\n".encode())
    os.close(port_fd)
    try:
        await asyncio.Event().wait()
    finally:
        await close()


# ---------------------------------------------------------------------------------------------------
# The client: N agent loops, closed loop
# ---------------------------------------------------------------------------------------------------


async def client(url: str, streams: int, out_tokens: int, seconds: float, warmup: float) -> None:
    import aiohttp

    rng = random.Random(1)
    started = time.monotonic()
    window = (started + warmup, started + warmup + seconds)
    samples: list[tuple[float, float]] = []  # (request path, first-token path) in seconds
    errors = 0

    def text(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    async def agent(http: aiohttp.ClientSession, n: int) -> None:
        nonlocal errors
        system = {"role": "system", "content": f"agent {n}. " + text(200)}
        history: list[dict[str, str]] = []
        while time.monotonic() < window[1]:
            if not history or len(history) > 14:
                history = [system, {"role": "user", "content": text(40)}]
            body = {"model": MODEL, "messages": history, "max_tokens": out_tokens, "stream": True,
                    "stream_options": {"include_usage": True}}  # fmt: skip
            sent = time.monotonic_ns()
            arrived_upstream = first_written = first_read = None
            buf = b""
            try:
                async with http.post(url + "/v1/chat/completions", json=body) as resp:
                    while data := await resp.content.readany():
                        now = time.monotonic_ns()
                        if first_read is not None:
                            continue
                        buf += data
                        while b"\n\n" in buf:
                            event, buf = buf.split(b"\n\n", 1)
                            stamp = json.loads(event[5:])["created"] if event.startswith(b"data: {") else None
                            if arrived_upstream is None:
                                arrived_upstream = stamp
                            elif stamp is not None and first_read is None:
                                first_written, first_read = stamp, now
                                break
            except aiohttp.ClientError:
                errors += 1
                continue
            if arrived_upstream and first_written and first_read and window[0] <= first_read / 1e9 <= window[1]:
                samples.append(((arrived_upstream - sent) / 1e9, (first_read - first_written) / 1e9))
            history = [
                *history,
                {"role": "assistant", "content": text(out_tokens)},
                {"role": "user", "content": text(30)},
            ]

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        await asyncio.gather(*(agent(http, n) for n in range(streams)))
    print(json.dumps({"samples": samples, "errors": errors}))


# ---------------------------------------------------------------------------------------------------
# The orchestrator
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    streams: int
    mode: str  # "direct" or "proxy"
    request_path: list[float]
    token_path: list[float]
    proxy_cpu_s: float
    proxy_wait_s: float  # the proxy's main thread was runnable but had no CPU (other work had it)
    busy_cores: float  # the whole machine's, over the window
    tokens: int
    wall_s: float
    errors: int

    @property
    def ttft_path(self) -> list[float]:
        return [a + b for a, b in zip(self.request_path, self.token_path, strict=True)]


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def run_client(
    mode: str,
    url: str,
    streams: int,
    out_tokens: int,
    args: argparse.Namespace,
    proxy_pid: int | None,
    upstream_url: str,
) -> Run:
    cmd = [sys.executable, __file__, "client", "--url", url, "--streams", str(streams), "--out-tokens",
           str(out_tokens), "--seconds", str(args.seconds), "--warmup", str(args.warmup)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    cpu = TreeCpu(proxy_pid) if proxy_pid is not None else None
    time.sleep(args.warmup)
    c0, s0, t0 = (cpu.read() if cpu else 0.0), get_json(upstream_url + "/bench/stats")["tokens"], time.monotonic()
    w0, m0 = (cpu.wait_s if cpu else 0.0), machine_busy()
    time.sleep(args.seconds)
    c1, s1, t1 = (cpu.read() if cpu else 0.0), get_json(upstream_url + "/bench/stats")["tokens"], time.monotonic()
    w1, m1 = (cpu.wait_s if cpu else 0.0), machine_busy()
    out, _ = proc.communicate(timeout=args.seconds + 120)
    result = json.loads(out.strip().splitlines()[-1])
    samples = result["samples"]
    return Run(
        streams=streams,
        mode=mode,
        request_path=[a for a, _ in samples],
        token_path=[b for _, b in samples],
        proxy_cpu_s=c1 - c0,
        proxy_wait_s=w1 - w0,
        busy_cores=(m1[0] - m0[0]) / (m1[1] - m0[1]) * (os.cpu_count() or 1),
        tokens=s1 - s0,
        wall_s=t1 - t0,
        errors=result["errors"],
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="mode")
    up = sub.add_parser("upstream")
    up.add_argument("--port-fd", type=int, required=True)
    up.add_argument("--step-s", type=float, required=True)
    px = sub.add_parser("proxy")
    px.add_argument("--port-fd", type=int, required=True)
    px.add_argument("--upstream", required=True)
    px.add_argument("--capture")
    px.add_argument("--bare", action="store_true")
    cl = sub.add_parser("client")
    cl.add_argument("--url", required=True)
    cl.add_argument("--streams", type=int, required=True)
    cl.add_argument("--out-tokens", type=int, required=True)
    cl.add_argument("--seconds", type=float, required=True)
    cl.add_argument("--warmup", type=float, required=True)
    parser.add_argument("--streams", default="1,64,512")
    parser.add_argument("--rate", type=float, default=2000.0, help="tokens/s the upstream streams in all")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--capture", action="store_true", help="the proxy also captures (tokenize + hash)")
    args = parser.parse_args(argv)
    if args.mode == "upstream":
        run_fast(upstream(args.port_fd, args.step_s))
        return
    if args.mode == "proxy":
        run_fast(proxy(args.port_fd, args.upstream, args.capture, args.bare))
        return
    if args.mode == "client":
        run_fast(client(args.url, args.streams, args.out_tokens, args.seconds, args.warmup))
        return
    orchestrate(args)


MODES = {
    "direct": "the client straight at the upstream",
    "relay": "ProxyServer alone: forwarding, no observer",
    "proxy": "LiveProxy as --proxy runs it: forwarding, sessions, statistics",
    "capture": "LiveProxy with --capture: also /tokenize and block hashes of every prompt",
}


def orchestrate(args: argparse.Namespace) -> None:
    raise_fd_limit()
    runs: list[Run] = []
    modes = ["direct", "relay", "proxy"] + (["capture"] if args.capture else [])
    with tempfile.TemporaryDirectory(prefix="proxy-bench-") as tmp:
        for streams in [int(s) for s in args.streams.split(",")]:
            step_s = max(0.01, streams / args.rate)  # one stream: a token every 10 ms (100 tok/s)
            out_tokens = 16 if streams == 1 else 64 if streams <= 64 else 24  # enough requests for a p99
            up_proc, up_url = start_reporting_port(
                lambda fd, s=step_s: [sys.executable, __file__, "upstream", "--port-fd", str(fd), "--step-s", str(s)],
                "the bench upstream",
            )
            print(f"\n{streams} stream(s): a token per stream every {step_s * 1e3:.0f} ms, {out_tokens} per request",
                  flush=True)  # fmt: skip
            try:
                for mode in modes:
                    run = _measure(mode, streams, out_tokens, up_url, Path(tmp) / f"capture-{streams}", args)
                    runs.append(run)
                    print(f"  {mode:<7} {len(run.request_path)} requests measured, "
                          f"{run.tokens / run.wall_s:.0f} tok/s, {run.errors} errors", flush=True)  # fmt: skip
            finally:
                up_proc.terminate()
                up_proc.wait(10)
    print_table(runs)


def _measure(mode: str, streams: int, out_tokens: int, up_url: str, folder: Path, args: argparse.Namespace) -> Run:
    if mode == "direct":
        return run_client(mode, up_url, streams, out_tokens, args, None, up_url)
    extra = {"relay": ["--bare"], "proxy": [], "capture": ["--capture", str(folder)]}[mode]

    def cmd(fd: int) -> list[str]:
        return [sys.executable, __file__, "proxy", "--port-fd", str(fd), "--upstream", up_url, *extra]

    px_proc, px_url = start_reporting_port(cmd, "the proxy")
    try:
        return run_client(mode, px_url, streams, out_tokens, args, px_proc.pid, up_url)
    finally:
        px_proc.terminate()
        px_proc.wait(10)


def print_table(runs: Sequence[Run]) -> None:
    ms = 1e3
    print()
    header = (f"{'streams':>7}  {'mode':<7} {'req path p50/p99 ms':>20} {'token path p50/p99 ms':>22} "
              f"{'TTFT added p50/p99 ms':>22} {'proxy CPU µs/token':>18} {'proxy waited':>12} {'busy cores':>10} "
              f"{'tok/s':>7}")  # fmt: skip
    print(header)
    print("-" * len(header))
    for streams in sorted({r.streams for r in runs}):
        direct = next(r for r in runs if r.streams == streams and r.mode == "direct")
        for r in (r for r in runs if r.streams == streams):
            paths = f"{_pct(r.request_path, 0.5) * ms:.2f} / {_pct(r.request_path, 0.99) * ms:.2f}"
            tokens = f"{_pct(r.token_path, 0.5) * ms:.2f} / {_pct(r.token_path, 0.99) * ms:.2f}"
            added = cpu = waited = "-"
            if r.mode != "direct":
                a50 = _pct(r.ttft_path, 0.5) - _pct(direct.ttft_path, 0.5)
                a99 = _pct(r.ttft_path, 0.99) - _pct(direct.ttft_path, 0.99)
                added = f"{a50 * ms:.2f} / {a99 * ms:.2f}"
                cpu = f"{r.proxy_cpu_s / r.tokens * 1e6:.1f}" if r.tokens else "-"
                waited = f"{r.proxy_wait_s / r.wall_s:.0%}"
            print(
                f"{streams:>7}  {r.mode:<7} {paths:>20} {tokens:>22} {added:>22} {cpu:>18} {waited:>12} "
                f"{r.busy_cores:>10.2f} {r.tokens / r.wall_s:>7.0f}"
            )
    for mode, what in MODES.items():
        print(f"{mode:<8} {what}")
    print(
        "req path = the upstream got the request − the client sent it; token path = the client read the first "
        "content event − the upstream wrote it; TTFT added = (req path + token path) through the proxy − direct, "
        "at the same percentile; proxy CPU = user + system CPU of the proxy process over the window / tokens "
        "streamed in it; proxy waited = share of the window its main thread was runnable but had no CPU (the "
        f"machine was busy elsewhere: latencies then measure the queue for a CPU); busy cores: of {os.cpu_count()}; "
        "tok/s = what the upstream streamed (its pace: a proxy that lags shows less)."
    )


if __name__ == "__main__":
    main()

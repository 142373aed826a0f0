"""How far the load generator scales with worker processes: the streamed tok/s a client sustains and its
CPU per token, agentx-tui with 1, 2, … workers and `vllm bench serve`, against a server that outruns them.

    .venv/bin/python bench/driver_scaling.py [--streams 512,2048] [--workers 1,2] [--pin auto|on|off]
                                             [--repeat 1] [--clients local,agentx,vllm] [--tokens 1000000]

About 3 minutes with the defaults on a 2-core machine (each more worker count or --repeat adds its
share; `--tokens` sets each run's length).

The server is the benchmarks' streaming server (bench/_serve.py: OpenAI chat completions streamed as
vLLM streams them, one SSE event per token, counted at /bench/stats). Here it is told to outrun the
clients: a step of 1 ms in which each open stream gets its next 16 tokens in one write (`--step-ms`,
`--tokens-per-step`), up to 16,000 tok/s a stream, far more than a client can read. Its own cost is
mostly per request (about 150 µs: parsing, headers) plus about 20 µs per write, so 16 tokens a write
keep it near 3 µs per token, under half the cheapest client's; one token a write (an engine's step)
would cost a Python server more per token than any client, and the server would be what is measured.
The `loops` column checks it: 1.00 means each event loop that drives streams was always running or
waiting for a core, never idle waiting for the server. A client that falls behind finds its sockets
full and reads many events at once, as it would from any server faster than itself; the write size
still matters (64 tokens a write, whole answers, made agentx's figures about a quarter cheaper than 16
did), the same for every client.

Where the server runs: pinned to one core and the clients to the others when the machine has cores
to spare (3 or more: `--pin auto`). A 2-core machine has none: pinning would leave the clients a
single core, so no worker count could differ from another. So on 2 cores the server is NOT pinned and
shares both cores with the clients, this script's sampling (about 4% of a core) and anything else
running; the run says so. `--pin on` pins anyway (server on the first core, clients on the rest),
`--pin off` never does.

Each client runs in its own process tree (a session of its own, ended whole at its end, and on Ctrl-C
or SIGTERM), closed loop with `--streams` requests in flight, one-step sessions of fixed lengths (128
tokens in, 64 out by default) so every client sends the same requests:
- agentx-tui in one process (`LocalLoad`: the driver in the main process, as `--workers 1` runs);
- agentx-tui's `WorkerPool` with N spawned worker processes (N in `--workers`, default 1, 2, 4, … up
  to the clients' cores; `--workers N` runs this, and `--workers auto` above 512 users, which on 2
  cores is a 1-worker pool): the main process merges the workers' figures once a second, as the app's
  tick does;
- `vllm bench serve` from the vLLM environment (`--max-concurrency` streams, random dataset of the same
  lengths, the tiny model's tokenizer): one process, one event loop.

Printed per client, over the window in which the server streamed the middle 70% of the run's tokens
(bench/_common.py): tok/s (streamed in the window, counted by the server) and, with `--repeat`, the
range over the runs (the row is the run of median tok/s; runs are interleaved so a passing load hits
every client); vs 1 (tok/s over the 1-worker pool's); cores (CPU of all the client's processes over
the window's wall time); µs/tok (that CPU per streamed token); main (the agentx main process's cores);
lag main / lag worker (event-loop lag p99 of the agentx main process and of its worst worker: how late
a 100 ms timer fired, from the load's own health probes); wait (seconds per second the client's
processes were runnable but had no core); loops (above); server (its cores); others (every other
process's cores: the machine's busy cores less the client's and the server's); busy (the machine's);
failed (requests the client counted as failed). Below the table, per stream count, what the cores
allow: the most workers against one, and the tok/s the measured CPU per token allows on the cores
there are (each event loop one core at most), idle and as the run found them.

How to read it: a client is saturated when its loops are at 1.00; its ceiling is then one core per
event loop, at its µs/tok. More workers help only with cores to run them. On 2 cores shared with the
server (about 0.45 of a core, 3-4 µs/tok), one worker leaves about half a core idle, and a second
worker takes it: 1.1-1.4x one worker's tok/s in paired runs here, the machine then full (busy 2.00,
the clients waiting for a core 0.7-0.8 s a second). With the clients on one core (`--pin on`), 2
workers are 0.8-1.2x one: no gain, only the switching. Workers also keep the main process (the
dashboard's loop) responsive: its lag p99 stays at tens of ms while a saturated in-process driver's
reaches about 0.2 s at 512 streams and 1 s at 2048. µs/tok moves by 10-20% from run to run on this
shared virtual machine, even with nothing else running: compare within a run, and use `--repeat`
before reading small differences.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
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
from agentx_tui.load.sending.health import ProcessHealth
from agentx_tui.load.spreading.client_health import HealthBook
from agentx_tui.snapshot import ClientHealth

_TICK_S = 1.0  # the app's default tick: how often the main process asks its workers for their figures
_MARK = "TICK "

# ---------------------------------------------------------------------------------------------------
# agentx-tui as a client (`agentx-client` mode)
# ---------------------------------------------------------------------------------------------------


class _LagBook(HealthBook):
    """The load's own health book, which also prints what each tick saw: the main process's and each
    worker's event-loop lag samples since the last tick, and the main process's CPU."""

    def tick(self, processes: list[ProcessHealth], queued: int, *tokens: int) -> ClientHealth:
        line = {
            "t": time.monotonic(),
            "main": processes[0].lag_samples,
            "main_cores": processes[0].cpu_cores,
            "workers": [p.lag_samples for p in processes[1:]],
        }
        print(_MARK + json.dumps(line), flush=True)
        return super().tick(processes, queued, *tokens)


async def agentx_client(
    url: str, streams: int, requests: int, input_tokens: int, output_tokens: int, workers: int
) -> None:
    """`workers` 0: `LocalLoad` (the driver in this process); N: a `WorkerPool` of N processes."""
    from agentx_tui.engine import ServerInfo
    from agentx_tui.load import Driver, LoadSettings, LocalLoad, prepare
    from agentx_tui.load.spreading.generator import LoadGenerator
    from agentx_tui.load.spreading.pool import WorkerPool

    workload = prepare(one_step_workload(input_tokens, output_tokens))
    settings = LoadSettings(users=streams, seed=1, sessions=requests)
    info = ServerInfo(url, MODEL)
    # `sessions` is the run's budget of global session ids, shared out over the workers.
    load: LoadGenerator
    if workers == 0:
        local = LocalLoad(Driver(workload, [info], settings))
        local.health = _LagBook(1)
        load = local
    else:
        pool = WorkerPool(workload, (info,), settings, workers=workers)
        pool.health = _LagBook(workers)
        load = pool
    await load.start()
    try:
        next_tick = time.monotonic()
        while not load.finished:
            next_tick += _TICK_S
            await asyncio.sleep(max(0.0, next_tick - time.monotonic()))
            await load.sample()
    finally:
        await load.stop()
    totals = load.stats.figures(time.monotonic()).totals
    print(json.dumps({"completed": totals.requests_completed, "failed": totals.requests_failed}), flush=True)


# ---------------------------------------------------------------------------------------------------
# The orchestrator
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Client:
    kind: str  # "agentx" or "vllm"
    workers: int  # agentx: 0 for LocalLoad, else the pool's workers; vllm: 0

    @property
    def label(self) -> str:
        if self.kind == "vllm":
            return "vllm bench serve"
        return "agentx, in-process" if self.workers == 0 else f"agentx, {self.workers} worker{'s' * (self.workers > 1)}"

    @property
    def processes(self) -> str:
        return "1" if self.workers == 0 else f"1+{self.workers}"


@dataclass(frozen=True)
class Row:
    streams: int
    client: Client
    window: Window | None
    error: str | None = None
    failed: int | None = None  # requests the client itself counted as failed
    main_cores: float | None = None
    lag_main_s: float | None = None
    lag_worker_s: float | None = None

    @property
    def tok_s(self) -> float:
        return self.window.tokens / self.window.wall_s if self.window else float("nan")

    @property
    def cores(self) -> float:
        return self.window.cpu_s / self.window.wall_s if self.window else float("nan")

    @property
    def us_per_token(self) -> float:
        return self.window.cpu_s / self.window.tokens * 1e6 if self.window and self.window.tokens else float("nan")

    @property
    def loops_busy(self) -> float:
        """The share of the time the event loops that drive the streams (the one process, or each
        worker) ran or waited for a core: about 1 when the server outran the client, which never idled.
        (The main process's CPU wait, small, is counted in with the workers'.)"""
        if self.window is None:
            return float("nan")
        loops = max(1, self.client.workers)
        busy = self.window.cpu_s + self.window.cpu_wait_s
        if self.client.workers and self.main_cores is not None:
            busy -= self.main_cores * self.window.wall_s
        return busy / self.window.wall_s / loops


def _p99(samples: Sequence[float]) -> float | None:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else None


def _read_log(log: Path, window: Window) -> tuple[float | None, float | None, float | None, int | None]:
    """From an agentx client's log, over the window: main CPU, lag p99 of main and worst worker, failed."""
    main: list[float] = []
    main_cores: list[float] = []
    per_worker: dict[int, list[float]] = {}
    failed = None
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith(_MARK):
            tick = json.loads(line[len(_MARK) :])
            if not window.started_at < tick["t"] <= window.ended_at:
                continue
            main += tick["main"]
            if tick["main_cores"] is not None:
                main_cores.append(tick["main_cores"])
            for i, samples in enumerate(tick["workers"]):
                per_worker.setdefault(i, []).extend(samples)
        elif line.startswith('{"completed"'):
            failed = int(json.loads(line)["failed"])
    worst = max((p for p in map(_p99, per_worker.values()) if p is not None), default=None)
    cores = sum(main_cores) / len(main_cores) if main_cores else None
    return cores, _p99(main), worst, failed


def _vllm_failed(log: Path) -> int | None:
    found = re.search(r"Failed requests:\s+(\d+)", log.read_text(errors="replace"))
    return int(found.group(1)) if found else None


def _default_workers(client_cpus: int) -> list[int]:
    counts = {1, 2, client_cpus}
    counts.update(2**i for i in range(1, 8) if 2**i <= client_cpus)
    return sorted(c for c in counts if c >= 1)


def _placement(pin: str) -> tuple[int | None, Callable[[], None] | None, int, str]:
    """(server's core, what pins a client, the clients' cores, a sentence saying so)."""
    cpus = sorted(os.sched_getaffinity(0))
    if pin == "on" or (pin == "auto" and len(cpus) >= 3):
        if len(cpus) < 2:
            raise SystemExit("--pin on needs at least 2 cores")
        server_cpu, rest = cpus[0], set(cpus[1:])

        def pin_client() -> None:
            os.sched_setaffinity(0, rest)

        return server_cpu, pin_client, len(rest), f"server pinned to core {server_cpu}, clients to {sorted(rest)}"
    why = (
        f"this machine has {len(cpus)} cores: none to spare for the server, so it is NOT pinned and shares "
        "every core with the clients (and this script's sampling)"
        if len(cpus) < 3
        else "--pin off: the server is not pinned and shares every core with the clients"
    )
    return None, None, len(cpus), why


def _agentx_cmd(url: str, streams: int, requests: int, args: argparse.Namespace, workers: int) -> list[str]:
    return [
        sys.executable, __file__, "agentx-client", "--url", url, "--streams", str(streams),
        "--requests", str(requests), "--input-tokens", str(args.input_tokens),
        "--output-tokens", str(args.output_tokens), "--client-workers", str(workers),
    ]  # fmt: skip


def run_one(
    client: Client,
    streams: int,
    server: StreamServer,
    args: argparse.Namespace,
    tmp: Path,
    vllm: tuple[str, Path] | None,
    pin_client: Callable[[], None] | None,
) -> Row:
    rounds = max(3, -(-args.tokens // (streams * args.output_tokens)))  # at least 3 requests per stream
    requests = streams * rounds
    tokens = requests * args.output_tokens
    if client.kind == "vllm":
        assert vllm is not None
        cmd = vllm_bench_cmd(
            *vllm,
            server.url,
            streams=streams,
            requests=requests,
            input_tokens=args.input_tokens,
            output_tokens=args.output_tokens,
        )
    else:
        cmd = _agentx_cmd(server.url, streams, requests, args, client.workers)
    log = tmp / f"{client.kind}-{client.workers}-{streams}.log"
    timeout = 90 + tokens / args.min_rate
    window = measure_window(cmd, tokens, server, log, timeout, preexec_fn=pin_client)
    if not isinstance(window, Window):
        return Row(streams, client, None, error=window)
    if client.kind == "vllm":
        return Row(streams, client, window, failed=_vllm_failed(log))
    main_cores, lag_main, lag_worker, failed = _read_log(log, window)
    return Row(streams, client, window, None, failed, main_cores, lag_main, lag_worker if client.workers else None)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.0f} ms"


def medians(rows: Sequence[Row]) -> list[tuple[Row, list[Row]]]:
    """Per stream count and client, in the order run: the run of median tok/s, and all the runs."""
    groups: dict[tuple[int, Client], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.streams, r.client), []).append(r)
    out = []
    for runs in groups.values():
        ok = sorted((r for r in runs if r.window), key=lambda r: r.tok_s)
        out.append((ok[(len(ok) - 1) // 2] if ok else runs[0], runs))
    return out


def _range(runs: Sequence[Row]) -> str:
    rates = [r.tok_s for r in runs if r.window]
    return f"{min(rates) / 1e3:.0f}-{max(rates) / 1e3:.0f}k" if len(rates) > 1 else "-"


def print_table(table: Sequence[tuple[Row, list[Row]]]) -> None:
    header = (
        f"{'streams':>7}  {'client':<20} {'procs':>5} {'tok/s':>7} {'range':>9} {'vs 1':>5} {'cores':>5} "
        f"{'µs/tok':>6} {'main':>5} {'lag main':>8} {'lag worker':>10} {'wait':>5} {'loops':>5} {'server':>6} "
        f"{'others':>6} {'busy':>5} {'failed':>6}"
    )
    print(header)
    print("-" * len(header))
    for streams in sorted({r.streams for r, _ in table}):
        group = [(r, runs) for r, runs in table if r.streams == streams]
        one = next((r for r, _ in group if r.client == Client("agentx", 1) and r.window), None)
        for r, runs in group:
            w = r.window
            if w is None:
                print(f"{streams:>7}  {r.client.label:<20} failed: {r.error}")
                continue
            vs = f"{r.tok_s / one.tok_s:.2f}" if one is not None else "-"
            main = "-" if r.main_cores is None else f"{r.main_cores:.2f}"
            failed = "-" if r.failed is None else str(r.failed)
            server = w.server_cpu_s / w.wall_s
            others = w.machine_busy_cores - r.cores - server
            print(
                f"{streams:>7}  {r.client.label:<20} {r.client.processes:>5} {r.tok_s:>7.0f} {_range(runs):>9} {vs:>5} "
                f"{r.cores:>5.2f} {r.us_per_token:>6.1f} {main:>5} {_ms(r.lag_main_s):>8} "
                f"{_ms(r.lag_worker_s):>10} {w.cpu_wait_s / w.wall_s:>5.2f} {r.loops_busy:>5.2f} {server:>6.2f} "
                f"{others:>6.2f} "
                f"{w.machine_busy_cores:>5.2f} {failed:>6}"
            )
    print(
        "tok/s = streamed in the window, counted by the server (with --repeat, the run of median tok/s, the "
        "lower middle one of an even count, whose figures the row gives; range = the lowest and highest "
        "tok/s); vs 1 = over the 1-worker pool's tok/s; cores = CPU of all the client's processes / wall "
        "time; µs/tok = that CPU per streamed token; "
        "main = the agentx main process's cores; lag main / worker = event-loop lag p99 of the agentx main "
        "process and of its worst worker; wait = seconds per second the client's processes were runnable "
        "but had no core; loops = the share of the time each event loop that drives streams ran or waited "
        "for a core (1.00: it never idled, the server outran it); server = the server's cores; others = "
        "every other process's (this script's sampling, other work on the machine); busy = the machine's "
        f"busy cores, of {os.cpu_count()}; "
        "failed = requests the client counted as failed."
    )


def print_cores(table: Sequence[tuple[Row, list[Row]]], client_cpus: int, pinned: bool) -> None:
    """What the cores allow, per stream count: the most workers against one, and the ceiling the
    measured costs put on them (the cores the client can have, over its CPU per token, and the server's
    too where it shares them)."""
    print(f"\nWhat the cores allow ({client_cpus} for the clients, {os.cpu_count()} in all):")
    for streams in sorted({r.streams for r, _ in table}):
        pools = [r for r, _ in table if r.streams == streams and r.client.kind == "agentx" and r.client.workers]
        one = next((r for r in pools if r.client.workers == 1 and r.window), None)
        most = max((r for r in pools if r.window), key=lambda r: r.client.workers, default=None)
        if one is None or most is None or most is one or most.window is None:
            continue
        w = most.window
        server_us = w.server_cpu_s / w.tokens * 1e6
        others = max(0.0, w.machine_busy_cores - most.cores - w.server_cpu_s / w.wall_s)
        if pinned:  # the server has a core of its own: the clients' cores, at the client's cost alone
            cpus, per_token = client_cpus, most.us_per_token
            whose = f"the client's {most.us_per_token:.1f}"
        else:  # the client and the server share every core
            cpus, per_token = os.cpu_count() or 1, most.us_per_token + server_us
            whose = f"the client's {most.us_per_token:.1f} + the server's {server_us:.1f}"
        carry = "cores carry" if cpus > 1 else "core carries"
        # An event loop uses one core at most: so many workers, so many cores.
        idle = min(cpus / per_token, most.client.workers / most.us_per_token) * 1e6
        left = ""
        if not pinned:  # (pinned, the others' share of the clients' cores is not known)
            left = f"; the {cpus - others:.2f} cores that other work left here (it took {others:.2f}) carry "
            left += f"{(cpus - others) / per_token * 1e6:,.0f}"
        print(
            f"  {streams} streams: {most.client.workers} workers streamed {most.tok_s:,.0f} tok/s, "
            f"{most.tok_s / one.tok_s:.2f}x one worker's {one.tok_s:,.0f} (an event loop runs on one core: "
            f"that client used {one.cores:.2f}). At {whose} µs/tok, {cpus} {carry} at most {idle:,.0f} tok/s "
            f"with nothing else running{left}."
        )


def orchestrate(args: argparse.Namespace) -> None:
    raise_fd_limit()
    server_cpu, pin_client, client_cpus, placement = _placement(args.pin)
    workers = [int(w) for w in args.workers.split(",")] if args.workers else _default_workers(client_cpus)
    kinds = [c.strip() for c in args.clients.split(",") if c.strip()]
    unknown = set(kinds) - {"agentx", "local", "vllm"}
    if unknown:
        raise SystemExit(f"unknown client(s) {sorted(unknown)}; choose from local, agentx, vllm")
    clients = [Client("agentx", 0)] if "local" in kinds else []
    clients += [Client("agentx", w) for w in workers] if "agentx" in kinds else []
    clients += [Client("vllm", 0)] if "vllm" in kinds else []
    vllm = vllm_python_and_tokenizer() if "vllm" in kinds else None
    print(f"{os.cpu_count()} cores; {placement}.")
    print(
        f"server: a step every {args.step_ms:g} ms, {args.tokens_per_step} tokens per stream per step in one write "
        f"(up to {args.tokens_per_step / args.step_ms * 1e3:,.0f} tok/s a stream); requests of {args.input_tokens} "
        f"-> {args.output_tokens} tokens; about {args.tokens:,} tokens a run.",
        flush=True,
    )
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="driver-scaling-") as tmp:
        for streams in [int(s) for s in args.streams.split(",")]:
            print(f"\n{streams} streams:", flush=True)
            server = start_stream_server(args.step_ms / 1e3, args.tokens_per_step, cpu=server_cpu)
            try:
                for run in range(args.repeat):  # runs interleaved: a passing load elsewhere hits every client
                    for client in clients:
                        row = run_one(client, streams, server, args, Path(tmp), vllm, pin_client)
                        rows.append(row)
                        figures = f"{row.tok_s:,.0f} tok/s, {row.cores:.2f} cores, {row.us_per_token:.1f} µs/tok"
                        which = f" (run {run + 1})" if args.repeat > 1 else ""
                        print(f"  {client.label + which:<28} {row.error or figures}", flush=True)
            finally:
                server.stop()
    print()
    print(f"{os.cpu_count()} cores; {placement}.")
    table = medians(rows)
    print_table(table)
    print_cores(table, client_cpus, server_cpu is not None)


def _sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # the same clean-up as Ctrl-C: every client tree and the server are ended


def main(argv: Sequence[str] | None = None) -> None:
    parser, cli = client_parsers(__doc__, "(internal) agentx-tui's load as a client")
    cli.add_argument("--client-workers", type=int, required=True, help="0: in-process (LocalLoad)")
    parser.add_argument("--streams", default="512,2048", help="concurrent streams, comma-separated")
    parser.add_argument("--workers", default="", help="agentx worker counts (default 1, 2, 4, … up to the cores)")
    parser.add_argument("--clients", default="local,agentx,vllm", help="of: local (in-process), agentx, vllm")
    parser.add_argument("--pin", choices=("auto", "on", "off"), default="auto", help="the server on its own core")
    parser.add_argument("--step-ms", type=float, default=1.0, help="the server's step")
    parser.add_argument("--tokens-per-step", type=int, default=16, help="tokens per stream per step, one write")
    parser.add_argument("--input-tokens", type=int, default=128)
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--tokens", type=int, default=1_000_000, help="output tokens per run (at least 3 per stream)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each client, interleaved; medians shown")
    parser.add_argument("--min-rate", type=float, default=5000.0, help="tok/s below which a run times out")
    args = parser.parse_args(argv)
    if args.mode == "agentx-client":
        run_fast(
            agentx_client(
                args.url, args.streams, args.requests, args.input_tokens, args.output_tokens, args.client_workers
            )
        )
        return
    signal.signal(signal.SIGTERM, _sigterm)
    try:
        orchestrate(args)
    except KeyboardInterrupt:
        print("\ninterrupted: every client and the server were ended", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()

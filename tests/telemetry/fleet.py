"""Lightweight fake /metrics endpoints for Prometheus to scrape: recorded or synthetic pages served
from one asyncio loop in a background thread, one loopback port per endpoint.

`PageServer` serves any ``page(t) -> str`` (t = unix time of the scrape). `FakeFleet` is N fake vLLM
replicas with varied, known load (counters grow linearly, so every rate and quantile is known
exactly) plus dcgm-exporter-like node exporters whose GPUs carry the pod that uses them, as
dcgm-exporter's Kubernetes mode labels them. Register them with Prometheus through
`FakeFleet.target_groups()` (file_sd groups: per-replica ``pod``/``namespace``/``node`` labels).

`fleet_process` runs a `FakeFleet` in a child process (``python -m tests.telemetry.fleet``): a page
served late because the code under test holds the GIL is a value read late, at a timestamp
Prometheus set at the scrape's start, and at 64 replicas that skews window rates by several percent.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Page = Callable[[float], str]
Naming = Literal["new", "old", "both"]

# TTFT histogram shape (cumulative fraction of requests at or under each bound); p50 falls in the
# (0.05, 0.1] bucket: 0.05 + 0.05 × (0.5 − 0.2) / (0.6 − 0.2) = 0.0875 s, as histogram_quantile gives.
TTFT_SHAPE = ((0.05, 0.2), (0.1, 0.6), (0.25, 0.9), (0.5, 0.99), (float("inf"), 1.0))
TTFT_P50 = 0.0875


class PageServer:
    """HTTP/1.1 (keep-alive) servers on loopback ports, all on one event loop in a daemon thread."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._servers: list[asyncio.Server] = []
        self._handlers: set[asyncio.Task[None]] = set()
        self.scrapes = 0

    def __enter__(self) -> PageServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="page-server", daemon=True)
        self._thread.start()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError("PageServer.start() first")
        return self._loop

    def stop(self) -> None:
        async def close() -> None:
            for server in self._servers:
                server.close()
            for task in self._handlers:  # keep-alive connections outlive server.close()
                task.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)

        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(close(), self._loop).result(5)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
            self._loop.close()
            self._loop = self._thread = None

    def serve(self, page: Page) -> str:
        """Serve ``page`` on a fresh port; returns ``"127.0.0.1:PORT"`` (a Prometheus target)."""

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            self._handlers.add(task)
            try:
                while True:
                    await reader.readuntil(b"\r\n\r\n")  # scrapes are GETs: no body to read
                    body = page(time.time()).encode()
                    self.scrapes += 1
                    head = (
                        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                        f"Content-Length: {len(body)}\r\n\r\n"
                    )
                    writer.write(head.encode() + body)
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, asyncio.CancelledError):
                pass
            finally:
                self._handlers.discard(task)
                writer.close()

        async def open_server() -> int:
            server = await asyncio.start_server(handle, "127.0.0.1", 0)
            self._servers.append(server)
            return int(server.sockets[0].getsockname()[1])

        port = asyncio.run_coroutine_threadsafe(open_server(), self.loop).result(5)
        return f"127.0.0.1:{port}"


@dataclass(frozen=True)
class ReplicaSpec:
    """One fake replica's steady load; counters are rate × (t − t0)."""

    gen_per_s: float
    prompt_per_s: float
    hit_rate: float  # prefix hits / queries
    requests_per_s: float
    running: float
    waiting: float
    kv_usage: float
    engines: int = 1  # data-parallel engines, load split evenly
    naming: Naming = "new"
    model: str = "fleet/model"


def vllm_page(spec: ReplicaSpec, t: float, t0: float) -> str:
    """A vLLM page with the families the telemetry reads (names of vLLM 0.32, or ≤0.8, or both as
    0.9.2–0.10 expose them), every counter split evenly over ``spec.engines``."""
    elapsed = max(0.0, t - t0)
    share = 1.0 / spec.engines
    lines: list[str] = []

    def family(name: str, kind: str, values: Callable[[str], float], extra: str = "") -> None:
        lines.append(f"# TYPE {name.removesuffix('_total')} {kind}")
        for e in range(spec.engines):
            labels = f'engine="{e}",model_name="{spec.model}"{extra}'
            lines.append(f"{name}{{{labels}}} {values(str(e))}")

    def counter(name: str, per_s: float) -> None:
        family(name + "_total", "counter", lambda _e: round(per_s * share * elapsed, 3))

    queries, hits = spec.prompt_per_s, spec.prompt_per_s * spec.hit_rate
    new, old = spec.naming in ("new", "both"), spec.naming in ("old", "both")
    family("vllm:num_requests_running", "gauge", lambda _e: spec.running * share)
    family("vllm:num_requests_waiting", "gauge", lambda _e: spec.waiting * share)
    if new:
        family("vllm:kv_cache_usage_perc", "gauge", lambda _e: spec.kv_usage)
        counter("vllm:prefix_cache_queries", queries)
        counter("vllm:prefix_cache_hits", hits)
    if old:
        # In 0.9.2–0.10 the old gauge carries the same value; a different one here shows which is read.
        family("vllm:gpu_cache_usage_perc", "gauge", lambda _e: spec.kv_usage + (0.5 if new else 0.0))
        lines.append(
            "# HELP vllm:gpu_prefix_cache_queries GPU prefix cache queries, in terms of number of queried tokens."
        )
        counter("vllm:gpu_prefix_cache_queries", queries)
        counter("vllm:gpu_prefix_cache_hits", hits)
    counter("vllm:prompt_tokens", spec.prompt_per_s)
    counter("vllm:generation_tokens", spec.gen_per_s)
    counter("vllm:prompt_tokens_cached", hits)
    counter("vllm:num_preemptions", 0.0)
    counter("vllm:request_success", spec.requests_per_s)
    lines.append("# TYPE vllm:time_to_first_token_seconds histogram")
    for e in range(spec.engines):
        requests = spec.requests_per_s * share * elapsed
        for upper, fraction in TTFT_SHAPE:
            le = "+Inf" if upper == float("inf") else f"{upper:g}"
            lines.append(
                f'vllm:time_to_first_token_seconds_bucket{{engine="{e}",le="{le}",model_name="{spec.model}"}} '
                f"{round(requests * fraction, 3)}"
            )
    lines.append("# TYPE vllm:cache_config_info gauge")
    for e in range(spec.engines):
        info = f'block_size="16",enable_prefix_caching="True",engine="{e}",num_gpu_blocks="1000"'
        lines.append(f"vllm:cache_config_info{{{info}}} 1")
    return "\n".join(lines) + "\n"


def dcgm_page(node: str, gpus: list[tuple[str, str]], util_of: Callable[[int], float]) -> str:
    """dcgm-exporter fields for one node; ``gpus`` = [(uuid, pod using it or "")]."""
    lines: list[str] = []
    fields = (
        ("DCGM_FI_DEV_GPU_UTIL", util_of),
        ("DCGM_FI_DEV_FB_USED", lambda i: 40000.0 + i),
        ("DCGM_FI_DEV_FB_FREE", lambda i: 100000.0),
        ("DCGM_FI_DEV_POWER_USAGE", lambda i: 300.0 + 10 * i),
        ("DCGM_FI_DEV_GPU_TEMP", lambda i: 50.0 + i),
    )
    for name, value in fields:
        lines.append(f"# TYPE {name} gauge")
        for index, (uuid, pod) in enumerate(gpus):
            owner = f',namespace="fleet",pod="{pod}",container="vllm"' if pod else ""
            labels = f'gpu="{index}",UUID="{uuid}",modelName="NVIDIA H200",Hostname="{node}"{owner}'
            lines.append(f"{name}{{{labels}}} {value(index)}")
    return "\n".join(lines) + "\n"


class FakeFleet:
    """``n`` fake vLLM replicas (8 per node, one GPU each; every 8th replica runs 2 DP engines) and one
    DCGM exporter per node. Start with `start()` (or use as a context manager)."""

    REPLICAS_PER_NODE = 8

    def __init__(self, n: int = 64, *, group: str = "fleet") -> None:
        self.n, self.group = n, group
        self.t0 = time.time()
        self.specs = [
            ReplicaSpec(
                gen_per_s=100.0 + 37.0 * (i % 13),
                prompt_per_s=2000.0 + 450.0 * (i % 7),
                hit_rate=0.5 + 0.05 * (i % 9),
                requests_per_s=2.0 + (i % 5),
                running=float(4 + i % 5),
                waiting=float(i % 3),
                kv_usage=0.1 + 0.01 * (i % 50),
                engines=2 if i % 8 == 7 else 1,
            )
            for i in range(n)
        ]
        self.nodes = [f"node-{k}" for k in range((n + self.REPLICAS_PER_NODE - 1) // self.REPLICAS_PER_NODE)]
        self.server = PageServer()
        self.replica_targets: list[str] = []
        self.dcgm_targets: list[str] = []

    def __enter__(self) -> FakeFleet:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    def pod(self, i: int) -> str:
        return f"vllm-{i}"

    def node_of(self, i: int) -> str:
        return self.nodes[i // self.REPLICAS_PER_NODE]

    def gpu_util(self, i: int) -> float:
        return float(20 + (i * 7) % 80)

    def start(self) -> None:
        self.server.start()
        for spec in self.specs:
            self.replica_targets.append(self.server.serve(functools.partial(_replica_page, spec, self.t0)))
        for k, node in enumerate(self.nodes):
            first = k * self.REPLICAS_PER_NODE
            members = range(first, min(first + self.REPLICAS_PER_NODE, self.n))
            gpus = [(f"GPU-fleet-{i:04d}", self.pod(i)) for i in members]
            page = dcgm_page(node, gpus, functools.partial(_offset_util, self, first))
            self.dcgm_targets.append(self.server.serve(functools.partial(_static_page, page)))

    def target_groups(self) -> list[dict[str, object]]:
        """file_sd groups: each replica labelled as Kubernetes service discovery would label it."""
        groups: list[dict[str, object]] = [
            {
                "targets": [target],
                "labels": {
                    "agentx_group": self.group,
                    "namespace": "fleet",
                    "pod": self.pod(i),
                    "node": self.node_of(i),
                },
            }
            for i, target in enumerate(self.replica_targets)
        ]
        groups += [{"targets": [t], "labels": {"agentx_group": self.group}} for t in self.dcgm_targets]
        return groups


def _replica_page(spec: ReplicaSpec, t0: float, t: float) -> str:
    return vllm_page(spec, t, t0)


def _offset_util(fleet: FakeFleet, first: int, index: int) -> float:
    return fleet.gpu_util(first + index)


def _static_page(page: str, _t: float) -> str:
    return page  # GPU gauges: the same every scrape


@contextlib.contextmanager
def fleet_process(n: int, sd_file: Path, *, group: str = "fleet", timeout_s: float = 20.0) -> Iterator[FakeFleet]:
    """A `FakeFleet` of ``n`` replicas in a child process that writes its file_sd groups to ``sd_file``
    (a Prometheus file_sd path) once it serves. Yields an unstarted twin for the expected figures
    (specs, pods, GPU utilisation: all functions of the replica index). The child ends with the block,
    or by itself when this process dies (its stdin closes)."""
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.telemetry.fleet", str(n), str(sd_file), group], cwd=root, stdin=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + timeout_s
        while not sd_file.exists():
            if child.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the fleet process did not start (exit {child.poll()})")
            time.sleep(0.05)
        yield FakeFleet(n, group=group)
    finally:
        if child.stdin is not None:
            child.stdin.close()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(10)


def main(argv: list[str]) -> None:
    n, sd_file, group = int(argv[0]), Path(argv[1]), argv[2]
    with FakeFleet(n, group=group) as fleet:
        tmp = sd_file.with_name(f".{sd_file.name}.tmp")
        tmp.write_text(json.dumps(fleet.target_groups()))
        os.replace(tmp, sd_file)
        sys.stdin.read()  # until the parent closes our stdin (or dies)


if __name__ == "__main__":
    main(sys.argv[1:])

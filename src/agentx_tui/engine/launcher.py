"""Launch a server (vLLM, or the built-in simulator) as a managed child and wait until it is healthy.

`LaunchedServer.start` returns once `/health` answers 200; if the process exits first, or the
start-up timeout passes, it raises `LaunchError` carrying the server's last log lines. `stop()` stops
the whole process tree (see `process.py`).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import httpx

from agentx_tui.engine.ports import free_port
from agentx_tui.engine.process import LogBuffer, ManagedProcess
from agentx_tui.engine.tiny_model import TINY_MAX_MODEL_LEN, TINY_SERVED_NAME, ensure_tiny_model
from agentx_tui.engine.vllm_cmd import resolve_vllm_command
from agentx_tui.errors import LaunchError

Progress = Callable[[float, str], None]  # (elapsed seconds, last log line)
TINY = "tiny"
SIM_STOP_TIMEOUT_S = 2.0
# `--serve` records KV residency (docs/vllm.md): a tenth of the blocks. vLLM's cost does not depend on
# the rate but for the sampled blocks' state and their evictions' histogram updates, and a tenth still
# gives hundreds of evictions a minute under KV pressure (vLLM's own default, 1%, gives a handful).
KV_CACHE_METRICS_SAMPLE = 0.1


@dataclass
class LaunchedServer:
    url: str
    label: str
    process: ManagedProcess
    started_s: float = 0.0
    crashed: bool = False
    log_cursor: int = field(default=0)
    # The share of KV blocks its residency histograms sample, when it records them (vLLM's
    # --kv-cache-metrics-sample; the simulator records every block).
    kv_cache_metrics_sample: float | None = None
    # How long SIGTERM gets before SIGKILL: vLLM's tree shuts down in ~3 s (docs/vllm.md); the
    # simulator holds nothing worth waiting for.
    stop_timeout_s: float = 10.0

    @property
    def log(self) -> LogBuffer:
        return self.process.log

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout_s: float | None = None) -> None:
        self.process.stop(self.stop_timeout_s if timeout_s is None else timeout_s)


def _has_flag(args: Sequence[str], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in args)


def _flag_value(args: Sequence[str], flag: str) -> str | None:
    """The value of the last `flag VALUE` or `flag=VALUE` in `args`; None when it is not there."""
    value = None
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(flag + "="):
            value = arg.split("=", 1)[1]
    return value


def kv_cache_metrics_sample(argv: Sequence[str]) -> float | None:
    """The residency sample rate a vLLM command line asks for; None when it records no residency."""
    on = False
    for arg in argv:  # the last of the pair wins, as in vLLM's parser
        if arg in ("--kv-cache-metrics", "--no-kv-cache-metrics"):
            on = arg == "--kv-cache-metrics"
    if not on or _has_flag(argv, "--disable-log-stats"):  # vLLM needs its stats logging for them
        return None
    try:
        return float(_flag_value(argv, "--kv-cache-metrics-sample") or 0.01)  # vLLM's default
    except ValueError:
        return None


def vllm_argv(
    model: str, vllm_args: Sequence[str], *, host: str, port: int, vllm_cmd: str | None, tiny: bool
) -> tuple[list[str], str | None]:
    """The command line for `--serve MODEL` (and the interpreter, when known)."""
    command = resolve_vllm_command(vllm_cmd)
    extra = list(vllm_args)
    if not _has_flag(extra, "--enable-prompt-tokens-details"):
        # Without it the client cannot see cached_tokens (docs/metrics.md: client prefix hit rate).
        extra.append("--enable-prompt-tokens-details")
    if not _has_flag(extra, "--enable-mfu-metrics") and not _has_flag(extra, "--no-enable-mfu-metrics"):
        # vLLM's estimate of the FLOPs and bytes it moves: the roofline figures (docs/metrics.md, "Roofline").
        extra.append("--enable-mfu-metrics")
    if not any(_has_flag(extra, flag) for flag in ("--kv-cache-metrics", "--no-kv-cache-metrics")):
        # KV residency (idle before eviction, reuse gaps) for the cache pane; the user's choice wins.
        extra.append("--kv-cache-metrics")
        if not _has_flag(extra, "--kv-cache-metrics-sample"):
            extra += ["--kv-cache-metrics-sample", str(KV_CACHE_METRICS_SAMPLE)]
    if tiny:
        defaults = {
            "--served-model-name": TINY_SERVED_NAME,
            "--max-model-len": str(TINY_MAX_MODEL_LEN),
        }
        for flag, value in defaults.items():
            if not _has_flag(extra, flag):
                extra += [flag, value]
        if not _has_flag(extra, "--enforce-eager"):
            extra.append("--enforce-eager")  # 35 s start-up instead of 85 s on CPU (docs/vllm.md)
    argv = [*command.argv_for(model), "--host", host, "--port", str(port), *extra]
    return argv, command.python


async def start_vllm(
    model: str,
    vllm_args: Sequence[str] = (),
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
    vllm_cmd: str | None = None,
    api_key: str | None = None,
    timeout_s: float = 900.0,
    progress: Progress | None = None,
) -> LaunchedServer:
    tiny = model == TINY
    # The user's own input first: a missing model path is theirs to fix, whether or not vLLM is installed.
    if not tiny and not _looks_like_hub_id(model) and not os.path.exists(model):
        raise LaunchError(
            f"The model path {model} does not exist.",
            "Give an existing model directory or a Hugging Face id like Qwen/Qwen3-8B.",
        )
    port = port or free_port(host)
    argv, python = vllm_argv(model, vllm_args, host=host, port=port, vllm_cmd=vllm_cmd, tiny=tiny)
    if tiny:
        if python is None:
            raise LaunchError(
                "--serve tiny needs to know vLLM's Python to build the model.",
                "Pass --vllm-cmd 'PYTHON -m vllm.entrypoints.openai.api_server' or set AGENTX_VLLM_PYTHON.",
            )
        model_dir = await asyncio.to_thread(ensure_tiny_model, python)
        argv[argv.index(TINY)] = str(model_dir)
    env = dict(os.environ)
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # harmless on GPU; keeps the CPU build small
    if tiny:
        # The CPU build pins its worker's OpenMP threads ("auto"): every instance on a small machine
        # picks the same core, and servers started together crawl until vLLM's shared-memory broadcast
        # gives up. The tiny model is a smoke test that shares its machine; let the OS place it.
        env.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
    if api_key:
        env["VLLM_API_KEY"] = api_key  # through the environment: never visible in `ps`
    label = f"serve {TINY_SERVED_NAME if tiny else model}"
    server = await _start(argv, env, f"http://{host}:{port}", label, timeout_s, progress, [api_key or ""])
    server.kv_cache_metrics_sample = kv_cache_metrics_sample(argv)
    return server


def _looks_like_hub_id(model: str) -> bool:
    parts = model.split("/")
    return len(parts) == 2 and all(parts) and not model.startswith((".", "/", "~"))


async def start_sim(
    profile: str,
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
    timeout_s: float = 60.0,
    time_scale: float = 1.0,
    cpu_kv_gb: float | None = None,
    cpu_kv_gbps: float | None = None,
    max_num_batched_tokens: int | None = None,
    spec: str | None = None,
) -> LaunchedServer:
    """The simulator (docs/sim.md) on `port`; with `cpu_kv_gb`, its CPU KV tier of that size (GB), its
    link `cpu_kv_gbps` (GB/s per direction, default the profile's); with `max_num_batched_tokens`, that
    token budget per step; with `spec` ("K:AL"), speculative decoding."""
    port = port or free_port(host)
    argv = [sys.executable, "-m", "agentx_tui.sim", "--host", host, "--port", str(port), "--profile", profile]
    if time_scale != 1.0:  # a faster simulated GPU, for benchmarks (bench/soak.py)
        argv += ["--time-scale", str(time_scale)]
    if cpu_kv_gb is not None:
        argv += ["--cpu-kv-gb", str(cpu_kv_gb)]
    if cpu_kv_gbps is not None:
        argv += ["--cpu-kv-gbps", str(cpu_kv_gbps)]
    if max_num_batched_tokens is not None:
        argv += ["--max-num-batched-tokens", str(max_num_batched_tokens)]
    if spec is not None:
        argv += ["--spec", spec]
    server = await _start(argv, dict(os.environ), f"http://{host}:{port}", f"sim {profile}", timeout_s, None, [])
    server.stop_timeout_s = SIM_STOP_TIMEOUT_S
    server.kv_cache_metrics_sample = 1.0  # the simulator records every block
    return server


async def _start(
    argv: list[str],
    env: Mapping[str, str],
    url: str,
    label: str,
    timeout_s: float,
    progress: Progress | None,
    secrets: list[str],
) -> LaunchedServer:
    try:
        process = ManagedProcess(argv, env=env, log=LogBuffer(secrets=secrets))
    except OSError as exc:
        raise LaunchError(f"Could not start {argv[0]}: {exc.strerror or exc}.", "Check --vllm-cmd.") from exc
    server = LaunchedServer(url=url, label=label, process=process)
    started = time.monotonic()
    try:
        async with httpx.AsyncClient(timeout=2.0) as client:
            while True:
                elapsed = time.monotonic() - started
                code = process.poll()
                if code is not None:
                    tail = process.log.tail(15)
                    await asyncio.to_thread(process.stop, 2.0)
                    last = tail[-1].strip() if tail else "no output"
                    raise LaunchError(
                        f"The server exited during start-up (exit {code}): {last}",
                        "See the log lines above.",
                        log_tail=tail,
                    )
                if elapsed > timeout_s:
                    tail = process.log.tail(15)
                    await asyncio.to_thread(process.stop)
                    raise LaunchError(
                        f"The server was not healthy after {timeout_s:.0f} s.",
                        "Raise --startup-timeout or see the log lines above.",
                        log_tail=tail,
                    )
                if progress is not None:
                    last_lines = process.log.tail(1)
                    progress(elapsed, last_lines[-1] if last_lines else "")
                try:
                    response = await client.get(url + "/health")
                    if response.status_code == 200:
                        server.started_s = elapsed
                        return server
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.5)
    except BaseException:
        # Cancelled (Ctrl-C) or failed: never leave the half-started tree behind.
        await asyncio.to_thread(process.stop, 5.0)
        raise

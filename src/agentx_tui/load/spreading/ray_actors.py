"""Load workers as Ray actors on an existing Ray cluster (`--ray ADDRESS`, the optional extra `ray`).

The same `WorkerCore` as a local worker process (load/spreading/process.py), behind the methods of an async
actor instead of a pipe; the `WorkerPool` in the main process merges their summaries exactly as it
does for processes. Actors are spread over the cluster's nodes, one CPU each. Each node measures its
requests on its own clock: the pool moves every summary onto the main process's clock by the offset
it sees between the two (the smallest `received − sent` over the reports), so only durations
measured on one node are ever compared.

Everything Ray can get wrong is said in one sentence: Ray not installed (the extra), a cluster that
cannot be reached or whose Ray or Python differs from this one (exit 3), a loopback target URL with
a cluster of several nodes (their actors could not reach it).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import sys
from types import ModuleType
from typing import Any

from agentx_tui.errors import TargetError, UsageError
from agentx_tui.load.spreading.protocol import Command, WorkerReport, WorkerSpec
from agentx_tui.load.spreading.worker import WorkerCore
from agentx_tui.net import is_loopback

RAY_EXTRA_HINT = "Install it with `pip install 'agentx-tui[ray]'` (the same Ray version as the cluster)."


def import_ray() -> ModuleType:
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise UsageError("--ray needs Ray, which is not installed.", RAY_EXTRA_HINT) from exc


def connect(address: str, target_urls: list[str]) -> ModuleType:
    """Join the cluster at `address` (`ray://HOST:10001`, `HOST:6379` or `auto`) and check it can
    run our actors; returns the `ray` module. Raises `TargetError` (exit 3) or `UsageError` (exit 2)."""
    ray = import_ray()
    try:
        ray.init(
            address=address,
            logging_level="ERROR",
            log_to_driver=False,
            ignore_reinit_error=True,
            runtime_env={"env_vars": {"PYTHONUNBUFFERED": "1"}},
        )
    except Exception as exc:  # ConnectionError, RuntimeError (version mismatch), ValueError (address)
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "version" in text.lower():
            raise TargetError(
                f"The Ray cluster at {address} runs another Ray or Python version than this one "
                f"(Ray {ray.__version__}, Python {sys.version.split()[0]}): {text}",
                "Install the cluster's versions here, or run agentx-tui on a cluster node.",
            ) from exc
        raise TargetError(f"Could not join the Ray cluster at {address}: {text}", "Check --ray ADDRESS.") from exc
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    loopback = [u for u in target_urls if is_loopback(u)]
    if len(nodes) > 1 and loopback:
        ray.shutdown()
        raise UsageError(
            f"--ray: the cluster has {len(nodes)} nodes, but the target {loopback[0]} is a loopback address "
            "that actors on other nodes cannot reach.",
            "Attach to the server by an address every node can reach.",
        )
    return ray


def disconnect() -> None:
    """Leave the cluster (our actors die with the connection), if we joined one."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        with contextlib.suppress(Exception):
            ray.shutdown()


def cluster_cpus(ray: ModuleType) -> int:
    return int(ray.cluster_resources().get("CPU", 1))


def cluster_nodes(ray: ModuleType) -> int:
    return max(1, sum(1 for n in ray.nodes() if n.get("Alive")))


class LoadActor:
    """The actor (made remote by `RayWorker`): a `WorkerCore` in the actor's own event loop."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.core: WorkerCore | None = None

    async def start(self) -> int:
        """Start the users; returns the actor's process id (the pool names it if the actor dies)."""
        self.core = WorkerCore(self.spec)
        await self.core.start()
        return os.getpid()

    def _core(self) -> WorkerCore:
        assert self.core is not None, "start() first"
        return self.core

    async def collect(self) -> WorkerReport:
        return self._core().collect()

    async def users(self, n: int) -> None:
        self._core().set_users(n)

    async def pause(self) -> None:
        self._core().pause()

    async def resume(self) -> None:
        self._core().resume()

    async def workload(self, workload: Any) -> None:
        self._core().set_workload(workload)

    async def drain(self, timeout_s: float) -> bool:
        return await self._core().drain(timeout_s)

    async def stop(self) -> WorkerReport:
        core = self._core()
        await core.stop()
        return core.collect()


class RayWorker:
    """One Ray actor as the pool's `WorkerHandle`."""

    remote_clock = True  # its times are another node's: the pool moves them onto its own clock

    def __init__(self, ray: ModuleType, spec: WorkerSpec) -> None:
        self.index = spec.index
        self._ray = ray
        remote = ray.remote(num_cpus=1, scheduling_strategy="SPREAD", max_restarts=0)(LoadActor)
        self._actor = remote.remote(spec)
        self._alive = True
        self.pid: int | None = None
        self._death = "Ray actor died"  # what Ray said when a call failed

    async def started(self, timeout_s: float) -> None:
        try:
            pid = await asyncio.wait_for(self._actor.start.remote(), timeout_s)
        except Exception as exc:
            self._alive = False
            raise TargetError(f"Ray load worker {self.index} could not start: {exc}") from exc
        self.pid = pid if isinstance(pid, int) else None

    async def call(self, command: Command, *args: Any) -> Any:
        try:
            return await getattr(self._actor, command.value).remote(*args)
        except Exception as exc:  # RayActorError, a lost node: the pool counts this worker as gone
            self._alive = False
            self._death = f"Ray actor died: {_first_line(exc)}"
            raise ConnectionError(f"Ray load worker {self.index}: {exc}") from exc

    def tell(self, command: Command, *args: Any) -> None:
        if self._alive:
            getattr(self._actor, command.value).remote(*args)

    def alive(self) -> bool:
        return self._alive

    async def ended(self) -> str:
        return self._death

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._ray.kill(self._actor)
        self._alive = False


def _first_line(exc: BaseException, limit: int = 160) -> str:
    """An error's first line, cut to `limit` characters (Ray's run to a page, with the actor's spec)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""The servers a run measures (docs/architecture.md TARGET): launch vLLM, start the simulator, or probe attached URLs.

`open_serving` returns a `Serving`: the probed `ServerInfo` of every endpoint (shared by the load
driver and the scrapers) and the launched process, if any, which `Serving.stop` stops with its tree.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
from dataclasses import dataclass

from agentx_tui.engine import LaunchedServer, ServerInfo, probe_server, start_sim, start_vllm
from agentx_tui.net import is_loopback
from agentx_tui.run.plan import TargetPlan
from agentx_tui.telemetry import PrometheusSource


@dataclass
class Serving:
    label: str
    simulated: bool
    endpoints: list[ServerInfo]  # where load goes and (without --prometheus) what is scraped
    launched: LaunchedServer | None = None
    sim_gpu: str | None = None
    sim_gpus: int | None = None
    fleet: PrometheusSource | None = None  # --prometheus: every replica's telemetry, read from there

    @property
    def local(self) -> bool:
        """Whether the servers run on this machine (so this machine's NVML describes their GPUs)."""
        if self.launched is not None:
            return True
        return bool(self.endpoints) and all(is_loopback(e.url) for e in self.endpoints)

    def stop(self) -> None:
        if self.launched is not None:
            self.launched.stop()

    async def aclose(self) -> None:
        """Stop what this run started: the launched server (its whole tree), the fleet's client."""
        await asyncio.to_thread(self.stop)
        if self.fleet is not None:
            await self.fleet.aclose()


class StartupProgress:
    """A visible elapsed-time line on stderr while a server starts (one line per 10 s off a TTY)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.tty = sys.stderr.isatty()
        self._last_print = -10.0

    def __call__(self, elapsed: float, last_line: str) -> None:
        if self.tty:
            line = f"starting {self.label}: {elapsed:5.0f} s  {last_line[:60]}"
            sys.stderr.write("\r\x1b[2K" + line)
            sys.stderr.flush()
        elif elapsed - self._last_print >= 10.0:
            self._last_print = elapsed
            print(f"starting {self.label}: {elapsed:.0f} s", file=sys.stderr, flush=True)

    def done(self, elapsed: float) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[2K")
        print(f"{self.label} is healthy after {elapsed:.1f} s", file=sys.stderr, flush=True)


async def _open_fleet(plan: TargetPlan, interval_s: float) -> PrometheusSource:
    """Reach the Prometheus that scrapes the fleet and find its replicas (a `TargetError` if not)."""
    assert plan.prometheus is not None
    source = PrometheusSource(
        plan.prometheus.url,
        selector=plan.prometheus.selector or None,
        token=plan.prometheus.token,
        headers=dict(plan.prometheus.headers),
        query_timeout_s=0.7 * interval_s,
        tick_budget_s=0.8 * interval_s,
    )
    try:
        found = await source.start()
    except BaseException:
        await source.aclose()
        raise
    print(
        f"prometheus {source.url}: {len(found.replicas)} replica(s), scrape interval "
        f"{found.scrape_interval_s:g} s ({found.interval_source}), window {found.window_s:g} s",
        file=sys.stderr,
        flush=True,
    )
    return source


async def open_serving(plan: TargetPlan, *, api_key: str | None, interval_s: float = 1.0) -> Serving:
    if plan.kind in ("attach", "prometheus"):
        fleet = await _open_fleet(plan, interval_s) if plan.prometheus is not None else None
        try:
            endpoints = [await probe_server(url, api_key=api_key) for url in plan.attach]
        except BaseException:
            if fleet is not None:
                await fleet.aclose()
            raise
        sims = [e.sim for e in endpoints if e.sim]
        label = "attach " + ", ".join(e.url for e in endpoints)
        if fleet is not None:
            load_to = f" · load to {', '.join(e.url for e in endpoints)}" if endpoints else " · observing"
            label = f"prometheus {fleet.url}{load_to}"
        return Serving(label, bool(sims), endpoints, None, *_sim_gpu(sims[0] if sims else None), fleet=fleet)
    started = time.monotonic()
    if plan.kind == "serve":
        assert plan.serve is not None
        progress = StartupProgress(f"vLLM ({plan.serve})")
        launched = await start_vllm(
            plan.serve,
            plan.vllm_args,
            port=plan.port,
            vllm_cmd=plan.vllm_cmd,
            api_key=api_key,
            timeout_s=plan.startup_timeout_s,
            progress=progress,
        )
        progress.done(time.monotonic() - started)
    else:
        launched = await start_sim(
            plan.sim_profile,
            port=plan.port,
            cpu_kv_gb=plan.sim_cpu_kv_gb,
            cpu_kv_gbps=plan.sim_cpu_kv_gbps,
            max_num_batched_tokens=plan.sim_max_num_batched_tokens,
            spec=None if plan.sim_spec is None else str(plan.sim_spec),
        )
    try:
        info = await probe_server(launched.url, api_key=api_key)
    except BaseException:
        launched.stop()
        raise
    info = dataclasses.replace(info, kv_cache_metrics_sample=launched.kv_cache_metrics_sample)
    if plan.kind == "sim":
        return Serving(f"simulated {plan.sim_profile}", True, [info], launched, *_sim_gpu(info.sim))
    return Serving(launched.label, False, [info], launched)


def _sim_gpu(sim: dict[str, object] | None) -> tuple[str | None, int | None]:
    if not sim:
        return None, None
    gpus = sim.get("gpus")
    return (str(sim["gpu"]) if sim.get("gpu") else None), (gpus if isinstance(gpus, int) else None)

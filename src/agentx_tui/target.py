"""Open the run's target (DESIGN §3 TARGET): launch vLLM, start the simulator, or probe attached URLs."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from agentx_tui.config import RunConfig
from agentx_tui.engine import EndpointInfo, LaunchedServer, probe_endpoint, start_sim, start_vllm


@dataclass
class Target:
    label: str
    simulated: bool
    endpoints: list[EndpointInfo]
    launched: LaunchedServer | None = None
    sim_gpu: str | None = None
    sim_gpus: int | None = None

    def stop(self) -> None:
        if self.launched is not None:
            self.launched.stop()


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


async def open_target(config: RunConfig) -> Target:
    if config.target == "attach":
        endpoints = [await probe_endpoint(url, api_key=config.api_key) for url in config.attach]
        sims = [e.sim for e in endpoints if e.sim]
        label = "attach " + ", ".join(e.url for e in endpoints)
        return Target(label, bool(sims), endpoints, None, *_sim_gpu(sims[0] if sims else None))
    started = time.monotonic()
    if config.target == "serve":
        assert config.serve is not None
        progress = StartupProgress(f"vLLM ({config.serve})")
        launched = await start_vllm(
            config.serve,
            config.vllm_args,
            port=config.port,
            vllm_cmd=config.vllm_cmd,
            api_key=config.api_key,
            timeout_s=config.startup_timeout_s,
            progress=progress,
        )
        progress.done(time.monotonic() - started)
    else:
        launched = await start_sim(config.sim_profile, port=config.port)
    try:
        info = await probe_endpoint(launched.url, api_key=config.api_key)
    except BaseException:
        launched.stop()
        raise
    if config.target == "sim":
        return Target(f"simulated {config.sim_profile}", True, [info], launched, *_sim_gpu(info.sim))
    return Target(launched.label, False, [info], launched)


def _sim_gpu(sim: dict[str, object] | None) -> tuple[str | None, int | None]:
    if not sim:
        return None, None
    gpus = sim.get("gpus")
    return (str(sim["gpu"]) if sim.get("gpu") else None), (gpus if isinstance(gpus, int) else None)

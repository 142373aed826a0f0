"""What the one probe of a server learned (engine/attach.py), shared by the driver and the scrapers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentx_tui.snapshot import Flavor

if TYPE_CHECKING:  # a load worker imports this module: not the scrapers at run time
    from agentx_tui.telemetry import ServerIdentity


@dataclass(frozen=True)
class ServerInfo:
    url: str  # base URL, e.g. http://127.0.0.1:8000
    model: str
    max_model_len: int | None = None
    engine_version: str | None = None
    flavor: Flavor = "unknown"
    has_metrics: bool = False
    block_size: int | None = None  # KV block size from `vllm:cache_config_info`, when the server says
    sim: dict[str, Any] | None = None  # the simulator's /version details (profile, gpu, gpus)
    # The share of KV blocks its residency histograms sample (--kv-cache-metrics-sample): known for a
    # server this run launched and for the simulator (its /version says); vLLM does not export it.
    kv_cache_metrics_sample: float | None = None

    def identity(self) -> ServerIdentity:
        """What the probe learnt that each of this server's scraped figures carries."""
        sample = self.kv_cache_metrics_sample
        if sample is None and self.sim is not None and isinstance(self.sim.get("kv_cache_metrics_sample"), float):
            sample = self.sim["kv_cache_metrics_sample"]
        return {
            "model": self.model,
            "engine_version": self.engine_version,
            "max_model_len": self.max_model_len,
            "flavor": self.flavor,
            "kv_cache_metrics_sample": sample,
        }

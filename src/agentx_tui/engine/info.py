"""What the one probe of a server learned (engine/attach.py), shared by the driver and the scrapers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentx_tui.snapshot import Flavor


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

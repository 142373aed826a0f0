"""The UI's own bounded histories for sparklines (the Snapshot carries only the current window)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, fields

from agentx_tui.telemetry.snapshot import Snapshot

# Enough for a 200-column chart at one sample per snapshot; older samples simply fall off.
HISTORY_LEN = 240


def _ring() -> deque[float | None]:
    return deque(maxlen=HISTORY_LEN)


@dataclass
class History:
    gpu_util: deque[float | None] = field(default_factory=_ring)
    kv_usage: deque[float | None] = field(default_factory=_ring)
    prefix_hit: deque[float | None] = field(default_factory=_ring)
    output_tps: deque[float | None] = field(default_factory=_ring)
    prompt_tps: deque[float | None] = field(default_factory=_ring)
    cached_tps: deque[float | None] = field(default_factory=_ring)
    total_tps: deque[float | None] = field(default_factory=_ring)

    def add(self, snap: Snapshot) -> None:
        utils = [gpu.utilization for gpu in snap.gpu.gpus if gpu.utilization is not None]
        self.gpu_util.append(sum(utils) / len(utils) if utils else None)
        agg = snap.aggregate
        self.kv_usage.append(agg.kv_cache_usage if agg else None)
        self.prefix_hit.append(agg.prefix_hit_rate_window if agg else None)
        rates = throughput(snap)
        self.output_tps.append(rates.output)
        self.prompt_tps.append(rates.prompt)
        self.cached_tps.append(rates.cached)
        self.total_tps.append(rates.total)

    def clear(self) -> None:
        for item in fields(self):
            getattr(self, item.name).clear()


@dataclass(frozen=True)
class Rates:
    source: str
    output: float | None
    prompt: float | None
    cached: float | None
    total: float | None
    requests: float | None


def throughput(snap: Snapshot) -> Rates:
    """Token rates as the driver measured them; the server's counters when no load is sent."""
    client = snap.client
    if client is not None:
        return Rates(
            "client",
            client.output_tokens_per_s,
            client.prompt_tokens_per_s,
            client.cached_prompt_tokens_per_s,
            client.total_tokens_per_s,
            client.requests_per_s,
        )
    agg = snap.aggregate
    if agg is None:
        return Rates("none", None, None, None, None, None)
    total = (
        agg.prompt_tokens_per_s + agg.generation_tokens_per_s
        if agg.prompt_tokens_per_s is not None and agg.generation_tokens_per_s is not None
        else None
    )
    return Rates(
        "server",
        agg.generation_tokens_per_s,
        agg.prompt_tokens_per_s,
        agg.cached_prompt_tokens_per_s,
        total,
        agg.requests_per_s,
    )

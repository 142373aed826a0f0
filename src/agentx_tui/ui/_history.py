"""The UI's own bounded histories for sparklines (the Snapshot carries only the current window)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, fields

from agentx_tui.snapshot import Snapshot
from agentx_tui.snapshot.rates import rates

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
        now = rates(snap)
        self.output_tps.append(now.output)
        self.prompt_tps.append(now.prompt)
        self.cached_tps.append(now.cached)
        self.total_tps.append(now.total)

    def clear(self) -> None:
        for item in fields(self):
            getattr(self, item.name).clear()

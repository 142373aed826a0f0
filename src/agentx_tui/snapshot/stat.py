"""Arithmetic over figures, in one place: a ratio that knows `None`, running means and maxima over
ticks, and the per-tick hardware figures (KV usage, GPU utilisation and power) that the report and a
sweep point both average."""

from __future__ import annotations

from agentx_tui.snapshot.model import Snapshot


def ratio(num: float | None, den: float | None) -> float | None:
    """num / den; None when either is unknown or the denominator is not positive (never a 0 for n/a)."""
    if num is None or den is None or not den > 0:
        return None
    return num / den


class RunningStat:
    """Mean and max of the values seen; None values (an unknown figure that tick) are skipped."""

    __slots__ = ("max", "n", "total")

    def __init__(self) -> None:
        self.total = 0.0
        self.n = 0
        self.max: float | None = None

    def add(self, value: float | None) -> None:
        if value is None:
            return
        self.total += value
        self.n += 1
        self.max = value if self.max is None else max(self.max, value)

    @property
    def mean(self) -> float | None:
        return self.total / self.n if self.n else None


class TickMeans:
    """KV usage, GPU utilisation and GPU power over ticks (docs/metrics.md):

    - KV usage: the aggregate endpoint's (the mean over the endpoints that are up), mean and max over
      the ticks that reported one;
    - GPU utilisation: per tick the mean over the GPUs that reported one, then the mean over ticks;
    - GPU power: per tick the *sum* over the GPUs (the whole node's draw, what owned hardware pays
      for), then the mean over the ticks that had a reading."""

    __slots__ = ("gpu_power", "gpu_util", "kv")

    def __init__(self) -> None:
        self.kv = RunningStat()
        self.gpu_util = RunningStat()
        self.gpu_power = RunningStat()

    def add(self, snap: Snapshot) -> None:
        agg = snap.aggregate
        self.kv.add(agg.kv_cache_usage if agg else None)
        utils = [g.utilization for g in snap.gpu.gpus if g.utilization is not None]
        self.gpu_util.add(sum(utils) / len(utils) if utils else None)
        powers = [g.power_w for g in snap.gpu.gpus if g.power_w is not None]
        self.gpu_power.add(sum(powers) if powers else None)

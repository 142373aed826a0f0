"""Each GPU's energy since its first sample in the run (docs/metrics.md, "Energy"), pure: the caller
supplies the clock and the readings.

Where the driver has a total-energy counter (NVML's `nvmlDeviceGetTotalEnergyConsumption`, DCGM's
`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`: mJ since the driver loaded) each sample adds its step, restarts
handled as the servers' counters are (a counter that went down counted from zero again: all of its new
value is the step). Where it has none, the power is integrated instead: the trapezoid between two
samples, or the power now over the gap when only this sample has one. A sample with neither reading
changes nothing (the next one covers the gap). A GPU first seen mid-run starts at zero there: its
counter's earlier value is not the run's.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentx_tui.snapshot import EnergyFrom


@dataclass
class _GpuEnergy:
    t: float
    counter_j: float | None
    power_w: float | None
    total_j: float
    source: EnergyFrom


class EnergyMeter:
    """Energy per GPU (by a key that stays the GPU's: its UUID, else its index) since its first sample."""

    def __init__(self) -> None:
        self._gpus: dict[str, _GpuEnergy] = {}

    def add(
        self, key: str, now: float, *, counter_j: float | None, power_w: float | None
    ) -> tuple[float | None, EnergyFrom | None]:
        """This sample's reading of one GPU → its joules since its first sample, and how they were counted
        (None and None until it is first read)."""
        last = self._gpus.get(key)
        if counter_j is None and power_w is None:  # nothing read: the next reading bridges the gap
            return (None, None) if last is None else (last.total_j, last.source)
        source: EnergyFrom
        if last is None:  # the GPU's first reading: the run's start, for it
            source = "counter" if counter_j is not None else "power"
            self._gpus[key] = _GpuEnergy(now, counter_j, power_w, 0.0, source)
            return 0.0, source
        if counter_j is not None and last.counter_j is not None:
            step = counter_j if counter_j < last.counter_j else counter_j - last.counter_j
            source = "counter"
        elif power_w is not None:
            dt = max(0.0, now - last.t)
            step = (power_w + last.power_w) / 2 * dt if last.power_w is not None else power_w * dt
            source = "power"
        else:  # the counter came back (or appeared) without a power reading: it counts from here
            step, source = 0.0, last.source
        total = last.total_j + step
        self._gpus[key] = _GpuEnergy(now, counter_j, power_w, total, source)
        return total, source

"""GPU figures from a DCGM exporter page (NVIDIA's `dcgm-exporter`, or the simulator's imitation).

Fields and units as dcgm-exporter publishes them: ``DCGM_FI_DEV_GPU_UTIL`` in percent,
``DCGM_FI_DEV_FB_USED``/``_FREE``/``_RESERVED`` in MiB, power in W, temperature in °C, SM clock in MHz,
``DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`` in mJ since boot; each series labelled ``gpu`` (index),
``UUID`` and ``modelName``. A reader that keeps an `EnergyMeter` gets each GPU's energy since its
first sample (docs/metrics.md, "Energy").
"""

from __future__ import annotations

from typing import Literal

import httpx

from agentx_tui.snapshot import GpuReading, GpuState
from agentx_tui.telemetry._energy import EnergyMeter
from agentx_tui.telemetry._fetch import FetchError, fetch_text
from agentx_tui.telemetry._parse import PageError, parse_page

_MIB = 1024 * 1024
ENERGY_FIELD = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"  # mJ since boot (a counter)
Samples = dict[str, list[tuple[dict[str, str], float]]]


def _by_gpu(samples: Samples, name: str) -> dict[int, float]:
    out: dict[int, float] = {}
    for labels, value in samples.get(name, []):
        try:
            index = int(labels.get("gpu", ""))
        except ValueError:
            continue
        out[index] = value
    return out


def _labels_by_gpu(samples: Samples) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {}
    for name, series in samples.items():
        if not name.startswith("DCGM_FI_"):
            continue
        for labels, _ in series:
            try:
                out.setdefault(int(labels.get("gpu", "")), labels)
            except ValueError:
                continue
    return out


def gpus_from_samples(
    samples: Samples,
    source: Literal["dcgm", "sim"] = "dcgm",
    *,
    energy: EnergyMeter | None = None,
    now: float = 0.0,
) -> tuple[GpuReading, ...]:
    """Every GPU a DCGM page describes, by index; empty when the page has no DCGM series. With an
    `energy` meter (kept by the reader from page to page), each GPU's energy since its first sample."""
    util = _by_gpu(samples, "DCGM_FI_DEV_GPU_UTIL")
    used = _by_gpu(samples, "DCGM_FI_DEV_FB_USED")
    free = _by_gpu(samples, "DCGM_FI_DEV_FB_FREE")
    reserved = _by_gpu(samples, "DCGM_FI_DEV_FB_RESERVED")
    power = _by_gpu(samples, "DCGM_FI_DEV_POWER_USAGE")
    limit = _by_gpu(samples, "DCGM_FI_DEV_POWER_MGMT_LIMIT")
    temp = _by_gpu(samples, "DCGM_FI_DEV_GPU_TEMP")
    clock = _by_gpu(samples, "DCGM_FI_DEV_SM_CLOCK")
    # A counter without `_total` on an exporter's page: the text parser names its samples with it.
    energy_mj = _by_gpu(samples, ENERGY_FIELD) or _by_gpu(samples, ENERGY_FIELD + "_total")
    gpus = []
    for index, labels in sorted(_labels_by_gpu(samples).items()):
        total = None
        if index in used and index in free:
            total = (used[index] + free[index] + reserved.get(index, 0.0)) * _MIB
        joules, how = None, None
        if energy is not None:
            counter = energy_mj[index] / 1000.0 if index in energy_mj else None
            key = labels.get("UUID") or str(index)
            joules, how = energy.add(key, now, counter_j=counter, power_w=power.get(index))
        gpus.append(
            GpuReading(
                index=index,
                name=labels.get("modelName") or f"GPU {index}",
                uuid=labels.get("UUID") or None,
                source=source,
                utilization=util[index] / 100.0 if index in util else None,
                memory_used_bytes=used[index] * _MIB if index in used else None,
                memory_total_bytes=total,
                power_w=power.get(index),
                power_limit_w=limit.get(index),
                temperature_c=temp.get(index),
                sm_clock_mhz=clock.get(index),
                energy_j=joules,
                energy_from=how,
            )
        )
    return tuple(gpus)


class DcgmMonitor:
    """Reads a user's ``--gpu-metrics URL`` (a dcgm-exporter) once per call."""

    def __init__(self, url: str, *, client: httpx.AsyncClient, timeout_s: float = 0.8) -> None:
        self.url = url
        self._client = client
        self._timeout_s = timeout_s
        self._energy = EnergyMeter()

    async def sample(self, now: float) -> GpuState:
        try:
            page = parse_page(await fetch_text(self._client, self.url, self._timeout_s))
        except FetchError as exc:
            return GpuState(status=f"dcgm {self.url} down: {exc.reason}")
        except PageError as exc:
            return GpuState(status=f"dcgm {self.url}: {exc}")
        gpus = gpus_from_samples(page.samples, energy=self._energy, now=now)
        if not gpus:
            return GpuState(status=f"dcgm {self.url}: no DCGM_FI_* GPU series on the page")
        return GpuState(status=f"dcgm: {len(gpus)} GPU{'s' if len(gpus) != 1 else ''}", gpus=gpus)

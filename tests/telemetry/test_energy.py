"""Each GPU's energy since its first sample (docs/metrics.md, "Energy"): the driver's energy counter's
steps, restarts handled like the servers' counters; its power over time where it has no counter; from a
DCGM exporter's page as from NVML."""

from __future__ import annotations

import httpx
import pytest

from agentx_tui.telemetry import DcgmMonitor
from agentx_tui.telemetry._energy import EnergyMeter


def test_counter_steps_from_the_first_sample_with_restarts() -> None:
    meter = EnergyMeter()
    assert meter.add("g", 0.0, counter_j=5e6, power_w=300.0) == (0.0, "counter")
    assert meter.add("g", 1.0, counter_j=5e6 + 310.0, power_w=300.0) == (310.0, "counter")
    assert meter.add("g", 2.0, counter_j=200.0, power_w=300.0) == (510.0, "counter")  # restarted at 0
    # A GPU first seen mid-run starts there: its counter's earlier value is not the run's.
    assert meter.add("late", 2.0, counter_j=9e9, power_w=None) == (0.0, "counter")


def test_a_failed_read_is_bridged_by_the_next_one() -> None:
    meter = EnergyMeter()
    assert meter.add("g", 0.0, counter_j=None, power_w=None) == (None, None)  # never read yet
    meter.add("g", 1.0, counter_j=1000.0, power_w=None)
    assert meter.add("g", 2.0, counter_j=None, power_w=None) == (0.0, "counter")
    assert meter.add("g", 3.0, counter_j=1600.0, power_w=None) == (600.0, "counter")


def test_power_is_integrated_where_there_is_no_counter() -> None:
    meter = EnergyMeter()
    meter.add("g", 10.0, counter_j=None, power_w=100.0)
    assert meter.add("g", 12.0, counter_j=None, power_w=300.0) == (400.0, "power")  # (100 + 300) / 2 × 2 s
    # A counter that appears later counts from its first reading on, not from the driver's start.
    assert meter.add("g", 13.0, counter_j=7e6, power_w=None) == (400.0, "power")
    assert meter.add("g", 14.0, counter_j=7e6 + 250.0, power_w=None) == (650.0, "counter")


ENERGY_PAGE = """\
# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="0",UUID="GPU-aaa",modelName="NVIDIA H200"}} {a}
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="1",UUID="GPU-bbb",modelName="NVIDIA H200"}} {b}
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{{gpu="0",UUID="GPU-aaa",modelName="NVIDIA H200"}} 612.5
"""


async def test_dcgm_exporter_energy_field() -> None:
    """As dcgm-exporter writes it (a counter without `_total`, mJ since boot): each GPU's joules."""
    pages = iter([ENERGY_PAGE.format(a=4e9, b=2e9), ENERGY_PAGE.format(a=4e9 + 6.125e6, b=2e9 + 3e6)])
    transport = httpx.MockTransport(lambda request: httpx.Response(200, text=next(pages)))
    async with httpx.AsyncClient(transport=transport) as client:
        monitor = DcgmMonitor("http://dcgm:9400/metrics", client=client)
        await monitor.sample(0.0)
        state = await monitor.sample(10.0)
    assert [(g.energy_j, g.energy_from) for g in state.gpus] == [
        (pytest.approx(6125.0), "counter"),
        (3000.0, "counter"),
    ]

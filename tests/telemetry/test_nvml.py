"""`NvmlSampler` against fake `pynvml` modules, and (marked `gpu`) against the real driver."""

from __future__ import annotations

import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from agentx_tui.telemetry import DcgmMonitor, NvmlSampler

from .test_monitor import DCGM_PAGE


class NVMLError(Exception):
    pass


class NVMLError_NotSupported(NVMLError):  # named as pynvml names it
    pass


class NVMLError_LibraryNotFound(NVMLError):
    def __str__(self) -> str:
        return "NVML Shared Library Not Found"


class FakeClock:
    """The sampler's clock, moved by the test: the fake driver's energy counters follow it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fake_nvml(
    count: int = 2,
    unsupported: tuple[str, ...] = (),
    init_error: Exception | None = None,
    *,
    clock: FakeClock | None = None,
    watts: Callable[[str], float] = lambda h: 350.5,
    energy_at_start_mj: float = 9e9,
) -> Any:
    """A `pynvml` of `count` GPUs. Each draws `watts(handle)` (its power reading) and its total-energy
    counter, mJ since the driver loaded (`energy_at_start_mj` at the clock's start), grows at that power
    as the `clock` moves: `module.power_w` and `module.reload_at` let a test change either."""
    module: Any = types.ModuleType("pynvml")
    clock = clock or FakeClock()
    start = clock.now
    module.reloaded_at = None

    def energy_mj(handle: str) -> float:
        since = module.reloaded_at if module.reloaded_at is not None else start
        base = 0.0 if module.reloaded_at is not None else energy_at_start_mj
        return base + watts(handle) * (clock.now - since) * 1000.0

    module.NVMLError = NVMLError
    module.NVML_TEMPERATURE_GPU = 0
    module.NVML_CLOCK_SM = 1
    module.calls = []

    def fn(name: str, result: Callable[..., Any]) -> None:
        def call(*args: Any) -> Any:
            module.calls.append(name)
            if name in unsupported:
                raise NVMLError_NotSupported("Not Supported")
            return result(*args)

        setattr(module, name, call)

    def init() -> None:
        if init_error is not None:
            raise init_error

    module.nvmlInit = init
    fn("nvmlShutdown", lambda: None)
    fn("nvmlDeviceGetCount", lambda: count)
    fn("nvmlDeviceGetHandleByIndex", lambda i: f"h{i}")
    fn("nvmlDeviceGetName", lambda h: b"NVIDIA H100 80GB HBM3" if h == "h0" else "NVIDIA H100 80GB HBM3")
    fn("nvmlDeviceGetUUID", lambda h: f"GPU-{h}")
    fn("nvmlDeviceGetUtilizationRates", lambda h: types.SimpleNamespace(gpu=75, memory=10))
    fn("nvmlDeviceGetMemoryInfo", lambda h: types.SimpleNamespace(used=2 * 2**30, total=80 * 2**30, free=0))
    fn("nvmlDeviceGetPowerUsage", lambda h: round(watts(h) * 1000))  # milliwatts
    fn("nvmlDeviceGetTotalEnergyConsumption", energy_mj)
    fn("nvmlDeviceGetEnforcedPowerLimit", lambda h: 700_000)
    fn("nvmlDeviceGetTemperature", lambda h, sensor: 55)
    fn("nvmlDeviceGetClockInfo", lambda h, clock: 1755)
    fn("nvmlDeviceGetComputeRunningProcesses", lambda h: [types.SimpleNamespace(pid=4242 if h == "h0" else 77)])
    return module


def test_gpus_present() -> None:
    state = NvmlSampler(nvml=fake_nvml(count=2)).sample_once()
    assert state.status == "nvml: 2 GPUs"
    g0, g1 = state.gpus
    assert (g0.index, g0.name, g0.uuid, g0.source) == (0, "NVIDIA H100 80GB HBM3", "GPU-h0", "nvml")
    assert g1.name == "NVIDIA H100 80GB HBM3" and g1.index == 1
    assert g0.utilization == 0.75
    assert (g0.memory_used_bytes, g0.memory_total_bytes) == (2 * 2**30, 80 * 2**30)
    assert (g0.power_w, g0.power_limit_w) == (350.5, 700.0)
    assert (g0.temperature_c, g0.sm_clock_mhz) == (55, 1755)
    assert (g0.pids, g1.pids) == ((4242,), (77,))


def test_a_function_the_driver_does_not_support_gives_none_for_that_figure() -> None:
    state = NvmlSampler(nvml=fake_nvml(count=1, unsupported=("nvmlDeviceGetPowerUsage",))).sample_once()
    (gpu,) = state.gpus
    assert gpu.power_w is None
    assert gpu.power_limit_w == 700.0 and gpu.utilization == 0.75


def test_energy_is_the_driver_s_counter_since_the_first_sample() -> None:
    """The counter reads mJ since the driver loaded (9e9 here): the run counts from its first sample."""
    clock = FakeClock()
    nvml = fake_nvml(count=2, clock=clock, watts=lambda h: 300.0 if h == "h0" else 450.0)
    sampler = NvmlSampler(nvml=nvml, clock=clock)
    first = sampler.sample_once()
    assert [(g.energy_j, g.energy_from) for g in first.gpus] == [(0.0, "counter"), (0.0, "counter")]
    clock.now += 10.0
    assert [g.energy_j for g in sampler.sample_once().gpus] == pytest.approx([3000.0, 4500.0])
    # The driver reloaded: its counter starts again from zero, and all of its new value is the run's.
    nvml.reloaded_at = clock.now
    clock.now += 2.0
    assert [g.energy_j for g in sampler.sample_once().gpus] == pytest.approx([3600.0, 5400.0])


def test_without_an_energy_counter_the_power_is_integrated() -> None:
    clock = FakeClock()
    watts = {"h0": 200.0}
    nvml = fake_nvml(
        count=1, clock=clock, watts=watts.__getitem__, unsupported=("nvmlDeviceGetTotalEnergyConsumption",)
    )
    sampler = NvmlSampler(nvml=nvml, clock=clock)
    assert sampler.sample_once().gpus[0].energy_j == 0.0
    clock.now += 4.0
    watts["h0"] = 400.0  # the trapezoid between two readings: (200 + 400) / 2 W for 4 s
    (gpu,) = sampler.sample_once().gpus
    assert (gpu.energy_j, gpu.energy_from) == (pytest.approx(1200.0), "power")


def test_without_energy_or_power_there_is_no_energy() -> None:
    unsupported = ("nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetPowerUsage")
    (gpu,) = NvmlSampler(nvml=fake_nvml(count=1, unsupported=unsupported)).sample_once().gpus
    assert (gpu.energy_j, gpu.energy_from) == (None, None)


def test_library_missing() -> None:
    state = NvmlSampler(nvml=fake_nvml(init_error=NVMLError_LibraryNotFound())).sample_once()
    assert state.status == "no NVIDIA GPU visible: NVML Shared Library Not Found"
    assert state.gpus == ()


def test_no_gpu() -> None:
    state = NvmlSampler(nvml=fake_nvml(count=0)).sample_once()
    assert state.status == "no NVIDIA GPU visible: the driver reports no GPU" and state.gpus == ()


def test_module_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    state = NvmlSampler().sample_once()
    assert state.status.startswith("no NVIDIA GPU visible: nvidia-ml-py is not installed")


def test_worker_thread_publishes_and_stops() -> None:
    nvml = fake_nvml(count=1)
    sampler = NvmlSampler(interval_s=0.01, nvml=nvml)
    assert sampler.latest().status == "nvml: starting"
    sampler.start()
    deadline = time.monotonic() + 5
    while not sampler.latest().gpus and time.monotonic() < deadline:
        time.sleep(0.01)
    sampler.close()
    assert sampler.latest().status == "nvml: 1 GPU"
    assert nvml.calls[-1] == "nvmlShutdown"


def test_a_hanging_driver_call_does_not_block_latest() -> None:
    # The driver call hangs until the test lets it go: a latest() that waited on it would hold here
    # for the whole five seconds and then see the GPU.
    nvml = fake_nvml(count=1)
    let_go = threading.Event()
    nvml.nvmlDeviceGetCount = lambda: let_go.wait(5) and 1
    sampler = NvmlSampler(nvml=nvml)
    sampler.start()
    started = time.monotonic()
    state = sampler.latest()
    let_go.set()
    assert state.status == "nvml: starting" and time.monotonic() - started < 5
    sampler.close()


async def test_dcgm_monitor() -> None:
    def serving(text: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200, text=text)))

    async with serving(DCGM_PAGE) as client:
        state = await DcgmMonitor("http://dcgm:9400/metrics", client=client).sample(0.0)
    assert state.status == "dcgm: 2 GPUs" and state.gpus[0].source == "dcgm"
    async with serving("x 1\n") as client:
        state = await DcgmMonitor("http://dcgm:9400/metrics", client=client).sample(0.0)
    assert state.gpus == () and "no DCGM_FI_* GPU series" in state.status


def _real_gpu_state() -> Any:
    state = NvmlSampler().sample_once()
    if not state.gpus:
        pytest.skip(f"no NVIDIA GPU visible here ({state.status})")
    return state


@pytest.mark.gpu
def test_real_nvml_reads_every_gpu() -> None:
    state = _real_gpu_state()
    for gpu in state.gpus:
        assert gpu.name and gpu.name != f"GPU {gpu.index}"
        assert gpu.memory_total_bytes is not None and gpu.memory_total_bytes > 0
        assert gpu.utilization is None or 0 <= gpu.utilization <= 1
        assert gpu.power_w is None or gpu.power_w > 0


@pytest.mark.gpu
def test_real_nvml_in_the_worker_thread() -> None:
    expected = len(_real_gpu_state().gpus)
    sampler = NvmlSampler(interval_s=0.2)
    sampler.start()
    deadline = time.monotonic() + 10
    while not sampler.latest().gpus and time.monotonic() < deadline:
        time.sleep(0.05)
    sampler.close()
    assert len(sampler.latest().gpus) == expected

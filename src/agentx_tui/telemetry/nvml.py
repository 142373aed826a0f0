"""Local GPU figures from NVML (the `pynvml` module of nvidia-ml-py), sampled in a worker thread.

A driver call can take tens of milliseconds (or hang on a sick GPU), so sampling runs in a daemon
thread and `latest()` only reads the last result: the event loop never waits on the driver.

Each GPU's energy since its first sample (docs/metrics.md, "Energy") comes from the driver's total-energy
counter (`nvmlDeviceGetTotalEnergyConsumption`, mJ, Volta and later), else from its power integrated over
the samples (`_energy.EnergyMeter`).
"""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

from agentx_tui.snapshot import GpuReading, GpuState
from agentx_tui.telemetry._energy import EnergyMeter

T = TypeVar("T")
_PREFIX = "no NVIDIA GPU visible"


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _reason(exc: BaseException) -> str:
    return str(exc).strip() or type(exc).__name__


class NvmlSampler:
    def __init__(
        self, interval_s: float = 1.0, nvml: ModuleType | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not interval_s > 0:
            raise ValueError("interval_s must be positive")
        self.interval_s = interval_s
        self._nvml = nvml
        self._clock = clock
        self._energy = EnergyMeter()
        self._state = GpuState(status="nvml: starting")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- public ----------------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="agentx-nvml", daemon=True)
        self._thread.start()

    def latest(self) -> GpuState:
        return self._state

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=max(2.0, 2 * self.interval_s))

    def sample_once(self) -> GpuState:
        """Initialise NVML, read every GPU once, shut down: the same figures the thread publishes."""
        nvml = self._load()
        if isinstance(nvml, GpuState):
            return nvml
        started = self._init(nvml)
        if started is not None:
            return started
        try:
            return self._read_all(nvml)
        finally:
            self._shutdown(nvml)

    # -- worker ----------------------------------------------------------------------------------

    def _run(self) -> None:
        nvml = self._load()
        if isinstance(nvml, GpuState):
            self._state = nvml
            return
        failed = self._init(nvml)
        if failed is not None:
            self._state = failed
            return
        try:
            while not self._stop.is_set():
                self._state = self._read_all(nvml)
                self._stop.wait(self.interval_s)
        finally:
            self._shutdown(nvml)

    def _load(self) -> ModuleType | GpuState:
        if self._nvml is not None:
            return self._nvml
        try:
            return importlib.import_module("pynvml")
        except ImportError as exc:
            return GpuState(status=f"{_PREFIX}: nvidia-ml-py is not installed ({_reason(exc)})")

    def _init(self, nvml: ModuleType) -> GpuState | None:
        try:
            nvml.nvmlInit()
        except Exception as exc:  # NVMLError subclasses, or OSError from a broken libnvidia-ml
            return GpuState(status=f"{_PREFIX}: {_reason(exc)}")
        return None

    def _shutdown(self, nvml: ModuleType) -> None:
        # Shutting down a half-initialised library must not mask the state already published.
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()

    def _read_all(self, nvml: ModuleType) -> GpuState:
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except nvml.NVMLError as exc:
            return GpuState(status=f"{_PREFIX}: {_reason(exc)}")
        if count == 0:
            return GpuState(status=f"{_PREFIX}: the driver reports no GPU")
        gpus = []
        now = self._clock()
        for index in range(count):
            try:
                handle = nvml.nvmlDeviceGetHandleByIndex(index)
            except nvml.NVMLError:
                continue  # a GPU that fell off the bus; the others still count
            gpus.append(self._read_one(nvml, index, handle, now))
        if not gpus:
            return GpuState(status=f"{_PREFIX}: no GPU handle could be opened")
        return GpuState(status=f"nvml: {len(gpus)} GPU{'s' if len(gpus) != 1 else ''}", gpus=tuple(gpus))

    def _read_one(self, nvml: ModuleType, index: int, handle: object, now: float) -> GpuReading:
        def get(call: Callable[[], T]) -> T | None:
            try:
                return call()
            except nvml.NVMLError:  # NotSupported, NoPermission, …: that one figure is unknown
                return None

        name = get(lambda: _text(nvml.nvmlDeviceGetName(handle)))
        uuid = get(lambda: _text(nvml.nvmlDeviceGetUUID(handle)))
        util = get(lambda: nvml.nvmlDeviceGetUtilizationRates(handle).gpu / 100.0)
        memory = get(lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
        power_mw = get(lambda: nvml.nvmlDeviceGetPowerUsage(handle))
        limit_mw = get(lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(handle))
        temp = get(lambda: nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU))
        clock = get(lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM))
        processes = get(lambda: nvml.nvmlDeviceGetComputeRunningProcesses(handle)) or []
        energy_mj = get(lambda: nvml.nvmlDeviceGetTotalEnergyConsumption(handle))
        power_w = None if power_mw is None else power_mw / 1000.0
        energy_j, energy_from = self._energy.add(
            uuid or str(index), now, counter_j=None if energy_mj is None else energy_mj / 1000.0, power_w=power_w
        )
        return GpuReading(
            index=index,
            name=name or f"GPU {index}",
            uuid=uuid,
            source="nvml",
            utilization=None if util is None else float(util),
            memory_used_bytes=None if memory is None else float(memory.used),
            memory_total_bytes=None if memory is None else float(memory.total),
            power_w=power_w,
            power_limit_w=None if limit_mw is None else limit_mw / 1000.0,
            temperature_c=None if temp is None else float(temp),
            sm_clock_mhz=None if clock is None else float(clock),
            pids=tuple(sorted(int(p.pid) for p in processes if getattr(p, "pid", None) is not None)),
            energy_j=energy_j,
            energy_from=energy_from,
        )

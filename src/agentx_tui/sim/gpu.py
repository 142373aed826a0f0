"""Simulated GPU telemetry derived from the steps the engine model ran.

- Utilisation (DCGM ``GPU_UTIL``, 0–100) = share of the last second in which a kernel ran, i.e. Σ
  kernel time of the steps that ended in the window; step overhead counts as idle GPU.
- Memory-copy utilisation = the same share weighted by how bandwidth-bound each step was.
- Power = idle power + (TDP − idle) · utilisation · (0.65 + 0.35 · compute share): a memory-bound
  decode step draws roughly two thirds of the dynamic range, a compute-bound prefill all of it.
- Temperature follows power with a first-order lag (time constant 20 s) between the profile's idle
  and full-load temperatures; the SM clock sits at the boost clock while busy, at idle clock otherwise.
- Framebuffer use is constant, as with vLLM, which allocates weights + KV cache + activation reserve
  (plus a CUDA context) at start-up.
- Energy (DCGM ``TOTAL_ENERGY_CONSUMPTION``, mJ) is that power model integrated exactly: idle power ×
  the time since start, plus each step that has ended its (TDP − idle) · kernel time · (0.65 + 0.35 ·
  its compute share). Modelled, like the power: a simulated run's energy figures say so.
"""

from __future__ import annotations

import math
from collections import deque

from agentx_tui.sim.profiles import SimProfile

WINDOW_S = 1.0
_TEMP_TAU_S = 20.0
_CUDA_CONTEXT_MIB = 512
_MIB = 1024**2


class GpuTelemetry:
    def __init__(self, profile: SimProfile, start: float) -> None:
        self._gpu = profile.gpu
        used = profile.model.weight_bytes + profile.kv_cache_memory_bytes
        self.fb_used_mib = int(used / _MIB) + _CUDA_CONTEXT_MIB + 2048
        self.fb_free_mib = max(0, self._gpu.memory_mib - self.fb_used_mib)
        self._steps: deque[tuple[float, float, float, float]] = deque()  # end, kernel, mem share, compute share
        self._temp = self._gpu.temp_idle_c
        self._temp_at = start
        self._start = start
        self._pending: deque[tuple[float, float]] = deque()  # (end, dynamic J) of steps not yet ended
        self._dynamic_j = 0.0  # above idle, of the steps that have ended

    def record(self, end: float, kernel_s: float, memory_s: float, compute_s: float) -> None:
        """A step that ended at ``end`` (wall time) and kept the GPU busy ``kernel_s`` wall seconds;
        ``memory_s``/``compute_s`` are its roofline terms (only their ratio to each other matters)."""
        longest = max(memory_s, compute_s)
        mem_share = memory_s / longest if longest else 0.0
        compute_share = compute_s / longest if longest else 0.0
        self._steps.append((end, kernel_s, mem_share, compute_share))
        dynamic_w = (self._gpu.tdp_w - self._gpu.idle_w) * (0.65 + 0.35 * compute_share)
        self._pending.append((end, dynamic_w * kernel_s))

    def energy_j(self, now: float) -> float:
        """Joules one GPU has drawn since start, by the power model: idle power throughout, and the
        dynamic energy of every step that has ended by `now` (steps are planned a little ahead)."""
        while self._pending and self._pending[0][0] <= now:
            self._dynamic_j += self._pending.popleft()[1]
        return self._gpu.idle_w * max(0.0, now - self._start) + self._dynamic_j

    def _window(self, now: float) -> tuple[float, float, float]:
        while self._steps and self._steps[0][0] < now - WINDOW_S:
            self._steps.popleft()
        busy = mem = compute = 0.0
        for end, kernel, mem_share, compute_share in self._steps:
            if end <= now:
                busy += kernel
                mem += kernel * mem_share
                compute += kernel * compute_share
        util = min(1.0, busy / WINDOW_S)
        return util, min(1.0, mem / WINDOW_S), (compute / busy if busy else 0.0)

    def sample(self, now: float) -> dict[str, float]:
        util, mem_util, compute_share = self._window(now)
        g = self._gpu
        power = g.idle_w + (g.tdp_w - g.idle_w) * util * (0.65 + 0.35 * compute_share)
        target = g.temp_idle_c + (g.temp_full_c - g.temp_idle_c) * (power - g.idle_w) / (g.tdp_w - g.idle_w)
        alpha = 1.0 - math.exp(-max(0.0, now - self._temp_at) / _TEMP_TAU_S)
        self._temp += (target - self._temp) * alpha
        self._temp_at = now
        return {
            "util_pct": round(util * 100.0),
            "mem_copy_util_pct": round(mem_util * 100.0),
            "power_w": power,
            "temp_c": round(self._temp),
            "sm_clock_mhz": float(g.sm_clock_max_mhz if util > 0 else g.sm_clock_idle_mhz),
            "fb_used_mib": float(self.fb_used_mib),
            "fb_free_mib": float(self.fb_free_mib),
            "energy_mj": self.energy_j(now) * 1000.0,
        }

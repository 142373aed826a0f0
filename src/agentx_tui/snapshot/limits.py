"""How close to the limit (docs/metrics.md, "Roofline" and "Energy"), one rule each, for a tick (the GPU
pane), a sweep point and the whole run (the report) alike:

- the roofline: the servers' estimated work per GPU (vLLM's `--enable-mfu-metrics` counters, each
  engine's already per GPU) against the chip's peak: achieved TFLOP/s and HBM GB/s, MFU, MBU, and which
  ceiling binds;
- energy: the GPUs behind the target, from each GPU's energy since the run's first sample; joules per
  token, per task, tokens per joule; a GPU's mean board power, and agents per megawatt from it.

Pure arithmetic on the Snapshot's models: None in, None out (never a 0 for n/a).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentx_tui.snapshot.model import EndpointReading, EndpointTotals, GpuPeak, GpuReading, GpuState, LimitsReading
from agentx_tui.snapshot.rows import RooflineBound
from agentx_tui.snapshot.stat import ratio

TERA = 1e12
GIGA = 1e9
MEGA = 1e6

# Why the achieved figures are n/a, where the servers do not estimate their work (docs/vllm.md).
NO_ESTIMATE_VLLM = "n/a: start vLLM with --enable-mfu-metrics (its estimated FLOPs and bytes)"
NO_ESTIMATE_SGLANG = "n/a: SGLang exports no estimate of its FLOPs and bytes"
# How a GPU's energy was measured, in words, by (reader, how).
_ENERGY_WORDS = {
    ("nvml", "counter"): "NVML total-energy counter",
    ("nvml", "power"): "NVML power × time (this driver has no energy counter)",
    ("dcgm", "counter"): "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    ("dcgm", "power"): "DCGM power × time (no energy field)",
}
MODELLED_ENERGY = "modelled: the simulator's power model, not a measurement"
SIMULATED_WORK = "the simulator's time model: the FLOPs and bytes of the steps it simulates"
VLLM_WORK = "vLLM's estimate of its work (--enable-mfu-metrics)"


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


@dataclass(frozen=True, slots=True)
class Roofline:
    """Where one GPU sits on the roofline over some span (None where unknown)."""

    achieved_tflops_per_gpu: float | None = None
    achieved_hbm_gb_per_s_per_gpu: float | None = None
    mfu: float | None = None
    mbu: float | None = None
    bound: RooflineBound | None = None


def roofline(
    flops: float | None,
    read_bytes: float | None,
    write_bytes: float | None,
    *,
    engines: int | None,
    seconds: float | None,
    peak: GpuPeak | None,
) -> Roofline:
    """One GPU's figures over `seconds`, from `flops`, `read_bytes` and `write_bytes`: each the sum over
    `engines` engines of one engine's per-GPU counter increase (or of its rate, with `seconds` = 1).

    achieved TFLOP/s = flops ÷ engines ÷ seconds ÷ 10¹²; achieved HBM GB/s = (read + write bytes) ÷
    engines ÷ seconds ÷ 10⁹; MFU = achieved ÷ the peak TFLOP/s of the dtype in use; MBU = achieved ÷ the
    peak HBM GB/s; the bound is the larger of the two ("compute" on a tie)."""
    flops_per_s = ratio(ratio(flops, engines), seconds)
    bytes_per_s = ratio(ratio(_add(read_bytes, write_bytes), engines), seconds)
    tflops = None if flops_per_s is None else flops_per_s / TERA
    gb_per_s = None if bytes_per_s is None else bytes_per_s / GIGA
    mfu = ratio(tflops, peak.tflops) if peak is not None else None
    mbu = ratio(gb_per_s, peak.hbm_gb_per_s) if peak is not None else None
    bound: RooflineBound | None = None
    if mfu is not None and mbu is not None:
        bound = "compute" if mfu >= mbu else "memory"
    return Roofline(tflops, gb_per_s, mfu, mbu, bound)


def window_roofline(endpoint: EndpointReading | None, peak: GpuPeak | None) -> Roofline:
    """Over the rate window, from an endpoint's (or the aggregate's) counter rates."""
    if endpoint is None:
        return Roofline()
    e = endpoint
    return roofline(
        e.estimated_flops_per_s,
        e.estimated_read_bytes_per_s,
        e.estimated_write_bytes_per_s,
        engines=e.estimating_engines,
        seconds=1.0,
        peak=peak,
    )


def totals_roofline(
    totals: EndpointTotals, engines: int | None, seconds: float | None, peak: GpuPeak | None
) -> Roofline:
    """Over a span of run totals (the run's, or a point's deltas) `seconds` long."""
    t = totals
    return roofline(
        t.estimated_flops, t.estimated_read_bytes, t.estimated_write_bytes, engines=engines, seconds=seconds, peak=peak
    )


def roofline_note(endpoint: EndpointReading | None) -> str | None:
    """Why the achieved figures are n/a for good (the servers do not estimate their work); None when they
    do, or when no page was read this tick (a server down or slow says nothing of its flags)."""
    if endpoint is None or endpoint.running is None or endpoint.estimating_engines:
        return None
    return NO_ESTIMATE_SGLANG if endpoint.flavor == "sglang" else NO_ESTIMATE_VLLM


def gpus_energy(gpus: Sequence[GpuReading], count: int | None) -> float | None:
    """Joules of the GPUs behind the target since the run's first sample: the mean over the GPUs that have
    an energy figure × `count` (the GPUs behind the target, as the per-GPU figures count them: a launched
    server's, not every GPU of its machine), or their sum when no count is known."""
    known = [g.energy_j for g in gpus if g.energy_j is not None]
    if not known:
        return None
    if count is None:
        return sum(known)
    return sum(known) / len(known) * count


def energy_source(gpus: Sequence[GpuReading]) -> str | None:
    """How the GPUs' energy was measured, in words (the simulator's: modelled); None without any."""
    words: list[str] = []
    for g in gpus:
        if g.energy_from is None:
            continue
        said = MODELLED_ENERGY if g.source == "sim" else _ENERGY_WORDS[(g.source, g.energy_from)]
        if said not in words:
            words.append(said)
    return "; ".join(words) or None


def agents_per_mw(agents_per_gpu: float | None, power_w_per_gpu: float | None) -> float | None:
    """Agents per megawatt of GPU board power: agents per GPU ÷ (one GPU's mean power, W ÷ 10⁶)."""
    return ratio(agents_per_gpu, None if power_w_per_gpu is None else power_w_per_gpu / MEGA)


def tick_limits(
    *,
    peak: GpuPeak,
    aggregate: EndpointReading | None,
    gpu: GpuState,
    energy_j: float | None,
    power_w: float | None,
    total_tokens_per_s: float | None,
) -> LimitsReading:
    """One tick's figures (the GPU pane's): the roofline of the aggregate's rates over the rate window, the
    GPUs' energy so far (`gpus_energy`) and joules per token = their mean power over the window (`power_w`,
    all of them) ÷ the window's total tokens/s; each n/a with its note."""
    window = window_roofline(aggregate, peak)
    note = None
    if energy_j is None:
        note = f"n/a: {gpu.status}" if not gpu.gpus else "n/a: the GPUs report neither energy nor power"
    return LimitsReading(
        peak=peak,
        achieved_tflops_per_gpu=window.achieved_tflops_per_gpu,
        achieved_hbm_gb_per_s_per_gpu=window.achieved_hbm_gb_per_s_per_gpu,
        mfu=window.mfu,
        mbu=window.mbu,
        roofline_bound=window.bound,
        roofline_note=roofline_note(aggregate),
        energy_j=energy_j,
        energy_source=energy_source(gpu.gpus),
        joules_per_token=ratio(power_w, total_tokens_per_s),
        energy_note=note,
    )


def achieved_source(endpoint: EndpointReading | None, note: str | None) -> str | None:
    """Whose estimate the achieved figures are, or (`note`) why there is none."""
    if endpoint is None or not endpoint.estimating_engines:
        return note
    return SIMULATED_WORK if endpoint.flavor == "sim" else VLLM_WORK


def span_energy(start: LimitsReading | None, end: LimitsReading | None) -> float | None:
    """The GPUs' joules between two ticks (never below 0: fewer GPUs counted at the end is not energy given back)."""
    if start is None or end is None or start.energy_j is None or end.energy_j is None:
        return None
    return max(0.0, end.energy_j - start.energy_j)


def limits_values(
    *,
    work: Roofline,
    peak: GpuPeak | None,
    source: str | None,
    energy_j: float | None,
    energy_from: str | None,
    seconds: float | None,
    gpus: int | None,
    total_tokens_per_s: float | None,
    output_tokens_per_s: float | None,
    tasks: int | None,
) -> dict[str, Any]:
    """The report's "limits" figures over one span (the run, a sweep point), as `Figures` keys: the roofline
    of the span's work, and its energy over its tokens and tasks. Tokens come as rates over the span, so
    energy ÷ tokens = the GPUs' mean power (energy ÷ seconds) ÷ the token rate."""
    power_w = ratio(energy_j, seconds)  # of all the GPUs behind the target
    return {
        "achieved_tflops_per_gpu": work.achieved_tflops_per_gpu,
        "achieved_hbm_gb_per_s_per_gpu": work.achieved_hbm_gb_per_s_per_gpu,
        "achieved_source": source,
        "peak_tflops_per_gpu": peak.tflops if peak is not None else None,
        "peak_hbm_gb_per_s_per_gpu": peak.hbm_gb_per_s if peak is not None else None,
        "peak_source": peak.source if peak is not None else None,
        "mfu": work.mfu,
        "mbu": work.mbu,
        "roofline_bound": work.bound,
        "energy_j": energy_j,
        "energy_source": energy_from,
        "gpu_power_w_per_gpu_mean": ratio(power_w, gpus),
        "joules_per_output_token": ratio(power_w, output_tokens_per_s),
        "joules_per_token": ratio(power_w, total_tokens_per_s),
        "joules_per_task": ratio(energy_j, tasks),
        "tokens_per_joule": ratio(total_tokens_per_s, power_w),
    }

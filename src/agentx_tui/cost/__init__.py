"""What the hardware costs and what it can do (docs/metrics.md): the tokens-per-dollar model (presets,
price resolution, the running meter), the roofline's ceilings (GPU peaks, the dtype in use), and the
acceptance length AgentX pins a model's speculative decoding to (the golden table).

load_presets(path=None) -> Presets          built-in presets + the user's override file
resolve_price(*, gpu_price, cost_profile, gpu_names, sim_gpu, gpus, presets=None) -> PriceChoice | None
CostMeter(price).figures(...) -> CostReading
load_peaks(path=None) -> PeakTable          built-in GPU peaks + the user's override file
compute_dtype(model, vllm_args) -> (Dtype, how it is known)
resolve_peak(*, override, sim_peak, gpu_names, dtype, sim_gpu=None, table=None) -> GpuPeak
load_golden(path=None) -> GoldenTable      built-in golden acceptance lengths + the user's override file
golden_length(served, k, *, override=None, table=None) -> GoldenLength
"""

from agentx_tui.cost._golden import GoldenLength, GoldenTable, golden_length, load_golden
from agentx_tui.cost._meter import CostMeter
from agentx_tui.cost._peaks import Dtype, PeakRow, PeakTable, compute_dtype, load_peaks, resolve_peak
from agentx_tui.cost._presets import GpuPreset, Presets, builtin_path, load_presets, user_path
from agentx_tui.cost._price import PriceChoice, resolve_price

__all__ = [
    "CostMeter",
    "Dtype",
    "GoldenLength",
    "GoldenTable",
    "GpuPreset",
    "PeakRow",
    "PeakTable",
    "Presets",
    "PriceChoice",
    "builtin_path",
    "compute_dtype",
    "golden_length",
    "load_golden",
    "load_peaks",
    "load_presets",
    "resolve_peak",
    "resolve_price",
    "user_path",
]

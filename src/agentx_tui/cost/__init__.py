"""The tokens-per-dollar model (docs/metrics.md): presets, price resolution, the running meter.

load_presets(path=None) -> Presets          built-in presets + the user's override file
resolve_price(*, gpu_price, cost_profile, gpu_names, sim_gpu, gpus, presets=None) -> PriceChoice | None
CostMeter(price).figures(...) -> CostFigures
"""

from agentx_tui.cost._meter import CostMeter
from agentx_tui.cost._presets import GpuPreset, Presets, builtin_path, load_presets, user_path
from agentx_tui.cost._price import PriceChoice, resolve_price

__all__ = [
    "CostMeter",
    "GpuPreset",
    "Presets",
    "PriceChoice",
    "builtin_path",
    "load_presets",
    "resolve_price",
    "user_path",
]

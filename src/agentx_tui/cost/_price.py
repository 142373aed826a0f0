"""Which price applies (docs/metrics.md order) and what one GPU-hour costs in each mode."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agentx_tui.cost._presets import Presets, load_presets
from agentx_tui.errors import UsageError


class PriceChoice(BaseModel):
    """A price per GPU-hour and where it came from.

    ``rental``: ``usd_per_gpu_hour`` is all there is (power is part of a rental price).
    ``owned``: ``fixed_usd_per_gpu_hour`` (amortised capex + operations) plus the energy of the
    measured power, ``W / 1000 × pue × usd_per_kwh``; without a measurement, the board power's.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["rental", "owned"]
    usd_per_gpu_hour: float
    gpus: int | None = None
    source: str
    profile: str | None = None
    fixed_usd_per_gpu_hour: float | None = None
    board_power_w: float | None = None
    pue: float | None = None
    usd_per_kwh: float | None = None

    def energy_usd_per_gpu_hour(self, power_w: float | None) -> float | None:
        """Energy cost of one GPU-hour at ``power_w`` (board power when None); None for rental."""
        if self.mode != "owned" or self.pue is None or self.usd_per_kwh is None:
            return None
        watts = power_w if power_w is not None else self.board_power_w
        if watts is None:
            return None
        return _energy_usd_per_gpu_hour(watts, self.pue, self.usd_per_kwh)

    def at_power(self, power_w: float | None) -> float:
        """USD per GPU-hour with each GPU drawing ``power_w`` watts (owned mode only depends on it)."""
        energy = self.energy_usd_per_gpu_hour(power_w)
        if self.fixed_usd_per_gpu_hour is None or energy is None:
            return self.usd_per_gpu_hour
        return self.fixed_usd_per_gpu_hour + energy


def _energy_usd_per_gpu_hour(watts: float, pue: float, usd_per_kwh: float) -> float:
    """What a GPU drawing `watts` costs an hour in energy, its share of cooling (`pue`) included."""
    return watts / 1000.0 * pue * usd_per_kwh


def _split_profile(name: str) -> tuple[str, Literal["rental", "owned"]]:
    lowered = name.strip().lower()
    if lowered.endswith("-owned"):
        return lowered.removesuffix("-owned"), "owned"
    return lowered.removesuffix("-rental"), "rental"


def preset_price(
    presets: Presets, key: str, mode: Literal["rental", "owned"], gpus: int | None, why: str
) -> PriceChoice:
    preset = presets.gpus[key]
    label = f"{key}-{mode}"
    cite = f"{presets.source.split(',')[0]} {presets.date}"
    if mode == "rental":
        return PriceChoice(
            mode="rental",
            usd_per_gpu_hour=preset.rental_usd_per_gpu_hour,
            gpus=gpus,
            profile=label,
            source=f"preset {label} ({why}; {cite})",
        )
    fixed = None  # the preset's owned price is at board power: less that energy, what is left is fixed
    if preset.board_power_w is not None:
        board_energy = _energy_usd_per_gpu_hour(preset.board_power_w, presets.pue, presets.usd_per_kwh)
        fixed = preset.owned_usd_per_gpu_hour - board_energy
    return PriceChoice(
        mode="owned",
        usd_per_gpu_hour=preset.owned_usd_per_gpu_hour,
        gpus=gpus,
        profile=label,
        source=f"preset {label} ({why}; {cite}; PUE {presets.pue:g}, {presets.usd_per_kwh:g} USD/kWh)",
        fixed_usd_per_gpu_hour=fixed,
        board_power_w=preset.board_power_w,
        pue=presets.pue,
        usd_per_kwh=presets.usd_per_kwh,
    )


def resolve_price(
    *,
    gpu_price: float | None,
    cost_profile: str | None,
    gpu_names: Sequence[str],
    sim_gpu: str | None,
    gpus: int | None,
    presets: Presets | None = None,
) -> PriceChoice | None:
    """The price in docs/metrics.md's order: the user's price or profile; the preset for the GPU that
    NVML/DCGM reports; the simulated engine's GPU; else None (cost figures then stay n/a).

    ``gpus`` (the user's or the simulator's count) wins over the number of ``gpu_names``.
    """
    count = gpus if gpus is not None else (len(gpu_names) or None)
    if gpu_price is not None and cost_profile is not None:
        raise UsageError("Give either --gpu-price or --cost-profile, not both.")
    if gpu_price is not None:
        if not gpu_price > 0:
            raise UsageError(f"--gpu-price must be a positive number of USD per GPU-hour, not {gpu_price:g}.")
        return PriceChoice(mode="rental", usd_per_gpu_hour=gpu_price, gpus=count, source="--gpu-price")
    table = presets if presets is not None else load_presets()
    if cost_profile is not None:
        key, mode = _split_profile(cost_profile)
        if key not in table.gpus:
            raise UsageError(
                f"Unknown cost profile `{cost_profile}`.",
                hint=f"Known profiles: {', '.join(table.profile_names())}.",
            )
        return preset_price(table, key, mode, count, "--cost-profile")
    for name in gpu_names:
        found = table.for_gpu_name(name)
        if found is not None:
            return preset_price(table, found, "rental", count, f"detected {name}")
    if sim_gpu is not None:
        found = table.for_gpu_name(sim_gpu)
        if found is not None:
            return preset_price(table, found, "rental", count, f"simulated {sim_gpu}")
    return None

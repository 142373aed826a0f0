"""The running tokens-per-dollar meter (docs/metrics.md): dollars spent, tokens per dollar, $ per 1M tokens.

Rental: ``usd_spent = USD/GPU-hour × GPUs × elapsed / 3600`` at the current price, so changing the
price live re-prices the whole run. Owned: the fixed part (capex + operations) the same way, plus the
energy of the measured power integrated tick by tick (board power for ticks without a measurement).
Every dollar figure follows the one price rule (`snapshot.pricing`): without a GPU count there is none,
and the price's source says so.
"""

from __future__ import annotations

from agentx_tui.cost._price import PriceChoice
from agentx_tui.snapshot import NO_GPUS, CostReading, Pricing, pricing


class CostMeter:
    def __init__(self, price: PriceChoice | None) -> None:
        self._price = price
        self._gpus = price.gpus if price is not None else None
        self._energy_usd = 0.0
        self._last_elapsed: float | None = None

    @property
    def price(self) -> PriceChoice | None:
        return self._price

    @property
    def gpus(self) -> int | None:
        return self._gpus

    def count_gpus(self, gpus: int | None) -> None:
        """The GPUs behind the target as the run knows them now (None: not known, so no dollar figure)."""
        self._gpus = gpus

    def set_price(self, usd_per_gpu_hour: float | None, gpus: int | None) -> None:
        """Override the price (a flat, rental-style price) and/or the GPU count; None keeps each."""
        if gpus is not None:
            if gpus < 1:
                raise ValueError("gpus must be at least 1")
            self._gpus = gpus
        if usd_per_gpu_hour is not None:
            if not usd_per_gpu_hour > 0:
                raise ValueError("usd_per_gpu_hour must be positive")
            self._price = PriceChoice(
                mode="rental", usd_per_gpu_hour=usd_per_gpu_hour, gpus=self._gpus, source="set live"
            )
            self._energy_usd = 0.0

    def figures(
        self,
        *,
        elapsed_s: float,
        total_tokens: float | None,
        output_tokens: float | None,
        window_total_tokens_per_s: float | None,
        window_output_tokens_per_s: float | None,
        gpu_power_w: float | None,
    ) -> CostReading:
        """Cost figures at ``elapsed_s`` into the run; ``gpu_power_w`` is the mean draw per GPU (W).

        Call once per tick with a growing ``elapsed_s``: owned-mode energy is integrated between calls.
        """
        price = self._price
        if price is None:
            return CostReading(gpus=self._gpus)
        gpus = self._gpus
        per_gpu_hour = price.at_power(gpu_power_w)
        now = pricing(per_gpu_hour, gpus)
        if now.usd_per_hour is None or gpus is None:
            # The one rule: a price without a GPU count prices nothing (no GPU is assumed).
            return CostReading(
                usd_per_gpu_hour=per_gpu_hour, price_source=f"{price.source}; {NO_GPUS}", mode=price.mode
            )
        usd_spent = self._spent(price, gpus, elapsed_s, gpu_power_w)
        # The run so far at its mean price an hour (owned: the energy integrated tick by tick), so its
        # tokens per dollar are its tokens ÷ the dollars spent.
        run = Pricing(usd_spent * 3600.0 / elapsed_s) if elapsed_s > 0 and usd_spent > 0 else Pricing(None)
        return CostReading(
            usd_per_gpu_hour=per_gpu_hour,
            gpus=gpus,
            price_source=price.source,
            mode=price.mode,
            usd_spent=usd_spent,
            tokens_per_dollar_total=run.tokens_per_dollar(_rate(total_tokens, elapsed_s)),
            tokens_per_dollar_output=run.tokens_per_dollar(_rate(output_tokens, elapsed_s)),
            usd_per_million_output_tokens=run.usd_per_million_tokens(_rate(output_tokens, elapsed_s)),
            tokens_per_dollar_total_window=now.tokens_per_dollar(window_total_tokens_per_s),
            tokens_per_dollar_output_window=now.tokens_per_dollar(window_output_tokens_per_s),
        )

    def _spent(self, price: PriceChoice, gpus: int, elapsed_s: float, power_w: float | None) -> float:
        hours = max(elapsed_s, 0.0) / 3600.0
        energy_now = price.energy_usd_per_gpu_hour(power_w)
        if price.fixed_usd_per_gpu_hour is None or energy_now is None:
            self._last_elapsed = elapsed_s
            return price.usd_per_gpu_hour * gpus * hours
        if self._last_elapsed is None or elapsed_s < self._last_elapsed:
            # First tick (or a restarted clock): price the run so far at the power measured now.
            self._energy_usd = energy_now * gpus * hours
        else:
            self._energy_usd += energy_now * gpus * (elapsed_s - self._last_elapsed) / 3600.0
        self._last_elapsed = elapsed_s
        return price.fixed_usd_per_gpu_hour * gpus * hours + self._energy_usd


def _rate(tokens: float | None, elapsed_s: float) -> float | None:
    """The run's tokens per second so far."""
    return tokens / elapsed_s if tokens is not None and elapsed_s > 0 else None

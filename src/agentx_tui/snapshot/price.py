"""The one price rule (docs/metrics.md, "Cost"): what the GPUs behind the target cost an hour, and what
that makes a token, a million tokens and a task, for the running meter, a sweep point, a tier read and
the task figures alike.

    USD per hour          = USD per GPU-hour × GPUs
    tokens per dollar     = tokens/s × 3600 ÷ USD per hour
    USD per 1M tokens     = USD per hour × 10⁶ ÷ (tokens/s × 3600)
    USD per task          = tokens per task ÷ tokens per dollar (total tokens)

Nothing is assumed: without a price, or without the GPU count, every dollar figure is None (n/a), and
`Pricing.missing` says which of the two is missing, in the words the screen and the report use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

NO_PRICE: Final = "no price: pass --gpu-price USD or --cost-profile NAME"
NO_GPUS: Final = "GPU count unknown: every $ figure is n/a (pass --gpus N)"


def _positive(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and value > 0 else None


@dataclass(frozen=True, slots=True)
class Pricing:
    """The GPUs' price an hour; `usd_per_hour` None (and `missing` why) when the price or the count is
    not known. Build it with `pricing`."""

    usd_per_hour: float | None
    missing: str | None = None

    def tokens_per_dollar(self, tokens_per_s: float | None) -> float | None:
        """Tokens per dollar at `tokens_per_s`: tokens/s × 3600 ÷ USD per hour."""
        rate = tokens_per_s if tokens_per_s is not None and math.isfinite(tokens_per_s) else None
        if self.usd_per_hour is None or rate is None or rate < 0:
            return None
        return rate * 3600.0 / self.usd_per_hour

    def usd_per_million_tokens(self, tokens_per_s: float | None) -> float | None:
        """Dollars per million tokens at `tokens_per_s`; None with no tokens (nothing to divide by)."""
        rate = _positive(tokens_per_s)
        if self.usd_per_hour is None or rate is None:
            return None
        return self.usd_per_hour * 1e6 / (rate * 3600.0)

    def usd_per_task(self, tokens_per_task: float | None, total_tokens_per_s: float | None) -> float | None:
        """Dollars per task at the total tokens rate `total_tokens_per_s` (`usd_per_task`)."""
        return usd_per_task(tokens_per_task, self.tokens_per_dollar(total_tokens_per_s))


def pricing(usd_per_gpu_hour: float | None, gpus: float | None) -> Pricing:
    """The price of the GPUs behind the target for an hour: USD per GPU-hour × GPUs, only when both are
    known (a price that is not a positive finite number is no price; a GPU count below 1, no count)."""
    price = _positive(usd_per_gpu_hour)
    if price is None:
        return Pricing(None, NO_PRICE)
    if gpus is None or not math.isfinite(gpus) or gpus < 1:
        return Pricing(None, NO_GPUS)
    return Pricing(price * gpus)


def usd_per_task(tokens_per_task: float | None, tokens_per_dollar: float | None) -> float | None:
    """Dollars per task: its tokens (prompt + output, AgentX accounting) ÷ the total tokens per dollar."""
    per_dollar = _positive(tokens_per_dollar)
    if tokens_per_task is None or per_dollar is None:
        return None
    return tokens_per_task / per_dollar

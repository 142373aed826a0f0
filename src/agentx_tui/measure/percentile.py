"""The one percentile rule of the client's figures (docs/metrics.md, "Percentiles"): linear
interpolation between the two closest ranks, numpy's default (`method="linear"`), which is what
InferenceX's result processing uses for the AgentX figures.

`interpolated` is the rule, written once; `linear_quantile` applies it to sorted exact samples, and
`LogHistogram.quantile` (histogram.py) applies it to the bucket values at the same two ranks. A leaf:
it imports nothing of the project, so both can use it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence


def interpolated(q: float, count: float, value_at: Callable[[int], float]) -> float:
    """The q-quantile (0 ≤ q ≤ 1) of `count` ordered values, `value_at(k)` being the one at 0-based
    rank k: with h = q × (count − 1), the value at rank ⌊h⌋ plus (h − ⌊h⌋) × the step to the value at
    rank ⌊h⌋ + 1 (numpy's `method="linear"`, Hyndman and Fan's type 7). So q = 0 is the smallest,
    q = 1 the largest, and the p50 of an even count the mean of the middle two.

    `count` may be a total weight (a histogram's, not a whole number): integer weights then count as
    that many repeated values, and a total under 1 reads rank 0. `value_at` is asked only for ranks
    from 0 to ⌈h⌉, which are below `count` whenever h is."""
    if count <= 0:
        raise ValueError("no values")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q} is not within 0 to 1")
    at = q * max(count - 1.0, 0.0)
    lo = math.floor(at)
    frac = at - lo
    low = value_at(lo)
    if frac == 0.0:
        return low
    high = value_at(lo + 1)
    # numpy's lerp: from whichever end is nearer, so the result never leaves [low, high] by a rounding.
    return low + (high - low) * frac if frac < 0.5 else high - (high - low) * (1.0 - frac)


def linear_quantile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of exact samples, sorted ascending, by the rule of `interpolated`. Raises
    ValueError on no samples."""
    return interpolated(q, len(ordered), ordered.__getitem__)

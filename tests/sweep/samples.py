"""Sweep point samples made to order, for the interval tests (tests/sweep)."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from agentx_tui.measure import bucket_of
from agentx_tui.sweep.intervals import Sample


def buckets(values: Sequence[float]) -> dict[int, float]:
    out: dict[int, float] = {}
    for v in values:
        out[bucket_of(v)] = out.get(bucket_of(v), 0.0) + 1.0
    return out


def sample(
    tree_tokens: Sequence[float] = (),
    tree_itls: Sequence[Sequence[float]] = (),
    slot_tokens: Sequence[float] = (),
    slot_itls: Sequence[Sequence[float]] = (),
    *,
    duration_s: float | None = None,
    requests: int | None = None,
) -> Sample:
    slots = len(slot_tokens) or len(slot_itls) or 1
    return Sample(
        duration_s=float(slots) if duration_s is None else duration_s,
        tree_tokens=tuple(tree_tokens) or tuple(0.0 for _ in tree_itls),
        tree_itl=tuple(buckets(v) for v in tree_itls) or tuple({} for _ in tree_tokens),
        slot_s=1.0,
        slot_tokens=tuple(slot_tokens) or tuple(0.0 for _ in range(slots)),
        slot_itl=tuple(buckets(v) for v in slot_itls) or tuple({} for _ in range(slots)),
        requests=sum(len(v) for v in tree_itls) if requests is None else requests,
    )


def p90_exponential_trees(rng: random.Random, trees: int, per_tree: int, spread: float) -> list[list[float]]:
    """Per tree, `per_tree` ITLs: exponential around 10 ms, times a tree-wide factor e^N(0, spread)."""
    out = []
    for _ in range(trees):
        factor = math.exp(rng.gauss(0.0, spread))
        out.append([0.005 + rng.expovariate(1 / 0.01) * factor for _ in range(per_tree)])
    return out

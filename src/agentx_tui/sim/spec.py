"""Speculative decoding in the simulated engine (docs/sim.md, "Speculative decoding").

Each decode step of a request verifies K draft tokens and emits the accepted ones plus one (the bonus
token, or the target model's own where a draft was rejected). Acceptance follows vLLM's synthetic
rejection sampler for a mean acceptance length AL (vLLM's `SpeculativeConfig`, `rejection_sample_method
"synthetic"`, `synthetic_acceptance_length`): the unconditional per-position rates are

    rates = [1] × ⌊AL − 1⌋ + [frac(AL − 1)] + [0, 0, …], cut to K positions,

so Σ rates = AL − 1 (for 1 ≤ AL ≤ K + 1): the expected accepted drafts per step. Rate i is the chance that
drafts 0…i are all accepted. One uniform u per step and request decides them all: accepted =
#{i : u < rate_i}, so position i is accepted only if i − 1 was, and the mean is exactly AL − 1.

Standard library only: `agentx-tui --help` builds `--sim-spec` from here.
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass, field

MAX_DRAFT_TOKENS = 64  # more is a typo: vLLM's largest drafts in use are 8-16 tokens
_SPEC = re.compile(r"(\d+)\s*:\s*(\d+(?:\.\d*)?|\.\d+)", re.ASCII)  # K:AL, plain decimals only (no nan, inf, 1e9)


@dataclass(frozen=True, slots=True)
class SpecDecoding:
    """K draft tokens per decode step, accepted at a mean acceptance length AL (the bonus token included)."""

    num_speculative_tokens: int
    acceptance_length: float
    rates: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        k, length = self.num_speculative_tokens, self.acceptance_length
        if not 1 <= k <= MAX_DRAFT_TOKENS:
            raise ValueError(f"K must be from 1 to {MAX_DRAFT_TOKENS}, not {k}")
        if not 1.0 <= length <= k + 1:
            raise ValueError(f"the acceptance length must be from 1 to K + 1 = {k + 1}, not {length:g}")
        object.__setattr__(self, "rates", synthetic_rates(length, k))

    def accepted(self, u: float, drafts: int) -> int:
        """Drafts accepted of the first `drafts` (≤ K) when the step's uniform draw is `u` ∈ [0, 1)."""
        count = 0
        for rate in self.rates[:drafts]:  # non-increasing: the first rejection ends the run
            if u >= rate:
                break
            count += 1
        return count

    def __str__(self) -> str:
        return f"{self.num_speculative_tokens}:{self.acceptance_length:g}"


def synthetic_rates(acceptance_length: float, k: int) -> tuple[float, ...]:
    """vLLM's mapping of a mean acceptance length to unconditional per-position rates (the schedule of
    least variance): ⌊AL − 1⌋ certain positions, one with the fraction left, then none."""
    drafts = acceptance_length - 1.0
    full = math.floor(drafts)
    return tuple(([1.0] * full + [drafts - full] + [0.0] * k)[:k])


def parse_spec(text: str) -> SpecDecoding:
    """An argparse `type=` for `--spec K:AL` (`--sim-spec`): K draft tokens (1–64), acceptance length AL
    (1 ≤ AL ≤ K + 1). A bad value is one sentence (the parser adds the flag)."""
    match = _SPEC.fullmatch(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not K:AL, draft tokens per step and the mean acceptance length, e.g. 3:2.5"
        )
    k, length = int(match[1]), float(match[2])
    if not 1 <= k <= MAX_DRAFT_TOKENS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is out of range: K, the draft tokens per step, must be from 1 to {MAX_DRAFT_TOKENS}"
        )
    if not 1.0 <= length <= k + 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is out of range: the acceptance length must be at least 1 and at most K + 1 = {k + 1}"
        )
    return SpecDecoding(k, length)

"""When a sweep point's load is steady (docs/sweeps.md, "Warm-up by the data"): MSER-5.

A point's window opens once what it would measure no longer drifts. The rule is MSER-5, the Marginal
Standard Error Rule on batch means of 5 observations (K. P. White Jr., "An effective truncation heuristic
for bias reduction in simulation output", Simulation 69(6), 1997), the standard warm-up deletion rule of
simulation output analysis:

- **Batches.** The point's time since its users were set is cut into batches of 5 one-second slots
  (`BATCH_SLOTS`, measure/window.py `SLOT_S`). Two series, one value per batch: its **throughput**, the
  tokens (prompt + output) of the requests that ended in it ÷ 5 s (a request counts once it has ended,
  so a batch's value is final as soon as the batch is over); and its **p90 r_i**, the p90 of the E2E
  latency per output token of the requests sent since the users were set that ended in it (a batch with
  none has no value and is left out of that series).
- **Truncation.** For a series Y₀ … Y_{n−1}, MSER(d) = Σ_{i ≥ d} (Yᵢ − Ȳ_d)² / (n − d)², the marginal
  standard error of what is left after the first d batches; the truncation is the d that minimises it,
  searched over the first half, d = 0 … ⌊n/2⌋ (beyond, too little is left for the statistic to mean
  anything), the earliest on a tie.
- **Settled.** A series is settled when at least `MIN_BATCHES` batches have been seen and its
  truncation falls inside the searched half, d < ⌊n/2⌋. A minimum at the half's end says that deleting
  more would still help: what has been seen is still drifting (a trend that never settles keeps it
  there). The load is **steady** when both series are settled; it is judged again whenever a batch
  ends, as the data comes in.

Pure functions: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentx_tui.measure import SLOT_S, LogHistogram

BATCH_SLOTS = 5  # MSER-5: a batch is 5 one-second slots
BATCH_S = BATCH_SLOTS * SLOT_S
MIN_BATCHES = 4  # fewer batches than this (20 s): too little to judge
P90 = 0.9


def mser_truncation(values: Sequence[float]) -> int:
    """MSER's truncation of `values` (one per batch): the d in 0 … ⌊n/2⌋ that minimises the marginal
    standard error of what is left, Σ_{i ≥ d}(Yᵢ − Ȳ_d)² / (n − d)², the earliest on a tie; 0 for fewer
    than two values. O(n): suffix sums of Y and Y²."""
    n = len(values)
    if n < 2:
        return 0
    # Centred on the series' mean first: sums of squares of large values (tokens/s) lose no precision.
    mean = sum(values) / n
    centred = [v - mean for v in values]
    total = total_sq = 0.0
    suffix: list[tuple[float, float]] = [(0.0, 0.0)] * (n + 1)
    for i in range(n - 1, -1, -1):
        total += centred[i]
        total_sq += centred[i] * centred[i]
        suffix[i] = (total, total_sq)
    best_d, best = 0, float("inf")
    for d in range(n // 2 + 1):
        left = n - d
        s, sq = suffix[d]
        statistic = max(0.0, sq - s * s / left) / (left * left)
        # A tie (a constant series: every d reads 0) keeps the earliest d, rounding aside.
        if statistic < best * (1 - 1e-9) - 1e-300:
            best_d, best = d, statistic
    return best_d


@dataclass(frozen=True, slots=True)
class Truncation:
    """MSER-5 on one series: the batches seen (with a value), the truncation d, and whether it settled."""

    batches: int
    d: int
    settled: bool
    start_s: float | None = None  # where the kept part begins, seconds after the users were set

    def words(self, name: str) -> str:
        """'p90 r_i settled after 15 s (3 of 9 batches cut)', or why it has not."""
        if self.batches < MIN_BATCHES:
            batches = f"{self.batches} batch{'es' if self.batches != 1 else ''}"
            return f"{name}: {batches} of 5 s, too few to judge ({MIN_BATCHES})"
        if self.settled:
            return f"{name} settled after {self.start_s or 0:.0f} s ({self.d} of {self.batches} batches cut)"
        return f"{name} still drifting (truncated at the first half's end: {self.d} of {self.batches} batches)"


def truncation(values: Sequence[float], starts_s: Sequence[float]) -> Truncation:
    """MSER-5 on a series of batch values, each batch beginning `starts_s[i]` seconds in."""
    n = len(values)
    d = mser_truncation(values)
    settled = n >= MIN_BATCHES and d < n // 2
    return Truncation(batches=n, d=d, settled=settled, start_s=starts_s[d] if n else None)


@dataclass(frozen=True, slots=True)
class Steadiness:
    """Both series' MSER-5 verdicts: steady when both settled."""

    throughput: Truncation
    latency: Truncation  # p90 r_i

    @property
    def steady(self) -> bool:
        return self.throughput.settled and self.latency.settled

    @property
    def settled_at_s(self) -> float | None:
        """Where the later of the two kept parts begins (the load's transient ended), when steady."""
        if not self.steady:
            return None
        return max(self.throughput.start_s or 0.0, self.latency.start_s or 0.0)

    def words(self) -> str:
        """Both verdicts in words, the one not settled first."""
        parts = [self.throughput.words("throughput"), self.latency.words("p90 r_i")]
        if self.throughput.settled and not self.latency.settled:
            parts.reverse()
        return "; ".join(parts)


def batch_series(
    ended_tokens: Mapping[int, float], e2e: Mapping[int, Mapping[int, float]], elapsed_s: float
) -> tuple[list[float], list[float], list[float], list[float]]:
    """The whole batches of the first `elapsed_s` seconds: (throughput per batch, their starts in s;
    p90 r_i per batch that has one, their starts in s). `ended_tokens` and `e2e` are per one-second
    slot from the users' setting (measure/window.py `PointSample`): the tokens of the requests that
    ended in it, and their r_i's buckets (`LogHistogram`'s)."""
    batches = int(elapsed_s / BATCH_S + 1e-9)
    tokens = [0.0] * batches
    for key, value in ended_tokens.items():
        index = key // BATCH_SLOTS
        if 0 <= index < batches:
            tokens[index] += value
    merged = [LogHistogram() for _ in range(batches)]
    for key, buckets in e2e.items():
        index = key // BATCH_SLOTS
        if 0 <= index < batches:
            merged[index].merge(buckets)
    throughput = [t / BATCH_S for t in tokens]
    starts = [i * BATCH_S for i in range(batches)]
    p90: list[float] = []
    p90_starts: list[float] = []
    for i, histogram in enumerate(merged):
        found = histogram.quantile(P90)
        if found is not None:
            p90.append(found)
            p90_starts.append(i * BATCH_S)
    return throughput, starts, p90, p90_starts


def steadiness(
    ended_tokens: Mapping[int, float], e2e: Mapping[int, Mapping[int, float]], elapsed_s: float
) -> Steadiness:
    """MSER-5 on the point's two series over its first `elapsed_s` seconds (`batch_series`)."""
    throughput, starts, p90, p90_starts = batch_series(ended_tokens, e2e, elapsed_s)
    return Steadiness(throughput=truncation(throughput, starts), latency=truncation(p90, p90_starts))

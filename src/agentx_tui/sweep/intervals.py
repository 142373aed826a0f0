"""95% confidence intervals of a sweep point's figures (docs/sweeps.md, "How sure a point is").

Pure functions on the point's raw sample (per session tree, per user slot and per one-second slot:
tokens inside the window, the counted requests' per-request ITL and E2E per output token (r_i) in 2%
buckets): no I/O, no clock,
and no randomness, so the same sample always gives the same interval.

Requests are not independent: those of one session tree share its context, and all of them share
the server's state. The methods here, and what measuring their coverage on the simulator showed
(bench/ci_coverage.py; docs/sweeps.md quotes the figures):

- **Clusters** (`cluster_throughput`): throughput is a sum of clusters' in-window tokens over the
  window, its standard error √(n/(n−1) · Σ(tᵢ − t̄)²) / T with a t quantile on n − 1 degrees of
  freedom. Clusters of *user slots* (each runs its trees one after another) are honest; clusters of
  *trees* are too while a window holds about one tree per user, and far too wide once trees start and
  end inside it. Chosen for throughput.
- **A bootstrap over session trees**: whole trees drawn with replacement, the p90 of their pooled
  requests taken again. Far too narrow for the p90 (~40% coverage): a p90 of ITL is mostly the
  server's state, which every tree shares.
- **Batch means over sub-windows** (`batch_throughput`, `batch_quantile`): the spread of k
  consecutive sub-windows' values / √k, t on k − 1 degrees of freedom (for the p90, the
  sub-windows' own p90s: the batch-quantile method). Honest for the p90 with k = 5 (chosen);
  over-covers throughput (a closed loop evens its sub-windows out): throughput's fallback with
  fewer than `MIN_TREES` user slots, or slots too alike to show any spread (`TOO_ALIKE`), the safe
  side. Measured on the p90 of r_i (E2E-normalized interactivity) too: k = 5 covered 92% where
  k = 10 and 20 fell to 83% and 75%, the tree bootstrap to 58% (docs/sweeps.md): chosen for it.

The methods not chosen (clusters of trees, of user slots with cohorts pooled, the tree bootstrap)
live with the coverage study that measured them, in bench/_rejected_intervals.py.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import stdev
from typing import Literal

from agentx_tui.measure import LogHistogram
from agentx_tui.snapshot import FrontierAxis

CONFIDENCE = 0.95
QUANTILE = 0.9  # p90 interactivity: the p90 of per-request ITL (decode) or of r_i (E2E-normalized)
Latency = Literal["itl", "e2e"]  # a sample's per-request latencies: ITL, or r_i (E2E per output token)
MIN_REQUESTS = 20  # fewer counted requests: no interval (and no early stop)
MIN_TREES = 8  # fewer clusters (user slots, trees): their spread cannot be told from 7 or fewer
MIN_BATCHES = 5  # fewer sub-windows with requests: no batch-means interval
BATCHES = 10  # throughput's fallback: 10 sub-windows
ITL_BATCHES = 5  # the p90's sub-windows: honest with k = 5 (docs/sweeps.md)
E2E_BATCHES = 5  # the p90 of r_i's sub-windows (docs/sweeps.md)
# Clusters whose interval is narrower than this share of the batch means' are too alike to show the
# noise (a workload of fixed lengths: every slot did the same in the window, while the window's rate
# still moved with the server): batch means are used instead. With varied lengths the two methods'
# mean half-widths measured 0.66–0.67 of each other (docs/sweeps.md), well above it.
TOO_ALIKE = 0.25


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float

    def around(self, value: float) -> Interval:
        """The interval widened, if need be, to hold `value` (low ≤ value ≤ high, as the report promises)."""
        return Interval(min(self.low, value), max(self.high, value))

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def relative_half_width(self, value: float | None) -> float | None:
        """The larger of the two half-widths, as a fraction of `value`: what `--precision` checks."""
        if value is None or not value > 0:
            return None
        return max(value - self.low, self.high - value) / value


@dataclass(frozen=True)
class Sample:
    """A point's sample, as plain numbers: per tree, per slot (slots `slot_s` wide from the window's start)."""

    duration_s: float
    tree_tokens: tuple[float, ...]
    tree_itl: tuple[Mapping[int, float], ...]  # bucket index → requests
    slot_s: float
    slot_tokens: tuple[float, ...]  # every slot of the window, empty ones too
    slot_itl: tuple[Mapping[int, float], ...]
    requests: int  # requests counted for latencies
    user_tokens: tuple[float, ...] = ()  # per user slot: the tokens of its trees, one after another
    user_cohorts: tuple[int, ...] = ()  # per user slot: its cohort (slots added at the same point)
    # r_i (E2E per output token), bucketed like the ITLs: per tree and per slot (every slot, as `slot_itl`)
    tree_e2e: tuple[Mapping[int, float], ...] = ()
    slot_e2e: tuple[Mapping[int, float], ...] = ()

    def slot_buckets(self, of: Latency) -> tuple[Mapping[int, float], ...]:
        """Per slot, the counted requests' per-request ITL (`itl`) or r_i (`e2e`)."""
        return self.slot_itl if of == "itl" else self.slot_e2e

    def pooled(self, of: Latency) -> LogHistogram:
        """Every counted request's per-request ITL (`itl`) or r_i (`e2e`), in one histogram."""
        out = LogHistogram()
        for buckets in self.tree_itl if of == "itl" else self.tree_e2e:
            out.merge(buckets)
        return out

    @property
    def trees(self) -> int:
        return len(self.tree_tokens)


@dataclass(frozen=True)
class PointIntervals:
    """A point's intervals: total tokens/s (not per GPU), p90 of per-request ITL and p90 of r_i (E2E per
    output token; seconds); None when the sample is too small to tell. `method` says how, in words (the
    report's `ci_method`)."""

    throughput: Interval | None = None
    itl_p90: Interval | None = None
    method: str | None = None
    e2e_p90: Interval | None = None
    note: str | None = None  # why an interval is None, in words (the report's `ci_note`)

    def interactivity_p90(self) -> Interval | None:
        """The ITL interval as interactivity (1 / ITL): its ends swap."""
        return _inverted(self.itl_p90)

    def e2e_interactivity_p90(self) -> Interval | None:
        """The r_i interval as E2E-normalized interactivity (1 / r_i): its ends swap."""
        return _inverted(self.e2e_p90)

    def on_axis(self, axis: FrontierAxis) -> Interval | None:
        """The p90 interactivity interval of a frontier axis."""
        return self.e2e_interactivity_p90() if axis == "e2e_interactivity" else self.interactivity_p90()


def _inverted(seconds: Interval | None) -> Interval | None:
    if seconds is None or not seconds.low > 0:
        return None
    return Interval(1.0 / seconds.high, 1.0 / seconds.low)


def is_thin(requests: int) -> bool:
    """Fewer counted requests than an interval needs: a point (or window) too thin to say how sure it is."""
    return requests < MIN_REQUESTS


def thin_words(requests: int) -> str:
    """Why a thin point has no interval: '3 requests: an interval needs 20'."""
    return f"{requests} request{'s' if requests != 1 else ''}: an interval needs {MIN_REQUESTS}"


def point_intervals(sample: Sample) -> PointIntervals:
    """The point's intervals by the methods measured honest on the simulator (bench/ci_coverage.py,
    docs/sweeps.md; see the module's docstring); a figure whose method cannot tell (too few requests,
    clusters or sub-windows) has None, and `note` says why. Throughput by user slots falls back to batch
    means with fewer than `MIN_TREES` of them."""
    if not sample.duration_s > 0:
        return PointIntervals(note="no measured time")
    if is_thin(sample.requests):
        return PointIntervals(note=thin_words(sample.requests))
    throughput, tput_how = _throughput(sample)
    itl = batch_quantile(sample, ITL_BATCHES)
    itl_how = f"batch means of the p90 of {ITL_BATCHES} sub-windows"
    e2e = batch_quantile(sample, E2E_BATCHES, of="e2e")
    e2e_how = f"batch means of the p90 of {E2E_BATCHES} sub-windows"
    missing = []
    if throughput is None:
        missing.append(f"throughput: {_throughput_gap(sample)}")
    if itl is None:
        missing.append(f"p90 interactivity: {_quantile_gap(sample, ITL_BATCHES, 'itl')}")
    if e2e is None:
        missing.append(f"p90 E2E-normalized interactivity: {_quantile_gap(sample, E2E_BATCHES, 'e2e')}")
    note = "; ".join(missing) or None
    if throughput is None and itl is None and e2e is None:
        return PointIntervals(note=note)
    method = (
        f"throughput: {tput_how}; p90 interactivity: {itl_how if itl else 'none'}; "
        f"p90 E2E-normalized interactivity: {e2e_how if e2e else 'none'}; 95%"
    )
    return PointIntervals(throughput, itl, method, e2e, note)


def _throughput_gap(sample: Sample) -> str:
    """Why throughput has no interval: too few user slots for clusters, too short a window for batches."""
    slots = len(sample.user_tokens)
    whole = sum(1 for length, _, _ in _batches(sample, BATCHES) if length > 0)
    return (
        f"{slots} user slot{'s' if slots != 1 else ''} (clusters need {MIN_TREES}) and {whole} sub-window"
        f"{'s' if whole != 1 else ''} of {sample.slot_s:g} s (batch means need {MIN_BATCHES})"
    )


def _quantile_gap(sample: Sample, k: int, of: Latency) -> str:
    """Why a p90's interval is None: no request with the latency, or requests in too few sub-windows."""
    slots = sample.slot_buckets(of)
    if not any(slots):
        return "no counted request has a per-request ITL (answers of one token)" if of == "itl" else "no output token"
    found = len(_request_batches(slots, k))
    return f"the requests ended in {found} sub-window{'s' if found != 1 else ''} (it needs {MIN_BATCHES})"


def _throughput(sample: Sample) -> tuple[Interval | None, str]:
    """Throughput's interval by clusters of user slots, else by batch means; and how, in words."""
    slots = len(sample.user_tokens)
    found = user_throughput(sample)
    batches = batch_throughput(sample, BATCHES)
    if found is not None and (batches is None or found.half_width >= TOO_ALIKE * batches.half_width):
        sizes = Counter(sample.user_cohorts)
        by = ""
        if len(sizes) > 1 and min(sizes.values()) >= 2:
            by = f" in {len(sizes)} cohorts (the slots this point added, those added before)"
        return found, f"cluster standard error over {slots} user slots{by}"
    if found is None:
        fallback = f" ({slots} user slots, fewer than {MIN_TREES})"
    else:
        fallback = f" (the {slots} user slots were too alike to show the noise)"
    return batches, f"batch means over {BATCHES} sub-windows{fallback}" if batches else "none"


# --- the methods -----------------------------------------------------------------------------------


def t975(df: int) -> float:
    """Student's t quantile at 0.975 for `df` degrees of freedom (table to 30, then Cornish–Fisher)."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959963984540054
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def cluster_throughput(tokens: Sequence[float], duration_s: float, strata: Sequence[int] = ()) -> Interval | None:
    """Tokens/s ± the cluster standard error, √(n/(n−1) · Σ(tᵢ − t̄)²) / T, t on n − 1 degrees of freedom.

    With `strata` (one label per cluster; every stratum of two clusters or more), the stratified one:
    √(Σₕ nₕ/(nₕ−1) · Σᵢ(tₕᵢ − t̄ₕ)²) / T on n − H degrees of freedom. A sweep point's user slots come in
    cohorts by the point that added them (earlier ones carry longer contexts): fixed by the sweep's
    design, so the difference between their means is no sampling noise."""
    n = len(tokens)
    if n < MIN_TREES or not duration_s > 0:
        return None
    groups: dict[int, list[float]] = {}
    for t, h in zip(tokens, strata, strict=True) if len(strata) == n else ((t, 0) for t in tokens):
        groups.setdefault(h, []).append(t)
    if any(len(g) < 2 for g in groups.values()):
        groups = {0: list(tokens)}  # a stratum of one tells no spread: pool them
    variance = 0.0
    for g in groups.values():
        mean = math.fsum(g) / len(g)
        variance += len(g) / (len(g) - 1) * math.fsum((t - mean) ** 2 for t in g)
    rate = math.fsum(tokens) / duration_s
    half = t975(n - len(groups)) * math.sqrt(variance) / duration_s
    return Interval(max(0.0, rate - half), rate + half)


def user_throughput(sample: Sample) -> Interval | None:
    """Clusters = user slots (each runs its trees one after another, a sub-agent in its parent's slot),
    stratified by cohort."""
    return cluster_throughput(sample.user_tokens, sample.duration_s, sample.user_cohorts)


def _batches(sample: Sample, k: int) -> list[tuple[float, float, dict[int, float]]]:
    """(length s, tokens, ITL buckets) of k near-equal runs of whole slots. A last slot shorter than half
    a slot joins the run before it: alone, its few tokens over a sliver of time would read as a wild rate."""
    n = len(sample.slot_tokens)
    last = sample.duration_s - (n - 1) * sample.slot_s
    whole = n - 1 if n > 1 and last < sample.slot_s / 2 else n
    k = min(k, whole)
    out = []
    for j in range(k):
        lo, hi = round(j * whole / k), round((j + 1) * whole / k)
        hi = n if j == k - 1 else hi
        length = min(hi * sample.slot_s, sample.duration_s) - lo * sample.slot_s
        itl: dict[int, float] = {}
        for buckets in sample.slot_itl[lo:hi]:
            for index, count in buckets.items():
                itl[index] = itl.get(index, 0.0) + count
        out.append((length, math.fsum(sample.slot_tokens[lo:hi]), itl))
    return out


def batch_throughput(sample: Sample, k: int = BATCHES) -> Interval | None:
    """Tokens/s ± t · (spread of the sub-windows' rates) / √k."""
    batches = [(length, tokens) for length, tokens, _ in _batches(sample, k) if length > 0]
    if len(batches) < MIN_BATCHES:
        return None
    rates = [tokens / length for length, tokens in batches]
    rate = math.fsum(tokens for _, tokens in batches) / sample.duration_s
    half = t975(len(rates) - 1) * stdev(rates) / math.sqrt(len(rates))
    return Interval(max(0.0, rate - half), rate + half)


def _request_batches(slots: Sequence[Mapping[int, float]], k: int) -> list[dict[int, float]]:
    """The counted requests' buckets (ITL or r_i) in k runs of whole consecutive slots holding about equal
    numbers of requests (each sub-window's quantile is then over as many requests as the others')."""
    counts = [math.fsum(buckets.values()) for buckets in slots]
    total = math.fsum(counts)
    out: list[dict[int, float]] = []
    current: dict[int, float] = {}
    running = 0.0
    for buckets, count in zip(slots, counts, strict=True):
        for index, n in buckets.items():
            current[index] = current.get(index, 0.0) + n
        running += count
        if running >= total * (len(out) + 1) / k - 1e-9 and current:
            out.append(current)
            current = {}
    if current:
        out.append(current)
    return out


def batch_quantile(sample: Sample, k: int = BATCHES, q: float = QUANTILE, *, of: Latency = "itl") -> Interval | None:
    """The p90 ITL (or, `of="e2e"`, the p90 of r_i) ± t · (spread of the sub-windows' own p90s) / √k:
    the batch-quantile method, over k consecutive sub-windows of about equal numbers of requests."""
    slots = sample.slot_buckets(of)
    whole = LogHistogram()
    for buckets in slots:
        whole.merge(buckets)
    value = whole.quantile(q)
    known = [v for batch in _request_batches(slots, k) if (v := LogHistogram(batch).quantile(q)) is not None]
    if value is None or len(known) < MIN_BATCHES:
        return None
    half = t975(len(known) - 1) * stdev(known) / math.sqrt(len(known))
    return Interval(max(value - half, value * 1e-3), value + half)


@dataclass(frozen=True)
class Precision:
    """How precise a point is so far: each figure's larger half-width as a fraction of its value
    (None: unknown yet), over how many counted requests. `interactivity` is the p90 of the frontier's
    axis (`axis`)."""

    throughput: float | None
    interactivity: float | None
    requests: int
    axis: FrontierAxis = "decode_interactivity"

    def met(self, target: float) -> bool:
        """`--precision F`: both half-widths within F, after at least `MIN_REQUESTS` requests."""
        return (
            self.requests >= MIN_REQUESTS
            and self.throughput is not None
            and self.interactivity is not None
            and self.throughput <= target
            and self.interactivity <= target
        )

    def words(self) -> str:
        def pm(value: float | None) -> str:
            return "unknown" if value is None else f"±{value:.1%}"

        figures = f"throughput {pm(self.throughput)}, {axis_words(self.axis)} {pm(self.interactivity)}"
        return f"{figures} after {self.requests} requests"


def axis_words(axis: FrontierAxis) -> str:
    """A frontier axis's p90, in words."""
    return "p90 E2E-normalized interactivity" if axis == "e2e_interactivity" else "p90 interactivity"


def precision_of(sample: Sample, axis: FrontierAxis = "decode_interactivity") -> Precision:
    """The sample's figures and intervals, as the relative half-widths `--precision` compares: the
    throughput and the p90 interactivity on `axis`."""
    ci = point_intervals(sample)
    rate = math.fsum(sample.slot_tokens) / sample.duration_s if sample.duration_s > 0 else None
    interactivity = sample.pooled("e2e" if axis == "e2e_interactivity" else "itl").inverse_quantile(QUANTILE)
    inter_ci = ci.on_axis(axis)
    return Precision(
        throughput=ci.throughput.around(rate).relative_half_width(rate) if ci.throughput and rate else None,
        interactivity=inter_ci.around(interactivity).relative_half_width(interactivity)
        if inter_ci and interactivity
        else None,
        requests=sample.requests,
        axis=axis,
    )

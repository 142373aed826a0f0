"""The servers' cache figures over a stretch of time, from their counters' and histograms' increase over
it (docs/metrics.md, "Cache"): one rule for the report (the run's totals), an endpoint's row, and a
sweep point (the totals' deltas over its window).

- ``prompt_share_*``: Δ prompt tokens by source (computed, the GPU prefix cache, an offload tier or
  another instance through a KV connector) over Δ their sum: the three add up to 1;
- ``kv_offload_*_gb_per_s``: Δ bytes moved each way ÷ the stretch's seconds ÷ 1e9;
- ``kv_block_*_p50_s``/``_p90_s``: `histogram_quantile` of the residency histograms' increase.

A figure whose counter the servers do not export stays None (null, n/a), never 0.
"""

from __future__ import annotations

from agentx_tui.snapshot.model import BucketCounts, EndpointTotals

GB = 1e9


def _share(part: float | None, parts: list[float | None]) -> float | None:
    if part is None or any(p is None for p in parts):
        return None
    total = sum(p for p in parts if p is not None)
    return part / total if total > 0 else None


PROMPT_SHARES = ("prompt_share_computed", "prompt_share_gpu_cache", "prompt_share_offload")


def prompt_shares(computed: float | None, gpu_cache: float | None, offload: float | None) -> dict[str, float | None]:
    """Each source's share of the prompt tokens (computed, the GPU prefix cache, an offload tier) of their
    sum, from counts or rates over one stretch: the three add up to 1; all None where a source is unknown
    or there were no prompt tokens."""
    parts = [computed, gpu_cache, offload]
    return {key: _share(part, parts) for key, part in zip(PROMPT_SHARES, parts, strict=True)}


def _per_s(value: float | None, duration_s: float | None) -> float | None:
    if value is None or duration_s is None or not duration_s > 0:
        return None
    return value / duration_s


def _quantile(counts: BucketCounts | None, q: float) -> float | None:
    return counts.quantile(q) if counts is not None else None


def cache_figures(totals: EndpointTotals, duration_s: float | None) -> dict[str, float | None]:
    """The report's cache keys over the stretch `totals` covers (`duration_s` long)."""
    load = _per_s(totals.kv_offload_load_bytes, duration_s)
    store = _per_s(totals.kv_offload_store_bytes, duration_s)
    return {
        **prompt_shares(totals.prompt_tokens_computed, totals.prompt_tokens_gpu_cache, totals.prompt_tokens_offload),
        "kv_offload_load_gb_per_s": None if load is None else load / GB,
        "kv_offload_store_gb_per_s": None if store is None else store / GB,
        "kv_block_idle_before_evict_p50_s": _quantile(totals.kv_block_idle_before_evict, 0.5),
        "kv_block_idle_before_evict_p90_s": _quantile(totals.kv_block_idle_before_evict, 0.9),
        "kv_block_reuse_gap_p50_s": _quantile(totals.kv_block_reuse_gap, 0.5),
        "kv_block_reuse_gap_p90_s": _quantile(totals.kv_block_reuse_gap, 0.9),
    }


def totals_since(end: EndpointTotals, start: EndpointTotals) -> EndpointTotals:
    """What the servers counted between two ticks' run totals (a sweep point's window): each counter's
    and each histogram's increase (a family of counters by position: each one's, where both ticks have
    the same positions); None where either tick lacks it."""
    values: dict[str, object] = {}
    for name in EndpointTotals.model_fields:
        after, before = getattr(end, name), getattr(start, name)
        if isinstance(after, BucketCounts):
            values[name] = after.since(before) if isinstance(before, BucketCounts) else None
        elif isinstance(after, tuple):
            paired = isinstance(before, tuple) and len(before) == len(after)
            values[name] = tuple(max(a - b, 0.0) for a, b in zip(after, before, strict=True)) if paired else None
        elif after is None or before is None:
            values[name] = None
        else:
            values[name] = max(after - before, 0.0)
    return EndpointTotals.model_validate(values)

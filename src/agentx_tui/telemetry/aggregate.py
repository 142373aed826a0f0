"""Several endpoints (replicas, nodes) folded into one `EndpointReading` with ``url="aggregate"``.

Rates, totals and request counts add up (the estimated-work rates too, with the engines that export
them, so one GPU's share stays their sum ÷ the engines). KV usage is the mean over the endpoints that
are up (each has its own KV pool). Hit rates are weighted by prompt tokens per second in the window
(lifetime rates by run prompt tokens), which equals Σhits/Σqueries when every query is a prompt token.
The prompt tokens by source add up, and the shares are of the sums; the offload traffic adds up, and
its seconds per GB are weighted by GB/s (Σ seconds / Σ GB). Percentiles cannot be merged from
percentiles, so the window's (latency, KV residency) are kept only for a single endpoint; the
residency histograms' run totals are merged bucket by bucket where the endpoints' buckets agree
(none where they do not). An endpoint offloads KV to CPU memory: the aggregate does when all that
say do (their capacities add up), does not when none does.

The request phases' means (snapshot/servertime.py) are weighted by requests finished per second (vLLM
observes each phase once per finished request, as it counts them), tokens per step by engine steps per
second, the acceptance length and the per-position rates by drafts per second, the acceptance rate by
draft tokens per second: Σ increase ÷ Σ count over the endpoints. The draft length and the golden
acceptance length are the endpoints' one value (none where they differ).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentx_tui.snapshot import (
    BucketCounts,
    EndpointReading,
    EndpointTotals,
    Percentiles,
    acceptance_vs_golden,
    prompt_shares,
)

_SUMMED = (
    "running",
    "waiting",
    "num_gpu_blocks",
    "prompt_tokens_per_s",
    "generation_tokens_per_s",
    "cached_prompt_tokens_per_s",
    "preemptions_per_s",
    "requests_per_s",
    "estimated_flops_per_s",
    "estimated_read_bytes_per_s",
    "estimated_write_bytes_per_s",
    "estimating_engines",
    "prompt_computed_tokens_per_s",
    "prompt_gpu_cache_tokens_per_s",
    "prompt_offload_tokens_per_s",
    "kv_offload_load_gb_per_s",
    "kv_offload_store_gb_per_s",
    "kv_offload_allocation_failures_per_s",
    "waiting_capacity",
    "waiting_deferred",
    "engine_steps_per_s",
    "spec_drafts_per_s",
    "spec_draft_tokens_per_s",
)
# A mean over the window → the rate of what it is a mean over (its weight in the aggregate).
_WEIGHTED_BY = {
    "server_queue_s_mean": "requests_per_s",
    "server_prefill_s_mean": "requests_per_s",
    "server_decode_s_mean": "requests_per_s",
    "server_prefill_computed_tokens_mean": "requests_per_s",
    "server_preemptions_per_request": "requests_per_s",
    "server_step_tokens_mean": "engine_steps_per_s",
    "spec_acceptance_length": "spec_drafts_per_s",
    "spec_acceptance_rate": "spec_draft_tokens_per_s",
}
_PERCENTILES = (
    "ttft",
    "itl",
    "e2e",
    "queue_time",
    "kv_block_idle_before_evict",
    "kv_block_reuse_gap",
    "kv_block_lifetime",
)
_HISTOGRAM_TOTALS = ("kv_block_idle_before_evict", "kv_block_reuse_gap", "kv_block_lifetime")


def _sum(values: Sequence[float | int | None]) -> float | None:
    known = [v for v in values if v is not None]
    return float(sum(known)) if known else None


def _weighted(pairs: Sequence[tuple[float | None, float | None]]) -> float | None:
    known = [(value, weight) for value, weight in pairs if value is not None]
    if not known:
        return None
    if any(weight is None for _, weight in known):
        return sum(value for value, _ in known) / len(known)
    total = sum(weight for _, weight in known if weight is not None)
    if not total > 0:
        return sum(value for value, _ in known) / len(known)
    return sum(value * weight for value, weight in known if weight is not None) / total


def _merged(histograms: Sequence[BucketCounts | None]) -> BucketCounts | None:
    """Every endpoint's observations, bucket by bucket; None when none has any or their buckets differ."""
    known = [h for h in histograms if h is not None]
    if not known:
        return None
    merged: BucketCounts | None = known[0]
    for other in known[1:]:
        merged = merged.plus(other) if merged is not None else None
    return merged


def _summed_positions(families: Sequence[tuple[float, ...] | None]) -> tuple[float, ...] | None:
    """Counters by position added up position by position; None where none has them or their draft
    lengths differ."""
    known = [family for family in families if family is not None]
    if not known or len({len(family) for family in known}) != 1:
        return None
    return tuple(sum(values) for values in zip(*known, strict=True))


def _totals(figs: Sequence[EndpointReading]) -> EndpointTotals:
    values: dict[str, object] = {}
    for name in EndpointTotals.model_fields:
        if name in _HISTOGRAM_TOTALS:
            values[name] = _merged([getattr(f.totals, name) for f in figs])
        elif name == "spec_accepted_tokens_by_position":
            values[name] = _summed_positions([f.totals.spec_accepted_tokens_by_position for f in figs])
        else:
            values[name] = _sum([getattr(f.totals, name) for f in figs])
    return EndpointTotals.model_validate(values)


def _by_position(up: Sequence[EndpointReading]) -> tuple[float, ...] | None:
    """Accepted per draft at each position, weighted by drafts per second; None unless every endpoint
    that says has the same draft length."""
    said = [f for f in up if f.spec_acceptance_by_position is not None]
    if not said or len({f.spec_draft_length for f in said}) != 1:
        return None
    columns = zip(*(f.spec_acceptance_by_position or () for f in said), strict=True)
    weighted = [_weighted([(v, f.spec_drafts_per_s) for v, f in zip(column, said, strict=True)]) for column in columns]
    known = tuple(v for v in weighted if v is not None)
    return known if len(known) == len(weighted) else None


def _golden(up: Sequence[EndpointReading]) -> dict[str, object]:
    """The endpoints' one golden acceptance length, and where it came from (that of those that have one:
    an endpoint that does not speculate has none, and says so)."""
    known = [f for f in up if f.spec_golden_acceptance_length is not None]
    return {
        "spec_golden_acceptance_length": _one([f.spec_golden_acceptance_length for f in known]),
        "spec_golden_source": _str_or_none(_one([f.spec_golden_source for f in known or up])),
    }


def _shares(update: dict[str, object]) -> dict[str, float | None]:
    """The prompt tokens' shares by source, of the summed rates."""
    rates = [update[f"prompt_{source}_tokens_per_s"] for source in ("computed", "gpu_cache", "offload")]
    return prompt_shares(*(r if isinstance(r, float) else None for r in rates))


def _offload_cpu(up: Sequence[EndpointReading]) -> dict[str, object]:
    said = [f for f in up if f.kv_offload_cpu is not None]
    if said and all(f.kv_offload_cpu for f in said) and len(said) == len(up):
        sizes = [f.kv_offload_cpu_bytes for f in said]
        known = None if any(size is None for size in sizes) else sum(size for size in sizes if size is not None)
        return {"kv_offload_cpu": True, "kv_offload_cpu_bytes": known}
    if said and not any(f.kv_offload_cpu for f in said):
        return {"kv_offload_cpu": False, "kv_offload_cpu_bytes": None}
    return {"kv_offload_cpu": None, "kv_offload_cpu_bytes": None}


def _one(values: Sequence[object]) -> object | None:
    distinct = {v for v in values if v is not None}
    return distinct.pop() if len(distinct) == 1 else None


def aggregate_endpoints(figs: Sequence[EndpointReading]) -> EndpointReading | None:
    if not figs:
        return None
    up = [f for f in figs if f.up]
    totals = _totals(figs)
    status = f"up: {len(up)} of {len(figs)}" if up else "down: no endpoint is up"
    update: dict[str, object] = {name: _sum([getattr(f, name) for f in up]) for name in _SUMMED}
    kv = [f.kv_cache_usage for f in up if f.kv_cache_usage is not None]
    blocks, engines = update["num_gpu_blocks"], update["estimating_engines"]
    update.update(
        {
            "num_gpu_blocks": int(blocks) if isinstance(blocks, float) else None,
            "estimating_engines": int(engines) if isinstance(engines, float) else None,
            "kv_cache_usage": sum(kv) / len(kv) if kv else None,
            "block_size": _one([f.block_size for f in up]),
            "prefix_caching_enabled": _one([f.prefix_caching_enabled for f in up]),
            "prefix_hit_rate_window": _weighted([(f.prefix_hit_rate_window, f.prompt_tokens_per_s) for f in up]),
            "prefix_hit_rate_lifetime": _weighted([(f.prefix_hit_rate_lifetime, f.totals.prompt_tokens) for f in up]),
            "external_prefix_hit_rate_window": _weighted(
                [(f.external_prefix_hit_rate_window, f.prompt_tokens_per_s) for f in up]
            ),
            "kv_offload_load_s_per_gb": _weighted(
                [(f.kv_offload_load_s_per_gb, f.kv_offload_load_gb_per_s) for f in up]
            ),
            "kv_offload_store_s_per_gb": _weighted(
                [(f.kv_offload_store_s_per_gb, f.kv_offload_store_gb_per_s) for f in up]
            ),
            "kv_cache_metrics_sample": _one([f.kv_cache_metrics_sample for f in up]),
            **{name: _weighted([(getattr(f, name), getattr(f, by)) for f in up]) for name, by in _WEIGHTED_BY.items()},
            "spec_acceptance_by_position": _by_position(up),
            "spec_draft_length": _int_or_none(_one([f.spec_draft_length for f in up])),
            **_golden(up),
            **_offload_cpu(up),
            "totals": totals,
        }
    )
    update.update(_shares(update))
    golden = update["spec_golden_acceptance_length"]
    measured = update["spec_acceptance_length"]
    update["spec_acceptance_vs_golden"] = acceptance_vs_golden(
        measured if isinstance(measured, float) else None, golden if isinstance(golden, float) else None
    )
    if len(up) == 1:
        only = up[0]
        update.update({k: getattr(only, k) for k in _PERCENTILES})
    else:
        update.update({k: Percentiles() for k in _PERCENTILES})
    flavors = {f.flavor for f in figs}
    base = EndpointReading(
        url="aggregate",
        up=bool(up),
        status=status,
        flavor=flavors.pop() if len(flavors) == 1 else "unknown",
        model=_str_or_none(_one([f.model for f in figs])),
        engine_version=_str_or_none(_one([f.engine_version for f in figs])),
        max_model_len=_int_or_none(_one([f.max_model_len for f in figs])),
    )
    return base.model_copy(update=update)


def _str_or_none(value: object | None) -> str | None:
    return value if isinstance(value, str) else None


def _int_or_none(value: object | None) -> int | None:
    return value if isinstance(value, int) else None

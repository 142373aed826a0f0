"""Several endpoints (replicas, nodes) folded into one `EndpointFigures` with ``url="aggregate"``.

Rates, totals and request counts add up (the estimated-work rates too, with the engines that export
them, so one GPU's share stays their sum ÷ the engines). KV usage is the mean over the endpoints that
are up (each has its own KV pool). Hit rates are weighted by prompt tokens per second in the window (lifetime
rates by run prompt tokens), which equals Σhits/Σqueries when every query is a prompt token.
Latency percentiles cannot be merged from percentiles, so they are kept only for a single endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentx_tui.snapshot import EndpointFigures, EndpointTotals, Percentiles

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
)


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


def _one(values: Sequence[object]) -> object | None:
    distinct = {v for v in values if v is not None}
    return distinct.pop() if len(distinct) == 1 else None


def aggregate_endpoints(figs: Sequence[EndpointFigures]) -> EndpointFigures | None:
    if not figs:
        return None
    up = [f for f in figs if f.up]
    totals = EndpointTotals(
        **{name: _sum([getattr(f.totals, name) for f in figs]) for name in EndpointTotals.model_fields}
    )
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
            "totals": totals,
        }
    )
    if len(up) == 1:
        only = up[0]
        update.update({"ttft": only.ttft, "itl": only.itl, "e2e": only.e2e, "queue_time": only.queue_time})
    else:
        update.update({k: Percentiles() for k in ("ttft", "itl", "e2e", "queue_time")})
    flavors = {f.flavor for f in figs}
    base = EndpointFigures(
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

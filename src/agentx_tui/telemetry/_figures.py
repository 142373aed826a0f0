"""`MetricsPage` + `WindowState` → `EndpointReading` (pure): the formulas of docs/metrics.md for server figures."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from agentx_tui.snapshot import (
    BucketCounts,
    EndpointReading,
    EndpointTotals,
    EngineReading,
    Percentiles,
    prompt_shares,
    server_time_figures,
)
from agentx_tui.snapshot.stat import ratio
from agentx_tui.telemetry._names import (
    ACCEPTED_AT,
    ESTIMATED_WORK,
    HISTOGRAM_TOTAL_FIELDS,
    PER_VALUE_TOTAL_FIELDS,
    PREFIX_COUNTERS,
    TOTAL_FIELDS,
    positions,
)
from agentx_tui.telemetry._parse import MetricsPage
from agentx_tui.telemetry._window import WindowState

GB = 1e9  # offload traffic in GB/s and s/GB: decimal, as link bandwidths are quoted
PROMPT_SOURCES = ("prompt_computed", "prompt_gpu_cache", "prompt_offload")
GIB = 1 << 30  # vLLM's --kv-offloading-size is in GiB


def _gauge(page: MetricsPage, name: str, engine: str | None, *, mean: bool) -> float | None:
    per_engine = page.gauges.get(name)
    if not per_engine:
        return None
    if engine is not None:
        if engine not in per_engine:
            return None
        per_engine = {engine: per_engine[engine]}
    values = list(per_engine.values())
    return sum(values) / len(values) if mean else sum(values)


def hit_rate_window(page: MetricsPage, state: WindowState, engine: str | None = None) -> float | None:
    rate = ratio(state.delta("prefix_hits", engine), state.delta("prefix_queries", engine))
    if rate is None and state.total("prefix_hits", engine) is None:
        rate = _gauge(page, "hit_rate_gauge", engine, mean=True)
    return rate


def hit_rate_lifetime(page: MetricsPage) -> float | None:
    """hits / queries as the server reports them now, i.e. since the server started."""
    hits = [v for (name, _, _), v in page.counters.items() if name == "prefix_hits"]
    queries = [v for (name, _, _), v in page.counters.items() if name == "prefix_queries"]
    return ratio(sum(hits), sum(queries)) if hits and queries else None


def percentiles(state: WindowState, name: str) -> Percentiles:
    buckets = state.hist_delta(name)
    counts = BucketCounts.of(buckets.items()) if buckets is not None else None
    return counts.percentiles() if counts is not None else Percentiles()


def totals(page: MetricsPage, state: WindowState) -> EndpointTotals:
    values: dict[str, Any] = {}
    for field_name, internal in TOTAL_FIELDS.items():
        value = state.total(internal)
        if value is not None and internal in PREFIX_COUNTERS and internal in page.block_counted:
            value = value * page.block_size if page.block_size else None
        values[field_name] = value
    for field_name, internal in HISTOGRAM_TOTAL_FIELDS.items():
        buckets = state.hist_total(internal)
        values[field_name] = BucketCounts.of(buckets.items()) if buckets is not None else None
    names = [key[0] for key in page.counters]
    for field_name, internal in PER_VALUE_TOTAL_FIELDS.items():
        values[field_name] = per_value_totals([state.total(name) for name in positions(names, internal)])
    return EndpointTotals(**values)


def per_value_totals(values: Sequence[float | None]) -> tuple[float, ...] | None:
    """A per-value family's run totals in value order; None without the family or with one unknown."""
    known = tuple(value for value in values if value is not None)
    return known if known and len(known) == len(values) else None


def estimating_engines(page: MetricsPage) -> int | None:
    """How many engines export vLLM's estimated-work counters; None when none does (no
    `--enable-mfu-metrics`): their rates and totals are then None too, never 0."""
    engines = {engine for (name, engine, _) in page.counters if name in ESTIMATED_WORK}
    return len(engines) or None


def cache_window(rate: Callable[[str], float | None]) -> dict[str, float | None]:
    """The window's cache figures from its counters' rates (`rate`: internal name → per second over the
    window, None without the counter; a ratio of two rates over one window is the ratio of their
    increases), for a scraped page and a Prometheus replica alike: the prompt tokens by source, as rates
    and as shares of their sum (the three add up to 1); an offloading connector's traffic, GB/s each way
    and transfer seconds per GB moved; the KV connector's own lookups' hit rate (docs/metrics.md)."""
    sources = {name: rate(name) for name in PROMPT_SOURCES}
    out: dict[str, float | None] = {
        **prompt_shares(*sources.values()),
        **{f"{name}_tokens_per_s": value for name, value in sources.items()},
        "external_prefix_hit_rate_window": ratio(rate("external_prefix_hits"), rate("external_prefix_queries")),
        "kv_offload_allocation_failures_per_s": rate("offload_allocation_failures"),
    }
    for way in ("load", "store"):
        moved = rate(f"offload_{way}_bytes")
        gb_per_s = None if moved is None else moved / GB
        out[f"kv_offload_{way}_gb_per_s"] = gb_per_s
        out[f"kv_offload_{way}_s_per_gb"] = ratio(rate(f"offload_{way}_s"), gb_per_s)
    return out


def server_time_window(rate: Callable[[str], float | None], accepted_at: Sequence[str]) -> dict[str, Any]:
    """The window's request phases and speculative decoding (snapshot/servertime.py) from its counters'
    rates (`rate`: internal name → per second over the window, None without the counter), for a scraped
    page and a Prometheus replica alike; `accepted_at`: the per-position counters exported, in order.
    With the rates of steps, drafts and draft tokens, which weigh each endpoint's means in an aggregate."""
    return {
        **server_time_figures(lambda field: rate(TOTAL_FIELDS[field]), [rate(name) for name in accepted_at] or None),
        "engine_steps_per_s": rate("iteration_tokens_count"),
        "spec_drafts_per_s": rate("spec_drafts"),
        "spec_draft_tokens_per_s": rate("spec_draft_tokens"),
    }


def offload_capacity(page: MetricsPage, state: WindowState) -> dict[str, bool | float | None]:
    """Whether the server offloads KV to CPU memory, and how many bytes of it it may use (docs/vllm.md):
    vLLM's native offloading says both in `cache_config_info`; a page without an offloading size but
    with an offloading connector's counters offloads somewhere the page does not name (None)."""
    if page.kv_offloading_configured is None:
        return {"kv_offload_cpu": None, "kv_offload_cpu_bytes": None}
    if page.kv_offloading_configured:
        native = page.kv_offloading_backend in (None, "native")
        size = page.kv_offloading_size_gib
        return {
            "kv_offload_cpu": True if native else None,
            "kv_offload_cpu_bytes": size * GIB if native and size is not None else None,
        }
    connector = state.total("offload_store_bytes") is not None or state.total("offload_load_bytes") is not None
    return {"kv_offload_cpu": None if connector else False, "kv_offload_cpu_bytes": None}


def engine_rows(page: MetricsPage, state: WindowState) -> tuple[EngineReading, ...]:
    engines = page.engines
    if len(engines) < 2:
        return ()
    accepted_at = accepted_positions(page)
    rows = []
    for engine in engines:
        phases = server_time_window(functools.partial(state.rate, engine=engine), accepted_at)
        rows.append(
            EngineReading(
                engine=engine,
                running=_gauge(page, "running", engine, mean=False),
                waiting=_gauge(page, "waiting", engine, mean=False),
                kv_cache_usage=_gauge(page, "kv_usage", engine, mean=True),
                prefix_hit_rate_window=hit_rate_window(page, state, engine),
                generation_tokens_per_s=state.rate("generation_tokens", engine),
                server_queue_s_mean=phases["server_queue_s_mean"],
                spec_acceptance_length=phases["spec_acceptance_length"],
            )
        )
    return tuple(rows)


def accepted_positions(page: MetricsPage) -> tuple[str, ...]:
    """The page's accepted-tokens-per-position counters, in position order (none: no speculation)."""
    return positions((key[0] for key in page.counters), ACCEPTED_AT)


def page_figures(page: MetricsPage, state: WindowState, identity: EndpointReading) -> EndpointReading:
    """``identity`` (url, flavor, status, model…) completed with the figures of this page."""
    return identity.model_copy(
        update={
            "running": _gauge(page, "running", None, mean=False),
            "waiting": _gauge(page, "waiting", None, mean=False),
            "kv_cache_usage": _gauge(page, "kv_usage", None, mean=True),
            "block_size": page.block_size,
            "num_gpu_blocks": page.num_gpu_blocks,
            "prefix_caching_enabled": page.prefix_caching_enabled,
            "prefix_hit_rate_window": hit_rate_window(page, state),
            "prefix_hit_rate_lifetime": hit_rate_lifetime(page),
            "prompt_tokens_per_s": state.rate("prompt_tokens"),
            "generation_tokens_per_s": state.rate("generation_tokens"),
            "cached_prompt_tokens_per_s": state.rate("cached_prompt_tokens"),
            "preemptions_per_s": state.rate("preemptions"),
            "requests_per_s": state.rate("requests_finished"),
            "estimated_flops_per_s": state.rate("estimated_flops"),
            "estimated_read_bytes_per_s": state.rate("estimated_read_bytes"),
            "estimated_write_bytes_per_s": state.rate("estimated_write_bytes"),
            "estimating_engines": estimating_engines(page),
            "ttft": percentiles(state, "ttft"),
            "itl": percentiles(state, "itl"),
            "e2e": percentiles(state, "e2e"),
            "queue_time": percentiles(state, "queue_time"),
            "kv_block_idle_before_evict": percentiles(state, "kv_block_idle_before_evict"),
            "kv_block_reuse_gap": percentiles(state, "kv_block_reuse_gap"),
            "kv_block_lifetime": percentiles(state, "kv_block_lifetime"),
            "waiting_capacity": _gauge(page, "waiting_capacity", None, mean=False),
            "waiting_deferred": _gauge(page, "waiting_deferred", None, mean=False),
            **cache_window(state.rate),
            **server_time_window(state.rate, accepted_positions(page)),
            **offload_capacity(page, state),
            "totals": totals(page, state),
            "engines": engine_rows(page, state),
        }
    )

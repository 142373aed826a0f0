"""`MetricsPage` + `WindowState` → `EndpointFigures` (pure): the formulas of docs/metrics.md for server figures."""

from __future__ import annotations

from agentx_tui.snapshot import EndpointFigures, EndpointTotals, EngineFigures, Percentiles
from agentx_tui.telemetry._names import ESTIMATED_WORK, PREFIX_COUNTERS, TOTAL_FIELDS
from agentx_tui.telemetry._parse import MetricsPage
from agentx_tui.telemetry._window import WindowState, quantile


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or not denominator > 0:
        return None
    return numerator / denominator


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
    if buckets is None:
        return Percentiles()
    items = list(buckets.items())
    return Percentiles(p50=quantile(0.5, items), p90=quantile(0.9, items), p99=quantile(0.99, items))


def totals(page: MetricsPage, state: WindowState) -> EndpointTotals:
    values: dict[str, float | None] = {}
    for field_name, internal in TOTAL_FIELDS.items():
        value = state.total(internal)
        if value is not None and internal in PREFIX_COUNTERS and internal in page.block_counted:
            value = value * page.block_size if page.block_size else None
        values[field_name] = value
    return EndpointTotals(**values)


def estimating_engines(page: MetricsPage) -> int | None:
    """How many engines export vLLM's estimated-work counters; None when none does (no
    `--enable-mfu-metrics`): their rates and totals are then None too, never 0."""
    engines = {engine for (name, engine, _) in page.counters if name in ESTIMATED_WORK}
    return len(engines) or None


def engine_rows(page: MetricsPage, state: WindowState) -> tuple[EngineFigures, ...]:
    engines = page.engines
    if len(engines) < 2:
        return ()
    return tuple(
        EngineFigures(
            engine=engine,
            running=_gauge(page, "running", engine, mean=False),
            waiting=_gauge(page, "waiting", engine, mean=False),
            kv_cache_usage=_gauge(page, "kv_usage", engine, mean=True),
            prefix_hit_rate_window=hit_rate_window(page, state, engine),
            generation_tokens_per_s=state.rate("generation_tokens", engine),
        )
        for engine in engines
    )


def page_figures(page: MetricsPage, state: WindowState, identity: EndpointFigures) -> EndpointFigures:
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
            "totals": totals(page, state),
            "engines": engine_rows(page, state),
        }
    )

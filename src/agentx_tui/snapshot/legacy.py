"""Recordings of earlier versions, read as this one: what changed shape, translated once, here.

Up to stop 31 a tick's client figures were flat fields (`ttft` percentiles, `prefix_hit_rate`, and their
run-wide `run_*` twins); they are now the report's figures over the window and over the run
(`ClientReading.window`, `.run`)."""

from __future__ import annotations

from typing import Any

_PERCENTILES = ("p50", "p90", "p99")
# Flat names of the window's figures that changed; the others kept their names.
_WINDOW_RENAMED = {
    "prefix_hit_rate": "prefix_cache_hit_rate_client",
    "prefix_hit_rate_ceiling": "prefix_cache_hit_rate_ceiling",
}
# The window's figures whose run-wide twin was the same name prefixed with `run_`.
_RUN_PREFIXED = (
    "per_user_output_tokens_per_s_p50",
    "interactivity_p50_tokens_per_s",
    "interactivity_p90_tokens_per_s",
    "e2e_interactivity_p50_tokens_per_s",
    "e2e_interactivity_p75_tokens_per_s",
    "e2e_interactivity_p90_tokens_per_s",
)
_WINDOW_KEPT = ("output_tokens_per_s", "prompt_tokens_per_s", "cached_prompt_tokens_per_s", "total_tokens_per_s")
_RUN_KEPT = (
    "schedule_lag_p50_s",
    "schedule_lag_p90_s",
    "schedule_lag_p99_s",
    "schedule_behind",
    "schedule_users_needed",
)


def _latencies(out: dict[str, Any], data: dict[str, Any], flat: str, key: str, keep: tuple[str, ...]) -> None:
    """Percentiles `{p50, p90, p99}` under `flat` → `<key>_p50_s`… (only those in `keep`)."""
    found = data.pop(flat, None)
    if isinstance(found, dict):
        out.update({f"{key}_{p}_s": found.get(p) for p in keep})


def client_figures_of_older(data: Any) -> Any:
    """A `ClientReading` of before stop 32 (flat) in today's shape; anything else as it is."""
    if not isinstance(data, dict) or "window" in data or "run" in data:
        return data
    data = dict(data)
    window: dict[str, Any] = {k: data.pop(k) for k in (*_WINDOW_KEPT, *_RUN_PREFIXED) if k in data}
    window.update({new: data.pop(old) for old, new in _WINDOW_RENAMED.items() if old in data})
    _latencies(window, data, "ttft", "ttft", _PERCENTILES)
    _latencies(window, data, "itl", "itl", _PERCENTILES)
    _latencies(window, data, "e2e", "e2e", ("p90",))
    run: dict[str, Any] = {k: data.pop(f"run_{k}") for k in _RUN_PREFIXED if f"run_{k}" in data}
    run.update({k: data.pop(k) for k in _RUN_KEPT if k in data})
    if "run_prefix_hit_rate_ceiling" in data:
        run["prefix_cache_hit_rate_ceiling"] = data.pop("run_prefix_hit_rate_ceiling")
    _latencies(run, data, "run_ttft", "ttft", _PERCENTILES)
    _latencies(run, data, "run_itl", "itl", _PERCENTILES)
    _latencies(run, data, "run_e2e", "e2e", ("p90",))
    return {**data, "window": window, "run": run}

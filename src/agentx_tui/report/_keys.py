"""The report's keys (docs/metrics.md, a contract) and the unit of each figure.

`REPORT_KEYS` lists the contract keys in the documented order, then the extra keys this tool adds so that a
reader can tell how each figure was obtained (`partial`, sources, raw token counts). Units follow
docs/metrics.md: fractions 0–1, rates per second, seconds, watts, USD. A sweep's tier keys are spelled
here too (`tier_report_keys` writes them, `parse_tier_key` takes one apart).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agentx_tui.snapshot import FrontierAxis, TierRead
from agentx_tui.sweep import DECODE, NORTH_STAR, tier_suffix

CONTRACT_KEYS: tuple[str, ...] = (
    "target",
    "model",
    "engine_version",
    "workload",
    "users",
    "duration_s",
    "requests_completed",
    "requests_failed",
    "error_rate",
    "output_tokens_per_s",
    "prompt_tokens_per_s",
    "cached_prompt_tokens_per_s",
    "total_tokens_per_s",
    "per_user_output_tokens_per_s_p50",
    "ttft_p50_s",
    "ttft_p90_s",
    "ttft_p99_s",
    "itl_p50_s",
    "itl_p90_s",
    "itl_p99_s",
    "prefix_cache_hit_rate_server",
    "prefix_cache_hit_rate_client",
    "prefix_cache_hit_rate_ceiling",
    "kv_cache_usage_mean",
    "kv_cache_usage_max",
    "preemptions",
    "gpu_util_mean",
    "gpu_power_w_mean",
    "usd_per_gpu_hour",
    "gpus",
    "usd_spent",
    "tokens_per_dollar_total",
    "tokens_per_dollar_output",
    "usd_per_million_output_tokens",
    "endpoints",
    "users_detail",
    # Since the AgentX work (docs/metrics.md, docs/sweeps.md):
    "interactivity_p50_tokens_per_s",
    "interactivity_p90_tokens_per_s",
    "total_tokens_per_s_per_gpu",
    "output_tokens_per_s_per_gpu",
    "gpus_source",
    "e2e_p90_s",
    # Load-generator health (docs/scale.md):
    "client_cpu_cores_mean",
    "client_loop_lag_p99_s",
    "client_saturated",
    "workers",
    # Your own traffic (docs/capture.md): null without --proxy (captured_sessions, capture_dir without --capture).
    "proxied_requests",
    "proxied_sessions",
    "proxy_added_ttft_p50_s",
    "proxy_added_ttft_p99_s",
    "captured_sessions",
    "capture_dir",
    # Since the trust work (docs/sweeps.md): a run with --precision (each sweep point has its own).
    "total_tokens_per_s_per_gpu_ci_low",
    "total_tokens_per_s_per_gpu_ci_high",
    "interactivity_p90_tokens_per_s_ci_low",
    "interactivity_p90_tokens_per_s_ci_high",
    "ci_method",
    "stopped_early",
    "stop_reason",
    # Since the North Star work (docs/metrics.md, "Honest clocks"): a timed replay's lag, null when unscheduled.
    "schedule_lag_p50_s",
    "schedule_lag_p90_s",
    "schedule_lag_p99_s",
    # Since the North Star report (docs/metrics.md, docs/sweeps.md): E2E-normalized interactivity over the
    # run (its interval with --precision; each sweep point has its own), and the axis a sweep's frontier
    # and tier reads are on (null for a plain run: it has no frontier).
    "e2e_interactivity_p50_tokens_per_s",
    "e2e_interactivity_p75_tokens_per_s",
    "e2e_interactivity_p90_tokens_per_s",
    "e2e_interactivity_p90_tokens_per_s_ci_low",
    "e2e_interactivity_p90_tokens_per_s_ci_high",
    "frontier_axis",
    # Agents, not requests (docs/metrics.md, "Tasks"): per session tree, over the whole run; null when observing only.
    "tasks_completed",
    "tasks_running",
    "tasks_failed",
    "task_s_p50",
    "task_s_p90",
    "task_model_share",
    "steps_per_task_mean",
    "tokens_per_task_mean",
    "output_tokens_per_task_mean",
    "usd_per_task",
    "tasks_per_hour_per_gpu",
    "step_curve",
)

# A sweep adds these (and, for every tier T, the flat keys of `tier_report_keys`: on both axes, and the
# agents per GPU on the frontier's).
SWEEP_KEYS: tuple[str, ...] = ("points", "frontier", "tiers", "sweep_stop_reason")

EXTRA_KEYS: tuple[str, ...] = (
    "partial",
    "partial_reason",
    "simulated",
    "agentx_version",
    "started_at",
    "ended_at",
    "samples",
    "throughput_source",
    "output_tokens",
    "prompt_tokens",
    "cached_prompt_tokens",
    "output_tokens_per_s_server",
    "prompt_tokens_per_s_server",
    "cached_prompt_tokens_per_s_server",
    "total_tokens_per_s_server",
    "prefix_cache_hit_rate_server_source",
    "prefix_cache_hit_rate_server_lifetime",
    "users_max",
    "sessions_completed",
    "errors_by_kind",
    "gpu_power_w_mean_source",
    "price_source",
    "cost_mode",
    "client_saturated_reason",
    "client_cpu_us_per_token",
    "sessions_started",
    "precision",
    "output_scale",
    "schedule_behind",
    "schedule_users_needed",
    "task_s_histogram",
)

REPORT_KEYS: tuple[str, ...] = CONTRACT_KEYS + EXTRA_KEYS

# Keys whose value is a number (or null): the only ones a --check may name.
NUMERIC_KEYS: tuple[str, ...] = tuple(
    k
    for k in REPORT_KEYS
    if k
    not in {
        "target",
        "model",
        "engine_version",
        "workload",
        "endpoints",
        "users_detail",
        "partial",
        "partial_reason",
        "simulated",
        "agentx_version",
        "throughput_source",
        "prefix_cache_hit_rate_server_source",
        "errors_by_kind",
        "gpu_power_w_mean_source",
        "price_source",
        "cost_mode",
        "gpus_source",
        "client_saturated",
        "client_saturated_reason",
        "capture_dir",
        "ci_method",
        "stopped_early",
        "stop_reason",
        "frontier_axis",
        "step_curve",
        "task_s_histogram",
    }
)

_FRACTIONS = {
    "error_rate",
    "prefix_cache_hit_rate_server",
    "prefix_cache_hit_rate_client",
    "prefix_cache_hit_rate_ceiling",
    "prefix_cache_hit_rate_server_lifetime",
    "kv_cache_usage_mean",
    "kv_cache_usage_max",
    "gpu_util_mean",
    "task_model_share",
}
_TASK_UNITS = {
    "task_s_p50": "s",
    "task_s_p90": "s",
    "tasks_completed": "count",
    "tasks_running": "count",
    "tasks_failed": "count",
    "steps_per_task_mean": "calls/task",
    "tokens_per_task_mean": "tokens/task",
    "output_tokens_per_task_mean": "tokens/task",
    "usd_per_task": "USD/task",
    "tasks_per_hour_per_gpu": "tasks/hour/GPU",
}


CI_SUFFIXES = ("_ci_low", "_ci_high")

# A tier's report keys end in the axis's suffix: ``total_tokens_per_s_per_gpu_at_100`` on the North
# Star, ``total_tokens_per_s_per_gpu_at_100_decode`` on decode interactivity (docs/metrics.md).
TIER_AXIS_SUFFIX: dict[FrontierAxis, str] = {NORTH_STAR: "", DECODE: "_decode"}

TIER_KEY_PREFIXES = (
    "total_tokens_per_s_per_gpu_at_",
    "tokens_per_dollar_total_at_",
    "usd_per_million_total_tokens_at_",
)
# Agents per GPU at T (docs/sweeps.md): read on the sweep's own axis only, so its key has no axis suffix.
AGENTS_KEY_PREFIX = "agents_per_gpu_at_"


def tier_report_keys(tiers: Sequence[TierRead], *, agents_axis: FrontierAxis | None = None) -> dict[str, float | None]:
    """The flat report keys of docs/metrics.md for each tier, so `--check 'tokens_per_dollar_total_at_100 >= 1e9'`
    works: ``total_tokens_per_s_per_gpu_at_T`` (and its 95% interval, ``…_at_T_ci_low``/``_ci_high``),
    ``tokens_per_dollar_total_at_T``, ``usd_per_million_total_tokens_at_T``, tier by tier in the given order.
    A read on decode interactivity has T followed by ``_decode`` (``…_at_100_decode``, ``…_at_100_decode_ci_low``;
    `TIER_AXIS_SUFFIX`); one on the North Star, or of an older recording (no axis), none. A read on
    `agents_axis` (the sweep's frontier axis) adds ``agents_per_gpu_at_T`` after its own keys."""
    out: dict[str, float | None] = {}
    for read in tiers:
        t = tier_suffix(read.tier) + (TIER_AXIS_SUFFIX[read.axis] if read.axis is not None else "")
        out[f"total_tokens_per_s_per_gpu_at_{t}"] = read.total_tokens_per_s_per_gpu
        out[f"total_tokens_per_s_per_gpu_at_{t}_ci_low"] = read.total_tokens_per_s_per_gpu_ci_low
        out[f"total_tokens_per_s_per_gpu_at_{t}_ci_high"] = read.total_tokens_per_s_per_gpu_ci_high
        out[f"tokens_per_dollar_total_at_{t}"] = read.tokens_per_dollar_total
        out[f"usd_per_million_total_tokens_at_{t}"] = read.usd_per_million_total_tokens
        if agents_axis is not None and read.axis == agents_axis:
            out[f"{AGENTS_KEY_PREFIX}{tier_suffix(read.tier)}"] = read.agents_per_gpu
    return out


@dataclass(frozen=True)
class TierKey:
    """A tier's flat report key, taken apart: `figure` is the `TierRead` field it holds."""

    figure: str  # total_tokens_per_s_per_gpu(_ci_low/_ci_high), tokens_per_dollar_total, …, agents_per_gpu
    tier: float
    decode: bool  # the key ends in ``_decode``: read on decode interactivity


def parse_tier_key(key: str) -> TierKey | None:
    """`total_tokens_per_s_per_gpu_at_100_decode_ci_low` → (total_tokens_per_s_per_gpu_ci_low, 100.0,
    decode); `agents_per_gpu_at_37.5` → (agents_per_gpu, 37.5, no suffix); None for any other key (T
    not a finite number included)."""
    for prefix in (*TIER_KEY_PREFIXES, AGENTS_KEY_PREFIX):
        if not key.startswith(prefix):
            continue
        rest, name = key.removeprefix(prefix), prefix.removesuffix("_at_")
        if prefix == TIER_KEY_PREFIXES[0]:  # only throughput reads have an interval
            for suffix in CI_SUFFIXES:
                if rest.endswith(suffix):
                    rest, name = rest.removesuffix(suffix), name + suffix
                    break
        decode = prefix != AGENTS_KEY_PREFIX and rest.endswith(TIER_AXIS_SUFFIX[DECODE])
        rest = rest.removesuffix(TIER_AXIS_SUFFIX[DECODE]) if decode else rest
        try:
            tier = float(rest)
        except ValueError:
            return None
        return TierKey(name, tier, decode) if math.isfinite(tier) else None
    return None


def is_tier_key(key: str) -> bool:
    """`total_tokens_per_s_per_gpu_at_100` and its kin: a sweep's read at an interactivity tier (and the
    95% interval of the throughput read, `…_at_100_ci_low` / `_ci_high`), on the North Star or, with
    `_decode` after T, on decode interactivity; and `agents_per_gpu_at_100`."""
    return parse_tier_key(key) is not None


def unit(key: str) -> str:
    """The unit of a report figure, as shown next to it in the Markdown report and the summary."""
    if is_tier_key(key):
        key = key.rsplit("_at_", 1)[0]
    elif key not in NUMERIC_KEYS:
        return ""
    if key in _TASK_UNITS:
        return _TASK_UNITS[key]
    if key in _FRACTIONS or key.startswith(("prefix_cache_hit_rate", "kv_cache_usage")):
        return "fraction 0–1"
    if key in ("started_at", "ended_at"):
        return "unix time, s"
    if key.startswith(("interactivity", "e2e_interactivity")):
        return "tokens/s/user"
    if key == "agents_per_gpu":
        return "agents/GPU"
    if "tokens_per_s_per_gpu" in key:
        return "tokens/s/GPU"
    if "tokens_per_s" in key:
        return "tokens/s"
    if key.startswith("tokens_per_dollar"):
        return "tokens/USD"
    if key.startswith("usd_per_million"):
        return "USD/1M tokens"
    if key == "usd_per_gpu_hour":
        return "USD/GPU-hour"
    if key.startswith("usd"):
        return "USD"
    if key.endswith("_w_mean") or key.endswith("_w"):
        return "W"
    if key.endswith("_s"):
        return "s"
    if key.endswith("_tokens") or key == "preemptions":
        return "tokens" if key.endswith("_tokens") else "count"
    if key in ("requests_completed", "requests_failed", "samples", "sessions_completed"):
        return "count"
    if key in ("proxied_requests", "proxied_sessions", "captured_sessions"):
        return "count"
    if key in ("users", "users_max", "gpus", "workers", "sessions_started"):
        return "count"
    if key == "client_cpu_cores_mean":
        return "cores"
    if key == "client_cpu_us_per_token":
        return "µs"
    return ""


def tier_of(key: str, prefix: str) -> float | None:
    """The tier T of a report key `prefix` + T, on either axis (`…_at_100`, `…_at_100_decode` → 100.0);
    None for any other key (an interval's `…_at_100_ci_low` included)."""
    parsed = parse_tier_key(key) if key.startswith(prefix) else None
    if parsed is None or parsed.figure != prefix.removesuffix("_at_"):
        return None
    return parsed.tier

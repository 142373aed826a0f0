"""The name table: every server's metric names mapped to one internal vocabulary (docs/vllm.md).

Each internal figure lists its source names in order of preference; the first one present on a page
wins, so a server that exposes both the new and the deprecated name (vLLM 0.9.2–0.10) is read once, by
its new name. Names are Prometheus *family* names: counters without their ``_total`` suffix,
histograms without ``_bucket``/``_count``/``_sum``. A name may pick one value of one label,
``family{label=value}`` (`split_source`): one labelled family then feeds several figures, each label
value its own (vLLM's prompt tokens by source, requests waiting by reason).

SGLang has no separate prefix-cache query counter: its radix cache is consulted for every prompt
token, so its prompt and cached token counters double as prefix queries and hits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, Literal

PageFlavor = Literal["vllm", "sglang"]  # which naming a /metrics page uses

COUNTERS: Final[dict[str, tuple[str, ...]]] = {
    "prompt_tokens": ("vllm:prompt_tokens", "sglang:prompt_tokens"),
    "generation_tokens": ("vllm:generation_tokens", "sglang:generation_tokens"),
    "cached_prompt_tokens": ("vllm:prompt_tokens_cached", "sglang:cached_tokens"),
    "prefix_queries": ("vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries", "sglang:prompt_tokens"),
    "prefix_hits": ("vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits", "sglang:cached_tokens"),
    "preemptions": ("vllm:num_preemptions",),
    "requests_finished": ("vllm:request_success", "sglang:num_requests"),
    # vLLM's estimate of the work it did, per GPU of each engine (`--enable-mfu-metrics`, vllm/v1/metrics/
    # perf.py): FLOPs, and bytes read from and written to GPU memory (docs/metrics.md, "Roofline").
    "estimated_flops": ("vllm:estimated_flops_per_gpu",),
    "estimated_read_bytes": ("vllm:estimated_read_bytes_per_gpu",),
    "estimated_write_bytes": ("vllm:estimated_write_bytes_per_gpu",),
    # Where each prompt token's KV came from (vLLM ≥ 0.12); "external" is a KV connector's: an offload
    # tier (CPU memory, LMCache, Mooncake) or another instance.
    "prompt_computed": ("vllm:prompt_tokens_by_source{source=local_compute}",),
    "prompt_gpu_cache": ("vllm:prompt_tokens_by_source{source=local_cache_hit}",),
    "prompt_offload": ("vllm:prompt_tokens_by_source{source=external_kv_transfer}",),
    "external_prefix_queries": ("vllm:external_prefix_cache_queries",),
    "external_prefix_hits": ("vllm:external_prefix_cache_hits",),
    # An offloading connector's transfers (bytes, seconds); its deprecated names carried a direction label.
    "offload_load_bytes": ("vllm:kv_offload_load_bytes", "vllm:kv_offload_total_bytes{transfer_type=CPU_to_GPU}"),
    "offload_load_s": ("vllm:kv_offload_load_time", "vllm:kv_offload_total_time{transfer_type=CPU_to_GPU}"),
    "offload_store_bytes": ("vllm:kv_offload_store_bytes", "vllm:kv_offload_total_bytes{transfer_type=GPU_to_CPU}"),
    "offload_store_s": ("vllm:kv_offload_store_time", "vllm:kv_offload_total_time{transfer_type=GPU_to_CPU}"),
    "offload_allocation_failures": ("vllm:kv_offload_allocation_failure",),
    # Speculative decoding (docs/vllm.md): a draft is one verify step of one request with at least one
    # proposed token; the accepted tokens by draft position 0…k−1 are a family of their own (`PER_VALUE`).
    "spec_drafts": ("vllm:spec_decode_num_drafts",),
    "spec_draft_tokens": ("vllm:spec_decode_num_draft_tokens",),
    "spec_accepted_tokens": ("vllm:spec_decode_num_accepted_tokens",),
    "spec_accepted_at": ("vllm:spec_decode_num_accepted_tokens_per_pos",),
}

# vLLM's request phases and engine steps: histograms of which only the `_sum` and `_count` samples are
# read, as counters (a mean over a stretch is Δsum ÷ Δcount). Internal stem → its histogram families;
# the counters are `<stem>_sum` and `<stem>_count` (`HISTOGRAM_SUMS`). The request-level ones are
# observed once per finished request; `iteration_tokens` once per engine step (computed prefill +
# generated tokens). `request_inference_time_seconds` is not read: it is prefill + decode.
HISTOGRAM_MEANS: Final[dict[str, tuple[str, ...]]] = {
    "request_queue_s": ("vllm:request_queue_time_seconds", "sglang:queue_time_seconds"),
    "request_prefill_s": ("vllm:request_prefill_time_seconds",),
    "request_decode_s": ("vllm:request_decode_time_seconds",),
    "iteration_tokens": ("vllm:iteration_tokens_total",),
    "request_prefill_computed_tokens": ("vllm:request_prefill_kv_computed_tokens",),
    "request_preemptions": ("vllm:request_num_preemptions",),
}
HISTOGRAM_SUMS: Final[dict[str, tuple[str, ...]]] = {
    f"{stem}_{part}": tuple(f"{name}_{part}" for name in families)
    for stem, families in HISTOGRAM_MEANS.items()
    for part in ("sum", "count")
}
COUNTERS.update(HISTOGRAM_SUMS)

# Counters with one series per value of a label whose values are not known in advance (vLLM's accepted
# tokens per draft position, 0…k−1): each value is a counter of its own, named `<internal>:<value>`
# (`per_value_name`), so that it is not summed with the others.
ACCEPTED_AT: Final = "spec_accepted_at"
PER_VALUE: Final[dict[str, str]] = {ACCEPTED_AT: "position"}

# The estimated-work counters: each engine's series is already per GPU (vLLM divides by its parallelism),
# so an endpoint's per-GPU figure is their sum over engines ÷ the engines that export them.
ESTIMATED_WORK: Final[tuple[str, ...]] = ("estimated_flops", "estimated_read_bytes", "estimated_write_bytes")

# Counters that some versions counted in KV blocks rather than tokens (see `counts_blocks`).
PREFIX_COUNTERS: Final[frozenset[str]] = frozenset({"prefix_queries", "prefix_hits"})
BLOCK_COUNTING_CANDIDATES: Final[frozenset[str]] = frozenset(
    {"vllm:gpu_prefix_cache_queries", "vllm:gpu_prefix_cache_hits"}
)

GAUGES: Final[dict[str, tuple[str, ...]]] = {
    "running": ("vllm:num_requests_running", "sglang:num_running_reqs"),
    "waiting": ("vllm:num_requests_waiting", "sglang:num_queue_reqs"),
    "kv_usage": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"),
    # Used only when SGLang exposes no cached-token counter to compute a windowed rate from.
    "hit_rate_gauge": ("sglang:cache_hit_rate",),
    "waiting_capacity": ("vllm:num_requests_waiting_by_reason{reason=capacity}",),
    "waiting_deferred": ("vllm:num_requests_waiting_by_reason{reason=deferred}",),
}

HISTOGRAMS: Final[dict[str, tuple[str, ...]]] = {
    "ttft": ("vllm:time_to_first_token_seconds", "sglang:time_to_first_token_seconds"),
    "itl": (
        "vllm:inter_token_latency_seconds",
        "vllm:time_per_output_token_seconds",
        "sglang:inter_token_latency_seconds",
        "sglang:time_per_output_token_seconds",
    ),
    "e2e": ("vllm:e2e_request_latency_seconds", "sglang:e2e_request_latency_seconds"),
    "queue_time": ("vllm:request_queue_time_seconds", "sglang:queue_time_seconds"),
    # KV residency, with vLLM's --kv-cache-metrics (sampled blocks; vLLM ≥ 0.12).
    "kv_block_idle_before_evict": ("vllm:kv_block_idle_before_evict_seconds",),
    "kv_block_reuse_gap": ("vllm:kv_block_reuse_gap_seconds",),
    "kv_block_lifetime": ("vllm:kv_block_lifetime_seconds",),
}

CACHE_CONFIG_INFO: Final = "vllm:cache_config_info"

# The label that tells data-parallel engines apart; every other label is summed over.
ENGINE_LABELS: Final[tuple[str, ...]] = ("engine", "dp_rank")

# vLLM's block-counting prefix counters were replaced by token-counting ones in mid-2025 (0.9);
# used only when a page carries no HELP text saying which unit it counts.
FIRST_TOKEN_COUNTING_VERSION: Final[tuple[int, int]] = (0, 9)


def counter_suffix(internal: str) -> str:
    """What a counter's sample name adds to its name in the table: ``_total`` for a counter (vLLM and
    SGLang write it through prometheus_client), nothing for a histogram's ``_sum``/``_count``."""
    return "" if internal in HISTOGRAM_SUMS else "_total"


def per_value_name(internal: str, labels: Mapping[str, str]) -> str | None:
    """The name a sample of `internal` is counted under: `internal` itself, or for a `PER_VALUE` family
    ``internal:value`` of its label (None for a sample without that label)."""
    label = PER_VALUE.get(internal)
    if label is None:
        return internal
    value = labels.get(label)
    return None if value is None else f"{internal}:{value}"


def positions(names: Iterable[str], internal: str) -> tuple[str, ...]:
    """The per-value counters of `internal` among `names`, by their value in number order: vLLM's draft
    positions 0…k−1 (k = how many there are)."""
    prefix = internal + ":"
    found = {name for name in names if name.startswith(prefix)}
    return tuple(sorted(found, key=lambda name: _value_order(name[len(prefix) :])))


def _value_order(value: str) -> tuple[int, str]:
    return (int(value), "") if value.isascii() and value.isdigit() else (1 << 30, value)


def split_source(candidate: str) -> tuple[str, str | None, str | None]:
    """``"family{label=value}"`` → (family, label, value); a bare family name → (family, None, None)."""
    family, brace, selector = candidate.partition("{")
    if not brace:
        return family, None, None
    label, _, value = selector.rstrip("}").partition("=")
    return family, label, value


def picks(candidate: str, labels: dict[str, str]) -> bool:
    """Whether a sample with `labels` belongs to `candidate` (always, for a bare family name)."""
    _, label, value = split_source(candidate)
    return label is None or labels.get(label) == value


def family(candidate: str) -> str:
    return split_source(candidate)[0]


def picked_label(candidate: str) -> str | None:
    """The label a candidate picks a value of: dropped from the series it reads (it names the figure)."""
    return split_source(candidate)[1]


def flavor_of(name: str) -> PageFlavor | None:
    if name.startswith("vllm:"):
        return "vllm"
    if name.startswith("sglang:"):
        return "sglang"
    return None


def parse_version(text: str | None) -> tuple[int, int] | None:
    """``"0.10.1rc2"`` → ``(0, 10)``; None when it does not start with two numbers."""
    if not text:
        return None
    parts = text.strip().lstrip("v").split(".")
    try:
        return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or "x")
    except (ValueError, IndexError):
        return None


def counts_blocks(source_name: str, help_text: str, engine_version: str | None) -> bool:
    """Whether a prefix counter counts KV blocks (to be multiplied by ``block_size``) or tokens.

    The HELP line decides when it says ("in terms of number of queried blocks" / "tokens"), as every
    vLLM release has written it. Without a telling HELP line only the deprecated ``gpu_*`` names of a
    server older than 0.9 are taken as block counts.
    """
    if source_name not in BLOCK_COUNTING_CANDIDATES:
        return False
    words = help_text.lower()
    if "block" in words:
        return True
    if "token" in words:
        return False
    version = parse_version(engine_version)
    return version is not None and version < FIRST_TOKEN_COUNTING_VERSION


def _wanted_names() -> frozenset[str]:
    names = {CACHE_CONFIG_INFO}
    for internal, candidates in COUNTERS.items():
        suffix = counter_suffix(internal)
        names.update(name for base in map(family, candidates) for name in {base, base + suffix})
    for candidates in GAUGES.values():
        names.update(map(family, candidates))
    for candidates in HISTOGRAMS.values():
        names.update(name for base in map(family, candidates) for name in (base, base + "_bucket"))
    return frozenset(names)


# Sample and family names the scraper reads; other lines are dropped before parsing (see _parse).
WANTED_NAMES: Final[frozenset[str]] = _wanted_names()
# Read as raw samples by other readers of the page: DCGM GPU series, and the simulated engine's own
# health (how far its engine loop is behind wall time: docs/sim.md).
WANTED_PREFIXES: Final[tuple[str, ...]] = ("DCGM_FI_", "agentx_sim:")
SIM_LAG: Final = "agentx_sim:engine_lag_seconds"
SIM_LOST: Final = "agentx_sim:engine_lost_seconds_total"


# EndpointTotals field → the internal counter it sums (the direct scraper and the Prometheus source).
TOTAL_FIELDS: Final[dict[str, str]] = {
    "prompt_tokens": "prompt_tokens",
    "generation_tokens": "generation_tokens",
    "cached_prompt_tokens": "cached_prompt_tokens",
    "prefix_cache_queries": "prefix_queries",
    "prefix_cache_hits": "prefix_hits",
    "preemptions": "preemptions",
    "requests_finished": "requests_finished",
    "estimated_flops": "estimated_flops",
    "estimated_read_bytes": "estimated_read_bytes",
    "estimated_write_bytes": "estimated_write_bytes",
    "prompt_tokens_computed": "prompt_computed",
    "prompt_tokens_gpu_cache": "prompt_gpu_cache",
    "prompt_tokens_offload": "prompt_offload",
    "external_prefix_cache_queries": "external_prefix_queries",
    "external_prefix_cache_hits": "external_prefix_hits",
    "kv_offload_load_bytes": "offload_load_bytes",
    "kv_offload_load_s": "offload_load_s",
    "kv_offload_store_bytes": "offload_store_bytes",
    "kv_offload_store_s": "offload_store_s",
    "kv_offload_allocation_failures": "offload_allocation_failures",
    "spec_drafts": "spec_drafts",
    "spec_draft_tokens": "spec_draft_tokens",
    "spec_accepted_tokens": "spec_accepted_tokens",
    **{name: name for name in HISTOGRAM_SUMS},
}
# EndpointTotals field → the per-value family whose counters it holds, in value order (`positions`).
PER_VALUE_TOTAL_FIELDS: Final[dict[str, str]] = {"spec_accepted_tokens_by_position": ACCEPTED_AT}
# EndpointTotals field → the internal histogram whose observations over the run it holds.
HISTOGRAM_TOTAL_FIELDS: Final[dict[str, str]] = {
    "kv_block_idle_before_evict": "kv_block_idle_before_evict",
    "kv_block_reuse_gap": "kv_block_reuse_gap",
    "kv_block_lifetime": "kv_block_lifetime",
}

"""Every figure the tool reports, declared once (docs/metrics.md, "Report keys").

A figure is a field of `Figures` made by `figure(...)`: its name is its report key, and its declaration
says its unit, which way is better, whether it carries a 95% interval, how `compare` treats it, whether
the headless summary prints it, which of the report's tables and sections show it (`shown_in`, with its
column's `label`), and its one-line meaning. Everything else is derived from that: the report's keys and
their order, its CSV columns, the `--check` vocabulary (the numeric figures), the Markdown and headless
rows and tables with their units, compare's rows and gates, and the key table of docs/metrics.md (a test
holds the page to the declarations).

`Figures` is the report's vocabulary over one window: the client's rate window of a tick (its `window`)
and the whole run so far (its `run`), a sweep point's measured window (`PointFigures`), a `--precision`
run's window (`RunIntervals`), and the whole run (the report, report/_model.py). Each sets the figures it
knows; its JSON holds only those (`model_fields_set`), flat, in the declarations' order, each figure with
an interval followed by its `_ci_low`/`_ci_high`. A file read back keeps its own key order, so an older
report or recording is written out as it was read.

Building refuses a key that is not declared (`extra="forbid"`, and the pydantic mypy plugin refuses it
before that); reading a file of another version (`read`) drops the keys it does not know.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from agentx_tui.snapshot.base import Frozen
from agentx_tui.snapshot.figureset import (
    CACHE_CLIENT,
    CACHE_SERVERS,
    COUNT,
    FRACTION,
    GATE,
    POINTS_SPEED,
    POINTS_USE,
    SECONDS,
    SHOW,
    SUMMARY_TABLE,
    TIME_SPLIT,
    TOKENS,
    TOKENS_PER_S,
    TOKENS_PER_S_PER_GPU,
    TOKENS_PER_S_PER_USER,
    USD,
    FigureSet,
    agents_figure,
    agentx_figure,
    figure,
    limits_figure,
    point_figure,
    proxy_figure,
    task_figure,
)
from agentx_tui.snapshot.rows import (
    EndpointRow,
    FrontierAxis,
    ProbeRow,
    RetentionRow,
    RooflineBound,
    StepRow,
    TaskTimeBar,
    UserRow,
    WorkerLossRow,
)

# A list entry is read as its model where it fits, else kept as the JSON object it is (an older
# report's endpoint, a hand-written point).
_MODEL_FIRST = Field(union_mode="left_to_right")
JsonObject = dict[str, Any]
Endpoint = Annotated[EndpointRow | JsonObject, _MODEL_FIRST]
User = Annotated[UserRow | JsonObject, _MODEL_FIRST]
Step = Annotated[StepRow | JsonObject, _MODEL_FIRST]
Retention = Annotated[RetentionRow | JsonObject, _MODEL_FIRST]
LostWorker = Annotated[WorkerLossRow | JsonObject, _MODEL_FIRST]
Probe = Annotated[ProbeRow | JsonObject, _MODEL_FIRST]


def _north_star(percentile: str, *, interval: bool = False, **shown: Any) -> Any:
    """AgentX's North Star at a percentile: E2E-normalized interactivity, 1 / the percentile of r_i."""
    meaning = f"1 / {percentile} of E2E latency per output token (E2E-normalized interactivity)"
    if percentile == "p90":
        meaning = f"the North Star: {meaning}"
    return figure(TOKENS_PER_S_PER_USER, meaning, better="higher", compare=GATE, interval=interval, **shown)


def _decode_interactivity(percentile: str, *, interval: bool = False, **shown: Any) -> Any:
    """Decode interactivity at a percentile: 1 / the percentile of per-request ITL."""
    meaning = f"decode interactivity: 1 / {percentile} of per-request ITL"
    return figure(TOKENS_PER_S_PER_USER, meaning, better="higher", compare=GATE, interval=interval, **shown)


class Figures(FigureSet):
    """The report's figures (docs/metrics.md), in the order its JSON, CSV and Markdown give them."""

    # --- what was measured -------------------------------------------------------------------
    target: str | None = figure("", "what was measured: the simulated engine, a launched server or the attached URLs")
    model: str | None = figure("", "the served model, as the servers name it (several joined by commas)")
    engine_version: str | None = figure("", "the servers' engine version (several joined by commas)")
    workload: str | None = figure("", "the workload: a preset, a YAML file, a trace or a folder of sessions")
    simulated: bool | None = figure("", "true when the target is the built-in simulated engine")
    agentx_version: str | None = figure("", "the agentx-tui version that wrote the report")
    output_scale: float | None = figure("", "--output-scale: every answer's length was this times its own (1: as is)")
    started_at: float | None = figure("unix time, s", "when the run's first sample was taken")
    ended_at: float | None = figure("unix time, s", "when its last sample was taken")
    duration_s: float | None = figure(
        SECONDS,
        "first sample (taken as the load starts) to last (taken once the requests in flight at the stop have "
        "finished): the window every rate and total of the report is over",
        summary=True,
    )
    drain_s: float | None = figure(
        SECONDS,
        "the end of duration_s after the run was stopped: the tick that stopped it to the last sample, while the "
        "requests then in flight finished (they are counted)",
    )
    paused_s: float | None = figure(
        SECONDS,
        "seconds the run was paused (p in the dashboard: no new request sent), inside duration_s: its rates "
        "count them as time",
    )
    samples: int | None = figure(COUNT, "ticks (snapshots) the report is built from")
    partial: bool | None = figure(
        "", "true when the run was cut short (a signal, a server that died) or lost users (a load worker died)"
    )
    partial_reason: str | None = figure("", "why the run was cut short or lost users")
    users: int | None = figure(COUNT, "concurrent users (agent sessions) driven at the end")
    users_max: int | None = figure(COUNT, "the most concurrent users driven at any tick")
    gpus: int | None = figure(COUNT, "GPUs behind the target (the per-GPU figures' divisor)")
    gpus_source: str | None = figure("", "where the GPU count came from: --gpus, NVML, DCGM series, a profile")

    # --- throughput -----------------------------------------------------------------------------
    total_tokens_per_s: float | None = figure(
        TOKENS_PER_S,
        "prompt + output tokens per second (cache + input + output, AgentX accounting)",
        better="higher",
        compare=GATE,
        summary=True,
    )
    total_tokens_per_s_per_gpu: float | None = figure(
        TOKENS_PER_S_PER_GPU,
        "total tokens per second per GPU",
        better="higher",
        compare=GATE,
        interval=True,
        shown_in=(POINTS_SPEED, SUMMARY_TABLE),
        label="total tok/s/GPU",
        warmed=True,
    )
    output_tokens_per_s: float | None = figure(
        TOKENS_PER_S, "output tokens per second", better="higher", compare=GATE, summary=True
    )
    output_tokens_per_s_per_gpu: float | None = figure(
        TOKENS_PER_S_PER_GPU,
        "output tokens per second per GPU",
        better="higher",
        compare=GATE,
        warmed=True,
    )
    prompt_tokens_per_s: float | None = figure(TOKENS_PER_S, "prompt tokens per second, cached ones included")
    cached_prompt_tokens_per_s: float | None = figure(
        TOKENS_PER_S, "prompt tokens per second the servers served from their prefix cache"
    )
    throughput_source: str | None = figure("", "whose counts the rates are: client (the load driver's) or server")
    output_tokens: int | float | None = figure(TOKENS, "output tokens over the run")
    prompt_tokens: int | float | None = figure(TOKENS, "prompt tokens over the run")
    cached_prompt_tokens: int | float | None = figure(TOKENS, "prompt tokens served from the prefix cache")
    output_tokens_per_s_server: float | None = figure(TOKENS_PER_S, "output tokens per second by the servers' counters")
    prompt_tokens_per_s_server: float | None = figure(TOKENS_PER_S, "prompt tokens per second by the servers' counters")
    cached_prompt_tokens_per_s_server: float | None = figure(
        TOKENS_PER_S, "cached prompt tokens per second by the servers' counters"
    )
    total_tokens_per_s_server: float | None = figure(TOKENS_PER_S, "total tokens per second by the servers' counters")

    # --- interactivity ------------------------------------------------------------------------------
    e2e_interactivity_p50_tokens_per_s: float | None = _north_star("p50")
    e2e_interactivity_p75_tokens_per_s: float | None = _north_star("p75")
    e2e_interactivity_p90_tokens_per_s: float | None = _north_star(
        "p90", interval=True, shown_in=(POINTS_SPEED, SUMMARY_TABLE), label="North Star p90 tok/s/user"
    )
    interactivity_p50_tokens_per_s: float | None = _decode_interactivity("p50")
    interactivity_p90_tokens_per_s: float | None = _decode_interactivity(
        "p90", interval=True, shown_in=(POINTS_SPEED, SUMMARY_TABLE), label="decode p90 tok/s/user"
    )
    per_user_output_tokens_per_s_p50: float | None = figure(
        TOKENS_PER_S, "a request's decode speed, output tokens / (last − first token), p50", summary=True
    )

    # --- latency ----------------------------------------------------------------------------------
    ttft_p50_s: float | None = figure(SECONDS, "time to first token, p50", better="lower", summary=True)
    ttft_p90_s: float | None = figure(
        SECONDS,
        "time to first token, p90",
        better="lower",
        compare=SHOW,
        summary=True,
        shown_in=(POINTS_SPEED,),
        label="TTFT p90 s",
    )
    ttft_p99_s: float | None = figure(SECONDS, "time to first token, p99", better="lower")
    ttft_s_mean: float | None = figure(
        SECONDS, "time to first token, mean (Σ TTFT ÷ requests, exact)", better="lower", shown_in=(TIME_SPLIT,)
    )
    itl_p50_s: float | None = figure(SECONDS, "gap between content tokens, pooled over tokens, p50", better="lower")
    itl_p90_s: float | None = figure(
        SECONDS, "gap between content tokens, pooled over tokens, p90", better="lower", compare=SHOW, summary=True
    )
    itl_p99_s: float | None = figure(SECONDS, "gap between content tokens, pooled over tokens, p99", better="lower")
    e2e_p90_s: float | None = figure(SECONDS, "a request's start to its last content token, p90", better="lower")

    # --- where the time went: r_i = TTFT_i/OSL_i + decode_i/OSL_i (docs/metrics.md) -----------------
    north_star_ttft_share: float | None = figure(
        FRACTION,
        "of the requests with r_i ≥ p90 of r_i (they set the North Star): Σ TTFT_i/OSL_i ÷ Σ r_i",
        compare=SHOW,
        summary=True,
        shown_in=(TIME_SPLIT,),
    )
    north_star_stall_share: float | None = figure(
        FRACTION,
        "of the same requests: Σ stall excess_i/OSL_i ÷ Σ r_i (1 − it − the first-token share: decode)",
        better="lower",
        compare=SHOW,
        shown_in=(TIME_SPLIT,),
    )
    median_ttft_share: float | None = figure(
        FRACTION, "of the requests with r_i ≥ p50 of r_i: Σ TTFT_i/OSL_i ÷ Σ r_i", compare=SHOW, shown_in=(TIME_SPLIT,)
    )
    output_tokens_p50: int | float | None = figure(
        TOKENS,
        "a request's output tokens (OSL), p50 of the exact counts",
        compare=SHOW,
        summary=True,
        shown_in=(TIME_SPLIT,),
    )
    decode_stall_share: float | None = figure(
        FRACTION,
        "Σ (stalled event gap − its request's median gap) ÷ Σ decode spans (first → last token); a stall: "
        "a gap > 3 × that median",
        better="lower",
        compare=SHOW,
        summary=True,
        shown_in=(TIME_SPLIT,),
    )
    decode_stalls_per_request: float | None = figure(
        "stalls/request", "decode stalls ÷ streamed requests", better="lower", compare=SHOW, shown_in=(TIME_SPLIT,)
    )

    # --- the cold start: the sessions' first calls (docs/metrics.md, "Cold start") -------------------
    ttft_p90_s_warm: float | None = figure(
        SECONDS,
        "time to first token, p90, over the requests that were not their session's first call",
        better="lower",
        warmed=True,
    )
    cold_start_figures: list[str] | None = figure(
        "",
        "the latency figures the sessions' first calls set: over the other requests each is over 20% better",
        warmed=True,
    )
    cold_start_note: str | None = figure(
        "", "which latency figures the sessions' first calls set, in words", warmed=True
    )

    # --- a plain run's --warmup (docs/metrics.md, "Warm-up") --------------------------------------------
    warmup_s: float | None = figure(SECONDS, "seconds before the measured window: a plain run's --warmup")
    window_s: float | None = figure(
        SECONDS, "a plain run with --warmup: its measured window, warm-up's end to last sample"
    )
    window_keys: list[str] | None = figure(
        "", "a plain run with --warmup: the keys measured over its window (requests started after the warm-up)"
    )

    # --- requests ---------------------------------------------------------------------------------
    requests_completed: int | float | None = figure(
        COUNT,
        "requests completed (the servers' counter when observing only)",
        summary=True,
    )
    requests_failed: int | None = figure(COUNT, "requests that failed for good", summary=True)
    error_rate: float | None = figure(
        FRACTION,
        "failed / (completed + failed) requests",
        better="lower",
        compare=SHOW,
        summary=True,
        warmed=True,
    )
    errors_by_kind: dict[str, int] | None = figure("", "failed or retried attempts by kind")
    sessions_ended: int | None = figure(
        COUNT, "sessions that ended: ran all their steps, or stopped at the model's context (sessions_started before)"
    )
    sessions_completed: int | None = figure(
        COUNT, "sessions that ran all their steps (from the first: one joined midway is not counted)"
    )

    # --- the prefix cache ----------------------------------------------------------------------
    prefix_cache_hit_rate_server: float | None = figure(
        FRACTION,
        "Δhits / Δqueries of the servers' prefix-cache counters (tokens)",
        compare=SHOW,
        summary=True,
        warmed=True,
    )
    prefix_cache_hit_rate_client: float | None = figure(
        FRACTION,
        "Σ cached_tokens / Σ prompt tokens of the client's requests",
        compare=SHOW,
        summary=True,
        shown_in=(POINTS_USE, CACHE_CLIENT),
        label="client hit",
    )
    prefix_cache_hit_rate_ceiling: float | None = figure(
        FRACTION,
        "the hit rate a perfect, unbounded prefix cache would reach on the prompts sent",
        summary=True,
        shown_in=(CACHE_CLIENT,),
    )
    prefix_cache_hit_rate_server_lifetime: float | None = figure(
        FRACTION, "the servers' hit rate since they started (their counters' values)"
    )
    prefix_cache_hit_rate_server_source: str | None = figure("", "how the servers' hit rate was computed, in words")
    # Where the servers' prompt tokens came from, and their KV offload tier (docs/metrics.md, "Cache").
    prompt_share_computed: float | None = figure(
        FRACTION,
        "share of the prompt tokens the servers computed: Δ prompt_tokens_by_source{local_compute} / Δ all sources",
        compare=SHOW,
        summary=True,
        shown_in=(CACHE_SERVERS,),
    )
    prompt_share_gpu_cache: float | None = figure(
        FRACTION,
        "share served from the GPU prefix cache (source local_cache_hit)",
        compare=SHOW,
        summary=True,
        shown_in=(CACHE_SERVERS,),
    )
    prompt_share_offload: float | None = figure(
        FRACTION,
        "share served through a KV connector: an offload tier (CPU memory, LMCache, Mooncake) or another "
        "instance (source external_kv_transfer)",
        compare=SHOW,
        summary=True,
        shown_in=(CACHE_SERVERS,),
    )
    kv_offload_load_gb_per_s: float | None = figure(
        "GB/s",
        "KV loaded from the offload tier into GPU memory: Δ kv_offload_load_bytes / duration / 1e9",
        compare=SHOW,
        shown_in=(CACHE_SERVERS,),
    )
    kv_offload_store_gb_per_s: float | None = figure(
        "GB/s",
        "KV stored from GPU memory to the offload tier: Δ kv_offload_store_bytes / duration / 1e9",
        compare=SHOW,
        shown_in=(CACHE_SERVERS,),
    )
    kv_block_idle_before_evict_p50_s: float | None = figure(
        SECONDS,
        "how long an evicted KV block had sat unused, p50 (--kv-cache-metrics; sampled blocks)",
        compare=SHOW,
        shown_in=(CACHE_SERVERS,),
    )
    kv_block_idle_before_evict_p90_s: float | None = figure(
        SECONDS,
        "how long an evicted KV block had sat unused, p90 (--kv-cache-metrics; sampled blocks)",
        shown_in=(CACHE_SERVERS,),
    )
    kv_block_reuse_gap_p50_s: float | None = figure(
        SECONDS,
        "time between accesses to a KV block, p50 (--kv-cache-metrics; sampled blocks)",
        compare=SHOW,
        shown_in=(CACHE_SERVERS,),
    )
    kv_block_reuse_gap_p90_s: float | None = figure(
        SECONDS,
        "time between accesses to a KV block, p90 (--kv-cache-metrics; sampled blocks)",
        shown_in=(CACHE_SERVERS,),
    )
    kv_cache_metrics_sample: float | None = figure(
        FRACTION,
        "the share of KV blocks the residency figures sample (--kv-cache-metrics-sample), where known",
        shown_in=(CACHE_SERVERS,),
    )
    kv_offload_cpu: bool | None = figure(
        "",
        "true when the servers offload KV to CPU memory (vLLM's --kv-offloading-size, the simulator's CPU tier)",
        shown_in=(CACHE_SERVERS,),
    )
    kv_offload_cpu_bytes: float | None = figure(
        "bytes", "the CPU memory the servers may use for offloaded KV", shown_in=(CACHE_SERVERS,)
    )
    # Where the prefix went, by the client (docs/metrics.md §4): each prompt split into cold, hit and
    # evicted tokens; how long a session sat idle before each call, and what the cache still held then.
    prefix_reused_tokens: int | None = figure(
        TOKENS,
        "prompt tokens an earlier call of the run had sent (block-aligned): what a cache could serve",
        shown_in=(CACHE_CLIENT,),
    )
    prefix_evicted_share: float | None = figure(
        FRACTION,
        "Σ evicted ÷ Σ reused: reused prompt tokens the server no longer had cached",
        better="lower",
        compare=SHOW,
        summary=True,
        shown_in=(POINTS_USE, CACHE_CLIENT),
        label="evicted",
    )
    retention_curve: list[Retention] | None = figure(
        "", "hit share of reused tokens by the session's idle time before the call {idle_s_low, idle_s_high, …}"
    )
    think_s_p50: float | None = figure(
        SECONDS,
        "a session's idle time before a call (its previous call's end → its start), p50",
        compare=SHOW,
        summary=True,
        shown_in=(CACHE_CLIENT,),
    )
    think_s_p90: float | None = figure(
        SECONDS,
        "a session's idle time before a call (its previous call's end → its start), p90",
        compare=SHOW,
        summary=True,
        shown_in=(CACHE_CLIENT,),
    )

    # --- the servers and their GPUs ------------------------------------------------------------------
    kv_cache_usage_mean: float | None = figure(FRACTION, "KV-cache usage, mean over the samples", summary=True)
    kv_cache_usage_max: float | None = figure(FRACTION, "KV-cache usage, the highest sample", summary=True)
    preemptions: float | None = figure(COUNT, "requests the servers preempted (their counter)", summary=True)
    gpu_util_mean: float | None = figure(FRACTION, "GPU utilisation, mean over GPUs and samples", summary=True)
    gpu_power_w_mean: float | None = figure("W", "the GPUs' summed power draw, mean over the samples", summary=True)
    gpu_power_w_mean_source: str | None = figure("", "how the power figure was computed, in words")

    # --- where the time went on the servers: request phases, speculative decoding (docs/metrics.md) -----
    server_queue_s_mean: float | None = figure(
        SECONDS,
        "a request's time queued on the server, mean: Δsum ÷ Δcount of request_queue_time_seconds",
        better="lower",
        compare=SHOW,
        shown_in=(TIME_SPLIT,),
    )
    server_prefill_s_mean: float | None = figure(
        SECONDS,
        "scheduled → first token on the server (preemptions included), mean: request_prefill_time_seconds",
        better="lower",
        compare=SHOW,
        shown_in=(TIME_SPLIT,),
    )
    server_decode_s_mean: float | None = figure(
        SECONDS,
        "first → last token on the server, mean: request_decode_time_seconds",
        compare=SHOW,
        shown_in=(TIME_SPLIT,),
    )
    server_step_tokens_mean: float | None = figure(
        TOKENS,
        "tokens per engine step (computed prefill + generated), mean: iteration_tokens_total",
        shown_in=(TIME_SPLIT,),
    )
    server_prefill_computed_tokens_mean: float | None = figure(
        TOKENS,
        "KV tokens a request's prefill computed (cached ones not), mean: request_prefill_kv_computed_tokens",
        shown_in=(TIME_SPLIT,),
    )
    server_preemptions_per_request: float | None = figure(
        "preemptions/request",
        "preemptions per finished request, mean: request_num_preemptions",
        better="lower",
        compare=SHOW,
        shown_in=(TIME_SPLIT,),
    )
    ttft_outside_server_s_mean: float | None = figure(
        SECONDS,
        "the client's TTFT mean − the server's queue + prefill means: the network, the server's frontend, the client",
        better="lower",
        compare=SHOW,
        shown_in=(TIME_SPLIT,),
    )
    spec_acceptance_length: float | None = figure(
        "tokens/step",
        "speculative decoding: tokens a verify step of a request emits, 1 + Δaccepted ÷ Δdrafts",
        better="higher",
        compare=SHOW,
        shown_in=(TIME_SPLIT,),
    )
    spec_acceptance_rate: float | None = figure(
        FRACTION,
        "speculative decoding: Δaccepted ÷ Δdraft tokens",
        better="higher",
        compare=SHOW,
        shown_in=(TIME_SPLIT,),
    )
    spec_acceptance_by_position: list[float] | None = figure(
        "", "accepted per draft at each draft position 0…k−1: Δaccepted_i ÷ Δdrafts", shown_in=(TIME_SPLIT,)
    )
    spec_draft_length: int | None = figure(
        TOKENS, "k: the draft tokens a verify step proposes at most", shown_in=(TIME_SPLIT,)
    )
    spec_golden_acceptance_length: float | None = figure(
        "tokens/step",
        "AgentX's golden acceptance length for the model at this draft length (or --spec-golden)",
        shown_in=(TIME_SPLIT,),
    )
    spec_golden_source: str | None = figure(
        "", "where the golden acceptance length came from, or why there is none", shown_in=(TIME_SPLIT,)
    )
    spec_acceptance_vs_golden: float | None = figure(
        "", "measured ÷ golden acceptance length (AgentX pins it: within 2%)", compare=SHOW, shown_in=(TIME_SPLIT,)
    )

    # --- how close to the limit: the roofline and energy (docs/metrics.md, "Roofline", "Energy") -------
    achieved_tflops_per_gpu: float | None = limits_figure(
        "TFLOP/s", "FLOPs one GPU did per second, as the servers estimate their work"
    )
    achieved_hbm_gb_per_s_per_gpu: float | None = limits_figure(
        "GB/s", "bytes one GPU read and wrote in its memory per second, as the servers estimate them"
    )
    achieved_source: str | None = limits_figure(
        "", "whose estimate the achieved figures are (--enable-mfu-metrics), or why there is none"
    )
    peak_tflops_per_gpu: float | None = limits_figure("TFLOP/s", "one GPU's dense peak in the dtype in use")
    peak_hbm_gb_per_s_per_gpu: float | None = limits_figure("GB/s", "one GPU's peak memory bandwidth")
    peak_source: str | None = limits_figure(
        "", "where the peaks came from (a datasheet, the simulator's profile, --gpu-peak), or why none"
    )
    mfu: float | None = limits_figure(
        FRACTION,
        "model FLOPs utilisation: achieved ÷ peak TFLOP/s",
        better="higher",
        compare=GATE,
        shown_in=(POINTS_USE,),
        label="MFU",
    )
    mbu: float | None = limits_figure(
        FRACTION,
        "memory-bandwidth utilisation: achieved ÷ peak HBM GB/s",
        better="higher",
        compare=SHOW,
        shown_in=(POINTS_USE,),
        label="MBU",
    )
    roofline_bound: RooflineBound | None = limits_figure("", "which ceiling binds: compute (MFU ≥ MBU) or memory")
    energy_j: float | None = limits_figure(
        "J", "the GPUs' energy: energy counters where the driver has them, else power × time"
    )
    energy_source: str | None = limits_figure("", "how the energy was measured, or that it is modelled (the simulator)")
    gpu_power_w_per_gpu_mean: float | None = limits_figure(
        "W", "one GPU's mean board power: energy ÷ duration ÷ GPUs", compare=SHOW
    )
    joules_per_output_token: float | None = limits_figure(
        "J/token", "energy ÷ output tokens", better="lower", compare=SHOW
    )
    joules_per_token: float | None = limits_figure(
        "J/token",
        "energy ÷ (cache + input + output) tokens",
        better="lower",
        compare=GATE,
        shown_in=(POINTS_USE,),
        label="J/token",
    )
    joules_per_task: float | None = limits_figure("J/task", "energy ÷ tasks completed", better="lower", compare=SHOW)
    tokens_per_joule: float | None = limits_figure(
        "tokens/J", "(cache + input + output) tokens ÷ energy", better="higher", compare=SHOW
    )

    # --- cost ------------------------------------------------------------------------------------
    usd_per_gpu_hour: float | None = figure("USD/GPU-hour", "the price of one GPU for an hour")
    price_source: str | None = figure("", "where the price came from")
    cost_mode: str | None = figure("", "rental (a flat price) or owned (capex + measured power)")
    usd_spent: float | None = figure(USD, "what the run cost at that price", summary=True)
    tokens_per_dollar_total: float | None = figure(
        "tokens/USD",
        "total tokens per dollar",
        better="higher",
        compare=GATE,
        summary=True,
        shown_in=(POINTS_USE,),
        label="tokens/$",
        warmed=True,
    )
    tokens_per_dollar_output: float | None = figure(
        "tokens/USD",
        "output tokens per dollar",
        better="higher",
        compare=GATE,
        summary=True,
        warmed=True,
    )
    usd_per_million_output_tokens: float | None = figure(
        "USD/1M tokens",
        "dollars per million output tokens",
        better="lower",
        compare=GATE,
        summary=True,
        warmed=True,
    )

    # --- tasks: a task is one session tree ---------------------------------------------------------
    tasks_completed: int | None = task_figure(
        COUNT, "tasks completed", compare=SHOW, shown_in=(POINTS_USE,), label="tasks"
    )
    tasks_running: int | None = task_figure(COUNT, "tasks still running at the end")
    tasks_failed: int | None = task_figure(COUNT, "tasks failed")
    task_s_p50: float | None = task_figure(SECONDS, "task wall time p50", better="lower", compare=GATE)
    task_s_p90: float | None = task_figure(SECONDS, "task wall time p90", better="lower", compare=GATE)
    task_model_share: float | None = task_figure(FRACTION, "model share of the tasks' time", compare=SHOW)
    steps_per_task_mean: float | None = task_figure("calls/task", "calls per task (sub-agents' included)", compare=SHOW)
    tokens_per_task_mean: float | None = task_figure("tokens/task", "tokens per task (prompt + output)", compare=SHOW)
    output_tokens_per_task_mean: float | None = task_figure("tokens/task", "output tokens per task", compare=SHOW)
    usd_per_task: float | None = task_figure(
        "USD/task", "USD per task", better="lower", compare=GATE, shown_in=(POINTS_USE,), label="USD/task"
    )
    tasks_per_hour_per_gpu: float | None = task_figure(
        "tasks/hour/GPU", "tasks per hour per GPU", better="higher", compare=GATE
    )
    task_prefix_hit_share_mean: float | None = task_figure(
        FRACTION, "a task's Σ hit ÷ Σ reused prompt tokens, mean over the tasks", compare=SHOW
    )
    task_prefix_hit_share_p10: float | None = task_figure(
        FRACTION, "a task's Σ hit ÷ Σ reused prompt tokens, p10 (a tenth of the tasks kept less)"
    )
    task_prefix_hit_share_p90: float | None = task_figure(FRACTION, "a task's Σ hit ÷ Σ reused prompt tokens, p90")
    step_curve: list[Step] | None = task_figure(
        "", "per step of the agents' loops: requests, mean context, TTFT and E2E p50/p90"
    )
    task_s_histogram: list[TaskTimeBar] | None = task_figure(
        "", "the completed tasks' wall times as bars {upper_s, tasks}"
    )

    # --- how sure: --precision, a sweep's axis ------------------------------------------------------
    precision: float | None = figure("", "--precision F: a window ends once both 95% half-widths are within F")
    ci_method: str | None = figure("", "how the 95% intervals were computed")
    stopped_early: bool | None = figure("", "true when --precision was met before the time ran out")
    stop_reason: str | None = figure("", "why the measured window ended, in words")
    frontier_axis: FrontierAxis | None = figure("", "a sweep: the interactivity its frontier and tiers are read on")
    sweep_gpu_seconds: float | None = figure(
        "GPU·s",
        "a sweep: its wall time (probes and warm-ups included) × the GPUs behind the target; null without a GPU count",
        better="lower",
        compare=SHOW,
    )
    sweep_join: str | None = figure(
        "", "a sweep: how a user's first session begins: start (its first step) or midway (a stage drawn at random)"
    )

    # --- a timed replay's schedule -------------------------------------------------------------------
    schedule_lag_p50_s: float | None = figure(SECONDS, "a scheduled request's first send − when it was due, p50")
    schedule_lag_p90_s: float | None = figure(SECONDS, "a scheduled request's first send − when it was due, p90")
    schedule_lag_p99_s: float | None = figure(SECONDS, "a scheduled request's first send − when it was due, p99")
    schedule_behind: bool | None = figure("", "true when the users fell behind the replay's schedule")
    schedule_users_needed: int | None = figure(COUNT, "about how many users would keep the schedule")

    # --- the load generator --------------------------------------------------------------------------
    workers: int | None = figure(COUNT, "load-generator processes (or Ray actors)")
    client_cpu_cores_mean: float | None = figure("cores", "the load generator's CPU, mean")
    client_cpu_us_per_token: float | None = figure("µs", "the load generator's CPU per output token streamed")
    client_loop_lag_p99_s: float | None = figure(SECONDS, "the load generator's event-loop lag, p99")
    client_saturated: bool | None = figure(
        "", "true when the load generator itself limited the figures", shown_in=(POINTS_USE,), label="client-bound"
    )
    client_saturated_reason: str | None = figure("", "why the load generator was saturated, in words")
    users_lost: int | None = figure(
        COUNT, "users whose load worker died during the run, summed over the losses (restarted or not)"
    )

    # --- your own traffic: --proxy, --capture ------------------------------------------------------
    proxied_requests: int | None = proxy_figure(COUNT, "model calls the proxy forwarded", summary=True)
    proxied_sessions: int | None = proxy_figure(COUNT, "real agents' session trees seen", summary=True)
    proxy_added_ttft_p50_s: float | None = proxy_figure(SECONDS, "the proxy's own part of a first token's way, p50")
    proxy_added_ttft_p99_s: float | None = proxy_figure(
        SECONDS, "the proxy's own part of a first token's way, p99", summary=True
    )
    captured_sessions: int | None = proxy_figure(COUNT, "session files written by --capture", summary=True)
    capture_dir: str | None = proxy_figure("", "where --capture wrote them")

    # --- lists ---------------------------------------------------------------------------------------
    endpoints: list[Endpoint] | None = figure("", "the same server figures per endpoint")
    users_detail: list[User] | None = figure(
        "", "one row per user or real session: its counts at the end, its state when the run was stopped"
    )
    probes: list[Probe] | None = figure(
        "",
        "a tier sweep's probes, apart from its points (never on the frontier): {index, users, purpose, tiers, "
        "warmup_s, duration_s, requests, e2e_interactivity_p90_tokens_per_s, total_tokens_per_s_per_gpu, steady, …}",
    )
    worker_losses: list[LostWorker] | None = figure(
        "", "each load worker that died {at_s, worker, how, users_lost, users_left, point, restarted_at_s, …}"
    )

    # --- AgentX validity (docs/sweeps.md, "AgentX validity") -------------------------------------------
    context_overflow_requests: int | None = agentx_figure(
        COUNT, "requests over the model's context: refused by the server, or not sent because they would not fit"
    )
    context_overflow_share: float | None = agentx_figure(
        FRACTION,
        "context_overflow_requests ÷ every request wanted (completed + failed + not sent); AgentX: at most 1%",
        better="lower",
        compare=SHOW,
    )
    output_coverage: float | None = agentx_figure(
        FRACTION,
        "how far into the window output kept arriving: its start to its last output token ÷ its length; "
        "AgentX: at least 95%",
        better="higher",
        compare=SHOW,
    )
    agentx_valid: bool | None = agentx_figure(
        "",
        "whether the run meets AgentX's rules: true, false (a rule broken), null (one could not be checked)",
        compare=SHOW,
    )
    agentx_invalid_reasons: list[str] | None = agentx_figure(
        "",
        "why it is not (known to be) AgentX-valid: each rule broken or not checkable, with its value",
        compare=SHOW,
    )
    agentx_rules_met: list[str] | None = agentx_figure(
        "", "the AgentX rules the run meets, each with its measured value"
    )


class TierRead(Frozen):
    """A sweep's throughput read at one interactivity tier (docs/sweeps.md). None outside the measured
    range, and `note` says why. Its figures are the report's `<figure>_at_<T>` keys."""

    tier: float  # tokens/s/user, p90 interactivity on `axis`
    total_tokens_per_s_per_gpu: float | None = figure(
        TOKENS_PER_S_PER_GPU,
        "total tokens per second per GPU on the frontier at tier T",
        better="higher",
        interval=True,  # carried through the frontier from the points' (the `_ci_low`/`_ci_high` fields below)
        shown_in=(SUMMARY_TABLE,),
        label="total tok/s/GPU",
    )
    tokens_per_dollar_total: float | None = figure(
        "tokens/USD", "total tokens per dollar at T", better="higher", shown_in=(SUMMARY_TABLE,), label="tokens/$"
    )
    usd_per_million_total_tokens: float | None = figure(
        "USD/1M tokens", "dollars per million total tokens at T", better="lower", label="$/M tokens"
    )
    note: str | None = None
    # 95% interval of the read (docs/sweeps.md): the points' intervals carried through the frontier.
    total_tokens_per_s_per_gpu_ci_low: float | None = None
    total_tokens_per_s_per_gpu_ci_high: float | None = None
    axis: FrontierAxis | None = None  # the interactivity the tier is read on; None (older recordings): decode
    # Agents at T (docs/sweeps.md): the users on the frontier where it crosses T, read like the
    # throughput, in all and per GPU. Read on the sweep's own axis only (its `tiers`); None elsewhere.
    users: float | None = None
    agents_per_gpu: float | None = agents_figure(
        "agents/GPU",
        "users per GPU where the frontier crosses T",
        better="higher",
        shown_in=(SUMMARY_TABLE,),
        label="agents/GPU",
    )
    # Agents per megawatt at T (docs/sweeps.md): one GPU's mean board power read on the frontier at T like
    # the users, and agents per GPU ÷ it (in MW). Read on the sweep's own axis only; None elsewhere.
    gpu_power_w_per_gpu: float | None = None
    agents_per_mw: float | None = agents_figure(
        "agents/MW", "agents per GPU at T ÷ one GPU's mean board power there, in MW", better="higher", label="agents/MW"
    )

    # Read after a release that had no such fields: they are not written back unless they were set.
    _NEWER: ClassVar[tuple[str, ...]] = ("gpu_power_w_per_gpu", "agents_per_mw")

    @model_serializer(mode="wrap")
    def _newer_only_when_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        for key in self._NEWER:
            if key not in self.model_fields_set:
                out.pop(key, None)
        return out


class PointFigures(Figures):
    """One measured point of a sweep: the report's figures over the point's window (docs/sweeps.md), with
    where the window was and how steady the point was. Its JSON begins with those (`_LEADING`)."""

    _LEADING: ClassVar[tuple[str, ...]] = ("index", "users", "warmup_s", "duration_s", "window_start_s")

    index: int
    users: int  # a point always knows its users and its window
    warmup_s: float
    duration_s: float
    window_start_s: float  # run-elapsed seconds at which the measured window began
    usd_per_million_total_tokens: float | None = point_figure(
        "USD/1M tokens", "a point: dollars per million total tokens at its throughput", better="lower"
    )
    mean_prompt_tokens: float | None = point_figure(
        TOKENS,
        "a point: mean prompt tokens of the prompts whose first token came inside (did contexts still grow?)",
        shown_in=(POINTS_USE,),
        label="mean prompt",
    )
    requests: int | None = point_figure(
        COUNT,
        "a point: the requests its latency figures are over: started after its warm-up, ended inside",
        shown_in=(POINTS_SPEED, SUMMARY_TABLE),
        label="requests",
    )
    thin: bool | None = point_figure("", "a point: true when it counted fewer requests than a 95% interval needs (20)")
    ci_note: str | None = point_figure("", "a point: why a 95% interval is null, in words")
    peak_in_flight: int = point_figure(
        COUNT,
        "a point: most requests in flight at a tick (sub-agents push it above users)",
        shown_in=(POINTS_USE,),
        label="peak in flight",
        default=0,
    )
    warmup_requests_min: int | None = point_figure(
        COUNT, "a point: the fewest requests any of its users completed before its window opened (AgentX: 10)"
    )
    steady: bool | None = point_figure(
        "",
        "a point: true when MSER-5 found its throughput and p90 r_i steady before its window opened",
        shown_in=(POINTS_USE,),
        label="steady",
    )
    steady_reason: str | None = point_figure(
        "", "a point: what opened its window, and how steady its load was, in words"
    )


class RunIntervals(Figures):
    """A plain run with `--precision` (docs/sweeps.md): its measured window's figures with their 95%
    intervals, and why the run ended (`stop_reason`). The report carries each interval's relative width
    over to its own whole-run figure. None where too few requests or session trees tell."""

    precision: float
    requests: int = 0  # counted for the window's latencies
